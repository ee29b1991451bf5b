package preserve

import (
	"os"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/capsule"
	"github.com/tether-dev/tether/internal/compaction"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/flow"
	"github.com/tether-dev/tether/internal/session"
)

func apply(t *testing.T, c *capsule.Capsule, tx string, ops ...capsule.Op) *capsule.Capsule {
	t.Helper()
	d := capsule.Delta{FromTurn: 0, ToTurn: int(session.Ordinal(3, 100))}
	for _, op := range ops {
		d.UserTurns = append(d.UserTurns, op.Turn)
	}
	next, err := capsule.Apply(c, ops, d, tx)
	if err != nil {
		t.Fatal(err)
	}
	return next
}

func TestNeedsReinjection(t *testing.T) {
	// Epoch 1: D1 was decided before the compaction, D2 is a late result
	// for a pre-compaction turn, D3 was decided in the new epoch.
	atCompaction := apply(t, nil, "t1", capsule.Op{Op: capsule.OpAddDecision, Statement: "use PostgreSQL", Turn: int(session.Ordinal(0, 1))})
	late := apply(t, atCompaction, "t2", capsule.Op{Op: capsule.OpAddDecision, Statement: "never change the public API", Turn: int(session.Ordinal(0, 5))})
	newer := apply(t, atCompaction, "t3", capsule.Op{Op: capsule.OpAddDecision, Statement: "use Redis", Turn: int(session.Ordinal(1, 3))})
	summary := "Summary: working on it.\n" + capsule.Render(atCompaction)
	hist := func(texts ...string) []dialect.Message {
		var m []dialect.Message
		for _, s := range texts {
			m = append(m, dialect.Message{Role: "user", Text: s})
		}
		return m
	}
	for _, tc := range []struct {
		name   string
		cur    *capsule.Capsule
		msgs   []dialect.Message
		policy string
		event  session.Event
		want   bool
	}{
		{"history carries the current block", atCompaction, hist(summary, "next"), "every_turn", session.EventEpoch, false},
		{"opaque compaction: no block in history", atCompaction, hist("next"), "every_turn", session.EventContinue, true},
		{"late result missing from the carried block", late, hist(summary, "next"), "every_turn", session.EventEpoch, true},
		{"only new-epoch facts differ", newer, hist(summary, "next"), "every_turn", session.EventContinue, false},
		{"first_turn policy, later turn", atCompaction, hist("next"), "first_turn", session.EventContinue, false},
		{"first_turn policy, first turn", atCompaction, hist("next"), "first_turn", session.EventEpoch, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &turn{pol: Policy{Reinjection: tc.policy}, ref: session.Ref{Epoch: 1, Event: tc.event}}
			if got := tr.needsReinjection(tc.cur, tc.msgs); got != tc.want {
				t.Errorf("needsReinjection = %v, want %v", got, tc.want)
			}
		})
	}
}

// claudePromptStart is how Claude Code's compaction instruction begins (the
// claude-code-summary rule's prefix; the classifier hands it over as
// Result.PromptStart).
const claudePromptStart = "CRITICAL: Respond with TEXT ONLY. Do NOT call any tools."

func TestWithoutCompactionPrompt(t *testing.T) {
	claude := []dialect.Message{{Role: "user", Text: "Decision: use Go."}, {Role: "assistant", Text: "ok"},
		{Role: "user", Text: "Thanks.\nCRITICAL: Respond with TEXT ONLY. Do NOT call any tools.\n- never do X"}}
	got := withoutCompactionPrompt(claude, claudePromptStart)
	if len(got) != 3 || got[2].Text != "Thanks." {
		t.Errorf("claude: last message %q, want the user's own text only", got[2].Text)
	}
	if claude[2].Text == "Thanks." {
		t.Errorf("input slice was modified")
	}
	// Claude Code 2.1 may send system messages after the instruction.
	trailing := append(append([]dialect.Message(nil), claude...), dialect.Message{Role: "system", Text: "Available agent types…"})
	if got := withoutCompactionPrompt(trailing, claudePromptStart); len(got) != 3 || got[2].Text != "Thanks." {
		t.Errorf("claude with a trailing system message: %d messages, last %q; want the instruction cut", len(got), got[len(got)-1].Text)
	}
	codex := []dialect.Message{{Role: "user", Text: "Decision: use Go."}, {Role: "user", Text: "You are performing a CONTEXT CHECKPOINT COMPACTION."}}
	if got := withoutCompactionPrompt(codex, ""); len(got) != 1 {
		t.Errorf("codex: %d messages left, want the prompt dropped", len(got))
	}
}

func TestFilterOpsHonoursPreserveSettings(t *testing.T) {
	yes, no := true, false
	p := config.Preserve{Plan: &yes, UserDecisions: &yes, Constraints: &no, Rationale: &no, RejectedAlternatives: &yes}
	ops := []capsule.Op{
		{Op: capsule.OpAddDecision, Statement: "a", Rationale: "because"},
		{Op: capsule.OpAddConstraint, Text: "b"},
		{Op: capsule.OpRejectAlternative, Text: "c", Reason: "r"},
	}
	got := filterOps(ops, p)
	if len(got) != 2 || got[0].Rationale != "" || got[1].Reason != "" {
		t.Errorf("filterOps = %+v", got)
	}
	if !strings.Contains(ops[0].Rationale, "because") {
		t.Errorf("input ops were modified")
	}
}

// A zero Policy (switches unset) preserves everything instead of panicking
// on a nil switch, a panic the hook runner would swallow as a silent no-op.
func TestZeroPolicyKeepsEverything(t *testing.T) {
	if !extractionWanted(Policy{}) {
		t.Error("a zero policy does not want extraction")
	}
	ops := []capsule.Op{
		{Op: capsule.OpAddDecision, Statement: "a", Rationale: "because"},
		{Op: capsule.OpAddConstraint, Text: "b"},
		{Op: capsule.OpRejectAlternative, Text: "c", Reason: "r"},
		{Op: capsule.OpSetPlan},
	}
	if got := filterOps(ops, Policy{}.Preserve); len(got) != len(ops) || got[0].Rationale != "because" {
		t.Errorf("filterOps under a zero policy = %+v", got)
	}
}

// Where a compaction request gets the block follows the rule that matched
// it: a Codex remote compaction before its trigger item, a request to the
// /responses/compact endpoint after its history.
func TestAugmentPlacementFromTheRules(t *testing.T) {
	trigger, err := os.ReadFile("../dialect/testdata/responses_codex_remote_compaction.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		body       []byte
		at         func(n int) int // position of the block message among n messages
	}{
		{"compaction_trigger", "/v1/responses", trigger, func(n int) int { return n - 2 }},
		{"compact endpoint", "/v1/responses/compact", []byte(`{"model":"gpt-5","input":[{"type":"message","role":"user","content":"hi"}]}`), func(n int) int { return n - 1 }},
	} {
		v, err := dialect.Parse(dialect.OpenAIResponses, tc.path, nil, tc.body)
		if err != nil {
			t.Fatal(err)
		}
		cls := compaction.Default().Classify(v)
		x := &flow.Exchange{Dialect: dialect.OpenAIResponses, Path: tc.path, View: v, Body: tc.body}
		out, err := augment(x, cls, "BLOCK")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, _ := dialect.Parse(dialect.OpenAIResponses, tc.path, nil, out)
		msgs := got.Messages()
		if m := msgs[tc.at(len(msgs))]; !strings.HasSuffix(m.Text, "BLOCK") || m.Role != "user" {
			t.Errorf("%s (placement %q): message %d of %d is %+v", tc.name, cls.Placement, tc.at(len(msgs)), len(msgs), m)
		}
	}
}
