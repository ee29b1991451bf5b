package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/tether-dev/tether/internal/fakemodel"
)

// unsupportedYAML routes claude-lite to an Anthropic-compatible provider
// configured without server-side context management, every other model to
// one that has it; chat models go to an OpenAI-compatible provider.
const unsupportedYAML = `
providers:
  - {name: lite, dialect: anthropic, base_url: "%[1]s", server_compaction: false}
  - {name: model, dialect: anthropic, base_url: "%[1]s"}
  - {name: compat, dialect: openai, base_url: "%[1]s/v1"}
routes:
  - {match: "claude-lite*", provider: lite}
  - {match: "*", provider: model}
  - {match: "*", provider: compat}
`

// TestServerCompactionUnsupportedIsAnError: a request asking for
// provider-side context management (Anthropic context_management or the
// on-demand compaction parameter, a Chat Completions context_management)
// routed to a provider that does not support it is answered 400
// invalid_request_error in the caller's dialect, naming the field and the
// setting, and never reaches the provider; the same request routed to a
// provider that has it is relayed.
func TestServerCompactionUnsupportedIsAnError(t *testing.T) {
	fake := fakemodel.Start(fakemodel.Static("ok"))
	t.Cleanup(fake.Close)
	e := accountingServe(t, fake, unsupportedYAML, nil)
	post := func(path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, e.url+path, strings.NewReader(body))
		req.Header.Set("x-api-key", "test-key-0123456789")
		req.Header.Set("anthropic-version", "2023-06-01")
		req.Header.Set("anthropic-beta", "compact-2026-01-12,compact-2026-09-04,context-management-2025-06-27")
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		return r.StatusCode, string(b)
	}
	cases := []struct {
		name, path, body, field, errType string
	}{
		{"anthropic compact edit", "/v1/messages", `{"model":"claude-lite-1","max_tokens":10,"context_management":{"edits":[{"type":"compact_20260112"}]},"messages":[{"role":"user","content":"hi"}]}`, "context_management", "error.type"},
		{"anthropic clear tool uses", "/v1/messages", `{"model":"claude-lite-1","max_tokens":10,"stream":true,"context_management":{"edits":[{"type":"clear_tool_uses_20250919"}]},"messages":[{"role":"user","content":"hi"}]}`, "context_management", "error.type"},
		{"anthropic on-demand", "/v1/messages", `{"model":"claude-lite-1","max_tokens":10,"compaction":{"type":"summarize"},"messages":[{"role":"user","content":"hi"}]}`, "compaction", "error.type"},
		{"chat completions", "/v1/chat/completions", `{"model":"gpt-x","context_management":[{"type":"compaction","compact_threshold":1000}],"messages":[{"role":"user","content":"hi"}]}`, "context_management", "error.type"},
	}
	for _, c := range cases {
		before := len(fake.Requests())
		status, body := post(c.path, c.body)
		if status != http.StatusBadRequest || gjson.Get(body, c.errType).String() != "invalid_request_error" {
			t.Errorf("%s: got %d %s, want 400 invalid_request_error", c.name, status, body)
		}
		msg := gjson.Get(body, "error.message").String()
		if !strings.Contains(msg, `"`+c.field+`"`) || !strings.Contains(msg, "server_compaction") {
			t.Errorf("%s: the error does not name the field and the setting: %q", c.name, msg)
		}
		if strings.HasPrefix(c.path, "/v1/messages") && gjson.Get(body, "type").String() != "error" {
			t.Errorf("%s: not an Anthropic error envelope: %s", c.name, body)
		}
		if n := len(fake.Requests()); n != before {
			t.Errorf("%s: the request reached the provider", c.name)
		}
	}
	// The same fields, to a provider that supports them: relayed as sent.
	body := `{"model":"claude-sonnet-4-5","max_tokens":10,"context_management":{"edits":[{"type":"compact_20260112"}]},"messages":[{"role":"user","content":"hi"}]}`
	if status, b := post("/v1/messages", body); status != http.StatusOK {
		t.Fatalf("supported provider: %d %s", status, b)
	}
	reqs := fake.Requests()
	if got := string(reqs[len(reqs)-1].Body); got != body {
		t.Errorf("the supported provider received %s", got)
	}
	// Without the fields, the unsupported provider serves as usual.
	if status, b := post("/v1/messages", `{"model":"claude-lite-1","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`); status != http.StatusOK {
		t.Errorf("plain request to the provider without server compaction: %d %s", status, b)
	}
}
