package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/tidwall/gjson"

	"github.com/tether-dev/tether/internal/fakemodel"
)

const planArgs = `{"explanation":"Storage: PostgreSQL, not MongoDB.","plan":[{"step":"Set up PostgreSQL schema","status":"in_progress"},{"step":"Add users table","status":"pending"}]}`

// scripted is the fake's answer in every SDK test: text, one tool call and
// explicit usage.
var scripted = fakemodel.Reply{
	Text:            "We will use PostgreSQL, not MongoDB. Recording the plan now.",
	ToolCalls:       []fakemodel.ToolCall{{ID: "call_plan1", Name: "update_plan", Arguments: planArgs}},
	InputTokens:     1200,
	OutputTokens:    34,
	CacheReadTokens: 800,
}

const userText = "Use PostgreSQL. Make a plan."

type call struct{ ID, Name, Args string }

// sdkSetup is a fake provider answering scripted, behind a passthrough proxy.
func sdkSetup(t *testing.T) (*fakemodel.Server, *proxy) {
	t.Helper()
	fake := startFake(t, fakemodel.Script(scripted))
	p := startProxy(t, proxyOpts{cfg: passthroughConfig(t, fake.URL, nil)})
	return fake, p
}

// checkReceived asserts the fake got exactly one request on path carrying the
// user's text and the stream flag the SDK set.
func checkReceived(t *testing.T, fake *fakemodel.Server, path string, stream bool) {
	t.Helper()
	reqs := fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("fake received %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Method != "POST" || r.Path != path {
		t.Errorf("fake received %s %s, want POST %s", r.Method, r.Path, path)
	}
	if !strings.Contains(string(r.Body), userText) {
		t.Errorf("upstream body lacks the user's text: %s", r.Body)
	}
	if r.Stream() != stream {
		t.Errorf("upstream stream = %v, want %v", r.Stream(), stream)
	}
}

func chatParams() openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:    "fake-model",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(userText)},
	}
}

func TestSDKChatCompletions(t *testing.T) {
	want := []call{{"call_plan1", "update_plan", planArgs}}

	t.Run("non-stream", func(t *testing.T) {
		fake, p := sdkSetup(t)
		resp, err := p.openai("sk-caller").Chat.Completions.New(t.Context(), chatParams())
		if err != nil {
			t.Fatalf("chat completion through proxy: %v", err)
		}
		ch := resp.Choices[0]
		if ch.Message.Content != scripted.Text || ch.FinishReason != "tool_calls" {
			t.Errorf("content %q finish %q, want %q tool_calls", ch.Message.Content, ch.FinishReason, scripted.Text)
		}
		var got []call
		for _, tc := range ch.Message.ToolCalls {
			got = append(got, call{tc.ID, tc.Function.Name, tc.Function.Arguments})
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("tool calls (-want +got):\n%s", diff)
		}
		if u := resp.Usage; u.PromptTokens != 1200 || u.CompletionTokens != 34 || u.PromptTokensDetails.CachedTokens != 800 {
			t.Errorf("usage = %+v, want 1200/34 cached 800", u)
		}
		checkReceived(t, fake, "/v1/chat/completions", false)
	})

	t.Run("stream", func(t *testing.T) {
		fake, p := sdkSetup(t)
		params := chatParams()
		params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		stream := p.openai("sk-caller").Chat.Completions.NewStreaming(t.Context(), params)
		var acc openai.ChatCompletionAccumulator
		chunks := 0
		for stream.Next() {
			if !acc.AddChunk(stream.Current()) {
				t.Fatalf("accumulator rejected chunk %s", stream.Current().RawJSON())
			}
			chunks++
		}
		if err := stream.Err(); err != nil {
			t.Fatalf("stream through proxy: %v", err)
		}
		if chunks < 4 {
			t.Errorf("got %d chunks, want the fake's chunking preserved", chunks)
		}
		msg := acc.Choices[0].Message
		if msg.Content != scripted.Text {
			t.Errorf("content = %q, want %q", msg.Content, scripted.Text)
		}
		var got []call
		for _, tc := range msg.ToolCalls {
			got = append(got, call{tc.ID, tc.Function.Name, tc.Function.Arguments})
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("tool calls (-want +got):\n%s", diff)
		}
		if acc.Usage.PromptTokens != 1200 || acc.Usage.CompletionTokens != 34 {
			t.Errorf("usage = %+v", acc.Usage)
		}
		checkReceived(t, fake, "/v1/chat/completions", true)
	})
}

func responsesParams() responses.ResponseNewParams {
	return responses.ResponseNewParams{
		Model: "fake-model",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(userText)},
	}
}

func functionCalls(out []responses.ResponseOutputItemUnion) []call {
	var got []call
	for _, it := range out {
		if it.Type == "function_call" {
			fc := it.AsFunctionCall()
			got = append(got, call{fc.CallID, fc.Name, fc.Arguments})
		}
	}
	return got
}

func TestSDKResponses(t *testing.T) {
	want := []call{{"call_plan1", "update_plan", planArgs}}

	t.Run("non-stream", func(t *testing.T) {
		fake, p := sdkSetup(t)
		resp, err := p.openai("sk-caller").Responses.New(t.Context(), responsesParams())
		if err != nil {
			t.Fatalf("responses through proxy: %v", err)
		}
		if resp.OutputText() != scripted.Text || resp.Status != "completed" {
			t.Errorf("output %q status %q", resp.OutputText(), resp.Status)
		}
		if diff := cmp.Diff(want, functionCalls(resp.Output)); diff != "" {
			t.Errorf("function calls (-want +got):\n%s", diff)
		}
		if u := resp.Usage; u.InputTokens != 1200 || u.OutputTokens != 34 || u.InputTokensDetails.CachedTokens != 800 {
			t.Errorf("usage = %+v", u)
		}
		checkReceived(t, fake, "/v1/responses", false)
	})

	t.Run("stream", func(t *testing.T) {
		fake, p := sdkSetup(t)
		stream := p.openai("sk-caller").Responses.NewStreaming(t.Context(), responsesParams())
		var (
			text, args string
			final      *responses.Response
			lastSeq    int64 = -1
			n          int
		)
		for stream.Next() {
			ev := stream.Current()
			n++
			if ev.SequenceNumber <= lastSeq {
				t.Errorf("sequence_number %d after %d: events reordered", ev.SequenceNumber, lastSeq)
			}
			lastSeq = ev.SequenceNumber
			switch ev.Type {
			case "response.output_text.delta":
				text += ev.Delta
			case "response.function_call_arguments.delta":
				args += ev.Delta
			case "response.completed":
				r := ev.Response
				final = &r
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatalf("stream through proxy: %v", err)
		}
		if text != scripted.Text || args != planArgs {
			t.Errorf("streamed text %q args %q", text, args)
		}
		if final == nil {
			t.Fatalf("no response.completed among %d events", n)
		}
		if diff := cmp.Diff(want, functionCalls(final.Output)); diff != "" {
			t.Errorf("completed function calls (-want +got):\n%s", diff)
		}
		if final.Usage.InputTokens != 1200 || final.Usage.OutputTokens != 34 {
			t.Errorf("usage = %+v", final.Usage)
		}
		checkReceived(t, fake, "/v1/responses", true)
	})
}

func messageParams() anthropic.MessageNewParams {
	return anthropic.MessageNewParams{
		Model:     "claude-sonnet-4-5-20250929",
		MaxTokens: 1024,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(userText))},
	}
}

type block struct {
	Type, Text, ID, Name string
	Input                any
}

func blocks(t *testing.T, content []anthropic.ContentBlockUnion) []block {
	t.Helper()
	var out []block
	for _, b := range content {
		got := block{Type: b.Type, Text: b.Text, ID: b.ID, Name: b.Name}
		if b.Type == "tool_use" {
			if err := json.Unmarshal(b.Input, &got.Input); err != nil {
				t.Fatalf("tool_use input %q: %v", b.Input, err)
			}
		}
		out = append(out, got)
	}
	return out
}

func wantBlocks(t *testing.T) []block {
	t.Helper()
	var input any
	if err := json.Unmarshal([]byte(planArgs), &input); err != nil {
		t.Fatal(err)
	}
	return []block{
		{Type: "text", Text: scripted.Text},
		{Type: "tool_use", ID: "call_plan1", Name: "update_plan", Input: input},
	}
}

func TestSDKMessages(t *testing.T) {
	t.Run("non-stream", func(t *testing.T) {
		fake, p := sdkSetup(t)
		msg, err := p.anthropic("sk-ant-caller").Messages.New(t.Context(), messageParams())
		if err != nil {
			t.Fatalf("messages through proxy: %v", err)
		}
		if diff := cmp.Diff(wantBlocks(t), blocks(t, msg.Content)); diff != "" {
			t.Errorf("content (-want +got):\n%s", diff)
		}
		if msg.StopReason != "tool_use" {
			t.Errorf("stop_reason = %q", msg.StopReason)
		}
		if u := msg.Usage; u.InputTokens != 1200 || u.OutputTokens != 34 || u.CacheReadInputTokens != 800 {
			t.Errorf("usage = %+v", u)
		}
		checkReceived(t, fake, "/v1/messages", false)
		if got := gjson.GetBytes(fake.Requests()[0].Body, "max_tokens").Int(); got != 1024 {
			t.Errorf("upstream max_tokens = %d, want 1024", got)
		}
	})

	t.Run("stream", func(t *testing.T) {
		fake, p := sdkSetup(t)
		stream := p.anthropic("sk-ant-caller").Messages.NewStreaming(t.Context(), messageParams())
		var msg anthropic.Message
		deltas := 0
		for stream.Next() {
			ev := stream.Current()
			if err := msg.Accumulate(ev); err != nil {
				t.Fatalf("accumulate %s: %v", ev.Type, err)
			}
			if ev.Type == "content_block_delta" && ev.Delta.Type == "text_delta" {
				deltas++
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatalf("stream through proxy: %v", err)
		}
		if deltas < 3 {
			t.Errorf("text came in %d deltas, want the fake's chunking preserved", deltas)
		}
		if diff := cmp.Diff(wantBlocks(t), blocks(t, msg.Content)); diff != "" {
			t.Errorf("content (-want +got):\n%s", diff)
		}
		if msg.StopReason != "tool_use" {
			t.Errorf("stop_reason = %q", msg.StopReason)
		}
		if u := msg.Usage; u.InputTokens != 1200 || u.OutputTokens != 34 || u.CacheReadInputTokens != 800 {
			t.Errorf("usage = %+v", u)
		}
		checkReceived(t, fake, "/v1/messages", true)
	})
}
