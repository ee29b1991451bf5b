package dialect

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tidwall/gjson"
)

func TestAppendSystemText(t *testing.T) {
	tests := []struct {
		name Name
		in   string
		want string
	}{
		{AnthropicMessages, `{"system":"S","messages":[]}`, `{"system":"S\n\n<b>","messages":[]}`},
		{AnthropicMessages, `{"system":[{"type":"text","text":"S"}],"messages":[]}`, `{"system":[{"type":"text","text":"S"},{"type":"text","text":"<b>"}],"messages":[]}`},
		{AnthropicMessages, `{"messages":[]}`, `{"messages":[],"system":"<b>"}`},
		{OpenAIChat, `{"messages":[{"role":"system","content":"S"},{"role":"user","content":"u"}]}`, `{"messages":[{"role":"system","content":"S\n\n<b>"},{"role":"user","content":"u"}]}`},
		{OpenAIChat, `{"messages":[{"role":"developer","content":[{"type":"text","text":"S"}]}]}`, `{"messages":[{"role":"developer","content":[{"type":"text","text":"S"},{"type":"text","text":"<b>"}]}]}`},
		{OpenAIChat, `{"messages": [ {"role":"user","content":"u"} ]}`, `{"messages": [ {"role":"system","content":"<b>"},{"role":"user","content":"u"} ]}`},
		{OpenAIResponses, `{"instructions":"I","input":"x"}`, `{"instructions":"I\n\n<b>","input":"x"}`},
		{OpenAIResponses, `{"input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"D"}]}]}`, `{"input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"D"},{"type":"input_text","text":"<b>"}]}]}`},
		{OpenAIResponses, `{"input":[{"type":"message","role":"user","content":"u"}]}`, `{"input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"<b>"}]},{"type":"message","role":"user","content":"u"}]}`},
		{OpenAIResponses, `{"input":"hi"}`, `{"input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"<b>"}]},{"role":"user","content":"hi"}]}`},
	}
	for _, tt := range tests {
		got, err := AppendSystemText(tt.name, []byte(tt.in), "<b>")
		if err != nil {
			t.Errorf("%s %s: %v", tt.name, tt.in, err)
			continue
		}
		if string(got) != tt.want {
			t.Errorf("%s %s:\n got %s\nwant %s", tt.name, tt.in, got, tt.want)
		}
	}
}

func TestAppendSystemTextCapture(t *testing.T) {
	for _, tc := range []struct {
		file string
		name Name
	}{
		{"anthropic_claude_compaction.json", AnthropicMessages},
		{"chat_opencode_compaction.json", OpenAIChat},
		{"responses_codex_compaction.json", OpenAIResponses},
	} {
		body := readTestdata(t, tc.file)
		before := mustParse(t, tc.name, body)
		out, err := AppendSystemText(tc.name, body, "CAPSULE")
		if err != nil {
			t.Fatal(err)
		}
		after := mustParse(t, tc.name, out)
		if !strings.Contains(after.System(), "\nCAPSULE") || len(after.System()) != len(before.System())+len("\nCAPSULE") && len(after.System()) != len(before.System())+len("\n\nCAPSULE") {
			t.Errorf("%s: System() did not gain the block once", tc.file)
		}
		if before.NumMessages() != after.NumMessages() || before.LastUserText() != after.LastUserText() {
			t.Errorf("%s: messages changed", tc.file)
		}
		// Only bytes were inserted: the original is a subsequence around one spot.
		if !sameOutside(body, out) {
			t.Errorf("%s: bytes outside the edit changed", tc.file)
		}
	}
}

// sameOutside reports whether out equals in with one contiguous region
// replaced (common prefix + common suffix cover all but one region of in).
func sameOutside(in, out []byte) bool {
	p := 0
	for p < len(in) && p < len(out) && in[p] == out[p] {
		p++
	}
	s := 0
	for s < len(in)-p && s < len(out)-p && in[len(in)-1-s] == out[len(out)-1-s] {
		s++
	}
	// The edited region in the original is in[p:len(in)-s]; it must be small.
	return len(in)-s-p <= 64
}

func TestAppendToLastUser(t *testing.T) {
	tests := []struct {
		name Name
		in   string
		want string
	}{
		{OpenAIChat, `{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]}`, `{"messages":[{"role":"user","content":"a\n\nX"},{"role":"assistant","content":"b"}]}`},
		{AnthropicMessages, `{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"r"}]}]}`, `{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"r"},{"type":"text","text":"X"}]}]}`},
		{OpenAIResponses, `{"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"a"}]},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"}]}`, `{"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_text","text":"X"}]},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"}]}`},
		{OpenAIResponses, `{"input":"a"}`, `{"input":"a\n\nX"}`},
	}
	for _, tt := range tests {
		got, err := AppendToLastUser(tt.name, []byte(tt.in), "X")
		if err != nil {
			t.Errorf("%s %s: %v", tt.name, tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, string(got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
	if _, err := AppendToLastUser(OpenAIChat, []byte(`{"messages":[{"role":"system","content":"s"}]}`), "X"); !errors.Is(err, ErrNoUserMessage) {
		t.Errorf("no user: err = %v", err)
	}
}

func TestAppendToLastUserClaudeCompaction(t *testing.T) {
	body := readTestdata(t, "anthropic_claude_compaction.json")
	out, err := AppendToLastUser(AnthropicMessages, body, "<continuity-capsule revision=\"1\" digest=\"d\">x</continuity-capsule>")
	if err != nil {
		t.Fatal(err)
	}
	v := mustParse(t, AnthropicMessages, out)
	if !strings.HasSuffix(v.LastUserText(), "\n<continuity-capsule revision=\"1\" digest=\"d\">x</continuity-capsule>") {
		t.Errorf("last user text tail = %q", v.LastUserText()[len(v.LastUserText())-100:])
	}
	if !bytes.Contains(out, []byte(`<continuity-capsule revision=\"1\"`)) {
		t.Error("block was HTML-escaped on the wire")
	}
	if !sameOutside(body, out) {
		t.Error("bytes outside the edit changed")
	}
}

func TestInsertMessageBefore(t *testing.T) {
	body := readTestdata(t, "responses_codex_remote_compaction.json")
	out, err := InsertMessageBefore(OpenAIResponses, body, 7, "user", "CAPSULE")
	if err != nil {
		t.Fatal(err)
	}
	v := mustParse(t, OpenAIResponses, out)
	if v.NumMessages() != 9 || v.LastItemType() != "compaction_trigger" {
		t.Fatalf("NumMessages %d, LastItemType %q", v.NumMessages(), v.LastItemType())
	}
	m := v.Messages()[7]
	if m.Role != "user" || m.Text != "CAPSULE" || m.Type != "message" {
		t.Errorf("inserted = %+v", m)
	}
	if !sameOutside(body, out) {
		t.Error("bytes outside the edit changed")
	}
	if gjson.GetBytes(out, "input.7.content.0.type").String() != "input_text" {
		t.Error("inserted item is not an input_text message")
	}

	got, err := InsertMessageBefore(OpenAIChat, []byte(`{"messages":[]}`), 0, "user", "u")
	if err != nil || string(got) != `{"messages":[{"role":"user","content":"u"}]}` {
		t.Errorf("append to empty = %s, %v", got, err)
	}
	if _, err := InsertMessageBefore(AnthropicMessages, []byte(`{"messages":[]}`), 2, "user", "u"); !errors.Is(err, ErrBadIndex) {
		t.Errorf("bad index err = %v", err)
	}
}

func TestRewriteStrings(t *testing.T) {
	body := []byte(`{"a":"keep \"this\"","b":["x MARK y","\u003cb\u003e MARK \\ \n"],"MARK":1,"c":{"d":"no"}}`)
	var seen []string
	has := func(m string) func([]byte) bool {
		return func(raw []byte) bool { return bytes.Contains(raw, []byte(m)) }
	}
	out, err := RewriteStrings(body, has("MARK"), func(s string) string {
		seen = append(seen, s)
		return strings.ReplaceAll(s, "MARK", "<done>")
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"x MARK y", "<b> MARK \\ \n", "MARK"}
	if len(seen) != len(want) {
		t.Fatalf("fn saw %q, want %q", seen, want)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Errorf("string %d: fn saw %q, want %q", i, seen[i], want[i])
		}
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("rewritten body is not JSON: %v\n%s", err, out)
	}
	if b := got["b"].([]any); b[0] != "x <done> y" || b[1] != "<b> <done> \\ \n" {
		t.Errorf("rewritten values: %q", b)
	}
	if got["a"] != `keep "this"` || got["c"].(map[string]any)["d"] != "no" {
		t.Errorf("untouched values changed: %s", out)
	}
	if _, ok := got["<done>"]; !ok {
		t.Errorf("keys are strings too and were not rewritten: %s", out)
	}
	// Nothing to change: the same slice back.
	same, err := RewriteStrings(body, has("ABSENT"), func(s string) string { return s + "!" })
	if err != nil || &same[0] != &body[0] {
		t.Errorf("no match: got a copy or %v", err)
	}
	if _, err := RewriteStrings([]byte(`{"a":"MARK"`), has("MARK"), func(s string) string { return s }); err == nil {
		t.Error("invalid JSON was accepted")
	}
}

// TestRewriteStringsSparesProviderCompaction: a string inside a provider's
// compaction block (Anthropic, signed) or item (Responses) is never
// rewritten, even when it holds the marker; the same text elsewhere is.
func TestRewriteStringsSparesProviderCompaction(t *testing.T) {
	for _, body := range []string{
		`{"messages":[{"role":"assistant","content":[{"type":"compaction","content":"S <x> old","signature":"c2ln"}]},{"role":"user","content":"u <x> old"}]}`,
		`{"input":[{"type":"compaction","encrypted_content":"e <x> old"},{"role":"user","content":"u <x> old"}]}`,
	} {
		out, err := RewriteStrings([]byte(body), func(raw []byte) bool { return bytes.Contains(raw, []byte("<x>")) }, func(s string) string { return strings.ReplaceAll(s, "<x> old", "new") })
		if err != nil {
			t.Fatal(err)
		}
		got := string(out)
		if !strings.Contains(got, `"u new"`) {
			t.Errorf("the user string was not rewritten: %s", got)
		}
		if strings.Count(got, "<x> old") != 1 {
			t.Errorf("the compaction's bytes changed: %s", got)
		}
		if len(ProviderSpans([]byte(body))) != 1 {
			t.Errorf("ProviderSpans(%s) = %v, want one span", body, ProviderSpans([]byte(body)))
		}
	}
}
