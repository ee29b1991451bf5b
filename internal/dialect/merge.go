package dialect

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/tether-dev/tether/internal/capsule"
)

// MergeText returns text with every capsule block removed (capsule.Strip)
// and block added once: as "\n"+block+"\n" right before the first anchor of
// the stripped text when anchor is set and found, else as "\n\n"+block at
// the end.
func MergeText(text, block, anchor string) string {
	s, _ := capsule.Strip(text)
	if anchor != "" {
		if i := strings.Index(s, anchor); i >= 0 {
			return s[:i] + "\n" + block + "\n" + s[i:]
		}
	}
	return s + "\n\n" + block
}

// partialSuffix returns the length of the longest proper suffix of s that is
// a prefix of marker.
func partialSuffix(s, marker string) int {
	n := min(len(s), len(marker)-1)
	for start := len(s) - n; start < len(s); start++ {
		if s[start] == marker[0] && strings.HasPrefix(marker, s[start:]) {
			return len(s) - start
		}
	}
	return 0
}

// textMerge is the dialect-free streaming form of MergeText: feed pieces of
// the text, then finish. The concatenation of everything returned equals
// MergeText of the concatenated input.
type textMerge struct {
	block, anchor string

	// stage 1: strip old capsules
	strip capsule.Stripper
	// stage 2: insert before the anchor
	hold     string
	inserted bool

	out strings.Builder
}

func (t *textMerge) feed(s string) string {
	r := t.insert(t.strip.Feed(s))
	t.out.WriteString(r)
	return r
}

// finish flushes held text and, if not yet placed, appends the block.
func (t *textMerge) finish() string {
	r := t.insert(t.strip.Finish()) + t.hold
	t.hold = ""
	if !t.inserted {
		r += "\n\n" + t.block
		t.inserted = true
	}
	t.out.WriteString(r)
	return r
}

func (t *textMerge) insert(s string) string {
	if t.inserted || t.anchor == "" {
		return s
	}
	buf := t.hold + s
	if i := strings.Index(buf, t.anchor); i >= 0 {
		t.hold = ""
		t.inserted = true
		return buf[:i] + "\n" + t.block + "\n" + buf[i:]
	}
	k := partialSuffix(buf, t.anchor)
	t.hold = buf[len(buf)-k:]
	return buf[:len(buf)-k]
}

// TextMerger rewrites one SSE response stream so that the assistant's answer
// text carries exactly one block (see MergeText). Only the first text part of
// the answer is rewritten (Chat choice 0 content; Responses the first
// output_text part; Anthropic the first text block); everything else passes
// through unchanged. A stream without text passes through untouched. It is
// not safe for concurrent use.
type TextMerger struct {
	name Name
	tm   textMerge

	sawText bool
	done    bool // text closed and block placed
	tmpl    []byte

	// Responses
	itemID               string
	outIndex, contentIdx int64
	seqOffset            int64
	lastSeq              int64

	// Anthropic
	blockIndex int64
	haveBlock  bool
}

// NewTextMerger returns a merger for a stream of the given dialect.
func NewTextMerger(name Name, block string, anchor string) *TextMerger {
	return &TextMerger{name: name, tm: textMerge{block: block, anchor: anchor}, blockIndex: -1}
}

// Text returns the answer text the client has been sent so far ("" when the
// stream had no text).
func (m *TextMerger) Text() string {
	if !m.sawText {
		return ""
	}
	return m.tm.out.String()
}

// Process returns the events to send in place of ev (zero or more).
func (m *TextMerger) Process(ev Event) []Event {
	switch m.name {
	case OpenAIChat:
		return m.chat(ev)
	case OpenAIResponses:
		return m.responses(ev)
	case AnthropicMessages:
		return m.anthropic(ev)
	case Gemini:
		return m.gemini(ev)
	}
	return []Event{ev}
}

// closeText flushes the held text and places the block if needed; it
// returns the text still to be sent ("" once done or when there was no text).
func (m *TextMerger) closeText() string {
	if !m.sawText || m.done {
		return ""
	}
	m.done = true
	return m.tm.finish()
}

// --- Chat Completions ---

func (m *TextMerger) chat(ev Event) []Event {
	if IsTerminal(OpenAIChat, ev) {
		return m.chatFlush(nil, ev)
	}
	c0 := gjson.GetBytes(ev.Data, "choices.0")
	if !c0.Exists() || c0.Get("index").Int() != 0 || m.done {
		return []Event{ev}
	}
	content := c0.Get("delta.content")
	finished := c0.Get("finish_reason").Type == gjson.String
	var out string
	if content.Type == gjson.String && content.String() != "" {
		m.sawText = true
		m.tmpl = ev.Data
		out = m.tm.feed(content.String())
	} else if !finished {
		return []Event{ev}
	}
	if finished && !m.sawText {
		return []Event{ev}
	}
	if finished {
		if content.Type == gjson.String {
			ev = m.chatSetContent(ev, "")
		}
		return m.chatFlush([]byte(out), ev)
	}
	if out == "" && chatOnlyContent(c0, ev.Data) {
		return nil
	}
	return []Event{m.chatSetContent(ev, out)}
}

// chatFlush sends pending text (pre + closeText) as one chunk before ev.
func (m *TextMerger) chatFlush(pre []byte, ev Event) []Event {
	rest := string(pre) + m.closeText()
	if rest == "" {
		return []Event{ev}
	}
	data, err := setRaw(m.tmpl, "choices", `[{"index":0,"delta":{"content":`+jsonString(rest)+`},"finish_reason":null}]`)
	if err == nil && gjson.GetBytes(data, "usage").Exists() {
		data, err = setRaw(data, "usage", "null")
	}
	if err != nil {
		return []Event{ev}
	}
	return []Event{{Name: ev.Name, Data: data}, ev}
}

func (m *TextMerger) chatSetContent(ev Event, s string) Event {
	data, err := setString(ev.Data, "choices.0.delta.content", s)
	if err != nil {
		return ev
	}
	return Event{Name: ev.Name, Data: data}
}

// chatOnlyContent reports whether the chunk carries nothing but text for
// choice 0, so it can be dropped when its text is held back.
func chatOnlyContent(c0 gjson.Result, data []byte) bool {
	if n := gjson.GetBytes(data, "choices.#").Int(); n != 1 {
		return false
	}
	if u := gjson.GetBytes(data, "usage"); u.Exists() && u.Type != gjson.Null {
		return false
	}
	only := true
	c0.Get("delta").ForEach(func(k, v gjson.Result) bool {
		if k.String() != "content" && k.String() != "role" && v.Type != gjson.Null {
			only = false
		}
		return only
	})
	return only
}

// --- OpenAI Responses ---

func (m *TextMerger) responses(ev Event) []Event {
	typ := eventType(ev)
	var out []Event
	switch typ {
	case "response.output_text.delta":
		if m.done || !m.isTarget(ev.Data) {
			break
		}
		m.sawText = true
		m.tmpl = ev.Data
		s := m.tm.feed(gjson.GetBytes(ev.Data, "delta").String())
		if s == "" {
			m.seqOffset--
			return nil
		}
		data, err := setString(ev.Data, "delta", s)
		if err == nil {
			ev.Data = data
		}
	case "response.output_text.done":
		if !m.sawText || !m.isTarget(ev.Data) {
			break
		}
		out = m.responsesFlush()
		if data, err := setString(ev.Data, "text", m.tm.out.String()); err == nil {
			ev.Data = data
		}
	case "response.content_part.done":
		if m.sawText && m.isTarget(ev.Data) {
			out = m.responsesFlush()
			if data, err := setString(ev.Data, "part.text", m.tm.out.String()); err == nil {
				ev.Data = data
			}
		}
	case "response.output_item.done":
		if m.sawText && gjson.GetBytes(ev.Data, "item.id").String() == m.itemID {
			out = m.responsesFlush()
			path := "item.content." + strconv.FormatInt(m.contentIdx, 10) + ".text"
			if gjson.GetBytes(ev.Data, path).Exists() {
				if data, err := setString(ev.Data, path, m.tm.out.String()); err == nil {
					ev.Data = data
				}
			}
		}
	case "response.completed", "response.incomplete", "response.failed":
		if m.sawText {
			out = m.responsesFlush()
			ev.Data = m.fixResponse(ev.Data)
		}
	}
	return append(out, m.renumber(ev))
}

// isTarget binds the merger to the first output_text part it sees and
// reports whether data belongs to it.
func (m *TextMerger) isTarget(data []byte) bool {
	id := gjson.GetBytes(data, "item_id").String()
	ci := gjson.GetBytes(data, "content_index").Int()
	if m.itemID == "" && !m.sawText {
		m.itemID, m.contentIdx = id, ci
		m.outIndex = gjson.GetBytes(data, "output_index").Int()
	}
	return id == m.itemID && ci == m.contentIdx
}

// responsesFlush returns a synthesized delta event carrying the held text
// and the block, or nothing.
func (m *TextMerger) responsesFlush() []Event {
	rest := m.closeText()
	if rest == "" {
		return nil
	}
	data, err := setString(m.tmpl, "delta", rest)
	if err != nil {
		return nil
	}
	if gjson.GetBytes(data, "logprobs").IsArray() {
		data, _ = setRaw(data, "logprobs", "[]")
	}
	if gjson.GetBytes(data, "obfuscation").Exists() {
		data, _ = setRaw(data, "obfuscation", `""`)
	}
	if gjson.GetBytes(data, "sequence_number").Exists() {
		m.lastSeq++
		data, _ = setRaw(data, "sequence_number", strconv.FormatInt(m.lastSeq, 10))
		m.seqOffset++
	}
	return []Event{{Name: "response.output_text.delta", Data: data}}
}

// renumber shifts sequence_number by the number of events inserted minus
// dropped so far, keeping it strictly increasing.
func (m *TextMerger) renumber(ev Event) Event {
	s := gjson.GetBytes(ev.Data, "sequence_number")
	if s.Type != gjson.Number {
		return ev
	}
	n := s.Int() + m.seqOffset
	m.lastSeq = n
	if m.seqOffset == 0 {
		return ev
	}
	if data, err := setRaw(ev.Data, "sequence_number", strconv.FormatInt(n, 10)); err == nil {
		ev.Data = data
	}
	return ev
}

// fixResponse sets the merged text in the final response object.
func (m *TextMerger) fixResponse(data []byte) []byte {
	idx := m.outIndex
	i := int64(0)
	gjson.GetBytes(data, "response.output").ForEach(func(_, item gjson.Result) bool {
		if item.Get("id").String() == m.itemID {
			idx = i
			return false
		}
		i++
		return true
	})
	path := "response.output." + strconv.FormatInt(idx, 10) + ".content." + strconv.FormatInt(m.contentIdx, 10) + ".text"
	if gjson.GetBytes(data, path).Type == gjson.String {
		if d, err := setString(data, path, m.tm.out.String()); err == nil {
			data = d
		}
	}
	if gjson.GetBytes(data, "response.output_text").Type == gjson.String {
		if d, err := setString(data, "response.output_text", ResponseText(OpenAIResponses, []byte(gjson.GetBytes(data, "response").Raw))); err == nil {
			data = d
		}
	}
	return data
}

// --- Anthropic Messages ---

func (m *TextMerger) anthropic(ev Event) []Event {
	switch eventType(ev) {
	case "content_block_start":
		if m.haveBlock || gjson.GetBytes(ev.Data, "content_block.type").String() != "text" {
			break
		}
		m.haveBlock = true
		m.blockIndex = gjson.GetBytes(ev.Data, "index").Int()
		if t := gjson.GetBytes(ev.Data, "content_block.text").String(); t != "" {
			m.sawText = true
			if data, err := setString(ev.Data, "content_block.text", m.tm.feed(t)); err == nil {
				ev.Data = data
			}
		}
	case "content_block_delta":
		if !m.haveBlock || m.done || gjson.GetBytes(ev.Data, "index").Int() != m.blockIndex ||
			gjson.GetBytes(ev.Data, "delta.type").String() != "text_delta" {
			break
		}
		m.sawText = true
		m.tmpl = ev.Data
		s := m.tm.feed(gjson.GetBytes(ev.Data, "delta.text").String())
		if s == "" {
			return nil
		}
		if data, err := setString(ev.Data, "delta.text", s); err == nil {
			ev.Data = data
		}
	case "content_block_stop":
		if m.haveBlock && gjson.GetBytes(ev.Data, "index").Int() == m.blockIndex {
			return append(m.anthropicFlush(), ev)
		}
	case "message_delta", "message_stop":
		return append(m.anthropicFlush(), ev)
	}
	return []Event{ev}
}

func (m *TextMerger) anthropicFlush() []Event {
	rest := m.closeText()
	if rest == "" {
		return nil
	}
	data := []byte(`{"type":"content_block_delta","index":` + strconv.FormatInt(m.blockIndex, 10) +
		`,"delta":{"type":"text_delta","text":` + jsonString(rest) + `}}`)
	return []Event{{Name: "content_block_delta", Data: data}}
}

// Finish returns the events that flush held-back text and the block for a
// stream that ended without its terminal event (upstream EOF). It returns
// nothing when the terminal event was already processed or there was no text.
func (m *TextMerger) Finish() []Event {
	switch m.name {
	case OpenAIChat:
		out := m.chatFlush(nil, Event{})
		return out[:len(out)-1]
	case OpenAIResponses:
		return m.responsesFlush()
	case AnthropicMessages:
		return m.anthropicFlush()
	case Gemini:
		return m.geminiFlush()
	}
	return nil
}
