package extract

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tidwall/gjson"

	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/fakemodel"
	"github.com/tether-dev/tether/internal/flow"
	"github.com/tether-dev/tether/internal/upstream"
	"github.com/tether-dev/tether/prompts"
	"github.com/tether-dev/tether/schema"
)

var testSecret = []byte("test-aux-secret")

const opsJSON = `{"ops":[{"op":"add_decision","statement":"Use PostgreSQL, not MongoDB","turn":1}]}`

// bogusEnv points every SDK environment variable somewhere else; a caller
// that read any of them would miss the fake or send the wrong key.
func bogusEnv(t *testing.T) {
	for k, v := range map[string]string{
		"OPENAI_BASE_URL": "http://127.0.0.1:1/bogus", "OPENAI_API_KEY": "env-openai-key",
		"OPENAI_ORG_ID": "env-org", "OPENAI_PROJECT_ID": "env-project",
		"ANTHROPIC_BASE_URL": "http://127.0.0.1:1/bogus", "ANTHROPIC_API_KEY": "env-anthropic-key",
		"ANTHROPIC_AUTH_TOKEN": "env-token",
	} {
		t.Setenv(k, v)
	}
}

func testInput() Input {
	return Prepare(nil, []dialect.Message{user("Let's use PostgreSQL, not MongoDB.")}, 0, 0)
}

func TestOpenAICaller(t *testing.T) {
	bogusEnv(t)
	fake := fakemodel.Start(fakemodel.Script(fakemodel.Reply{Text: opsJSON, InputTokens: 321, OutputTokens: 45, CacheReadTokens: 7}))
	defer fake.Close()
	c := NewOpenAICaller(config.Provider{Name: "cheap", Dialect: config.FamilyOpenAI, BaseURL: fake.URL + "/v1", APIKey: "configured-key",
		Headers: map[string]string{"X-Team": "infra"}}, "small-model", 777, &http.Client{}, testSecret)
	in := testInput()
	raw, usage, err := c.Extract(context.Background(), in, prompts.Extract())
	if err != nil {
		t.Fatal(err)
	}
	if string(raw) != opsJSON {
		t.Errorf("raw = %s", raw)
	}
	if diff := cmp.Diff(dialect.Usage{InputTokens: 321, OutputTokens: 45, CacheReadTokens: 7}, usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
	reqs := fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("requests = %d, want 1 (no retries, configured base URL)", len(reqs))
	}
	r := reqs[0]
	checkHeaders(t, r, map[string]string{
		"Authorization": "Bearer configured-key", "X-Team": "infra",
		upstream.HeaderAuxDepth: "1",
		"OpenAI-Organization":   "", "OpenAI-Project": "",
	})
	checkMarker(t, r)
	body := gjson.ParseBytes(r.Body)
	if r.Path != "/v1/chat/completions" || body.Get("model").String() != "small-model" || body.Get("max_completion_tokens").Int() != 777 {
		t.Errorf("request %s model=%s max=%d", r.Path, body.Get("model"), body.Get("max_completion_tokens").Int())
	}
	if body.Get("tools").Exists() || body.Get("stream").Bool() {
		t.Errorf("tools or streaming requested: %s", r.Body)
	}
	rf := body.Get("response_format")
	if rf.Get("type").String() != "json_schema" || rf.Get("json_schema.strict").Bool() {
		t.Errorf("response_format = %s", rf.Raw)
	}
	if !jsonEqual(t, rf.Get("json_schema.schema").Raw, string(schema.Ops())) {
		t.Errorf("response schema is not schema/ops.v2.json")
	}
	if body.Get("messages.0.role").String() != "system" || body.Get("messages.0.content").String() != prompts.Extract() ||
		body.Get("messages.1.content").String() != in.Text {
		t.Errorf("messages = %s", body.Get("messages").Raw)
	}
}

func TestAnthropicCaller(t *testing.T) {
	bogusEnv(t)
	fake := fakemodel.Start(fakemodel.Script(fakemodel.Reply{
		ToolCalls:   []fakemodel.ToolCall{{Name: RecordOpsTool, Arguments: opsJSON}},
		InputTokens: 400, OutputTokens: 50, CacheReadTokens: 9,
	}))
	defer fake.Close()
	c := NewAnthropicCaller(config.Provider{Name: "claude", Dialect: config.FamilyAnthropic, BaseURL: fake.URL, APIKey: "configured-key"},
		"claude-small", 900, &http.Client{}, testSecret)
	raw, usage, err := c.Extract(context.Background(), testInput(), prompts.Extract())
	if err != nil {
		t.Fatal(err)
	}
	if !jsonEqual(t, string(raw), opsJSON) {
		t.Errorf("raw = %s", raw)
	}
	if diff := cmp.Diff(dialect.Usage{InputTokens: 400, OutputTokens: 50, CacheReadTokens: 9}, usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
	reqs := fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("requests = %d, want 1", len(reqs))
	}
	r := reqs[0]
	checkHeaders(t, r, map[string]string{
		"X-Api-Key": "configured-key", "Authorization": "",
		upstream.HeaderAuxDepth: "1",
	})
	checkMarker(t, r)
	body := gjson.ParseBytes(r.Body)
	if r.Path != "/v1/messages" || body.Get("model").String() != "claude-small" || body.Get("max_tokens").Int() != 900 {
		t.Errorf("request %s %s", r.Path, r.Body)
	}
	if n := len(body.Get("tools").Array()); n != 1 || body.Get("tools.0.name").String() != RecordOpsTool {
		t.Errorf("tools = %s", body.Get("tools").Raw)
	}
	if body.Get("tool_choice.type").String() != "tool" || body.Get("tool_choice.name").String() != RecordOpsTool {
		t.Errorf("tool_choice = %s", body.Get("tool_choice").Raw)
	}
	if !jsonEqual(t, body.Get("tools.0.input_schema").Raw, string(schema.Ops())) {
		t.Errorf("input_schema is not schema/ops.v2.json: %s", body.Get("tools.0.input_schema").Raw)
	}
}

func TestCallerWithoutKeySendsNoCredentials(t *testing.T) {
	bogusEnv(t)
	fake := fakemodel.Start(fakemodel.Script(fakemodel.Reply{Text: opsJSON, ToolCalls: []fakemodel.ToolCall{{Name: RecordOpsTool, Arguments: opsJSON}}}))
	defer fake.Close()
	for _, c := range []Caller{
		NewOpenAICaller(config.Provider{BaseURL: fake.URL + "/v1"}, "m", 100, nil, testSecret),
		NewAnthropicCaller(config.Provider{BaseURL: fake.URL}, "m", 100, nil, testSecret),
	} {
		if _, _, err := c.Extract(context.Background(), testInput(), "p"); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range fake.Requests() {
		checkHeaders(t, r, map[string]string{"Authorization": "", "X-Api-Key": ""})
	}
}

func TestCallerErrors(t *testing.T) {
	fake := fakemodel.Start(fakemodel.Script(
		fakemodel.Reply{Status: 429},
		fakemodel.Reply{Text: "   "},
		fakemodel.Reply{Text: "no tool call here"},
	))
	defer fake.Close()
	oc := NewOpenAICaller(config.Provider{BaseURL: fake.URL + "/v1"}, "m", 100, nil, testSecret)
	_, _, err := oc.Extract(context.Background(), testInput(), "p")
	if se := (*StatusError)(nil); !errorsAs(err, &se) || se.Status != 429 {
		t.Errorf("429: err = %v", err)
	}
	if len(fake.Requests()) != 1 {
		t.Errorf("a 429 was retried: %d requests", len(fake.Requests()))
	}
	ac := NewAnthropicCaller(config.Provider{BaseURL: fake.URL}, "m", 100, nil, testSecret)
	_, _, _ = oc.Extract(context.Background(), testInput(), "p")
	if _, _, err := ac.Extract(context.Background(), testInput(), "p"); !errorsIs(err, ErrNoOutput) {
		t.Errorf("anthropic without tool call: err = %v, want ErrNoOutput", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	fake.SetResponder(fakemodel.Static(""))
	fake.SetResponder(func(*fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Hang: true} })
	if _, _, err := oc.Extract(ctx, testInput(), "p"); err == nil {
		t.Errorf("hung call returned no error")
	}
}

// checkMarker checks that a call's internal-request marker is signed for
// exactly the body that was sent, at depth 1.
func checkMarker(t *testing.T, r fakemodel.Request) {
	t.Helper()
	mk := r.Header.Get(upstream.HeaderAux)
	if _, _, err := flow.VerifyAux(testSecret, mk, 1, r.Body, time.Now()); err != nil {
		t.Errorf("marker %q does not verify for the body sent: %v", mk, err)
	}
	if _, _, err := flow.VerifyAux(testSecret, mk, 1, append([]byte(" "), r.Body...), time.Now()); err == nil {
		t.Errorf("marker %q also verifies for another body", mk)
	}
}

func checkHeaders(t *testing.T, r fakemodel.Request, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got := r.Header.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
}

func jsonEqual(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		return false
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		return false
	}
	return cmp.Equal(x, y)
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }
func errorsIs(err, target error) bool     { return errors.Is(err, target) }
