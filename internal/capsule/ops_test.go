package capsule

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func delta(from, to int, user ...int) Delta {
	return Delta{FromTurn: from, ToTurn: to, UserTurns: user}
}

func mustApply(t testing.TB, prev *Capsule, d Delta, ops ...Op) *Capsule {
	t.Helper()
	var rev int64
	if prev != nil {
		rev = prev.Revision
	}
	next, err := Apply(prev, ops, d, fmt.Sprintf("tx-%d", rev+1))
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	return next
}

// base: turns 0-5, user turns 0, 2, 4.
func baseCapsule(t testing.TB) *Capsule {
	t.Helper()
	return mustApply(t, New("s1", "a1"), delta(0, 5, 0, 2, 4),
		Op{Op: OpAddDecision, Statement: "Use PostgreSQL for storage", Rationale: "need concurrent writers", Turn: 2},
		Op{Op: OpAddConstraint, Text: "No new dependencies", Turn: 2},
		Op{Op: OpRejectAlternative, Text: "MongoDB", Reason: "ops burden", Turn: 4},
		Op{Op: OpAddQuestion, Text: "Which Go version do we target?", Turn: 3},
	)
}

// next delta: turns 6-12, user turns 6, 8, 10.
var d2 = delta(6, 12, 6, 8, 10)

func TestApplyOps(t *testing.T) {
	tests := []struct {
		name  string
		ops   []Op
		check func(t *testing.T, got *Capsule)
	}{
		{
			name: "add_decision",
			ops:  []Op{{Op: OpAddDecision, Statement: "  Ship  behind a flag\n", Rationale: "safe rollout", Turn: 8}},
			check: func(t *testing.T, got *Capsule) {
				want := Decision{ID: "D2", Statement: "Ship behind a flag", Status: StatusActive, Rationale: "safe rollout", SourceTurn: 8, Provenance: ProvenanceExtractor}
				if diff := cmp.Diff(want, got.Decisions[1]); diff != "" {
					t.Errorf("new decision (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "add_decision duplicate of active is a no-op",
			ops:  []Op{{Op: OpAddDecision, Statement: "use postgresql, for STORAGE!", Turn: 8}},
			check: func(t *testing.T, got *Capsule) {
				if len(got.Decisions) != 1 || got.Decisions[0].Statement != "Use PostgreSQL for storage" {
					t.Errorf("decisions = %+v, want only D1 unchanged", got.Decisions)
				}
			},
		},
		{
			name: "supersede_decision",
			ops:  []Op{{Op: OpSupersedeDecision, ID: "D1", Statement: "Use SQLite for storage", Rationale: "single binary", Turn: 10}},
			check: func(t *testing.T, got *Capsule) {
				want := []Decision{
					{ID: "D1", Statement: "Use PostgreSQL for storage", Status: StatusSuperseded, Rationale: "need concurrent writers", SupersededBy: "D2", SourceTurn: 2, ClosedTurn: 10, Provenance: ProvenanceExtractor, ClosedBy: ProvenanceExtractor},
					{ID: "D2", Statement: "Use SQLite for storage", Status: StatusActive, Rationale: "single binary", SourceTurn: 10, Provenance: ProvenanceExtractor},
				}
				if diff := cmp.Diff(want, got.Decisions); diff != "" {
					t.Errorf("decisions (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "supersede_decision with the same statement is a no-op",
			ops:  []Op{{Op: OpSupersedeDecision, ID: "D1", Statement: "use postgresql for storage.", Turn: 10}},
			check: func(t *testing.T, got *Capsule) {
				if len(got.Decisions) != 1 || got.Decisions[0].Status != StatusActive {
					t.Errorf("decisions = %+v, want D1 still active alone", got.Decisions)
				}
			},
		},
		{
			name: "supersede_decision onto an existing active decision links to it",
			ops: []Op{
				{Op: OpAddDecision, Statement: "Use SQLite", Turn: 6},
				{Op: OpSupersedeDecision, ID: "D1", Statement: "use sqlite", Turn: 8},
			},
			check: func(t *testing.T, got *Capsule) {
				if n := len(got.ActiveDecisions()); n != 1 {
					t.Errorf("%d active decisions, want 1", n)
				}
				if d := got.Decisions[0]; d.Status != StatusSuperseded || d.SupersededBy != "D2" {
					t.Errorf("D1 = %+v, want superseded by D2", d)
				}
			},
		},
		{
			name: "reject_decision",
			ops:  []Op{{Op: OpRejectDecision, ID: "D1", Turn: 6}},
			check: func(t *testing.T, got *Capsule) {
				if d := got.Decisions[0]; d.Status != StatusRejected || d.ClosedTurn != 6 {
					t.Errorf("D1 = %+v, want rejected at turn 6", d)
				}
			},
		},
		{
			name: "reject_alternative",
			ops:  []Op{{Op: OpRejectAlternative, Text: "GraphQL API", Reason: "overkill", Turn: 6}},
			check: func(t *testing.T, got *Capsule) {
				want := Rejected{ID: "R2", Text: "GraphQL API", Reason: "overkill", SourceTurn: 6, Provenance: ProvenanceExtractor}
				if diff := cmp.Diff(want, got.Rejected[1]); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "reject_alternative of an active decision rejects the decision",
			ops:  []Op{{Op: OpRejectAlternative, Text: "use PostgreSQL for storage", Turn: 8}},
			check: func(t *testing.T, got *Capsule) {
				if d := got.Decisions[0]; d.Status != StatusRejected {
					t.Errorf("D1 = %+v, want rejected", d)
				}
				if len(got.Rejected) != 2 {
					t.Errorf("rejected = %+v, want R1 and R2", got.Rejected)
				}
			},
		},
		{
			name: "reject_alternative duplicate is a no-op",
			ops:  []Op{{Op: OpRejectAlternative, Text: "mongodb.", Reason: "other", Turn: 8}},
			check: func(t *testing.T, got *Capsule) {
				want := []Rejected{{ID: "R1", Text: "MongoDB", Reason: "ops burden", SourceTurn: 4, Provenance: ProvenanceExtractor}}
				if diff := cmp.Diff(want, got.Rejected); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "add_constraint and supersede_constraint",
			ops: []Op{
				{Op: OpAddConstraint, Text: "Keep p99 under 50ms", Turn: 6},
				{Op: OpSupersedeConstraint, ID: "C2", Text: "Keep p99 under 80ms", Turn: 8},
			},
			check: func(t *testing.T, got *Capsule) {
				want := []Constraint{
					{ID: "C1", Text: "No new dependencies", Status: StatusActive, SourceTurn: 2, Provenance: ProvenanceExtractor},
					{ID: "C2", Text: "Keep p99 under 50ms", Status: StatusSuperseded, SupersededBy: "C3", SourceTurn: 6, ClosedTurn: 8, Provenance: ProvenanceExtractor, ClosedBy: ProvenanceExtractor},
					{ID: "C3", Text: "Keep p99 under 80ms", Status: StatusActive, SourceTurn: 8, Provenance: ProvenanceExtractor},
				}
				if diff := cmp.Diff(want, got.Constraints); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "remove_constraint",
			ops:  []Op{{Op: OpRemoveConstraint, ID: "C1", Turn: 10}},
			check: func(t *testing.T, got *Capsule) {
				want := Constraint{ID: "C1", Text: "No new dependencies", Status: StatusSuperseded, SourceTurn: 2, ClosedTurn: 10, Provenance: ProvenanceExtractor, ClosedBy: ProvenanceExtractor}
				if diff := cmp.Diff(want, got.Constraints[0]); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "add_question may cite an assistant turn; duplicates collapse",
			ops: []Op{
				{Op: OpAddQuestion, Text: "Is the staging DB reachable?", Turn: 7},
				{Op: OpAddQuestion, Text: "which go version do we target", Turn: 9},
			},
			check: func(t *testing.T, got *Capsule) {
				if len(got.OpenQuestions) != 2 || got.OpenQuestions[1].ID != "Q2" {
					t.Errorf("questions = %+v, want Q1 and Q2", got.OpenQuestions)
				}
			},
		},
		{
			name: "resolve_question",
			ops:  []Op{{Op: OpResolveQuestion, ID: "Q1", Turn: 6}},
			check: func(t *testing.T, got *Capsule) {
				if q := got.OpenQuestions[0]; q.Status != StatusResolved || q.ClosedTurn != 6 {
					t.Errorf("Q1 = %+v, want resolved at 6", q)
				}
			},
		},
		{
			name: "set_plan from a structured tool is accepted at an assistant turn",
			ops:  []Op{{Op: OpSetPlan, Status: PlanAccepted, Source: SourceStructuredTool, Tool: "update_plan", Steps: []Step{{"Add schema", StepCompleted}, {"Write merge", StepInProgress}}, Turn: 7}},
			check: func(t *testing.T, got *Capsule) {
				want := &Plan{Status: PlanAccepted, Source: SourceStructuredTool, Tool: "update_plan", Steps: []Step{{"Add schema", StepCompleted}, {"Write merge", StepInProgress}}, SourceTurn: 7}
				if diff := cmp.Diff(want, got.LatestPlan); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "set_plan accepted from conversation with a user turn",
			ops:  []Op{{Op: OpSetPlan, Status: PlanAccepted, Source: SourceConversation, Steps: []Step{{"a", StepPending}}, Turn: 8}},
			check: func(t *testing.T, got *Capsule) {
				if got.LatestPlan.Status != PlanAccepted {
					t.Errorf("status = %s, want accepted", got.LatestPlan.Status)
				}
			},
		},
		{
			name: "set_plan accepted from conversation at an assistant turn stays provisional",
			ops:  []Op{{Op: OpSetPlan, Status: PlanAccepted, Source: SourceConversation, Steps: []Step{{"a", StepPending}}, Turn: 9}},
			check: func(t *testing.T, got *Capsule) {
				if got.LatestPlan.Status != PlanProvisional {
					t.Errorf("status = %s, want provisional", got.LatestPlan.Status)
				}
			},
		},
		{
			name: "a proposal does not displace an unfinished accepted plan",
			ops: []Op{
				{Op: OpSetPlan, Status: PlanAccepted, Source: SourcePlanMode, Steps: []Step{{"a", StepPending}}, Turn: 6},
				{Op: OpSetPlan, Status: PlanProvisional, Source: SourceConversation, Steps: []Step{{"b", StepPending}}, Turn: 9},
			},
			check: func(t *testing.T, got *Capsule) {
				if p := got.LatestPlan; p.Status != PlanAccepted || p.Steps[0].Text != "a" {
					t.Errorf("plan = %+v, want accepted plan a", p)
				}
			},
		},
		{
			name: "a proposal replaces a finished accepted plan",
			ops: []Op{
				{Op: OpSetPlan, Status: PlanAccepted, Source: SourcePlanMode, Steps: []Step{{"a", StepCompleted}}, Turn: 6},
				{Op: OpSetPlan, Status: PlanProvisional, Source: SourceConversation, Steps: []Step{{"b", StepPending}}, Turn: 9},
			},
			check: func(t *testing.T, got *Capsule) {
				if p := got.LatestPlan; p.Status != PlanProvisional || p.Steps[0].Text != "b" {
					t.Errorf("plan = %+v, want provisional plan b", p)
				}
			},
		},
		{
			name: "an older plan never replaces a newer one",
			ops: []Op{
				{Op: OpSetPlan, Status: PlanAccepted, Source: SourceStructuredTool, Steps: []Step{{"new", StepPending}}, Turn: 9},
				{Op: OpSetPlan, Status: PlanAccepted, Source: SourceStructuredTool, Steps: []Step{{"old", StepPending}}, Turn: 7},
			},
			check: func(t *testing.T, got *Capsule) {
				if p := got.LatestPlan; p.Steps[0].Text != "new" {
					t.Errorf("plan = %+v, want the turn-9 plan", p)
				}
			},
		},
		{
			name: "set_step_status",
			ops: []Op{
				{Op: OpSetPlan, Status: PlanAccepted, Source: SourceStructuredTool, Steps: []Step{{"a", StepInProgress}, {"b", StepPending}}, Turn: 7},
				{Op: OpSetStepStatus, StepNumber: 1, Status: StepCompleted, Turn: 9},
				{Op: OpSetStepStatus, StepNumber: 2, Status: StepInProgress, Turn: 9},
			},
			check: func(t *testing.T, got *Capsule) {
				want := []Step{{"a", StepCompleted}, {"b", StepInProgress}}
				if diff := cmp.Diff(want, got.LatestPlan.Steps); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "add_decision reinstating a superseded decision at a later user turn",
			ops: []Op{
				{Op: OpSupersedeDecision, ID: "D1", Statement: "Use SQLite", Turn: 6},
				{Op: OpAddDecision, Statement: "Use PostgreSQL for storage", Reinstates: "D1", Turn: 10},
			},
			check: func(t *testing.T, got *Capsule) {
				if d := got.Decisions[0]; d.Status != StatusSuperseded {
					t.Errorf("D1 = %+v, want still superseded", d)
				}
				if d := got.Decisions[2]; d.ID != "D3" || d.Status != StatusActive || d.Statement != "Use PostgreSQL for storage" {
					t.Errorf("D3 = %+v, want active re-decision", d)
				}
			},
		},
		{
			name: "add_decision reinstating a rejected alternative removes it",
			ops:  []Op{{Op: OpAddDecision, Statement: "MongoDB", Reinstates: "R1", Turn: 8}},
			check: func(t *testing.T, got *Capsule) {
				if len(got.Rejected) != 0 {
					t.Errorf("rejected = %+v, want none", got.Rejected)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			prev := baseCapsule(t)
			before, _ := Encode(prev)
			got, err := Apply(prev, tc.ops, d2, "tx-test")
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if got.Revision != prev.Revision+1 || got.Applied[len(got.Applied)-1] != "tx-test" {
				t.Errorf("revision %d applied %v: want %d ending in tx-test", got.Revision, got.Applied, prev.Revision+1)
			}
			tc.check(t, got)
			if after, _ := Encode(prev); string(after) != string(before) {
				t.Errorf("Apply modified prev")
			}
		})
	}
}

func TestApplyRejectsInvalidOps(t *testing.T) {
	plan := Op{Op: OpSetPlan, Status: PlanAccepted, Source: SourceStructuredTool, Steps: []Step{{"a", StepPending}}, Turn: 7}
	tests := []struct {
		name   string
		ops    []Op
		index  int
		reason string
	}{
		{"unknown kind", []Op{{Op: "delete_everything", Turn: 6}}, 0, "unknown op kind"},
		{"turn outside delta", []Op{{Op: OpAddDecision, Statement: "x", Turn: 4}}, 0, "outside delta"},
		{"intent op citing an assistant turn", []Op{{Op: OpAddDecision, Statement: "x", Turn: 7}}, 0, "not a user turn"},
		{"resolve citing an assistant turn", []Op{{Op: OpResolveQuestion, ID: "Q1", Turn: 7}}, 0, "not a user turn"},
		{"supersede unknown id", []Op{{Op: OpSupersedeDecision, ID: "D9", Statement: "x", Turn: 6}}, 0, "unknown id"},
		{"supersede a superseded decision", []Op{
			{Op: OpSupersedeDecision, ID: "D1", Statement: "x", Turn: 6},
			{Op: OpSupersedeDecision, ID: "D1", Statement: "y", Turn: 8},
		}, 1, "D1 is superseded, not active"},
		{"reject a rejected decision", []Op{
			{Op: OpRejectDecision, ID: "D1", Turn: 6},
			{Op: OpRejectDecision, ID: "D1", Turn: 8},
		}, 1, "not active"},
		{"supersede citing a turn before the decision", []Op{
			{Op: OpAddDecision, Statement: "x", Turn: 10},
			{Op: OpSupersedeDecision, ID: "D2", Statement: "y", Turn: 8},
		}, 1, "precedes"},
		{"remove unknown constraint", []Op{{Op: OpRemoveConstraint, ID: "C7", Turn: 6}}, 0, "unknown id"},
		{"remove removed constraint", []Op{
			{Op: OpRemoveConstraint, ID: "C1", Turn: 6},
			{Op: OpRemoveConstraint, ID: "C1", Turn: 8},
		}, 1, "not active"},
		{"resolve resolved question", []Op{
			{Op: OpResolveQuestion, ID: "Q1", Turn: 6},
			{Op: OpResolveQuestion, ID: "Q1", Turn: 8},
		}, 1, "not open"},
		{"empty statement", []Op{{Op: OpAddDecision, Statement: " ...! ", Turn: 6}}, 0, "empty statement"},
		{"empty constraint", []Op{{Op: OpAddConstraint, Text: "\n\t", Turn: 6}}, 0, "empty text"},
		{"re-adding a superseded decision without reinstates", []Op{
			{Op: OpSupersedeDecision, ID: "D1", Statement: "Use SQLite", Turn: 6},
			{Op: OpAddDecision, Statement: "use postgresql for storage", Turn: 10},
		}, 1, "needs reinstates=D1"},
		{"reinstating at the turn that retired it", []Op{
			{Op: OpSupersedeDecision, ID: "D1", Statement: "Use SQLite", Turn: 8},
			{Op: OpAddDecision, Statement: "Use PostgreSQL for storage", Reinstates: "D1", Turn: 8},
		}, 1, "needs a later user turn"},
		{"re-adding a rejected alternative without reinstates", []Op{{Op: OpAddDecision, Statement: "mongodb", Turn: 6}}, 0, "needs reinstates=R1"},
		{"reinstating an active item", []Op{{Op: OpAddDecision, Statement: "x", Reinstates: "D1", Turn: 6}}, 0, "not a retired item"},
		{"re-adding a removed constraint without reinstates", []Op{
			{Op: OpRemoveConstraint, ID: "C1", Turn: 6},
			{Op: OpAddConstraint, Text: "no new dependencies", Turn: 8},
		}, 1, "needs reinstates=C1"},
		{"step status without a plan", []Op{{Op: OpSetStepStatus, StepNumber: 1, Status: StepCompleted, Turn: 6}}, 0, "no plan"},
		{"step out of range", []Op{plan, {Op: OpSetStepStatus, StepNumber: 2, Status: StepCompleted, Turn: 8}}, 1, "out of range"},
		{"bad step status", []Op{plan, {Op: OpSetStepStatus, StepNumber: 1, Status: "done", Turn: 8}}, 1, "unknown step status"},
		{"bad plan status", []Op{{Op: OpSetPlan, Status: "final", Source: SourcePlanMode, Steps: []Step{{"a", StepPending}}, Turn: 6}}, 0, "plan status"},
		{"bad plan source", []Op{{Op: OpSetPlan, Status: PlanAccepted, Source: "vibes", Steps: []Step{{"a", StepPending}}, Turn: 6}}, 0, "source"},
		{"plan without steps", []Op{{Op: OpSetPlan, Status: PlanAccepted, Source: SourcePlanMode, Turn: 6}}, 0, "no steps"},
		{"valid ops before an invalid one are not applied", []Op{
			{Op: OpAddDecision, Statement: "valid", Turn: 6},
			{Op: OpRejectDecision, ID: "D42", Turn: 8},
		}, 1, "unknown id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			prev := baseCapsule(t)
			before, _ := Encode(prev)
			got, err := Apply(prev, tc.ops, d2, "tx-bad")
			if got != nil {
				t.Errorf("Apply returned a capsule on error")
			}
			if !errors.Is(err, ErrInvalidOp) {
				t.Fatalf("err = %v, want ErrInvalidOp", err)
			}
			var oe *OpError
			if !errors.As(err, &oe) || oe.Index != tc.index || !strings.Contains(oe.Reason, tc.reason) {
				t.Fatalf("err = %v, want op %d with reason containing %q", err, tc.index, tc.reason)
			}
			if after, _ := Encode(prev); string(after) != string(before) {
				t.Errorf("failed Apply modified prev")
			}
		})
	}
}

func TestApplyErrorsNeverCarryItemText(t *testing.T) {
	prev := baseCapsule(t)
	secret := "sk-live-SECRET-in-a-statement"
	_, err := Apply(prev, []Op{
		{Op: OpSupersedeDecision, ID: "D1", Statement: secret, Turn: 6},
		{Op: OpAddDecision, Statement: "Use PostgreSQL for storage", Turn: 8},
		{Op: OpAddDecision, Statement: secret, Turn: 7},
	}, d2, "tx")
	if err == nil || strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), "PostgreSQL") {
		t.Fatalf("err = %v: want an error without item text", err)
	}
}

func TestApplyBadDeltaAndTx(t *testing.T) {
	for name, tc := range map[string]struct {
		d  Delta
		tx string
	}{
		"empty tx":            {d2, ""},
		"reversed range":      {delta(5, 2), "tx"},
		"user turn not in it": {delta(0, 5, 9), "tx"},
	} {
		if _, err := Apply(nil, nil, tc.d, tc.tx); !errors.Is(err, ErrInvalidOp) {
			t.Errorf("%s: err = %v, want ErrInvalidOp", name, err)
		}
	}
}

func TestReplayIsNoOp(t *testing.T) {
	prev := baseCapsule(t)
	ops := []Op{{Op: OpAddDecision, Statement: "Ship behind a flag", Turn: 6}}
	once, err := Apply(prev, ops, d2, "compaction-7")
	if err != nil {
		t.Fatal(err)
	}
	twice, err := Apply(once, ops, d2, "compaction-7")
	if !errors.Is(err, ErrAlreadyApplied) {
		t.Fatalf("err = %v, want ErrAlreadyApplied", err)
	}
	if twice != once {
		t.Fatalf("replay returned a different capsule")
	}
	if twice.Revision != prev.Revision+1 || len(twice.ActiveDecisions()) != 2 {
		t.Fatalf("replay changed state: revision %d, %d active", twice.Revision, len(twice.ActiveDecisions()))
	}
	// A rebase of the same transaction is also a no-op.
	if _, err := Rebase(once, ops, d2, "compaction-7", prev.Revision, prev.Watermark); !errors.Is(err, ErrAlreadyApplied) {
		t.Fatalf("rebase replay err = %v, want ErrAlreadyApplied", err)
	}
}

// Three successive compactions that keep re-extracting the same facts keep
// one active copy of each, and the rendered block does not grow.
func TestRepeatedCompactionsDoNotDuplicate(t *testing.T) {
	c := baseCapsule(t)
	var sizes []int
	for i := range 3 {
		from := 6 + i*10
		d := delta(from, from+9, from, from+2)
		c = mustApply(t, c, d,
			Op{Op: OpAddDecision, Statement: "Use PostgreSQL for storage.", Turn: from},
			Op{Op: OpAddConstraint, Text: "no new dependencies", Turn: from},
			Op{Op: OpRejectAlternative, Text: "mongodb", Turn: from + 2},
			Op{Op: OpAddQuestion, Text: "Which Go version do we target", Turn: from + 1},
		)
		sizes = append(sizes, len(Render(c)))
	}
	want := Stats{ActiveDecisions: 1, Constraints: 1, Rejected: 1, Questions: 1}
	got := c.Stats()
	got.Tokens = 0
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stats after 3 compactions (-want +got):\n%s", diff)
	}
	if sizes[0] != sizes[1] || sizes[1] != sizes[2] {
		t.Errorf("render sizes %v grow across compactions", sizes)
	}
}

// A decision superseded in compaction 1 stays retired through later
// compactions, even when the extractor re-emits it citing a new user turn;
// only an explicit reinstatement at a later user turn brings it back, as a
// new item.
func TestSupersededNeverResurrects(t *testing.T) {
	c := baseCapsule(t)
	c = mustApply(t, c, d2, Op{Op: OpSupersedeDecision, ID: "D1", Statement: "Use SQLite for storage", Turn: 8})

	d3 := delta(13, 20, 13, 15)
	_, err := Apply(c, []Op{{Op: OpAddDecision, Statement: "Use PostgreSQL for storage", Turn: 13}}, d3, "tx-3")
	if !errors.Is(err, ErrInvalidOp) {
		t.Fatalf("re-adding a superseded decision: err = %v, want ErrInvalidOp", err)
	}
	if got := Render(c); !strings.Contains(got, "- D1: Use PostgreSQL for storage (superseded by D2)") ||
		!strings.Contains(got, "ACTIVE DECISIONS:\n- D2: Use SQLite for storage\n") {
		t.Fatalf("render does not show D1 as replaced by D2:\n%s", got)
	}

	c = mustApply(t, c, d3, Op{Op: OpAddDecision, Statement: "Use PostgreSQL for storage", Reinstates: "D1", Turn: 15})
	active := c.ActiveDecisions()
	if len(active) != 2 || active[1].ID != "D3" {
		t.Fatalf("active = %+v, want D2 and new D3", active)
	}
	if c.Decisions[0].Status != StatusSuperseded {
		t.Fatalf("D1 became %s", c.Decisions[0].Status)
	}
}

func TestIDsAreNeverReused(t *testing.T) {
	c := New("s", "a")
	turn := 0
	for i := range MaxTombstones + 4 {
		d := delta(turn, turn+1, turn, turn+1)
		ops := []Op{{Op: OpAddDecision, Statement: fmt.Sprintf("choice %d", i), Turn: turn}}
		if i > 0 {
			ops = []Op{{Op: OpSupersedeDecision, ID: fmt.Sprintf("D%d", i), Statement: fmt.Sprintf("choice %d", i), Turn: turn + 1}}
		}
		c = mustApply(t, c, d, ops...)
		turn += 2
	}
	if n := len(c.Decisions) - len(c.ActiveDecisions()); n != MaxTombstones {
		t.Fatalf("%d tombstones, want %d", n, MaxTombstones)
	}
	if c.Dropped != 3 {
		t.Fatalf("dropped = %d, want 3", c.Dropped)
	}
	c = mustApply(t, c, delta(turn, turn, turn), Op{Op: OpAddDecision, Statement: "fresh", Turn: turn})
	if got := c.Decisions[len(c.Decisions)-1].ID; got != "D21" {
		t.Fatalf("new id = %s, want D21 (pruned ids are not reused)", got)
	}
}

func TestAppliedIsBounded(t *testing.T) {
	var c *Capsule
	for i := range MaxApplied + 10 {
		var err error
		c, err = Apply(c, nil, delta(0, 0), fmt.Sprintf("tx-%d", i))
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(c.Applied) != MaxApplied || c.Applied[MaxApplied-1] != fmt.Sprintf("tx-%d", MaxApplied+9) || c.Applied[0] != "tx-10" {
		t.Fatalf("applied = %d ids [%s … %s], want newest %d", len(c.Applied), c.Applied[0], c.Applied[len(c.Applied)-1], MaxApplied)
	}
	if c.Revision != MaxApplied+10 {
		t.Fatalf("revision = %d", c.Revision)
	}
}

func TestWatermark(t *testing.T) {
	c, err := Apply(nil, nil, delta(0, 10), "a", WithWatermark(Watermark{Turn: 10, Digest: "w10"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Watermark != (Watermark{Turn: 10, Digest: "w10"}) {
		t.Fatalf("watermark = %+v", c.Watermark)
	}
	c2, err := Apply(c, nil, delta(0, 10), "b")
	if err != nil || c2.Watermark != c.Watermark {
		t.Fatalf("without option: watermark %+v err %v, want unchanged", c2.Watermark, err)
	}
	if _, err := Apply(c, nil, delta(0, 5), "c", WithWatermark(Watermark{Turn: 5})); !errors.Is(err, ErrStale) {
		t.Fatalf("backwards watermark: err = %v, want ErrStale", err)
	}
}

func TestProvenance(t *testing.T) {
	c, err := Apply(nil, []Op{{Op: OpAddDecision, Statement: "x", Turn: 0}}, delta(0, 0, 0), "t", WithProvenance(ProvenanceStructured))
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Decisions[0].Provenance; p != ProvenanceStructured {
		t.Fatalf("provenance = %q", p)
	}
	if _, err := Apply(nil, nil, delta(0, 0), "t", WithProvenance("guess")); !errors.Is(err, ErrInvalidOp) {
		t.Fatalf("unknown provenance: err = %v", err)
	}
}

// Each op's own origin (the extractor that produced it) is recorded on the
// items it adds and on those it closes; ops without one take the batch's.
func TestOpOriginRecorded(t *testing.T) {
	d := delta(0, 6, 0, 2, 4, 6)
	c, err := Apply(nil, []Op{
		{Op: OpAddDecision, Statement: "Use PostgreSQL", Turn: 0, Origin: ProvenanceMarked},
		{Op: OpAddConstraint, Text: "No new dependencies", Turn: 2, Origin: ProvenanceModel},
		{Op: OpRejectAlternative, Text: "MongoDB", Turn: 2},
	}, d, "t1")
	if err != nil {
		t.Fatal(err)
	}
	c, err = Apply(c, []Op{
		{Op: OpSupersedeDecision, ID: "D1", Statement: "Use SQLite", Turn: 4, Origin: ProvenanceModel},
		{Op: OpRemoveConstraint, ID: "C1", Turn: 6, Origin: ProvenanceMarked},
	}, d, "t2")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{
		"D1": c.Decisions[0].Provenance + "/" + c.Decisions[0].ClosedBy,
		"D2": c.Decisions[1].Provenance,
		"C1": c.Constraints[0].Provenance + "/" + c.Constraints[0].ClosedBy,
		"R1": c.Rejected[0].Provenance,
	}
	want := map[string]string{"D1": "marked/model", "D2": "model", "C1": "model/marked", "R1": "extractor"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("provenance by item (-want +got):\n%s", diff)
	}
	if _, err := Apply(nil, []Op{{Op: OpAddDecision, Statement: "x", Turn: 0, Origin: "guess"}}, d, "t3"); !errors.Is(err, ErrInvalidOp) {
		t.Errorf("unknown origin: err = %v, want ErrInvalidOp", err)
	}
	// The origin is never read from an extractor's JSON.
	var op Op
	if err := json.Unmarshal([]byte(`{"op":"add_decision","statement":"x","turn":0,"Origin":"marked","origin":"marked"}`), &op); err != nil || op.Origin != "" {
		t.Errorf("Origin read from JSON: %q, %v", op.Origin, err)
	}
}

func TestRebase(t *testing.T) {
	base := baseCapsule(t) // revision 1
	base = mustApply(t, base, delta(0, 5), Op{Op: OpAddQuestion, Text: "q", Turn: 5})
	base, _ = Apply(base, nil, delta(0, 5), "wm", WithWatermark(Watermark{Turn: 5}))
	baseRev, baseWM := base.Revision, base.Watermark

	// Meanwhile another result covering turns 6-10 supersedes D1.
	current, err := Apply(base, []Op{{Op: OpSupersedeDecision, ID: "D1", Statement: "Use SQLite", Turn: 8}},
		delta(6, 10, 6, 8, 10), "other", WithWatermark(Watermark{Turn: 10}))
	if err != nil {
		t.Fatal(err)
	}

	t.Run("re-applies onto the newer capsule", func(t *testing.T) {
		got, err := Rebase(current, []Op{{Op: OpAddConstraint, Text: "Go 1.26 only", Turn: 14}},
			delta(6, 15, 6, 8, 10, 14), "late", baseRev, baseWM, WithWatermark(Watermark{Turn: 15}))
		if err != nil {
			t.Fatal(err)
		}
		if got.Revision != current.Revision+1 || got.Watermark.Turn != 15 {
			t.Fatalf("revision %d watermark %d", got.Revision, got.Watermark.Turn)
		}
		if a := got.ActiveDecisions(); len(a) != 1 || a[0].ID != "D2" {
			t.Fatalf("newer decision lost: %+v", a)
		}
		if got.Constraints[1].Text != "Go 1.26 only" {
			t.Fatalf("rebased op not applied: %+v", got.Constraints)
		}
	})
	t.Run("an older result cannot overwrite a newer decision", func(t *testing.T) {
		_, err := Rebase(current, []Op{{Op: OpSupersedeDecision, ID: "D1", Statement: "Use MySQL", Turn: 6}},
			delta(6, 15, 6, 14), "late2", baseRev, baseWM)
		if !errors.Is(err, ErrInvalidOp) {
			t.Fatalf("err = %v, want ErrInvalidOp (D1 no longer active)", err)
		}
	})
	t.Run("stale: delta ends before the watermark", func(t *testing.T) {
		_, err := Rebase(current, nil, delta(6, 9), "late3", baseRev, baseWM)
		if !errors.Is(err, ErrStale) {
			t.Fatalf("err = %v, want ErrStale", err)
		}
	})
	t.Run("stale: current already covers the delta", func(t *testing.T) {
		_, err := Rebase(current, nil, delta(6, 10), "late4", baseRev, baseWM)
		if !errors.Is(err, ErrStale) {
			t.Fatalf("err = %v, want ErrStale", err)
		}
	})
	t.Run("base revision ahead of current", func(t *testing.T) {
		_, err := Rebase(current, nil, delta(6, 20), "late5", current.Revision+1, baseWM)
		if !errors.Is(err, ErrStale) {
			t.Fatalf("err = %v, want ErrStale", err)
		}
	})
	t.Run("same revision is a plain apply", func(t *testing.T) {
		got, err := Rebase(current, nil, delta(10, 12), "next", current.Revision, current.Watermark)
		if err != nil || got.Revision != current.Revision+1 {
			t.Fatalf("got rev %v err %v", got, err)
		}
	})
}

func TestApplyOnHandBuiltCapsuleKeepsIDsUnique(t *testing.T) {
	prev := &Capsule{SchemaVersion: 1, Decisions: []Decision{{ID: "D3", Statement: "x", Status: StatusActive}}}
	c := mustApply(t, prev, delta(0, 0, 0), Op{Op: OpAddDecision, Statement: "y", Turn: 0})
	if id := c.Decisions[1].ID; id != "D4" {
		t.Fatalf("new id = %s, want D4", id)
	}
}

// A decision that reinstates a rejected alternative in other words ("Use
// MongoDB for the event log" reinstating R1 "MongoDB") takes it off the
// rejected list: the capsule never tells the model to use a thing and, in
// the same block, never to propose it.
func TestReinstatingARejectedAlternativeUnlistsIt(t *testing.T) {
	for _, tc := range []struct {
		name string
		op   Op
	}{
		{"add_decision", Op{Op: OpAddDecision, Statement: "Use MongoDB for the event log", Reinstates: "R1", Turn: 8}},
		{"supersede_decision", Op{Op: OpSupersedeDecision, ID: "D1", Statement: "Use MongoDB for storage", Reinstates: "R1", Turn: 8}},
		{"add_constraint", Op{Op: OpAddConstraint, Text: "MongoDB only for the event log", Reinstates: "R1", Turn: 8}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mustApply(t, baseCapsule(t), d2, tc.op)
			if len(got.Rejected) != 0 {
				t.Errorf("R1 is still rejected beside the item that reinstates it: %+v", got.Rejected)
			}
			if strings.Contains(Render(got), "REJECTED") && strings.Contains(strings.SplitN(Render(got), "REJECTED", 2)[1], "- R1") {
				t.Errorf("the block still lists R1:\n%s", Render(got))
			}
		})
	}
	// Reinstating needs a later user turn than the rejection, as before.
	if _, err := Apply(baseCapsule(t), []Op{{Op: OpSupersedeDecision, ID: "D1", Statement: "Use MongoDB", Reinstates: "R1", Turn: 4}}, delta(0, 5, 0, 2, 4), "tx"); err == nil {
		t.Error("a supersede citing the rejection's own turn reinstated it")
	}
}
