package fakemodel

import (
	"net/http"
	"strings"

	"github.com/tidwall/gjson"
)

// The labels Classify returns.
const (
	KindMain       = "main"       // an ordinary turn
	KindCompaction = "compaction" // a request for a summary of the conversation
	KindTitle      = "title"      // a conversation-title request
	KindProbe      = "probe"      // not a generation call: models, count_tokens, websocket upgrade, unknown path
)

// Stable markers of compaction and title requests, by where they appear.
// These serve the fake's own scripting only; Tether's classifier has its own
// versioned rules.
var (
	compactionSystemPrefixes = []string{
		"You are a context summarization",                                                // OpenCode, Pi
		"You are an anchored context summarization",                                      // OpenCode (anchored variant)
		"You are a specialized system component responsible for distilling chat history", // Gemini CLI
	}
	titleSystemPrefixes = []string{
		"You are a title generator", // OpenCode
	}
	compactionUserMarkers = []string{
		"Your task is to create a detailed summary of the conversation so far", // Claude Code
		"You are performing a CONTEXT CHECKPOINT COMPACTION",                   // Codex local
		"The messages above are a conversation to summarize",                   // Pi, first
		"The messages above are NEW conversation messages",                     // Pi, later
		"This is the PREFIX of a turn that was too large to keep",              // Pi, split turn
		"Create a new anchored summary",                                        // OpenCode
		"You MUST summarize the conversation above",                            // OpenCode V2 engine
	}
)

// Classify labels req KindCompaction, KindTitle or KindMain (KindProbe for a
// call that generates nothing), from protocol evidence first (Codex turn
// metadata, the compaction_trigger item, the compact endpoint), then from the
// agents' stable prompt prefixes in the system prompt and the last user
// message.
func Classify(req *Request) string {
	if req == nil {
		return KindProbe
	}
	dialect := dialectOf(req.Path)
	switch {
	case req.Path == "/v1/responses/compact":
		return KindCompaction
	case dialect == "", req.Path == "/v1/messages/count_tokens",
		req.Method != "" && req.Method != http.MethodPost:
		return KindProbe
	case dialect == DialectGemini:
		if _, m := geminiCall(req.Path); m != "generateContent" && m != "streamGenerateContent" {
			return KindProbe
		}
	}
	body := req.Body
	if codexCompaction(req.Header.Get("x-codex-turn-metadata")) ||
		codexCompaction(gjson.GetBytes(body, "client_metadata.x-codex-turn-metadata").String()) {
		return KindCompaction
	}
	if dialect == DialectResponses {
		if last := gjson.GetBytes(body, "input.@reverse.0.type"); last.String() == "compaction_trigger" {
			return KindCompaction
		}
	}
	for _, sys := range systemTexts(dialect, body) {
		sys = strings.TrimSpace(sys)
		if hasAnyPrefix(sys, compactionSystemPrefixes) {
			return KindCompaction
		}
		if hasAnyPrefix(sys, titleSystemPrefixes) {
			return KindTitle
		}
	}
	last := lastUserText(dialect, body)
	for _, m := range compactionUserMarkers {
		if strings.Contains(last, m) {
			return KindCompaction
		}
	}
	return KindMain
}

func codexCompaction(meta string) bool {
	return meta != "" && gjson.Get(meta, "request_kind").String() == "compaction"
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// systemTexts returns each system or developer text, one entry per message or
// block.
func systemTexts(dialect string, body []byte) []string {
	var out []string
	switch dialect {
	case DialectMessages:
		sys := gjson.GetBytes(body, "system")
		if sys.IsArray() {
			for _, b := range sys.Array() {
				out = append(out, b.Get("text").String())
			}
		} else if sys.Type == gjson.String {
			out = append(out, sys.String())
		}
	case DialectChat:
		for _, m := range gjson.GetBytes(body, "messages").Array() {
			if r := m.Get("role").String(); r == "system" || r == "developer" {
				out = append(out, contentTexts(m.Get("content"))...)
			}
		}
	case DialectGemini:
		si := gjson.GetBytes(body, "systemInstruction")
		if si.Type == gjson.String {
			out = append(out, si.String())
		}
		out = append(out, contentTexts(si.Get("parts"))...)
	case DialectResponses:
		if in := gjson.GetBytes(body, "instructions"); in.Type == gjson.String {
			out = append(out, in.String())
		}
		for _, m := range gjson.GetBytes(body, "input").Array() {
			if r := m.Get("role").String(); r == "system" || r == "developer" {
				out = append(out, contentTexts(m.Get("content"))...)
			}
		}
	}
	return out
}

// lastUserText joins the text parts of the last user message.
func lastUserText(dialect string, body []byte) string {
	field := "messages"
	if dialect == DialectResponses {
		field = "input"
		if in := gjson.GetBytes(body, "input"); in.Type == gjson.String {
			return in.String()
		}
	}
	content := "content"
	if dialect == DialectGemini {
		field, content = "contents", "parts"
	}
	items := gjson.GetBytes(body, field).Array()
	for i := len(items) - 1; i >= 0; i-- {
		if items[i].Get("role").String() == "user" {
			return strings.Join(contentTexts(items[i].Get(content)), "\n")
		}
	}
	return ""
}

// contentTexts returns a content value's texts: the string itself, or the
// text of each part of an array.
func contentTexts(c gjson.Result) []string {
	if c.Type == gjson.String {
		return []string{c.String()}
	}
	var out []string
	for _, p := range c.Array() {
		if t := p.Get("text"); t.Type == gjson.String {
			out = append(out, t.String())
		}
	}
	return out
}
