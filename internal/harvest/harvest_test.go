package harvest

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tether-dev/tether/internal/compaction"
	"github.com/tether-dev/tether/internal/dialect"
)

var rules = compaction.Default().HarvestRules()

// captureMessages returns the parsed history of request seq in a capture.
func captureMessages(t testing.TB, file string, seq int) []dialect.Message {
	t.Helper()
	f, err := os.Open("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		var c struct {
			Seq  int             `json:"seq"`
			Path string          `json:"path"`
			Body json.RawMessage `json:"body"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		if c.Seq != seq {
			continue
		}
		name := dialect.OpenAIResponses
		switch {
		case strings.HasPrefix(c.Path, "/v1/messages"):
			name = dialect.AnthropicMessages
		case strings.HasPrefix(c.Path, "/v1/chat/completions"):
			name = dialect.OpenAIChat
		}
		v, err := dialect.Parse(name, c.Path, http.Header{}, c.Body)
		if err != nil {
			t.Fatal(err)
		}
		return v.Messages()
	}
	t.Fatalf("%s: no seq %d", file, seq)
	return nil
}

var inventoryPlan = []Step{
	{"Set up PostgreSQL schema (no MongoDB)", StepInProgress},
	{"Implement inventory repository layer", StepPending},
	{"Write integration tests against PostgreSQL", StepPending},
}

func TestHarvestCaptures(t *testing.T) {
	tests := []struct {
		file string
		seq  int
		want Plan
	}{
		{"codex.jsonl", 2, Plan{Tool: "update_plan", RuleID: "codex-update-plan", RuleVersion: 1, Source: SourceStructuredTool, Status: StatusAccepted, Steps: inventoryPlan, Turn: 4}},
		{"codex-openai-provider.jsonl", 3, Plan{Tool: "update_plan", RuleID: "codex-update-plan", RuleVersion: 1, Source: SourceStructuredTool, Status: StatusAccepted, Steps: inventoryPlan, Turn: 4}},
		{"opencode.jsonl", 3, Plan{Tool: "todowrite", RuleID: "opencode-todowrite", RuleVersion: 1, Source: SourceStructuredTool, Status: StatusAccepted, Steps: inventoryPlan, Turn: 2}},
		{"opencode.jsonl", 4, Plan{}}, // the compaction request flattens the call into text: nothing structured
		{"claude-todowrite.jsonl", 2, Plan{Tool: "TodoWrite", RuleID: "claude-code-todowrite", RuleVersion: 1, Source: SourceStructuredTool, Status: StatusAccepted, Steps: inventoryPlan, Turn: 1}},
		{"claude.jsonl", 2, Plan{Tool: "TaskCreate", RuleID: "claude-code-tasks", RuleVersion: 1, Source: SourceStructuredTool, Status: StatusAccepted,
			Steps: []Step{{"Set up PostgreSQL schema (no MongoDB)", StepPending}}, Turn: 1}},
		{"pi.jsonl", 2, Plan{Tool: "todo", RuleID: "pi-todo-extension", RuleVersion: 1, Source: SourceStructuredTool, Status: StatusAccepted,
			Steps: []Step{{"Set up PostgreSQL schema (no MongoDB)", StepPending}, {"Implement inventory repository layer", StepPending}}, Turn: 2}},
		{"pi-anthropic-messages.jsonl", 2, Plan{Tool: "todo", RuleID: "pi-todo-extension", RuleVersion: 1, Source: SourceStructuredTool, Status: StatusAccepted,
			Steps: []Step{{"Set up PostgreSQL schema (no MongoDB)", StepPending}, {"Implement inventory repository layer", StepPending}}, Turn: 1}},
		{"codex.jsonl", 4, Plan{}}, // after compaction the update_plan call is gone
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, ok := Harvest(rules, captureMessages(t, tt.file, tt.seq), 0)
			if ok != (tt.want.Tool != "") {
				t.Fatalf("seq %d: found = %v, plan %+v", tt.seq, ok, got)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("seq %d plan (-want +got):\n%s", tt.seq, diff)
			}
		})
	}
}

func TestHarvestFromSkipsEarlierCalls(t *testing.T) {
	msgs := captureMessages(t, "codex.jsonl", 2)
	if _, ok := Harvest(rules, msgs, 5); ok {
		t.Error("a call before from was reported")
	}
	if _, ok := Harvest(rules, msgs, 4); !ok {
		t.Error("the call at from was not reported")
	}
}

func call(name, args string) dialect.Message {
	return dialect.Message{Role: "assistant", Type: "message", ToolCalls: []dialect.ToolCall{{ID: "c-" + name, Name: name, Arguments: []byte(args)}}}
}

func indexed(ms ...dialect.Message) []dialect.Message {
	for i := range ms {
		ms[i].Index = i
	}
	return ms
}

func TestDecoders(t *testing.T) {
	tests := []struct {
		name string
		msgs []dialect.Message
		want Plan
		ok   bool
	}{
		{
			name: "update_plan last call wins",
			msgs: indexed(
				call("update_plan", `{"plan":[{"step":"a","status":"pending"}]}`),
				call("update_plan", `{"explanation":"x","plan":[{"step":"a","status":"completed"},{"step":"b","status":"in_progress"}]}`)),
			want: Plan{Tool: "update_plan", RuleID: "codex-update-plan", RuleVersion: 1, Source: SourceStructuredTool, Status: StatusAccepted,
				Steps: []Step{{"a", StepCompleted}, {"b", StepInProgress}}, Turn: 1},
			ok: true,
		},
		{
			name: "gemini write_todos",
			msgs: indexed(call("write_todos", `{"todos":[{"description":"d1","status":"cancelled"},{"description":"d2","status":"pending"}]}`)),
			want: Plan{Tool: "write_todos", RuleID: "gemini-write-todos", RuleVersion: 1, Source: SourceStructuredTool, Status: StatusAccepted,
				Steps: []Step{{"d1", StepCancelled}, {"d2", StepPending}}},
			ok: true,
		},
		{
			name: "claude tasks rebuilt with updates and deletion",
			msgs: indexed(
				call("TaskCreate", `{"subject":"one","description":"d"}`),
				dialect.Message{Role: "user", ToolResults: []dialect.ToolResult{{CallID: "c-TaskCreate", Text: "Task #7 created successfully: one"}}},
				dialect.Message{Role: "assistant", ToolCalls: []dialect.ToolCall{{ID: "x2", Name: "TaskCreate", Arguments: []byte(`{"subject":"two"}`)}}},
				dialect.Message{Role: "assistant", ToolCalls: []dialect.ToolCall{{ID: "x3", Name: "TaskUpdate", Arguments: []byte(`{"taskId":"7","status":"completed"}`)}}},
				dialect.Message{Role: "assistant", ToolCalls: []dialect.ToolCall{{ID: "x4", Name: "TaskUpdate", Arguments: []byte(`{"taskId":"2","status":"deleted"}`)}}},
			),
			want: Plan{Tool: "TaskUpdate", RuleID: "claude-code-tasks", RuleVersion: 1, Source: SourceStructuredTool, Status: StatusAccepted,
				Steps: []Step{{"one", StepCompleted}}, Turn: 4},
			ok: true,
		},
		{
			name: "exit plan mode approved",
			msgs: indexed(
				call("ExitPlanMode", `{"plan":"# Plan\n1. Use PostgreSQL\n2. Add users table\n"}`),
				dialect.Message{Role: "user", ToolResults: []dialect.ToolResult{{CallID: "c-ExitPlanMode", Text: "User has approved your plan. You can now start coding.\n\n## Approved Plan:\n1. Use PostgreSQL\n2. Add users table\n3. Add tests"}}}),
			want: Plan{Tool: "ExitPlanMode", RuleID: "claude-code-exit-plan-mode", RuleVersion: 1, Source: SourcePlanMode, Status: StatusAccepted,
				Steps: []Step{{"Use PostgreSQL", StepPending}, {"Add users table", StepPending}, {"Add tests", StepPending}}},
			ok: true,
		},
		{
			name: "exit plan mode not approved stays provisional",
			msgs: indexed(
				call("ExitPlanMode", `{"plan":"- Use PostgreSQL\n- Add users table"}`),
				dialect.Message{Role: "user", ToolResults: []dialect.ToolResult{{CallID: "c-ExitPlanMode", Text: "The user doesn't want to proceed with this tool use."}}}),
			want: Plan{Tool: "ExitPlanMode", RuleID: "claude-code-exit-plan-mode", RuleVersion: 1, Source: SourcePlanMode, Status: StatusProvisional,
				Steps: []Step{{"Use PostgreSQL", StepPending}, {"Add users table", StepPending}}},
			ok: true,
		},
		{
			name: "codex proposed_plan block is provisional",
			msgs: indexed(dialect.Message{Role: "assistant", Text: "Here it is.\n<proposed_plan>\n1. Schema\n2. Repo\n</proposed_plan>\nOK?"}),
			want: Plan{Tool: "proposed_plan", RuleID: "codex-proposed-plan", RuleVersion: 1, Source: SourcePlanMode, Status: StatusProvisional,
				Steps: []Step{{"Schema", StepPending}, {"Repo", StepPending}}},
			ok: true,
		},
		{
			name: "a numbered list in prose is not a plan",
			msgs: indexed(dialect.Message{Role: "assistant", Text: "My plan:\n1. Schema\n2. Repo"}, dialect.Message{Role: "user", Text: "sounds good, do it"}),
		},
		{
			name: "cline task_progress on any tool",
			msgs: indexed(call("read_file", `{"path":"a.go","task_progress":"- [x] Read code\n- [ ] Fix bug\nnot a step"}`)),
			want: Plan{Tool: "task_progress", RuleID: "cline-task-progress", RuleVersion: 1, Source: SourceStructuredTool, Status: StatusAccepted,
				Steps: []Step{{"Read code", StepCompleted}, {"Fix bug", StepPending}}},
			ok: true,
		},
		{
			name: "pi todo toggle and clear",
			msgs: indexed(
				call("todo", `{"action":"add","text":"a"}`),
				dialect.Message{Role: "assistant", ToolCalls: []dialect.ToolCall{{ID: "2", Name: "todo", Arguments: []byte(`{"action":"add","text":"b"}`)}}},
				dialect.Message{Role: "assistant", ToolCalls: []dialect.ToolCall{{ID: "3", Name: "todo", Arguments: []byte(`{"action":"toggle","id":1}`)}}},
			),
			want: Plan{Tool: "todo", RuleID: "pi-todo-extension", RuleVersion: 1, Source: SourceStructuredTool, Status: StatusAccepted,
				Steps: []Step{{"a", StepCompleted}, {"b", StepPending}}, Turn: 2},
			ok: true,
		},
		{
			name: "malformed arguments are ignored",
			msgs: indexed(
				call("update_plan", `{"plan":[{"step":"kept","status":"pending"}]}`),
				call("update_plan", `{"plan": "not a list"}`),
				call("todowrite", `{not json`),
				call("TaskUpdate", `{"taskId":99,"status":"completed"}`),
				call("ExitPlanMode", `[]`),
				call("todo", `{"action":"toggle","id":"nope"}`),
			),
			want: Plan{Tool: "update_plan", RuleID: "codex-update-plan", RuleVersion: 1, Source: SourceStructuredTool, Status: StatusAccepted,
				Steps: []Step{{"kept", StepPending}}},
			ok: true,
		},
		{
			name: "unknown tool",
			msgs: indexed(call("plan_everything", `{"plan":[{"step":"x","status":"pending"}]}`)),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Harvest(rules, tt.msgs, 0)
			if ok != tt.ok {
				t.Fatalf("found = %v, want %v (%+v)", ok, tt.ok, got)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzHarvest(f *testing.F) {
	f.Add("update_plan", `{"plan":[{"step":"a","status":"pending"}]}`, "")
	f.Add("todowrite", `{"todos":[{"content":"Set up PostgreSQL schema (no MongoDB)","status":"in_progress","priority":"high"}]}`, "")
	f.Add("TaskCreate", `{"subject":"Set up PostgreSQL schema (no MongoDB)","description":"Use PostgreSQL, not MongoDB"}`, "Task #1 created successfully: x")
	f.Add("TaskUpdate", `{"taskId":"1","status":"completed"}`, "")
	f.Add("ExitPlanMode", `{"plan":"1. a\n- [x] b"}`, "User has approved your plan\n## Approved Plan:\n1. c")
	f.Add("todo", `{"action":"add","text":"a"}`, "Added todo #1: a")
	f.Add("read_file", `{"task_progress":"- [ ] a\n- [x] b"}`, "<proposed_plan>\n1. x\n</proposed_plan>")
	f.Fuzz(func(t *testing.T, name, args, text string) {
		msgs := indexed(
			dialect.Message{Role: "assistant", Text: text, ToolCalls: []dialect.ToolCall{{ID: "1", Name: name, Arguments: []byte(args)}}},
			dialect.Message{Role: "user", ToolResults: []dialect.ToolResult{{CallID: "1", Text: text}}},
			dialect.Message{Role: "assistant", ToolCalls: []dialect.ToolCall{{ID: "2", Name: "TaskUpdate", Arguments: []byte(args)}}},
		)
		p, ok := Harvest(rules, msgs, 0)
		if !ok {
			return
		}
		if p.Status != StatusAccepted && p.Status != StatusProvisional {
			t.Fatalf("status %q", p.Status)
		}
		for _, s := range p.Steps {
			if s.Text == "" {
				t.Fatal("empty step")
			}
			switch s.Status {
			case StepPending, StepInProgress, StepCompleted, StepCancelled:
			default:
				t.Fatalf("step status %q", s.Status)
			}
		}
	})
}

// After a compaction the calls that added Pi's todos are gone from the
// history; a later toggle (a step completed) must still mark the step the
// capsule recorded, not be dropped as naming an unknown id.
func TestPiToggleAfterCompaction(t *testing.T) {
	msgs := indexed(
		dialect.Message{Role: "user", Text: "The conversation history before this point was compacted into the following summary: …"},
		dialect.Message{Role: "assistant", ToolCalls: []dialect.ToolCall{{ID: "t1", Name: "todo", Arguments: []byte(`{"action":"toggle","id":2}`)}}},
		dialect.Message{Role: "user", ToolResults: []dialect.ToolResult{{CallID: "t1", Text: "Toggled todo #2"}}},
	)
	if _, ok := Harvest(rules, msgs, 0); ok {
		t.Fatal("a toggle with no known list set a plan")
	}
	seed := Plan{Tool: "todo", Source: SourceStructuredTool, Offset: 1,
		Steps: []Step{{"Implement the repository layer", StepPending}, {"Add the REST handlers", StepPending}}}
	got, ok := Harvest(rules, msgs, 0, seed)
	if !ok {
		t.Fatal("the toggle was not harvested")
	}
	want := []Step{{"Implement the repository layer", StepCompleted}, {"Add the REST handlers", StepPending}}
	if diff := cmp.Diff(want, got.Steps); diff != "" {
		t.Errorf("steps after the toggle (-want +got):\n%s", diff)
	}
	// A seed from another carrier is not used.
	seed.Tool = "update_plan"
	if _, ok := Harvest(rules, msgs, 0, seed); ok {
		t.Error("a seed from another tool was used")
	}
}
