package ledger

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/flow"
	"github.com/tether-dev/tether/internal/metrics"
	"github.com/tether-dev/tether/internal/store/backend"
	"github.com/tether-dev/tether/internal/store/memstore"
	"github.com/tether-dev/tether/internal/store/sqlitestore"
	"github.com/tether-dev/tether/internal/store/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var testNow = time.Date(2026, 12, 2, 10, 30, 0, 0, time.UTC)

var testPrices = []config.Price{
	{Match: "gpt-5*", InputPerMTok: 2, OutputPerMTok: 8, CacheReadPerM: 0.5, CacheWritePerM: 2.5},
	{Match: "cheap-*", InputPerMTok: 1, OutputPerMTok: 3},
}

// usedStore is a ledger store whose budget counters tests can read.
type usedStore interface {
	Store
	Used(ctx context.Context, key string) (int64, error)
}

// newTestLedger returns a ledger whose writer only runs on Flush, Close or a
// full buffer (the interval is an hour), so tests control every write.
func newTestLedger(t *testing.T, s Store, budgets []config.Budget, reg metrics.Registerer) *Ledger {
	t.Helper()
	l := New(Options{Store: s, Prices: testPrices, Budgets: budgets, Registerer: reg,
		Now: func() time.Time { return testNow }, FlushInterval: time.Hour})
	t.Cleanup(func() {
		if err := l.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return l
}

func used(t *testing.T, s usedStore, key string) int64 {
	t.Helper()
	n, err := s.Used(t.Context(), key)
	if err != nil {
		t.Fatalf("Used(%s): %v", key, err)
	}
	return n
}

func entries(t *testing.T, s Store) []backend.LedgerEntry {
	t.Helper()
	es, err := s.LedgerEntries(t.Context(), "", 0)
	if err != nil {
		t.Fatalf("LedgerEntries: %v", err)
	}
	return es
}

func aliceCharge(kind Kind, est, estOut int64) Charge {
	return Charge{Principal: "alice", Account: "acme", Session: "s1", ALeg: "a1", Kind: kind,
		Route: "openai/gpt-5", Provider: "openai", Model: "gpt-5", EstimatedTokens: est, EstimatedOutputTokens: estOut}
}

const (
	aliceDayTokens = "budget:principal:alice:day:2026-12-02:tokens"
	aliceDayMicros = "budget:principal:alice:day:2026-12-02:usd_micros"
	acmeMonthUSD   = "budget:account:acme:month:2026-12:usd_micros"
	acmeTotalTok   = "budget:account:acme:total:tokens"
)

func TestLedger_ReserveAndSettleTokens(t *testing.T) {
	s := memstore.New(memstore.Options{})
	l := newTestLedger(t, s, []config.Budget{{Principal: "alice", Period: "day", MaxTokens: 1000}}, nil)

	settle, err := l.Reserve(t.Context(), aliceCharge(KindPrimary, 300, 100))
	if err != nil {
		t.Fatalf("Reserve: %v", err)
	}
	if got := used(t, s, aliceDayTokens); got != 300 {
		t.Errorf("reserved tokens = %d, want the estimate 300", got)
	}
	settle(Result{Usage: dialect.Usage{InputTokens: 100, OutputTokens: 40, CacheReadTokens: 10}, Status: 200})
	if got := used(t, s, aliceDayTokens); got != 150 {
		t.Errorf("tokens after settle = %d, want actual 150", got)
	}
	settle(Result{Usage: dialect.Usage{InputTokens: 999}})
	if got := used(t, s, aliceDayTokens); got != 150 {
		t.Errorf("a second settle changed the counter to %d", got)
	}
	// 850 left: 900 is refused, 850 fits.
	if _, err := l.Reserve(t.Context(), aliceCharge(KindPrimary, 900, 0)); !errors.Is(err, flow.ErrBudgetExceeded) {
		t.Fatalf("Reserve over budget: err = %v, want ErrBudgetExceeded", err)
	}
	if _, err := l.Reserve(t.Context(), aliceCharge(KindPrimary, 850, 0)); err != nil {
		t.Fatalf("Reserve of the remainder: %v", err)
	}
}

func TestLedger_ReserveAndSettleSpend(t *testing.T) {
	s := memstore.New(memstore.Options{})
	l := newTestLedger(t, s, []config.Budget{{Account: "acme", Period: "month", MaxUSD: 0.01}}, nil)

	// Estimate: 800 input at $2/M + 200 output at $8/M = 1600 + 1600 µ$.
	settle, err := l.Reserve(t.Context(), aliceCharge(KindPrimary, 1000, 200))
	if err != nil {
		t.Fatalf("Reserve: %v", err)
	}
	if got := used(t, s, acmeMonthUSD); got != 3200 {
		t.Errorf("reserved spend = %d µ$, want 3200", got)
	}
	// Actual: 100·2 + 50·8 + 400·0.5 + 40·2.5 = 200 + 400 + 200 + 100.
	settle(Result{Usage: dialect.Usage{InputTokens: 100, OutputTokens: 50, CacheReadTokens: 400, CacheWriteTokens: 40}, Status: 200, Duration: 1500 * time.Millisecond})
	if got := used(t, s, acmeMonthUSD); got != 900 {
		t.Errorf("spend after settle = %d µ$, want actual 900", got)
	}
	if err := l.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	got := entries(t, s)
	if len(got) != 1 {
		t.Fatalf("entries = %d, want 1", len(got))
	}
	e := got[0]
	if e.ID == "" || e.BLeg != e.ID {
		t.Errorf("entry id %q, b-leg %q: want a generated id used for both", e.ID, e.BLeg)
	}
	want := backend.LedgerEntry{ID: e.ID, BLeg: e.ID, Time: testNow, Principal: "alice", Account: "acme", Session: "s1", ALeg: "a1",
		Kind: "primary", Route: "openai/gpt-5", Provider: "openai", Model: "gpt-5",
		InputTokens: 100, OutputTokens: 50, CacheReadTokens: 400, CacheWriteTokens: 40, CostMicros: 900, Status: 200, DurationMS: 1500}
	if diff := cmp.Diff(want, e); diff != "" {
		t.Errorf("entry (-want +got):\n%s", diff)
	}
}

func TestLedger_RefusalReleasesEarlierReservations(t *testing.T) {
	s := memstore.New(memstore.Options{})
	// The account budget is reserved first (scope order), then the
	// principal's token budget refuses.
	l := newTestLedger(t, s, []config.Budget{
		{Account: "acme", Period: "total", MaxTokens: 1_000_000},
		{Principal: "alice", Period: "day", MaxTokens: 100},
	}, nil)
	_, err := l.Reserve(t.Context(), aliceCharge(KindPrimary, 500, 0))
	if !errors.Is(err, flow.ErrBudgetExceeded) {
		t.Fatalf("err = %v, want ErrBudgetExceeded", err)
	}
	if got := used(t, s, acmeTotalTok); got != 0 {
		t.Errorf("account counter after refusal = %d, want 0 (released)", got)
	}
	if msg := err.Error(); !strings.Contains(msg, `principal "alice" day budget of 100 tokens`) {
		t.Errorf("error %q does not name the refusing budget", msg)
	}
}

func TestLedger_BudgetsOfOthersDoNotApply(t *testing.T) {
	s := memstore.New(memstore.Options{})
	l := newTestLedger(t, s, []config.Budget{{Principal: "bob", Period: "day", MaxTokens: 1}, {Account: "other", Period: "day", MaxUSD: 0.000001}}, nil)
	settle, err := l.Reserve(t.Context(), aliceCharge(KindPrimary, 10_000, 0))
	if err != nil {
		t.Fatalf("alice refused by someone else's budget: %v", err)
	}
	settle(Result{Status: 200})
}

func TestLedger_ExhaustedBudgetRefusesZeroEstimate(t *testing.T) {
	s := memstore.New(memstore.Options{})
	l := newTestLedger(t, s, []config.Budget{{Principal: "alice", Period: "day", MaxTokens: 100, MaxUSD: 1}}, nil)
	settle, err := l.Reserve(t.Context(), aliceCharge(KindPrimary, 100, 0))
	if err != nil {
		t.Fatal(err)
	}
	settle(Result{Usage: dialect.Usage{InputTokens: 100}})
	c := aliceCharge(KindExtraction, 0, 0) // an estimate of nothing
	c.Model = "unpriced-model"
	if _, err := l.Reserve(t.Context(), c); !errors.Is(err, flow.ErrBudgetExceeded) {
		t.Errorf("zero-estimate call on an exhausted budget: err = %v, want ErrBudgetExceeded", err)
	}
}

func TestLedger_FailedCallIsRecordedAndReleased(t *testing.T) {
	s := memstore.New(memstore.Options{})
	l := newTestLedger(t, s, []config.Budget{{Principal: "alice", Period: "day", MaxTokens: 1000, MaxUSD: 1}}, nil)
	settle, err := l.Reserve(t.Context(), aliceCharge(KindPrimary, 500, 100))
	if err != nil {
		t.Fatal(err)
	}
	settle(Result{Status: 0, Err: errors.New("connection refused"), Duration: time.Second})
	for _, k := range []string{aliceDayTokens, aliceDayMicros} {
		if got := used(t, s, k); got != 0 {
			t.Errorf("%s = %d after a failed call, want 0", k, got)
		}
	}
	if err := l.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	es := entries(t, s)
	if len(es) != 1 || es[0].Status != 0 || es[0].CostMicros != 0 || es[0].DurationMS != 1000 {
		t.Errorf("entries = %+v, want one zero-cost entry with status 0", es)
	}
}

func TestLedger_RetriesAreSeparateEntries(t *testing.T) {
	s := memstore.New(memstore.Options{})
	l := newTestLedger(t, s, nil, nil)
	for _, st := range []int{529, 200} {
		settle, err := l.Reserve(t.Context(), aliceCharge(KindExtraction, 10, 0))
		if err != nil {
			t.Fatal(err)
		}
		settle(Result{Status: st, Usage: dialect.Usage{InputTokens: 10}})
	}
	if err := l.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if es := entries(t, s); len(es) != 2 || es[0].ID == es[1].ID {
		t.Errorf("entries = %+v, want two with distinct ids", es)
	}
}

func TestLedger_InvalidChargesAreRefused(t *testing.T) {
	s := memstore.New(memstore.Options{})
	l := newTestLedger(t, s, nil, nil)
	for _, c := range []Charge{
		{Kind: KindExtraction, Model: "gpt-5"},                    // no principal: never billed to a system account
		{Principal: "alice", Kind: "operator_funded", Model: "x"}, // unknown kind
	} {
		if _, err := l.Reserve(t.Context(), c); !errors.Is(err, ErrInvalidCharge) {
			t.Errorf("Reserve(%+v) err = %v, want ErrInvalidCharge", c, err)
		}
	}
}

func TestLedger_AccountDefaultsToPrincipal(t *testing.T) {
	s := memstore.New(memstore.Options{})
	l := newTestLedger(t, s, []config.Budget{{Account: "solo", Period: "day", MaxTokens: 10}}, nil)
	c := aliceCharge(KindPrimary, 50, 0)
	c.Principal, c.Account = "solo", ""
	if _, err := l.Reserve(t.Context(), c); !errors.Is(err, flow.ErrBudgetExceeded) {
		t.Errorf("err = %v: a principal without an account must be bounded by the account budget of its own id", err)
	}
}

func TestLedger_ExtractionAttributedToOriginatingPrincipal(t *testing.T) {
	s := memstore.New(memstore.Options{})
	l := newTestLedger(t, s, []config.Budget{{Principal: "alice", Period: "day", MaxTokens: 100_000}}, nil)
	c := Charge{Principal: "alice", Account: "acme", Session: "s1", ALeg: "a1", Kind: KindExtraction,
		Route: "aux/gpt-5-mini", Provider: "aux", Model: "gpt-5-mini", EstimatedTokens: 3000, EstimatedOutputTokens: 1000}
	settle, err := l.Reserve(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	settle(Result{BLeg: "bl-extract-1", Status: 200, Usage: dialect.Usage{InputTokens: 1200, OutputTokens: 300}})
	if got := used(t, s, aliceDayTokens); got != 1500 {
		t.Errorf("alice's token counter = %d, want the extraction's 1500", got)
	}
	if err := l.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	es := entries(t, s)
	if len(es) != 1 {
		t.Fatalf("entries = %+v, want 1", es)
	}
	e := es[0]
	if e.ID != "bl-extract-1" || e.Principal != "alice" || e.Account != "acme" || e.Kind != "continuity_extraction" ||
		e.Session != "s1" || e.ALeg != "a1" || e.Route != "aux/gpt-5-mini" || e.CostMicros != 1200*2+300*8 {
		t.Errorf("extraction entry = %+v, want alice/acme, kind continuity_extraction, own route, priced", e)
	}
}

func TestLedger_ExtractionBudgetRejectionNotBypassed(t *testing.T) {
	s := memstore.New(memstore.Options{})
	reg := metrics.NewRegistry()
	l := newTestLedger(t, s, []config.Budget{
		{Principal: "alice", Period: "day", MaxUSD: 0.001},
		{Account: "operator", Period: "total", MaxUSD: 1000},
	}, reg)
	// The extraction would cost 4000·2 + 1000·8 µ$ > $0.001.
	c := Charge{Principal: "alice", Account: "acme", Session: "s1", ALeg: "a1", Kind: KindExtraction,
		Route: "aux/gpt-5-mini", Provider: "aux", Model: "gpt-5-mini", EstimatedTokens: 5000, EstimatedOutputTokens: 1000}
	settle, err := l.Reserve(t.Context(), c)
	if !errors.Is(err, flow.ErrBudgetExceeded) || settle != nil {
		t.Fatalf("Reserve = %v, %v; want nil settle and flow.ErrBudgetExceeded", settle != nil, err)
	}
	if err := l.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if es := entries(t, s); len(es) != 0 {
		t.Errorf("a refused extraction wrote entries: %+v", es)
	}
	dump, err := s.Dump(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if rows := dump[backend.TableLedger]; len(rows) != 0 {
		t.Errorf("ledger table holds %d rows after a refusal, want none", len(rows))
	}
	for _, k := range []string{aliceDayMicros, "budget:account:operator:total:usd_micros", "budget:account:acme:day:2026-12-02:usd_micros"} {
		if got := used(t, s, k); got != 0 {
			t.Errorf("counter %s = %d after a refusal, want 0", k, got)
		}
	}
	if got := l.m.rejected.WithLabelValues("continuity_extraction").Value(); got != 1 {
		t.Errorf("rejected{continuity_extraction} = %v, want 1", got)
	}
}

func TestLedger_SettleWritesAtOnce(t *testing.T) {
	s := memstore.New(memstore.Options{})
	l := New(Options{Store: s, Prices: testPrices, Now: func() time.Time { return testNow }, FlushInterval: time.Hour})
	for range 10 {
		settle, err := l.Reserve(t.Context(), aliceCharge(KindPrimary, 1, 0))
		if err != nil {
			t.Fatal(err)
		}
		settle(Result{Status: 200, Usage: dialect.Usage{InputTokens: 1}})
	}
	if n := len(entries(t, s)); n != 10 || l.Pending() != 0 {
		t.Fatalf("after 10 settles: %d written, %d pending; want 10 and 0", n, l.Pending())
	}
	if err := l.Close(t.Context()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := l.Close(t.Context()); err != nil {
		t.Errorf("second Close: %v", err)
	}
	// A B-leg that ends after Close is still written.
	settle, err := l.Reserve(t.Context(), aliceCharge(KindPrimary, 1, 0))
	if err != nil {
		t.Fatal(err)
	}
	settle(Result{Status: 200})
	if n := len(entries(t, s)); n != 11 {
		t.Errorf("settle after Close: %d entries, want 11", n)
	}
}

// failingStore fails settlements while fail is set, and reservations while
// down is set (a store outage).
type failingStore struct {
	*memstore.Store
	fail, down atomic.Bool
}

func (f *failingStore) SettleReservations(ctx context.Context, st []backend.Settlement) error {
	if f.fail.Load() || f.down.Load() {
		return errors.New("disk full")
	}
	return f.Store.SettleReservations(ctx, st)
}

func (f *failingStore) PutReservation(ctx context.Context, r backend.Reservation) (bool, error) {
	if f.down.Load() {
		return false, errors.New("connection refused")
	}
	return f.Store.PutReservation(ctx, r)
}

func TestLedger_FailedWriteKeepsEntries(t *testing.T) {
	s := &failingStore{Store: memstore.New(memstore.Options{})}
	reg := metrics.NewRegistry()
	l := newTestLedger(t, s, nil, reg)
	s.fail.Store(true)
	for range 3 {
		settle, err := l.Reserve(t.Context(), aliceCharge(KindPrimary, 1, 0))
		if err != nil {
			t.Fatal(err)
		}
		settle(Result{Status: 200, Usage: dialect.Usage{InputTokens: 5}})
	}
	if err := l.Flush(t.Context()); err == nil {
		t.Fatal("Flush succeeded against a failing store")
	}
	if l.Pending() != 3 {
		t.Errorf("pending after failed write = %d, want 3", l.Pending())
	}
	if got := l.m.flushErr.Value(); got != 4 {
		t.Errorf("flush errors = %v, want 4 (3 settles, 1 flush)", got)
	}
	if got := l.m.pending.Value(); got != 3 {
		t.Errorf("pending gauge = %v, want 3", got)
	}
	s.fail.Store(false)
	if err := l.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := len(entries(t, s)); n != 3 || l.Pending() != 0 {
		t.Errorf("after recovery: %d entries, %d pending; want 3 and 0", n, l.Pending())
	}
}

func TestLedger_BackgroundWriterRetries(t *testing.T) {
	s := &failingStore{Store: memstore.New(memstore.Options{})}
	l := New(Options{Store: s, Now: func() time.Time { return testNow }, FlushInterval: 10 * time.Millisecond})
	defer l.Close(context.Background())
	s.fail.Store(true)
	for range 5 {
		settle, err := l.Reserve(t.Context(), aliceCharge(KindPrimary, 1, 0))
		if err != nil {
			t.Fatal(err)
		}
		settle(Result{Status: 200})
	}
	s.fail.Store(false)
	deadline := time.Now().Add(10 * time.Second)
	for len(entries(t, s)) != 5 {
		if time.Now().After(deadline) {
			t.Fatal("the writer did not retry the kept settlements")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestLedger_MetricsAreContentFree(t *testing.T) {
	s := memstore.New(memstore.Options{})
	reg := metrics.NewRegistry()
	l := newTestLedger(t, s, nil, reg)
	settle, err := l.Reserve(t.Context(), aliceCharge(KindExtraction, 1, 0))
	if err != nil {
		t.Fatal(err)
	}
	settle(Result{Status: 200, Usage: dialect.Usage{InputTokens: 1000, OutputTokens: 100}})
	c := aliceCharge(KindPrimary, 1, 0)
	c.Model = "mystery"
	settle, err = l.Reserve(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	settle(Result{Status: 200, Usage: dialect.Usage{InputTokens: 7}})

	if got := l.m.tokens.WithLabelValues("continuity_extraction", "input").Value(); got != 1000 {
		t.Errorf("extraction input tokens = %v, want 1000", got)
	}
	if got := l.m.cost.WithLabelValues("continuity_extraction").Value(); got != 0.0028 {
		t.Errorf("extraction cost = %v USD, want 0.0028", got)
	}
	if got := l.m.unpriced.Value(); got != 1 {
		t.Errorf("unpriced = %v, want 1", got)
	}
	names := map[string]bool{}
	for _, f := range reg.Gather() {
		names[f.Name] = true
		for _, s := range f.Series {
			for _, lp := range s.Labels {
				if lp.Name != "kind" && lp.Name != "direction" {
					t.Errorf("%s has label %s", f.Name, lp.Name)
				}
				if v := lp.Value; v == "alice" || v == "acme" || v == "s1" || v == "gpt-5" {
					t.Errorf("%s carries %q in a label", f.Name, v)
				}
			}
		}
	}
	for _, n := range []string{"tether_usage_tokens_total", "tether_usage_cost_usd_total", "tether_ledger_entries_total",
		"tether_admission_rejected_total", "tether_ledger_flush_errors_total", "tether_ledger_pending", "tether_ledger_unpriced_total"} {
		if !names[n] {
			t.Errorf("metric %s not registered", n)
		}
	}
}

// TestLedger_ConcurrentReservations races 200 reservations against a budget
// that admits exactly 50, on every available backend.
func TestLedger_ConcurrentReservations(t *testing.T) {
	backends := map[string]func(t *testing.T) usedStore{
		"memory": func(t *testing.T) usedStore { return memstore.New(memstore.Options{}) },
		"sqlite": func(t *testing.T) usedStore {
			s, err := sqlitestore.Open(t.Context(), filepath.Join(t.TempDir(), "tether.db"), sqlitestore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			return s
		},
	}
	if url := os.Getenv(storetest.PostgresURLEnv); url != "" {
		backends["postgres"] = postgresBackend(url)
	}
	budgets := map[string]struct {
		budget config.Budget
		key    string
		charge Charge
		usage  dialect.Usage
	}{
		// 100 tokens each against 5000.
		"tokens": {config.Budget{Principal: "alice", Period: "day", MaxTokens: 5000}, aliceDayTokens,
			aliceCharge(KindPrimary, 100, 40), dialect.Usage{InputTokens: 60, OutputTokens: 40}},
		// 750·1 + 250·3 = 1500 µ$ each against $0.075.
		"spend": {config.Budget{Account: "acme", Period: "month", MaxUSD: 0.075}, acmeMonthUSD,
			Charge{Principal: "alice", Account: "acme", Kind: KindExtraction, Route: "aux/cheap-1", Provider: "aux", Model: "cheap-1",
				EstimatedTokens: 1000, EstimatedOutputTokens: 250}, dialect.Usage{InputTokens: 750, OutputTokens: 250}},
	}
	for bname, open := range backends {
		for name, tc := range budgets {
			t.Run(bname+"/"+name, func(t *testing.T) {
				s := open(t)
				l := newTestLedger(t, s, []config.Budget{tc.budget}, nil)
				var admitted, refused atomic.Int64
				start := make(chan struct{})
				var wg sync.WaitGroup
				for range 200 {
					wg.Go(func() {
						<-start
						settle, err := l.Reserve(context.Background(), tc.charge)
						switch {
						case errors.Is(err, flow.ErrBudgetExceeded):
							refused.Add(1)
						case err != nil:
							t.Errorf("Reserve: %v", err)
						default:
							admitted.Add(1)
							settle(Result{Status: 200, Usage: tc.usage})
						}
					})
				}
				close(start)
				wg.Wait()
				if admitted.Load() != 50 || refused.Load() != 150 {
					t.Fatalf("admitted %d, refused %d; want 50 and 150", admitted.Load(), refused.Load())
				}
				if err := l.Flush(t.Context()); err != nil {
					t.Fatal(err)
				}
				es := entries(t, s)
				if len(es) != 50 {
					t.Fatalf("ledger holds %d entries, want 50", len(es))
				}
				var sumCost, sumTokens int64
				for _, e := range es {
					sumCost += e.CostMicros
					sumTokens += e.InputTokens + e.OutputTokens
				}
				rep, err := l.Report(t.Context(), "alice", "acme", testNow.Add(-time.Hour))
				if err != nil {
					t.Fatal(err)
				}
				if rep.Totals.Calls != 50 || rep.Totals.CostMicros != sumCost || rep.Totals.InputTokens+rep.Totals.OutputTokens != sumTokens {
					t.Errorf("report totals %+v do not reconcile with entries (cost %d µ$, tokens %d)", rep.Totals, sumCost, sumTokens)
				}
				counter := used(t, s, tc.key)
				if name == "tokens" && counter != sumTokens {
					t.Errorf("token counter %d != sum of entries %d", counter, sumTokens)
				}
				if name == "spend" && (counter != sumCost || sumCost != 75_000) {
					t.Errorf("spend counter %d µ$, entries %d µ$; want both 75000", counter, sumCost)
				}
			})
		}
	}
}
