package dialect

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/tether-dev/tether/internal/capsule"
)

// Provider-side compaction fields (Anthropic Messages beta
// compact-2026-01-12: context_management.edits[] of type compact_20260112,
// whose optional "instructions" replace the provider's default summary
// prompt).

// AnthropicCompactEdit is the edit type of Anthropic's server-side
// compaction.
const AnthropicCompactEdit = "compact_20260112"

// AnthropicSummarize is the type of Anthropic's on-demand compaction
// parameter (beta compact-2026-09-04).
const AnthropicSummarize = "summarize"

// AppendCompactionInstructions adds text to the instructions of every
// server-side compaction edit of an Anthropic body, and of its on-demand
// compaction parameter, that has instructions of its own, after them. An edit without instructions is left alone: setting
// some would replace the provider's default prompt. It reports whether it
// changed anything; bytes outside the edited strings stay as they are.
func AppendCompactionInstructions(name Name, body []byte, text string) ([]byte, bool) {
	if name != AnthropicMessages {
		return body, false
	}
	changed := false
	// Anthropic on-demand compaction: {"compaction":{"type":"summarize",
	// "instructions":…}}; its instructions replace the default prompt too.
	if ins := gjson.GetBytes(body, "compaction.instructions"); ins.Type == gjson.String && strings.TrimSpace(ins.String()) != "" &&
		gjson.GetBytes(body, "compaction.type").String() == AnthropicSummarize {
		if out, err := setString(body, "compaction.instructions", stripped(ins.String())+"\n\n"+text); err == nil {
			body, changed = out, true
		}
	}
	edits := gjson.GetBytes(body, "context_management.edits")
	if !edits.IsArray() {
		return body, changed
	}
	i := 0
	edits.ForEach(func(_, e gjson.Result) bool {
		ins := e.Get("instructions")
		if e.Get("type").String() == AnthropicCompactEdit && ins.Type == gjson.String && ins.String() != "" {
			path := "context_management.edits." + strconv.Itoa(i) + ".instructions"
			if out, err := setString(body, path, stripped(ins.String())+"\n\n"+text); err == nil {
				body, changed = out, true
			}
		}
		i++
		return true
	})
	return body, changed
}

func stripped(s string) string {
	out, _ := capsule.Strip(s)
	return strings.TrimRight(out, " \n")
}

// Request fields that ask the provider to manage the context itself.
const (
	// FieldContextManagement is Anthropic's context_management (edits:
	// compact_20260112, clear_tool_uses_20250919, clear_thinking_20251015)
	// and OpenAI Responses' context_management ([{"type":"compaction"}]).
	FieldContextManagement = "context_management"
	// FieldCompaction is Anthropic's on-demand compaction parameter (beta
	// compact-2026-09-04), e.g. {"type":"summarize"}: the answer is one
	// signed compaction block that later requests lead messages with.
	FieldCompaction = "compaction"
)

// ProviderContextField returns the top-level field of a request that asks
// the provider to compact or edit the context itself, or "" when there is
// none (Gemini has no such field).
func ProviderContextField(v *View) string {
	if v == nil || v.Dialect() == Gemini {
		return ""
	}
	for _, f := range []string{FieldContextManagement, FieldCompaction} {
		if r := v.Get(f); r.Exists() && r.Type != gjson.Null {
			return f
		}
	}
	return ""
}
