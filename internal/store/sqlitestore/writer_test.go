package sqlitestore

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/store/backend"
)

func openTemp(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

// queued waits until n parts wait in the write group with none running.
func queued(t *testing.T, s *Store, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.group.mu.Lock()
		got := len(s.group.queue)
		s.group.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d parts queued, want %d", got, n)
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// A lineage write that rides along waits for the settlement that follows
// it and shares its transaction: one COMMIT for the turn.
func TestRideAlongSharesTheNextTransaction(t *testing.T) {
	s := openTemp(t, filepath.Join(t.TempDir(), "tether.db"))
	defer s.Close()
	ctx := t.Context()
	s.group.wait = time.Hour // however slow this machine, the settlement comes first
	done := make(chan error, 1)
	go func() {
		done <- s.PutLineages(backend.RideAlong(ctx), "alice", []backend.LineagePut{{Key: "head", Value: []byte("v")}})
	}()
	queued(t, s, 1)
	before := s.txns.Load()
	st := backend.Settlement{Entry: backend.LedgerEntry{ID: "call-1", Principal: "alice", Kind: "primary", CostMicros: 3}}
	if err := s.SettleReservations(ctx, []backend.Settlement{st}); err != nil {
		t.Fatalf("SettleReservations: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("PutLineages riding along: %v", err)
	}
	if n := s.txns.Load() - before; n != 1 {
		t.Errorf("the lineage and the settlement took %d transactions, want 1", n)
	}
	if got, err := s.GetLineage(ctx, "alice", []string{"head"}); err != nil || string(got["head"]) != "v" {
		t.Errorf("GetLineage = %q, %v; want the record written", got, err)
	}
}

// A write that rides along and finds nothing to join is written on its
// own within rideAlongWait; one still waiting when the store closes is
// written by Close.
func TestRideAlongAloneIsWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tether.db")
	s := openTemp(t, path)
	ctx := t.Context()
	start := time.Now()
	if err := s.PutLineages(backend.RideAlong(ctx), "alice", []backend.LineagePut{{Key: "alone", Value: []byte("v")}}); err != nil {
		t.Fatalf("PutLineages riding along: %v", err)
	}
	if waited := time.Since(start); waited < rideAlongWait {
		t.Errorf("a lone ride-along write returned after %s, before it waited %s for company", waited, rideAlongWait)
	}

	// Closing while one waits (its wait longer than the test): Close
	// must write it.
	s.group.wait = time.Hour
	done := make(chan error, 1)
	go func() {
		done <- s.PutLineages(backend.RideAlong(context.Background()), "alice", []backend.LineagePut{{Key: "at-close", Value: []byte("w")}})
	}()
	queued(t, s, 1)
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the write waiting at Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the write waiting at Close was not written")
	}
	s = openTemp(t, path)
	defer s.Close()
	got, err := s.GetLineage(ctx, "alice", []string{"alone", "at-close"})
	if err != nil || string(got["alone"]) != "v" || string(got["at-close"]) != "w" {
		t.Errorf("after reopening: %q, %v; want both records", got, err)
	}
}
