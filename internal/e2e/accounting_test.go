package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/tether-dev/tether/internal/app"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/demo"
	"github.com/tether-dev/tether/internal/fakemodel"
	"github.com/tether-dev/tether/internal/ledger"
	"github.com/tether-dev/tether/internal/store"
	"github.com/tether-dev/tether/internal/store/memstore"
)

// accountingStart starts the scripted model and a proxy whose whole
// configuration is cfg, with %[1]s standing for the model's URL and %[2]s
// for the proxy's own URL: the listener is opened before the configuration
// is built, so a provider may point back at the proxy itself.
func accountingStart(t testing.TB, cfg string, responder fakemodel.Responder, st store.Store) *env {
	t.Helper()
	if responder == nil {
		responder = demo.Model()
	}
	fake := fakemodel.Start(responder)
	t.Cleanup(fake.Close)
	return accountingServe(t, fake, cfg, st)
}

// accountingServe starts one more proxy in front of an already running
// scripted model (cfg and st as for accountingStart): several replicas may
// share one model and one store.
func accountingServe(t testing.TB, fake *fakemodel.Server, cfg string, st store.Store, opts ...func(*app.Options)) *env {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	c, err := config.Parse([]byte(fmt.Sprintf(cfg, fake.URL, url)), func(string) string { return "" })
	if err != nil {
		_ = ln.Close()
		t.Fatalf("config: %v", err)
	}
	if st == nil {
		st = memstore.New(memstore.Options{})
	}
	logs := &syncBuffer{}
	ao := app.Options{LogOutput: logs, Store: st}
	for _, o := range opts {
		o(&ao)
	}
	a, err := app.New(context.Background(), c, ao)
	if err != nil {
		_ = ln.Close()
		t.Fatalf("app: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = a.Serve(ctx, ln); close(done) }()
	t.Cleanup(func() {
		cancel()
		<-done
		cctx, c2 := context.WithTimeout(context.Background(), 10*time.Second)
		defer c2()
		if err := a.Close(cctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return &env{t: t, fake: fake, app: a, url: url, store: st, logs: logs}
}

// Proxy-key mode: two principals of different accounts, an admin key, and
// prices for the coding model and the extractor model.
const (
	accountingAliceKey = "alice-key-0123456789"
	accountingBobKey   = "bob-key-0123456789ab"
	accountingAdminKey = "admin-key-0123456789abcdef"
	accountingSecret   = "e2e-secret-0123456789abcdef0123456789"
)

const accountingYAML = `
secret: ` + accountingSecret + `
admin_key: ` + accountingAdminKey + `
providers:
  - {name: model, dialect: anthropic, base_url: "%[1]s", api_key: upstream-anthropic-key}
  - {name: openai, dialect: openai, base_url: "%[1]s/v1", api_key: upstream-openai-key}
  - {name: extractor, dialect: openai, base_url: "%[1]s/v1", api_key: upstream-extractor-key}
routes:
  - {match: "*", provider: model}
  - {match: "*", provider: openai}
principals:
  - {id: alice, account: acme, keys: [` + accountingAliceKey + `]}
  - {id: bob, account: globex, keys: [` + accountingBobKey + `]}
compaction_continuity:
  enabled: true
  barrier_timeout: 5s
  extractor:
    route: extractor/` + demo.ExtractorModel + `
    workers: 2
`

// accountingPrices prices the coding model at 3/15 and the extractor at
// 1/5 USD per million input/output tokens.
const accountingPrices = `
prices:
  - {match: "claude-*", input_per_mtok: 3, output_per_mtok: 15}
  - {match: "` + demo.ExtractorModel + `", input_per_mtok: 1, output_per_mtok: 5}
`

// accountingAgent is a scripted Claude Code client authenticating with key.
func accountingAgent(e *env, session, key string) *demo.Agent {
	a := e.agent(session)
	a.APIKey = key
	return a
}

// accountingSettled waits until every call the model received has its
// ledger entry. The proxy settles a call once the client has had the last
// byte of the answer, so a client's next request may overtake the settle
// by a moment; this bounded wait absorbs that and nothing else.
func accountingSettled(t *testing.T, e *env) []store.LedgerEntry {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if err := e.app.Ledger.Flush(context.Background()); err != nil {
			t.Fatalf("flush ledger: %v", err)
		}
		es, err := e.store.LedgerEntries(context.Background(), "", 0)
		if err != nil {
			t.Fatal(err)
		}
		n := len(e.fake.Requests())
		if len(es) >= n {
			return es
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d ledger entries for %d calls the model received", len(es), n)
		}
		<-time.After(2 * time.Millisecond)
	}
}

// accountingUsage GETs a usage report with the given key and decodes it,
// once every call so far is settled.
func accountingUsage(t *testing.T, e *env, path, key string) ledger.UsageReport {
	t.Helper()
	accountingSettled(t, e)
	req, err := http.NewRequest(http.MethodGet, e.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d: %s", path, resp.StatusCode, body)
	}
	var rep ledger.UsageReport
	if err := json.Unmarshal(body, &rep); err != nil {
		t.Fatalf("GET %s: %v: %s", path, err, body)
	}
	return rep
}

// accountingEntries returns every ledger entry, oldest first, once every
// call so far is settled.
func accountingEntries(t *testing.T, e *env) []store.LedgerEntry {
	t.Helper()
	es := accountingSettled(t, e)
	for i, j := 0, len(es)-1; i < j; i, j = i+1, j-1 {
		es[i], es[j] = es[j], es[i]
	}
	return es
}

// accountingMetrics returns the proxy's /metrics text.
func accountingMetrics(t *testing.T, e *env) string {
	t.Helper()
	resp, err := http.Get(e.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// accountingMetric sums the samples of series (see sumSamples) on /metrics;
// an absent sample reads as 0.
func accountingMetric(t *testing.T, e *env, series string) float64 {
	t.Helper()
	return sumSamples(t, accountingMetrics(t, e), series)
}

// accountingTokens is the sum of a report line's token counts.
func accountingTokens(a ledger.Amounts) int64 {
	return a.InputTokens + a.OutputTokens + a.CacheReadTokens + a.CacheWriteTokens
}

// accountingAliceSession is alice's session: a plan, a decision, a
// compaction (whose barrier joins the extraction, so it has been accounted
// when this returns) and one more turn.
func accountingAliceSession(t *testing.T, e *env) {
	t.Helper()
	a := accountingAgent(e, "acct-alice", accountingAliceKey)
	say(t, a, "Please make a plan and track it with your todo list.",
		"Decision: use PostgreSQL, not MongoDB, because we need transactions.")
	compact(t, a)
	say(t, a, "Continue.")
	if n := len(e.extractorCalls()); n == 0 {
		t.Fatal("alice's session made no extractor call; the test proves nothing")
	}
}

// An extraction is billed to the principal and account whose session caused
// it, as continuity_extraction, with its tokens and cost; no other principal
// or account is charged for it.
func TestAC17_ExtractionBilledToOriginatingPrincipal(t *testing.T) {
	e := accountingStart(t, accountingYAML+accountingPrices, nil, nil)
	accountingAliceSession(t, e)
	bob := accountingAgent(e, "acct-bob", accountingBobKey)
	say(t, bob, "What does this repository do?")

	alice := accountingUsage(t, e, "/v1/usage", accountingAliceKey)
	ex := alice.ByKind[string(ledger.KindExtraction)]
	if ex.Calls < 1 || accountingTokens(ex) == 0 || ex.CostMicros == 0 {
		t.Errorf("alice's usage shows extraction %+v, want ≥1 call with tokens and cost", ex)
	}
	if alice.Principal != "alice" || alice.Account != "acme" {
		t.Errorf("alice's report is for %q/%q", alice.Principal, alice.Account)
	}

	bobRep := accountingUsage(t, e, "/v1/usage", accountingBobKey)
	if got := bobRep.ByKind[string(ledger.KindExtraction)]; got.Calls != 0 || got.CostMicros != 0 {
		t.Errorf("bob is charged for extraction he did not cause: %+v", got)
	}
	if got := bobRep.Totals.Calls; got != 1 {
		t.Errorf("bob's usage counts %d calls, want his 1 turn", got)
	}

	admin := accountingUsage(t, e, "/v1/admin/usage?principal=alice", accountingAdminKey)
	if admin.Totals != alice.Totals || admin.ByKind[string(ledger.KindExtraction)] != ex {
		t.Errorf("admin view of alice disagrees:\nadmin %+v %+v\nalice %+v %+v", admin.Totals, admin.ByKind, alice.Totals, alice.ByKind)
	}

	var extractions int
	for _, en := range accountingEntries(t, e) {
		switch en.Principal {
		case "alice":
			if en.Account != "acme" {
				t.Errorf("alice's %s entry charged to account %q", en.Kind, en.Account)
			}
		case "bob":
			if en.Account != "globex" || en.Kind != string(ledger.KindPrimary) {
				t.Errorf("bob has a %s entry on account %q", en.Kind, en.Account)
			}
		default:
			t.Errorf("ledger entry for unexpected principal %q/%q (%s)", en.Principal, en.Account, en.Kind)
		}
		if en.Kind == string(ledger.KindExtraction) {
			extractions++
			if en.Principal != "alice" || en.Model != demo.ExtractorModel || en.Session == "" || en.ALeg == "" {
				t.Errorf("extraction entry not attributed to alice's session: %+v", en)
			}
		}
	}
	if want := len(e.extractorCalls()); extractions != want {
		t.Errorf("%d extraction ledger entries for %d extractor calls", extractions, want)
	}
}

// A principal's totals are the sum of primary and extraction usage, and the
// extraction part is exactly what the extractor provider reported, priced
// at the extractor model's price.
func TestAC18_UsageTotalsIncludeExtraction(t *testing.T) {
	e := accountingStart(t, accountingYAML+accountingPrices, nil, nil)
	accountingAliceSession(t, e)

	rep := accountingUsage(t, e, "/v1/usage", accountingAliceKey)
	pr, ex := rep.ByKind[string(ledger.KindPrimary)], rep.ByKind[string(ledger.KindExtraction)]
	if ex.Calls == 0 || pr.Calls == 0 {
		t.Fatalf("want both kinds, got primary %+v extraction %+v", pr, ex)
	}
	if got, want := accountingTokens(rep.Totals), accountingTokens(pr)+accountingTokens(ex); got != want {
		t.Errorf("total tokens %d != primary + extraction %d", got, want)
	}
	if got, want := rep.Totals.CostMicros, pr.CostMicros+ex.CostMicros; got != want {
		t.Errorf("total cost %d µUSD != primary + extraction %d", got, want)
	}
	if got, want := rep.Totals.Calls, pr.Calls+ex.Calls; got != want {
		t.Errorf("total calls %d != primary + extraction %d", got, want)
	}

	// What the scripted extractor reported: input = len(body)/4, output 60.
	var in, out int64
	calls := e.extractorCalls()
	for _, r := range calls {
		in += int64(len(r.Body) / 4)
		out += 60
	}
	if ex.Calls != int64(len(calls)) || ex.InputTokens != in || ex.OutputTokens != out {
		t.Errorf("extraction usage %+v, want %d calls, %d input, %d output tokens as reported", ex, len(calls), in, out)
	}
	if want := in*1 + out*5; ex.CostMicros != want { // 1 and 5 USD/MTok = µUSD/token
		t.Errorf("extraction cost %d µUSD, want %d at the extractor model's price", ex.CostMicros, want)
	}
	// Primary turns are priced at the coding model's price, not the extractor's.
	if want := pr.InputTokens*3 + pr.OutputTokens*15; pr.CostMicros != want {
		t.Errorf("primary cost %d µUSD, want %d", pr.CostMicros, want)
	}
	// The per-day rows agree with the totals.
	var sum int64
	for _, r := range rep.Rows {
		sum += r.CostMicros
	}
	if sum != rep.Totals.CostMicros {
		t.Errorf("rows sum to %d µUSD, totals say %d", sum, rep.Totals.CostMicros)
	}
}

// An extraction the originating principal's budget cannot pay for is not
// made and is not charged to anyone else; compaction still carries the
// deterministic plan. A primary call over budget is refused with 429 in the
// caller's own dialect.
func TestAC19_ExtractionBudgetRejectionNotBypassed(t *testing.T) {
	// The extractor costs 1000 USD/MTok: one call reserves ~2 USD of
	// output alone; alice's 0.5 USD admits her cheap primary turns only.
	cfg := accountingYAML + `
prices:
  - {match: "claude-*", input_per_mtok: 0.01, output_per_mtok: 0.01}
  - {match: "` + demo.ExtractorModel + `", input_per_mtok: 1000, output_per_mtok: 1000}
budgets:
  - {principal: alice, period: day, max_usd: 0.5}
  - {principal: bob, period: day, max_tokens: 100}
`
	e := accountingStart(t, cfg, nil, nil)
	a := accountingAgent(e, "acct-budget", accountingAliceKey)
	say(t, a, "Please make a plan and track it with your todo list.",
		"Decision: use PostgreSQL, not MongoDB, because we need transactions.")
	compact(t, a)
	say(t, a, "Continue.")

	if n := len(e.extractorCalls()); n != 0 {
		t.Errorf("the extractor was called %d times although alice's budget refuses it", n)
	}
	if got := accountingMetric(t, e, `tether_admission_rejected_total{kind="continuity_extraction"}`); got < 1 {
		t.Errorf("tether_admission_rejected_total{kind=\"continuity_extraction\"} = %v, want ≥ 1", got)
	}
	for _, en := range accountingEntries(t, e) {
		if en.Principal != "alice" || en.Account != "acme" || en.Kind != string(ledger.KindPrimary) {
			t.Errorf("unexpected ledger entry %s for %q/%q", en.Kind, en.Principal, en.Account)
		}
	}
	// Compaction still worked, with the deterministic plan and without the
	// decision only the extractor could have found.
	if !strings.Contains(a.Shown, "<continuity-capsule") {
		t.Fatalf("the summary the agent kept has no continuity block:\n%s", a.Shown)
	}
	b := block(e.lastPrimary())
	for _, s := range demo.PlanSteps {
		if !strings.Contains(b, s) {
			t.Errorf("plan step %q missing after compaction:\n%s", s, b)
		}
	}
	if strings.Contains(b, "PostgreSQL, not MongoDB") {
		t.Errorf("a decision appeared although extraction was refused:\n%s", b)
	}

	// Bob's budget refuses even his first primary turn: 429, Anthropic error.
	before := len(e.primary())
	bob := accountingAgent(e, "acct-bob-budget", accountingBobKey)
	req, err := bob.CompactionRequest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("over-budget call: status %d, want 429: %s", resp.StatusCode, body)
	}
	if g := gjson.ParseBytes(body); g.Get("type").String() != "error" || g.Get("error.type").String() != "rate_limit_error" || g.Get("error.message").String() == "" {
		t.Errorf("429 body is not an Anthropic error: %s", body)
	}
	if len(e.primary()) != before {
		t.Errorf("the refused call reached the model")
	}
	if got := accountingMetric(t, e, `tether_admission_rejected_total{kind="primary"}`); got < 1 {
		t.Errorf("tether_admission_rejected_total{kind=\"primary\"} = %v, want ≥ 1", got)
	}
}
