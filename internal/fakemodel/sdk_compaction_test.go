package fakemodel_test

import (
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/tether-dev/tether/internal/fakemodel"
)

// The provider-side compaction shapes the fake serves decode with the
// providers' own SDKs: an Anthropic compaction block (signed, on-demand;
// readable with encrypted_content, server-side) and applied context edits,
// streamed and not; a Responses compaction output item before the message.

func betaParams() anthropic.BetaMessageNewParams {
	return anthropic.BetaMessageNewParams{
		Model:     "claude-sonnet-4-5",
		MaxTokens: 100,
		Messages:  []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock("hi"))},
		Betas:     []anthropic.AnthropicBeta{anthropic.AnthropicBetaCompact2026_09_04},
	}
}

func TestMessagesCompactionDecodes(t *testing.T) {
	cases := []struct {
		name  string
		reply fakemodel.Reply
		stop  anthropic.BetaStopReason
		n     int
	}{
		{"on-demand", fakemodel.Reply{Compaction: &fakemodel.Compaction{Content: "Summary so far.", Signature: "c2ln", Alone: true}}, "compaction", 1},
		{"server-side", fakemodel.Reply{Text: "ok", Compaction: &fakemodel.Compaction{Content: "Summary so far.", EncryptedContent: "ZW5j"},
			AppliedEdits: []fakemodel.AppliedEdit{{Type: "clear_tool_uses_20250919", ClearedToolUses: 3, ClearedInputTokens: 900}}}, "end_turn", 2},
	}
	for _, c := range cases {
		s := start(t, fakemodel.Script(c.reply))
		check := func(how string, msg *anthropic.BetaMessage) {
			t.Helper()
			if len(msg.Content) != c.n || msg.Content[0].Type != "compaction" || msg.StopReason != c.stop {
				t.Fatalf("%s %s: %d blocks, first %q, stop %q", c.name, how, len(msg.Content), msg.Content[0].Type, msg.StopReason)
			}
			cb := msg.Content[0].AsCompaction()
			want := c.reply.Compaction
			if cb.Content != want.Content || cb.Signature != want.Signature || cb.EncryptedContent != want.EncryptedContent {
				t.Errorf("%s %s: compaction block %+v, want %+v", c.name, how, cb, want)
			}
			edits := msg.ContextManagement.AppliedEdits
			if len(edits) != len(c.reply.AppliedEdits) || len(edits) == 1 && (edits[0].Type != "clear_tool_uses_20250919" || edits[0].ClearedToolUses != 3) {
				t.Errorf("%s %s: applied edits %+v", c.name, how, edits)
			}
		}
		client := anthropicClient(s)
		msg, err := client.Beta.Messages.New(t.Context(), betaParams())
		if err != nil {
			t.Fatal(err)
		}
		check("body", msg)
		stream := client.Beta.Messages.NewStreaming(t.Context(), betaParams())
		var acc anthropic.BetaMessage
		for stream.Next() {
			ev := stream.Current()
			if err := acc.Accumulate(ev); err != nil {
				t.Fatalf("accumulate %s: %v", ev.Type, err)
			}
			if ev.Type == "message_delta" {
				acc.ContextManagement = ev.ContextManagement
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		check("stream", &acc)
	}
}

func TestResponsesCompactionItemDecodes(t *testing.T) {
	s := start(t, fakemodel.Script(fakemodel.Reply{Text: "ok", Compaction: &fakemodel.Compaction{EncryptedContent: "gAAA"}}))
	params := responses.ResponseNewParams{Model: "gpt-5", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}}
	resp, err := openaiClient(s).Responses.New(t.Context(), params)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Output) != 2 || resp.Output[0].Type != "compaction" || resp.Output[0].EncryptedContent != "gAAA" || resp.Output[1].Type != "message" {
		t.Fatalf("output: %+v", resp.Output)
	}
	stream := openaiClient(s).Responses.NewStreaming(t.Context(), params)
	var types []string
	for stream.Next() {
		if ev := stream.Current(); ev.Type == "response.output_item.done" {
			types = append(types, ev.Item.Type)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(types) != 2 || types[0] != "compaction" {
		t.Errorf("streamed items: %v", types)
	}
}
