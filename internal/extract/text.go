package extract

import (
	"strings"

	"github.com/tether-dev/tether/internal/capsule"
	"github.com/tether-dev/tether/internal/compaction"
	"github.com/tether-dev/tether/internal/dialect"
)

// rules is the compaction rule file, the one authority on agents' wire
// markers.
var rules = compaction.Default()

// harnessTags are blocks coding agents insert into user-role messages on the
// user's behalf (context, reminders, command echoes). They are not the user
// speaking and are removed before gating or extraction. summaryPrefixes
// (lower-case) open user-role messages that carry an earlier compaction
// summary rather than something the user wrote. One rule authority:
// rules.yaml.
var harnessTags, summaryPrefixes = func() ([]string, []string) {
	u := rules.UserRoleText()
	for i, p := range u.SummaryPrefixes {
		u.SummaryPrefixes[i] = strings.ToLower(p)
	}
	for i, t := range u.HarnessTags {
		u.HarnessTags[i] = strings.ToLower(t)
	}
	return u.HarnessTags, u.SummaryPrefixes
}()

// userText returns what the user actually wrote in m: the message text with
// capsule blocks and harness blocks removed, trimmed. It reports false for
// a message that is not the user's own (tool results, compaction summaries,
// messages the agent wrote in the user's role).
func userText(m dialect.Message) (string, bool) {
	if m.Role != "user" || m.Type != "" && m.Type != "message" {
		return "", false
	}
	t := cleanText(m.Text)
	if t == "" {
		return "", false
	}
	if isSummary(t) || agentWritten(t) {
		return "", false
	}
	return t, true
}

// isSummary reports whether t opens like an agent's compaction summary.
func isSummary(t string) bool {
	head := strings.ToLower(t[:min(len(t), compaction.MaxSummaryPrefix)])
	for _, p := range summaryPrefixes {
		if strings.HasPrefix(head, p) {
			return true
		}
	}
	return false
}

// cleanText strips capsule blocks and harness blocks from t.
func cleanText(t string) string {
	t, _ = capsule.Strip(t)
	if strings.IndexByte(t, '<') >= 0 {
		for _, tag := range harnessTags {
			t = stripBlock(t, tag)
		}
	}
	return strings.TrimSpace(t)
}

// stripBlock removes every <tag …>…</tag> block (tag lower-case; matched
// ASCII case-insensitively in t); an unterminated block runs to the end of
// t. It reads t in place: a message with no such block costs a scan and no
// copy.
func stripBlock(t, tag string) string {
	open, closing := "<"+tag, "</"+tag+">"
	o := indexTag(t, open, 0)
	if o < 0 {
		return t
	}
	var b strings.Builder
	i := 0
	for o >= 0 {
		b.WriteString(t[i:o])
		c := indexFold(t, closing, o)
		if c < 0 {
			return b.String()
		}
		i = c + len(closing)
		o = indexTag(t, open, i)
	}
	b.WriteString(t[i:])
	return b.String()
}

// indexTag finds open ("<tag", lower-case) in t at or after from, ASCII
// case-insensitively, followed by '>', '/', white space or the end, so
// "<command-name" does not match "<command-names".
func indexTag(t, open string, from int) int {
	for {
		k := indexFold(t, open, from)
		if k < 0 {
			return -1
		}
		j := k + len(open)
		if j == len(t) || t[j] == '>' || t[j] == ' ' || t[j] == '\n' || t[j] == '\t' || t[j] == '/' {
			return k
		}
		from = j
	}
}

// indexFold is the index of s (lower-case ASCII, starting with '<') in t at
// or after from, ASCII case-insensitively, or -1.
func indexFold(t, s string, from int) int {
	for i := from; i+len(s) <= len(t); i++ {
		k := strings.IndexByte(t[i:len(t)-len(s)+1], s[0])
		if k < 0 {
			return -1
		}
		i += k
		// s is ASCII and t[i:i+len(s)] has as many bytes, so no other
		// character can fold onto it: this is ASCII case folding.
		if strings.EqualFold(t[i:i+len(s)], s) {
			return i
		}
	}
	return -1
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + " […]"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// agentTurns are the conditions of the compaction rule file that recognise
// a user-role message the agent wrote itself: compaction prompts and the
// automatic messages agents send after a compaction ("Continue if you have
// next steps…"). Such a message is not the user speaking: it never opens
// the gate and never feeds extraction. One rule authority: rules.yaml.
var agentTurns = func() []compaction.Condition {
	var out []compaction.Condition
	for _, r := range rules.Rules() {
		if r.Evidence.Rank() < compaction.EvidenceSignature.Rank() ||
			r.Marks != compaction.MarkCompaction && r.Marks != compaction.MarkPostCompaction {
			continue
		}
		for _, c := range r.Match {
			if (c.Where == "message_text:user" || c.Where == "last_user_text") && c.How != "absent" {
				out = append(out, c)
			}
		}
	}
	return out
}()

// agentWritten reports whether user-role text t is one the agent wrote.
func agentWritten(t string) bool {
	t = strings.TrimSpace(t)
	for i := range agentTurns {
		if agentTurns[i].Test(t) {
			return true
		}
	}
	return false
}
