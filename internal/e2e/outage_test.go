package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/store"
	"github.com/tether-dev/tether/internal/store/memstore"
)

// readOnlyStore is a store whose writes fail while down is set, as when the
// SQLite file is unwritable (disk full, read-only mount): reads still work,
// so a ping alone says nothing.
type readOnlyStore struct {
	store.Store
	down atomic.Bool
}

var errReadOnly = errors.New("attempt to write a readonly database")

func (s *readOnlyStore) fail() error {
	if s.down.Load() {
		return errReadOnly
	}
	return nil
}

func (s *readOnlyStore) PutCapsule(ctx context.Context, r store.CapsuleRecord, exp int64) error {
	if err := s.fail(); err != nil {
		return err
	}
	return s.Store.PutCapsule(ctx, r, exp)
}

func (s *readOnlyStore) PutLineage(ctx context.Context, p, k string, v []byte, exp time.Time) error {
	if err := s.fail(); err != nil {
		return err
	}
	return s.Store.PutLineage(ctx, p, k, v, exp)
}

func (s *readOnlyStore) PutReservation(ctx context.Context, r store.Reservation) (bool, error) {
	if err := s.fail(); err != nil {
		return false, err
	}
	return s.Store.PutReservation(ctx, r)
}

func (s *readOnlyStore) SettleReservations(ctx context.Context, st []store.Settlement) error {
	if err := s.fail(); err != nil {
		return err
	}
	return s.Store.SettleReservations(ctx, st)
}

func (s *readOnlyStore) Adjust(ctx context.Context, key string, d int64) error {
	if err := s.fail(); err != nil {
		return err
	}
	return s.Store.Adjust(ctx, key, d)
}

// outageCall sends one small primary request as the principal with key and
// returns its status.
func outageCall(t *testing.T, e *env, key string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.url+"/v1/messages",
		strings.NewReader(`{"model":"claude-sonnet-4-5","max_tokens":64,"messages":[{"role":"user","content":"hello"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-api-key", key)
	req.Header.Set("anthropic-version", "2023-06-01")
	req.Header.Set("content-type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func readyz(t *testing.T, e *env) int {
	t.Helper()
	resp, err := http.Get(e.url + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// A store that stops taking writes. Before: with any budget configured,
// every primary request got 503 ("usage admission is unavailable") and
// /readyz said ready throughout. Now /readyz tells the truth, fail_open
// (the default) keeps budgeted traffic flowing within the per-process cap,
// and once the store is back every call is in the ledger and the budget
// counter equals the ledger's sum.
func TestStoreOutage_FailOpenKeepsTrafficAndAccounts(t *testing.T) {
	st := &readOnlyStore{Store: memstore.New(memstore.Options{})}
	cfg := accountingYAML + `
prices:
  - {match: "claude-*", input_per_mtok: 3, output_per_mtok: 15}
budgets:
  - {principal: alice, period: day, max_tokens: 10000000}
store_outage:
  max_tokens: 2000
`
	e := accountingStart(t, cfg, nil, st)
	if got := readyz(t, e); got != http.StatusOK {
		t.Fatalf("/readyz = %d with the store up", got)
	}
	st.down.Store(true)
	if got := readyz(t, e); got != http.StatusServiceUnavailable {
		t.Errorf("/readyz = %d with the store refusing writes, want 503", got)
	}
	// Each call reserves ~100 tokens (its bytes/4 plus max_tokens 64):
	// the first calls fit the 2,000-token outage cap, later ones do not.
	ok, refused := 0, 0
	for range 40 {
		switch s := outageCall(t, e, accountingAliceKey); s {
		case http.StatusOK:
			ok++
		case http.StatusServiceUnavailable:
			refused++
		default:
			t.Fatalf("status %d during the outage", s)
		}
	}
	if ok < 10 || refused == 0 {
		t.Errorf("during the outage %d calls admitted and %d refused; want the cap (2,000 tokens) to admit some and stop the rest", ok, refused)
	}
	// bob has no budget: nothing to enforce, always admitted.
	for range 5 {
		if s := outageCall(t, e, accountingBobKey); s != http.StatusOK {
			t.Fatalf("unbudgeted call during the outage: status %d", s)
		}
	}
	st.down.Store(false)
	if got := readyz(t, e); got != http.StatusOK {
		t.Errorf("/readyz = %d after the store came back", got)
	}
	if err := e.app.Ledger.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	es, err := st.LedgerEntries(context.Background(), "alice", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != ok {
		t.Errorf("%d ledger rows for alice, want the %d calls served", len(es), ok)
	}
	var sum int64
	for _, x := range es {
		sum += x.InputTokens + x.OutputTokens + x.CacheReadTokens + x.CacheWriteTokens
	}
	key := fmt.Sprintf("budget:principal:alice:day:%s:tokens", time.Now().UTC().Format(time.DateOnly))
	if used, err := st.Used(context.Background(), key); err != nil || used != sum || sum == 0 {
		t.Errorf("budget counter %d (%v), ledger sum %d; want equal and non-zero", used, err, sum)
	}
	if s := outageCall(t, e, accountingAliceKey); s != http.StatusOK {
		t.Errorf("after the outage: status %d", s)
	}
}

func TestStoreOutage_FailClosedRefusesBudgetedCalls(t *testing.T) {
	st := &readOnlyStore{Store: memstore.New(memstore.Options{})}
	cfg := accountingYAML + `
budgets:
  - {principal: alice, period: day, max_tokens: 10000000}
store_outage:
  admission: fail_closed
`
	e := accountingStart(t, cfg, nil, st)
	st.down.Store(true)
	t.Cleanup(func() { st.down.Store(false) }) // before the proxy closes: bob's entry is written then
	if s := outageCall(t, e, accountingAliceKey); s != http.StatusServiceUnavailable {
		t.Errorf("budgeted call under fail_closed: status %d, want 503", s)
	}
	if s := outageCall(t, e, accountingBobKey); s != http.StatusOK {
		t.Errorf("unbudgeted call under fail_closed: status %d, want 200", s)
	}
}
