package sqlitestore

import (
	"fmt"
	"path/filepath"
	"sync"
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

// Lineage queued alone, with no write to join, is written on its own
// within rideAlongWait; lineage still queued when the store closes is
// written by Close.
func TestQueuedLineageAloneIsWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tether.db")
	s := openTemp(t, path)
	ctx := t.Context()
	start := time.Now()
	if err := <-s.EnqueueLineages("alice", []backend.LineagePut{{Key: "alone", Value: []byte("v")}}); err != nil {
		t.Fatalf("queued lineage: %v", err)
	}
	if waited := time.Since(start); waited < rideAlongWait {
		t.Errorf("lone queued lineage was written after %s, before it waited %s for company", waited, rideAlongWait)
	}

	// Closing while one waits (its wait longer than the test): Close
	// must write it.
	s.group.wait = time.Hour
	done := s.EnqueueLineages("alice", []backend.LineagePut{{Key: "at-close", Value: []byte("w")}})
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

// Lineage enqueued (nobody waits to lead) rides with the next transaction
// in the order it was enqueued; under concurrent turns every part is
// written, and none is left waiting for a lead it cannot take.
func TestEnqueuedLineages(t *testing.T) {
	s := openTemp(t, filepath.Join(t.TempDir(), "tether.db"))
	defer s.Close()
	ctx := t.Context()
	s.group.wait = time.Hour
	first := s.EnqueueLineages("alice", []backend.LineagePut{{Key: "k", Value: []byte("1")}})
	second := s.EnqueueLineages("alice", []backend.LineagePut{{Key: "k", Value: []byte("2")}})
	before := s.txns.Load()
	// A settlement that moves a counter is written before it returns (a
	// plain ledger row would be journaled and ride along too).
	st := backend.Settlement{Entry: backend.LedgerEntry{ID: "call-1", Principal: "alice", Kind: "primary"},
		Adjust: []backend.Hold{{Key: "principal:alice", Amount: 1}}}
	if err := s.SettleReservations(ctx, []backend.Settlement{st}); err != nil {
		t.Fatal(err)
	}
	if err1, err2 := <-first, <-second; err1 != nil || err2 != nil {
		t.Fatalf("enqueued writes: %v, %v", err1, err2)
	}
	if n := s.txns.Load() - before; n != 1 {
		t.Errorf("two enqueued writes and a settlement took %d transactions, want 1", n)
	}
	if got, _ := s.GetLineage(ctx, "alice", []string{"k"}); string(got["k"]) != "2" {
		t.Errorf("k = %q, want the later write's 2", got["k"])
	}

	s.group.wait = 0 // the default wait: parts left alone are written
	const callers, turns = 8, 40
	errs := make(chan error, callers*turns)
	var wg sync.WaitGroup
	for c := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range turns {
				key := fmt.Sprintf("c%d-%d", c, i)
				done := s.EnqueueLineages("alice", []backend.LineagePut{{Key: key, Value: []byte(key)}})
				if i%3 != 0 { // some turns settle, some do not
					st := backend.Settlement{Entry: backend.LedgerEntry{ID: key, Principal: "alice", Kind: "primary"}}
					if err := s.SettleReservations(ctx, []backend.Settlement{st}); err != nil {
						errs <- err
					}
				}
				select {
				case err := <-done:
					if err != nil {
						errs <- err
					}
				case <-time.After(10 * time.Second):
					errs <- fmt.Errorf("%s: the enqueued write was never written", key)
					return
				}
			}
		}()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(30 * time.Second):
		t.Fatal("the writers stalled: a part waits for a lead nobody hands it")
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for c := range callers {
		for i := range turns {
			key := fmt.Sprintf("c%d-%d", c, i)
			if got, _ := s.GetLineage(ctx, "alice", []string{key}); string(got[key]) != key {
				t.Fatalf("%s not stored", key)
			}
		}
	}
}
