package extract

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/capsule"
	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/metrics"
	"github.com/tether-dev/tether/internal/store/memstore"
)

// The built-in extractor answers a delta without marked statements with an
// empty list its own schema accepts, not {"ops":null}.
func TestMarkersCallerEmptyResultIsSchemaValid(t *testing.T) {
	in := prepare(nil, []dialect.Message{user("how are you today?")}, []int{0}, 4000)
	raw, _, err := MarkersCaller{}.Extract(t.Context(), in, "")
	if err != nil {
		t.Fatal(err)
	}
	if string(raw) != `{"ops":[]}` {
		t.Errorf("result = %s, want {\"ops\":[]}", raw)
	}
	if _, err := Validate(raw, in); err != nil {
		t.Errorf("the empty result fails its own schema: %v", err)
	}
}

// markerJob is a job whose user turn holds one marked decision.
func markerJob(aLeg string, n int) Job {
	return job(aLeg, 0, user(fmt.Sprintf("Decision: use store number %d.", n)))
}

// Under a full queue no job is dropped: the ones that do not fit are owed in
// the outbox and run when workers have room (the dropped_full).
func TestPoolDefersInsteadOfDroppingWhenFull(t *testing.T) {
	st := memstore.New(memstore.Options{})
	reg := metrics.NewRegistry()
	a := &applied{}
	gate := make(chan struct{})
	p := NewPool(PoolOptions{Workers: 1, MaxPending: 2, Registerer: reg, Apply: a.fn, Outbox: st, PollInterval: 10 * time.Millisecond,
		Route: "test/model",
		Caller: ExtractFunc(func(ctx context.Context, in Input, prompt string) ([]byte, dialect.Usage, error) {
			<-gate
			return MarkersCaller{}.Extract(ctx, in, prompt)
		})})
	defer stop(t, p)
	const legs = 20
	for i := range legs {
		if err := p.Enqueue(markerJob(fmt.Sprintf("a%02d", i), i)); err != nil {
			t.Fatalf("Enqueue %d: %v (a job must be owed, not refused)", i, err)
		}
	}
	if got := metric(t, reg, "tether_extract_jobs_total", "outcome", OutcomeDeferred); got < legs-3 {
		t.Errorf("deferred = %v, want >= %d", got, legs-3)
	}
	if got := metric(t, reg, "tether_extract_jobs_total", "outcome", OutcomeDroppedFull); got != 0 {
		t.Errorf("dropped_full = %v, want 0", got)
	}
	close(gate)
	waitFor(t, func() bool { return len(a.get()) == legs })
	waitFor(t, func() bool { n, _, _ := st.OutboxStats(t.Context()); return n == 0 })
	seen := map[string]bool{}
	for _, c := range a.get() {
		seen[c.job.ALeg] = true
	}
	if len(seen) != legs {
		t.Errorf("applied on %d A-legs, want %d", len(seen), legs)
	}
}

// A failing extractor call leaves the work owed; it is retried with backoff
// and applied once the extractor answers again.
func TestPoolRetriesFailedJobs(t *testing.T) {
	st := memstore.New(memstore.Options{})
	reg := metrics.NewRegistry()
	a := &applied{}
	var calls atomic.Int32
	p := NewPool(PoolOptions{Workers: 1, Registerer: reg, Apply: a.fn, Outbox: st, PollInterval: 10 * time.Millisecond,
		RetryBase: 20 * time.Millisecond,
		Caller: ExtractFunc(func(ctx context.Context, in Input, prompt string) ([]byte, dialect.Usage, error) {
			if calls.Add(1) <= 2 {
				return nil, dialect.Usage{}, &StatusError{Status: 503}
			}
			return MarkersCaller{}.Extract(ctx, in, prompt)
		})})
	defer stop(t, p)
	if err := p.Enqueue(markerJob("a1", 1)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return len(a.get()) == 1 })
	if got := metric(t, reg, "tether_extract_jobs_total", "outcome", OutcomeRetried); got != 2 {
		t.Errorf("retried = %v, want 2", got)
	}
	waitFor(t, func() bool { n, _, _ := st.OutboxStats(t.Context()); return n == 0 })
}

// Work owed when a process dies (queued, deferred or running) is picked up
// by the next pool on the same store once its hold ends.
func TestPoolResumesOwedWorkAfterRestart(t *testing.T) {
	st := memstore.New(memstore.Options{})
	block := make(chan struct{})
	defer close(block)
	p1 := NewPool(PoolOptions{Workers: 1, MaxPending: 1, Apply: (&applied{}).fn, Outbox: st, Timeout: 50 * time.Millisecond,
		JobTTL: 50 * time.Millisecond, PollInterval: time.Hour,
		Caller: ExtractFunc(func(ctx context.Context, in Input, prompt string) ([]byte, dialect.Usage, error) {
			<-block
			return nil, dialect.Usage{}, errors.New("unreachable")
		})})
	for i := range 4 {
		if err := p1.Enqueue(markerJob(fmt.Sprintf("a%d", i), i)); err != nil {
			t.Fatal(err)
		}
	}
	// The process dies: nothing is completed or released.
	p1.kill()
	if n, _, _ := st.OutboxStats(t.Context()); n != 4 {
		t.Fatalf("owed after the crash: %d, want 4", n)
	}

	a := &applied{}
	p2 := NewPool(PoolOptions{Workers: 2, Apply: a.fn, Outbox: st, Timeout: 50 * time.Millisecond, PollInterval: 10 * time.Millisecond,
		Caller: MarkersCaller{}})
	defer stop(t, p2)
	waitFor(t, func() bool { return len(a.get()) == 4 })
	waitFor(t, func() bool { n, _, _ := st.OutboxStats(t.Context()); return n == 0 })
	for _, c := range a.get() {
		if len(c.ops) != 1 || c.ops[0].Op != capsule.OpAddDecision {
			t.Errorf("resumed job on %s applied %+v, want one decision", c.job.ALeg, c.ops)
		}
	}
}

// A deterministic extractor runs in the caller's goroutine: its ops are
// applied before Enqueue returns, and an empty delta applies nothing.
func TestPoolInlineAppliesBeforeReturning(t *testing.T) {
	a := &applied{}
	reg := metrics.NewRegistry()
	p := NewPool(PoolOptions{Inline: true, Caller: MarkersCaller{}, Apply: a.fn, Registerer: reg, Route: "builtin/markers"})
	defer stop(t, p)
	if err := p.Enqueue(markerJob("a1", 1)); err != nil {
		t.Fatal(err)
	}
	if got := a.get(); len(got) != 1 || len(got[0].ops) != 1 {
		t.Fatalf("applied %+v before Enqueue returned, want one op", got)
	}
	if err := p.Enqueue(job("a1", 1, user("thanks, looks good"))); err != nil {
		t.Fatal(err)
	}
	if got := len(a.get()); got != 1 {
		t.Errorf("an empty delta was applied (%d applies)", got)
	}
	if got := metric(t, reg, "tether_extract_jobs_total", "route", "builtin/markers", "outcome", OutcomeInline); got != 1 {
		t.Errorf("inline = %v, want 1", got)
	}
}

// A long delta (a history seen for the first time) does not hold the
// request: a deterministic extractor reads it on a worker, and a later
// delta of the same A-leg, short as it is, waits for it there rather than
// run ahead of it. A barrier joins both; nothing is read twice or lost.
func TestPoolInlineLongHistoryOnWorker(t *testing.T) {
	release := make(chan struct{})
	a := &applied{}
	var started atomic.Int32
	apply := func(ctx context.Context, job Job, ops []capsule.Op, d capsule.Delta) error {
		started.Add(1)
		<-release
		return a.fn(ctx, job, ops, d)
	}
	p := NewPool(PoolOptions{Inline: true, Caller: MarkersCaller{}, Apply: apply, Route: "builtin/markers"})
	defer stop(t, p)

	var long []dialect.Message
	for i := range inlineTurns + 4 {
		long = append(long, user(fmt.Sprintf("Decision: use store number %d.", i)), assistant("ok"))
	}
	// Enqueue returns while the apply of the long history is held: it runs
	// elsewhere.
	enqueue := func(j Job) {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- p.Enqueue(j) }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			close(release)
			t.Fatal("Enqueue held its caller until the extraction was applied")
		}
	}
	enqueue(job("a1", 0, long...))
	waitFor(t, func() bool { return started.Load() == 1 })
	enqueue(job("a1", len(long), user("Decision: use the last store.")))
	if n := started.Load(); n != 1 {
		t.Fatalf("%d applies started: the later delta ran ahead of the long one", n)
	}
	close(release)
	// Both jobs may be done before the barrier looks (it then has nothing
	// to wait for and says so); either way, nothing is left running.
	if _, err := p.Wait(t.Context(), "a1", 1<<62, 10*time.Second); err != nil {
		t.Fatalf("barrier: %v", err)
	}
	got := a.get()
	if len(got) != 2 {
		t.Fatalf("%d applies, want the long history's then the later delta's", len(got))
	}
	if n := len(got[0].ops); n != inlineTurns+4 {
		t.Errorf("the long history gave %d ops, want %d (every decision)", n, inlineTurns+4)
	}
	if len(got[1].ops) != 1 || got[1].job.FirstTurn != len(long) {
		t.Errorf("second apply %+v, want the later delta", got[1])
	}
	// Once its jobs are done, the A-leg's short deltas are read inline
	// again.
	enqueue(job("a1", len(long)+1, user("Decision: use the archive store.")))
	if n := len(a.get()); n != 3 {
		t.Errorf("%d applies when Enqueue returned: a short delta of an idle A-leg went to a worker", n)
	}
	// A short delta of an idle A-leg is still read before Enqueue returns.
	b := &applied{}
	q := NewPool(PoolOptions{Inline: true, Caller: MarkersCaller{}, Apply: b.fn, Route: "builtin/markers"})
	defer stop(t, q)
	if err := q.Enqueue(job("a2", 0, long[:2*inlineTurns]...)); err != nil {
		t.Fatal(err)
	}
	if len(b.get()) != 1 {
		t.Error("a delta of inlineTurns user messages was not applied before Enqueue returned")
	}
}

// Every pool on one registry reports under its own route.
func TestPoolMetricsForEveryRoute(t *testing.T) {
	reg := metrics.NewRegistry()
	var pools []*Pool
	for _, r := range []string{"a/one", "b/two", "c/three"} {
		p := NewPool(PoolOptions{Route: r, Registerer: reg, Caller: MarkersCaller{}, Apply: (&applied{}).fn, MaxPending: 7})
		pools = append(pools, p)
		defer stop(t, p)
	}
	for _, r := range []string{"a/one", "b/two", "c/three"} {
		if got := metric(t, reg, "tether_extract_queue_capacity", "route", r); got != 7 {
			t.Errorf("capacity{route=%s} = %v, want 7", r, got)
		}
	}
	if err := pools[2].Enqueue(markerJob("x", 1)); err != nil {
		t.Fatal(err)
	}
	if got := metric(t, reg, "tether_extract_jobs_total", "route", "c/three", "outcome", OutcomeQueued); got != 1 {
		t.Errorf("jobs{route=c/three,outcome=queued} = %v, want 1", got)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
