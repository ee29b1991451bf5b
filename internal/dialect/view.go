package dialect

import (
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/tidwall/gjson"
)

// View is a lazy, read-only view of one request. It validates the body once
// (Parse) and then reads fields on demand; Messages() is parsed once and
// cached; LastUserText and LastItemType read from the tail without walking
// the whole history.
type View struct {
	name   Name
	path   string
	header http.Header
	body   []byte

	msgsOnce sync.Once
	msgs     []Message
}

// Parse validates body once and returns a View over it. path is the URL path
// (with query) of the request, header its headers (may be nil).
func Parse(name Name, path string, header http.Header, body []byte) (*View, error) {
	switch name {
	case OpenAIChat, OpenAIResponses, AnthropicMessages, Gemini:
	default:
		return nil, fmt.Errorf("parse %q body: %w", name, ErrUnknownDialect)
	}
	if err := checkObject(body); err != nil {
		return nil, fmt.Errorf("parse %s body: %w", name, err)
	}
	return &View{name: name, path: path, header: header, body: body}, nil
}

func (v *View) Dialect() Name       { return v.name }
func (v *View) Path() string        { return v.path }
func (v *View) Header() http.Header { return v.header }
func (v *View) Body() []byte        { return v.body }

// Get reads a raw gjson path from the body (used by data-driven rules).
func (v *View) Get(path string) gjson.Result { return gjson.GetBytes(v.body, path) }

// Model returns the "model" field (Gemini: the model named in the path).
func (v *View) Model() string {
	if v.name == Gemini {
		return GeminiModel(v.path)
	}
	return gjson.GetBytes(v.body, "model").String()
}

// Stream reports whether the client asked for SSE (Gemini: the
// streamGenerateContent method).
func (v *View) Stream() bool {
	if v.name == Gemini {
		return GeminiMethod(v.path) == "streamGenerateContent"
	}
	return gjson.GetBytes(v.body, "stream").Bool()
}

// System returns the system prompt text: Anthropic "system" (string or text
// blocks), Chat Completions leading system/developer messages, Responses
// "instructions" plus a leading system/developer input item. Separate
// sources are joined with "\n\n".
func (v *View) System() string {
	var parts []string
	switch v.name {
	case AnthropicMessages:
		if s := joinText(gjson.GetBytes(v.body, "system"), anthropicTextPart); s != "" {
			parts = append(parts, s)
		}
	case Gemini:
		si := gjson.GetBytes(v.body, "systemInstruction")
		if si.Type != gjson.String {
			si = si.Get("parts")
		}
		if s := joinText(si, geminiTextPart); s != "" {
			parts = append(parts, s)
		}
	case OpenAIChat:
		for _, m := range v.leading(gjson.GetBytes(v.body, "messages"), chatMessage) {
			parts = append(parts, m.Text)
		}
	case OpenAIResponses:
		if s := gjson.GetBytes(v.body, "instructions").String(); s != "" {
			parts = append(parts, s)
		}
		in := gjson.GetBytes(v.body, "input")
		if in.IsArray() {
			for _, m := range v.leading(in, responsesItem) {
				parts = append(parts, m.Text)
			}
		}
	}
	return strings.Join(parts, "\n\n")
}

// leading returns the leading system/developer messages of arr, parsing only
// as many items as needed.
func (v *View) leading(arr gjson.Result, parse func(int, gjson.Result) Message) []Message {
	var out []Message
	i := 0
	arr.ForEach(func(_, item gjson.Result) bool {
		m := parse(i, item)
		i++
		if m.Role != "system" && m.Role != "developer" {
			return false
		}
		if m.Text != "" {
			out = append(out, m)
		}
		return true
	})
	return out
}

// Messages returns every conversation item, including the leading
// system/developer items (with their role, so callers can skip them). The
// Anthropic top-level "system" and the Responses "instructions" are not
// items and are reported by System only. The slice is parsed once and shared,
// and items this process parsed before (the resent history of an agent)
// are taken from a memo: callers must not modify the slice or the items'
// slices.
func (v *View) Messages() []Message {
	v.msgsOnce.Do(func() { v.msgs = v.parseMessages() })
	return v.msgs
}

func (v *View) parseMessages() []Message {
	arr, parse := v.items()
	if v.name == OpenAIResponses && arr.Type == gjson.String {
		return []Message{{Index: 0, Role: "user", Type: "message", Text: arr.String()}}
	}
	if !arr.IsArray() {
		return nil
	}
	var out []Message
	i := 0
	arr.ForEach(func(_, item gjson.Result) bool {
		k := memo.key(v.name, item.Raw)
		m, ok := memo.get(k)
		if !ok {
			m = parse(i, item)
			memo.put(k, m)
		}
		m.Index = i
		out = append(out, m)
		i++
		return true
	})
	return out
}

// items returns the conversation array of the body and the item parser of
// the dialect.
func (v *View) items() (gjson.Result, func(int, gjson.Result) Message) {
	switch v.name {
	case OpenAIChat:
		return gjson.GetBytes(v.body, "messages"), chatMessage
	case OpenAIResponses:
		return gjson.GetBytes(v.body, "input"), responsesItem
	case Gemini:
		return gjson.GetBytes(v.body, "contents"), geminiContent
	default:
		return gjson.GetBytes(v.body, "messages"), anthropicMessage
	}
}

// NumMessages returns the length of the messages / input array without
// parsing its items (a Responses string input counts as one).
func (v *View) NumMessages() int {
	arr, _ := v.items()
	if v.name == OpenAIResponses && arr.Type == gjson.String {
		return 1
	}
	if !arr.IsArray() {
		return 0
	}
	n := 0
	arr.ForEach(func(_, _ gjson.Result) bool { n++; return true })
	return n
}

// LastUserText returns the text of the last user-role message with non-empty
// text (tool-result-only messages are skipped), parsing only the tail items.
func (v *View) LastUserText() string {
	arr, parse := v.items()
	if v.name == OpenAIResponses && arr.Type == gjson.String {
		return arr.String()
	}
	if !arr.IsArray() {
		return ""
	}
	items := arr.Array() // shallow: element Raw slices, nothing decoded
	for i := len(items) - 1; i >= 0; i-- {
		if !isUserItem(v.name, items[i]) {
			continue
		}
		if m := parse(i, items[i]); m.Role == "user" && m.Text != "" {
			return m.Text
		}
	}
	return ""
}

// isUserItem is a cheap pre-check that avoids decoding non-user items.
func isUserItem(name Name, item gjson.Result) bool {
	if name == Gemini {
		r := item.Get("role").String()
		return r == "user" || r == ""
	}
	if item.Get("role").String() != "user" {
		return false
	}
	if name == OpenAIResponses {
		t := item.Get("type").String()
		return t == "" || t == "message"
	}
	return true
}

// LastItemType returns the "type" of the last input item (Responses; "message"
// for a role-only item or a string input) or "" for the other dialects.
func (v *View) LastItemType() string {
	if v.name != OpenAIResponses {
		return ""
	}
	in := gjson.GetBytes(v.body, "input")
	if in.Type == gjson.String {
		return "message"
	}
	if !in.IsArray() {
		return ""
	}
	items := in.Array()
	if len(items) == 0 {
		return ""
	}
	return responsesItemType(items[len(items)-1])
}

// ToolNames returns the names of the declared tools, in order. A Responses
// built-in tool without a name is reported by its type.
func (v *View) ToolNames() []string {
	var out []string
	if v.name == Gemini {
		gjson.GetBytes(v.body, "tools.#.functionDeclarations|@flatten").ForEach(func(_, t gjson.Result) bool {
			if n := t.Get("name").String(); n != "" {
				out = append(out, n)
			}
			return true
		})
		return out
	}
	gjson.GetBytes(v.body, "tools").ForEach(func(_, t gjson.Result) bool {
		var n string
		switch v.name {
		case OpenAIChat:
			n = t.Get("function.name").String()
			if n == "" {
				n = t.Get("custom.name").String()
			}
		default:
			n = t.Get("name").String()
		}
		if n == "" {
			n = t.Get("type").String()
		}
		if n != "" {
			out = append(out, n)
		}
		return true
	})
	return out
}

// --- per-dialect item parsers ---

func normRole(r string) string {
	if r == "function" {
		return "tool"
	}
	return r
}

// joinText concatenates a string value, or the text of the parts of an array
// value as selected by part, with "\n" between parts.
func joinText(v gjson.Result, part func(gjson.Result) (string, bool)) string {
	if v.Type == gjson.String {
		return v.String()
	}
	if !v.IsArray() {
		return ""
	}
	var b strings.Builder
	first := true
	v.ForEach(func(_, p gjson.Result) bool {
		if s, ok := part(p); ok {
			if !first {
				b.WriteByte('\n')
			}
			b.WriteString(s)
			first = false
		}
		return true
	})
	return b.String()
}

func anthropicTextPart(p gjson.Result) (string, bool) {
	if p.Type == gjson.String {
		return p.String(), true
	}
	if p.Get("type").String() == "text" {
		return p.Get("text").String(), true
	}
	return "", false
}

func chatTextPart(p gjson.Result) (string, bool) {
	if p.Type == gjson.String {
		return p.String(), true
	}
	switch p.Get("type").String() {
	case "text":
		return p.Get("text").String(), true
	}
	return "", false
}

func responsesTextPart(p gjson.Result) (string, bool) {
	if p.Type == gjson.String {
		return p.String(), true
	}
	switch p.Get("type").String() {
	case "input_text", "output_text", "text":
		return p.Get("text").String(), true
	}
	return "", false
}

func hasPartType(v gjson.Result, types ...string) bool {
	if !v.IsArray() {
		return false
	}
	found := false
	v.ForEach(func(_, p gjson.Result) bool {
		t := p.Get("type").String()
		for _, want := range types {
			if t == want {
				found = true
				return false
			}
		}
		return true
	})
	return found
}

// rawArgs returns the raw JSON of a tool-call argument value: the decoded
// contents of a JSON string, or the raw value of anything else.
func rawArgs(v gjson.Result) []byte {
	switch v.Type {
	case gjson.Null:
		if !v.Exists() {
			return nil
		}
		return []byte(v.Raw)
	case gjson.String:
		return []byte(v.String())
	default:
		return []byte(v.Raw)
	}
}

func chatMessage(i int, r gjson.Result) Message {
	m := Message{Index: i, Role: normRole(r.Get("role").String()), Type: "message"}
	content := r.Get("content")
	m.Text = joinText(content, chatTextPart)
	m.HasImage = hasPartType(content, "image_url", "input_audio", "file")
	switch m.Role {
	case "assistant":
		r.Get("tool_calls").ForEach(func(_, tc gjson.Result) bool {
			fn := tc.Get("function")
			if !fn.Exists() {
				fn = tc.Get("custom")
				m.ToolCalls = append(m.ToolCalls, ToolCall{ID: tc.Get("id").String(), Name: fn.Get("name").String(), Arguments: rawArgs(fn.Get("input"))})
				return true
			}
			m.ToolCalls = append(m.ToolCalls, ToolCall{ID: tc.Get("id").String(), Name: fn.Get("name").String(), Arguments: rawArgs(fn.Get("arguments"))})
			return true
		})
	case "tool":
		m.ToolResults = []ToolResult{{CallID: r.Get("tool_call_id").String(), Text: m.Text}}
	}
	return m
}

func responsesItemType(r gjson.Result) string {
	if t := r.Get("type").String(); t != "" {
		return t
	}
	if r.Get("role").Exists() {
		return "message"
	}
	return ""
}

func responsesItem(i int, r gjson.Result) Message {
	typ := responsesItemType(r)
	m := Message{Index: i, Type: typ}
	switch typ {
	case "message":
		m.Role = normRole(r.Get("role").String())
		content := r.Get("content")
		m.Text = joinText(content, responsesTextPart)
		m.HasImage = hasPartType(content, "input_image", "input_file", "input_audio")
	case "function_call":
		m.Role = "assistant"
		m.ToolCalls = []ToolCall{{ID: r.Get("call_id").String(), Name: r.Get("name").String(), Arguments: rawArgs(r.Get("arguments"))}}
	case "custom_tool_call":
		// The input of a custom tool is free text: Arguments holds it as a
		// JSON string value so it stays valid JSON.
		m.Role = "assistant"
		in := r.Get("input")
		var args []byte
		if in.Exists() {
			args = []byte(in.Raw)
		}
		m.ToolCalls = []ToolCall{{ID: r.Get("call_id").String(), Name: r.Get("name").String(), Arguments: args}}
	case "function_call_output", "custom_tool_call_output":
		m.Role = "tool"
		out := r.Get("output")
		m.HasImage = hasPartType(out, "input_image", "input_file")
		m.ToolResults = []ToolResult{{CallID: r.Get("call_id").String(), Text: joinText(out, responsesTextPart)}}
	}
	return m
}

func anthropicMessage(i int, r gjson.Result) Message {
	m := Message{Index: i, Role: r.Get("role").String(), Type: "message"}
	content := r.Get("content")
	if content.Type == gjson.String {
		m.Text = content.String()
		return m
	}
	var texts []string
	content.ForEach(func(_, b gjson.Result) bool {
		switch b.Get("type").String() {
		case "text":
			texts = append(texts, b.Get("text").String())
		case "image", "document":
			m.HasImage = true
		case "tool_use":
			in := b.Get("input")
			var args []byte
			if in.Exists() {
				args = []byte(in.Raw)
			}
			m.ToolCalls = append(m.ToolCalls, ToolCall{ID: b.Get("id").String(), Name: b.Get("name").String(), Arguments: args})
		case "tool_result":
			c := b.Get("content")
			if hasPartType(c, "image", "document") {
				m.HasImage = true
			}
			m.ToolResults = append(m.ToolResults, ToolResult{
				CallID:  b.Get("tool_use_id").String(),
				Text:    joinText(c, anthropicTextPart),
				IsError: b.Get("is_error").Bool(),
			})
		}
		return true
	})
	m.Text = strings.Join(texts, "\n")
	return m
}
