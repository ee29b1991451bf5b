package ledger

import (
	"testing"

	"github.com/tether-dev/tether/internal/store/pgstore"
	"github.com/tether-dev/tether/internal/store/storetest"
)

// postgresBackend opens a PostgreSQL store in a fresh schema (dropped after
// the test) for the concurrency test.
func postgresBackend(url string) func(t *testing.T) usedStore {
	return func(t *testing.T) usedStore {
		t.Helper()
		schema := storetest.FreshSchema(t, url, "tether_ledger_test")
		s, err := pgstore.Open(t.Context(), url, pgstore.Options{Schema: schema})
		if err != nil {
			t.Fatalf("open postgres store: %v", err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
}
