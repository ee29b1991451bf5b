package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lib/pq"
)

// PostgresURLEnv names the environment variable that points tests at a
// PostgreSQL database, e.g.
// postgres://postgres@127.0.0.1:5432/test?sslmode=disable.
const PostgresURLEnv = "TETHER_TEST_POSTGRES_URL"

// PostgresURL returns the test database URL. When it is not set the test
// is skipped, or fails under CI=true (.ci/run always provides one).
func PostgresURL(t testing.TB) string {
	t.Helper()
	url := os.Getenv(PostgresURLEnv)
	if url == "" {
		msg := "this test needs PostgreSQL: " + PostgresURLEnv + "=postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return url
}

// FreshSchema returns the name of a schema no test has used, in the
// database at url, and drops it with everything in it when the test ends.
// It does not create it: a store opened with the name (pgstore
// Options.Schema) does. prefix says in the name which tests made it.
func FreshSchema(t testing.TB, url, prefix string) string {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := prefix + "_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		if err := execPostgres(url, `DROP SCHEMA IF EXISTS `+pq.QuoteIdentifier(schema)+` CASCADE`); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return schema
}

// FreshSearchPath creates a FreshSchema and returns url with the schema as
// its connections' search_path: a store URL for a process under test.
func FreshSearchPath(t testing.TB, url, prefix string) string {
	t.Helper()
	schema := FreshSchema(t, url, prefix)
	if err := execPostgres(url, `CREATE SCHEMA `+pq.QuoteIdentifier(schema)); err != nil {
		t.Fatalf("create schema %s: %v", schema, err)
	}
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	return url + sep + "search_path=" + schema
}

// execPostgres runs one statement on its own connection.
func execPostgres(url, stmt string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	connector, err := pq.NewConnector(url)
	if err != nil {
		return err
	}
	db := sql.OpenDB(connector)
	defer func() { _ = db.Close() }()
	_, err = db.ExecContext(ctx, stmt)
	return err
}
