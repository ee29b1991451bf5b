package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/tether-dev/tether/internal/demo"
	"github.com/tether-dev/tether/internal/fakemodel"
	"github.com/tether-dev/tether/prompts"
)

// faultsProxy starts the assembled proxy from a complete configuration in
// front of fake (the env's coding model), over real HTTP.
func faultsProxy(t *testing.T, fake *fakemodel.Server, yaml string) *env {
	t.Helper()
	// A trailing comment names both addresses so the format has no unused
	// arguments; the configuration itself is complete.
	return accountingServe(t, fake, strings.ReplaceAll(yaml, "%", "%%")+"\n# model %[1]s, proxy %[2]s\n", nil)
}

// faultsExchange is one HTTP exchange the agent made, as it saw it.
type faultsExchange struct {
	path     string
	header   http.Header
	body     []byte
	status   int
	response []byte
}

// faultsRecorder is the agent's transport: it records every request the
// agent sent and every response it got back, unchanged.
type faultsRecorder struct {
	mu  sync.Mutex
	got []faultsExchange
}

func (r *faultsRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	out, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(out))
	r.mu.Lock()
	r.got = append(r.got, faultsExchange{path: req.URL.Path, header: req.Header.Clone(), body: body, status: resp.StatusCode, response: out})
	r.mu.Unlock()
	return resp, nil
}

func (r *faultsRecorder) exchanges() []faultsExchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]faultsExchange(nil), r.got...)
}

// faultsRecorded returns an agent for session on e whose traffic is recorded.
func faultsRecorded(e *env, session string) (*demo.Agent, *faultsRecorder) {
	a := e.agent(session)
	rec := &faultsRecorder{}
	a.HTTP.Transport = rec
	return a, rec
}

// faultsSSEText is the text a Messages SSE answer streamed.
func faultsSSEText(body []byte) string {
	var b strings.Builder
	for _, l := range strings.Split(string(body), "\n") {
		d, ok := strings.CutPrefix(l, "data: ")
		if !ok {
			continue
		}
		if gjson.Get(d, "type").String() == "content_block_delta" && gjson.Get(d, "delta.type").String() == "text_delta" {
			b.WriteString(gjson.Get(d, "delta.text").String())
		}
	}
	return b.String()
}

// The revision counts writes, which depend on how extraction jobs were
// coalesced; the digest says whether the content is the same.
var faultsRef = regexp.MustCompile(` (?:ref|revision)="[^"]*"`)

// faultsNoRef removes the per-A-leg ref and the revision attribute from
// capsule blocks.
func faultsNoRef(s string) string { return faultsRef.ReplaceAllString(s, "") }

// faultsMarker is planted in every faulty extractor answer; it must never
// surface.
const faultsMarker = "FAULTMARK7Q"

const faultsYAML = `
providers:
  - {name: model, dialect: anthropic, base_url: "%[1]s"}
  - {name: extractor, dialect: openai, base_url: "%[2]s/v1"}
routes:
  - {match: "*", provider: model}
compaction_continuity:
  enabled: true
  barrier_timeout: 1s
`

const faultsExtractorYAML = `  extractor:
    route: extractor/` + demo.ExtractorModel + `
    timeout: 300ms
    workers: 2
`

// faultsRun plays the AC12 session: a plan, decisions and a constraint, a
// completed step, a compaction and two more turns. It returns the summary
// the agent kept, the block of the first turn after compaction, and every
// text the client was given.
func faultsRun(t *testing.T, e *env) (shown, firstBlock string, texts []string) {
	t.Helper()
	a := e.agent("ac12-session")
	for _, s := range []string{
		"We're building an inventory service. Please make a plan and track it with your todo list.",
		"Yes, go ahead with that plan. Decision: use PostgreSQL, not MongoDB, because we need transactions.",
		"Constraint: never change the public REST API. Rejected: GORM — we write SQL by hand.",
		"Step 1 is done, continue.",
	} {
		out, err := a.Say(context.Background(), s)
		if err != nil {
			t.Fatalf("turn %q: %v", s, err)
		}
		texts = append(texts, out)
	}
	compact(t, a)
	texts = append(texts, a.Shown)
	for i, s := range []string{"Continue.", "What is next after that?"} {
		out, err := a.Say(context.Background(), s)
		if err != nil {
			t.Fatalf("turn %q after compaction: %v", s, err)
		}
		texts = append(texts, out)
		if i == 0 {
			firstBlock = block(e.lastPrimary())
		}
	}
	return a.Shown, firstBlock, texts
}

// Every kind of extractor failure leaves compaction exactly as it is without
// an extractor: the same summary, the same deterministic plan block, turns
// that succeed, and nothing of the extractor's output anywhere.
func TestAC12_ExtractorFaultsLeaveCompactionWorking(t *testing.T) {
	fake := fakemodel.Start(demo.Model())
	t.Cleanup(fake.Close)
	// The baseline: no model extractor, only the built-in one (the
	// default), which a failed model extraction falls back to.
	base := faultsProxy(t, fake, fmt.Sprintf(faultsYAML, fake.URL, fake.URL))
	wantShown, wantBlock, _ := faultsRun(t, base)
	if !strings.Contains(wantBlock, demo.PlanSteps[1]) || !strings.Contains(wantShown, "<continuity-capsule") {
		t.Fatalf("without a model extractor the plan is not preserved; nothing to compare with:\n%s", wantShown)
	}
	if !strings.Contains(wantBlock, "not MongoDB") {
		t.Fatalf("the built-in extractor did not keep the user's marked decision:\n%s", wantBlock)
	}

	// A valid answer with the marker, to cut or wrap.
	ops := `{"ops":[{"op":"add_decision","statement":"` + faultsMarker + ` use CouchDB","turn":1}]}`
	chat := func(content string) string {
		b, _ := sjson.Set(`{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"`+demo.ExtractorModel+
			`","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant"}}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`,
			"choices.0.message.content", content)
		return b
	}
	faults := []struct {
		name  string
		reply fakemodel.Reply
		reset bool // the extractor provider resets the connection mid-body
	}{
		{name: "http_500", reply: fakemodel.Reply{Status: 500, ErrorMessage: faultsMarker}},
		{name: "http_429", reply: fakemodel.Reply{Status: 429, ErrorMessage: faultsMarker}},
		{name: "malformed_body", reply: fakemodel.Reply{RawBody: chat(ops)[:90]}},
		{name: "malformed_ops_json", reply: fakemodel.Reply{Text: ops[:len(ops)-12]}},
		{name: "schema_invalid_unknown_op", reply: fakemodel.Reply{Text: `{"ops":[{"op":"drop_everything","statement":"` + faultsMarker + `","turn":1}]}`}},
		{name: "schema_invalid_types", reply: fakemodel.Reply{Text: `{"ops":[{"op":"add_decision","statement":"` + faultsMarker + `","turn":"m1"}]}`}},
		{name: "schema_invalid_extra_field", reply: fakemodel.Reply{Text: `{"ops":[{"op":"add_decision","statement":"` + faultsMarker + `","turn":1,"capsule":"x"}],"note":"` + faultsMarker + `"}`}},
		{name: "hang_past_timeout", reply: fakemodel.Reply{Hang: true}},
		{name: "reset_mid_body", reset: true},
	}
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			var calls atomic.Int32
			fake := fakemodel.Start(func(r *fakemodel.Request) fakemodel.Reply {
				if r.Model() == demo.ExtractorModel {
					calls.Add(1)
					return f.reply
				}
				return demo.Model()(r)
			})
			t.Cleanup(fake.Close)
			exURL := fake.URL
			if f.reset {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					calls.Add(1)
					_, _ = io.Copy(io.Discard, r.Body)
					body := chat(ops)
					w.Header().Set("Content-Type", "application/json")
					w.Header().Set("Content-Length", fmt.Sprint(len(body)))
					w.WriteHeader(http.StatusOK)
					_, _ = io.WriteString(w, body[:len(body)/2])
					_ = http.NewResponseController(w).Flush()
					panic(http.ErrAbortHandler)
				}))
				t.Cleanup(srv.Close)
				exURL = srv.URL
			}
			e := faultsProxy(t, fake, fmt.Sprintf(faultsYAML+faultsExtractorYAML, fake.URL, exURL))
			shown, first, texts := faultsRun(t, e)
			if calls.Load() == 0 {
				t.Fatalf("the extractor was never called; the fault was not exercised")
			}
			if got, want := faultsNoRef(shown), faultsNoRef(wantShown); got != want {
				t.Errorf("the summary the agent kept differs from the run without an extractor:\ngot:\n%s\nwant:\n%s", got, want)
			}
			if got, want := faultsNoRef(first), faultsNoRef(wantBlock); got != want {
				t.Errorf("the block of the first turn after compaction differs from the run without an extractor:\ngot:\n%s\nwant:\n%s", got, want)
			}
			for _, r := range e.primary() {
				if bytes.Contains(r.Body, []byte(faultsMarker)) {
					t.Errorf("the extractor's output reached the coding model (request %d)", r.Seq)
				}
			}
			for _, s := range texts {
				if strings.Contains(s, faultsMarker) {
					t.Errorf("the extractor's output reached the client: %q", s)
				}
			}
			dump, err := e.store.Dump(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(fmt.Sprint(dump), faultsMarker) {
				t.Errorf("the extractor's output was stored")
			}
			if strings.Contains(e.logs.String(), faultsMarker) {
				t.Errorf("the extractor's output was logged")
			}
		})
	}
}

// Extraction is off-session: the coding model never sees the extractor's
// prompt or output, the client never gets them, every agent call is exactly
// one coding-model request, and extractor requests go to the extractor
// model with no tools and none of the agent's system prompt.
func TestAC13_ExtractionIsNeverAVisibleTurn(t *testing.T) {
	e := newEnv(t, envOptions{yaml: continuityYAML})
	a, rec := faultsRecorded(e, "ac13-session")
	say(t, a,
		"We're building an inventory service. Please make a plan and track it with your todo list.",
		"Yes, go ahead with that plan. Decision: use PostgreSQL, not MongoDB, because we need transactions.",
		"Constraint: never change the public REST API.")
	compact(t, a)
	say(t, a, "Continue.", "Decision: expose metrics in Prometheus format.")
	compact(t, a)
	say(t, a, "What is next after that?")

	ex := e.extractorCalls()
	if len(ex) == 0 {
		t.Fatalf("no extraction happened; the test proves nothing")
	}
	if b := block(e.lastPrimary()); !strings.Contains(b, "Prometheus") || !strings.Contains(b, "PostgreSQL") {
		t.Fatalf("the extractor's decisions are not in the capsule; extraction was not active:\n%s", b)
	}

	prompt := prompts.Extract()
	promptHead := prompt[:80]
	visible := []string{promptHead, "<transcript>", "Return {\"ops\"", `"ops"`, `\"ops\"`, "record_ops"}
	for _, r := range e.primary() {
		for _, s := range visible {
			if strings.Contains(string(r.Body), s) {
				t.Errorf("coding-model request %d contains extractor material %q", r.Seq, s)
			}
		}
	}
	calls := rec.exchanges()
	for i, x := range calls {
		text := faultsSSEText(x.response)
		for _, s := range visible {
			if strings.Contains(string(x.response), s) || strings.Contains(text, s) {
				t.Errorf("response %d to the client contains extractor material %q", i, s)
			}
		}
	}
	if got, want := len(e.primary()), len(calls); got != want {
		t.Errorf("the coding model received %d requests for %d agent calls", got, want)
	}

	system := []string{"You are Claude Code", "interactive CLI tool"}
	for _, r := range e.fake.Requests() {
		if r.Path != "/v1/chat/completions" {
			continue
		}
		if r.Model() != demo.ExtractorModel {
			t.Errorf("extractor request %d asked model %q, want %q", r.Seq, r.Model(), demo.ExtractorModel)
		}
		if gjson.GetBytes(r.Body, "tools").Exists() || gjson.GetBytes(r.Body, "tool_choice").Exists() {
			t.Errorf("extractor request %d offers tools: %s", r.Seq, r.Body)
		}
		for _, s := range system {
			if strings.Contains(string(r.Body), s) {
				t.Errorf("extractor request %d carries the agent's system prompt (%q)", r.Seq, s)
			}
		}
		if got := gjson.GetBytes(r.Body, "messages.0.content").String(); got != prompt {
			t.Errorf("extractor request %d does not start with the extractor's own prompt", r.Seq)
		}
	}
	for _, r := range e.primary() {
		if r.Path == "/v1/chat/completions" || r.Model() == demo.ExtractorModel {
			t.Errorf("an extractor request reached the coding model's endpoint: %d", r.Seq)
		}
	}
}

// faultsAsExtractor makes the scripted model answer every request as the
// extractor, whatever model the proxy asked for.
func faultsAsExtractor() fakemodel.Responder {
	m := demo.Model()
	return func(r *fakemodel.Request) fakemodel.Reply {
		own := *r
		own.Body, _ = sjson.SetBytes(r.Body, "model", demo.ExtractorModel)
		return m(&own)
	}
}

// The extractor's route is its own: whatever model the session uses, and
// after the session switches models, extraction goes to the configured
// provider and model; a principal's override routes that principal's
// extraction elsewhere.
func TestAC14_ExtractorRouteIndependentOfSession(t *testing.T) {
	provA := fakemodel.Start(demo.Model())
	t.Cleanup(provA.Close)
	provB := fakemodel.Start(faultsAsExtractor())
	t.Cleanup(provB.Close)
	provC := fakemodel.Start(faultsAsExtractor())
	t.Cleanup(provC.Close)
	yaml := fmt.Sprintf(`
providers:
  - {name: prov-a, dialect: anthropic, base_url: "%s", api_key: "sk-ant-provider-a-0001"}
  - {name: prov-b, dialect: openai, base_url: "%s/v1", api_key: "sk-provider-b-0002"}
  - {name: prov-c, dialect: openai, base_url: "%s/v1", api_key: "sk-provider-c-0003"}
routes:
  - {match: "*", provider: prov-a}
principals:
  - {id: alice, keys: ["alice-proxy-key-0123456789"]}
  - id: bob
    keys: ["bob-proxy-key-0123456789"]
    compaction_continuity: {extractor_route: prov-c/model-z}
compaction_continuity:
  enabled: true
  barrier_timeout: 5s
  extractor: {route: prov-b/model-y, workers: 2}
`, provA.URL, provB.URL, provC.URL)
	e := faultsProxy(t, provA, yaml)

	alice := e.agent("ac14-alice")
	alice.APIKey = "alice-proxy-key-0123456789"
	alice.Model = "claude-sonnet-4-5"
	say(t, alice, "Decision: use PostgreSQL for storage.", "What does main.go do?")
	alice.Model = "claude-opus-4-1" // the session switches models mid-way
	say(t, alice, "Decision: expose metrics in Prometheus format.", "Show me the README.")
	compact(t, alice)
	say(t, alice, "Continue.")
	if b := block(e.lastPrimary()); !strings.Contains(b, "PostgreSQL") || !strings.Contains(b, "Prometheus") {
		t.Errorf("decisions extracted on the independent route are missing:\n%s", b)
	}
	models := map[string]bool{}
	for _, r := range provA.Requests() {
		models[r.Model()] = true
		if r.Path != "/v1/messages" {
			t.Errorf("provider A got a %s request: extraction went to the session's provider", r.Path)
		}
		if r.Model() == "model-y" || r.Model() == "model-z" {
			t.Errorf("provider A was asked for the extractor model %q", r.Model())
		}
	}
	if !models["claude-sonnet-4-5"] || !models["claude-opus-4-1"] {
		t.Fatalf("the session did not use both models on provider A: %v", models)
	}
	bReqs := provB.Requests()
	if len(bReqs) < 2 {
		t.Fatalf("provider B got %d extractor requests, want one per decision at least", len(bReqs))
	}
	for _, r := range bReqs {
		if r.Model() != "model-y" || r.Path != "/v1/chat/completions" {
			t.Errorf("provider B got model %q on %s, want model-y on /v1/chat/completions", r.Model(), r.Path)
		}
		if got := r.Header.Get("Authorization"); got != "Bearer sk-provider-b-0002" {
			t.Errorf("extractor request to provider B authenticated with %q, want provider B's key", got)
		}
	}
	if n := len(provC.Requests()); n != 0 {
		t.Errorf("provider C got %d requests from alice's session, whose extraction is not overridden", n)
	}

	bob := e.agent("ac14-bob")
	bob.APIKey = "bob-proxy-key-0123456789"
	say(t, bob, "Decision: use Kafka for events.", "What does main.go do?")
	compact(t, bob)
	say(t, bob, "Continue.")
	if b := block(e.lastPrimary()); !strings.Contains(b, "Kafka") {
		t.Errorf("bob's decision extracted on his own route is missing:\n%s", b)
	}
	cReqs := provC.Requests()
	if len(cReqs) == 0 {
		t.Fatalf("bob's extraction did not go to his route (provider C)")
	}
	for _, r := range cReqs {
		if r.Model() != "model-z" {
			t.Errorf("provider C was asked for %q, want model-z", r.Model())
		}
	}
	if got := len(provB.Requests()); got != len(bReqs) {
		t.Errorf("bob's extraction also went to the global route (provider B: %d requests, was %d)", got, len(bReqs))
	}
}

// A replayed compaction (the client's retry, and the augmented body the
// model received sent again) and a retried turn never duplicate the block
// or move the capsule: each compaction answer carries exactly one block,
// the revision stays, and the next turn carries exactly one block.
func TestAC20_DuplicateCompactionIsIdempotent(t *testing.T) {
	e := newEnv(t, envOptions{yaml: continuityYAML})
	a, rec := faultsRecorded(e, "ac20-session")
	say(t, a,
		"We're building an inventory service. Please make a plan and track it with your todo list.",
		"Yes, go ahead with that plan. Decision: use PostgreSQL, not MongoDB.",
		"Constraint: never change the public REST API.")
	ctx := context.Background()
	orig, err := a.CompactionRequest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	origBody, err := io.ReadAll(orig.Body)
	if err != nil {
		t.Fatal(err)
	}
	compact(t, a)
	calls := rec.exchanges()
	first := faultsSSEText(calls[len(calls)-1].response)
	if n := strings.Count(first, "<continuity-capsule"); n != 1 {
		t.Fatalf("the compaction answer carries %d blocks, want 1:\n%s", n, first)
	}
	upstream := e.primary()
	augmented := upstream[len(upstream)-1].Body
	if !strings.Contains(string(augmented), "<continuity-capsule") {
		t.Fatalf("the compaction request the model received was not augmented")
	}
	revs := faultsRevisions(t, e)

	post := func(body []byte, hdr http.Header) string {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url+"/v1/messages?beta=true", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header = hdr.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("replay: status %d: %s", resp.StatusCode, out)
		}
		return faultsSSEText(out)
	}
	check := func(name string) {
		t.Helper()
		up := e.primary()
		if n := strings.Count(string(up[len(up)-1].Body), "<continuity-capsule"); n != 1 {
			t.Errorf("%s: the model was asked to summarise with %d blocks, want 1", name, n)
		}
		if got := faultsRevisions(t, e); !maps.Equal(got, revs) {
			t.Errorf("%s: capsule revisions moved: %v, were %v", name, got, revs)
		}
	}

	// The client retries the compaction with the very request it sent.
	got := post(origBody, orig.Header)
	if n := strings.Count(got, "<continuity-capsule"); n != 1 {
		t.Errorf("client retry: the compaction answer carries %d blocks, want 1:\n%s", n, got)
	}
	if faultsNoRef(block(got)) != faultsNoRef(block(first)) {
		t.Errorf("client retry: the replayed answer carries a different block:\n%s\nwant:\n%s", block(got), block(first))
	}
	check("client retry")

	// The augmented body the model received, sent again (it already holds
	// the block): it is never given a second block, in or out.
	got = post(augmented, orig.Header)
	if n := strings.Count(got, "<continuity-capsule"); n > 1 {
		t.Errorf("augmented replay: the answer carries %d blocks, want at most 1:\n%s", n, got)
	}
	check("augmented replay")

	say(t, a, "Continue.")
	if n := strings.Count(e.lastPrimary(), "<continuity-capsule"); n != 1 {
		t.Errorf("the first turn after compaction carries %d blocks, want 1", n)
	}
	calls = rec.exchanges()
	turn := calls[len(calls)-1]
	post(turn.body, turn.header) // the client retries the turn
	if n := strings.Count(e.lastPrimary(), "<continuity-capsule"); n != 1 {
		t.Errorf("the retried turn carries %d blocks, want 1", n)
	}
	if got := faultsRevisions(t, e); !maps.Equal(got, revs) {
		t.Errorf("the retried turn moved capsule revisions: %v, were %v", got, revs)
	}
	if b := block(e.lastPrimary()); !strings.Contains(b, "PostgreSQL") || !strings.Contains(b, demo.PlanSteps[0]) {
		t.Errorf("the retried turn's block lost state:\n%s", b)
	}
}

// faultsRevisions maps every stored capsule (by A-leg) to its revision.
func faultsRevisions(t *testing.T, e *env) map[string]int64 {
	t.Helper()
	caps, err := e.store.ListCapsules(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, c := range caps {
		out[c.ALeg] = c.Revision
	}
	return out
}
