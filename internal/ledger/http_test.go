package ledger

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tether-dev/tether/internal/auth"
	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/store/memstore"
)

// usageServer serves the usage API over real HTTP for two principals with
// proxy keys "key-alice" and "key-bob", and admin key "admin-secret" (or
// none when adminKey is empty).
func usageServer(t *testing.T, adminKey string) (*Ledger, *httptest.Server) {
	t.Helper()
	s := memstore.New(memstore.Options{})
	l := newTestLedger(t, s, nil, nil)
	authn := func(h http.Header) (auth.Principal, error) {
		switch auth.Credential(h) {
		case "key-alice":
			return auth.Principal{ID: "alice", Account: "acme"}, nil
		case "key-bob":
			return auth.Principal{ID: "bob", Account: "bobco"}, nil
		}
		return auth.Principal{}, auth.ErrUnauthenticated
	}
	mux := http.NewServeMux()
	l.Routes(authn, adminKey)(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return l, srv
}

func charge(t *testing.T, l *Ledger, c Charge, u dialect.Usage) {
	t.Helper()
	settle, err := l.Reserve(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	settle(Result{Status: 200, Usage: u})
}

func get(t *testing.T, url, key string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

func decode(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	return v
}

func TestUsageAPI_OwnPrincipalWithExtractionSplit(t *testing.T) {
	l, srv := usageServer(t, "admin-secret")
	// alice: one primary and one extraction call; bob: one primary call.
	charge(t, l, aliceCharge(KindPrimary, 10, 0), dialect.Usage{InputTokens: 1000, OutputTokens: 100, CacheReadTokens: 2000})
	ext := aliceCharge(KindExtraction, 10, 0)
	ext.Model, ext.Route = "gpt-5-mini", "aux/gpt-5-mini"
	charge(t, l, ext, dialect.Usage{InputTokens: 500, OutputTokens: 50})
	bob := aliceCharge(KindPrimary, 10, 0)
	bob.Principal, bob.Account = "bob", "bobco"
	charge(t, l, bob, dialect.Usage{InputTokens: 7777, OutputTokens: 777})
	// Settles are written at once: the report reads them from the store.
	if l.Pending() != 0 {
		t.Fatalf("pending = %d, want 0", l.Pending())
	}

	status, body := get(t, srv.URL+"/v1/usage", "key-alice")
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	// primary: 1000·2 + 100·8 + 2000·0.5 = 3800 µ$; extraction: 500·2 + 50·8 = 1400 µ$.
	want := map[string]any{
		"principal": "alice", "account": "acme", "since": "2026-11-02", "budgets": []any{},
		"totals": map[string]any{"calls": 2.0, "input_tokens": 1500.0, "output_tokens": 150.0, "cache_read_tokens": 2000.0,
			"cache_write_tokens": 0.0, "cost_micros": 5200.0, "cost_usd": 0.0052},
		"by_kind": map[string]any{
			"primary": map[string]any{"calls": 1.0, "input_tokens": 1000.0, "output_tokens": 100.0, "cache_read_tokens": 2000.0,
				"cache_write_tokens": 0.0, "cost_micros": 3800.0, "cost_usd": 0.0038},
			"continuity_extraction": map[string]any{"calls": 1.0, "input_tokens": 500.0, "output_tokens": 50.0, "cache_read_tokens": 0.0,
				"cache_write_tokens": 0.0, "cost_micros": 1400.0, "cost_usd": 0.0014},
		},
		"rows": []any{
			map[string]any{"day": "2026-12-02", "kind": "continuity_extraction", "model": "gpt-5-mini", "calls": 1.0, "input_tokens": 500.0,
				"output_tokens": 50.0, "cache_read_tokens": 0.0, "cache_write_tokens": 0.0, "cost_micros": 1400.0, "cost_usd": 0.0014},
			map[string]any{"day": "2026-12-02", "kind": "primary", "model": "gpt-5", "calls": 1.0, "input_tokens": 1000.0,
				"output_tokens": 100.0, "cache_read_tokens": 2000.0, "cache_write_tokens": 0.0, "cost_micros": 3800.0, "cost_usd": 0.0038},
		},
	}
	if diff := cmp.Diff(want, decode(t, body)); diff != "" {
		t.Errorf("GET /v1/usage as alice (-want +got):\n%s", diff)
	}

	// bob sees only his own, and an extraction split of zero.
	status, body = get(t, srv.URL+"/v1/usage", "key-bob")
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	got := decode(t, body)
	if got["principal"] != "bob" || got["totals"].(map[string]any)["input_tokens"] != 7777.0 {
		t.Errorf("bob's report = %v", got)
	}
	zero := map[string]any{"calls": 0.0, "input_tokens": 0.0, "output_tokens": 0.0, "cache_read_tokens": 0.0,
		"cache_write_tokens": 0.0, "cost_micros": 0.0, "cost_usd": 0.0}
	if diff := cmp.Diff(zero, got["by_kind"].(map[string]any)["continuity_extraction"]); diff != "" {
		t.Errorf("bob's extraction split (-want +got):\n%s", diff)
	}
}

func TestUsageAPI_ErrorsAndSince(t *testing.T) {
	l, srv := usageServer(t, "admin-secret")
	charge(t, l, aliceCharge(KindPrimary, 10, 0), dialect.Usage{InputTokens: 10})
	tests := []struct {
		name, path, key string
		wantStatus      int
		wantCalls       float64
	}{
		{"no key", "/v1/usage", "", http.StatusUnauthorized, -1},
		{"wrong key", "/v1/usage", "key-mallory", http.StatusUnauthorized, -1},
		{"bad since", "/v1/usage?since=yesterday", "key-alice", http.StatusBadRequest, -1},
		{"since before", "/v1/usage?since=2026-12-02", "key-alice", http.StatusOK, 1},
		{"since after", "/v1/usage?since=2026-12-03", "key-alice", http.StatusOK, 0},
		{"a principal query is ignored outside admin", "/v1/usage?principal=bob", "key-alice", http.StatusOK, 1},
		{"admin without key", "/v1/admin/usage?principal=alice", "", http.StatusUnauthorized, -1},
		{"admin with a user key", "/v1/admin/usage?principal=alice", "key-alice", http.StatusUnauthorized, -1},
		{"admin", "/v1/admin/usage?principal=alice", "admin-secret", http.StatusOK, 1},
		{"admin other principal", "/v1/admin/usage?principal=bob", "admin-secret", http.StatusOK, 0},
		{"admin all principals", "/v1/admin/usage", "admin-secret", http.StatusOK, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := get(t, srv.URL+tt.path, tt.key)
			if status != tt.wantStatus {
				t.Fatalf("status = %d, want %d: %s", status, tt.wantStatus, body)
			}
			v := decode(t, body)
			if tt.wantCalls < 0 {
				if _, ok := v["error"]; !ok {
					t.Errorf("error body %s has no error object", body)
				}
				return
			}
			if got := v["totals"].(map[string]any)["calls"]; got != tt.wantCalls {
				t.Errorf("calls = %v, want %v", got, tt.wantCalls)
			}
		})
	}
	status, body := get(t, srv.URL+"/v1/admin/usage?principal=alice", "admin-secret")
	if v := decode(t, body); status != http.StatusOK || v["account"] != "acme" {
		t.Errorf("admin report for alice = %d %s, want account acme", status, body)
	}
}

func TestUsageAPI_AdminNotConfigured(t *testing.T) {
	_, srv := usageServer(t, "")
	for _, key := range []string{"", "admin-secret", "key-alice"} {
		if status, body := get(t, srv.URL+"/v1/admin/usage?principal=alice", key); status != http.StatusNotFound {
			t.Errorf("key %q: status %d, want 404: %s", key, status, body)
		}
	}
}
