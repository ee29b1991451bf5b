package ledger

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/auth"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/fakemodel"
	"github.com/tether-dev/tether/internal/flow"
	"github.com/tether-dev/tether/internal/server"
	"github.com/tether-dev/tether/internal/store/memstore"
	"github.com/tether-dev/tether/internal/upstream"
)

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEstimateCall(t *testing.T) {
	claude := readTestdata(t, "claude-messages-main.json")
	codex := readTestdata(t, "codex-responses-main.json")
	tests := []struct {
		name               string
		body               []byte
		wantTotal, wantOut int64
	}{
		{"claude code main turn carries max_tokens 32000", claude, (int64(len(claude))+3)/4 + 32000, 32000},
		{"codex turn has no cap: default output", codex, (int64(len(codex))+3)/4 + 4096, 4096},
		{"chat max_completion_tokens", []byte(`{"model":"m","max_completion_tokens":100}`), 11 + 100, 100},
		{"responses max_output_tokens", []byte(`{"model":"m","max_output_tokens":7}`), 9 + 7, 7},
		{"a non-numeric cap is ignored", []byte(`{"max_tokens":"lots"}`), 6 + 4096, 4096},
		{"empty body", nil, 4096, 4096},
		{"an absurd cap is bounded, not overflowed", []byte(`{"max_tokens":1e30}`), 5 + 1<<40, 1 << 40},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			total, out := estimateCall(tt.body, 4096, nil)
			if total != tt.wantTotal || out != tt.wantOut {
				t.Errorf("estimateCall = %d, %d; want %d, %d", total, out, tt.wantTotal, tt.wantOut)
			}
		})
	}
}

func exchange(body []byte, family string) *flow.Exchange {
	return &flow.Exchange{
		ID: "req-1", Kind: "primary", Body: body,
		Principal: auth.Principal{ID: "alice", Account: "acme"},
		Session:   "s1", ALeg: "a1",
		Target: upstream.Target{Provider: config.Provider{Name: "openai", Dialect: family}, Model: "gpt-5"},
	}
}

func TestAdmit_RefusalWrapsTheSentinel(t *testing.T) {
	s := memstore.New(memstore.Options{})
	l := newTestLedger(t, s, []config.Budget{{Principal: "alice", Period: "day", MaxTokens: 1000}}, nil)
	_, err := l.Admit(t.Context(), exchange([]byte(`{"model":"gpt-5","max_tokens":5000}`), config.FamilyOpenAI))
	if !errors.Is(err, flow.ErrBudgetExceeded) {
		t.Fatalf("err = %v, want flow.ErrBudgetExceeded", err)
	}
	if got := used(t, s, aliceDayTokens); got != 0 {
		t.Errorf("counter after refusal = %d, want 0", got)
	}
}

func TestAdmit_SettleRecordsUncachedInput(t *testing.T) {
	s := memstore.New(memstore.Options{})
	l := newTestLedger(t, s, []config.Budget{{Principal: "alice", Period: "day", MaxTokens: 100_000}}, nil)
	body := []byte(`{"model":"gpt-5","max_tokens":100,"messages":[{"role":"user","content":"hi"}]}`)
	for _, fam := range []string{config.FamilyOpenAI, config.FamilyAnthropic} {
		settle, err := l.Admit(t.Context(), exchange(body, fam))
		if err != nil {
			t.Fatal(err)
		}
		settle(flow.Outcome{Status: 200, Duration: 250 * time.Millisecond,
			Usage: dialect.Usage{InputTokens: 1200, OutputTokens: 34, CacheReadTokens: 800}})
	}
	if err := l.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	es := entries(t, s)
	if len(es) != 2 {
		t.Fatalf("entries = %d, want 2", len(es))
	}
	inputs := map[int64]int64{} // input tokens → cost
	for _, e := range es {
		if e.Principal != "alice" || e.Account != "acme" || e.Kind != "primary" || e.Route != "openai/gpt-5" || e.Session != "s1" || e.DurationMS != 250 {
			t.Errorf("entry = %+v", e)
		}
		inputs[e.InputTokens] = e.CostMicros
	}
	// OpenAI's 1200 prompt tokens include the 800 cached ones: 400 uncached.
	// 400·2 + 34·8 + 800·0.5 = 1472; Anthropic's 1200 exclude them: 2400 + 272 + 400.
	if inputs[400] != 1472 || inputs[1200] != 3072 {
		t.Errorf("input tokens → cost = %v, want 400 → 1472 (openai) and 1200 → 3072 (anthropic)", inputs)
	}
	if got := used(t, s, aliceDayTokens); got != 400+34+800+1200+34+800 {
		t.Errorf("token counter = %d, want the settled totals", got)
	}
}

// TestAdmit_ThroughServer drives the real proxy over HTTP: a Claude Code
// turn is admitted and recorded, the next one is refused with 429 in the
// Anthropic error format, and GET /v1/usage on the same server shows the
// recorded call.
func TestAdmit_ThroughServer(t *testing.T) {
	fake := fakemodel.Start(fakemodel.Script(fakemodel.Reply{Text: "Plan recorded.", InputTokens: 90_000, OutputTokens: 12}))
	defer fake.Close()
	cfg := &config.Config{
		Providers:  []config.Provider{{Name: "anthropic", Dialect: config.FamilyAnthropic, BaseURL: fake.URL, APIKey: "upstream-key"}},
		Principals: []config.Principal{{ID: "alice", Account: "acme", Keys: []string{"key-alice"}}},
		Prices:     []config.Price{{Match: "claude-sonnet-*", InputPerMTok: 3, OutputPerMTok: 15}},
		Budgets:    []config.Budget{{Principal: "alice", Period: "day", MaxTokens: 100_000}},
	}
	cfg.WithDefaults(func(string) string { return "" })
	s := memstore.New(memstore.Options{})
	l := New(Options{Store: s, Prices: cfg.Prices, Budgets: cfg.Budgets, Now: func() time.Time { return testNow }, FlushInterval: time.Hour})
	defer l.Close(t.Context())
	client := upstream.NewClient()
	defer client.HTTP.CloseIdleConnections()
	var srv *server.Server
	srv = server.New(server.Options{Config: cfg, Secret: []byte("secret"), Client: client, Admitter: l,
		Mount: func(mux *http.ServeMux) {
			l.Routes(func(h http.Header) (auth.Principal, error) { return srv.Authenticate(h) }, "")(mux)
		}})
	front := httptest.NewServer(srv)
	defer front.Close()
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()

	body := readTestdata(t, "claude-messages-main.json")
	post := func() (int, string) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, front.URL+"/v1/messages?beta=true", bytes.NewReader(body))
		req.Header.Set("x-api-key", "key-alice")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("anthropic-version", "2023-06-01")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if status, b := post(); status != http.StatusOK {
		t.Fatalf("first turn: %d %s", status, b)
	}
	// 90 000 used; the next turn's estimate (~61 000) does not fit in 100 000.
	status, b := post()
	if status != http.StatusTooManyRequests || !strings.Contains(b, `"rate_limit_error"`) {
		t.Errorf("second turn: %d %s; want 429 with an Anthropic error body", status, b)
	}
	if n := len(fake.Requests()); n != 1 {
		t.Errorf("upstream saw %d requests, want 1 (the refused turn must not open a B-leg)", n)
	}

	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, front.URL+"/v1/usage", nil)
	req.Header.Set("Authorization", "Bearer key-alice")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	rep := decode(t, raw)
	totals, _ := rep["totals"].(map[string]any)
	if resp.StatusCode != http.StatusOK || rep["principal"] != "alice" || totals["calls"] != 1.0 || totals["input_tokens"] != 90000.0 ||
		totals["cost_micros"] != 90000.0*3+12*15 {
		t.Errorf("GET /v1/usage = %d %s", resp.StatusCode, raw)
	}
}

func FuzzEstimateCall(f *testing.F) {
	f.Add(readTestdataF(f, "claude-messages-main.json"))
	f.Add(readTestdataF(f, "codex-responses-main.json"))
	f.Add([]byte(`{"max_tokens":-5}`))
	f.Add([]byte(`{"max_tokens":1e30}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		total, out := estimateCall(body, 4096, nil)
		if out <= 0 || total < out || total-out != (int64(len(body))+3)/4 {
			t.Errorf("estimateCall(%q) = %d, %d", body, total, out)
		}
	})
}

func readTestdataF(f *testing.F, name string) []byte {
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		f.Fatal(err)
	}
	return b
}
