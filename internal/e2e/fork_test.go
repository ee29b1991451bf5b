package e2e

import (
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/demo"
)

// A fork never sees what the other branch decided after the fork point. By
// default it starts with an empty capsule (its own visible history, which
// includes the pre-fork turns, is extracted afresh); with copy_on_fork it
// inherits the parent's state as of the fork point and extracts only what is
// new on the branch.
func TestFork_StateNeverCrossesBranches(t *testing.T) {
	forkModes(t, func(t *testing.T, e *env, copyOnFork bool) {
		a := e.agent("fork-session")
		say(t, a, "Decision: use PostgreSQL, not MongoDB.", "Thanks.")
		// Fork once the parent's extraction has landed: the copy takes
		// the parent's state as of the fork point, and a fork taken while
		// that extraction is still running rightly re-reads instead.
		e.waitCapsule(t, "PostgreSQL")
		b := a.Fork()
		say(t, a, "Decision: use Redis for the cache.", "Thanks.")
		say(t, b, "Decision: use Kafka for events.", "Thanks.")
		blk := e.blockAfterCompaction(t, b)
		if !strings.Contains(blk, "Kafka") {
			t.Fatalf("the branch's own decision is missing:\n%s", blk)
		}
		if strings.Contains(blk, "Redis") {
			t.Errorf("the other branch's post-fork decision leaked into this one:\n%s", blk)
		}
		if !strings.Contains(blk, "PostgreSQL") {
			t.Errorf("the pre-fork decision, part of this branch's history, is missing:\n%s", blk)
		}
		if n := strings.Count(blk, "PostgreSQL"); n > 1 {
			t.Errorf("the pre-fork decision appears %d times", n)
		}
		// With copy_on_fork the branch's extraction covers only what is
		// new on it; without, its whole history is read afresh.
		reread := false
		for _, r := range e.extractorCalls() {
			body := string(r.Body)
			if strings.Contains(body, "Kafka") && strings.Contains(body, "user] Decision: use PostgreSQL") {
				reread = true
			}
		}
		if reread == copyOnFork {
			t.Errorf("branch extraction re-read the pre-fork turns = %v, want %v", reread, !copyOnFork)
		}
		// The original branch keeps its own state.
		ablk := e.blockAfterCompaction(t, a)
		if !strings.Contains(ablk, "Redis") || !strings.Contains(ablk, "PostgreSQL") || strings.Contains(ablk, "Kafka") {
			t.Errorf("original branch state wrong:\n%s", ablk)
		}
	})
}

// A history that goes on from a point before the branch's last compaction
// (a rewind, or a session resumed from an older copy, under the same client
// session) is a fork at that point: it carries an earlier epoch's capsule
// block, whose token names the branch but not the epoch. Taken for the
// branch's next epoch, it was given the decisions the branch made after
// that point, and its own landed in the branch's capsule.
func TestFork_FromAnEarlierEpoch(t *testing.T) {
	forkModes(t, func(t *testing.T, e *env, _ bool) {
		a := e.agent("rewind-session")
		e.decideAcrossACompaction(t, a)
		b := a.Fork() // in the branch's first epoch
		compact(t, a)
		say(t, a, "Continue.", "Decision: use NATS for the event bus.")
		e.waitCapsule(t, "NATS")
		compact(t, a)
		say(t, a, "Continue.")

		say(t, b, "Decision: use Kafka for events.", "Thanks.")
		blk := e.blockAfterCompaction(t, b)
		// The rewind point lies past a compaction: the branch starts
		// from the parent's state as of that point either way
		// (PostgreSQL is only in the carried summary by then).
		wantBranch(t, blk, []string{"Kafka", "Redis", "PostgreSQL"}, "NATS")

		say(t, a, "Decision: use Grafana for dashboards.")
		e.waitCapsule(t, "Grafana")
		ablk := e.blockAfterCompaction(t, a)
		if !strings.Contains(ablk, "NATS") || !strings.Contains(ablk, "Grafana") || strings.Contains(ablk, "Kafka") {
			t.Errorf("the original branch's state is wrong after the rewind:\n%s", ablk)
		}
	})
}

// A fork after a compaction (a rewind of a message or two, the common
// case) holds what came before the compaction only as the summary it
// carries, which is not re-read: without copy_on_fork its decisions were
// lost. The fork starts from the parent's state as of the fork point
// whenever that point lies past a compaction.
func TestFork_AfterACompactionKeepsWhatCameBefore(t *testing.T) {
	e := newEnv(t, envOptions{yaml: continuityYAML})
	a := e.agent("rewind-after-compaction")
	e.decideAcrossACompaction(t, a)
	b := a.Fork()
	say(t, a, "Decision: use NATS for the event bus.")
	e.waitCapsule(t, "NATS")
	say(t, b, "Decision: use Kafka for events.", "Thanks.")
	blk := e.blockAfterCompaction(t, b)
	wantBranch(t, blk, []string{"PostgreSQL", "Redis", "Kafka"}, "NATS")
}

// forkModes runs f once with the default fork policy and once with
// copy_on_fork, each on an environment of its own.
func forkModes(t *testing.T, f func(t *testing.T, e *env, copyOnFork bool)) {
	for _, tc := range []struct {
		name       string
		copyOnFork bool
	}{{"default", false}, {"copy_on_fork", true}} {
		t.Run(tc.name, func(t *testing.T) {
			yaml := continuityYAML
			if tc.copyOnFork {
				yaml += "  copy_on_fork: true\n"
			}
			f(t, newEnv(t, envOptions{yaml: yaml}), tc.copyOnFork)
		})
	}
}

// blockAfterCompaction compacts a's history, says "Continue." and returns
// the block the model was shown on that turn.
func (e *env) blockAfterCompaction(t *testing.T, a *demo.Agent) string {
	t.Helper()
	compact(t, a)
	say(t, a, "Continue.")
	return block(e.lastPrimary())
}

// wantBranch checks a branch's block: it holds each of has, and not other,
// what the other branch decided after the fork point.
func wantBranch(t *testing.T, blk string, has []string, other string) {
	t.Helper()
	for _, want := range has {
		if !strings.Contains(blk, want) {
			t.Errorf("the branch's block lacks %s:\n%s", want, blk)
		}
	}
	if strings.Contains(blk, other) {
		t.Errorf("%s, decided on the other branch after the fork point, leaked into this one:\n%s", other, blk)
	}
}

// decideAcrossACompaction has a decide PostgreSQL, compact, and decide
// Redis after the compaction, each extraction landed.
func (e *env) decideAcrossACompaction(t *testing.T, a *demo.Agent) {
	t.Helper()
	say(t, a, "Decision: use PostgreSQL, not MongoDB.", "Thanks.")
	e.waitCapsule(t, "PostgreSQL")
	compact(t, a)
	say(t, a, "Continue.", "Decision: use Redis for the cache.")
	e.waitCapsule(t, "Redis")
}
