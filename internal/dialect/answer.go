package dialect

import (
	"bytes"

	"github.com/tidwall/gjson"
)

// What an answer shows of the provider's own context handling: the types of
// its Anthropic content blocks or its Responses output items (a
// "compaction" block or item when the provider compacted). Read by the
// compaction rules on answers; types only, never content.

// AnswerPartTypes returns the type of each content block (Anthropic
// Messages) or output item (OpenAI Responses) of a non-streamed answer.
func AnswerPartTypes(name Name, body []byte) []string {
	var path string
	switch name {
	case AnthropicMessages:
		path = "content.#.type"
	case OpenAIResponses:
		path = "output.#.type"
	default:
		return nil
	}
	return stringsOf(gjson.GetBytes(body, path))
}

// EventPartTypes returns the types of the content blocks or output items
// one stream event opens or completes: Anthropic content_block_start,
// Responses response.output_item.added / .done and the output of
// response.completed.
func EventPartTypes(name Name, ev Event) []string {
	switch name {
	case AnthropicMessages:
		if !bytes.Contains(ev.Data, []byte(`"content_block_start"`)) {
			return nil
		}
		if t := gjson.GetBytes(ev.Data, "content_block.type"); t.Type == gjson.String {
			return []string{t.String()}
		}
	case OpenAIResponses:
		switch gjson.GetBytes(ev.Data, "type").String() {
		case "response.output_item.added", "response.output_item.done":
			if t := gjson.GetBytes(ev.Data, "item.type"); t.Type == gjson.String {
				return []string{t.String()}
			}
		case "response.completed":
			return stringsOf(gjson.GetBytes(ev.Data, "response.output.#.type"))
		}
	}
	return nil
}

// FirstPartTypes returns the types of what leads a request's history: the
// content blocks of the first Anthropic message, or the type of the first
// Responses input item. Anthropic's on-demand compaction puts its signed
// block there.
func FirstPartTypes(v *View) []string {
	if v.idx.conv < 0 || len(v.idx.items) == 0 {
		return nil
	}
	first := v.item(0) // from the index: nothing else of the body is read
	switch v.Dialect() {
	case AnthropicMessages:
		return stringsOf(first.Get("content.#.type"))
	case OpenAIResponses:
		if !first.IsObject() {
			return nil
		}
		return []string{responsesItemType(first)}
	}
	return nil
}

func stringsOf(r gjson.Result) []string {
	var out []string
	r.ForEach(func(_, el gjson.Result) bool {
		if el.Type == gjson.String {
			out = append(out, el.String())
		}
		return true
	})
	return out
}

// AfterCachedPrefix returns where, in an Anthropic request's messages, a
// message can go without changing what the provider may have cached: just
// after the last message that carries a cache_control breakpoint, or
// before the final message when none does (every earlier message stays a
// stable prefix).
func AfterCachedPrefix(v *View) int {
	items := v.Items()
	for i := len(items) - 1; i >= 0; i-- {
		if bytes.Contains(items[i], []byte(`"cache_control"`)) {
			return i + 1
		}
	}
	return max(len(items)-1, 0)
}
