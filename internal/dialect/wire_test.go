package dialect

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

func TestSSEReader(t *testing.T) {
	in := ": comment\r\nevent: message_start\r\ndata: {\"a\":1}\r\n\r\n" +
		"data: line1\ndata:line2\nid: 7\nretry: 10\n\n\n\n" +
		"data: [DONE]\n\n" +
		"event: tail\ndata: x"
	r := NewSSEReader(strings.NewReader(in))
	var got []Event
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e)
	}
	want := []Event{
		{Name: "message_start", Data: []byte(`{"a":1}`)},
		{Data: []byte("line1\nline2")},
		{Data: []byte("[DONE]")},
		{Name: "tail", Data: []byte("x")},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestSSEReaderLineLimit(t *testing.T) {
	r := NewSSEReader(io.MultiReader(strings.NewReader("data: "), bytes.NewReader(bytes.Repeat([]byte("a"), MaxSSELine+1))))
	if _, err := r.Next(); err == nil || errors.Is(err, io.EOF) {
		t.Errorf("err = %v, want a line-too-long error", err)
	}
}

func TestWriteEventRoundTrip(t *testing.T) {
	evs := []Event{{Name: "x", Data: []byte("a\nb")}, {Data: []byte(`{"k":"v"}`)}, {Name: "e", Data: []byte{}}}
	var b bytes.Buffer
	for _, e := range evs {
		if err := WriteEvent(&b, e); err != nil {
			t.Fatal(err)
		}
	}
	if want := "event: x\ndata: a\ndata: b\n\ndata: {\"k\":\"v\"}\n\nevent: e\ndata: \n\n"; b.String() != want {
		t.Errorf("wrote %q, want %q", b.String(), want)
	}
	r := NewSSEReader(&b)
	for i, want := range evs {
		got, err := r.Next()
		if err != nil || got.Name != want.Name || string(got.Data) != string(want.Data) {
			t.Errorf("event %d = %+v, %v", i, got, err)
		}
	}
	if err := WriteEvent(io.Discard, Event{Name: "a\nb"}); !errors.Is(err, ErrBadEventName) {
		t.Errorf("err = %v", err)
	}
}

func FuzzSSEReader(f *testing.F) {
	for _, name := range []Name{OpenAIChat, OpenAIResponses, AnthropicMessages} {
		f.Add(encodeStream(streamFor(name, []string{"a", "b"})))
	}
	f.Add([]byte("data: x\r\n\r\n:c\nevent:y\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := NewSSEReader(bytes.NewReader(in))
		var evs []Event
		for range 10000 {
			e, err := r.Next()
			if err != nil {
				break
			}
			if strings.ContainsAny(e.Name, "\r\n") {
				t.Fatalf("name with line break %q", e.Name)
			}
			evs = append(evs, e)
		}
		// Writing and reading back gives the same events, except that a
		// lone "\r" in data cannot survive line splitting.
		var b bytes.Buffer
		for _, e := range evs {
			if err := WriteEvent(&b, e); err != nil {
				t.Fatal(err)
			}
		}
		r2 := NewSSEReader(&b)
		for i, want := range evs {
			got, err := r2.Next()
			if err != nil {
				t.Fatalf("re-read %d: %v", i, err)
			}
			if got.Name != want.Name || (!bytes.Contains(want.Data, []byte("\r")) && !bytes.Equal(got.Data, want.Data)) {
				t.Fatalf("event %d: %+v != %+v", i, got, want)
			}
		}
	})
}

func TestIsTerminal(t *testing.T) {
	for _, name := range []Name{OpenAIChat, OpenAIResponses, AnthropicMessages} {
		evs := streamFor(name, []string{"x"})
		for i, e := range evs {
			if got, want := IsTerminal(name, e), i == len(evs)-1; got != want {
				t.Errorf("%s event %d (%s): IsTerminal = %v", name, i, e.Data, got)
			}
		}
	}
	if !IsTerminal(OpenAIResponses, ev("response.failed", `{"type":"response.failed","response":{}}`)) {
		t.Error("response.failed not terminal")
	}
}

func TestUsage(t *testing.T) {
	want := map[Name]Usage{
		OpenAIChat:        {InputTokens: 120, OutputTokens: 30, CacheReadTokens: 64},
		OpenAIResponses:   {InputTokens: 120, OutputTokens: 30, CacheReadTokens: 64},
		AnthropicMessages: {InputTokens: 120, OutputTokens: 30, CacheReadTokens: 64, CacheWriteTokens: 7},
	}
	for name, w := range want {
		tr := NewUsageTracker(name)
		for _, e := range streamFor(name, []string{"a", "b"}) {
			tr.Observe(e)
		}
		if diff := cmp.Diff(w, tr.Usage()); diff != "" {
			t.Errorf("%s stream usage (-want +got):\n%s", name, diff)
		}
	}
	bodies := map[Name]string{
		OpenAIChat:        `{"usage":{"prompt_tokens":120,"completion_tokens":30,"prompt_tokens_details":{"cached_tokens":64}}}`,
		OpenAIResponses:   `{"usage":{"input_tokens":120,"output_tokens":30,"input_tokens_details":{"cached_tokens":64}}}`,
		AnthropicMessages: `{"usage":{"input_tokens":120,"output_tokens":30,"cache_read_input_tokens":64,"cache_creation_input_tokens":7}}`,
	}
	for name, b := range bodies {
		if diff := cmp.Diff(want[name], ParseUsage(name, []byte(b))); diff != "" {
			t.Errorf("%s body usage (-want +got):\n%s", name, diff)
		}
	}
}

func TestResponseText(t *testing.T) {
	tests := []struct {
		name Name
		body string
		text string
		// after EditResponseText with an appended suffix / a replacement
		appended, replaced string
	}{
		{OpenAIChat, `{"choices":[{"index":0,"message":{"role":"assistant","content":"Sum"}}]}`, "Sum",
			`{"choices":[{"index":0,"message":{"role":"assistant","content":"Sum+B"}}]}`,
			`{"choices":[{"index":0,"message":{"role":"assistant","content":"NEW"}}]}`},
		{OpenAIResponses, `{"output":[{"type":"reasoning","summary":[]},{"type":"message","content":[{"type":"output_text","text":"A"},{"type":"output_text","text":"B"}]}],"output_text":"AB"}`, "AB",
			`{"output":[{"type":"reasoning","summary":[]},{"type":"message","content":[{"type":"output_text","text":"A"},{"type":"output_text","text":"B+B"}]}],"output_text":"AB+B"}`,
			`{"output":[{"type":"reasoning","summary":[]},{"type":"message","content":[{"type":"output_text","text":"NEW"},{"type":"output_text","text":""}]}],"output_text":"NEW"}`},
		{AnthropicMessages, `{"content":[{"type":"thinking","thinking":"t"},{"type":"text","text":"<summary>"},{"type":"tool_use","id":"x","input":{}},{"type":"text","text":"</summary>"}]}`, "<summary></summary>",
			`{"content":[{"type":"thinking","thinking":"t"},{"type":"text","text":"<summary>"},{"type":"tool_use","id":"x","input":{}},{"type":"text","text":"</summary>+B"}]}`,
			`{"content":[{"type":"thinking","thinking":"t"},{"type":"text","text":"NEW"},{"type":"tool_use","id":"x","input":{}},{"type":"text","text":""}]}`},
	}
	for _, tt := range tests {
		if got := ResponseText(tt.name, []byte(tt.body)); got != tt.text {
			t.Errorf("%s ResponseText = %q, want %q", tt.name, got, tt.text)
		}
		got, err := EditResponseText(tt.name, []byte(tt.body), func(s string) string { return s + "+B" })
		if err != nil || string(got) != tt.appended {
			t.Errorf("%s append:\n got %s (%v)\nwant %s", tt.name, got, err, tt.appended)
		}
		got, err = EditResponseText(tt.name, []byte(tt.body), func(string) string { return "NEW" })
		if err != nil || string(got) != tt.replaced {
			t.Errorf("%s replace:\n got %s (%v)\nwant %s", tt.name, got, err, tt.replaced)
		}
	}
	opaque := []byte(`{"output":[{"type":"compaction","encrypted_content":"E"}]}`)
	if !ResponseHasOpaqueCompaction(OpenAIResponses, opaque) || ResponseHasOpaqueCompaction(OpenAIResponses, []byte(`{"output":[{"type":"message"}]}`)) {
		t.Error("ResponseHasOpaqueCompaction wrong")
	}
	if _, err := EditResponseText(OpenAIResponses, opaque, func(s string) string { return s + "x" }); !errors.Is(err, ErrNoText) {
		t.Errorf("opaque edit err = %v", err)
	}
}

// TestErrorEventSDK checks that the official SDKs raise the dialect's
// in-stream error event as an error.
func TestErrorEventSDK(t *testing.T) {
	serve := func(evs ...Event) string {
		body := encodeStream(evs)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write(body)
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	url := serve(chatStream([]string{"a"})[0], ErrorEvent(OpenAIChat, "upstream broke"))
	oc := openai.NewClient(option.WithBaseURL(url), option.WithAPIKey("k"), option.WithMaxRetries(0))
	cs := oc.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	for cs.Next() {
	}
	if err := cs.Err(); err == nil || !strings.Contains(err.Error(), "upstream broke") {
		t.Errorf("chat stream err = %v", err)
	}

	url = serve(anthropicStream([]string{"a"})[0], ErrorEvent(AnthropicMessages, "upstream broke"))
	ac := anthropic.NewClient(aoption.WithBaseURL(url), aoption.WithAPIKey("k"), aoption.WithMaxRetries(0))
	as := ac.Messages.NewStreaming(context.Background(), anthropic.MessageNewParams{Model: "m", MaxTokens: 1, Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}})
	for as.Next() {
	}
	if err := as.Err(); err == nil || !strings.Contains(err.Error(), "upstream broke") {
		t.Errorf("anthropic stream err = %v", err)
	}

	e := ErrorEvent(OpenAIResponses, `say "hi" <b>`)
	if e.Name != "error" || eventType(e) != "error" || !strings.Contains(string(e.Data), `"message":"say \"hi\" <b>"`) {
		t.Errorf("responses error event = %s %s", e.Name, e.Data)
	}
}
