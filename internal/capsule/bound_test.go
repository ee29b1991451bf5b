package capsule

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/tokens"
)

// boundFixture has several items in every droppable category.
func boundFixture(t testing.TB) *Capsule {
	t.Helper()
	long := strings.Repeat("because the operators asked for it explicitly ", 4)
	var ops []Op
	ops = append(ops, Op{Op: OpSetPlan, Status: PlanAccepted, Source: SourceStructuredTool, Tool: "update_plan", Turn: 1, Steps: []Step{
		{"step one finished", StepCompleted}, {"step two finished", StepCompleted},
		{"step three running", StepInProgress}, {"step four waiting", StepPending}, {"step five waiting", StepPending},
	}})
	for i := range 4 {
		ops = append(ops,
			Op{Op: OpAddDecision, Statement: fmt.Sprintf("decision number %d about storage", i), Rationale: long, Turn: 2},
			Op{Op: OpAddConstraint, Text: fmt.Sprintf("constraint number %d on latency", i), Turn: 2},
			Op{Op: OpRejectAlternative, Text: fmt.Sprintf("alternative number %d", i), Reason: "too slow for the hot path", Turn: 2},
			Op{Op: OpAddQuestion, Text: fmt.Sprintf("question number %d still open", i), Turn: 2},
		)
	}
	c := mustApply(t, nil, delta(0, 10, 0, 2, 4, 6, 8), ops...)
	// Retire some: 2 tombstone decisions (by superseding), 1 tombstone constraint, 2 resolved questions.
	return mustApply(t, c, delta(11, 20, 12, 14),
		Op{Op: OpSupersedeDecision, ID: "D1", Statement: "decision one revised", Turn: 12},
		Op{Op: OpRejectDecision, ID: "D2", Turn: 14},
		Op{Op: OpRemoveConstraint, ID: "C1", Turn: 12},
		Op{Op: OpResolveQuestion, ID: "Q1", Turn: 12},
		Op{Op: OpResolveQuestion, ID: "Q2", Turn: 14},
	)
}

type category struct {
	name  string
	count func(*Capsule) int
}

var dropOrder = []category{
	{"done steps", func(c *Capsule) int { return countSteps(c, StepCompleted) }},
	{"resolved questions", func(c *Capsule) int { return countQuestions(c, StatusResolved) }},
	{"tombstones", func(c *Capsule) int {
		n := 0
		for _, d := range c.Decisions {
			if d.Status != StatusActive {
				n++
			}
		}
		for _, k := range c.Constraints {
			if k.Status != StatusActive {
				n++
			}
		}
		return n
	}},
	{"rationales", func(c *Capsule) int {
		n := 0
		for _, d := range c.Decisions {
			if d.Status == StatusActive && d.Rationale != "" {
				n++
			}
		}
		return n
	}},
	{"reasons", func(c *Capsule) int {
		n := 0
		for _, r := range c.Rejected {
			if r.Reason != "" {
				n++
			}
		}
		return n
	}},
	{"alternatives", func(c *Capsule) int { return len(c.Rejected) }},
	{"open questions", func(c *Capsule) int { return countQuestions(c, StatusOpen) }},
	{"constraints", func(c *Capsule) int {
		n := 0
		for _, k := range c.Constraints {
			if k.Status == StatusActive {
				n++
			}
		}
		return n
	}},
	{"active decisions and unfinished steps", func(c *Capsule) int {
		return len(c.ActiveDecisions()) + countSteps(c, StepPending) + countSteps(c, StepInProgress)
	}},
}

func countSteps(c *Capsule, status string) int {
	n := 0
	if c.LatestPlan != nil {
		for _, s := range c.LatestPlan.Steps {
			if s.Status == status {
				n++
			}
		}
	}
	return n
}

func countQuestions(c *Capsule, status string) int {
	n := 0
	for _, q := range c.OpenQuestions {
		if q.Status == status {
			n++
		}
	}
	return n
}

func TestBoundDropOrder(t *testing.T) {
	c := boundFixture(t)
	before, _ := Encode(c)
	full := tokens.Estimate(Render(c))
	floor := tokens.Estimate(Render(&Capsule{Revision: c.Revision, Dropped: 999}))
	orig := make([]int, len(dropOrder))
	for i, cat := range dropOrder {
		orig[i] = cat.count(c)
		if orig[i] == 0 {
			t.Fatalf("fixture has no %s", cat.name)
		}
	}
	if b, n := Bound(c, full); n != 0 || Render(b) != Render(c) {
		t.Fatalf("Bound at full size dropped %d items", n)
	}
	prevDropped := 0
	for budget := full - 1; budget >= floor; budget-- {
		b, n := Bound(c, budget)
		if got := tokens.Estimate(Render(b)); got > budget {
			t.Fatalf("budget %d: rendered %d tokens", budget, got)
		}
		if n < prevDropped {
			t.Fatalf("budget %d dropped %d items, a larger budget dropped %d", budget, n, prevDropped)
		}
		prevDropped = n
		if b.Dropped != c.Dropped+n {
			t.Fatalf("Dropped = %d, want %d", b.Dropped, c.Dropped+n)
		}
		for k, cat := range dropOrder {
			if cat.count(b) == orig[k] {
				continue
			}
			for j := range k {
				if left := dropOrder[j].count(b); left != 0 {
					t.Fatalf("budget %d: dropped %s while %d %s remain", budget, cat.name, left, dropOrder[j].name)
				}
			}
		}
	}
	if after, _ := Encode(c); string(after) != string(before) {
		t.Fatalf("Bound modified its input")
	}
	// At the floor everything is gone and the block says so.
	b, n := Bound(c, floor)
	if !b.Empty() && len(b.ActiveDecisions()) != 0 {
		t.Fatalf("floor budget kept %+v", b.ActiveDecisions())
	}
	if !strings.Contains(Render(b), fmt.Sprintf("(%d lower-priority items omitted", b.Dropped)) || n == 0 {
		t.Fatalf("render does not report dropped items:\n%s", Render(b))
	}
}

func TestBoundKeepsActiveDecisionsLongest(t *testing.T) {
	c := boundFixture(t)
	// Budget that fits the header, the plan's unfinished steps and the active
	// decisions without rationale, but nothing else.
	core := c.Clone()
	core.Constraints, core.Rejected, core.OpenQuestions = nil, nil, nil
	var keep []Decision
	for _, d := range core.Decisions {
		if d.Status == StatusActive {
			d.Rationale = ""
			keep = append(keep, d)
		}
	}
	core.Decisions = keep
	core.LatestPlan.Steps = core.LatestPlan.Steps[2:]
	core.LatestPlan.Condensed = 2
	core.Dropped = 999
	budget := tokens.Estimate(Render(core))
	b, _ := Bound(c, budget)
	if got, want := len(b.ActiveDecisions()), len(c.ActiveDecisions()); got != want {
		t.Fatalf("kept %d of %d active decisions at a budget that fits them:\n%s", got, want, Render(b))
	}
	if countSteps(b, StepPending)+countSteps(b, StepInProgress) != 3 {
		t.Fatalf("unfinished steps dropped:\n%s", Render(b))
	}
	if !strings.Contains(Render(b), "(steps 1-2 done)\n3. [in progress] step three running") {
		t.Fatalf("condensed steps not rendered with stable numbering:\n%s", Render(b))
	}
	// Step numbering stays addressable after condensing.
	b2, err := Apply(b, []Op{{Op: OpSetStepStatus, StepNumber: 3, Status: StepCompleted, Turn: 21}}, delta(21, 21), "tx-step")
	if err != nil || b2.LatestPlan.Steps[0].Status != StepCompleted {
		t.Fatalf("set_step_status on condensed plan: %v", err)
	}
}

func TestBoundDropsProvisionalPlanBeforeDecisions(t *testing.T) {
	c := mustApply(t, nil, delta(0, 4, 0),
		Op{Op: OpAddDecision, Statement: "keep the public API stable", Turn: 0},
		Op{Op: OpSetPlan, Status: PlanProvisional, Source: SourceConversation, Turn: 3, Steps: []Step{
			{"rewrite everything in a weekend", StepPending}, {"then ship it", StepPending},
		}},
	)
	withoutPlan := c.Clone()
	withoutPlan.LatestPlan = nil
	withoutPlan.Dropped = 1
	b, n := Bound(c, tokens.Estimate(Render(withoutPlan)))
	if n != 1 || b.LatestPlan != nil || len(b.ActiveDecisions()) != 1 {
		t.Fatalf("n=%d plan=%v decisions=%d, want provisional plan dropped and decision kept", n, b.LatestPlan, len(b.ActiveDecisions()))
	}
}

func TestBoundTruncatesRationaleBeforeDroppingIt(t *testing.T) {
	long := strings.Repeat("word ", 60)
	c := mustApply(t, nil, delta(0, 0, 0), Op{Op: OpAddDecision, Statement: "x", Rationale: long, Turn: 0})
	b, n := Bound(c, tokens.Estimate(Render(c))-10)
	if n != 0 {
		t.Fatalf("dropped %d items; truncation alone should fit", n)
	}
	if r := b.Decisions[0].Rationale; !strings.HasSuffix(r, "…") || len([]rune(r)) > rationaleKeep+1 {
		t.Fatalf("rationale = %q, want truncated", r)
	}
}
