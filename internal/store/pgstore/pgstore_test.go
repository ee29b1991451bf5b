package pgstore_test

import (
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/store/backend"
	"github.com/tether-dev/tether/internal/store/pgstore"
	"github.com/tether-dev/tether/internal/store/storetest"
)

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
	url := storetest.PostgresURL(t)
	storetest.Run(t, func(t *testing.T) backend.Store {
		return open(t, url, storetest.FreshSchema(t, url, "tether_test"))
	})
}

// TestConformanceAcrossReplicas runs the suite against two pools on one
// schema, as two proxy replicas would share a database: reads and writes
// alternate between them.
func TestConformanceAcrossReplicas(t *testing.T) {
	url := storetest.PostgresURL(t)
	storetest.Run(t, func(t *testing.T) backend.Store {
		schema := storetest.FreshSchema(t, url, "tether_test")
		return storetest.Alternate(open(t, url, schema), open(t, url, schema))
	})
}

func TestOpenTwiceKeepsData(t *testing.T) {
	url := storetest.PostgresURL(t)
	schema := storetest.FreshSchema(t, url, "tether_test")
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
