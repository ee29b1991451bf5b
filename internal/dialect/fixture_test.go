package dialect

import (
	"bytes"
	"strconv"
	"strings"
)

// Hand-built SSE streams in each dialect's real wire format, parameterised by
// the text deltas the model sends.

func ev(name, data string) Event { return Event{Name: name, Data: []byte(data)} }

func chatStream(deltas []string) []Event {
	head := `{"id":"chatcmpl-7","object":"chat.completion.chunk","created":1700000000,"model":"gpt-test","system_fingerprint":"fp_1","choices":[`
	out := []Event{ev("", head+`{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"usage":null}`)}
	for _, d := range deltas {
		out = append(out, ev("", head+`{"index":0,"delta":{"content":`+jsonString(d)+`},"logprobs":null,"finish_reason":null}],"usage":null}`))
	}
	out = append(out,
		ev("", head+`{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}`),
		ev("", head+`],"usage":{"prompt_tokens":120,"completion_tokens":30,"total_tokens":150,"prompt_tokens_details":{"cached_tokens":64}}}`),
		ev("", `[DONE]`),
	)
	return out
}

func responsesStream(deltas []string) []Event {
	full := strings.Join(deltas, "")
	seq := 0
	next := func() string { s := strconv.Itoa(seq); seq++; return s }
	resp := func(status, output string) string {
		return `{"id":"resp_1","object":"response","created_at":1700000000,"status":"` + status + `","model":"gpt-test","output":[` + output + `],"parallel_tool_calls":true,"tool_choice":"auto","tools":[],"usage":null}`
	}
	var out []Event
	add := func(typ, rest string) {
		out = append(out, ev(typ, `{"type":"`+typ+`",`+rest+`,"sequence_number":`+next()+`}`))
	}
	add("response.created", `"response":`+resp("in_progress", ""))
	add("response.in_progress", `"response":`+resp("in_progress", ""))
	add("response.output_item.added", `"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[],"encrypted_content":"gAAA"}`)
	add("response.output_item.done", `"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[],"encrypted_content":"gAAA"}`)
	add("response.output_item.added", `"output_index":1,"item":{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]}`)
	add("response.content_part.added", `"item_id":"msg_1","output_index":1,"content_index":0,"part":{"type":"output_text","annotations":[],"text":""}`)
	for _, d := range deltas {
		add("response.output_text.delta", `"item_id":"msg_1","output_index":1,"content_index":0,"delta":`+jsonString(d)+`,"logprobs":[],"obfuscation":"abc"`)
	}
	add("response.output_text.done", `"item_id":"msg_1","output_index":1,"content_index":0,"text":`+jsonString(full)+`,"logprobs":[]`)
	part := `{"type":"output_text","annotations":[],"logprobs":[],"text":` + jsonString(full) + `}`
	add("response.content_part.done", `"item_id":"msg_1","output_index":1,"content_index":0,"part":`+part)
	item := `{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[` + part + `]}`
	add("response.output_item.done", `"output_index":1,"item":`+item)
	completed := strings.Replace(resp("completed", `{"id":"rs_1","type":"reasoning","summary":[],"encrypted_content":"gAAA"},`+item),
		`"usage":null`, `"usage":{"input_tokens":120,"input_tokens_details":{"cached_tokens":64},"output_tokens":30,"output_tokens_details":{"reasoning_tokens":8},"total_tokens":150}`, 1)
	add("response.completed", `"response":`+completed)
	return out
}

func anthropicStream(deltas []string) []Event {
	out := []Event{
		ev("message_start", `{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":120,"cache_creation_input_tokens":7,"cache_read_input_tokens":64,"output_tokens":1}}}`),
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`),
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me think </summary>"}}`),
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig"}}`),
		ev("content_block_stop", `{"type":"content_block_stop","index":0}`),
		ev("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`),
		ev("ping", `{"type": "ping"}`),
	}
	for _, d := range deltas {
		out = append(out, ev("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":`+jsonString(d)+`}}`))
	}
	out = append(out,
		ev("content_block_stop", `{"type":"content_block_stop","index":1}`),
		ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":15}}`),
		ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":30}}`),
		ev("message_stop", `{"type":"message_stop"}`),
	)
	return out
}

func streamFor(name Name, deltas []string) []Event {
	switch name {
	case OpenAIChat:
		return chatStream(deltas)
	case OpenAIResponses:
		return responsesStream(deltas)
	default:
		return anthropicStream(deltas)
	}
}

func encodeStream(evs []Event) []byte {
	var b bytes.Buffer
	for _, e := range evs {
		if err := WriteEvent(&b, e); err != nil {
			panic(err)
		}
	}
	return b.Bytes()
}

// splitAt cuts s at the given byte offsets (clamped to rune boundaries).
func splitAt(s string, cuts []int) []string {
	var out []string
	prev := 0
	for _, c := range cuts {
		if c <= prev || c >= len(s) {
			continue
		}
		for c < len(s) && !isRuneStart(s[c]) {
			c++
		}
		if c >= len(s) || c <= prev {
			continue
		}
		out = append(out, s[prev:c])
		prev = c
	}
	return append(out, s[prev:])
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
