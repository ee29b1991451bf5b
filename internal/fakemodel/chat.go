package fakemodel

import (
	"context"
	"net/http"

	"github.com/tidwall/gjson"
)

// OpenAI Chat Completions wire shapes.

type chatFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type chatToolCall struct {
	Index    *int         `json:"index,omitempty"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function chatFunction `json:"function"`
}

type chatMessage struct {
	Role      string         `json:"role"`
	Content   *string        `json:"content"`
	Refusal   *string        `json:"refusal"`
	ToolCalls []chatToolCall `json:"tool_calls,omitempty"`
}

type chatChoice struct {
	Index        int         `json:"index"`
	Message      chatMessage `json:"message"`
	Logprobs     any         `json:"logprobs"`
	FinishReason string      `json:"finish_reason"`
}

type chatUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	TotalTokens         int64 `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int64 `json:"cached_tokens"`
		AudioTokens  int64 `json:"audio_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
		AudioTokens     int64 `json:"audio_tokens"`
	} `json:"completion_tokens_details"`
}

type chatCompletion struct {
	ID                string       `json:"id"`
	Object            string       `json:"object"`
	Created           int64        `json:"created"`
	Model             string       `json:"model"`
	Choices           []chatChoice `json:"choices"`
	Usage             chatUsage    `json:"usage"`
	ServiceTier       string       `json:"service_tier"`
	SystemFingerprint string       `json:"system_fingerprint"`
}

type chatDelta struct {
	Role      string         `json:"role,omitempty"`
	Content   *string        `json:"content,omitempty"`
	ToolCalls []chatToolCall `json:"tool_calls,omitempty"`
}

type chatChunkChoice struct {
	Index        int       `json:"index"`
	Delta        chatDelta `json:"delta"`
	Logprobs     any       `json:"logprobs"`
	FinishReason *string   `json:"finish_reason"`
}

type chatChunk struct {
	ID                string            `json:"id"`
	Object            string            `json:"object"`
	Created           int64             `json:"created"`
	Model             string            `json:"model"`
	ServiceTier       string            `json:"service_tier"`
	SystemFingerprint string            `json:"system_fingerprint"`
	Choices           []chatChunkChoice `json:"choices"`
	Usage             *chatUsage        `json:"usage,omitempty"`
}

const systemFingerprint = "fp_fakemodel"

func (a *answer) chatUsage() chatUsage {
	var u chatUsage
	u.PromptTokens = a.inTokens
	u.CompletionTokens = a.outTokens
	u.TotalTokens = a.inTokens + a.outTokens
	u.PromptTokensDetails.CachedTokens = a.cacheTokens
	return u
}

func (a *answer) finishReason() string {
	if len(a.calls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

func (a *answer) chat(ctx context.Context, w http.ResponseWriter) {
	id := "chatcmpl-" + randomID()
	if !a.req.Stream() {
		msg := chatMessage{Role: "assistant"}
		if a.reply.Text != "" || len(a.calls) == 0 {
			text := a.reply.Text
			msg.Content = &text
		}
		for _, tc := range a.calls {
			msg.ToolCalls = append(msg.ToolCalls, chatToolCall{
				ID: tc.ID, Type: "function", Function: chatFunction{Name: tc.Name, Arguments: tc.Arguments},
			})
		}
		setRequestID(w.Header(), DialectChat)
		writeJSON(w, http.StatusOK, chatCompletion{
			ID: id, Object: "chat.completion", Created: a.created, Model: a.model,
			Choices:     []chatChoice{{Index: 0, Message: msg, FinishReason: a.finishReason()}},
			Usage:       a.chatUsage(),
			ServiceTier: "default", SystemFingerprint: systemFingerprint,
		})
		return
	}

	e := a.startSSE(ctx, w)
	chunk := func(d chatDelta, finish *string) chatChunk {
		return chatChunk{
			ID: id, Object: "chat.completion.chunk", Created: a.created, Model: a.model,
			ServiceTier: "default", SystemFingerprint: systemFingerprint,
			Choices: []chatChunkChoice{{Index: 0, Delta: d, FinishReason: finish}},
		}
	}
	first := chatDelta{Role: "assistant"}
	if a.reply.Text != "" || len(a.calls) == 0 {
		empty := ""
		first.Content = &empty
	}
	if !e.event("", chunk(first, nil)) {
		return
	}
	for _, part := range splitWords(a.reply.Text) {
		if !e.delta("", chunk(chatDelta{Content: &part}, nil)) {
			return
		}
	}
	for i, tc := range a.calls {
		idx := i
		start := chatToolCall{Index: &idx, ID: tc.ID, Type: "function", Function: chatFunction{Name: tc.Name}}
		if !e.event("", chunk(chatDelta{ToolCalls: []chatToolCall{start}}, nil)) {
			return
		}
		for _, part := range splitRunes(tc.Arguments, 16) {
			d := chatToolCall{Index: &idx, Function: chatFunction{Arguments: part}}
			if !e.delta("", chunk(chatDelta{ToolCalls: []chatToolCall{d}}, nil)) {
				return
			}
		}
	}
	e.beforeEnd()
	finish := a.finishReason()
	if !e.event("", chunk(chatDelta{}, &finish)) {
		return
	}
	if gjson.GetBytes(a.req.Body, "stream_options.include_usage").Bool() {
		u := a.chatUsage()
		final := chunk(chatDelta{}, nil)
		final.Choices = []chatChunkChoice{}
		final.Usage = &u
		if !e.event("", final) {
			return
		}
	}
	_ = e.raw("", []byte("[DONE]"))
}
