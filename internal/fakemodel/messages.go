package fakemodel

import (
	"context"
	"encoding/json"
	"net/http"
)

// Anthropic Messages wire shapes.

type msgBlock struct {
	Type  string          `json:"type"`
	Text  *string         `json:"text,omitempty"`
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
}

type msgUsage struct {
	InputTokens              int64  `json:"input_tokens"`
	CacheCreationInputTokens int64  `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64  `json:"cache_read_input_tokens"`
	OutputTokens             int64  `json:"output_tokens"`
	ServiceTier              string `json:"service_tier,omitempty"`
}

type msgObject struct {
	ID           string     `json:"id"`
	Type         string     `json:"type"`
	Role         string     `json:"role"`
	Model        string     `json:"model"`
	Content      []msgBlock `json:"content"`
	StopReason   *string    `json:"stop_reason"`
	StopSequence *string    `json:"stop_sequence"`
	Usage        msgUsage   `json:"usage"`
}

type msgDelta struct {
	Type        string  `json:"type,omitempty"`
	Text        *string `json:"text,omitempty"`
	PartialJSON *string `json:"partial_json,omitempty"`
}

type msgEvent struct {
	Type         string     `json:"type"`
	Message      *msgObject `json:"message,omitempty"`
	Index        *int       `json:"index,omitempty"`
	ContentBlock *msgBlock  `json:"content_block,omitempty"`
	Delta        any        `json:"delta,omitempty"`
	Usage        *msgUsage  `json:"usage,omitempty"`
}

func (a *answer) stopReason() string {
	if len(a.calls) > 0 {
		return "tool_use"
	}
	return "end_turn"
}

// msgContent is the completed content list.
func (a *answer) msgContent() []msgBlock {
	var out []msgBlock
	if a.reply.Text != "" || len(a.calls) == 0 {
		text := a.reply.Text
		out = append(out, msgBlock{Type: "text", Text: &text})
	}
	for _, tc := range a.calls {
		input := json.RawMessage(tc.Arguments)
		if !json.Valid(input) {
			input = json.RawMessage("{}")
		}
		out = append(out, msgBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: input})
	}
	return out
}

func (a *answer) msgUsage() msgUsage {
	return msgUsage{
		InputTokens:          a.inTokens,
		CacheReadInputTokens: a.cacheTokens,
		OutputTokens:         a.outTokens,
		ServiceTier:          "standard",
	}
}

func (a *answer) messages(ctx context.Context, w http.ResponseWriter) {
	id := "msg_" + randomID()
	if !a.req.Stream() {
		stop := a.stopReason()
		setRequestID(w.Header(), DialectMessages)
		writeJSON(w, http.StatusOK, msgObject{
			ID: id, Type: "message", Role: "assistant", Model: a.model,
			Content: a.msgContent(), StopReason: &stop, Usage: a.msgUsage(),
		})
		return
	}

	e := a.startSSE(ctx, w)
	startUsage := a.msgUsage()
	startUsage.OutputTokens = 1
	if !e.event("message_start", msgEvent{Type: "message_start", Message: &msgObject{
		ID: id, Type: "message", Role: "assistant", Model: a.model,
		Content: []msgBlock{}, Usage: startUsage,
	}}) || !e.event("ping", msgEvent{Type: "ping"}) {
		return
	}
	for i, block := range a.msgContent() {
		idx := i
		start := block
		switch block.Type {
		case "text":
			empty := ""
			start.Text = &empty
		case "tool_use":
			start.Input = json.RawMessage("{}")
		}
		if !e.event("content_block_start", msgEvent{Type: "content_block_start", Index: &idx, ContentBlock: &start}) {
			return
		}
		switch block.Type {
		case "text":
			for _, part := range splitWords(*block.Text) {
				d := msgDelta{Type: "text_delta", Text: &part}
				if !e.delta("content_block_delta", msgEvent{Type: "content_block_delta", Index: &idx, Delta: d}) {
					return
				}
			}
		case "tool_use":
			// The raw arguments are streamed even when they are not valid
			// JSON, so malformed tool input reaches the client as sent.
			for _, part := range splitRunes(a.calls[idx-a.textBlocks()].Arguments, 16) {
				d := msgDelta{Type: "input_json_delta", PartialJSON: &part}
				if !e.delta("content_block_delta", msgEvent{Type: "content_block_delta", Index: &idx, Delta: d}) {
					return
				}
			}
		}
		if !e.event("content_block_stop", msgEvent{Type: "content_block_stop", Index: &idx}) {
			return
		}
	}
	e.beforeEnd()
	stop := a.stopReason()
	endUsage := a.msgUsage()
	endUsage.ServiceTier = ""
	if !e.event("message_delta", msgEvent{
		Type:  "message_delta",
		Delta: map[string]any{"stop_reason": stop, "stop_sequence": nil},
		Usage: &endUsage,
	}) {
		return
	}
	_ = e.event("message_stop", msgEvent{Type: "message_stop"})
}

// textBlocks is the number of text blocks before the tool_use blocks.
func (a *answer) textBlocks() int {
	if a.reply.Text != "" || len(a.calls) == 0 {
		return 1
	}
	return 0
}
