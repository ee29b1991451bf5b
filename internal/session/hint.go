package session

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/tether-dev/tether/internal/dialect"
)

const maxHint = 128

// clientHint is the normalised client identity hint of a request.
type clientHint struct {
	value  string // family + ":" + normalised hint, "" if none
	window int    // Codex window number + 1 (x-codex-window-id "<thread>:<n>"), 0 if none
}

// hintOf reads the first usable client hint: Codex thread-id / session-id,
// Claude Code session header or metadata.user_id, OpenCode x-session-id,
// then a body prompt_cache_key. Malformed or oversized values are ignored.
func hintOf(v *dialect.View) clientHint {
	var h clientHint
	hdr := v.Header()
	get := func(name string) string {
		if hdr == nil {
			return ""
		}
		return hdr.Get(name)
	}
	// Tried in order, each read only when the ones before gave nothing: a
	// body field is a lookup into the request.
	cands := [...]struct {
		family string
		value  func() string
	}{
		{"codex", func() string { return get("thread-id") }},
		{"codex", func() string { return get("session-id") }},
		{"claude", func() string { return get("X-Claude-Code-Session-Id") }},
		{"claude", func() string { return claudeUserSession(v) }},
		{"opencode", func() string { return get("x-session-id") }},
		{"cache", func() string { return v.Get("prompt_cache_key").String() }},
	}
	for _, c := range cands {
		if s, ok := normHint(c.value()); ok {
			h.value = c.family + ":" + s
			break
		}
	}
	h.window = codexWindow(hdr)
	return h
}

// normHint trims a hint and accepts it only when it is 1..128 printable
// ASCII characters without spaces.
func normHint(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > maxHint {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return "", false
		}
	}
	return s, true
}

// claudeUserSession reads the session id from metadata.user_id: a JSON
// object with session_id, or the older user_<hex>_account_<uuid>_session_<uuid>.
func claudeUserSession(v *dialect.View) string {
	if v.Dialect() != dialect.AnthropicMessages {
		return ""
	}
	uid := v.Get("metadata.user_id").String()
	if uid == "" || len(uid) > 2048 {
		return ""
	}
	if strings.HasPrefix(strings.TrimSpace(uid), "{") {
		var m struct {
			SessionID string `json:"session_id"`
		}
		if json.Unmarshal([]byte(uid), &m) == nil {
			return m.SessionID
		}
		return ""
	}
	if i := strings.LastIndex(uid, "_session_"); i >= 0 {
		return uid[i+len("_session_"):]
	}
	return ""
}

func codexWindow(hdr http.Header) int {
	if hdr == nil {
		return 0
	}
	w := hdr.Get("x-codex-window-id")
	if w == "" || len(w) > maxHint {
		return 0
	}
	i := strings.LastIndexByte(w, ':')
	if i < 0 {
		return 0
	}
	n, err := strconv.Atoi(w[i+1:])
	if err != nil || n < 0 || n > 1<<20 {
		return 0
	}
	return n + 1 // 0 means "no window"
}

// agentOf names the coding agent: the one the compaction rule matched, else
// the one the client hint's family belongs to.
func agentOf(ruleAgent, client string) string {
	if ruleAgent != "" {
		return ruleAgent
	}
	family, _, _ := strings.Cut(client, ":")
	switch family {
	case "codex":
		return "codex"
	case "claude":
		return "claude-code"
	case "opencode":
		return "opencode"
	}
	return ""
}
