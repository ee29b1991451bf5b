package fakemodel

import (
	"context"
	"encoding/json"
	"net/http"
)

// Anthropic Messages wire shapes.

type msgBlock struct {
	Type string  `json:"type"`
	Text *string `json:"text,omitempty"`
	// compaction blocks
	Content          *string `json:"content,omitempty"`
	Signature        string  `json:"signature,omitempty"`
	EncryptedContent string  `json:"encrypted_content,omitempty"`

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
	// ContextManagement carries applied_edits when the reply has some.
	ContextManagement any `json:"context_management,omitempty"`
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
	// message_delta: applied context edits, when the reply has some.
	ContextManagement any `json:"context_management,omitempty"`
}

// contextManagement is the context_management value of the answer, nil
// when the reply applied no edit.
func (a *answer) contextManagement() any {
	if len(a.reply.AppliedEdits) == 0 {
		return nil
	}
	return map[string]any{"applied_edits": a.reply.AppliedEdits}
}

// compactionBlock is the reply's compaction block, nil when it has none.
func (a *answer) compactionBlock() *msgBlock {
	c := a.reply.Compaction
	if c == nil {
		return nil
	}
	content := c.Content
	return &msgBlock{Type: "compaction", Content: &content, Signature: c.Signature, EncryptedContent: c.EncryptedContent}
}

func (a *answer) stopReason() string {
	if c := a.reply.Compaction; c != nil && c.Alone {
		return "compaction"
	}
	if len(a.calls) > 0 {
		return "tool_use"
	}
	return "end_turn"
}

// msgContent is the completed content list.
func (a *answer) msgContent() []msgBlock {
	var out []msgBlock
	if cb := a.compactionBlock(); cb != nil {
		out = append(out, *cb)
		if a.reply.Compaction.Alone {
			return out
		}
	}
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
			ContextManagement: a.contextManagement(),
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
		case "compaction":
			empty := ""
			start.Content, start.EncryptedContent = &empty, ""
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
		case "compaction":
			d := map[string]any{"type": "compaction_delta", "content": *block.Content}
			if block.EncryptedContent != "" {
				d["encrypted_content"] = block.EncryptedContent
			}
			if !e.delta("content_block_delta", msgEvent{Type: "content_block_delta", Index: &idx, Delta: d}) {
				return
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
		Usage: &endUsage, ContextManagement: a.contextManagement(),
	}) {
		return
	}
	_ = e.event("message_stop", msgEvent{Type: "message_stop"})
}

// textBlocks is the number of text blocks before the tool_use blocks.
func (a *answer) textBlocks() int {
	n := 0
	if a.reply.Compaction != nil {
		n = 1
	}
	if a.reply.Text != "" || len(a.calls) == 0 {
		n++
	}
	return n
}
