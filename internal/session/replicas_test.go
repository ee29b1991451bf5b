package session

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// replicaRef is what a caller sees of a resolution: every exported field.
type replicaRef struct {
	Session, ALeg, ParentALeg, Hint string
	Epoch, Turn                     int
	Ordinal, ForkOrdinal            int64
	Event                           Event
	Side                            bool
}

func seen(r Ref) replicaRef {
	return replicaRef{Session: r.Session, ALeg: r.ALeg, ParentALeg: r.ParentALeg, Hint: r.Hint, Epoch: r.Epoch, Turn: r.Turn,
		Ordinal: r.Ordinal, ForkOrdinal: r.ForkOrdinal, Event: r.Event, Side: r.Side}
}

// playReplicas resolves and commits a capture's requests, request i on
// replica pick(i) of resolvers that share one store and one secret, and
// returns what each resolution said.
func playReplicas(t *testing.T, name string, replicas int, pick func(i int) int) []replicaRef {
	t.Helper()
	st := newMemStore()
	rs := make([]*Resolver, replicas)
	for i := range rs {
		rs[i] = newTestResolver(st)
	}
	ac := agentCase{name: name, outOfBand: name == "opencode" || name[:2] == "pi"}
	caps := loadCaptures(t, name)
	ctx := context.Background()
	var out []replicaRef
	for seq, i := 1, 0; seq <= 10; seq++ {
		c, ok := caps[seq]
		if !ok || c.Kind == "title" {
			continue
		}
		r := rs[pick(i)%replicas]
		i++
		v := c.view(t)
		ref, err := r.Resolve(ctx, "alice", v, ac.hints(c))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, seen(ref))
		if err := r.Commit(ctx, ref, v); err != nil {
			t.Fatal(err)
		}
		if c.Kind == "compaction" {
			if err := r.RecordSummary(ctx, ref, c.Reply.Text); err != nil {
				t.Fatal(err)
			}
		}
	}
	return out
}

// TestLineageAcrossReplicas: resolvers sharing a store and a secret, as
// replicas behind a load balancer do, resolve every agent's captured
// session exactly as one process does, whichever replica sees which request
// — round robin, or a replica that saw the start and comes back after the
// others served later turns and the compaction (its cache is stale then).
func TestLineageAcrossReplicas(t *testing.T) {
	names := []string{"claude", "codex", "codex-openai-provider", "opencode", "pi", "pi-anthropic-messages"}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			want := playReplicas(t, name, 1, func(int) int { return 0 })
			patterns := map[string]func(int) int{
				"round robin of 2": func(i int) int { return i },
				"round robin of 3": func(i int) int { return i },
				"first and last":   func(i int) int { return map[bool]int{true: 0, false: 1}[i == 0 || i >= 4] },
			}
			rng := rand.New(rand.NewPCG(17, 17))
			for k := range 24 {
				assign := make([]int, 16)
				for j := range assign {
					assign[j] = rng.IntN(3)
				}
				patterns[fmt.Sprintf("random %d %v", k, assign[:8])] = func(i int) int { return assign[i] }
			}
			for label, pick := range patterns {
				n := 3
				if label == "round robin of 2" || label == "first and last" {
					n = 2
				}
				if diff := cmp.Diff(want, playReplicas(t, name, n, pick)); diff != "" {
					t.Errorf("%s: resolutions differ from one process (-one +replicas):\n%s", label, diff)
				}
			}
		})
	}
}

// TestStaleHotHeadAcrossReplicas: replica B saw only a conversation's first
// turn; replica A served the next turns and relayed a compaction summary.
// The first turn after the compaction, whose history still opens with the
// first user message (the part B has cached as the A-leg's head), reaches
// B: B's cache says "extends the head", the store says the head moved on,
// and B must gather the epoch evidence (the summary) as one process would —
// a new epoch of the same A-leg, not a fork.
func TestStaleHotHeadAcrossReplicas(t *testing.T) {
	st := newMemStore()
	one, ra, rb := newTestResolver(newMemStore()), newTestResolver(st), newTestResolver(st)
	u1 := u("We are building an inventory service in Go, please start with the schema")
	first := []msg{u1}
	later := append(conversation("inventory", 2), u("and now the REST handlers for the stock endpoints"))
	later = append([]msg{u1, a("schema drafted")}, later...)
	summary := "Summary of the work so far: the inventory schema is drafted in PostgreSQL\nThe REST handlers for the stock endpoints are next on the list"
	post := []msg{u1, a(summary), u("continue with the handlers please, the stock endpoints first")}

	var want, got []Ref
	for _, run := range []struct {
		rs  [3]*Resolver // first turn, later turn and compaction, post-compaction turn
		out *[]Ref
	}{{[3]*Resolver{one, one, one}, &want}, {[3]*Resolver{rb, ra, rb}, &got}} {
		*run.out = append(*run.out, turn(t, run.rs[0], "alice", chatView(t, nil, first...), Hints{}))
		*run.out = append(*run.out, turn(t, run.rs[1], "alice", chatView(t, nil, later...), Hints{}))
		comp, err := run.rs[1].Resolve(context.Background(), "alice", chatView(t, nil, append(later, a("done"), u("Summarise the conversation so far"))...), Hints{Compaction: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := run.rs[1].RecordSummary(context.Background(), comp, summary); err != nil {
			t.Fatal(err)
		}
		*run.out = append(*run.out, turn(t, run.rs[2], "alice", chatView(t, nil, post...), Hints{PostCompaction: true}))
	}
	if want[2].Event != EventEpoch {
		t.Fatalf("one process: the post-compaction turn is %s, want %s (the scenario tests nothing)", want[2].Event, EventEpoch)
	}
	w, g := make([]replicaRef, len(want)), make([]replicaRef, len(got))
	for i := range want {
		w[i], g[i] = seen(want[i]), seen(got[i])
	}
	if diff := cmp.Diff(w, g); diff != "" {
		t.Errorf("replica B resolves differently from one process (-one +replicas):\n%s", diff)
	}
}
