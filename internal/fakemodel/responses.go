package fakemodel

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/tidwall/gjson"
)

// OpenAI Responses wire shapes.

type respOutputText struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Annotations []any  `json:"annotations"`
	Logprobs    []any  `json:"logprobs"`
}

// respItem is one output item: message, function_call or compaction.
type respItem struct {
	ID               string           `json:"id"`
	Type             string           `json:"type"`
	Status           string           `json:"status,omitempty"`
	Role             string           `json:"role,omitempty"`
	Content          []respOutputText `json:"content,omitempty"`
	CallID           string           `json:"call_id,omitempty"`
	Name             string           `json:"name,omitempty"`
	Arguments        *string          `json:"arguments,omitempty"`
	EncryptedContent string           `json:"encrypted_content,omitempty"`
}

// MarshalJSON keeps "content" present (possibly empty) on message items, as
// the real API does, while other item types omit it.
func (it respItem) MarshalJSON() ([]byte, error) {
	type plain respItem
	if it.Type != "message" {
		return json.Marshal(plain(it))
	}
	content := it.Content
	if content == nil {
		content = []respOutputText{}
	}
	return json.Marshal(struct {
		plain
		Content []respOutputText `json:"content"`
	}{plain(it), content})
}

type respUsage struct {
	InputTokens        int64 `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int64 `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int64 `json:"total_tokens"`
}

type respObject struct {
	ID                 string     `json:"id"`
	Object             string     `json:"object"`
	CreatedAt          int64      `json:"created_at"`
	Status             string     `json:"status"`
	Background         bool       `json:"background"`
	Error              any        `json:"error"`
	IncompleteDetails  any        `json:"incomplete_details"`
	Instructions       any        `json:"instructions"`
	MaxOutputTokens    any        `json:"max_output_tokens"`
	Model              string     `json:"model"`
	Output             []respItem `json:"output"`
	ParallelToolCalls  bool       `json:"parallel_tool_calls"`
	PreviousResponseID any        `json:"previous_response_id"`
	Reasoning          any        `json:"reasoning"`
	ServiceTier        string     `json:"service_tier"`
	Store              bool       `json:"store"`
	Temperature        float64    `json:"temperature"`
	Text               any        `json:"text"`
	ToolChoice         any        `json:"tool_choice"`
	Tools              []any      `json:"tools"`
	TopP               float64    `json:"top_p"`
	Truncation         string     `json:"truncation"`
	Usage              *respUsage `json:"usage"`
	User               any        `json:"user"`
	Metadata           any        `json:"metadata"`
}

// respEvent is one streamed event; fields unused by a type are omitted.
type respEvent struct {
	Type           string          `json:"type"`
	SequenceNumber int             `json:"sequence_number"`
	Response       *respObject     `json:"response,omitempty"`
	OutputIndex    *int            `json:"output_index,omitempty"`
	ItemID         string          `json:"item_id,omitempty"`
	ContentIndex   *int            `json:"content_index,omitempty"`
	Item           *respItem       `json:"item,omitempty"`
	Part           *respOutputText `json:"part,omitempty"`
	Delta          *string         `json:"delta,omitempty"`
	Text           *string         `json:"text,omitempty"`
	Name           string          `json:"name,omitempty"`
	Arguments      *string         `json:"arguments,omitempty"`
	Logprobs       []any           `json:"logprobs,omitempty"`
}

func (a *answer) respUsage() *respUsage {
	u := &respUsage{InputTokens: a.inTokens, OutputTokens: a.outTokens, TotalTokens: a.inTokens + a.outTokens}
	u.InputTokensDetails.CachedTokens = a.cacheTokens
	return u
}

func (a *answer) compactionItem() respItem {
	enc := a.reply.EncryptedContent
	if c := a.reply.Compaction; c != nil && c.EncryptedContent != "" {
		enc = c.EncryptedContent
	}
	if enc == "" {
		enc = randomBase64(96)
	}
	return respItem{ID: "cmp_" + randomID(), Type: "compaction", EncryptedContent: enc}
}

// respOutput is the completed output list.
func (a *answer) respOutput() []respItem {
	if a.reply.Opaque {
		return []respItem{a.compactionItem()}
	}
	var out []respItem
	if a.reply.Compaction != nil {
		out = append(out, a.compactionItem())
	}
	if a.reply.Text != "" || len(a.calls) == 0 {
		out = append(out, respItem{
			ID: "msg_" + randomID(), Type: "message", Status: "completed", Role: "assistant",
			Content: []respOutputText{{Type: "output_text", Text: a.reply.Text, Annotations: []any{}, Logprobs: []any{}}},
		})
	}
	for _, tc := range a.calls {
		args := tc.Arguments
		out = append(out, respItem{
			ID: "fc_" + randomID(), Type: "function_call", Status: "completed",
			CallID: tc.ID, Name: tc.Name, Arguments: &args,
		})
	}
	return out
}

func (a *answer) respObject(id, status string, output []respItem, usage *respUsage) *respObject {
	body := a.req.Body
	toolChoice := any("auto")
	if tc := gjson.GetBytes(body, "tool_choice"); tc.Exists() {
		toolChoice = json.RawMessage(tc.Raw)
	}
	tools := []any{}
	if t := gjson.GetBytes(body, "tools"); t.IsArray() {
		tools = []any{}
		for _, v := range t.Array() {
			tools = append(tools, json.RawMessage(v.Raw))
		}
	}
	var instructions any
	if in := gjson.GetBytes(body, "instructions"); in.Exists() {
		instructions = json.RawMessage(in.Raw)
	}
	parallel := true
	if p := gjson.GetBytes(body, "parallel_tool_calls"); p.Exists() {
		parallel = p.Bool()
	}
	if output == nil {
		output = []respItem{}
	}
	return &respObject{
		ID: id, Object: "response", CreatedAt: a.created, Status: status,
		Instructions: instructions, Model: a.model, Output: output,
		ParallelToolCalls: parallel,
		Reasoning:         map[string]any{"effort": nil, "summary": nil},
		ServiceTier:       "default",
		Store:             gjson.GetBytes(body, "store").Bool(),
		Temperature:       1, TopP: 1,
		Text:       map[string]any{"format": map[string]any{"type": "text"}, "verbosity": "medium"},
		ToolChoice: toolChoice, Tools: tools, Truncation: "disabled",
		Usage: usage, Metadata: map[string]any{},
	}
}

// compactBody is the unary answer of POST /v1/responses/compact: the
// request's user messages, then one compaction item.
func (a *answer) compactBody() any {
	output := []any{}
	input := gjson.GetBytes(a.req.Body, "input")
	if input.Type == gjson.String {
		output = append(output, map[string]any{
			"type": "message", "role": "user",
			"content": []any{map[string]any{"type": "input_text", "text": input.String()}},
		})
	}
	for _, it := range input.Array() {
		if it.Get("role").String() == "user" && it.Get("type").String() != "function_call_output" {
			output = append(output, json.RawMessage(it.Raw))
		}
	}
	output = append(output, a.compactionItem())
	return map[string]any{
		"id":         "resp_" + randomID(),
		"object":     "response.compaction",
		"created_at": a.created,
		"output":     output,
		"usage":      a.respUsage(),
	}
}

func (a *answer) responses(ctx context.Context, w http.ResponseWriter) {
	id := "resp_" + randomID()
	output := a.respOutput()
	if !a.req.Stream() {
		setRequestID(w.Header(), DialectResponses)
		writeJSON(w, http.StatusOK, a.respObject(id, "completed", output, a.respUsage()))
		return
	}

	e := a.startSSE(ctx, w)
	seq := 0
	send := func(ev respEvent, isDelta bool) bool {
		ev.SequenceNumber = seq
		seq++
		if isDelta {
			return e.delta(ev.Type, ev)
		}
		return e.event(ev.Type, ev)
	}
	if !send(respEvent{Type: "response.created", Response: a.respObject(id, "in_progress", nil, nil)}, false) ||
		!send(respEvent{Type: "response.in_progress", Response: a.respObject(id, "in_progress", nil, nil)}, false) {
		return
	}
	for i, item := range output {
		idx := i
		var ok bool
		switch item.Type {
		case "message":
			ok = a.streamMessageItem(send, idx, item)
		case "function_call":
			ok = a.streamFunctionCall(send, idx, item)
		default:
			ok = send(respEvent{Type: "response.output_item.added", OutputIndex: &idx, Item: &item}, false) &&
				send(respEvent{Type: "response.output_item.done", OutputIndex: &idx, Item: &item}, false)
		}
		if !ok {
			return
		}
	}
	e.beforeEnd()
	_ = send(respEvent{Type: "response.completed", Response: a.respObject(id, "completed", output, a.respUsage())}, false)
}

type respSend func(ev respEvent, isDelta bool) bool

func (a *answer) streamMessageItem(send respSend, idx int, done respItem) bool {
	zero := 0
	added := done
	added.Status = "in_progress"
	added.Content = nil
	emptyPart := respOutputText{Type: "output_text", Text: "", Annotations: []any{}, Logprobs: []any{}}
	if !send(respEvent{Type: "response.output_item.added", OutputIndex: &idx, Item: &added}, false) ||
		!send(respEvent{Type: "response.content_part.added", ItemID: done.ID, OutputIndex: &idx, ContentIndex: &zero, Part: &emptyPart}, false) {
		return false
	}
	for _, part := range splitWords(a.reply.Text) {
		if !send(respEvent{Type: "response.output_text.delta", ItemID: done.ID, OutputIndex: &idx, ContentIndex: &zero, Delta: &part, Logprobs: []any{}}, true) {
			return false
		}
	}
	text := a.reply.Text
	fullPart := done.Content[0]
	return send(respEvent{Type: "response.output_text.done", ItemID: done.ID, OutputIndex: &idx, ContentIndex: &zero, Text: &text, Logprobs: []any{}}, false) &&
		send(respEvent{Type: "response.content_part.done", ItemID: done.ID, OutputIndex: &idx, ContentIndex: &zero, Part: &fullPart}, false) &&
		send(respEvent{Type: "response.output_item.done", OutputIndex: &idx, Item: &done}, false)
}

func (a *answer) streamFunctionCall(send respSend, idx int, done respItem) bool {
	added := done
	added.Status = "in_progress"
	empty := ""
	added.Arguments = &empty
	if !send(respEvent{Type: "response.output_item.added", OutputIndex: &idx, Item: &added}, false) {
		return false
	}
	for _, part := range splitRunes(*done.Arguments, 16) {
		if !send(respEvent{Type: "response.function_call_arguments.delta", ItemID: done.ID, OutputIndex: &idx, Delta: &part}, true) {
			return false
		}
	}
	return send(respEvent{Type: "response.function_call_arguments.done", ItemID: done.ID, OutputIndex: &idx, Name: done.Name, Arguments: done.Arguments}, false) &&
		send(respEvent{Type: "response.output_item.done", OutputIndex: &idx, Item: &done}, false)
}
