package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/demo"
	"github.com/tether-dev/tether/internal/fakemodel"
	"github.com/tether-dev/tether/internal/tokens"
)

// boundsLibraries name the decisions of the bounded-capsule session.
var boundsLibraries = []string{"zap", "chi", "pgx", "sqlc", "viper", "cobra", "testify", "goose"}

func boundsDecision(i int) string {
	return fmt.Sprintf("component %02d uses the %s library", i, boundsLibraries[i%len(boundsLibraries)])
}

// The capsule stays within max_capsule_tokens however many decisions the
// user makes, and what goes first is completed steps and tombstones, never
// an active decision while lower-priority items remain.
func TestAC23_BoundsHoldOverRepeatedCompaction(t *testing.T) {
	t.Run("capsule_budget", func(t *testing.T) {
		const budget = 300
		e := newEnv(t, envOptions{yaml: continuityYAML + "  max_capsule_tokens: 300\n"})
		resp, picked := decisionsAfterExtraction(demo.Model(), "Memcached for the cache")
		e.fake.SetResponder(resp)
		a := e.agent("ac23-budget")
		say(t, a, "Please make a plan and track it with your todo list.", "Yes, go ahead with that plan.",
			"Step 1 is done, continue.", "Decision: use Memcached for the cache.")
		<-picked
		say(t, a, "Actually, use Redis instead of Memcached for the cache.")
		const n = 40
		for i := 1; i <= n; i++ {
			say(t, a, "Decision: "+boundsDecision(i)+".")
		}
		compact(t, a)
		say(t, a, "Continue.")

		b := block(e.lastPrimary())
		if b == "" {
			t.Fatalf("no block after compaction")
		}
		if got := tokens.Estimate(b); got > budget {
			t.Errorf("the block the model got is %d tokens, over the %d budget:\n%s", got, budget, b)
		}
		if got := tokens.Estimate(block(a.Shown)); got > budget {
			t.Errorf("the block in the summary is %d tokens, over the %d budget", got, budget)
		}
		active := decisionsSection(b, "ACTIVE DECISIONS")
		if !decisionsAnyContains(active, boundsDecision(n)) {
			t.Errorf("the newest decision was dropped:\n%s", b)
		}
		if len(active) >= n {
			t.Fatalf("all %d decisions fit in %d tokens; the budget was never exercised:\n%s", len(active), budget, b)
		}
		// Active decisions were dropped, so everything of lower priority
		// must be gone already.
		if strings.Contains(b, "Memcached (superseded") || strings.Contains(b, "superseded by") {
			t.Errorf("a superseded decision (tombstone) was kept while active decisions were dropped:\n%s", b)
		}
		if strings.Contains(b, "[done]") {
			t.Errorf("a completed plan step was kept while active decisions were dropped:\n%s", b)
		}
		if !strings.Contains(b, "omitted to stay within budget") {
			t.Errorf("the block does not say that items were omitted:\n%s", b)
		}
		// Oldest first: what is kept is a contiguous run of the newest.
		for i := n; i > n-len(active)+1 && i > 0; i-- {
			if !decisionsAnyContains(active, boundsDecision(i)) {
				t.Errorf("decision %d was dropped before older ones:\n%s", i, b)
				break
			}
		}
		if decisionsMetric(t, e, "tether_capsule_items_dropped_total") == 0 {
			t.Errorf("drops are not counted on /metrics")
		}
	})

	t.Run("repeated_compaction_does_not_grow", func(t *testing.T) {
		e := newEnv(t, envOptions{yaml: continuityYAML})
		a := e.agent("ac23-repeat")
		say(t, a, "We're building an inventory service. Please make a plan and track it with your todo list.",
			"Yes, go ahead with that plan. Decision: use PostgreSQL, not MongoDB, because we need transactions.",
			"Constraint: never change the public REST API. Rejected: GORM — we write SQL by hand.")
		compact(t, a)
		say(t, a, "Continue, pass 00.")
		wantBlock := faultsNoRef(block(e.lastPrimary()))
		extractions := len(e.extractorCalls())
		var reqSize, blockSize []int
		for round := 1; round <= 10; round++ {
			compact(t, a)
			up := e.primary()
			reqSize = append(reqSize, len(up[len(up)-1].Body))
			blockSize = append(blockSize, len(block(a.Shown)))
			say(t, a, fmt.Sprintf("Continue, pass %02d.", round))
			b := block(e.lastPrimary())
			if n := strings.Count(e.lastPrimary(), "<continuity-capsule"); n != 1 {
				t.Errorf("round %d: the turn after compaction carries %d blocks, want 1", round, n)
			}
			if faultsNoRef(b) != wantBlock {
				t.Errorf("round %d: the block changed although nothing new was said:\n%s\nwant:\n%s", round, b, wantBlock)
			}
		}
		for i := 1; i < len(reqSize); i++ {
			if reqSize[i] > reqSize[0] {
				t.Errorf("compaction request grew: sizes %v", reqSize)
				break
			}
		}
		for i := 1; i < len(blockSize); i++ {
			if blockSize[i] > blockSize[0] {
				t.Errorf("block grew: sizes %v", blockSize)
				break
			}
		}
		if got := decisionsMetric(t, e, `tether_lineage_events_total{event="epoch"}`); got != 11 {
			t.Errorf("%v compactions were recognised on the next turn, want 11", got)
		}
		if got := len(e.extractorCalls()); got != extractions {
			t.Errorf("repeated compactions with nothing new made %d more extractor calls", got-extractions)
		}
	})

	t.Run("worker_queue_bound", func(t *testing.T) {
		release := make(chan struct{})
		base := demo.Model()
		started := make(chan struct{}, 64)
		e := newEnv(t, envOptions{
			yaml: `
compaction_continuity:
  enabled: true
  extractor:
    route: extractor/` + demo.ExtractorModel + `
    workers: 1
    max_pending_jobs: 1
`,
			responder: func(r *fakemodel.Request) fakemodel.Reply {
				if r.Model() == demo.ExtractorModel {
					started <- struct{}{}
					<-release // a slow extractor: busy until the test ends
				}
				return base(r)
			},
		})
		t.Cleanup(func() { close(release) }) // runs before the proxy closes
		const sessions = 12
		var maxDepth float64
		for i := range sessions {
			a := e.agent(fmt.Sprintf("ac23-burst-%02d", i))
			say(t, a, "Decision: "+boundsDecision(i)+".")
			if i == 0 {
				<-started // the only worker is busy from here on
			}
			maxDepth = max(maxDepth, decisionsMetric(t, e, "tether_extract_queue_depth"))
		}
		if maxDepth > 1 {
			t.Errorf("the extraction queue grew to %v jobs, past max_pending_jobs 1", maxDepth)
		}
		if got := decisionsMetric(t, e, "tether_extract_queue_capacity"); got != 1 {
			t.Errorf("queue capacity on /metrics is %v, want 1", got)
		}
		// The rest wait, owed in the store's outbox, not dropped (#13).
		deferred := decisionsMetric(t, e, `tether_extract_jobs_total{outcome="deferred"}`)
		if want := float64(sessions - 2); deferred != want {
			t.Errorf("%v jobs deferred with the queue full, want %v (1 running, 1 queued)", deferred, want)
		}
		if dropped := decisionsMetric(t, e, `tether_extract_jobs_total{outcome="dropped_full"}`); dropped != 0 {
			t.Errorf("%v jobs dropped with the queue full, want 0", dropped)
		}
		if owed, _, err := e.store.OutboxStats(context.Background()); err != nil || owed != sessions {
			t.Errorf("%d jobs owed in the outbox (%v), want %d (every session's until it is done)", owed, err, sessions)
		}
		if got := decisionsMetric(t, e, "tether_extract_inflight"); got != 1 {
			t.Errorf("%v extractions running on 1 worker", got)
		}
		if got := len(e.extractorCalls()); got != 1 {
			t.Errorf("%d extractor calls made on 1 busy worker, want 1", got)
		}
	})
}
