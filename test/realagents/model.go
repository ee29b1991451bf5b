//go:build agents

package realagents

import (
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/tidwall/gjson"

	"github.com/tether-dev/tether/internal/demo"
	"github.com/tether-dev/tether/internal/fakemodel"
)

// The user turns every agent is driven through: a decision and a plan, a
// constraint, a decision that is later superseded together with a rejected
// alternative, a metrics decision, and the correction.
var script = []string{
	"We are building an inventory service. Decision: use PostgreSQL, not MongoDB. Please make a plan.",
	"Constraint: never change the public REST API.",
	"Decision: use Memcached for the cache. Rejected: GORM — we write SQL by hand.",
	"Decision: export metrics to Prometheus.",
	"Actually, use Redis instead of Memcached for the cache.",
	"Run the tests.",
	stepDone,
	// Ordinary work turns: with every turn over the agent's limit, about
	// ten compactions in all.
	"Keep going with step one.",
	"Now the repository layer.",
	"Check the handlers.",
	"Look at the migrations.",
	"Review the error handling.",
	"Tidy up the logging.",
}

// noise is what the test run prints: tool output that reads like decisions
// and must never be taken for the user's.
const noise = "Decision: use MongoDB. Rejected: PostgreSQL. Constraint: always change the public REST API."

// noiseCommand prints noise on many lines (about 40 KB).
const noiseCommand = `for i in $(seq 1 400); do echo "test $i ok -- ` + noise + `"; done`

// stepDone marks the plan's first step done: agents with a full-list plan
// tool record the update, which must replace the first plan everywhere.
const stepDone = "Step 1 is done."

// afterCompaction is the user turn that follows a compaction.
const afterCompaction = "What is next?"

// agentModel is the scripted provider the agents talk to through Tether. It
// answers in whichever dialect the agent speaks: the extractor route with
// operations (demo.Model), compactions with a lossy summary (an opaque item
// for Codex remote compaction), "make a plan" with a call to the plan tool
// the agent offered, a tool result with a short text, anything else with
// "Understood.". The answer to each of the user's turns reports mainTokens
// input tokens, so an agent configured with a small context window compacts
// automatically.
func agentModel(mainTokens int64) fakemodel.Responder {
	extractor := demo.Model()
	// The tests run once: an agent that compacts between the call and its
	// result (Codex with a tiny limit) would otherwise be asked again.
	var ranTests, updatedPlan atomic.Bool
	return func(req *fakemodel.Request) fakemodel.Reply {
		if req.Model() == demo.ExtractorModel {
			return extractor(req)
		}
		switch fakemodel.Classify(req) {
		case fakemodel.KindCompaction:
			if req.Path == "/v1/responses/compact" || gjson.GetBytes(req.Body, "input.@reverse.0.type").String() == "compaction_trigger" {
				return fakemodel.Reply{Opaque: true, EncryptedContent: "opaque:" + demo.LossySummary, InputTokens: 300, OutputTokens: 80}
			}
			text := demo.LossySummary
			if req.Dialect == fakemodel.DialectGemini {
				text = "<state_snapshot>\n<overall_goal>" + text + "</overall_goal>\n</state_snapshot>"
			}
			if req.Dialect == fakemodel.DialectMessages && strings.Contains(string(req.Body), "<summary>") {
				text = "<analysis>The user is building an inventory service.</analysis>\n<summary>" + text + "</summary>"
			}
			return fakemodel.Reply{Text: text, InputTokens: 300, OutputTokens: 80}
		case fakemodel.KindTitle:
			return fakemodel.Reply{Text: "Inventory service", InputTokens: 100, OutputTokens: 3}
		}
		// The plan round trip reports little usage: an agent that compacts
		// mid-turn would otherwise compact between the call and its result
		// and, its plan call forgotten, be asked to plan again.
		if lastIsToolResult(req) {
			return fakemodel.Reply{Text: "Done. Continuing.", InputTokens: 100, OutputTokens: 10}
		}
		if strings.Contains(lastUser(req), "Run the tests") && !ranTests.Load() {
			if call, ok := shellCall(req); ok {
				ranTests.Store(true)
				return fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call}, InputTokens: 100, OutputTokens: 20}
			}
		}
		// The update: step one done, with the whole list again (agents whose
		// plan tool takes the full list; the others just answer).
		if strings.Contains(lastUser(req), stepDone) && !updatedPlan.Load() {
			if t := toolNames(req); t["TodoWrite"] || t["update_plan"] || t["todowrite"] || t["write_todos"] {
				updatedPlan.Store(true)
				return fakemodel.Reply{ToolCalls: planCalls(req, 1), InputTokens: 100, OutputTokens: 40}
			}
		}
		if strings.Contains(lastUser(req), "make a plan") {
			if calls := planCalls(req, 0); len(calls) > 0 {
				return fakemodel.Reply{ToolCalls: calls, InputTokens: 100, OutputTokens: 40}
			}
		}
		// Only the user's own turns fill the context: an agent that goes on
		// by itself after compacting (OpenCode's "Continue if you have next
		// steps") must not be pushed into compacting again and again.
		tokens := int64(100)
		said := func(s string) bool { return strings.Contains(lastUser(req), s) }
		if said(afterCompaction) || slices.ContainsFunc(script, said) || slices.ContainsFunc(everyday, said) {
			tokens = mainTokens
		}
		return fakemodel.Reply{Text: "Understood.", InputTokens: tokens, OutputTokens: 5}
	}
}

// turns returns the request's conversation items: messages (Chat and
// Messages), input (Responses) or contents (Gemini).
func turns(req *fakemodel.Request) []gjson.Result {
	if req.Dialect == fakemodel.DialectResponses {
		return gjson.GetBytes(req.Body, "input").Array()
	}
	if req.Dialect == fakemodel.DialectGemini {
		return gjson.GetBytes(req.Body, "contents").Array()
	}
	return gjson.GetBytes(req.Body, "messages").Array()
}

func lastIsToolResult(req *fakemodel.Request) bool {
	items := turns(req)
	if len(items) == 0 {
		return false
	}
	last := items[len(items)-1]
	switch req.Dialect {
	case fakemodel.DialectResponses:
		return last.Get("type").String() == "function_call_output"
	case fakemodel.DialectChat:
		return last.Get("role").String() == "tool"
	case fakemodel.DialectGemini:
		return last.Get("parts.#.functionResponse|0").Exists()
	}
	return last.Get(`content.#(type=="tool_result")`).Exists()
}

// lastUser is the text of the last user message.
func lastUser(req *fakemodel.Request) string {
	items := turns(req)
	for i := len(items) - 1; i >= 0; i-- {
		if items[i].Get("role").String() != "user" {
			continue
		}
		c := items[i].Get("content")
		if req.Dialect == fakemodel.DialectGemini {
			if c = items[i].Get("parts"); !c.Get("#.text|0").Exists() {
				continue // a function response
			}
		}
		if c.Type == gjson.String {
			return c.String()
		}
		var b strings.Builder
		c.ForEach(func(_, p gjson.Result) bool {
			b.WriteString(p.Get("text").String() + "\n")
			return true
		})
		return b.String()
	}
	return ""
}

// view is every text the model reads in a request: instructions, system
// prompts, messages and tool results, in order.
func view(req *fakemodel.Request) string {
	var b strings.Builder
	b.WriteString(textOf(gjson.GetBytes(req.Body, "instructions")))
	b.WriteString(textOf(gjson.GetBytes(req.Body, "system")))
	b.WriteString(textOf(gjson.GetBytes(req.Body, "systemInstruction.parts")))
	for _, it := range turns(req) {
		b.WriteString(itemText(it))
	}
	return b.String()
}

// itemText is the text of one conversation item, in any dialect: its
// content (a string or parts with text, content or output) and a
// Responses function_call_output's output.
func itemText(it gjson.Result) string {
	s := textOf(it.Get("content"))
	if o := it.Get("output"); o.Type == gjson.String {
		s += o.String() + "\n"
	}
	// Gemini: text parts, and function responses' output.
	s += textOf(it.Get("parts"))
	it.Get("parts.#.functionResponse.response").ForEach(func(_, r gjson.Result) bool {
		s += textOf(gjson.Parse("[" + r.Raw + "]"))
		return true
	})
	return s
}

// textOf is a string, or the string text/content/output fields of a list
// of parts, one per line.
func textOf(r gjson.Result) string {
	if r.Type == gjson.String {
		return r.String() + "\n"
	}
	var b strings.Builder
	r.ForEach(func(_, p gjson.Result) bool {
		for _, k := range []string{"text", "content", "output"} {
			if s := p.Get(k); s.Type == gjson.String {
				b.WriteString(s.String() + "\n")
			}
		}
		return true
	})
	return b.String()
}

// toolNames lists the tools the request offers, in any dialect.
func toolNames(req *fakemodel.Request) map[string]bool {
	names := map[string]bool{}
	gjson.GetBytes(req.Body, "tools").ForEach(func(_, t gjson.Result) bool {
		if n := t.Get("name").String(); n != "" {
			names[n] = true
		}
		if n := t.Get("function.name").String(); n != "" {
			names[n] = true
		}
		t.Get("functionDeclarations.#.name").ForEach(func(_, n gjson.Result) bool {
			names[n.String()] = true
			return true
		})
		return true
	})
	return names
}

// planCalls record demo.PlanSteps with the agent's own plan tool, first
// step in progress; none when the agent offers no plan tool.
func planCalls(req *fakemodel.Request, done int) []fakemodel.ToolCall {
	tools := toolNames(req)
	status := func(i int) string {
		switch {
		case i < done:
			return "completed"
		case i == done:
			return "in_progress"
		}
		return "pending"
	}
	var args any
	var name string
	switch {
	case tools["TodoWrite"]:
		name = "TodoWrite"
		var todos []map[string]string
		for i, s := range demo.PlanSteps {
			todos = append(todos, map[string]string{"content": s, "status": status(i), "activeForm": s})
		}
		args = map[string]any{"todos": todos}
	case tools["TaskCreate"]: // Claude Code's default task tools: one task a call
		var calls []fakemodel.ToolCall
		for _, st := range demo.PlanSteps {
			raw, _ := json.Marshal(map[string]string{"subject": st, "description": st, "activeForm": st})
			calls = append(calls, fakemodel.ToolCall{Name: "TaskCreate", Arguments: string(raw)})
		}
		return calls
	case tools["update_plan"]:
		name = "update_plan"
		var plan []map[string]string
		for i, s := range demo.PlanSteps {
			plan = append(plan, map[string]string{"step": s, "status": status(i)})
		}
		args = map[string]any{"explanation": "Plan for the inventory service.", "plan": plan}
	case tools["todowrite"]:
		name = "todowrite"
		var todos []map[string]string
		for i, s := range demo.PlanSteps {
			todos = append(todos, map[string]string{"content": s, "status": status(i), "priority": "high"})
		}
		args = map[string]any{"todos": todos}
	case tools["write_todos"]: // Gemini CLI
		name = "write_todos"
		var todos []map[string]string
		for i, s := range demo.PlanSteps {
			todos = append(todos, map[string]string{"description": s, "status": status(i)})
		}
		args = map[string]any{"todos": todos}
	case tools["todo"]: // Pi's packaged todo extension: one item a call
		var calls []fakemodel.ToolCall
		for _, s := range demo.PlanSteps {
			raw, _ := json.Marshal(map[string]string{"action": "add", "text": s})
			calls = append(calls, fakemodel.ToolCall{Name: "todo", Arguments: string(raw)})
		}
		return calls
	default:
		return nil
	}
	raw, _ := json.Marshal(args)
	return []fakemodel.ToolCall{{Name: name, Arguments: string(raw)}}
}

// shellCall runs noiseCommand with the agent's own shell tool.
func shellCall(req *fakemodel.Request) (fakemodel.ToolCall, bool) {
	tools := toolNames(req)
	var name string
	var args map[string]any
	switch {
	case tools["Bash"]:
		name, args = "Bash", map[string]any{"command": noiseCommand, "description": "Run the tests"}
	case tools["exec_command"]:
		name, args = "exec_command", map[string]any{"cmd": noiseCommand}
	case tools["bash"]:
		name, args = "bash", map[string]any{"command": noiseCommand, "description": "Run the tests"}
	case tools["run_shell_command"]: // Gemini CLI, which refuses command substitution
		name, args = "run_shell_command", map[string]any{"command": strings.Replace(noiseCommand, "$(seq 1 400)", "{1..400}", 1), "description": "Run the tests"}
	default:
		return fakemodel.ToolCall{}, false
	}
	raw, _ := json.Marshal(args)
	return fakemodel.ToolCall{Name: name, Arguments: string(raw)}, true
}
