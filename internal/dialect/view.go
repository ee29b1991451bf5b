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
	idx    index // from the one pass of Parse

	msgsOnce sync.Once
	msgs     []Message
	keysOnce sync.Once
	keys     []ItemKey
	known    []ItemKey // keys of the first items, from an earlier request (ParseFrom)
	idsOnce  sync.Once
	ids      []PrefixID
	knownIDs []PrefixID // ids of the first prefixes, from an earlier request
	from     *recallRec // that earlier request (ParseFrom), or nil
	ownIDs   bool       // ItemKeys extended from's keys in place: PrefixIDs may extend its ids
	rec      *recallRec // what ParseFrom remembers of this request, or nil
	scope    string     // ParseFrom's scope, with rec
}

// Parse validates body once and returns a View over it. path is the URL path
// (with query) of the request, header its headers (may be nil).
func Parse(name Name, path string, header http.Header, body []byte) (*View, error) {
	if !known(name) {
		return nil, unknownDialect(name)
	}
	idx, err := scanBody(body, convKey(name))
	if err != nil {
		return nil, parseError(name, err)
	}
	return &View{name: name, path: path, header: header, body: body, idx: idx}, nil
}

func known(name Name) bool { return code(name) != 0 }

// code is a known dialect's small number (ItemKey.D), 0 for any other name.
func code(name Name) uint8 {
	switch name {
	case OpenAIChat:
		return 1
	case OpenAIResponses:
		return 2
	case AnthropicMessages:
		return 3
	case Gemini:
		return 4
	}
	return 0
}

func unknownDialect(name Name) error {
	return fmt.Errorf("parse %q body: %w", name, ErrUnknownDialect)
}

func parseError(name Name, err error) error { return fmt.Errorf("parse %s body: %w", name, err) }

func (v *View) Dialect() Name       { return v.name }
func (v *View) Path() string        { return v.path }
func (v *View) Header() http.Header { return v.header }
func (v *View) Body() []byte        { return v.body }

// Get reads a raw gjson path from the body (used by data-driven rules). A
// path that starts with a plain field name is read from that field's value
// without passing over the fields before it.
func (v *View) Get(path string) gjson.Result {
	head, rest, dotted := strings.Cut(path, ".")
	if !plainName(head) {
		return gjson.GetBytes(v.body, path)
	}
	f := v.field(head)
	if !dotted || !f.Exists() {
		return f
	}
	return f.Get(rest)
}

// plainName reports whether a gjson path component is a literal field name
// (no wildcard, modifier, query or escape).
func plainName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// field returns the top-level field name, from the index.
func (v *View) field(name string) gjson.Result {
	sp, ok := v.idx.find(name)
	if !ok {
		return gjson.Result{}
	}
	return gjson.Parse(string(v.body[sp.start:sp.end]))
}

// Field returns the raw bytes of the top-level field name (a slice of the
// body: do not modify), and whether the body has it.
func (v *View) Field(name string) ([]byte, bool) {
	sp, ok := v.idx.find(name)
	if !ok {
		return nil, false
	}
	return v.body[sp.start:sp.end:sp.end], true
}

// FieldSpan returns where the top-level field name's value lies in the
// body.
func (v *View) FieldSpan(name string) (start, end int, ok bool) {
	sp, ok := v.idx.find(name)
	return sp.start, sp.end, ok
}

// Items returns the raw bytes of each item of the conversation array
// (messages, input or contents; slices of the body: do not modify), or nil
// when that field is absent or not an array.
func (v *View) Items() [][]byte {
	if v.idx.conv < 0 {
		return nil
	}
	out := make([][]byte, len(v.idx.items))
	for i, sp := range v.idx.items {
		out[i] = v.body[sp.start:sp.end:sp.end]
	}
	return out
}

// NumItems returns the number of conversation items the index holds (0
// when the conversation is not an array of items).
func (v *View) NumItems() int {
	if v.idx.conv < 0 {
		return 0
	}
	return len(v.idx.items)
}

// Item returns conversation item i (0 ≤ i < NumItems), a slice of the body
// that must not be modified.
func (v *View) Item(i int) []byte {
	sp := v.idx.items[i]
	return v.body[sp.start:sp.end:sp.end]
}

// ItemsSpan returns the byte range of the body from the first
// conversation item's start to the last one's end; ok is false when there
// are no items. Between items there is only JSON punctuation.
func (v *View) ItemsSpan() (start, end int, ok bool) {
	if v.idx.conv < 0 || len(v.idx.items) == 0 {
		return 0, 0, false
	}
	return v.idx.items[0].start, v.idx.items[len(v.idx.items)-1].end, true
}

// Model returns the "model" field (Gemini: the model named in the path).
func (v *View) Model() string {
	if v.name == Gemini {
		return GeminiModel(v.path)
	}
	return v.field("model").String()
}

// Stream reports whether the client asked for SSE (Gemini: the
// streamGenerateContent method).
func (v *View) Stream() bool {
	if v.name == Gemini {
		return GeminiMethod(v.path) == "streamGenerateContent"
	}
	return v.field("stream").Bool()
}

// System returns the system prompt text: Anthropic "system" (string or text
// blocks), Chat Completions leading system/developer messages, Responses
// "instructions" plus a leading system/developer input item. Separate
// sources are joined with "\n\n".
func (v *View) System() string {
	var parts []string
	switch v.name {
	case AnthropicMessages:
		if s := joinText(v.field("system"), anthropicTextPart); s != "" {
			parts = append(parts, s)
		}
	case Gemini:
		si := v.field("systemInstruction")
		if si.Type != gjson.String {
			si = si.Get("parts")
		}
		if s := joinText(si, geminiTextPart); s != "" {
			parts = append(parts, s)
		}
	case OpenAIChat:
		for _, m := range v.leading(chatMessage) {
			parts = append(parts, m.Text)
		}
	case OpenAIResponses:
		if s := v.field("instructions").String(); s != "" {
			parts = append(parts, s)
		}
		for _, m := range v.leading(responsesItem) {
			parts = append(parts, m.Text)
		}
	}
	return strings.Join(parts, "\n\n")
}

// leading returns the leading system/developer messages of arr, parsing only
// as many items as needed.
func (v *View) leading(parse func(int, gjson.Result) Message) []Message {
	if v.idx.conv < 0 {
		return nil
	}
	var out []Message
	for i := range v.idx.items {
		m := parse(i, v.item(i))
		if m.Role != "system" && m.Role != "developer" {
			break
		}
		if m.Text != "" {
			out = append(out, m)
		}
	}
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

// ItemKeys returns the key of each of Messages' items (parallel to it), or
// nil when the conversation is not an array of items. Making them is one
// hashing pass over the items; it decodes nothing.
func (v *View) ItemKeys() []ItemKey {
	v.keysOnce.Do(func() {
		if _, ok := v.stringInput(); ok || v.idx.conv < 0 {
			return
		}
		keys := v.extendKnown()
		if keys == nil {
			keys = make([]ItemKey, len(v.idx.items), grown(len(v.idx.items)))
			n := copy(keys, v.known)
			for i, sp := range v.idx.items[n:] {
				keys[n+i] = memo.key(v.name, v.body[sp.start:sp.end])
			}
		}
		if v.rec != nil {
			v.rec.keys.Store(&keys) // keys, not &v.keys: the record must not keep the View (and its body) alive
		}
		// The View's own slice ends at its length: a reader's append never
		// reaches what the next request may write in place.
		v.keys = keys[:len(keys):len(keys)]
	})
	return v.keys
}

// extendKnown returns the earlier request's keys with this request's new
// items appended in place, or nil. An agent's next request is its
// previous one with the last item resent (its cache breakpoint gone, which
// its key leaves out) and new items after it: when every item of the
// earlier request has the same key here, and this request is the first to
// extend it, the earlier keys' array is extended rather than copied, and so
// are its prefix ids (PrefixIDs). Whoever read the earlier keys read them
// below their length, which nothing here writes.
func (v *View) extendKnown() []ItemKey {
	if v.from == nil {
		return nil
	}
	p := v.from.keys.Load()
	if p == nil || len(*p) > len(v.idx.items) {
		return nil
	}
	prev := *p
	n := len(v.known)
	for i := n; i < len(prev); i++ {
		sp := v.idx.items[i]
		if memo.key(v.name, v.body[sp.start:sp.end]) != prev[i] {
			return nil
		}
	}
	if !v.from.extended.CompareAndSwap(false, true) {
		return nil
	}
	keys := prev
	for _, sp := range v.idx.items[len(prev):] {
		keys = append(keys, memo.key(v.name, v.body[sp.start:sp.end]))
	}
	v.ownIDs = true
	return keys
}

// PrefixID identifies the first items of a conversation: two independent
// 64-bit mixes of their ItemKeys (themselves per-process-seeded hashes of
// the items' bytes) and of the dialect, which decides how items read. Two
// requests share a PrefixID when they share those items, so anything
// computed from a prefix's items alone may be memoised by it.
type PrefixID struct{ A, B uint64 }

// PrefixIDs returns the id of every prefix of the conversation (ids[i]:
// items 0…i), parallel to ItemKeys, or nil when ItemKeys is nil. The ids
// of the items a ParseFrom View shares with its earlier request are that
// request's: only the new items are mixed in.
func (v *View) PrefixIDs() []PrefixID {
	v.idsOnce.Do(func() {
		keys := v.ItemKeys()
		if keys == nil {
			return
		}
		ids := v.extendKnownIDs(len(keys))
		if ids == nil {
			ids = append(make([]PrefixID, 0, grown(len(keys))), v.knownIDs...)
		}
		n := len(ids)
		var id PrefixID
		if n > 0 {
			id = ids[n-1]
		} else {
			for _, c := range []byte(v.name) {
				id.A, id.B = mix(id.A, uint64(c)), mix(id.B, uint64(c)+7)
			}
		}
		for _, k := range keys[n:] {
			u := uint64(k.N)
			id.A = mix(mix(mix(id.A, k.H1), k.H2), u)
			id.B = mix(mix(mix(id.B^0x6a09e667f3bcc909, k.H2), k.H1), u+1)
			ids = append(ids, id)
		}
		if v.rec != nil {
			v.rec.ids.Store(&ids) // see ItemKeys
		}
		v.ids = ids[:len(ids):len(ids)]
	})
	return v.ids
}

// extendKnownIDs returns the earlier request's ids, to be extended in
// place, when ItemKeys extended its keys (the same items, so the same ids)
// and it has ids for all of them; nil otherwise.
func (v *View) extendKnownIDs(n int) []PrefixID {
	if !v.ownIDs {
		return nil
	}
	p := v.from.ids.Load()
	if p == nil || len(*p) > n || len(*p) != len(*v.from.keys.Load()) {
		return nil
	}
	return *p
}

func mix(h, v uint64) uint64 {
	h ^= v
	h *= 0x9e3779b97f4a7c15
	return h ^ h>>29
}

func (v *View) parseMessages() []Message {
	if s, ok := v.stringInput(); ok {
		return []Message{{Index: 0, Role: "user", Type: "message", Text: s}}
	}
	if v.idx.conv < 0 {
		return nil
	}
	parse := v.parser()
	keys, ids := v.ItemKeys(), v.PrefixIDs()
	prev, size, own := lists.prefix(keys, ids)
	known := len(prev)
	if known == len(keys) {
		return prev[:known:known] // the same request again
	}
	var out []Message
	if own && cap(prev) >= len(keys) {
		out = prev[:len(keys)] // past every other reader's end
	} else {
		// Room for the next few turns, which may then append in place.
		out = make([]Message, len(keys), len(keys)+len(keys)/8+8)
		copy(out, prev)
	}
	for i := known; i < len(keys); i++ {
		m, ok := memo.get(keys[i])
		if !ok {
			sp := v.idx.items[i]
			// The copy memo keeps: out is remembered too (lists), and
			// must not keep the body alive.
			m = memo.put(keys[i], parse(i, gjson.ParseBytes(v.body[sp.start:sp.end])))
		}
		m.Index = i
		out[i] = m
		size += keys[i].N
	}
	lists.put(keys, ids, out, known, size)
	// The View's slice ends at its own length: an append by a reader
	// never reaches what a later request may write in place.
	return out[:len(keys):len(keys)]
}

// stringInput returns a Responses "input" given as one string.
func (v *View) stringInput() (string, bool) {
	if v.name != OpenAIResponses || v.idx.conv >= 0 {
		return "", false
	}
	in := v.field("input")
	return in.String(), in.Type == gjson.String
}

// item returns conversation item i, shallow (nothing decoded).
func (v *View) item(i int) gjson.Result {
	sp := v.idx.items[i]
	return gjson.ParseBytes(v.body[sp.start:sp.end])
}

// parser returns the item parser of the dialect.
func (v *View) parser() func(int, gjson.Result) Message {
	switch v.name {
	case OpenAIChat:
		return chatMessage
	case OpenAIResponses:
		return responsesItem
	case Gemini:
		return geminiContent
	default:
		return anthropicMessage
	}
}

// NumMessages returns the length of the messages / input array without
// parsing its items (a Responses string input counts as one).
func (v *View) NumMessages() int {
	if _, ok := v.stringInput(); ok {
		return 1
	}
	if v.idx.conv < 0 {
		return 0
	}
	return len(v.idx.items)
}

// LastUserText returns the text of the last user-role message with non-empty
// text (tool-result-only messages are skipped), parsing only the tail items.
func (v *View) LastUserText() string {
	if s, ok := v.stringInput(); ok {
		return s
	}
	if v.idx.conv < 0 {
		return ""
	}
	parse := v.parser()
	for i := len(v.idx.items) - 1; i >= 0; i-- {
		it := v.item(i)
		if !isUserItem(v.name, it) {
			continue
		}
		if m := parse(i, it); m.Role == "user" && m.Text != "" {
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
	if _, ok := v.stringInput(); ok {
		return "message"
	}
	if v.idx.conv < 0 || len(v.idx.items) == 0 {
		return ""
	}
	return responsesItemType(v.item(len(v.idx.items) - 1))
}

// ToolNames returns the names of the declared tools, in order. A Responses
// built-in tool without a name is reported by its type.
func (v *View) ToolNames() []string {
	var out []string
	if v.name == Gemini {
		v.Get("tools.#.functionDeclarations|@flatten").ForEach(func(_, t gjson.Result) bool {
			if n := t.Get("name").String(); n != "" {
				out = append(out, n)
			}
			return true
		})
		return out
	}
	v.field("tools").ForEach(func(_, t gjson.Result) bool {
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
