package ledger

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/flow"
	"github.com/tether-dev/tether/internal/metrics"
	"github.com/tether-dev/tether/internal/store/backend"
	"github.com/tether-dev/tether/internal/store/memstore"
)

// ledgerSum is the sum of a principal's ledger tokens.
func ledgerSum(t *testing.T, s Store, principal string) (tokens, micros int64) {
	t.Helper()
	es, err := s.LedgerEntries(t.Context(), principal, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		tokens += e.InputTokens + e.OutputTokens + e.CacheReadTokens + e.CacheWriteTokens
		micros += e.CostMicros
	}
	return tokens, micros
}

// A process killed with calls in flight leaves their reservations in the
// store. Before, they stayed counted forever (a 50,000-token budget stuck at
// 40,210 with no ledger row; the 4th request after restart got 429). The
// next process reconciles them: released, each recorded with status 0, and
// the budget counter equals the ledger's sum.
func TestLedger_ReservationsOfAKilledProcessAreReconciled(t *testing.T) {
	s := memstore.New(memstore.Options{})
	budgets := []config.Budget{{Principal: "alice", Period: "day", MaxTokens: 50_000}}
	dead := New(Options{Store: s, Prices: testPrices, Budgets: budgets, Now: func() time.Time { return testNow }, FlushInterval: time.Hour})
	settle, err := dead.Reserve(t.Context(), aliceCharge(KindPrimary, 1000, 100))
	if err != nil {
		t.Fatal(err)
	}
	settle(Result{Status: 200, Usage: dialect.Usage{InputTokens: 600, OutputTokens: 50}}) // served and settled
	for range 3 {                                                                         // in flight at kill -9
		if _, err := dead.Reserve(t.Context(), aliceCharge(KindPrimary, 13_000, 1000)); err != nil {
			t.Fatal(err)
		}
	}
	dead.Close(context.Background()) // stops its writer; the 3 reservations are never settled
	if got := used(t, s, aliceDayTokens); got != 650+39_000 {
		t.Fatalf("counter before restart = %d, want 39,650", got)
	}

	l := newTestLedger(t, s, budgets, metrics.NewRegistry())
	n, err := l.Reconcile(t.Context(), testNow.Add(24*time.Hour))
	if err != nil || n != 3 {
		t.Fatalf("Reconcile = %d, %v; want 3", n, err)
	}
	es := entries(t, s)
	if len(es) != 4 {
		t.Fatalf("%d ledger rows, want 4 (1 served, 3 interrupted)", len(es))
	}
	interrupted := 0
	for _, e := range es {
		if e.Status == 0 {
			interrupted++
		}
	}
	if interrupted != 3 {
		t.Errorf("%d rows with status 0, want 3", interrupted)
	}
	tokens, _ := ledgerSum(t, s, "alice")
	if got := used(t, s, aliceDayTokens); got != tokens || got != 650 {
		t.Errorf("counter = %d, ledger sum = %d; want both 650", got, tokens)
	}
	for i := range 4 {
		if _, err := l.Reserve(t.Context(), aliceCharge(KindPrimary, 10_000, 1000)); err != nil {
			t.Fatalf("request %d after restart: %v", i+1, err)
		}
	}
	if n, _ := l.Reconcile(t.Context(), testNow.Add(24*time.Hour)); n != 4 {
		t.Errorf("second Reconcile = %d, want the 4 new reservations", n)
	}
}

// On a shared store only expired reservations are reconciled: a live
// replica's call in flight is left alone.
func TestLedger_ReconcileLeavesLiveReservations(t *testing.T) {
	s := memstore.New(memstore.Options{})
	l := New(Options{Store: s, Now: func() time.Time { return testNow }, FlushInterval: time.Hour, ReservationTTL: time.Minute})
	defer l.Close(context.Background())
	settle, err := l.Reserve(t.Context(), aliceCharge(KindPrimary, 10, 0))
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := l.Reconcile(t.Context(), testNow); n != 0 {
		t.Fatalf("reconciled %d live reservations", n)
	}
	settle(Result{Status: 200, Usage: dialect.Usage{InputTokens: 7}})
	if es := entries(t, s); len(es) != 1 || es[0].InputTokens != 7 {
		t.Errorf("entries = %+v, want the settled call", es)
	}
}

func TestLedger_StoreOutagePolicy(t *testing.T) {
	budgets := []config.Budget{{Principal: "alice", Period: "day", MaxTokens: 1_000_000}}
	t.Run("fail_open within the cap, counted when the store is back", func(t *testing.T) {
		s := &failingStore{Store: memstore.New(memstore.Options{})}
		reg := metrics.NewRegistry()
		l := New(Options{Store: s, Prices: testPrices, Budgets: budgets, Registerer: reg, Now: func() time.Time { return testNow },
			FlushInterval: time.Hour, Outage: Outage{MaxTokens: 2500}})
		defer l.Close(context.Background())
		s.down.Store(true)
		var settles []func(Result)
		for i := range 3 {
			settle, err := l.Reserve(t.Context(), aliceCharge(KindPrimary, 1000, 100))
			if i < 2 && err != nil {
				t.Fatalf("call %d within the outage cap refused: %v", i, err)
			}
			if i == 2 {
				if !errors.Is(err, ErrStoreUnavailable) {
					t.Fatalf("call past the outage cap: err = %v, want ErrStoreUnavailable", err)
				}
				continue
			}
			settles = append(settles, settle)
		}
		// A principal no budget applies to is admitted whatever the cap.
		bob := aliceCharge(KindPrimary, 100_000, 0)
		bob.Principal, bob.Account = "bob", "bobco"
		bobSettle, err := l.Reserve(t.Context(), bob)
		if err != nil {
			t.Fatalf("unbudgeted call refused during the outage: %v", err)
		}
		for _, settle := range settles {
			settle(Result{Status: 200, Usage: dialect.Usage{InputTokens: 300, OutputTokens: 20}})
		}
		bobSettle(Result{Status: 200, Usage: dialect.Usage{InputTokens: 5}})
		if l.Pending() != 3 {
			t.Fatalf("pending = %d, want 3", l.Pending())
		}
		s.down.Store(false)
		if err := l.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		tokens, _ := ledgerSum(t, s, "alice")
		if got := used(t, s, aliceDayTokens); tokens != 640 || got != tokens {
			t.Errorf("after the outage: counter %d, ledger %d; want both 640", got, tokens)
		}
		// The cap starts over once the store is back.
		s.down.Store(true)
		if _, err := l.Reserve(t.Context(), aliceCharge(KindPrimary, 1000, 100)); err != nil {
			t.Errorf("new outage, first call refused: %v", err)
		}
	})
	t.Run("fail_closed", func(t *testing.T) {
		s := &failingStore{Store: memstore.New(memstore.Options{})}
		l := New(Options{Store: s, Budgets: budgets, Now: func() time.Time { return testNow }, FlushInterval: time.Hour,
			Outage: Outage{Policy: OutageFailClosed}})
		defer l.Close(context.Background())
		s.down.Store(true)
		_, err := l.Reserve(t.Context(), aliceCharge(KindPrimary, 10, 0))
		if !errors.Is(err, ErrStoreUnavailable) || errors.Is(err, flow.ErrBudgetExceeded) {
			t.Fatalf("budgeted call under fail_closed: err = %v, want ErrStoreUnavailable", err)
		}
	})
}

var _ backend.Reservations = (*failingStore)(nil)
