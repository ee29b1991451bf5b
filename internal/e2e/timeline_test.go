package e2e

import (
	"context"
	"strings"
	"testing"
)

// Each compaction Tether handles is on the A-leg's timeline: when, which
// rule, and what was injected (the capsule revision and its counts), with
// no conversation text in the record.
func TestCompactionTimelineRecorded(t *testing.T) {
	e := newEnv(t, envOptions{yaml: continuityYAML})
	a := e.agent("timeline-session")
	say(t, a, "We're building an inventory service. Please make a plan and track it with your todo list.",
		"Yes, go ahead with that plan.")
	compact(t, a)
	say(t, a, "Continue.")
	compact(t, a)

	ctx := context.Background()
	recs, err := e.store.ListCapsules(ctx, "")
	if err != nil || len(recs) != 1 {
		t.Fatalf("ListCapsules = %d records, %v; want the one conversation", len(recs), err)
	}
	evs, err := e.store.Compactions(ctx, recs[0].Principal, recs[0].ALeg, 0)
	if err != nil {
		t.Fatal(err)
	}
	var augmented int
	for _, ev := range evs {
		if ev.Action != "augmented" {
			continue
		}
		augmented++
		if ev.RuleID == "" || ev.RuleVersion == 0 || ev.Agent != "claude-code" || ev.Kind != "in_band" {
			t.Errorf("event without its rule: %+v", ev)
		}
		if ev.Revision < 1 || ev.Steps == 0 || ev.Tokens == 0 || ev.At.IsZero() || ev.RequestID == "" {
			t.Errorf("event does not say what was injected: %+v", ev)
		}
	}
	if augmented != 2 {
		t.Errorf("timeline has %d augmented compactions, want 2: %+v", augmented, evs)
	}
	if len(evs) >= 2 && evs[0].Seq < evs[1].Seq {
		t.Errorf("timeline not newest first: %+v", evs)
	}
	dump, err := e.store.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range dump["compactions"] {
		if strings.Contains(row, "inventory") {
			t.Errorf("a timeline row holds conversation text: %s", row)
		}
	}
}
