package dialect

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// serveMerged serves the merged form of in as an SSE response.
func serveMerged(t *testing.T, name Name, in []Event, anchor string) (*httptest.Server, *TextMerger) {
	t.Helper()
	m := NewTextMerger(name, testBlock, anchor)
	body := encodeStream(runMerger(m, in))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv, m
}

func checkSDKText(t *testing.T, got, deltas string, m *TextMerger, want string) {
	t.Helper()
	if got != want {
		t.Errorf("SDK final text:\n%q\nwant\n%q", got, want)
	}
	if deltas != got {
		t.Errorf("SDK deltas %q != final text %q", deltas, got)
	}
	if m.Text() != got {
		t.Errorf("Text() = %q, SDK saw %q", m.Text(), got)
	}
	if n := strings.Count(got, "<continuity-capsule"); n != 1 {
		t.Errorf("%d blocks in the final text", n)
	}
}

var sdkDeltas = []string{"<analysis>x</analysis>\n<sum", "mary>Use PostgreSQL. <continuity-", "capsule revision=\"3\">old</continuity-capsule>", "Next: schema.</summ", "ary>"}

func TestSDKChatAccumulator(t *testing.T) {
	srv, m := serveMerged(t, OpenAIChat, chatStream(sdkDeltas), "</summary>")
	client := openai.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("k"), option.WithMaxRetries(0))
	stream := client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model:    "gpt-test",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	})
	var acc openai.ChatCompletionAccumulator
	var deltas strings.Builder
	for stream.Next() {
		c := stream.Current()
		acc.AddChunk(c)
		if len(c.Choices) > 0 {
			deltas.WriteString(c.Choices[0].Delta.Content)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	checkSDKText(t, acc.Choices[0].Message.Content, deltas.String(), m, MergeText(strings.Join(sdkDeltas, ""), testBlock, "</summary>"))
	if acc.Usage.PromptTokens != 120 {
		t.Errorf("usage lost: %+v", acc.Usage)
	}
}

func TestSDKResponsesEvents(t *testing.T) {
	srv, m := serveMerged(t, OpenAIResponses, responsesStream(sdkDeltas), "")
	client := openai.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("k"), option.WithMaxRetries(0))
	stream := client.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{
		Model: "gpt-test",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")},
	})
	var deltas strings.Builder
	var final, done string
	last := int64(-1)
	for stream.Next() {
		e := stream.Current()
		if e.SequenceNumber <= last {
			t.Errorf("%s: sequence_number %d after %d", e.Type, e.SequenceNumber, last)
		}
		last = e.SequenceNumber
		switch e.Type {
		case "response.output_text.delta":
			deltas.WriteString(e.Delta)
		case "response.output_text.done":
			done = e.Text
		case "response.completed":
			final = e.Response.OutputText()
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	want := MergeText(strings.Join(sdkDeltas, ""), testBlock, "")
	checkSDKText(t, final, deltas.String(), m, want)
	if done != want {
		t.Errorf("output_text.done text = %q", done)
	}
}

func TestSDKAnthropicAccumulate(t *testing.T) {
	srv, m := serveMerged(t, AnthropicMessages, anthropicStream(sdkDeltas), "</summary>")
	client := anthropic.NewClient(aoption.WithBaseURL(srv.URL), aoption.WithAPIKey("k"), aoption.WithMaxRetries(0))
	stream := client.Messages.NewStreaming(context.Background(), anthropic.MessageNewParams{
		Model:     "claude-test",
		MaxTokens: 100,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
	})
	var msg anthropic.Message
	var deltas strings.Builder
	for stream.Next() {
		e := stream.Current()
		if err := msg.Accumulate(e); err != nil {
			t.Fatal(err)
		}
		if e.Type == "content_block_delta" && e.Delta.Type == "text_delta" {
			deltas.WriteString(e.Delta.Text)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, b := range msg.Content {
		if b.Type == "text" {
			text.WriteString(b.Text)
		}
	}
	checkSDKText(t, text.String(), deltas.String(), m, MergeText(strings.Join(sdkDeltas, ""), testBlock, "</summary>"))
	if msg.Usage.InputTokens != 120 || msg.Usage.OutputTokens != 30 {
		t.Errorf("usage = %+v", msg.Usage)
	}
}
