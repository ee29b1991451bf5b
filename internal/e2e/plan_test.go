package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/demo"
)

// After compaction, the model's next turn carries the accepted plan (every
// step, with its status) although the lossy summary forgot it.
func TestAC01_AcceptedPlanSurvivesCompaction(t *testing.T) {
	e := newEnv(t, envOptions{yaml: continuityYAML})
	a := e.agent("ac01-session")
	say(t, a, "We're building an inventory service. Please make a plan and track it with your todo list.",
		"Yes, go ahead with that plan.")
	compact(t, a)
	if strings.Contains(a.Shown, demo.PlanSteps[0]) == false && !strings.Contains(a.Shown, "<continuity-capsule") {
		t.Fatalf("the summary the agent kept has no continuity block:\n%s", a.Shown)
	}
	say(t, a, "Continue.")
	b := block(e.lastPrimary())
	if b == "" {
		t.Fatalf("the first turn after compaction carries no continuity block")
	}
	if !strings.Contains(b, "ACCEPTED PLAN") {
		t.Errorf("plan not presented as accepted:\n%s", b)
	}
	for _, s := range demo.PlanSteps {
		if !strings.Contains(b, s) {
			t.Errorf("plan step %q missing after compaction:\n%s", s, b)
		}
	}
	if !strings.Contains(b, "[in progress] "+demo.PlanSteps[0]) {
		t.Errorf("step status not carried:\n%s", b)
	}
}

// Structured plan state is preserved with no extractor configured at all:
// zero extraction calls, plan present after compaction.
func TestAC06_StructuredPlanPreservedWithoutExtractor(t *testing.T) {
	e := newEnv(t, envOptions{yaml: "\ncompaction_continuity: {enabled: true}\n"})
	a := e.agent("ac06-session")
	say(t, a, "Please make a plan and track it with your todo list.", "Step 1 is done, continue.")
	compact(t, a)
	say(t, a, "Next?")
	b := block(e.lastPrimary())
	for i, s := range demo.PlanSteps {
		if !strings.Contains(b, s) {
			t.Errorf("plan step %d %q missing:\n%s", i+1, s, b)
		}
	}
	if !strings.Contains(b, "[done] "+demo.PlanSteps[0]) {
		t.Errorf("completed step not marked done:\n%s", b)
	}
	if n := len(e.extractorCalls()); n != 0 {
		t.Errorf("extractor called %d times with no extractor configured", n)
	}
}

// A session without planning or decision state makes no extractor calls,
// even through a compaction.
func TestAC07_NoDecisionStateNoExtractorCalls(t *testing.T) {
	e := newEnv(t, envOptions{yaml: continuityYAML})
	a := e.agent("ac07-session")
	say(t, a, "What does this repository do?", "Run the tests please.", "Thanks, show me the README.")
	compact(t, a)
	say(t, a, "And the Makefile?")
	if n := len(e.extractorCalls()); n != 0 {
		t.Errorf("extractor called %d times for a session with no decisions", n)
	}
	if b := block(e.lastPrimary()); b != "" {
		t.Errorf("a continuity block was added with nothing to preserve:\n%s", b)
	}
}

// Three successive compactions (the demo session) keep the whole active set,
// the superseded decision only as superseded, and no fact twice.
func TestAC08_ThreeCompactionsNoLossNoDuplication(t *testing.T) {
	rep, err := demo.Run(context.Background(), demo.Options{StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.With) != 3 {
		t.Fatalf("got %d compactions, want 3", len(rep.With))
	}
	for _, p := range rep.Problems {
		t.Error(p)
	}
	b := block(string(rep.FinalRequest))
	for _, s := range []string{"use PostgreSQL, not MongoDB", "never change the public REST API", "Use Redis", "Prometheus format", "GORM"} {
		if n := strings.Count(b, s); n != 1 {
			t.Errorf("%q appears %d times in the block, want exactly once:\n%s", s, n, b)
		}
	}
	if n := strings.Count(string(rep.FinalRequest), "<continuity-capsule"); n != 1 {
		t.Errorf("the model was shown %d blocks, want exactly 1", n)
	}
	// Without Tether the lossy compactor lost the decisions.
	if strings.Contains(rep.Without[2], "PostgreSQL") {
		t.Fatalf("the scripted compactor is not lossy; the test proves nothing")
	}
}
