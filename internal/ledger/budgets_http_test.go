package ledger

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tether-dev/tether/internal/auth"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/flow"
	"github.com/tether-dev/tether/internal/store/memstore"
)

// GET /v1/usage shows each budget that bounds the caller, with what is used
// and what remains in the current period and when it resets; another
// principal's budget is not shown.
func TestUsageAPI_ShowsBudgetsUsedAndRemaining(t *testing.T) {
	l := newTestLedger(t, memstore.New(memstore.Options{}), []config.Budget{
		{Principal: "alice", Period: "day", MaxTokens: 1000},
		{Account: "acme", Period: "month", MaxUSD: 5},
		{Principal: "bob", Period: "total", MaxTokens: 50},
	}, nil)
	mux := http.NewServeMux()
	l.Routes(func(h http.Header) (auth.Principal, error) {
		if auth.Credential(h) == "key-alice" {
			return auth.Principal{ID: "alice", Account: "acme"}, nil
		}
		return auth.Principal{}, auth.ErrUnauthenticated
	}, "")(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	charge(t, l, Charge{Principal: "alice", Account: "acme", Kind: KindPrimary, Model: "cheap-1", EstimatedTokens: 10},
		dialect.Usage{InputTokens: 200_000, OutputTokens: 100_000})
	// 300k tokens: over alice's daily 1000 now; $0.50 of acme's $5.
	status, body := get(t, srv.URL+"/v1/usage", "key-alice")
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	got := decode(t, body)["budgets"]
	want := []any{
		map[string]any{"scope": "account", "id": "acme", "period": "month", "unit": "usd", "limit": 5.0, "used": 0.5, "remaining": 4.5, "resets_at": "2027-01-01T00:00:00Z"},
		map[string]any{"scope": "principal", "id": "alice", "period": "day", "unit": "tokens", "limit": 1000.0, "used": 300000.0, "remaining": 0.0, "resets_at": "2026-12-03T00:00:00Z"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("budgets (-want +got):\n%s", diff)
	}

	// The refusal says how long until the day's budget resets.
	_, err := l.Reserve(t.Context(), Charge{Principal: "alice", Account: "acme", Kind: KindPrimary, Model: "cheap-1", EstimatedTokens: 10})
	if !errors.Is(err, flow.ErrBudgetExceeded) || flow.RetryAfter(err) != 13*time.Hour+30*time.Minute {
		t.Errorf("refusal: err %v, retry after %s, want 13h30m", err, flow.RetryAfter(err))
	}
}
