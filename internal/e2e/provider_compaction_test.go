package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// anthropicPost sends one Messages call with the server-side compaction
// beta and returns the body the model received last.
func anthropicPost(t *testing.T, e *env, body map[string]any) {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, e.url+"/v1/messages", bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", "test-key-0123456789")
	req.Header.Set("anthropic-version", "2023-06-01")
	req.Header.Set("anthropic-beta", "compact-2026-01-12")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
}

func userMsg(text string) map[string]any { return map[string]any{"role": "user", "content": text} }

// serverCompaction is Anthropic's compact_20260112 edit as a client sends
// it, with instructions of its own.
var serverCompaction = map[string]any{"edits": []any{map[string]any{
	"type": "compact_20260112", "trigger": map[string]any{"type": "input_tokens", "value": 50000},
	"pause_after_compaction": false,
}}}

// TestAnthropicServerCompactionReinjects: after the provider compacted (the
// answer's compaction block, sent back by the client), the next turn shows
// the model exactly one continuity block with the user's decisions, and the
// compaction block, context_management and the beta header reach the model
// byte for byte.
func TestAnthropicServerCompactionReinjects(t *testing.T) {
	e := newEnv(t, envOptions{yaml: continuityYAML})
	hist := []any{userMsg("We are building an inventory service. Decision: use PostgreSQL, not MongoDB.")}
	anthropicPost(t, e, map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": hist, "context_management": serverCompaction})
	hist = append(hist, map[string]any{"role": "assistant", "content": "Understood."}, userMsg("Constraint: never change the public REST API."))
	anthropicPost(t, e, map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": hist, "context_management": serverCompaction})
	e.waitCapsule(t, "never change the public REST API")

	const summary = `{"type":"compaction","content":"The user is building an inventory service.","encrypted_content":"c2lnbmVk"}`
	var cb map[string]any
	_ = json.Unmarshal([]byte(summary), &cb)
	hist = append(hist, map[string]any{"role": "assistant", "content": []any{cb, map[string]any{"type": "text", "text": "Understood."}}}, userMsg("What is next?"))
	anthropicPost(t, e, map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": hist, "context_management": serverCompaction})

	got := e.lastPrimary()
	if n := strings.Count(got, "<continuity-capsule"); n != 1 {
		t.Fatalf("the turn after the provider's compaction shows %d blocks, want 1:\n%s", n, got)
	}
	for _, f := range []string{"use PostgreSQL, not MongoDB", "never change the public REST API"} {
		if !strings.Contains(block(got), f) {
			t.Errorf("the reinjected block lacks %q", f)
		}
	}
	sent, _ := json.Marshal(cb)
	if !strings.Contains(got, string(sent)) {
		t.Errorf("the compaction block was not relayed byte for byte")
	}
	reqs := e.primary()
	last := reqs[len(reqs)-1]
	if last.Header.Get("anthropic-beta") != "compact-2026-01-12" || !strings.Contains(string(last.Body), `"context_management":{"edits":[{"pause_after_compaction":false,"trigger":{"type":"input_tokens","value":50000},"type":"compact_20260112"}]}`) {
		t.Errorf("the compaction beta or context_management did not reach the model as sent: %s %s", last.Header.Get("anthropic-beta"), last.Body)
	}
}

// TestProviderCompactionRelayedWithContinuityOff: with continuity off, a
// Messages call with the compaction edit and a Responses call with
// context_management compaction reach the model byte for byte, beta header
// included.
func TestProviderCompactionRelayedWithContinuityOff(t *testing.T) {
	e := newEnv(t, envOptions{})
	msgs := `{"model":"claude-sonnet-4-5","max_tokens":100,"context_management":{"edits":[{"type":"compact_20260112","instructions":"Keep file paths.","pause_after_compaction":true}]},` +
		`"messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"compaction","content":"S","encrypted_content":"c2ln"}]},{"role":"user","content":"b"}]}`
	resp := `{"model":"gpt-5","context_management":[{"type":"compaction","compact_threshold":200000}],"input":[{"type":"compaction","encrypted_content":"gAAA"},{"role":"user","content":"next"}]}`
	for _, c := range []struct{ path, body string }{{"/v1/messages", msgs}, {"/v1/responses", resp}} {
		req, _ := http.NewRequest(http.MethodPost, e.url+c.path, strings.NewReader(c.body))
		req.Header.Set("x-api-key", "test-key-0123456789")
		req.Header.Set("anthropic-beta", "compact-2026-01-12,context-management-2025-06-27")
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
		reqs := e.fake.Requests()
		got := reqs[len(reqs)-1]
		if string(got.Body) != c.body || got.Header.Get("anthropic-beta") != "compact-2026-01-12,context-management-2025-06-27" {
			t.Errorf("%s: the model received\n%s\n%s", c.path, got.Header.Get("anthropic-beta"), got.Body)
		}
	}
}

// TestAnthropicCompactionInstructionsKeepCapsule: a client that gives the
// provider's compaction instructions of its own has the block added after
// them (never in their place), so the provider's summary keeps the
// decisions; an edit without instructions keeps the provider's default.
func TestAnthropicCompactionInstructionsKeepCapsule(t *testing.T) {
	e := newEnv(t, envOptions{yaml: continuityYAML})
	hist := []any{userMsg("We are building an inventory service. Decision: use PostgreSQL, not MongoDB.")}
	anthropicPost(t, e, map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": hist})
	e.waitCapsule(t, "PostgreSQL")
	hist = append(hist, map[string]any{"role": "assistant", "content": "Understood."}, userMsg("Go on."))
	cm := map[string]any{"edits": []any{
		map[string]any{"type": "compact_20260112", "instructions": "Keep every file path."},
		map[string]any{"type": "compact_20260112"},
	}}
	anthropicPost(t, e, map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": hist, "context_management": cm})
	reqs := e.primary()
	body := reqs[len(reqs)-1].Body
	ins := gjson.GetBytes(body, "context_management.edits.0.instructions").String()
	if !strings.HasPrefix(ins, "Keep every file path.\n\n<continuity-capsule") || !strings.Contains(ins, "use PostgreSQL, not MongoDB") {
		t.Errorf("the client's compaction instructions became %q", ins)
	}
	if gjson.GetBytes(body, "context_management.edits.1.instructions").Exists() {
		t.Errorf("an edit without instructions got some, replacing the provider's default prompt")
	}
}

// TestResponsesServerCompactionReinjects: OpenAI Responses server-side
// compaction (context_management compaction with compact_threshold): once
// the client sends back the opaque compaction item the provider produced,
// the turns after it show the model exactly one block with the user's
// decisions, and the encrypted item is relayed untouched.
func TestResponsesServerCompactionReinjects(t *testing.T) {
	e := newEnv(t, envOptions{yaml: continuityYAML})
	post := func(body string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, e.url+"/v1/responses", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer test-key-0123456789")
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if r.StatusCode != http.StatusOK {
			t.Fatalf("%d %s", r.StatusCode, b)
		}
	}
	// The client names its conversation (prompt_cache_key, as the OpenAI
	// SDKs and Codex send it) and drops everything before the compaction
	// item, as the provider allows.
	const cm = `"prompt_cache_key":"conv-7","context_management":[{"type":"compaction","compact_threshold":200000}]`
	first := `{"role":"user","content":"We are building an inventory service. Decision: use PostgreSQL, not MongoDB."}`
	second := `{"role":"user","content":"Constraint: never change the public REST API."}`
	post(`{"model":"gpt-5",` + cm + `,"input":[` + first + `]}`)
	post(`{"model":"gpt-5",` + cm + `,"input":[` + first + `,{"role":"assistant","content":"ok"},` + second + `]}`)
	e.waitCapsule(t, "never change the public REST API")
	const item = `{"type":"compaction","id":"cmp_1","encrypted_content":"gAAAAABsigned"}`
	post(`{"model":"gpt-5",` + cm + `,"input":[` + item + `,{"role":"user","content":"What is next?"}]}`)
	var last string
	for _, r := range e.fake.Requests() {
		if r.Path == "/v1/responses" {
			last = string(r.Body)
		}
	}
	if n := strings.Count(last, "<continuity-capsule"); n != 1 {
		t.Fatalf("the turn after the provider's compaction shows %d blocks, want 1:\n%s", n, last)
	}
	for _, f := range []string{"use PostgreSQL, not MongoDB", "never change the public REST API"} {
		if !strings.Contains(block(last), f) {
			t.Errorf("the reinjected block lacks %q", f)
		}
	}
	if !strings.Contains(last, item) || !strings.Contains(last, cm) {
		t.Errorf("the compaction item or context_management did not reach the model as sent:\n%s", last)
	}
}
