package dialect

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// Errors returned by the body edits.
var (
	ErrNoUserMessage = errors.New("no user message to edit")
	ErrBadIndex      = errors.New("message index out of range")
	ErrBadShape      = errors.New("body does not have the dialect's shape")
)

// AppendSystemText adds text to the system prompt of a request body and
// returns the new body; bytes outside the edited value are left as they are.
//
// Anthropic: a string system gets "\n\n"+text, a block list gets a trailing
// text block, an absent system is set to text. Chat Completions: a leading
// system/developer message gets "\n\n"+text (or a text part), otherwise a
// system message is inserted first. Responses: "instructions" gets
// "\n\n"+text if present; otherwise a leading system/developer input item
// gets an input_text part; otherwise a developer message is inserted first.
func AppendSystemText(name Name, body []byte, text string) ([]byte, error) {
	if !Valid(body) {
		return nil, fmt.Errorf("append system text: %w", ErrInvalidJSON)
	}
	switch name {
	case AnthropicMessages:
		sys := gjson.GetBytes(body, "system")
		switch {
		case !sys.Exists() || sys.Type == gjson.Null:
			return setString(body, "system", text)
		case sys.Type == gjson.String:
			return setString(body, "system", sys.String()+"\n\n"+text)
		case sys.IsArray():
			return setRaw(body, "system.-1", textBlock("text", text))
		}
		return nil, fmt.Errorf("append system text: system is %s: %w", sys.Type, ErrBadShape)
	case OpenAIChat:
		first := gjson.GetBytes(body, "messages.0")
		if r := first.Get("role").String(); r == "system" || r == "developer" {
			return appendToContent(body, "messages.0.content", text, "text")
		}
		if !gjson.GetBytes(body, "messages").IsArray() {
			return nil, fmt.Errorf("append system text: messages: %w", ErrBadShape)
		}
		return insertAt(body, "messages", 0, chatMessageJSON("system", text))
	case OpenAIResponses:
		if ins := gjson.GetBytes(body, "instructions"); ins.Type == gjson.String && ins.String() != "" {
			return setString(body, "instructions", ins.String()+"\n\n"+text)
		}
		body, err := responsesInputArray(body)
		if err != nil {
			return nil, fmt.Errorf("append system text: %w", err)
		}
		first := gjson.GetBytes(body, "input.0")
		if r := first.Get("role").String(); (r == "system" || r == "developer") && responsesItemType(first) == "message" {
			return appendToContent(body, "input.0.content", text, "input_text")
		}
		return insertAt(body, "input", 0, responsesMessageJSON("developer", text))
	case Gemini:
		out, err := geminiAppendSystem(body, text)
		if err != nil {
			return nil, fmt.Errorf("append system text: %w", err)
		}
		return out, nil
	}
	return nil, fmt.Errorf("append system text: %w", ErrUnknownDialect)
}

// AppendToLastUser appends text to the last user-role message: string
// content becomes content+"\n\n"+text, part lists get a trailing text part
// (Responses: input_text). It returns ErrNoUserMessage if there is none.
func AppendToLastUser(name Name, body []byte, text string) ([]byte, error) {
	if !Valid(body) {
		return nil, fmt.Errorf("append to last user message: %w", ErrInvalidJSON)
	}
	arrPath, partType := "messages", "text"
	if name == OpenAIResponses {
		arrPath, partType = "input", "input_text"
		if in := gjson.GetBytes(body, "input"); in.Type == gjson.String {
			return setString(body, "input", in.String()+"\n\n"+text)
		}
	} else if name == Gemini {
		arrPath = "contents"
	} else if name != OpenAIChat && name != AnthropicMessages {
		return nil, fmt.Errorf("append to last user message: %w", ErrUnknownDialect)
	}
	items := gjson.GetBytes(body, arrPath).Array()
	for i := len(items) - 1; i >= 0; i-- {
		if name == Gemini && isUserItem(name, items[i]) {
			path := arrPath + "." + strconv.Itoa(i) + ".parts"
			if !items[i].Get("parts").IsArray() {
				return setRaw(body, path, "["+geminiTextJSON(text)+"]")
			}
			return setRaw(body, path+".-1", geminiTextJSON(text))
		}
		if isUserItem(name, items[i]) {
			return appendToContent(body, arrPath+"."+strconv.Itoa(i)+".content", text, partType)
		}
	}
	return nil, fmt.Errorf("append to last user message: %w", ErrNoUserMessage)
}

// InsertMessageBefore inserts a plain text message with role at index of the
// messages / input array (index == length appends). For Responses the item
// is a message with an input_text part (output_text for the assistant role).
func InsertMessageBefore(name Name, body []byte, index int, role, text string) ([]byte, error) {
	if !Valid(body) {
		return nil, fmt.Errorf("insert message: %w", ErrInvalidJSON)
	}
	var arrPath, item string
	switch name {
	case OpenAIChat, AnthropicMessages:
		arrPath, item = "messages", chatMessageJSON(role, text)
	case OpenAIResponses:
		var err error
		if body, err = responsesInputArray(body); err != nil {
			return nil, fmt.Errorf("insert message: %w", err)
		}
		arrPath, item = "input", responsesMessageJSON(role, text)
	case Gemini:
		arrPath, item = "contents", geminiContentJSON(role, text)
	default:
		return nil, fmt.Errorf("insert message: %w", ErrUnknownDialect)
	}
	return insertAt(body, arrPath, index, item)
}

// responsesInputArray turns a string "input" into its one-message array form.
func responsesInputArray(body []byte) ([]byte, error) {
	in := gjson.GetBytes(body, "input")
	switch {
	case in.IsArray():
		return body, nil
	case in.Type == gjson.String:
		return setRaw(body, "input", "["+chatMessageJSON("user", in.String())+"]")
	case !in.Exists():
		return setRaw(body, "input", "[]")
	}
	return nil, fmt.Errorf("input is %s: %w", in.Type, ErrBadShape)
}

// appendToContent appends text to the content value at path: a string gets
// "\n\n"+text, an array gets a {"type":partType,"text":text} part, a null or
// absent content is set to text.
func appendToContent(body []byte, path, text, partType string) ([]byte, error) {
	c := gjson.GetBytes(body, path)
	switch {
	case c.Type == gjson.String:
		return setString(body, path, c.String()+"\n\n"+text)
	case c.IsArray():
		return setRaw(body, path+".-1", textBlock(partType, text))
	case !c.Exists() || c.Type == gjson.Null:
		return setString(body, path, text)
	}
	return nil, fmt.Errorf("append to %s: content is %s: %w", path, c.Type, ErrBadShape)
}

// insertAt inserts the raw JSON item at index of the array at arrPath,
// splicing bytes so everything else stays byte-identical.
func insertAt(body []byte, arrPath string, index int, item string) ([]byte, error) {
	arr := gjson.GetBytes(body, arrPath)
	if !arr.IsArray() {
		return nil, fmt.Errorf("insert into %s: %w", arrPath, ErrBadShape)
	}
	n := int(arr.Get("#").Int())
	if index < 0 || index > n {
		return nil, fmt.Errorf("insert into %s at %d of %d: %w", arrPath, index, n, ErrBadIndex)
	}
	if index == n {
		return setRaw(body, arrPath+".-1", item)
	}
	elem := gjson.GetBytes(body, arrPath+"."+strconv.Itoa(index))
	if elem.Index <= 0 || elem.Index >= len(body) || body[elem.Index] != elem.Raw[0] {
		// Position unknown: rebuild just this array.
		items := arr.Array()
		raw := []byte{'['}
		for i, it := range items {
			if i == index {
				raw = append(raw, item...)
				raw = append(raw, ',')
			}
			raw = append(raw, it.Raw...)
			if i < len(items)-1 {
				raw = append(raw, ',')
			}
		}
		raw = append(raw, ']')
		return setRaw(body, arrPath, string(raw))
	}
	out := make([]byte, 0, len(body)+len(item)+1)
	out = append(out, body[:elem.Index]...)
	out = append(out, item...)
	out = append(out, ',')
	out = append(out, body[elem.Index:]...)
	return out, nil
}

func setString(body []byte, path, s string) ([]byte, error) {
	return setRaw(body, path, jsonString(s))
}

func setRaw(body []byte, path, raw string) ([]byte, error) {
	out, err := sjson.SetRawBytes(body, path, []byte(raw))
	if err != nil {
		return nil, fmt.Errorf("set %s: %w", path, err)
	}
	return out, nil
}

// jsonString encodes s as a JSON string without HTML escaping, so tags such
// as <summary> stay readable on the wire.
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

func textBlock(typ, text string) string {
	return `{"type":` + jsonString(typ) + `,"text":` + jsonString(text) + `}`
}

func chatMessageJSON(role, text string) string {
	return `{"role":` + jsonString(role) + `,"content":` + jsonString(text) + `}`
}

func responsesMessageJSON(role, text string) string {
	part := "input_text"
	if role == "assistant" {
		part = "output_text"
	}
	return `{"type":"message","role":` + jsonString(role) + `,"content":[` + textBlock(part, text) + `]}`
}

// RewriteStrings calls fn, in document order, for the decoded value of every
// JSON string in body whose raw bytes (quotes included) satisfy match, and
// writes back what fn returns; bytes outside the changed strings are left
// as they are. match sees the whole body first: false there means no string
// can match and body is returned as it is. It returns body itself when
// nothing changed. A body that is not valid JSON is an ErrBadShape. Strings
// inside a provider's compaction block or item (ProviderSpans) are never
// passed to fn: the provider signs or encrypts their bytes.
func RewriteStrings(body []byte, match func(raw []byte) bool, fn func(string) string) ([]byte, error) {
	if !match(body) {
		return body, nil
	}
	if !json.Valid(body) {
		return nil, ErrBadShape
	}
	signed := ProviderSpans(body)
	var out []byte
	last := 0
	for i := 0; i < len(body); i++ {
		if body[i] != '"' {
			continue
		}
		end := stringEnd(body, i)
		lit := body[i:end]
		if match(lit) && !inSpans(signed, i) {
			var s string
			if err := json.Unmarshal(lit, &s); err != nil {
				return nil, fmt.Errorf("%w: %v", ErrBadShape, err)
			}
			if r := fn(s); r != s {
				out = append(out, body[last:i]...)
				out = append(out, jsonString(r)...)
				last = end
			}
		}
		i = end - 1
	}
	if out == nil {
		return body, nil
	}
	return append(out, body[last:]...), nil
}

// stringEnd returns the index just past the JSON string literal that starts
// at body[i] (a quote).
func stringEnd(body []byte, i int) int {
	for j := i + 1; j < len(body); j++ {
		switch body[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(body)
}

// ProviderSpans returns the byte ranges of a request body that hold a
// provider's compaction: Anthropic {"type":"compaction"} content blocks of
// messages, OpenAI Responses {"type":"compaction"} input items. The
// provider signs or encrypts them; nothing may change a byte inside.
func ProviderSpans(body []byte) [][2]int {
	if !bytes.Contains(body, []byte(`"compaction"`)) {
		return nil
	}
	var spans [][2]int
	add := func(path string) {
		if r := gjson.GetBytes(body, path); r.Index > 0 {
			spans = append(spans, [2]int{r.Index, r.Index + len(r.Raw)})
		}
	}
	gjson.GetBytes(body, "messages").ForEach(func(i, m gjson.Result) bool {
		m.Get("content").ForEach(func(j, b gjson.Result) bool {
			if b.Get("type").String() == "compaction" {
				add("messages." + i.String() + ".content." + j.String())
			}
			return true
		})
		return true
	})
	gjson.GetBytes(body, "input").ForEach(func(i, it gjson.Result) bool {
		if it.Get("type").String() == "compaction" {
			add("input." + i.String())
		}
		return true
	})
	return spans
}

// ProviderBytes returns the bytes of the spans ProviderSpans finds, joined.
func ProviderBytes(body []byte) []byte {
	var out []byte
	for _, sp := range ProviderSpans(body) {
		out = append(out, body[sp[0]:sp[1]]...)
	}
	return out
}

func inSpans(spans [][2]int, i int) bool {
	for _, sp := range spans {
		if i >= sp[0] && i < sp[1] {
			return true
		}
	}
	return false
}
