package pgstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tether-dev/tether/internal/store/backend"
	"github.com/tether-dev/tether/internal/store/pgstore"
	"github.com/tether-dev/tether/internal/store/storetest"
)

const urlEnv = "TETHER_TEST_POSTGRES_URL"

// testURL returns the test database URL or skips (fails under CI=true).
func testURL(t *testing.T) string {
	t.Helper()
	url := os.Getenv(urlEnv)
	if url == "" {
		msg := "PostgreSQL tests need " + urlEnv + ", e.g. " + urlEnv +
			"=postgres://postgres@127.0.0.1:5432/test?sslmode=disable go test ./internal/store/pgstore/"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return url
}

// freshSchema creates an empty schema for one test and drops it afterwards.
func freshSchema(t *testing.T, url string) string {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "tether_test_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Errorf("connect to drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return schema
}

func open(t *testing.T, url, schema string) *pgstore.Store {
	t.Helper()
	s, err := pgstore.Open(t.Context(), url, pgstore.Options{Schema: schema})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	url := testURL(t)
	storetest.Run(t, func(t *testing.T) backend.Store {
		return open(t, url, freshSchema(t, url))
	})
}

// TestConformanceAcrossReplicas runs the suite against two pools on one
// schema, as two proxy replicas would share a database: reads and writes
// alternate between them.
func TestConformanceAcrossReplicas(t *testing.T) {
	url := testURL(t)
	storetest.Run(t, func(t *testing.T) backend.Store {
		schema := freshSchema(t, url)
		return storetest.Alternate(open(t, url, schema), open(t, url, schema))
	})
}

func TestOpenTwiceKeepsData(t *testing.T) {
	url := testURL(t)
	schema := freshSchema(t, url)
	s := open(t, url, schema)
	rec := backend.CapsuleRecord{Principal: "alice", ALeg: "a1", Revision: 1, Data: []byte(`{"kept":true}`)}
	if err := s.PutCapsule(t.Context(), rec, 0); err != nil {
		t.Fatalf("PutCapsule: %v", err)
	}
	// A second replica starting later must find the schema migrated and the
	// data in place.
	s2 := open(t, url, schema)
	got, err := s2.GetCapsule(t.Context(), "alice", "a1")
	if err != nil || string(got.Data) != `{"kept":true}` {
		t.Fatalf("GetCapsule from a second pool = %q, %v", got.Data, err)
	}
}

func TestOpenRejectsBadURLWithoutEchoingIt(t *testing.T) {
	_, err := pgstore.Open(t.Context(), "postgres://user:hunter2@[::1", pgstore.Options{})
	if err == nil {
		t.Fatal("Open accepted a malformed URL")
	}
	if got := err.Error(); strings.Contains(got, "hunter2") {
		t.Errorf("error leaks the password: %s", got)
	}
}
