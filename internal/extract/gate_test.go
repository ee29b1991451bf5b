package extract

import (
	"testing"

	"github.com/tether-dev/tether/internal/capsule"
	"github.com/tether-dev/tether/internal/dialect"
)

func user(text string) dialect.Message {
	return dialect.Message{Role: "user", Type: "message", Text: text}
}
func assistant(text string) dialect.Message {
	return dialect.Message{Role: "assistant", Type: "message", Text: text}
}
func toolCall(name, args string) dialect.Message {
	return dialect.Message{Role: "assistant", Type: "message", ToolCalls: []dialect.ToolCall{{ID: "c1", Name: name, Arguments: []byte(args)}}}
}
func toolResult(text string) dialect.Message {
	return dialect.Message{Role: "tool", Type: "message", Text: text, ToolResults: []dialect.ToolResult{{CallID: "c1", Text: text}}}
}

const proposalText = "Here is my plan for the inventory service:\n1. Create the schema\n2. Add the repository layer\n3. Wire the HTTP handlers\nShould we go ahead?"

func TestGate(t *testing.T) {
	withDecision := capsule.New("s", "a")
	withDecision.Decisions = []capsule.Decision{{ID: "D1", Statement: "Use PostgreSQL, not MongoDB", Status: capsule.StatusActive}}

	tests := []struct {
		name   string
		prev   *capsule.Capsule
		delta  []dialect.Message
		want   bool
		reason string
	}{
		{"AC07 chit-chat, tool noise, routine requests", nil, []dialect.Message{
			user("hi there"), assistant("Hello! How can I help?"),
			user("run the tests"), toolCall("Bash", `{"command":"go test ./..."}`), toolResult("ok  \tpkg\t0.1s\nFAIL must never happen"),
			assistant("All tests pass."), user("thanks"), user("ok"), user("keep going"),
		}, false, ReasonNoSignal},
		{"empty delta", nil, nil, false, ReasonNoSignal},
		{"decision in user turn", nil, []dialect.Message{user("Let's use PostgreSQL, not MongoDB.")}, true, ReasonUserCue},
		{"constraint", nil, []dialect.Message{user("never touch the public API")}, true, ReasonUserCue},
		{"correction opening with no", nil, []dialect.Message{user("no, the other file")}, true, ReasonUserCue},
		{"rejection", nil, []dialect.Message{user("Rejected: MongoDB — we need transactions.")}, true, ReasonUserCue},
		{"switch", nil, []dialect.Message{user("switch to plan B because the deadline moved")}, true, ReasonUserCue},
		{"approval", nil, []dialect.Message{user("sounds good, proceed")}, true, ReasonUserCue},
		{"codex update_plan call", nil, []dialect.Message{toolCall("update_plan", `{"plan":[{"step":"a","status":"pending"}]}`)}, true, ReasonPlanTool},
		{"claude TodoWrite call", nil, []dialect.Message{toolCall("TodoWrite", `{"todos":[]}`)}, true, ReasonPlanTool},
		{"opencode todowrite call", nil, []dialect.Message{toolCall("todowrite", `{"todos":[]}`)}, true, ReasonPlanTool},
		{"namespaced plan tool", nil, []dialect.Message{toolCall("functions.update_plan", `{"plan":[]}`)}, true, ReasonPlanTool},
		{"MCP todo tool", nil, []dialect.Message{toolCall("mcp__tasks__todo_write", `{"todos":[]}`)}, true, ReasonPlanTool},
		{"MCP tool of another kind", nil, []dialect.Message{toolCall("mcp__plan__read_file", `{"path":"a"}`)}, false, ReasonNoSignal},
		{"proposal answered by the user", nil, []dialect.Message{assistant(proposalText), user("do it")}, true, ReasonProposalReply},
		{"choice question answered by its number", nil, []dialect.Message{assistant("I can (1) retry failed rows inline or (2) send them to a dead-letter table. Which do you prefer?"), user("Option 2.")}, true, ReasonProposalReply},
		{"proposal without a reply yet", nil, []dialect.Message{user("make a plan"), assistant(proposalText)}, false, ReasonNoSignal},
		{"short assistant text is not a proposal", nil, []dialect.Message{assistant("1. a\n2. b"), user("hmm")}, false, ReasonNoSignal},
		{"decision already in the capsule", withDecision, []dialect.Message{user("Use PostgreSQL, not MongoDB!")}, false, ReasonKnown},
		{"new decision despite a capsule", withDecision, []dialect.Message{user("Actually, use SQLite for tests")}, true, ReasonUserCue},
		{"cue words only in harness boilerplate", nil, []dialect.Message{
			user("<system-reminder>You must always follow the rules. Never do X.</system-reminder>\nwhat does this function do?"),
			user("<environment_context>\n<cwd>/home/dev</cwd>\n</environment_context>"),
		}, false, ReasonNoSignal},
		{"cue words only in an earlier compaction summary", nil, []dialect.Message{
			user("This session is being continued from a previous conversation. We decided to use PostgreSQL and never MongoDB."),
		}, false, ReasonNoSignal},
		{"cue words only inside a capsule block", nil, []dialect.Message{
			user("<continuity-capsule revision=\"2\" digest=\"x\">ACTIVE DECISIONS:\n- D1: never use Mongo\n</continuity-capsule>\nwhere were we?"),
		}, false, ReasonNoSignal},
		{"cue words only in tool output", nil, []dialect.Message{toolResult("you must switch to plan B; never use X")}, false, ReasonNoSignal},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Gate(tc.prev, tc.delta)
			if got.Eligible != tc.want || got.Reason != tc.reason {
				t.Errorf("Gate = %+v, want eligible=%v reason=%s", got, tc.want, tc.reason)
			}
		})
	}
}

// Quiet lets the preservation path skip the capsule read for a tool loop's
// turn, so it must never be true where the gate could pass: on every cut of
// every captured history and of a tool loop, a quiet delta is one the gate
// refuses. And a tool loop's turn is quiet; a user's word or a plan tool
// call is not.
func TestQuietNeverHidesWhatTheGatePasses(t *testing.T) {
	loop := []dialect.Message{
		{Role: "assistant", Type: "message", ToolCalls: []dialect.ToolCall{{ID: "t1", Name: "Bash", Arguments: []byte(`{"command":"ls"}`)}}},
		{Role: "user", Type: "message", ToolResults: []dialect.ToolResult{{CallID: "t1", Text: "Decision: use Redis. never mind, this is tool output"}}},
	}
	if !Quiet(loop) {
		t.Fatal("a tool call and its result are not quiet")
	}
	if Quiet(append(loop[:1:1], dialect.Message{Role: "user", Type: "message", Text: "ok"})) {
		t.Fatal("a user's word is quiet")
	}
	if Quiet([]dialect.Message{{Role: "assistant", ToolCalls: []dialect.ToolCall{{Name: "TodoWrite", Arguments: []byte(`{"todos":[]}`)}}}}) {
		t.Fatal("a plan tool call is quiet")
	}
	for _, file := range []string{"codex_decision.json", "claude_todowrite.json", "claude_question.json", "opencode_continue.json"} {
		msgs := append(captured(t, file), loop...)
		for from := range msgs {
			for to := from + 1; to <= len(msgs); to++ {
				d := msgs[from:to]
				if Quiet(d) && Gate(nil, d).Eligible {
					t.Errorf("%s[%d:%d]: quiet, but the gate passes it (%s)", file, from, to, Gate(nil, d).Reason)
				}
			}
		}
	}
}
