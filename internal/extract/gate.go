package extract

import (
	"regexp"
	"strings"

	"github.com/tether-dev/tether/internal/capsule"
	"github.com/tether-dev/tether/internal/dialect"
)

// Gate reasons.
const (
	ReasonPlanTool      = "plan_tool"      // a structured plan/todo tool call
	ReasonProposalReply = "proposal_reply" // an assistant plan or proposal answered by the user
	ReasonUserCue       = "user_cue"       // a user turn with a decision/constraint/correction cue
	ReasonNoSignal      = "no_signal"      // nothing worth a call
	ReasonKnown         = "already_known"  // cues only in text the capsule already records
)

// Signal is the gate's verdict. Reason is one of the Reason constants.
type Signal struct {
	Eligible bool
	Reason   string
}

// planTools are structured plan/todo tools of the supported harnesses
// (compared case-insensitively, without "_" and "-").
var planTools = map[string]bool{
	"updateplan": true, "todowrite": true, "writetodos": true, "todo": true,
	"exitplanmode": true, "taskprogress": true, "plan": true, "setplan": true,
}

// userCue matches decision, constraint, correction, rejection and approval
// wording in lower-cased user text.
var userCue = regexp.MustCompile(`(?:^|[^a-z])(?:` + strings.Join([]string{
	`let'?s (?:use|go|do|keep|switch|stick|pick|choose|drop)`, `let us`,
	`use [^.?!\n]{1,40} (?:not|instead|rather)`, `instead`, `rather`,
	`don'?t`, `do not`, `never`, `must`, `always`, `shouldn'?t`, `should not`,
	`we (?:decided|agreed|chose|settled)`, `decided`, `decision`, `go with`, `going with`, `go(?:ing)? for`, `opt(?:ing|ed)? for`,
	`actually`, `prefer`, `reject(?:s|ed|ing)?`, `switch to`, `stick (?:with|to)`, `keep`, `avoid`,
	`constraint`, `requirement`, `required`, `requires?`, `only use`, `no longer`,
	`approved?`, `sounds good`, `lgtm`, `looks good`, `proceed`, `ok,? go`, `okay,? go`, `go ahead`,
	`yes`, `yep`, `yeah`, `agreed`, `correct`, `that'?s wrong`, `wrong`,
	`not (?:a |an |the )?[a-z0-9]`, `option [a-d1-9]\b`, `plan [a-d1-9]\b`,
}, "|") + `)(?:$|[^a-z])`)

// userNo matches a user turn that opens with a refusal or correction.
var userNo = regexp.MustCompile(`^(?:no|nope|nah|wait|stop)\b`)

// chitChat are user turns that never carry a decision even if a cue word
// appears in them.
var chitChat = regexp.MustCompile(`^(?:keep going|keep it up|go on|continue|thanks?(?: you)?|thx|ty|nice|great|cool|ok|okay)[.! ]*$`)

// proposalCue matches plan/proposal/clarification wording in lower-cased
// assistant text.
var proposalCue = regexp.MustCompile(`\bplan\b|\bpropos|\boption [a-d1-9]\b|\bshould we\b|\bshall i\b|\bwould you (?:like|prefer)\b|\bdo you want\b|\bwhich (?:one|option|approach)\b|\bwhich (?:do|would) you (?:prefer|like|want|rather)\b|\(1\)[^\n]*\(2\)|\balternative|\brecommend|\bapproach\b|<proposed_plan>`)

// numbered matches a numbered list line.
var numbered = regexp.MustCompile(`(?m)^\s*(?:\d+[.)]|[-*] \[[ x]\])\s+\S`)

// minProposal is the shortest assistant text counted as a substantial
// plan or proposal.
const minProposal = 80

// Gate decides from cheap local signals in delta (the messages since the
// capsule's watermark) whether an extractor call may add anything to prev.
// It looks at nothing before the delta and never decides what is true: it
// only avoids calls when there is no plan tool call, no answered proposal
// and no user turn with decision-like wording that the capsule does not
// already record.
func Gate(prev *capsule.Capsule, delta []dialect.Message) Signal {
	known := knownTexts(prev)
	proposal := false   // an assistant proposal waits for a user reply
	agentAsked := false // the last user-role message was the agent's own
	sawKnown := false
	for _, m := range delta {
		for _, tc := range m.ToolCalls {
			if isPlanTool(tc.Name) {
				return Signal{Eligible: true, Reason: ReasonPlanTool}
			}
		}
		if m.Role == "assistant" {
			// A proposal waits for the user's reply; an answer to the
			// agent's own message (a compaction summary) is none.
			if t := cleanText(m.Text); t != "" {
				proposal = !agentAsked && isProposal(t)
				agentAsked = false
			}
			continue
		}
		if m.Role == "user" && len(m.ToolResults) == 0 && agentWritten(cleanText(m.Text)) {
			agentAsked = true
			continue
		}
		t, ok := userText(m)
		if !ok {
			continue
		}
		if proposal {
			return Signal{Eligible: true, Reason: ReasonProposalReply}
		}
		if !hasUserCue(t) {
			continue
		}
		if isKnown(capsule.Normalize(t), known) {
			sawKnown = true
			continue
		}
		return Signal{Eligible: true, Reason: ReasonUserCue}
	}
	if sawKnown {
		return Signal{Reason: ReasonKnown}
	}
	return Signal{Reason: ReasonNoSignal}
}

// Quiet reports whether delta holds nothing the gate could ever pass,
// whatever the capsule holds and wherever the delta is cut: no plan tool
// call and no user text (a tool loop's turns: calls and their results).
// The caller may then skip reading the capsule for the gate.
func Quiet(delta []dialect.Message) bool {
	for _, m := range delta {
		for _, tc := range m.ToolCalls {
			if isPlanTool(tc.Name) {
				return false
			}
		}
		if _, ok := userText(m); ok {
			return false
		}
	}
	return true
}

func isPlanTool(name string) bool {
	// Namespaced: functions.update_plan, mcp__tasks__todo_write.
	if i := strings.LastIndexAny(name, ".:/"); i >= 0 {
		name = name[i+1:]
	}
	if i := strings.LastIndex(name, "__"); i >= 0 {
		name = name[i+2:]
	}
	if len(name) > maxPlanTool {
		return false
	}
	var b [maxPlanTool]byte
	n := 0
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_' || c == '-':
			continue
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		b[n] = c
		n++
	}
	return planTools[string(b[:n])]
}

// maxPlanTool bounds the tool names isPlanTool folds (the longest plan
// tool, with room for separators).
const maxPlanTool = 32

func isProposal(text string) bool {
	t := strings.ToLower(cleanText(text))
	if len(t) < minProposal {
		return false
	}
	return len(numbered.FindAllStringIndex(t, 3)) >= 2 || proposalCue.MatchString(t)
}

func hasUserCue(t string) bool {
	l := strings.ToLower(strings.TrimSpace(t))
	if chitChat.MatchString(l) {
		return false
	}
	// Whatever the built-in extractor reads is a cue too: the gate must
	// never keep it from a statement it would record.
	return userNo.MatchString(l) || userCue.MatchString(l) || len(readTurn(t)) > 0
}

// knownTexts returns the normalised text of every capsule item.
func knownTexts(c *capsule.Capsule) []string {
	if c == nil {
		return nil
	}
	var out []string
	add := func(s string) {
		if n := capsule.Normalize(s); n != "" {
			out = append(out, n)
		}
	}
	if c.LatestPlan != nil {
		for _, s := range c.LatestPlan.Steps {
			add(s.Text)
		}
	}
	for _, d := range c.Decisions {
		add(d.Statement)
	}
	for _, k := range c.Constraints {
		add(k.Text)
	}
	for _, r := range c.Rejected {
		add(r.Text)
	}
	for _, q := range c.OpenQuestions {
		add(q.Text)
	}
	return out
}

// isKnown reports whether the normalised user text n already appears in a
// capsule item.
func isKnown(n string, known []string) bool {
	if n == "" {
		return false
	}
	for _, k := range known {
		if strings.Contains(k, n) {
			return true
		}
	}
	return false
}
