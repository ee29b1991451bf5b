package ledger

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tether-dev/tether/internal/store/pgstore"
)

// postgresBackend opens a PostgreSQL store in a fresh schema (dropped after
// the test) for the concurrency test.
func postgresBackend(url string) func(t *testing.T) usedStore {
	return func(t *testing.T) usedStore {
		t.Helper()
		b := make([]byte, 6)
		_, _ = rand.Read(b)
		schema := "tether_ledger_test_" + hex.EncodeToString(b)
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
		s, err := pgstore.Open(t.Context(), url, pgstore.Options{Schema: schema})
		if err != nil {
			t.Fatalf("open postgres store: %v", err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
}
