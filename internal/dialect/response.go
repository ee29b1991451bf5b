package dialect

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// ErrNoText is returned by EditResponseText for a response without any text
// part (tool calls only, opaque compaction, ...).
var ErrNoText = errors.New("response has no text part")

// textPaths returns the gjson paths of the string values that make up the
// assistant's answer text in a non-streamed response body, in order.
func textPaths(name Name, body []byte) []string {
	var paths []string
	switch name {
	case OpenAIChat:
		if c := gjson.GetBytes(body, "choices.0.message.content"); c.Type == gjson.String {
			paths = append(paths, "choices.0.message.content")
		}
	case OpenAIResponses:
		i := 0
		gjson.GetBytes(body, "output").ForEach(func(_, item gjson.Result) bool {
			if item.Get("type").String() == "message" {
				j := 0
				item.Get("content").ForEach(func(_, part gjson.Result) bool {
					if part.Get("type").String() == "output_text" {
						paths = append(paths, "output."+strconv.Itoa(i)+".content."+strconv.Itoa(j)+".text")
					}
					j++
					return true
				})
			}
			i++
			return true
		})
	case Gemini:
		paths = geminiTextPaths(body)
	case AnthropicMessages:
		i := 0
		gjson.GetBytes(body, "content").ForEach(func(_, b gjson.Result) bool {
			if b.Get("type").String() == "text" {
				paths = append(paths, "content."+strconv.Itoa(i)+".text")
			}
			i++
			return true
		})
	}
	return paths
}

// ResponseText returns the assistant's final text of a non-streamed response
// body: Chat choices[0].message.content; Responses the output_text parts of
// the message items (or the top-level output_text when there are none);
// Anthropic the text blocks of content. Parts are concatenated as they are.
func ResponseText(name Name, body []byte) string {
	paths := textPaths(name, body)
	if len(paths) == 0 && name == OpenAIResponses {
		return gjson.GetBytes(body, "output_text").String()
	}
	var b strings.Builder
	for _, p := range paths {
		b.WriteString(gjson.GetBytes(body, p).String())
	}
	return b.String()
}

// EditResponseText rewrites the answer text of a non-streamed response body.
// edit receives the full text. If its result extends the full text, the
// extension is appended to the last text part; otherwise the whole result
// goes into the first text part and the others are emptied. A Responses
// top-level output_text, if present, is kept equal to the new text.
func EditResponseText(name Name, body []byte, edit func(string) string) ([]byte, error) {
	if !Valid(body) {
		return nil, fmt.Errorf("edit response text: %w", ErrInvalidJSON)
	}
	paths := textPaths(name, body)
	if len(paths) == 0 {
		return nil, fmt.Errorf("edit %s response text: %w", name, ErrNoText)
	}
	full := ResponseText(name, body)
	next := edit(full)
	if next == full {
		return body, nil
	}
	var err error
	if suffix, ok := strings.CutPrefix(next, full); ok {
		last := paths[len(paths)-1]
		if body, err = setString(body, last, gjson.GetBytes(body, last).String()+suffix); err != nil {
			return nil, fmt.Errorf("edit response text: %w", err)
		}
	} else {
		for i, p := range paths {
			s := ""
			if i == 0 {
				s = next
			}
			if body, err = setString(body, p, s); err != nil {
				return nil, fmt.Errorf("edit response text: %w", err)
			}
		}
	}
	if name == OpenAIResponses && gjson.GetBytes(body, "output_text").Type == gjson.String {
		if body, err = setString(body, "output_text", next); err != nil {
			return nil, fmt.Errorf("edit response text: %w", err)
		}
	}
	return body, nil
}

// ResponseHasOpaqueCompaction reports whether a Responses body carries an
// opaque (encrypted) compaction item in its output.
func ResponseHasOpaqueCompaction(name Name, body []byte) bool {
	if name != OpenAIResponses {
		return false
	}
	found := false
	gjson.GetBytes(body, "output").ForEach(func(_, item gjson.Result) bool {
		found = item.Get("type").String() == "compaction"
		return !found
	})
	return found
}

// ResponseToolInput returns the arguments of the first call to the named tool
// in a non-streamed response body, as a JSON object: an Anthropic tool_use
// block's input, or a Chat tool call's arguments (decoded from their JSON
// string). It returns nil when there is no such call.
func ResponseToolInput(name Name, body []byte, tool string) []byte {
	var out []byte
	switch name {
	case AnthropicMessages:
		gjson.GetBytes(body, "content").ForEach(func(_, b gjson.Result) bool {
			if b.Get("type").String() == "tool_use" && b.Get("name").String() == tool {
				if in := b.Get("input"); in.IsObject() {
					out = []byte(in.Raw)
				}
				return false
			}
			return true
		})
	case OpenAIChat:
		gjson.GetBytes(body, "choices.0.message.tool_calls").ForEach(func(_, c gjson.Result) bool {
			if c.Get("function.name").String() == tool {
				if a := c.Get("function.arguments"); a.Type == gjson.String && Valid([]byte(a.String())) && gjson.Parse(a.String()).IsObject() {
					out = []byte(a.String())
				}
				return false
			}
			return true
		})
	}
	return out
}
