package dialect

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// Gemini generateContent wire shapes (generativelanguage v1beta, as the
// @google/genai SDK and Gemini CLI send them):
//
//	POST /v1beta/models/{model}:generateContent
//	POST /v1beta/models/{model}:streamGenerateContent?alt=sse
//	{"contents":[{"role":"user"|"model","parts":[{"text":…}|{"functionCall":{…}}|{"functionResponse":{…}}|…]}],
//	 "systemInstruction":{"parts":[{"text":…}]}, "tools":[{"functionDeclarations":[{"name":…}]}], …}
//
// The model and the streaming choice are in the path, not the body. A
// response is {"candidates":[{"content":{"role":"model","parts":[…]},
// "finishReason":…}],"usageMetadata":{…}}; the SSE stream is a sequence of
// such objects as data-only events, the last one carrying finishReason.

// GeminiModel returns the model named in a Gemini path
// (…/models/{model}:{method}, with or without a query), or "".
func GeminiModel(path string) string {
	path, _, _ = strings.Cut(path, "?")
	i := strings.LastIndex(path, "/models/")
	if i < 0 {
		return ""
	}
	m, _, _ := strings.Cut(path[i+len("/models/"):], ":")
	return m
}

// GeminiMethod returns the method of a Gemini path (generateContent,
// streamGenerateContent, countTokens, …), or "".
func GeminiMethod(path string) string {
	path, _, _ = strings.Cut(path, "?")
	i := strings.LastIndex(path, "/models/")
	if i < 0 {
		return ""
	}
	_, m, _ := strings.Cut(path[i+len("/models/"):], ":")
	return m
}

// GeminiSetModel returns path with its model segment replaced by model.
func GeminiSetModel(path, model string) string {
	i := strings.LastIndex(path, "/models/")
	if i < 0 {
		return path
	}
	start := i + len("/models/")
	end := strings.IndexAny(path[start:], ":?")
	if end < 0 {
		end = len(path) - start
	}
	return path[:start] + model + path[start+end:]
}

// geminiTextPart reads a text part that is not the model's thought.
func geminiTextPart(p gjson.Result) (string, bool) {
	t := p.Get("text")
	if t.Type != gjson.String || p.Get("thought").Bool() {
		return "", false
	}
	return t.String(), true
}

func geminiContent(i int, r gjson.Result) Message {
	m := Message{Index: i, Role: geminiRole(r.Get("role").String()), Type: "message"}
	parts := r.Get("parts")
	if parts.Type == gjson.String { // tolerated: a bare string
		m.Text = parts.String()
		return m
	}
	var texts []string
	var seen map[string]bool
	k := 0
	parts.ForEach(func(_, p gjson.Result) bool {
		switch {
		case p.Get("functionCall").Exists():
			fc := p.Get("functionCall")
			id := fc.Get("id").String()
			if id == "" {
				id = fc.Get("name").String() + "#" + strconv.Itoa(i) + "." + strconv.Itoa(k)
			}
			var args []byte
			if a := fc.Get("args"); a.Exists() {
				args = []byte(a.Raw)
			}
			m.ToolCalls = append(m.ToolCalls, ToolCall{ID: id, Name: fc.Get("name").String(), Arguments: args})
		case p.Get("functionResponse").Exists():
			fr := p.Get("functionResponse")
			resp := fr.Get("response")
			text := resp.Raw
			for _, key := range []string{"output", "content", "result"} {
				if v := resp.Get(key); v.Type == gjson.String {
					text = v.String()
					break
				}
			}
			id := fr.Get("id").String()
			if id == "" {
				id = fr.Get("name").String()
			}
			// Gemini CLI 0.61 repeats a call's response part in a resumed
			// session; the repeat is the same result, read once.
			if seen[id+"\x00"+fr.Raw] {
				break
			}
			if seen == nil {
				seen = map[string]bool{}
			}
			seen[id+"\x00"+fr.Raw] = true
			m.ToolResults = append(m.ToolResults, ToolResult{CallID: id, Text: text, IsError: resp.Get("error").Exists()})
		case p.Get("inlineData").Exists(), p.Get("fileData").Exists():
			m.HasImage = true
		default:
			if s, ok := geminiTextPart(p); ok {
				texts = append(texts, s)
			}
		}
		k++
		return true
	})
	m.Text = strings.Join(texts, "\n")
	return m
}

// geminiRole normalises a Gemini role: "model" is the assistant, "function"
// (older clients) a tool result; anything else, or none, the user.
func geminiRole(r string) string {
	switch r {
	case "model":
		return "assistant"
	case "function":
		return "tool"
	case "system":
		return "system"
	}
	return "user"
}

// geminiWireRole maps a normalised role back to Gemini's user/model.
func geminiWireRole(role string) string {
	if role == "assistant" || role == "model" {
		return "model"
	}
	return "user"
}

func geminiTextJSON(text string) string { return `{"text":` + jsonString(text) + `}` }

func geminiContentJSON(role, text string) string {
	return `{"role":"` + geminiWireRole(role) + `","parts":[` + geminiTextJSON(text) + `]}`
}

// geminiAppendSystem adds text to systemInstruction: a new one when absent,
// a trailing text part otherwise (a bare string gets "\n\n"+text).
func geminiAppendSystem(body []byte, text string) ([]byte, error) {
	si := gjson.GetBytes(body, "systemInstruction")
	switch {
	case !si.Exists() || si.Type == gjson.Null:
		return setRaw(body, "systemInstruction", `{"parts":[`+geminiTextJSON(text)+`]}`)
	case si.Type == gjson.String:
		return setString(body, "systemInstruction", si.String()+"\n\n"+text)
	case si.Get("parts").IsArray():
		return setRaw(body, "systemInstruction.parts.-1", geminiTextJSON(text))
	case si.IsObject():
		return setRaw(body, "systemInstruction.parts", `[`+geminiTextJSON(text)+`]`)
	}
	return nil, ErrBadShape
}

// geminiTextPaths are the answer's text parts (thoughts excluded) in a
// non-streamed response.
func geminiTextPaths(body []byte) []string {
	var paths []string
	i := 0
	gjson.GetBytes(body, "candidates.0.content.parts").ForEach(func(_, p gjson.Result) bool {
		if _, ok := geminiTextPart(p); ok {
			paths = append(paths, "candidates.0.content.parts."+strconv.Itoa(i)+".text")
		}
		i++
		return true
	})
	return paths
}

// geminiEventText is the answer text one stream chunk adds.
func geminiEventText(data []byte) string {
	var b strings.Builder
	gjson.GetBytes(data, "candidates.0.content.parts").ForEach(func(_, p gjson.Result) bool {
		if s, ok := geminiTextPart(p); ok {
			b.WriteString(s)
		}
		return true
	})
	return b.String()
}

// geminiFinished reports whether a chunk ends the answer (finishReason set).
func geminiFinished(data []byte) bool {
	return gjson.GetBytes(data, "candidates.0.finishReason").String() != ""
}

func geminiUsage(u gjson.Result) Usage {
	return Usage{
		InputTokens:     u.Get("promptTokenCount").Int(),
		OutputTokens:    u.Get("candidatesTokenCount").Int() + u.Get("thoughtsTokenCount").Int(),
		CacheReadTokens: u.Get("cachedContentTokenCount").Int(),
	}
}

// --- streaming merge ---

// gemini rewrites the text parts of candidate 0 of each chunk with what the
// merge lets through; the chunk carrying finishReason gets the held text and
// the block.
func (m *TextMerger) gemini(ev Event) []Event {
	if m.done {
		return []Event{ev}
	}
	data := ev.Data
	parts := gjson.GetBytes(data, "candidates.0.content.parts")
	last := -1
	i := 0
	changed := false
	parts.ForEach(func(_, p gjson.Result) bool {
		if s, ok := geminiTextPart(p); ok {
			m.sawText = true
			out := m.tm.feed(s)
			last = i
			if out != s {
				if d, err := setString(data, "candidates.0.content.parts."+strconv.Itoa(i)+".text", out); err == nil {
					data, changed = d, true
				}
			}
		}
		i++
		return true
	})
	if geminiFinished(data) && m.sawText {
		rest := m.closeText()
		if rest != "" {
			var d []byte
			var err error
			if last >= 0 {
				path := "candidates.0.content.parts." + strconv.Itoa(last) + ".text"
				d, err = setString(data, path, gjson.GetBytes(data, path).String()+rest)
			} else if parts.IsArray() {
				d, err = setRaw(data, "candidates.0.content.parts.-1", geminiTextJSON(rest))
			} else {
				d, err = setRaw(data, "candidates.0.content", `{"role":"model","parts":[`+geminiTextJSON(rest)+`]}`)
			}
			if err == nil {
				data, changed = d, true
			}
		}
	} else if last >= 0 && geminiOnlyEmptyText(data) {
		return nil // everything held back; nothing else in the chunk
	}
	if changed {
		ev = Event{Name: ev.Name, Data: data}
	}
	return []Event{ev}
}

// geminiOnlyEmptyText reports whether a chunk carries nothing but empty text
// parts for candidate 0 (no usage, no other part, no other candidate).
func geminiOnlyEmptyText(data []byte) bool {
	if gjson.GetBytes(data, "candidates.#").Int() != 1 || gjson.GetBytes(data, "usageMetadata").Exists() {
		return false
	}
	only := true
	gjson.GetBytes(data, "candidates.0.content.parts").ForEach(func(_, p gjson.Result) bool {
		s, ok := geminiTextPart(p)
		only = ok && s == ""
		return only
	})
	return only
}

// geminiFlush is a chunk carrying the held text and the block, for a stream
// that ended without a finishReason.
func (m *TextMerger) geminiFlush() []Event {
	rest := m.closeText()
	if rest == "" {
		return nil
	}
	return []Event{{Data: []byte(`{"candidates":[{"content":{"role":"model","parts":[` + geminiTextJSON(rest) + `]},"index":0}]}`)}}
}
