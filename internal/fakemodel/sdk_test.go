package fakemodel_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/tether-dev/tether/internal/fakemodel"
)

const planArgs = `{"explanation":"Storage: PostgreSQL, not MongoDB.","plan":[{"step":"Set up PostgreSQL schema","status":"in_progress"},{"step":"Add users table","status":"pending"}]}`

// scripted is a reply with text, a tool call and explicit usage.
var scripted = fakemodel.Reply{
	Text:            "We will use PostgreSQL, not MongoDB. Recording the plan now.",
	ToolCalls:       []fakemodel.ToolCall{{ID: "call_plan1", Name: "update_plan", Arguments: planArgs}},
	InputTokens:     1200,
	OutputTokens:    34,
	CacheReadTokens: 800,
}

func start(t *testing.T, r fakemodel.Responder) *fakemodel.Server {
	t.Helper()
	s := fakemodel.Start(r)
	t.Cleanup(s.Close)
	return s
}

func openaiClient(s *fakemodel.Server) *openai.Client {
	c := openai.NewClient(
		option.WithBaseURL(s.URL+"/v1"),
		option.WithAPIKey("x"),
		option.WithMaxRetries(0),
	)
	return &c
}

func anthropicClient(s *fakemodel.Server) *anthropic.Client {
	c := anthropic.NewClient(
		aoption.WithBaseURL(s.URL),
		aoption.WithAPIKey("x"),
		aoption.WithMaxRetries(0),
	)
	return &c
}

type call struct{ ID, Name, Args string }

func chatParams() openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:    "fake-model",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Use PostgreSQL. Make a plan.")},
	}
}

func TestChatCompletionsNonStream(t *testing.T) {
	s := start(t, fakemodel.Script(scripted))
	resp, err := openaiClient(s).Chat.Completions.New(t.Context(), chatParams())
	if err != nil {
		t.Fatalf("chat completion: %v", err)
	}
	if resp.Object != "chat.completion" || !strings.HasPrefix(resp.ID, "chatcmpl-") {
		t.Errorf("object %q id %q, want chat.completion chatcmpl-…", resp.Object, resp.ID)
	}
	ch := resp.Choices[0]
	if ch.Message.Content != scripted.Text {
		t.Errorf("content = %q, want %q", ch.Message.Content, scripted.Text)
	}
	if ch.FinishReason != "tool_calls" {
		t.Errorf("finish_reason = %q, want tool_calls", ch.FinishReason)
	}
	var got []call
	for _, tc := range ch.Message.ToolCalls {
		got = append(got, call{tc.ID, tc.Function.Name, tc.Function.Arguments})
	}
	want := []call{{"call_plan1", "update_plan", planArgs}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tool calls (-want +got):\n%s", diff)
	}
	u := resp.Usage
	if u.PromptTokens != 1200 || u.CompletionTokens != 34 || u.TotalTokens != 1234 || u.PromptTokensDetails.CachedTokens != 800 {
		t.Errorf("usage = %+v, want 1200/34/1234 cached 800", u)
	}
}

func TestChatCompletionsStream(t *testing.T) {
	s := start(t, fakemodel.Script(scripted))
	params := chatParams()
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	stream := openaiClient(s).Chat.Completions.NewStreaming(t.Context(), params)
	var acc openai.ChatCompletionAccumulator
	contentChunks := 0
	for stream.Next() {
		chunk := stream.Current()
		if !acc.AddChunk(chunk) {
			t.Fatalf("accumulator rejected chunk %s", chunk.RawJSON())
		}
		if len(chunk.Choices) > 0 && chunk.Choices[0].Delta.Content != "" {
			contentChunks++
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	if contentChunks < 3 {
		t.Errorf("content came in %d chunks, want several", contentChunks)
	}
	msg := acc.Choices[0].Message
	if msg.Content != scripted.Text {
		t.Errorf("content = %q, want %q", msg.Content, scripted.Text)
	}
	var got []call
	for _, tc := range msg.ToolCalls {
		got = append(got, call{tc.ID, tc.Function.Name, tc.Function.Arguments})
	}
	if diff := cmp.Diff([]call{{"call_plan1", "update_plan", planArgs}}, got); diff != "" {
		t.Errorf("tool calls (-want +got):\n%s", diff)
	}
	if acc.Choices[0].FinishReason != "tool_calls" {
		t.Errorf("finish_reason = %q, want tool_calls", acc.Choices[0].FinishReason)
	}
	if acc.Usage.PromptTokens != 1200 || acc.Usage.CompletionTokens != 34 || acc.Usage.PromptTokensDetails.CachedTokens != 800 {
		t.Errorf("usage = %+v, want prompt 1200 completion 34 cached 800", acc.Usage)
	}
}

func responsesParams() responses.ResponseNewParams {
	return responses.ResponseNewParams{
		Model: "fake-model",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Use PostgreSQL. Make a plan.")},
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

func TestResponsesNonStream(t *testing.T) {
	s := start(t, fakemodel.Script(scripted))
	resp, err := openaiClient(s).Responses.New(t.Context(), responsesParams())
	if err != nil {
		t.Fatalf("responses: %v", err)
	}
	if resp.Status != "completed" || !strings.HasPrefix(resp.ID, "resp_") {
		t.Errorf("status %q id %q", resp.Status, resp.ID)
	}
	if got := resp.OutputText(); got != scripted.Text {
		t.Errorf("output text = %q, want %q", got, scripted.Text)
	}
	if diff := cmp.Diff([]call{{"call_plan1", "update_plan", planArgs}}, functionCalls(resp.Output)); diff != "" {
		t.Errorf("function calls (-want +got):\n%s", diff)
	}
	u := resp.Usage
	if u.InputTokens != 1200 || u.OutputTokens != 34 || u.TotalTokens != 1234 || u.InputTokensDetails.CachedTokens != 800 {
		t.Errorf("usage = %+v", u)
	}
}

func TestResponsesStream(t *testing.T) {
	s := start(t, fakemodel.Script(scripted))
	stream := openaiClient(s).Responses.NewStreaming(t.Context(), responsesParams())
	var (
		text, args string
		types      []string
		final      *responses.Response
		lastSeq    int64 = -1
	)
	for stream.Next() {
		ev := stream.Current()
		if ev.SequenceNumber <= lastSeq {
			t.Errorf("sequence_number %d after %d", ev.SequenceNumber, lastSeq)
		}
		lastSeq = ev.SequenceNumber
		if len(types) == 0 || types[len(types)-1] != ev.Type {
			types = append(types, ev.Type)
		}
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
		t.Fatalf("stream: %v", err)
	}
	wantTypes := []string{
		"response.created", "response.in_progress",
		"response.output_item.added", "response.content_part.added", "response.output_text.delta",
		"response.output_text.done", "response.content_part.done", "response.output_item.done",
		"response.output_item.added", "response.function_call_arguments.delta",
		"response.function_call_arguments.done", "response.output_item.done",
		"response.completed",
	}
	if diff := cmp.Diff(wantTypes, types); diff != "" {
		t.Errorf("event order (-want +got):\n%s", diff)
	}
	if text != scripted.Text {
		t.Errorf("streamed text = %q, want %q", text, scripted.Text)
	}
	if args != planArgs {
		t.Errorf("streamed arguments = %q, want %q", args, planArgs)
	}
	if final == nil {
		t.Fatal("no response.completed")
	}
	if final.OutputText() != scripted.Text || final.Usage.InputTokens != 1200 || final.Usage.OutputTokens != 34 {
		t.Errorf("completed response text %q usage %+v", final.OutputText(), final.Usage)
	}
	if diff := cmp.Diff([]call{{"call_plan1", "update_plan", planArgs}}, functionCalls(final.Output)); diff != "" {
		t.Errorf("completed function calls (-want +got):\n%s", diff)
	}
}

func TestResponsesOpaqueCompaction(t *testing.T) {
	s := start(t, fakemodel.Static("unused"))
	c := openaiClient(s)

	t.Run("non-stream random payload", func(t *testing.T) {
		s.SetResponder(fakemodel.Script(fakemodel.Reply{Opaque: true, Text: "ignored"}))
		resp, err := c.Responses.New(t.Context(), responsesParams())
		if err != nil {
			t.Fatalf("responses: %v", err)
		}
		if len(resp.Output) != 1 || resp.Output[0].Type != "compaction" {
			t.Fatalf("output = %s, want exactly one compaction item", resp.RawJSON())
		}
		enc := resp.Output[0].AsCompaction().EncryptedContent
		if b, err := base64.StdEncoding.DecodeString(enc); err != nil || len(b) == 0 {
			t.Errorf("encrypted_content %q is not base64: %v", enc, err)
		}
		if resp.OutputText() != "" {
			t.Errorf("opaque answer carried text %q", resp.OutputText())
		}
	})

	t.Run("stream with given payload", func(t *testing.T) {
		s.SetResponder(fakemodel.Script(fakemodel.Reply{Opaque: true, EncryptedContent: "c2VjcmV0"}))
		stream := c.Responses.NewStreaming(t.Context(), responsesParams())
		var types []string
		var final responses.Response
		for stream.Next() {
			ev := stream.Current()
			types = append(types, ev.Type)
			if ev.Type == "response.completed" {
				final = ev.Response
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatalf("stream: %v", err)
		}
		want := []string{"response.created", "response.in_progress", "response.output_item.added", "response.output_item.done", "response.completed"}
		if diff := cmp.Diff(want, types); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
		if len(final.Output) != 1 || final.Output[0].AsCompaction().EncryptedContent != "c2VjcmV0" {
			t.Errorf("completed output = %s", final.RawJSON())
		}
	})

	t.Run("compact endpoint", func(t *testing.T) {
		s.SetResponder(fakemodel.Script(fakemodel.Reply{InputTokens: 500, OutputTokens: 20}))
		resp, err := c.Responses.Compact(t.Context(), responses.ResponseCompactParams{
			Model: "fake-model",
			Input: responses.ResponseCompactParamsInputUnion{OfString: openai.String("Keep PostgreSQL.")},
		})
		if err != nil {
			t.Fatalf("compact: %v", err)
		}
		if len(resp.Output) != 2 {
			t.Fatalf("output = %s, want the user message then one compaction item", resp.RawJSON())
		}
		if m := resp.Output[0].AsMessage(); resp.Output[0].Type != "message" || m.Role != "user" {
			t.Errorf("first item = %s, want the user message", resp.Output[0].RawJSON())
		}
		last := resp.Output[1]
		if last.Type != "compaction" || last.AsCompaction().EncryptedContent == "" {
			t.Errorf("last item = %s, want a compaction item", last.RawJSON())
		}
		if resp.Usage.InputTokens != 500 || resp.Usage.OutputTokens != 20 {
			t.Errorf("usage = %+v", resp.Usage)
		}
	})
}

func messageParams() anthropic.MessageNewParams {
	return anthropic.MessageNewParams{
		Model:     "claude-sonnet-4-5-20250929",
		MaxTokens: 1024,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Use PostgreSQL. Make a plan."))},
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
	var input any
	if err := json.Unmarshal([]byte(planArgs), &input); err != nil {
		t.Fatal(err)
	}
	return []block{
		{Type: "text", Text: scripted.Text},
		{Type: "tool_use", ID: "call_plan1", Name: "update_plan", Input: input},
	}
}

func TestMessagesNonStream(t *testing.T) {
	s := start(t, fakemodel.Script(scripted))
	msg, err := anthropicClient(s).Messages.New(t.Context(), messageParams())
	if err != nil {
		t.Fatalf("messages: %v", err)
	}
	if diff := cmp.Diff(wantBlocks(t), blocks(t, msg.Content)); diff != "" {
		t.Errorf("content (-want +got):\n%s", diff)
	}
	if msg.StopReason != "tool_use" || msg.Model != "claude-sonnet-4-5-20250929" {
		t.Errorf("stop_reason %q model %q", msg.StopReason, msg.Model)
	}
	u := msg.Usage
	if u.InputTokens != 1200 || u.OutputTokens != 34 || u.CacheReadInputTokens != 800 {
		t.Errorf("usage = %+v", u)
	}
}

func TestMessagesStream(t *testing.T) {
	s := start(t, fakemodel.Script(scripted))
	stream := anthropicClient(s).Messages.NewStreaming(t.Context(), messageParams())
	var msg anthropic.Message
	textDeltas := 0
	for stream.Next() {
		ev := stream.Current()
		if err := msg.Accumulate(ev); err != nil {
			t.Fatalf("accumulate %s: %v", ev.Type, err)
		}
		if ev.Type == "content_block_delta" && ev.Delta.Type == "text_delta" {
			textDeltas++
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	if textDeltas < 3 {
		t.Errorf("text came in %d deltas, want several", textDeltas)
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
}

func TestMessagesTextOnlyEndsTurn(t *testing.T) {
	s := start(t, fakemodel.Static("Done."))
	msg, err := anthropicClient(s).Messages.New(t.Context(), messageParams())
	if err != nil {
		t.Fatalf("messages: %v", err)
	}
	if msg.StopReason != "end_turn" || len(msg.Content) != 1 || msg.Content[0].Text != "Done." {
		t.Errorf("got %s", msg.RawJSON())
	}
	if msg.Usage.InputTokens <= 0 || msg.Usage.OutputTokens <= 0 {
		t.Errorf("derived usage = %+v, want positive counts", msg.Usage)
	}
}

func TestErrorStatus(t *testing.T) {
	s := start(t, fakemodel.Script(fakemodel.Reply{Status: 429, ErrorMessage: "slow down"}))

	_, err := openaiClient(s).Chat.Completions.New(t.Context(), chatParams())
	var oerr *openai.Error
	if !errors.As(err, &oerr) {
		t.Fatalf("chat error = %v, want *openai.Error", err)
	}
	if oerr.StatusCode != 429 || oerr.Message != "slow down" || oerr.Code != "rate_limit_exceeded" {
		t.Errorf("openai error = status %d message %q code %q", oerr.StatusCode, oerr.Message, oerr.Code)
	}

	s.SetResponder(fakemodel.Script(fakemodel.Reply{Status: 529, ErrorMessage: "busy"}))
	_, err = anthropicClient(s).Messages.New(t.Context(), messageParams())
	var aerr *anthropic.Error
	if !errors.As(err, &aerr) {
		t.Fatalf("messages error = %v, want *anthropic.Error", err)
	}
	if aerr.StatusCode != 529 || aerr.Type() != "overloaded_error" || aerr.Message != "busy" {
		t.Errorf("anthropic error = status %d type %q message %q", aerr.StatusCode, aerr.Type(), aerr.Message)
	}

	s.SetResponder(fakemodel.Script(fakemodel.Reply{Status: 500}))
	stream := openaiClient(s).Responses.NewStreaming(t.Context(), responsesParams())
	for stream.Next() {
		t.Errorf("unexpected event %s", stream.Current().Type)
	}
	if !errors.As(stream.Err(), &oerr) || oerr.StatusCode != 500 || oerr.Type != "server_error" {
		t.Errorf("responses stream error = %v, want 500 server_error", stream.Err())
	}
}

func TestFailMidStream(t *testing.T) {
	s := start(t, fakemodel.Script(fakemodel.Reply{Text: scripted.Text, FailMidStream: true}))

	stream := anthropicClient(s).Messages.NewStreaming(t.Context(), messageParams())
	var msg anthropic.Message
	for stream.Next() {
		_ = msg.Accumulate(stream.Current())
	}
	if stream.Err() == nil {
		t.Fatal("broken Anthropic stream ended without error")
	}
	if msg.StopReason != "" || len(msg.Content) != 1 || msg.Content[0].Text == "" || msg.Content[0].Text == scripted.Text {
		t.Errorf("want a partial text and no stop_reason, got %s", msg.RawJSON())
	}

	params := chatParams()
	cstream := openaiClient(s).Chat.Completions.NewStreaming(context.Background(), params)
	var acc openai.ChatCompletionAccumulator
	for cstream.Next() {
		acc.AddChunk(cstream.Current())
	}
	if cstream.Err() == nil {
		t.Fatal("broken chat stream ended without error")
	}
	if got := acc.Choices[0].Message.Content; got == "" || got == scripted.Text {
		t.Errorf("chat content = %q, want a strict prefix of the text", got)
	}
}

func TestChunkDelayStillDeliversEverything(t *testing.T) {
	r := scripted
	r.ChunkDelay = 1
	s := start(t, fakemodel.Script(r))
	stream := openaiClient(s).Responses.NewStreaming(t.Context(), responsesParams())
	var text string
	for stream.Next() {
		if ev := stream.Current(); ev.Type == "response.output_text.delta" {
			text += ev.Delta
		}
	}
	if stream.Err() != nil || text != scripted.Text {
		t.Errorf("text %q err %v", text, stream.Err())
	}
}
