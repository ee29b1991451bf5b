package sqlitestore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

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

// Lineage writes from many concurrent turns share write transactions
// (group commit): every call returns once its own records are stored, each
// reads back as its last write, and a call whose context is cancelled
// while it waits in a batch does not fail the others.
func TestConcurrentLineageWrites(t *testing.T) {
	s, err := sqlitestore.Open(t.Context(), filepath.Join(t.TempDir(), "tether.db"), sqlitestore.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	const writers, turns = 32, 20
	var wg sync.WaitGroup
	errs := make(chan error, writers*turns)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			principal := fmt.Sprintf("p%d", w%4)
			for i := range turns {
				ctx := t.Context()
				if i == turns/2 {
					c, cancel := context.WithCancel(ctx)
					cancel()
					ctx = c
				}
				puts := []backend.LineagePut{
					{Key: fmt.Sprintf("head-%d-%d", w, i), Value: []byte(fmt.Sprint(i))},
					{Key: fmt.Sprintf("aleg-%d", w), Value: []byte(fmt.Sprint(i))},
				}
				var err error
				if i%3 == 0 {
					err = s.PutLineage(ctx, principal, puts[0].Key, puts[0].Value, time.Time{})
					if err == nil {
						err = s.PutLineage(ctx, principal, puts[1].Key, puts[1].Value, time.Time{})
					}
				} else {
					err = s.PutLineages(ctx, principal, puts)
				}
				if err != nil {
					errs <- fmt.Errorf("writer %d turn %d: %w", w, i, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for w := range writers {
		principal := fmt.Sprintf("p%d", w%4)
		keys := []string{fmt.Sprintf("aleg-%d", w)}
		for i := range turns {
			keys = append(keys, fmt.Sprintf("head-%d-%d", w, i))
		}
		got, err := s.GetLineage(t.Context(), principal, keys)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(keys) || string(got[keys[0]]) != fmt.Sprint(turns-1) {
			t.Errorf("writer %d: %d of %d records, a-leg %q; want all, a-leg %q", w, len(got), len(keys), got[keys[0]], fmt.Sprint(turns-1))
		}
	}
}

// Lineage puts and settlements from concurrent turns share group
// transactions: every call returns once its rows are stored, and every
// row is there, counters included. A settlement whose context is done
// before it is queued writes nothing.
func TestConcurrentTurnWrites(t *testing.T) {
	s, err := sqlitestore.Open(t.Context(), filepath.Join(t.TempDir(), "tether.db"), sqlitestore.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	const callers, turns = 16, 25
	var wg sync.WaitGroup
	errs := make(chan error, 2*callers*turns)
	for c := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range turns {
				key := fmt.Sprintf("turn-%d-%d", c, i)
				if err := s.PutLineages(t.Context(), "alice", []backend.LineagePut{{Key: key, Value: []byte("v")}}); err != nil {
					errs <- fmt.Errorf("caller %d turn %d: put lineage: %w", c, i, err)
				}
				st := backend.Settlement{Entry: backend.LedgerEntry{ID: key, Principal: "alice", Kind: "primary", CostMicros: 3},
					Adjust: []backend.Hold{{Key: "usd", Amount: 3}}}
				if err := s.SettleReservations(t.Context(), []backend.Settlement{st}); err != nil {
					errs <- fmt.Errorf("caller %d turn %d: settle: %w", c, i, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	late := backend.Settlement{Entry: backend.LedgerEntry{ID: "late", Principal: "alice", Kind: "primary", CostMicros: 3},
		Adjust: []backend.Hold{{Key: "usd", Amount: 3}}}
	if err := s.SettleReservations(ctx, []backend.Settlement{late}); err == nil {
		t.Error("SettleReservations with a done context succeeded; want its error")
	}

	var keys []string
	for c := range callers {
		for i := range turns {
			keys = append(keys, fmt.Sprintf("turn-%d-%d", c, i))
		}
	}
	got, err := s.GetLineage(t.Context(), "alice", keys)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(keys) {
		t.Errorf("%d of %d lineage records stored", len(got), len(keys))
	}
	entries, err := s.LedgerEntries(t.Context(), "alice", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != callers*turns {
		t.Errorf("%d ledger entries stored, want %d", len(entries), callers*turns)
	}
	if used, err := s.Used(t.Context(), "usd"); err != nil || used != 3*callers*turns {
		t.Errorf("Used(usd) = %d, %v; want %d", used, err, 3*callers*turns)
	}
}
