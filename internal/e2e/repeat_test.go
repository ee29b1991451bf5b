package e2e

import (
	"context"
	"strings"
	"testing"
)

// Ten compactions in a row where nothing changes: the scripted compactor
// returns the same summary and the user says the same thing each time. Every
// epoch must be recognised as the next one on the same branch (not as a fork
// onto an empty branch), and the decision and plan must be in front of the
// model after the tenth compaction as after the first.
func TestRepeatedIdenticalCompactionsKeepOneBranch(t *testing.T) {
	e := newEnv(t, envOptions{yaml: continuityYAML})
	a := e.agent("repeat-session")
	say(t, a, "Please make a plan and track it with your todo list.", "Decision: use PostgreSQL, not MongoDB.")
	for i := range 10 {
		compact(t, a)
		say(t, a, "Continue.")
		b := block(e.lastPrimary())
		if !strings.Contains(b, "use PostgreSQL, not MongoDB") || !strings.Contains(b, "ACCEPTED PLAN") {
			t.Fatalf("after compaction %d the model lost the state:\n%s", i+1, b)
		}
		if n := strings.Count(e.lastPrimary(), "<continuity-capsule"); n != 1 {
			t.Fatalf("after compaction %d the model got %d blocks", i+1, n)
		}
	}
	caps, err := e.store.ListCapsules(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(caps) != 1 {
		t.Errorf("%d capsules after ten compactions of one conversation, want 1 (a repeated epoch was taken for a fork)", len(caps))
	}
}
