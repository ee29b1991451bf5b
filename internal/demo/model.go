package demo

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/tether-dev/tether/internal/fakemodel"
)

// ExtractorModel is the model name the demo's extractor route asks for; the
// scripted model answers it with extraction operations.
const ExtractorModel = "demo-extractor"

// PlanSteps is the plan the scripted model records with TodoWrite.
var PlanSteps = []string{
	"Create the PostgreSQL schema for items and stock levels",
	"Implement the inventory repository with hand-written SQL",
	"Add the REST handlers behind the existing public API",
}

// LossySummary is what the scripted compactor answers: it keeps the goal and
// forgets every decision, as real summaries do after a few compactions.
const LossySummary = "We are building an inventory service and are partway through the work. Continue with the next step."

// Model returns the scripted provider: the coding model (TodoWrite plans),
// a lossy compactor, and — for requests to ExtractorModel — an extractor
// that turns explicit "Decision:", "Constraint:", "Rejected:" and "Actually,
// use X instead of Y" user lines into capsule operations.
func Model() fakemodel.Responder {
	return func(req *fakemodel.Request) fakemodel.Reply {
		if req.Model() == ExtractorModel {
			return fakemodel.Reply{Text: extractorOps(req.Body), InputTokens: int64(len(req.Body) / 4), OutputTokens: 60}
		}
		if fakemodel.Classify(req) == fakemodel.KindCompaction {
			return fakemodel.Reply{Text: "<analysis>The user is building an inventory service.</analysis>\n<summary>" + LossySummary + "</summary>", InputTokens: 3000, OutputTokens: 80}
		}
		last := gjson.GetBytes(req.Body, "messages.@reverse.0")
		if last.Get("content.0.type").String() == "tool_result" {
			return fakemodel.Reply{Text: "Plan recorded. Starting on it.", InputTokens: 2000, OutputTokens: 10}
		}
		user := lastUserText(last)
		switch {
		case strings.Contains(user, "make a plan"):
			return fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{todoWrite(0)}, InputTokens: 2000, OutputTokens: 40}
		case strings.Contains(user, "Step 1 is done"):
			return fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{todoWrite(1)}, InputTokens: 2000, OutputTokens: 40}
		}
		return fakemodel.Reply{Text: "Understood.", InputTokens: 2000, OutputTokens: 5}
	}
}

func lastUserText(msg gjson.Result) string {
	var b strings.Builder
	msg.Get("content").ForEach(func(_, part gjson.Result) bool {
		if part.Get("type").String() == "text" {
			b.WriteString(part.Get("text").String())
		}
		return true
	})
	if s := msg.Get("content"); s.Type == gjson.String {
		return s.String()
	}
	return b.String()
}

// todoWrite records the plan with the first done steps completed.
func todoWrite(done int) fakemodel.ToolCall {
	type todo struct {
		Content    string `json:"content"`
		Status     string `json:"status"`
		ActiveForm string `json:"activeForm"`
	}
	var todos []todo
	for i, s := range PlanSteps {
		st := "pending"
		switch {
		case i < done:
			st = "completed"
		case i == done:
			st = "in_progress"
		}
		todos = append(todos, todo{Content: s, Status: st, ActiveForm: s})
	}
	args, _ := json.Marshal(map[string]any{"todos": todos})
	return fakemodel.ToolCall{Name: "TodoWrite", Arguments: string(args)}
}

var (
	userLine     = regexp.MustCompile(`(?m)^\[m(\d+) user\] (.*)$`)
	capsuleItem  = regexp.MustCompile(`(?m)^- (D\d+): (.*)$`)
	actuallyLine = regexp.MustCompile(`(?i)actually, use (.+?) instead of (.+?)(?: for (.+?))?\.?$`)
)

// extractorOps plays the extraction model: it reads the fenced transcript
// the extractor sends and answers {"ops":[…]}, each op quoting the user
// sentence it is based on (schema/ops.v2.json).
func extractorOps(body []byte) string {
	var input strings.Builder
	gjson.GetBytes(body, "messages").ForEach(func(_, m gjson.Result) bool {
		if m.Get("role").String() == "user" {
			input.WriteString(lastUserText(m))
			input.WriteString("\n")
		}
		return true
	})
	text := input.String()
	active := map[string]string{}
	for _, m := range capsuleItem.FindAllStringSubmatch(text, -1) {
		active[m[1]] = m[2]
	}
	ops := []map[string]any{}
	for _, m := range userLine.FindAllStringSubmatchIndex(text, -1) {
		turn := 0
		fmt.Sscan(text[m[2]:m[3]], &turn)
		// A message of several lines goes on in lines indented by two
		// spaces (Gemini CLI puts its session context first).
		lines := []string{text[m[4]:m[5]]}
		for rest := text[m[1]:]; strings.HasPrefix(rest, "\n  "); {
			line, next, _ := strings.Cut(rest[3:], "\n")
			lines = append(lines, line)
			rest = "\n" + next
			if next == "" {
				break
			}
		}
		for _, sentence := range userSentences(lines) {
			switch {
			case strings.HasPrefix(sentence, "Decision: "):
				stmt, why, _ := strings.Cut(strings.TrimPrefix(sentence, "Decision: "), ", because ")
				op := map[string]any{"op": "add_decision", "statement": strings.TrimSuffix(stmt, "."), "quote": sentence, "turn": turn}
				if why != "" {
					op["rationale"] = strings.TrimSuffix(why, ".")
				}
				ops = append(ops, op)
			case strings.HasPrefix(sentence, "Constraint: "):
				ops = append(ops, map[string]any{"op": "add_constraint", "text": strings.TrimSuffix(strings.TrimPrefix(sentence, "Constraint: "), "."), "quote": sentence, "turn": turn})
			case strings.HasPrefix(sentence, "Rejected: "):
				alt, why, _ := strings.Cut(strings.TrimPrefix(sentence, "Rejected: "), " — ")
				op := map[string]any{"op": "reject_alternative", "text": strings.TrimSuffix(alt, "."), "quote": sentence, "turn": turn}
				if why != "" {
					op["reason"] = strings.TrimSuffix(why, ".")
				}
				ops = append(ops, op)
			default:
				if a := actuallyLine.FindStringSubmatch(sentence); a != nil {
					for id, stmt := range active {
						if strings.Contains(strings.ToLower(stmt), strings.ToLower(a[2])) {
							// The statement is the user's own words: Ground
							// keeps only text quoted from the cited turn.
							stmt := "U" + strings.TrimSuffix(a[0][strings.Index(strings.ToLower(a[0]), "use ")+1:], ".")
							ops = append(ops, map[string]any{"op": "supersede_decision", "id": id,
								"statement": stmt, "quote": sentence, "turn": turn})
							break
						}
					}
				}
			}
		}
	}
	out, _ := json.Marshal(map[string]any{"ops": ops})
	return string(out)
}

// userSentences splits the lines of one user message into sentences; some
// agents quote the user's message (OpenCode's "run" does).
func userSentences(lines []string) []string {
	var out []string
	for _, l := range lines {
		out = append(out, splitSentences(strings.Trim(l, `"“”`))...)
	}
	return out
}

func splitSentences(s string) []string {
	var out []string
	for _, p := range regexp.MustCompile(`\.\s+`).Split(s, -1) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
