// Package harvest reads the agreed plan out of a conversation mechanically,
// from structured carriers only: plan and todo tool calls (Codex update_plan,
// OpenCode todowrite, Claude Code TodoWrite and TaskCreate/TaskUpdate,
// Gemini write_todos, Pi's todo extension, Cline's task_progress parameter),
// Claude Code's ExitPlanMode with its approval, and Codex <proposed_plan>
// blocks. Which tools carry a plan, and how to decode them, comes from the
// harvest section of the compaction rule file. Prose is never parsed to
// declare a plan accepted.
package harvest

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	"github.com/tether-dev/tether/internal/compaction"
	"github.com/tether-dev/tether/internal/dialect"
)

// Plan sources.
const (
	SourceStructuredTool = "structured_tool"
	SourcePlanMode       = "plan_mode"
)

// Plan statuses.
const (
	StatusAccepted    = "accepted"
	StatusProvisional = "provisional"
)

// Step statuses.
const (
	StepPending    = "pending"
	StepInProgress = "in_progress"
	StepCompleted  = "completed"
	StepCancelled  = "cancelled"
)

// Step is one plan item.
type Step struct {
	Text   string
	Status string // pending | in_progress | completed | cancelled
}

// Plan is the latest plan found in a conversation.
type Plan struct {
	Tool        string // the tool (or carrier) that set it
	RuleID      string
	RuleVersion int
	Source      string // structured_tool | plan_mode
	Status      string // accepted | provisional
	Steps       []Step
	Turn        int // dialect.Message.Index of the message that set it
	// Offset is how many earlier steps (done and condensed away) precede
	// Steps: the first step's id in an id-keyed carrier is Offset+1. Read
	// only from a seed.
	Offset int
}

// Harvest returns the latest plan set by a structured carrier in
// msgs[from:]. Carriers that accumulate state across calls (Claude Code
// tasks, Pi's todo extension) are rebuilt from the whole of msgs, but only a
// call at or after from counts as setting the plan. Malformed arguments are
// ignored. It reports false when no carrier in msgs[from:] set a plan.
//
// seed, when given, is the plan recorded before: an accumulating carrier
// that set it starts from its steps, so a call that refers to a step by id
// ("toggle 2") still applies after a compaction removed the calls that
// created the steps from the history.
func Harvest(rules []compaction.HarvestRule, msgs []dialect.Message, from int, seed ...Plan) (Plan, bool) {
	if from < 0 {
		from = 0
	}
	byTool := map[string]*compaction.HarvestRule{}
	var proposed, progress *compaction.HarvestRule
	for i := range rules {
		r := &rules[i]
		switch r.Format {
		case compaction.FormatProposedPlan:
			if proposed == nil {
				proposed = r
			}
		case compaction.FormatTaskProgress:
			if progress == nil {
				progress = r
			}
		}
		for _, t := range r.Tools {
			if _, dup := byTool[t]; !dup {
				byTool[t] = r
			}
		}
	}
	// The tool results by call id, made the first time a carrier that
	// reads its result is met: most histories have none, and a turn then
	// costs no map of every result in them.
	var results map[string]string
	resultsOf := func() map[string]string {
		if results == nil {
			results = map[string]string{}
			for _, m := range msgs {
				for _, tr := range m.ToolResults {
					if tr.CallID != "" && !tr.IsError {
						results[tr.CallID] = tr.Text
					}
				}
			}
		}
		return results
	}

	var (
		best  Plan
		found bool
		tasks taskList
		todos taskList
	)
	for _, sd := range seed {
		if r := byTool[sd.Tool]; r != nil && sd.Source == SourceStructuredTool {
			switch r.Format {
			case compaction.FormatClaudeTasks:
				tasks.seed(sd)
			case compaction.FormatPiTodo:
				todos.seed(sd)
			}
		}
	}
	set := func(i int, p Plan) {
		if i >= from {
			best, found = p, true
		}
	}
	for i, m := range msgs {
		if proposed != nil && m.Role == "assistant" && m.Text != "" {
			if steps, ok := proposedPlan(m.Text); ok {
				set(i, newPlan("proposed_plan", proposed, SourcePlanMode, StatusProvisional, steps, m.Index))
			}
		}
		for _, tc := range m.ToolCalls {
			if r := byTool[tc.Name]; r != nil {
				switch r.Format {
				case compaction.FormatCodexUpdatePlan:
					if steps, ok := decodeUpdatePlan(tc.Arguments); ok {
						set(i, newPlan(tc.Name, r, SourceStructuredTool, StatusAccepted, steps, m.Index))
					}
				case compaction.FormatTodoWrite:
					if steps, ok := decodeTodos(tc.Arguments, "content"); ok {
						set(i, newPlan(tc.Name, r, SourceStructuredTool, StatusAccepted, steps, m.Index))
					}
				case compaction.FormatWriteTodos:
					if steps, ok := decodeTodos(tc.Arguments, "description"); ok {
						set(i, newPlan(tc.Name, r, SourceStructuredTool, StatusAccepted, steps, m.Index))
					}
				case compaction.FormatClaudeTasks:
					if tasks.applyClaude(tc, resultsOf()[tc.ID]) {
						set(i, newPlan(tc.Name, r, SourceStructuredTool, StatusAccepted, tasks.steps(), m.Index))
					}
				case compaction.FormatPiTodo:
					if todos.applyPi(tc.Arguments, resultsOf()[tc.ID]) {
						set(i, newPlan(tc.Name, r, SourceStructuredTool, StatusAccepted, todos.steps(), m.Index))
					}
				case compaction.FormatExitPlanMode:
					if p, ok := decodeExitPlanMode(tc, resultsOf(), r, m.Index); ok {
						set(i, p)
					}
				}
			}
			if progress != nil {
				if steps, ok := decodeTaskProgress(tc.Arguments); ok {
					set(i, newPlan("task_progress", progress, SourceStructuredTool, StatusAccepted, steps, m.Index))
				}
			}
		}
	}
	return best, found
}

func newPlan(tool string, r *compaction.HarvestRule, source, status string, steps []Step, turn int) Plan {
	return Plan{Tool: tool, RuleID: r.ID, RuleVersion: r.Version, Source: source, Status: status, Steps: steps, Turn: turn}
}

// normStatus maps a carrier's status to a step status; ok is false for an
// unknown one.
func normStatus(s string) (string, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "pending", "todo", "not_started", "":
		return StepPending, true
	case "in_progress", "in-progress", "active", "doing":
		return StepInProgress, true
	case "completed", "complete", "done":
		return StepCompleted, true
	case "cancelled", "canceled":
		return StepCancelled, true
	}
	return "", false
}

func decodeUpdatePlan(args []byte) ([]Step, bool) {
	var in struct {
		Plan *[]struct {
			Step   string `json:"step"`
			Status string `json:"status"`
		} `json:"plan"`
	}
	if json.Unmarshal(args, &in) != nil || in.Plan == nil {
		return nil, false
	}
	steps := []Step{}
	for _, s := range *in.Plan {
		st, ok := normStatus(s.Status)
		if !ok || strings.TrimSpace(s.Step) == "" {
			continue
		}
		steps = append(steps, Step{Text: strings.TrimSpace(s.Step), Status: st})
	}
	return steps, true
}

// decodeTodos reads {todos:[{<textKey>, status}]} (todowrite, TodoWrite,
// write_todos).
func decodeTodos(args []byte, textKey string) ([]Step, bool) {
	var in struct {
		Todos *[]map[string]any `json:"todos"`
	}
	if json.Unmarshal(args, &in) != nil || in.Todos == nil {
		return nil, false
	}
	steps := []Step{}
	for _, t := range *in.Todos {
		text, _ := t[textKey].(string)
		status, _ := t["status"].(string)
		st, ok := normStatus(status)
		if !ok || strings.TrimSpace(text) == "" {
			continue
		}
		steps = append(steps, Step{Text: strings.TrimSpace(text), Status: st})
	}
	return steps, true
}

// taskList rebuilds an id-keyed list across calls.
type taskList struct {
	order []string
	items map[string]*Step
}

func (l *taskList) add(id, text string) {
	if l.items == nil {
		l.items = map[string]*Step{}
	}
	if _, ok := l.items[id]; !ok {
		l.order = append(l.order, id)
	}
	l.items[id] = &Step{Text: text, Status: StepPending}
}

// seed starts the list from a recorded plan: step i has id Offset+i+1.
func (l *taskList) seed(p Plan) {
	for i, st := range p.Steps {
		id := strconv.Itoa(p.Offset + i + 1)
		l.add(id, st.Text)
		l.items[id].Status = st.Status
	}
}

func (l *taskList) steps() []Step {
	out := []Step{}
	for _, id := range l.order {
		if s, ok := l.items[id]; ok {
			out = append(out, *s)
		}
	}
	return out
}

func (l *taskList) remove(id string) {
	delete(l.items, id)
	for i, o := range l.order {
		if o == id {
			l.order = append(l.order[:i:i], l.order[i+1:]...)
			break
		}
	}
}

var (
	taskCreatedRe = regexp.MustCompile(`Task #(\d+) created`)
	piAddedRe     = regexp.MustCompile(`todo #(\d+)`)
)

// applyClaude applies TaskCreate {subject, description} or TaskUpdate
// {taskId, status, subject?}. The id of a created task comes from its tool
// result ("Task #N created successfully: …"), else from creation order.
func (l *taskList) applyClaude(tc dialect.ToolCall, result string) bool {
	switch tc.Name {
	case "TaskCreate":
		var in struct {
			Subject     string `json:"subject"`
			Description string `json:"description"`
		}
		if json.Unmarshal(tc.Arguments, &in) != nil {
			return false
		}
		text := strings.TrimSpace(in.Subject)
		if text == "" {
			text = strings.TrimSpace(in.Description)
		}
		if text == "" {
			return false
		}
		id := strconv.Itoa(len(l.order) + 1)
		if m := taskCreatedRe.FindStringSubmatch(result); m != nil {
			id = m[1]
		}
		l.add(id, text)
		return true
	case "TaskUpdate":
		var in struct {
			TaskID  json.RawMessage `json:"taskId"`
			Status  string          `json:"status"`
			Subject string          `json:"subject"`
		}
		if json.Unmarshal(tc.Arguments, &in) != nil {
			return false
		}
		id := strings.Trim(string(in.TaskID), `"`)
		s, ok := l.items[id]
		if !ok {
			return false
		}
		if in.Status == "deleted" {
			l.remove(id)
			return true
		}
		if in.Status != "" {
			st, ok := normStatus(in.Status)
			if !ok {
				return false
			}
			s.Status = st
		}
		if t := strings.TrimSpace(in.Subject); t != "" {
			s.Text = t
		}
		return true
	}
	return false
}

// applyPi applies Pi's example todo extension: {action: add|toggle|clear|list,
// text?, id?}. Ids come from the result ("Added todo #N: …"), else order.
func (l *taskList) applyPi(args []byte, result string) bool {
	var in struct {
		Action string          `json:"action"`
		Text   string          `json:"text"`
		ID     json.RawMessage `json:"id"`
	}
	if json.Unmarshal(args, &in) != nil {
		return false
	}
	switch in.Action {
	case "add":
		text := strings.TrimSpace(in.Text)
		if text == "" {
			return false
		}
		id := strconv.Itoa(len(l.order) + 1)
		if m := piAddedRe.FindStringSubmatch(result); m != nil {
			id = m[1]
		}
		l.add(id, text)
		return true
	case "toggle":
		s, ok := l.items[strings.Trim(string(in.ID), `"`)]
		if !ok {
			return false
		}
		if s.Status == StepCompleted {
			s.Status = StepPending
		} else {
			s.Status = StepCompleted
		}
		return true
	case "clear":
		l.order, l.items = nil, nil
		return true
	}
	return false
}

var (
	listLineRe  = regexp.MustCompile(`^\s*(?:\d+[.)]|[-*+])\s+(.*\S)\s*$`)
	checkboxRe  = regexp.MustCompile(`^\[([ xX])\]\s*(.*)$`)
	proposedRe  = regexp.MustCompile(`(?s)<proposed_plan>(.*?)</proposed_plan>`)
	approvedTag = "User has approved your plan"
)

// listSteps reads the numbered or bulleted lines of a plan text; a
// "[x]" checkbox marks a step completed.
func listSteps(text string) []Step {
	var out []Step
	for _, line := range strings.Split(text, "\n") {
		m := listLineRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		s := Step{Text: m[1], Status: StepPending}
		if c := checkboxRe.FindStringSubmatch(m[1]); c != nil {
			s.Text = strings.TrimSpace(c[2])
			if c[1] != " " {
				s.Status = StepCompleted
			}
		}
		if s.Text != "" {
			out = append(out, s)
		}
	}
	return out
}

// proposedPlan reads the last <proposed_plan> block of an assistant text.
func proposedPlan(text string) ([]Step, bool) {
	if !strings.Contains(text, "<proposed_plan>") {
		return nil, false
	}
	ms := proposedRe.FindAllStringSubmatch(text, -1)
	if len(ms) == 0 {
		return nil, false
	}
	steps := listSteps(ms[len(ms)-1][1])
	return steps, len(steps) > 0
}

// decodeExitPlanMode reads ExitPlanMode {plan}. The plan is accepted only
// when its tool result says the user approved it; the approved text (which
// the user may have edited) then replaces the proposed one.
func decodeExitPlanMode(tc dialect.ToolCall, results map[string]string, r *compaction.HarvestRule, turn int) (Plan, bool) {
	var in struct {
		Plan string `json:"plan"`
	}
	if json.Unmarshal(tc.Arguments, &in) != nil {
		return Plan{}, false
	}
	text, status := in.Plan, StatusProvisional
	if res, ok := results[tc.ID]; ok && strings.Contains(res, approvedTag) {
		status = StatusAccepted
		if _, after, ok := strings.Cut(res, "## Approved Plan:"); ok && strings.TrimSpace(after) != "" {
			text = after
		}
	}
	steps := listSteps(text)
	if len(steps) == 0 {
		return Plan{}, false
	}
	return newPlan(tc.Name, r, SourcePlanMode, status, steps, turn), true
}

// decodeTaskProgress reads Cline's task_progress parameter, a markdown
// checklist, from any tool call's arguments.
func decodeTaskProgress(args []byte) ([]Step, bool) {
	if !bytes.Contains(args, []byte(`"task_progress"`)) {
		return nil, false
	}
	var in struct {
		TaskProgress string `json:"task_progress"`
	}
	if json.Unmarshal(args, &in) != nil || in.TaskProgress == "" {
		return nil, false
	}
	var steps []Step
	for _, line := range strings.Split(in.TaskProgress, "\n") {
		m := listLineRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		c := checkboxRe.FindStringSubmatch(m[1])
		if c == nil {
			continue
		}
		s := Step{Text: strings.TrimSpace(c[2]), Status: StepPending}
		if c[1] != " " {
			s.Status = StepCompleted
		}
		if s.Text != "" {
			steps = append(steps, s)
		}
	}
	return steps, len(steps) > 0
}
