package sqlitestore_test

import (
	"path/filepath"
	"testing"

	"github.com/tether-dev/tether/internal/store/backend"
	"github.com/tether-dev/tether/internal/store/sqlitestore"
	"github.com/tether-dev/tether/internal/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) backend.Store {
		s, err := sqlitestore.Open(t.Context(), filepath.Join(t.TempDir(), "tether.db"), sqlitestore.Options{})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
		return s
	})
}
