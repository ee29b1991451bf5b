package dialect

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustParse(t testing.TB, name Name, body []byte) *View {
	t.Helper()
	v, err := Parse(name, "/v1/x", nil, body)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return v
}

func TestParseRejectsInvalid(t *testing.T) {
	for _, body := range []string{``, `{`, `[]`, `"x"`, `{"a":1}garbage`, `null`} {
		if _, err := Parse(OpenAIChat, "/", nil, []byte(body)); !errors.Is(err, ErrInvalidJSON) {
			t.Errorf("Parse(%q) err = %v, want ErrInvalidJSON", body, err)
		}
	}
	if _, err := Parse("cohere", "/", nil, []byte(`{}`)); !errors.Is(err, ErrUnknownDialect) {
		t.Errorf("unknown dialect err = %v", err)
	}
}

func TestViewCaptures(t *testing.T) {
	tests := []struct {
		file         string
		name         Name
		model        string
		stream       bool
		numMessages  int
		lastUserPfx  string
		lastItemType string
		systemPfx    string
		tools        int
	}{
		{"responses_codex_compaction.json", OpenAIResponses, "", true, 8, "You are performing a CONTEXT CHECKPOINT COMPACTION.", "message", "You are a coding agent running in the Codex CLI", 0},
		{"responses_codex_remote_compaction.json", OpenAIResponses, "", true, 8, "", "compaction_trigger", "You are a coding agent running in the Codex CLI", -1},
		{"anthropic_claude_compaction.json", AnthropicMessages, "", true, 3, "CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.", "", "x-anthropic-billing-header", 24},
		{"anthropic_pi_main.json", AnthropicMessages, "", true, -1, "", "", "You are an expert coding assistant operating inside pi", -1},
		{"chat_opencode_main.json", OpenAIChat, "", true, 4, "\"We are building an inventory service.", "", "You are opencode", -1},
		{"chat_pi_main.json", OpenAIChat, "", true, 5, "We are building an inventory service.", "", "You are an expert coding assistant operating inside pi", -1},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			v := mustParse(t, tt.name, readTestdata(t, tt.file))
			if v.Model() == "" {
				t.Error("Model() empty")
			}
			if got := v.Stream(); got != tt.stream {
				t.Errorf("Stream() = %v", got)
			}
			if tt.numMessages >= 0 {
				if got := v.NumMessages(); got != tt.numMessages {
					t.Errorf("NumMessages() = %d, want %d", got, tt.numMessages)
				}
			}
			if got := len(v.Messages()); got != v.NumMessages() {
				t.Errorf("len(Messages()) = %d, NumMessages() = %d", got, v.NumMessages())
			}
			if tt.lastUserPfx != "" && !strings.HasPrefix(v.LastUserText(), tt.lastUserPfx) {
				t.Errorf("LastUserText() = %.80q, want prefix %q", v.LastUserText(), tt.lastUserPfx)
			}
			if tt.lastItemType != "" || tt.name != OpenAIResponses {
				if got := v.LastItemType(); got != tt.lastItemType {
					t.Errorf("LastItemType() = %q, want %q", got, tt.lastItemType)
				}
			}
			if !strings.HasPrefix(v.System(), tt.systemPfx) {
				t.Errorf("System() = %.80q, want prefix %q", v.System(), tt.systemPfx)
			}
			if tt.tools >= 0 && len(v.ToolNames()) != tt.tools {
				t.Errorf("ToolNames() = %v, want %d names", v.ToolNames(), tt.tools)
			}
		})
	}
}

func TestLastUserTextSkipsToolResults(t *testing.T) {
	// Pi's Anthropic request: the last user message holds only tool results.
	v := mustParse(t, AnthropicMessages, readTestdata(t, "anthropic_pi_main.json"))
	want := "We are building an inventory service. Decision: Use PostgreSQL, not MongoDB. Make a short plan and record it with your todo tool."
	if got := v.LastUserText(); got != want {
		t.Errorf("LastUserText() = %q, want %q", got, want)
	}
	msgs := v.Messages()
	last := msgs[len(msgs)-1]
	if last.Role != "user" || last.Text != "" || len(last.ToolResults) == 0 {
		t.Errorf("last message = %+v, want a user message with only tool results", last)
	}
	if last.ToolResults[0].Text != "Added todo #1: Set up PostgreSQL schema (no MongoDB)" {
		t.Errorf("tool result text = %q", last.ToolResults[0].Text)
	}
}

func TestMessagesCodexPlanCall(t *testing.T) {
	v := mustParse(t, OpenAIResponses, readTestdata(t, "responses_codex_compaction.json"))
	msgs := v.Messages()
	call, out := msgs[4], msgs[5]
	if call.Role != "assistant" || call.Type != "function_call" || len(call.ToolCalls) != 1 || call.ToolCalls[0].Name != "update_plan" {
		t.Fatalf("item 4 = %+v", call)
	}
	if !bytes.Contains(call.ToolCalls[0].Arguments, []byte(`"plan": [`)) || call.ToolCalls[0].Arguments[0] != '{' {
		t.Errorf("arguments not decoded JSON: %s", call.ToolCalls[0].Arguments)
	}
	if out.Role != "tool" || len(out.ToolResults) != 1 || out.ToolResults[0].CallID != call.ToolCalls[0].ID || out.ToolResults[0].Text != "Plan updated" {
		t.Errorf("item 5 = %+v (call id %q)", out, call.ToolCalls[0].ID)
	}
	if msgs[0].Role != "developer" || msgs[0].Type != "message" {
		t.Errorf("item 0 = %+v", msgs[0])
	}
}

func TestMessagesSynthetic(t *testing.T) {
	tests := []struct {
		name Name
		body string
		want []Message
		sys  string
		last string
	}{
		{
			name: OpenAIChat,
			body: `{"messages":[{"role":"system","content":"S1"},{"role":"developer","content":[{"type":"text","text":"S2"}]},
				{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"data:x"}},{"type":"text","text":"b"}]},
				{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}}]},
				{"role":"tool","tool_call_id":"c1","content":"ok"}]}`,
			want: []Message{
				{Index: 0, Role: "system", Type: "message", Text: "S1"},
				{Index: 1, Role: "developer", Type: "message", Text: "S2"},
				{Index: 2, Role: "user", Type: "message", Text: "a\nb", HasImage: true},
				{Index: 3, Role: "assistant", Type: "message", ToolCalls: []ToolCall{{ID: "c1", Name: "f", Arguments: []byte(`{"x":1}`)}}},
				{Index: 4, Role: "tool", Type: "message", Text: "ok", ToolResults: []ToolResult{{CallID: "c1", Text: "ok"}}},
			},
			sys:  "S1\n\nS2",
			last: "a\nb",
		},
		{
			name: OpenAIResponses,
			body: `{"instructions":"I","input":"hello"}`,
			want: []Message{{Index: 0, Role: "user", Type: "message", Text: "hello"}},
			sys:  "I",
			last: "hello",
		},
		{
			name: OpenAIResponses,
			body: `{"input":[{"role":"developer","content":"D"},{"role":"user","content":[{"type":"input_text","text":"q"},{"type":"input_image","image_url":"x"}]},
				{"type":"reasoning","encrypted_content":"zzz","summary":[]},
				{"type":"custom_tool_call","call_id":"k","name":"apply_patch","input":"*** Begin"},
				{"type":"custom_tool_call_output","call_id":"k","output":[{"type":"input_text","text":"done"}]},
				{"type":"compaction","encrypted_content":"E"}]}`,
			want: []Message{
				{Index: 0, Role: "developer", Type: "message", Text: "D"},
				{Index: 1, Role: "user", Type: "message", Text: "q", HasImage: true},
				{Index: 2, Type: "reasoning"},
				{Index: 3, Role: "assistant", Type: "custom_tool_call", ToolCalls: []ToolCall{{ID: "k", Name: "apply_patch", Arguments: []byte(`"*** Begin"`)}}},
				{Index: 4, Role: "tool", Type: "custom_tool_call_output", ToolResults: []ToolResult{{CallID: "k", Text: "done"}}},
				{Index: 5, Type: "compaction"},
			},
			sys:  "D",
			last: "q",
		},
		{
			name: AnthropicMessages,
			body: `{"system":[{"type":"text","text":"A"},{"type":"text","text":"B"}],"messages":[
				{"role":"user","content":"hi"},
				{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"s"},{"type":"text","text":"t"},{"type":"tool_use","id":"u1","name":"Bash","input":{"cmd":"ls"}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"u1","is_error":true,"content":[{"type":"text","text":"boom"},{"type":"image","source":{}}]}]}]}`,
			want: []Message{
				{Index: 0, Role: "user", Type: "message", Text: "hi"},
				{Index: 1, Role: "assistant", Type: "message", Text: "t", ToolCalls: []ToolCall{{ID: "u1", Name: "Bash", Arguments: []byte(`{"cmd":"ls"}`)}}},
				{Index: 2, Role: "user", Type: "message", HasImage: true, ToolResults: []ToolResult{{CallID: "u1", Text: "boom", IsError: true}}},
			},
			sys:  "A\nB",
			last: "hi",
		},
	}
	for _, tt := range tests {
		t.Run(string(tt.name), func(t *testing.T) {
			v := mustParse(t, tt.name, []byte(tt.body))
			if diff := cmp.Diff(tt.want, v.Messages()); diff != "" {
				t.Errorf("Messages() (-want +got):\n%s", diff)
			}
			if got := v.System(); got != tt.sys {
				t.Errorf("System() = %q, want %q", got, tt.sys)
			}
			if got := v.LastUserText(); got != tt.last {
				t.Errorf("LastUserText() = %q, want %q", got, tt.last)
			}
		})
	}
}

func TestToolNames(t *testing.T) {
	v := mustParse(t, OpenAIChat, readTestdata(t, "chat_pi_main.json"))
	names := v.ToolNames()
	if len(names) == 0 || names[0] != "read" {
		t.Errorf("ToolNames() = %v", names)
	}
	v = mustParse(t, OpenAIResponses, []byte(`{"tools":[{"type":"function","name":"shell"},{"type":"web_search"}]}`))
	if diff := cmp.Diff([]string{"shell", "web_search"}, v.ToolNames()); diff != "" {
		t.Error(diff)
	}
}

// bigHistory builds a ~1 MiB Anthropic request whose last user message is
// short.
func bigHistory() []byte {
	var b bytes.Buffer
	b.WriteString(`{"model":"m","messages":[`)
	filler := strings.Repeat("lorem ipsum ", 80)
	for i := 0; b.Len() < 1<<20; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		b.WriteString(`{"role":"` + role + `","content":[{"type":"text","text":"` + filler + `"}]}`)
	}
	b.WriteString(`,{"role":"user","content":"the tail"}]}`)
	return b.Bytes()
}

func TestLastUserTextBig(t *testing.T) {
	v := mustParse(t, AnthropicMessages, bigHistory())
	if got := v.LastUserText(); got != "the tail" {
		t.Errorf("LastUserText() = %q", got)
	}
}

func BenchmarkLastUserText1MiB(b *testing.B) {
	body := bigHistory()
	v, err := Parse(AnthropicMessages, "/", nil, body)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if v.LastUserText() != "the tail" {
			b.Fatal("wrong tail")
		}
	}
}

func FuzzParseView(f *testing.F) {
	for _, n := range []string{"chat_pi_main.json", "anthropic_pi_main.json", "chat_opencode_compaction.json", "anthropic_pi_compaction.json"} {
		f.Add(readTestdata(f, n))
	}
	f.Add([]byte(`{"input":"x","instructions":"y"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, name := range []Name{OpenAIChat, OpenAIResponses, AnthropicMessages} {
			v, err := Parse(name, "/", nil, body)
			if err != nil {
				continue
			}
			_ = v.Model()
			_ = v.System()
			msgs := v.Messages()
			if len(msgs) != v.NumMessages() {
				t.Fatalf("%s: %d messages, NumMessages %d", name, len(msgs), v.NumMessages())
			}
			lu := v.LastUserText()
			if lu != "" {
				found := false
				for _, m := range msgs {
					if m.Role == "user" && m.Text == lu {
						found = true
					}
				}
				if !found {
					t.Fatalf("%s: LastUserText %q not among Messages", name, lu)
				}
			}
			_ = v.LastItemType()
			_ = v.ToolNames()
		}
	})
}
