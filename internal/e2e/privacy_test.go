package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/sjson"

	"github.com/tether-dev/tether/internal/demo"
	"github.com/tether-dev/tether/internal/flow"
	"github.com/tether-dev/tether/internal/ledger"
	"github.com/tether-dev/tether/internal/store"
	"github.com/tether-dev/tether/internal/store/pgstore"
	"github.com/tether-dev/tether/internal/store/sqlitestore"
	"github.com/tether-dev/tether/internal/store/storetest"
	"github.com/tether-dev/tether/internal/upstream"
)

// privacyTurns is a session's user turns: a plan, decisions, ordinary
// requests with recognisable text (file names, a secret-shaped string).
var privacyTurns = []string{
	"We're building an inventory service. Please make a plan and track it with your todo list.",
	"Yes, go ahead with that plan.",
	"please refactor the quux-handler module so it streams pages of 500 rows",
	"Decision: use PostgreSQL, not MongoDB, because we need transactions.",
	"Constraint: never change the public REST API.",
	"what does zorblat_config.yaml contain? the token there is sk-live-9f8e7d6c5b4a39281706",
}

// privacyToolOutput is a tool result no store, log or metric may hold.
const privacyToolOutput = "PANIC: widget-frobnicator exploded at frobnicate.go:4242 (AWS_SECRET=AKIAQUUXQUUXQUUX1234)"

// privacyForbidden is every piece of transcript that must not be kept: all
// user turns verbatim, the tool outputs, assistant text, the summary, and
// the caller's key.
func privacyForbidden() []string {
	out := append([]string{}, privacyTurns...)
	return append(out,
		"quux-handler", "zorblat_config", "sk-live-9f8e7d6c5b4a39281706", "widget-frobnicator", "AKIAQUUXQUUXQUUX1234",
		"Todos have been modified successfully",                        // TodoWrite tool result
		"Plan recorded. Starting on it.",                               // assistant text
		demo.LossySummary, "The user is building an inventory service", // the summary
		"Continue with the quux refactor", "You are Claude Code",
		"test-key-0123456789",
	)
}

// privacySession drives a full session: plan, decisions, ordinary turns, a
// tool result, a compaction and a post-compaction turn; then a separate
// request whose history carries a large tool output next to a decision.
func privacySession(t *testing.T, e *env, session string) {
	t.Helper()
	a := e.agent(session)
	say(t, a, privacyTurns...)
	compact(t, a)
	say(t, a, "Continue with the quux refactor please.")
	if !strings.Contains(block(e.lastPrimary()), "use PostgreSQL, not MongoDB") {
		t.Fatalf("the session did not preserve the decision; the test proves nothing:\n%s", block(e.lastPrimary()))
	}
	privacyToolTurn(t, e, a.APIKey, session+"-tools")
}

// privacyToolTurn sends one non-streamed Messages request whose history has
// a Bash call and its output, followed by a decision.
func privacyToolTurn(t *testing.T, e *env, key, session string) {
	t.Helper()
	text := func(s string) []map[string]any { return []map[string]any{{"type": "text", "text": s}} }
	body, err := json.Marshal(map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": []map[string]any{
		{"role": "user", "content": text("run the frobnicator tests")},
		{"role": "assistant", "content": []map[string]any{{"type": "tool_use", "id": "toolu_01", "name": "Bash", "input": map[string]string{"command": "go test ./frob/..."}}}},
		{"role": "user", "content": []map[string]any{{"type": "tool_result", "tool_use_id": "toolu_01", "content": strings.Repeat(privacyToolOutput+"\n", 40)}}},
		{"role": "assistant", "content": text("The tests panicked.")},
		{"role": "user", "content": text("Decision: use Redis for the cache.")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	resp := privacyPost(t, e, "/v1/messages", string(body), map[string]string{"x-api-key": key, "X-Claude-Code-Session-Id": session})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("tool turn: status %d", resp.StatusCode)
	}
}

// privacyPost posts body to the proxy with headers and returns the response
// with its body read into memory.
func privacyPost(t *testing.T, e *env, path, body string, headers map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("anthropic-version", "2023-06-01")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(data))
	return resp
}

// privacyPGStore opens PostgreSQL in a fresh schema, dropped afterwards.
func privacyPGStore(t *testing.T, url string) store.Store {
	t.Helper()
	schema := storetest.FreshSchema(t, url, "tether_e2e")
	s, err := pgstore.Open(context.Background(), url, pgstore.Options{Schema: schema})
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// With transcript capture off (the default), a whole session leaves no
// transcript in the durable store: no user turn verbatim, no tool output,
// no assistant text or summary, in any row of any table. The capsule holds
// only what it exists for (plan steps, decision statements).
func TestAC10_NoDurableTranscriptWhenCaptureDisabled(t *testing.T) {
	run := func(t *testing.T, st store.Store) {
		e := newEnv(t, envOptions{yaml: continuityYAML, store: st})
		privacySession(t, e, "ac10-session")
		if err := e.app.Ledger.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		// Drain extraction so every write it would make has been made.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := e.app.Close(ctx); err != nil {
			t.Fatal(err)
		}
		dump, err := st.Dump(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var capsules int
		for table, rows := range dump {
			for _, row := range rows {
				for _, s := range privacyForbidden() {
					if strings.Contains(row, s) {
						t.Errorf("table %s holds transcript text %q:\n%.300s", table, s, row)
					}
				}
				if table == "capsules" && strings.Contains(row, "PostgreSQL, not MongoDB") {
					capsules++
				}
			}
		}
		if capsules == 0 || len(dump["lineage"]) == 0 || len(dump["ledger"]) == 0 {
			t.Fatalf("the store was not used (capsules with the decision %d, lineage %d, ledger %d rows); the test proves nothing",
				capsules, len(dump["lineage"]), len(dump["ledger"]))
		}
	}
	t.Run("sqlite", func(t *testing.T) {
		st, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "tether.db"), sqlitestore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		run(t, st)
	})
	t.Run("postgres", func(t *testing.T) {
		run(t, privacyPGStore(t, storetest.PostgresURL(t)))
	})
}

const privacySecret = "e2e-privacy-secret-0123456789abcdef"

// privacySelfYAML points the extractor at the proxy itself: its calls come
// back through Tether before reaching the model.
const privacySelfYAML = `
secret: ` + privacySecret + `
providers:
  - {name: model, dialect: anthropic, base_url: "%[1]s"}
  - {name: openai, dialect: openai, base_url: "%[1]s/v1"}
  - {name: self, dialect: openai, base_url: "%[2]s/v1"}
routes:
  - {match: "*", provider: model}
  - {match: "*", provider: openai}
compaction_continuity:
  enabled: true
  barrier_timeout: 5s
  extractor:
    route: self/` + demo.ExtractorModel + `
    workers: 2
`

// An extractor call that comes back through Tether is recognised as
// internal: it is forwarded unchanged (no block, no marker upstream) and
// starts no extraction of its own; a deeper marker is refused with 508 and
// a forged one with 403.
func TestAC11_ExtractorCannotRecurse(t *testing.T) {
	e := accountingStart(t, privacySelfYAML, nil, nil)
	a := e.agent("ac11-session")
	say(t, a, "Decision: use PostgreSQL, not MongoDB, because we need transactions.")
	compact(t, a)
	say(t, a, "Continue.")
	if b := block(e.lastPrimary()); !strings.Contains(b, "use PostgreSQL, not MongoDB") {
		t.Fatalf("extraction through the proxy did not work:\n%s", b)
	}
	started := accountingMetric(t, e, `tether_extract_jobs_total{outcome="started"}`)

	// Drain the extraction pool: any job the internal call had started
	// would run (and call the model) before this returns.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.app.Close(ctx); err != nil {
		t.Fatal(err)
	}
	calls := e.extractorCalls()
	if len(calls) != 1 || started != 1 {
		t.Fatalf("%d extractor calls reached the model for %v started jobs, want exactly 1 of each", len(calls), started)
	}
	c := calls[0]
	if c.Path != "/v1/chat/completions" {
		t.Errorf("extractor call reached the model at %s", c.Path)
	}
	if strings.Contains(string(c.Body), "<continuity-capsule") || strings.Contains(string(c.Body), "context kept by the proxy") {
		t.Errorf("the internal call was given a continuity block:\n%s", c.Body)
	}
	for _, h := range []string{upstream.HeaderAux, upstream.HeaderAuxDepth} {
		if v := c.Header.Get(h); v != "" {
			t.Errorf("internal header %s forwarded upstream: %q", h, v)
		}
	}
	// Billed once, as extraction, to the session's principal.
	var extraction, other int
	for _, en := range accountingEntries(t, e) {
		switch {
		case en.Kind == string(ledger.KindExtraction):
			extraction++
		case en.Model == demo.ExtractorModel:
			other++
			t.Logf("extractor call also billed as %s to %q/%q", en.Kind, en.Principal, en.Account)
		}
	}
	if extraction != 1 || other != 0 {
		t.Errorf("the extractor call is in the ledger %d times as extraction and %d times otherwise, want 1 and 0", extraction, other)
	}

	before := len(e.fake.Requests())
	chat := `{"model":"` + demo.ExtractorModel + `","messages":[{"role":"user","content":"[m0 user] Decision: use Kafka."}]}`
	for _, tc := range []struct {
		name   string
		marker string
		depth  string
		want   int
	}{
		{"depth 2", flow.SignAux([]byte(privacySecret), 2, []byte(chat), time.Now()), "2", http.StatusLoopDetected},
		{"forged", "00112233445566778899aabbccddeeff", "1", http.StatusForbidden},
		{"forged in the current shape", "v1.00112233445566778899aabbccddeeff." + strconv.FormatInt(time.Now().Add(10*time.Second).Unix(), 10) + "." + strings.Repeat("ab", 32), "1", http.StatusForbidden},
		{"marker of another secret", flow.SignAux([]byte("some-other-secret-0123456789"), 1, []byte(chat), time.Now()), "1", http.StatusForbidden},
		{"depth 1 marker claiming depth 2", flow.SignAux([]byte(privacySecret), 1, []byte(chat), time.Now()), "2", http.StatusForbidden},
		{"no depth", flow.SignAux([]byte(privacySecret), 1, []byte(chat), time.Now()), "", http.StatusForbidden},
		{"signed for another body", flow.SignAux([]byte(privacySecret), 1, []byte(strings.Replace(chat, "Kafka", "Redis", 1)), time.Now()), "1", http.StatusForbidden},
		{"expired", flow.SignAux([]byte(privacySecret), 1, []byte(chat), time.Now().Add(-time.Minute)), "1", http.StatusForbidden},
	} {
		resp := privacyPost(t, e, "/v1/chat/completions", chat, map[string]string{upstream.HeaderAux: tc.marker, upstream.HeaderAuxDepth: tc.depth})
		if resp.StatusCode != tc.want {
			body, _ := io.ReadAll(resp.Body)
			t.Errorf("%s: status %d, want %d: %s", tc.name, resp.StatusCode, tc.want, body)
		}
	}
	if n := len(e.fake.Requests()) - before; n != 0 {
		t.Errorf("%d refused internal requests reached the model", n)
	}

	// A marker seen once (by the extractor's provider, or in a log) cannot
	// be replayed: it is accepted for its own call only.
	mk := flow.SignAux([]byte(privacySecret), 1, []byte(chat), time.Now())
	hdr := map[string]string{upstream.HeaderAux: mk, upstream.HeaderAuxDepth: "1"}
	if resp := privacyPost(t, e, "/v1/chat/completions", chat, hdr); resp.StatusCode != http.StatusOK {
		t.Fatalf("a fresh marker for its own body: status %d, want 200", resp.StatusCode)
	}
	if resp := privacyPost(t, e, "/v1/chat/completions", chat, hdr); resp.StatusCode != http.StatusForbidden {
		t.Errorf("the same marker replayed: status %d, want 403", resp.StatusCode)
	}
	if n := len(e.fake.Requests()) - before; n != 1 {
		t.Errorf("%d internal requests reached the model, want only the fresh one", n)
	}
}

// Logs and metrics carry ids, counts and durations only: none of a
// session's content (decisions, file names, secret-shaped strings, tool
// output, summary) nor the caller's key.
func TestPrivacy_NoUserContentInLogsOrMetrics(t *testing.T) {
	e := newEnv(t, envOptions{yaml: "\nlog_level: debug\n" + continuityYAML})
	privacySession(t, e, "privacy-logs")
	// Samples only: the HELP texts are fixed strings.
	var samples []string
	for _, l := range strings.Split(accountingMetrics(t, e), "\n") {
		if !strings.HasPrefix(l, "#") {
			samples = append(samples, l)
		}
	}
	metrics := strings.Join(samples, "\n")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.app.Close(ctx); err != nil { // everything logged at shutdown too
		t.Fatal(err)
	}
	logs := e.logs.String()
	if !strings.Contains(logs, `"compaction augmented"`) || !strings.Contains(logs, `"extraction applied"`) {
		t.Fatalf("the logs do not cover compaction and extraction; the test proves nothing:\n%.2000s", logs)
	}
	forbidden := append(privacyForbidden(), "PostgreSQL", "MongoDB", "transactions", "Redis", "public REST API",
		demo.PlanSteps[0], demo.PlanSteps[1], demo.PlanSteps[2])
	for _, s := range forbidden {
		if strings.Contains(logs, s) {
			i := strings.Index(logs, s)
			t.Errorf("the logs contain %q: …%s…", s, logs[max(0, i-200):min(len(logs), i+len(s)+50)])
		}
		if strings.Contains(metrics, s) {
			t.Errorf("/metrics contains %q", s)
		}
	}
}

// privacyInjector adds client-controlled attempts to switch the feature on
// to every request: headers and a metadata.tether body field.
type privacyInjector struct{ next http.RoundTripper }

func (p privacyInjector) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Tether-Continuity", "on")
	r.Header.Set("X-Tether-Extractor-Route", "extractor/"+demo.ExtractorModel)
	r.Header.Set("X-Tether-Billing", "system")
	r.Header.Set("X-Tether-Principal", "operator")
	if r.Body != nil {
		data, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		data, err = sjson.SetRawBytes(data, "metadata.tether", []byte(`{"continuity":"on","enabled":true,"extractor_route":"extractor/`+demo.ExtractorModel+`","billing":{"attribution":"system"}}`))
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(data))
		r.ContentLength = int64(len(data))
	}
	return p.next.RoundTrip(r)
}

// With the feature off, nothing in a request turns it on: headers and body
// fields naming continuity, an extractor route or a billing attribution
// change nothing — no block, no extractor call, every ledger entry primary
// and the caller's own.
func TestPrivacy_RequestsCannotEnablePolicy(t *testing.T) {
	yaml := `
compaction_continuity:
  enabled: false
  extractor:
    route: extractor/` + demo.ExtractorModel + `
`
	e := newEnv(t, envOptions{yaml: yaml})
	a := e.agent("privacy-policy")
	a.HTTP = &http.Client{Timeout: 30 * time.Second, Transport: privacyInjector{next: http.DefaultTransport}}
	say(t, a, "Please make a plan and track it with your todo list.",
		"Decision: use PostgreSQL, not MongoDB, because we need transactions.")
	compact(t, a)
	say(t, a, "Continue.")

	prim := e.primary()
	if len(prim) == 0 || !strings.Contains(string(prim[0].Body), `"tether":{"continuity":"on"`) {
		t.Fatalf("the injected fields did not reach the proxy; the test proves nothing")
	}
	for i, r := range prim {
		if strings.Contains(string(r.Body), "<continuity-capsule") || strings.Contains(string(r.Body), "context kept by the proxy") {
			t.Errorf("request %d was given a continuity block although the feature is off", i)
		}
	}
	if strings.Contains(a.Shown, "<continuity-capsule") {
		t.Errorf("the summary the agent kept has a continuity block:\n%s", a.Shown)
	}
	if n := len(e.extractorCalls()); n != 0 {
		t.Errorf("%d extractor calls with the feature off", n)
	}
	entries := accountingEntries(t, e)
	if len(entries) != len(prim) {
		t.Errorf("%d ledger entries for %d model calls", len(entries), len(prim))
	}
	for _, en := range entries {
		if en.Kind != string(ledger.KindPrimary) || !strings.HasPrefix(en.Principal, "pt-") || en.Account != en.Principal {
			t.Errorf("ledger entry %s charged to %q/%q, want primary for the caller's own principal", en.Kind, en.Principal, en.Account)
		}
	}
	if caps, err := e.store.ListCapsules(context.Background(), ""); err != nil || len(caps) != 0 {
		t.Errorf("%d capsules stored with the feature off (%v)", len(caps), err)
	}
}

// Two principals using the same client session id and the same history
// stay apart: bob's compaction carries none of alice's decisions, and a
// history copied from alice's compacted conversation does not link bob to
// her branch (no reinjection of her later decisions, no extraction billed
// to or from her).
func TestPrivacy_PrincipalsIsolated(t *testing.T) {
	e := accountingStart(t, accountingYAML+accountingPrices, nil, nil)
	const session = "shared-session-id"
	alice := accountingAgent(e, session, accountingAliceKey)
	bob := accountingAgent(e, session, accountingBobKey)

	say(t, alice, "Please make a plan and track it with your todo list.",
		"Decision: use PostgreSQL, not MongoDB, because alice needs transactions.")
	// Bob: the same session id and the same first turn, then a compaction.
	say(t, bob, "Please make a plan and track it with your todo list.")
	compact(t, bob)
	if b := block(e.lastPrimary()); strings.Contains(b, "PostgreSQL, not MongoDB") {
		t.Errorf("bob's compaction carries alice's decision:\n%s", b)
	}
	if strings.Contains(bob.Shown, "PostgreSQL, not MongoDB") {
		t.Errorf("bob's summary carries alice's decision:\n%s", bob.Shown)
	}

	compact(t, alice)
	if !strings.Contains(alice.Shown, "PostgreSQL, not MongoDB") {
		t.Fatalf("alice's own decision did not survive; the test proves nothing:\n%s", alice.Shown)
	}
	// Bob obtains alice's compacted history verbatim (block and ref token
	// included) and continues from it, while alice decides more.
	mallory := alice.Fork()
	mallory.APIKey = accountingBobKey
	say(t, alice, "Decision: use Redis for the cache, because alice measured it.")
	compact(t, alice) // joins alice's extraction of the Redis decision
	if !strings.Contains(alice.Shown, "Redis") {
		t.Fatalf("alice's later decision was not extracted; the test proves nothing:\n%s", alice.Shown)
	}
	say(t, mallory, "Continue.")
	last := e.lastPrimary()
	if strings.Contains(last, "Redis") || strings.Contains(last, "context kept by the proxy") {
		t.Errorf("bob, replaying alice's history, was given alice's later state:\n%s", block(last))
	}

	// Nothing of alice's in bob's state, ledger or usage.
	caps, err := e.store.ListCapsules(context.Background(), "bob")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range caps {
		if bytes.Contains(c.Data, []byte("Redis")) || bytes.Contains(c.Data, []byte("alice")) {
			t.Errorf("bob's capsule %s holds alice's state: %s", c.ALeg, c.Data)
		}
	}
	aliceLegs := map[string]bool{}
	entries := accountingEntries(t, e)
	for _, en := range entries {
		if en.Principal == "alice" {
			aliceLegs[en.ALeg] = true
		}
	}
	for _, en := range entries {
		if en.Principal == "bob" && (aliceLegs[en.ALeg] && en.ALeg != "" || en.Kind != string(ledger.KindPrimary)) {
			t.Errorf("bob's %s entry is on alice's A-leg %q or not primary", en.Kind, en.ALeg)
		}
	}
	if rep := accountingUsage(t, e, "/v1/usage", accountingBobKey); rep.ByKind[string(ledger.KindExtraction)].Calls != 0 {
		t.Errorf("bob is billed for extraction: %+v", rep.ByKind)
	}
}
