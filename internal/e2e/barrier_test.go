package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/capsule"
	"github.com/tether-dev/tether/internal/demo"
	"github.com/tether-dev/tether/internal/extract"
	"github.com/tether-dev/tether/internal/fakemodel"
	"github.com/tether-dev/tether/internal/store"
	"github.com/tether-dev/tether/internal/store/memstore"
)

// barrierExtractor wraps the scripted model: every extractor request is
// announced on started (non-blocking) and then answered by hold, which may
// delay or block it.
func barrierExtractor(started chan<- string, hold func(r *fakemodel.Request, rep fakemodel.Reply) fakemodel.Reply) fakemodel.Responder {
	base := demo.Model()
	return func(r *fakemodel.Request) fakemodel.Reply {
		rep := base(r)
		if r.Model() != demo.ExtractorModel {
			return rep
		}
		select {
		case started <- string(r.Body):
		default:
		}
		return hold(r, rep)
	}
}

// barrierStore signals on landed once a capsule revision containing want
// has been written, and runs hook (once, when set) right after the next
// capsule read.
type barrierStore struct {
	store.Store
	want   string
	landed chan struct{}
	once   sync.Once

	mu   sync.Mutex
	hook func()
}

func (s *barrierStore) GetCapsule(ctx context.Context, principal, aLeg string) (store.CapsuleRecord, error) {
	rec, err := s.Store.GetCapsule(ctx, principal, aLeg)
	s.mu.Lock()
	h := s.hook
	s.hook = nil
	s.mu.Unlock()
	if h != nil {
		h()
	}
	return rec, err
}

func (s *barrierStore) setHook(h func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hook = h
}

// barrierIdle waits (bounded) until no extraction job is running.
func barrierIdle(t *testing.T, e *env) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, f := range e.app.Registry.Gather() {
			if f.Name == "tether_extract_inflight" && f.Series[0].Value == 0 {
				return
			}
		}
		<-time.After(time.Millisecond)
	}
	t.Error("an extraction job is still running after 10s")
}

func (s *barrierStore) PutCapsule(ctx context.Context, rec store.CapsuleRecord, expect int64) error {
	err := s.Store.PutCapsule(ctx, rec, expect)
	if err == nil && bytes.Contains(rec.Data, []byte(s.want)) {
		s.once.Do(func() { close(s.landed) })
	}
	return err
}

// The compaction request joins the extraction still in flight for the turn
// just before it: the model summarises with the decision already in the
// continuity block.
func TestAC16_BarrierJoinsInFlightExtraction(t *testing.T) {
	t.Run("joined", func(t *testing.T) {
		started := make(chan string, 1)
		e := newEnv(t, envOptions{yaml: continuityYAML, responder: barrierExtractor(started,
			func(_ *fakemodel.Request, rep fakemodel.Reply) fakemodel.Reply {
				rep.Delay = 400 * time.Millisecond
				return rep
			})})
		a := e.agent("ac16-joined")
		say(t, a, "Decision: use PostgreSQL, not MongoDB, because we need transactions.")
		await(t, started, "the extraction starting") // it is in flight (and answers in 400ms)
		compact(t, a)
		b := block(e.lastPrimary())
		if !strings.Contains(b, "use PostgreSQL, not MongoDB") {
			t.Fatalf("the compaction request does not carry the decision being extracted:\n%s", b)
		}
		if !strings.Contains(a.Shown, "use PostgreSQL, not MongoDB") {
			t.Errorf("the summary the agent kept lacks the decision:\n%s", a.Shown)
		}
		if got := accountingMetric(t, e, `tether_barrier_waits_total{outcome="joined"}`); got < 1 {
			t.Errorf(`tether_barrier_waits_total{outcome="joined"} = %v, want ≥ 1`, got)
		}
	})

	t.Run("timeout", func(t *testing.T) {
		started := make(chan string, 1)
		release := make(chan struct{})
		var releaseOnce sync.Once
		free := func() { releaseOnce.Do(func() { close(release) }) }
		st := &barrierStore{Store: memstore.New(memstore.Options{}), want: "use PostgreSQL, not MongoDB", landed: make(chan struct{})}
		yaml := strings.Replace(continuityYAML, "barrier_timeout: 5s", "barrier_timeout: 200ms", 1)
		e := newEnv(t, envOptions{yaml: yaml, store: st, responder: barrierExtractor(started,
			func(_ *fakemodel.Request, rep fakemodel.Reply) fakemodel.Reply {
				// A slow extractor: it answers once the test lets it, at
				// the latest after 2s.
				select {
				case <-release:
				case <-time.After(2 * time.Second):
				}
				return rep
			})})
		t.Cleanup(free) // runs before the model shuts down
		a := e.agent("ac16-timeout")
		say(t, a, "Decision: use PostgreSQL, not MongoDB, because we need transactions.")
		await(t, started, "the extraction starting")
		before := accountingMetric(t, e, `tether_barrier_waits_total{outcome="timeout"}`)
		t0 := time.Now()
		compact(t, a)
		if d := time.Since(t0); d >= 1500*time.Millisecond {
			t.Errorf("the compaction took %v: it waited for the slow extractor instead of 200ms", d)
		}
		if strings.Contains(block(e.lastPrimary()), "use PostgreSQL, not MongoDB") {
			t.Fatalf("the decision reached the compaction although the extractor had not answered")
		}
		if got := accountingMetric(t, e, `tether_barrier_waits_total{outcome="timeout"}`); got != before+1 {
			t.Errorf(`tether_barrier_waits_total{outcome="timeout"} = %v, want %v`, got, before+1)
		}
		// The late result lands; the next turn carries it as proxy context.
		free()
		await(t, st.landed, "the late extraction result reaching the capsule")
		say(t, a, "Continue.")
		last := e.lastPrimary()
		if b := block(last); !strings.Contains(b, "use PostgreSQL, not MongoDB") {
			t.Fatalf("the turn after the late result does not carry the decision:\n%s", b)
		}
		if !strings.Contains(last, "context kept by the proxy") {
			t.Errorf("the late decision was not reinjected as proxy context")
		}
		if n := strings.Count(last, "<continuity-capsule"); n != 1 {
			t.Errorf("the model was shown %d blocks, want 1", n)
		}
	})

	// The extraction finishes after the compaction read the capsule but
	// before it reached the barrier: nothing is in flight any more, and the
	// compaction must still use the revision the job wrote.
	t.Run("finished before the barrier", func(t *testing.T) {
		started := make(chan string, 1)
		release := make(chan struct{})
		var releaseOnce sync.Once
		free := func() { releaseOnce.Do(func() { close(release) }) }
		st := &barrierStore{Store: memstore.New(memstore.Options{}), want: "use PostgreSQL, not MongoDB", landed: make(chan struct{})}
		e := newEnv(t, envOptions{yaml: continuityYAML, store: st, responder: barrierExtractor(started,
			func(_ *fakemodel.Request, rep fakemodel.Reply) fakemodel.Reply {
				select {
				case <-release:
				case <-time.After(10 * time.Second):
				}
				return rep
			})})
		t.Cleanup(free)
		a := e.agent("ac16-finished")
		say(t, a, "Decision: use PostgreSQL, not MongoDB, because we need transactions.")
		await(t, started, "the extraction starting")
		// The compaction's first capsule read lets the extractor answer and
		// returns once the job has written its result and stopped running.
		st.setHook(func() {
			free()
			select { // on the store's goroutine: report, do not hang
			case <-st.landed:
			case <-time.After(10 * time.Second):
				t.Error("the extraction result never reached the capsule")
				return
			}
			barrierIdle(t, e)
		})
		compact(t, a)
		if b := block(e.lastPrimary()); !strings.Contains(b, "use PostgreSQL, not MongoDB") {
			t.Fatalf("the compaction used the capsule read before the extraction finished:\n%s", b)
		}
		if !strings.Contains(a.Shown, "use PostgreSQL, not MongoDB") {
			t.Errorf("the summary the agent kept lacks the decision:\n%s", a.Shown)
		}
	})
}

// await receives from ch, failing the test when nothing arrives within 10s
// (a regression fails instead of hanging until the test binary's timeout).
func await[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// barrierSession runs a session whose capsule holds a Memcached decision
// and returns its agent, the A-leg's principal and the capsule.
func barrierSession(t *testing.T, e *env) (a *demo.Agent, principal string, c *capsule.Capsule) {
	t.Helper()
	a = e.agent("ac22-session")
	say(t, a, "Decision: use Memcached for the cache.")
	compact(t, a) // joins the extraction
	caps, err := e.store.ListCapsules(context.Background(), "")
	if err != nil || len(caps) != 1 {
		t.Fatalf("want one capsule, got %d (%v)", len(caps), err)
	}
	c, err = e.app.Engine.Capsule(context.Background(), caps[0].Principal, caps[0].ALeg)
	if err != nil || c == nil || len(c.Decisions) != 1 {
		t.Fatalf("capsule after the first decision: %+v (%v)", c, err)
	}
	return a, caps[0].Principal, c
}

// barrierActive returns the lines of the block's ACTIVE DECISIONS section.
func barrierActive(blk string) []string {
	var out []string
	in := false
	for _, l := range strings.Split(blk, "\n") {
		switch {
		case strings.HasPrefix(l, "ACTIVE DECISIONS"):
			in = true
		case in && strings.HasPrefix(l, "- "):
			out = append(out, l)
		case in:
			return out
		}
	}
	return out
}

var (
	barrierMemcached = regexp.MustCompile(`\[m(\d+) user\] Decision: use Memcached for the cache`)
	barrierRedis     = regexp.MustCompile(`\[m(\d+) user\] Actually, use Redis instead of Memcached for the cache`)
)

// Two extraction results for one A-leg complete out of order and the older
// one must not win.
//
// "replicas": two proxies share one store, as replicas behind a load
// balancer do. The turn stating Memcached goes to replica A, whose
// extraction is slow; the correction to Redis goes to replica B, whose
// extraction (of both turns) lands first. A's result then arrives and is
// rejected as stale; the model is shown Redis as the active choice.
//
// "apply path": within one proxy the pool runs one job per A-leg at a
// time, so there the late arrival is driven through the apply path the
// workers use, with the same outcome.
func TestAC22_OlderExtractionCannotOverwriteNewerDecision(t *testing.T) {
	t.Run("replicas", func(t *testing.T) {
		st := &barrierStore{Store: memstore.New(memstore.Options{}), want: "Redis", landed: make(chan struct{})}
		olderStarted := make(chan struct{}, 1)
		base := demo.Model()
		fake := fakemodel.Start(func(r *fakemodel.Request) fakemodel.Reply {
			if r.Model() != demo.ExtractorModel {
				return base(r)
			}
			rm := barrierRedis.FindSubmatch(r.Body)
			if rm == nil {
				// The older delta: answer only after the newer result landed.
				olderStarted <- struct{}{}
				select {
				case <-st.landed:
				case <-time.After(10 * time.Second):
				}
				return base(r)
			}
			var ops []map[string]any
			if mm := barrierMemcached.FindSubmatch(r.Body); mm != nil {
				ops = append(ops, map[string]any{"op": "add_decision", "statement": "use Memcached for the cache", "quote": "use Memcached for the cache", "turn": barrierAtoi(mm[1])})
			}
			ops = append(ops, map[string]any{"op": "supersede_decision", "id": "D1", "statement": "Use Redis for the cache (instead of Memcached)", "quote": "use Redis instead of Memcached for the cache", "turn": barrierAtoi(rm[1])})
			text, _ := json.Marshal(map[string]any{"ops": ops})
			return fakemodel.Reply{Text: string(text), InputTokens: 500, OutputTokens: 60}
		})
		t.Cleanup(fake.Close)
		cfg := "\nsecret: e2e-replica-secret-0123456789abcdef\n" + baseYAML + continuityYAML
		ra := accountingServe(t, fake, cfg, st)
		rb := accountingServe(t, fake, cfg, st)

		a := ra.agent("ac22-replicas")
		say(t, a, "Decision: use Memcached for the cache.")
		<-olderStarted // replica A's extraction is in flight and held
		a.BaseURL = rb.url
		say(t, a, "Actually, use Redis instead of Memcached for the cache.")
		select {
		case <-st.landed:
		case <-time.After(10 * time.Second):
			t.Fatal("replica B's extraction never landed")
		}
		a.BaseURL = ra.url
		compact(t, a) // replica A's barrier joins its own (older) job
		say(t, a, "Continue.")

		if got := accountingMetric(t, ra, "tether_capsule_stale_rejections_total"); got != 1 {
			t.Errorf("replica A rejected %v stale results, want 1", got)
		}
		b := block(ra.lastPrimary())
		active := barrierActive(b)
		if len(active) != 1 || !strings.Contains(active[0], "Use Redis") {
			t.Errorf("active decisions %q, want only Redis:\n%s", active, b)
		}
		if !strings.Contains(b, "use Memcached for the cache") || !strings.Contains(b, "superseded") {
			t.Errorf("Memcached is not kept as superseded:\n%s", b)
		}
		if n := strings.Count(b, "use Memcached for the cache"); n != 1 {
			t.Errorf("Memcached appears %d times in the block, want once (superseded)", n)
		}
	})

	t.Run("apply path", func(t *testing.T) {
		e := newEnv(t, envOptions{yaml: continuityYAML})
		a, principal, c := barrierSession(t, e)
		mem := c.Decisions[0]
		wm := c.Watermark.Turn
		ctx := context.Background()

		// Older job: transcript turns wm+1..wm+2, user turn wm+1 re-states Memcached.
		older := extract.Job{Principal: principal, Session: c.Session, ALeg: c.ALeg, Ordinal: int64(wm + 2), FirstTurn: wm + 1, Prev: c}
		olderOps := []capsule.Op{{Op: capsule.OpAddDecision, Statement: "use Memcached for the session store", Turn: wm + 1}}
		olderDelta := capsule.Delta{FromTurn: wm + 1, ToTurn: wm + 2, UserTurns: []int{wm + 1}}
		// Newer job: turns wm+1..wm+4, user turn wm+3 switches to Redis.
		newer := extract.Job{Principal: principal, Session: c.Session, ALeg: c.ALeg, Ordinal: int64(wm + 4), FirstTurn: wm + 1, Prev: c}
		newerOps := []capsule.Op{{Op: capsule.OpSupersedeDecision, ID: mem.ID, Statement: "Use Redis for the cache (instead of Memcached)", Turn: wm + 3}}
		newerDelta := capsule.Delta{FromTurn: wm + 1, ToTurn: wm + 4, UserTurns: []int{wm + 1, wm + 3}}

		staleBefore := accountingMetric(t, e, "tether_capsule_stale_rejections_total")
		if err := e.app.Engine.ApplyOps(ctx, newer, newerOps, newerDelta); err != nil {
			t.Fatalf("newer result: %v", err)
		}
		err := e.app.Engine.ApplyOps(ctx, older, olderOps, olderDelta)
		if !errors.Is(err, capsule.ErrStale) {
			t.Fatalf("older result applied after the newer one: err = %v, want ErrStale", err)
		}
		if got := accountingMetric(t, e, "tether_capsule_stale_rejections_total"); got != staleBefore+1 {
			t.Errorf("tether_capsule_stale_rejections_total = %v, want %v", got, staleBefore+1)
		}

		final, err := e.app.Engine.Capsule(ctx, principal, c.ALeg)
		if err != nil {
			t.Fatal(err)
		}
		var active []string
		for _, d := range final.Decisions {
			switch {
			case d.Status == capsule.StatusActive:
				active = append(active, d.Statement)
			case d.ID == mem.ID && d.Status != capsule.StatusSuperseded:
				t.Errorf("Memcached decision is %q, want superseded", d.Status)
			}
		}
		if len(active) != 1 || !strings.Contains(active[0], "Redis") {
			t.Errorf("active decisions %q, want only the Redis one", active)
		}

		// What the model is shown after the next compaction agrees.
		say(t, a, "Continue.")
		compact(t, a)
		say(t, a, "Continue.")
		b := block(e.lastPrimary())
		if !strings.Contains(b, "- D2: Use Redis for the cache") || strings.Contains(b, "use Memcached for the session store") {
			t.Errorf("the model is not shown Redis as the active choice:\n%s", b)
		}
	})
}

func barrierAtoi(b []byte) int {
	n, _ := strconv.Atoi(string(b))
	return n
}
