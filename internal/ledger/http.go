package ledger

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/tether-dev/tether/internal/auth"
	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/store/backend"
)

// DefaultUsageWindow is how far back GET /v1/usage looks without ?since.
const DefaultUsageWindow = 30 * 24 * time.Hour

// Amounts is a sum of ledger entries. InputTokens are uncached input; cache
// reads and writes are counted separately. CostUSD is CostMicros/10⁶;
// CostMicros is exact and is what totals reconcile on.
type Amounts struct {
	Calls            int64   `json:"calls"`
	InputTokens      int64   `json:"input_tokens"`
	OutputTokens     int64   `json:"output_tokens"`
	CacheReadTokens  int64   `json:"cache_read_tokens"`
	CacheWriteTokens int64   `json:"cache_write_tokens"`
	CostMicros       int64   `json:"cost_micros"`
	CostUSD          float64 `json:"cost_usd"`
}

func (a *Amounts) add(r backend.UsageRow) {
	a.Calls += r.Calls
	a.InputTokens += r.InputTokens
	a.OutputTokens += r.OutputTokens
	a.CacheReadTokens += r.CacheReadTokens
	a.CacheWriteTokens += r.CacheWriteTokens
	a.CostMicros += r.CostMicros
	a.CostUSD = float64(a.CostMicros) / 1e6
}

// UsageRow is one day, kind and model of a usage report.
type UsageRow struct {
	Day   string `json:"day"`
	Kind  string `json:"kind"`
	Model string `json:"model"`
	Amounts
}

// UsageReport is the body of GET /v1/usage and GET /v1/admin/usage. Totals
// include every kind; ByKind always has both primary and
// continuity_extraction, so the cost of continuity extraction is visible
// even when it is zero.
type UsageReport struct {
	Principal string             `json:"principal"`
	Account   string             `json:"account,omitempty"`
	Since     string             `json:"since"`
	Totals    Amounts            `json:"totals"`
	ByKind    map[string]Amounts `json:"by_kind"`
	Rows      []UsageRow         `json:"rows"`
	// Budgets are the configured budgets that bound this principal (or its
	// account) in their current period; every budget for an admin report
	// of all principals.
	Budgets []BudgetStatus `json:"budgets"`
}

// BudgetStatus is one budget in its current period. Used counts settled
// calls plus the reservations of calls still running; Remaining is what a
// new call can still reserve. Amounts are tokens or US dollars (Unit).
type BudgetStatus struct {
	Scope     string  `json:"scope"` // principal | account
	ID        string  `json:"id"`
	Period    string  `json:"period"` // day | month | total
	Unit      string  `json:"unit"`   // tokens | usd
	Limit     float64 `json:"limit"`
	Used      float64 `json:"used"`
	Remaining float64 `json:"remaining"`
	// ResetsAt is when the period ends (RFC 3339, UTC); absent for total.
	ResetsAt string `json:"resets_at,omitempty"`
}

// Budgets reports the budgets that bound principal or account ("" and ""
// for every budget) in the period containing now.
func (l *Ledger) Budgets(ctx context.Context, principal, account string) ([]BudgetStatus, error) {
	if account == "" {
		account = principal
	}
	now := l.now()
	out := []BudgetStatus{}
	for _, lim := range l.limits {
		if principal != "" && !lim.applies(principal, account) {
			continue
		}
		used, err := l.store.Used(ctx, lim.key(now))
		if err != nil {
			return nil, err
		}
		b := BudgetStatus{Scope: lim.scope, ID: lim.id, Period: lim.period, Unit: "tokens",
			Limit: float64(lim.max), Used: float64(used), Remaining: float64(max(lim.max-used, 0))}
		if lim.unit == unitMicros {
			b.Unit, b.Limit, b.Used, b.Remaining = "usd", b.Limit/1e6, b.Used/1e6, b.Remaining/1e6
		}
		if at := lim.resetAt(now); !at.IsZero() {
			b.ResetsAt = at.Format(time.RFC3339)
		}
		out = append(out, b)
	}
	return out, nil
}

// Report flushes pending entries (so a caller sees its latest calls) and
// sums the principal's usage since the given time; principal "" reports
// every principal.
func (l *Ledger) Report(ctx context.Context, principal, account string, since time.Time) (UsageReport, error) {
	if err := l.Flush(ctx); err != nil {
		l.log.Warn("ledger: flush before usage report failed", slog.Any("error", err))
	}
	rows, err := l.store.Usage(ctx, principal, since)
	if err != nil {
		return UsageReport{}, err
	}
	rep := UsageReport{
		Principal: principal,
		Account:   account,
		Since:     since.UTC().Format(time.DateOnly),
		ByKind:    map[string]Amounts{string(KindPrimary): {}, string(KindExtraction): {}},
		Rows:      make([]UsageRow, 0, len(rows)),
	}
	for _, r := range rows {
		rep.Totals.add(r)
		k := rep.ByKind[r.Kind]
		k.add(r)
		rep.ByKind[r.Kind] = k
		row := UsageRow{Day: r.Day, Kind: r.Kind, Model: r.Model}
		row.add(r)
		rep.Rows = append(rep.Rows, row)
	}
	return rep, nil
}

// Routes returns a function that mounts the usage API on a mux:
//
//	GET /v1/usage[?since=YYYY-MM-DD]              the caller's own usage
//	GET /v1/admin/usage?principal=ID[&since=…]    any principal's (admin key)
//
// authn authenticates callers (the server's Authenticate). The admin route
// answers 404 when adminKey is empty and 401 without the key.
func (l *Ledger) Routes(authn func(http.Header) (auth.Principal, error), adminKey string) func(*http.ServeMux) {
	return func(mux *http.ServeMux) {
		mux.HandleFunc("GET /v1/usage", func(w http.ResponseWriter, r *http.Request) {
			p, err := authn(r.Header)
			if err != nil {
				writeJSONError(w, http.StatusUnauthorized, "missing or invalid API key")
				return
			}
			l.serveReport(w, r, p.ID, p.Account)
		})
		mux.HandleFunc("GET /v1/admin/usage", func(w http.ResponseWriter, r *http.Request) {
			if adminKey == "" {
				writeJSONError(w, http.StatusNotFound, "the admin API is not configured (set admin_key)")
				return
			}
			if !auth.AdminOK(r.Header, adminKey) {
				writeJSONError(w, http.StatusUnauthorized, "missing or invalid admin key")
				return
			}
			principal := r.URL.Query().Get("principal")
			account := ""
			if principal != "" {
				if es, err := l.store.LedgerEntries(r.Context(), principal, 1); err == nil && len(es) > 0 {
					account = es[0].Account
				}
			}
			l.serveReport(w, r, principal, account)
		})
	}
}

func (l *Ledger) serveReport(w http.ResponseWriter, r *http.Request, principal, account string) {
	now := l.now().UTC()
	since := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC).Add(-DefaultUsageWindow)
	if s := r.URL.Query().Get("since"); s != "" {
		t, err := time.Parse(time.DateOnly, s)
		if err != nil {
			writeJSONError(w, http.StatusBadRequest, "since must be a date, YYYY-MM-DD")
			return
		}
		since = t
	}
	rep, err := l.Report(r.Context(), principal, account, since)
	if err == nil {
		rep.Budgets, err = l.Budgets(r.Context(), principal, account)
	}
	if err != nil {
		l.log.Error("ledger: usage report failed", slog.Any("error", err))
		writeJSONError(w, http.StatusInternalServerError, "usage is unavailable")
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		writeJSONError(w, http.StatusInternalServerError, "encoding failed")
		return
	}
	writeBody(w, status, data)
}

// writeJSONError answers with the OpenAI error object the proxy's own
// errors use (dialect.ErrorBody).
func writeJSONError(w http.ResponseWriter, status int, msg string) {
	writeBody(w, status, dialect.ErrorBody(dialect.OpenAIChat, status, msg))
}

func writeBody(w http.ResponseWriter, status int, data []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(data, '\n'))
}
