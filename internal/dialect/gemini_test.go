package dialect

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// geminiBody is a turn as Gemini CLI sends it through @google/genai: system
// instruction, a function call and its response, and the user's next turn.
const geminiBody = `{"contents":[` +
	`{"role":"user","parts":[{"text":"We are building an inventory service. Decision: use PostgreSQL."}]},` +
	`{"role":"model","parts":[{"text":"thinking","thought":true},{"text":"I'll record a plan."},{"functionCall":{"id":"c1","name":"write_todos","args":{"todos":[{"description":"Create schema","status":"pending"}]}}}]},` +
	`{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"write_todos","response":{"output":"Todos updated"}}}]},` +
	`{"role":"user","parts":[{"text":"Constraint: never change the public REST API."},{"inlineData":{"mimeType":"image/png","data":"AAAA"}}]}],` +
	`"systemInstruction":{"role":"user","parts":[{"text":"You are Gemini CLI."}]},` +
	`"tools":[{"functionDeclarations":[{"name":"write_todos"},{"name":"run_shell_command"}]},{"functionDeclarations":[{"name":"read_file"}]}],` +
	`"generationConfig":{"temperature":0}}`

const geminiPath = "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"

func TestGeminiView(t *testing.T) {
	v, err := Parse(Gemini, geminiPath, nil, []byte(geminiBody))
	if err != nil {
		t.Fatal(err)
	}
	if v.Model() != "gemini-2.5-pro" || !v.Stream() {
		t.Fatalf("model %q stream %v", v.Model(), v.Stream())
	}
	if s := v.System(); s != "You are Gemini CLI." {
		t.Fatalf("system %q", s)
	}
	msgs := v.Messages()
	if len(msgs) != 4 || v.NumMessages() != 4 {
		t.Fatalf("%d messages", len(msgs))
	}
	if m := msgs[1]; m.Role != "assistant" || m.Text != "I'll record a plan." || len(m.ToolCalls) != 1 ||
		m.ToolCalls[0].Name != "write_todos" || m.ToolCalls[0].ID != "c1" || !gjson.ValidBytes(m.ToolCalls[0].Arguments) {
		t.Fatalf("model turn %+v", m)
	}
	if m := msgs[2]; m.Role != "user" || m.Text != "" || len(m.ToolResults) != 1 || m.ToolResults[0].Text != "Todos updated" || m.ToolResults[0].CallID != "c1" {
		t.Fatalf("function response %+v", m)
	}
	if !msgs[3].HasImage {
		t.Fatal("inline data not reported")
	}
	if got := v.LastUserText(); got != "Constraint: never change the public REST API." {
		t.Fatalf("last user %q", got)
	}
	if got := strings.Join(v.ToolNames(), ","); got != "write_todos,run_shell_command,read_file" {
		t.Fatalf("tools %q", got)
	}
	non, _ := Parse(Gemini, "/v1beta/models/gemini-2.5-flash:generateContent", nil, []byte(geminiBody))
	if non.Stream() || non.Model() != "gemini-2.5-flash" {
		t.Fatal("non-streamed path misread")
	}
}

func TestGeminiPathModel(t *testing.T) {
	if got := GeminiSetModel(geminiPath, "gemini-3-pro"); got != "/v1beta/models/gemini-3-pro:streamGenerateContent?alt=sse" {
		t.Fatal(got)
	}
	if GeminiMethod("/v1beta/models/x:countTokens") != "countTokens" || GeminiModel("/v1/chat") != "" {
		t.Fatal("method / model misread")
	}
}

func TestGeminiEdits(t *testing.T) {
	body := []byte(geminiBody)
	out, err := AppendSystemText(Gemini, body, "BLOCK")
	if err != nil {
		t.Fatal(err)
	}
	if got := gjson.GetBytes(out, "systemInstruction.parts.1").Raw; got != `{"text":"BLOCK"}` {
		t.Fatalf("system part %s", got)
	}
	noSys, _ := AppendSystemText(Gemini, []byte(`{"contents":[]}`), "B")
	if gjson.GetBytes(noSys, "systemInstruction.parts.0.text").String() != "B" {
		t.Fatalf("absent system: %s", noSys)
	}
	out, err = AppendToLastUser(Gemini, body, "BLOCK")
	if err != nil {
		t.Fatal(err)
	}
	if got := gjson.GetBytes(out, "contents.3.parts.2").Raw; got != `{"text":"BLOCK"}` {
		t.Fatalf("user part %s", got)
	}
	out, err = InsertMessageBefore(Gemini, body, 3, "user", "BLOCK")
	if err != nil {
		t.Fatal(err)
	}
	if got := gjson.GetBytes(out, "contents.3").Raw; got != `{"role":"user","parts":[{"text":"BLOCK"}]}` {
		t.Fatalf("inserted %s", got)
	}
	// Every byte outside the edit is the caller's.
	if !strings.HasPrefix(string(out), geminiBody[:strings.Index(geminiBody, `{"role":"user","parts":[{"text":"Constraint`)]) {
		t.Fatal("bytes before the insertion changed")
	}
}

const geminiResponse = `{"candidates":[{"content":{"role":"model","parts":[{"text":"plan","thought":true},{"text":"<state_snapshot>s</state_snapshot>"}]},"finishReason":"STOP","index":0}],` +
	`"usageMetadata":{"promptTokenCount":1200,"candidatesTokenCount":30,"thoughtsTokenCount":5,"cachedContentTokenCount":100,"totalTokenCount":1235},"modelVersion":"gemini-2.5-pro"}`

func TestGeminiResponse(t *testing.T) {
	body := []byte(geminiResponse)
	if got := ResponseText(Gemini, body); got != "<state_snapshot>s</state_snapshot>" {
		t.Fatalf("text %q", got)
	}
	out, err := EditResponseText(Gemini, body, func(s string) string { return MergeText(s, testBlock, "") })
	if err != nil {
		t.Fatal(err)
	}
	if got := ResponseText(Gemini, out); got != "<state_snapshot>s</state_snapshot>\n\n"+testBlock {
		t.Fatalf("edited %q", got)
	}
	if gjson.GetBytes(out, "candidates.0.content.parts.0.text").String() != "plan" {
		t.Fatal("the thought part changed")
	}
	if u := ParseUsage(Gemini, body); u.InputTokens != 1200 || u.OutputTokens != 35 || u.CacheReadTokens != 100 {
		t.Fatalf("usage %+v", u)
	}
}

// TestGeminiStreamMerge splits a streamed answer at random points: the text
// the client reads equals MergeText of the whole answer, with exactly one
// block, every chunk stays valid JSON and the usage survives.
func TestGeminiStreamMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, text := range mergeTexts {
		want := MergeText(text, testBlock, "")
		for range 200 {
			pieces := splitAt(text, randomCuts(rng, len(text)))
			tm := NewTextMerger(Gemini, testBlock, "")
			tracker := NewUsageTracker(Gemini)
			var got strings.Builder
			terminal := false
			for i, p := range pieces {
				data := `{"candidates":[{"content":{"role":"model","parts":[{"text":` + jsonString(p) + `}]},"index":0}]}`
				if i == len(pieces)-1 {
					data = `{"candidates":[{"content":{"role":"model","parts":[{"text":` + jsonString(p) + `}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":7,"candidatesTokenCount":3}}`
				}
				for _, ev := range tm.Process(Event{Data: []byte(data)}) {
					if !gjson.ValidBytes(ev.Data) {
						t.Fatalf("invalid chunk %s", ev.Data)
					}
					tracker.Observe(ev)
					got.WriteString(EventText(Gemini, ev))
					terminal = terminal || IsTerminal(Gemini, ev)
				}
			}
			for _, ev := range tm.Finish() {
				got.WriteString(EventText(Gemini, ev))
			}
			if got.String() != want {
				t.Fatalf("streamed %q\nwant %q", got.String(), want)
			}
			if !terminal || tracker.Usage().InputTokens != 7 {
				t.Fatalf("terminal %v usage %+v", terminal, tracker.Usage())
			}
		}
	}
	// A stream cut before finishReason still gets the block.
	tm := NewTextMerger(Gemini, testBlock, "")
	var got strings.Builder
	for _, ev := range tm.Process(Event{Data: []byte(`{"candidates":[{"content":{"parts":[{"text":"partial"}]}}]}`)}) {
		got.WriteString(EventText(Gemini, ev))
	}
	for _, ev := range tm.Finish() {
		got.WriteString(EventText(Gemini, ev))
	}
	if got.String() != MergeText("partial", testBlock, "") {
		t.Fatalf("cut stream %q", got.String())
	}
}

func TestAppendCompactionInstructions(t *testing.T) {
	body := `{"context_management":{"edits":[{"type":"clear_tool_uses_20250919"},{"type":"compact_20260112","instructions":"Keep file paths.\n\n` + strings.ReplaceAll(oldBlock, "\n", `\n`) + `"},{"type":"compact_20260112"}]},"messages":[]}`
	out, ok := AppendCompactionInstructions(AnthropicMessages, []byte(body), testBlock)
	if !ok {
		t.Fatal("no change")
	}
	if got := gjson.GetBytes(out, "context_management.edits.1.instructions").String(); got != "Keep file paths.\n\n"+testBlock {
		t.Fatalf("instructions %q", got)
	}
	if gjson.GetBytes(out, "context_management.edits.2.instructions").Exists() {
		t.Fatal("an edit without instructions got some: that would replace the provider's prompt")
	}
	if _, ok := AppendCompactionInstructions(AnthropicMessages, []byte(`{"messages":[]}`), testBlock); ok {
		t.Fatal("changed a body without compaction edits")
	}
}
