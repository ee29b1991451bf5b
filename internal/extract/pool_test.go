package extract

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tether-dev/tether/internal/capsule"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/fakemodel"
	"github.com/tether-dev/tether/internal/flow"
	"github.com/tether-dev/tether/internal/ledger"
	"github.com/tether-dev/tether/internal/metrics"
)

// ExtractFunc is a Caller made of a function.
type ExtractFunc func(ctx context.Context, in Input, prompt string) ([]byte, dialect.Usage, error)

func (f ExtractFunc) Extract(ctx context.Context, in Input, prompt string) ([]byte, dialect.Usage, error) {
	return f(ctx, in, prompt)
}

// AdmissionFunc is an Admission made of a function.
type AdmissionFunc func(ctx context.Context, c ledger.Charge) (func(ledger.Result), error)

func (f AdmissionFunc) Reserve(ctx context.Context, c ledger.Charge) (func(ledger.Result), error) {
	return f(ctx, c)
}

// applied records Apply calls.
type applied struct {
	mu    sync.Mutex
	calls []appliedCall
}

type appliedCall struct {
	job   Job
	ops   []capsule.Op
	delta capsule.Delta
}

func (a *applied) fn(_ context.Context, job Job, ops []capsule.Op, d capsule.Delta) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls = append(a.calls, appliedCall{job, ops, d})
	return nil
}

func (a *applied) get() []appliedCall {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]appliedCall(nil), a.calls...)
}

func job(aLeg string, first int, msgs ...dialect.Message) Job {
	return Job{Principal: "alice", Account: "acme", Session: "s1", ALeg: aLeg, ParentRequestID: "req1",
		Ordinal: int64(first + len(msgs)), Messages: msgs, FirstTurn: first}
}

// metric returns the value of a counter or gauge with the given labels,
// or a histogram's count.
func metric(t *testing.T, reg *metrics.Registry, name string, labels ...string) float64 {
	t.Helper()
	for _, f := range reg.Gather() {
		if f.Name != name {
			continue
		}
	next:
		for _, s := range f.Series {
			for i := 0; i+1 < len(labels); i += 2 {
				if !slices.Contains(s.Labels, metrics.Label{Name: labels[i], Value: labels[i+1]}) {
					continue next
				}
			}
			if f.Type == metrics.TypeHistogram {
				return float64(s.Count)
			}
			return s.Value
		}
	}
	return 0
}

func stop(t *testing.T, p *Pool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.StopAndCancel(ctx); err != nil {
		t.Errorf("StopAndCancel: %v", err)
	}
}

// waitDone joins every job of aLeg.
func waitDone(t *testing.T, p *Pool, aLeg string) {
	t.Helper()
	if _, err := p.Wait(context.Background(), aLeg, 1<<62, 10*time.Second); err != nil {
		t.Fatalf("Wait: %v", err)
	}
}

func TestPoolCoalescesPerALeg(t *testing.T) {
	defer goleak.VerifyNone(t)
	release := make(chan struct{})
	started := make(chan Input, 10)
	var a applied
	reg := metrics.NewRegistry()
	p := NewPool(PoolOptions{Workers: 2, MaxPending: 4, Registerer: reg, Apply: a.fn,
		Caller: ExtractFunc(func(ctx context.Context, in Input, _ string) ([]byte, dialect.Usage, error) {
			started <- in
			<-release
			return []byte(`{"ops":[]}`), dialect.Usage{}, nil
		})})
	defer stop(t, p)

	if err := p.Enqueue(job("leg", 0, user("use postgres"))); err != nil {
		t.Fatal(err)
	}
	first := <-started // running now
	if first.Delta.ToTurn != 0 {
		t.Fatalf("first job delta = %+v", first.Delta)
	}
	// Three more deltas while the first runs: one queued job, merged.
	for i, msgs := range [][]dialect.Message{
		{user("never touch the API")},                     // turn 1
		{user("never touch the API"), user("use sqlite")}, // turns 1-2 (overlap)
		{user("actually use redis")},                      // turn 3
	} {
		start := 1
		if i == 2 {
			start = 3
		}
		if err := p.Enqueue(job("leg", start, msgs...)); err != nil {
			t.Fatal(err)
		}
	}
	if got := metric(t, reg, "tether_extract_queue_depth"); got != 1 {
		t.Errorf("queue depth = %v, want 1", got)
	}
	release <- struct{}{}
	second := <-started
	release <- struct{}{}
	waitDone(t, p, "leg")
	if second.Delta.FromTurn != 1 || second.Delta.ToTurn != 3 || len(second.Delta.UserTurns) != 3 {
		t.Errorf("merged delta = %+v, want turns 1-3 with 3 user turns", second.Delta)
	}
	if strings.Count(second.Text, "never touch the API") != 1 {
		t.Errorf("overlapping message duplicated:\n%s", second.Text)
	}
	calls := a.get()
	if len(calls) != 2 || calls[1].job.Ordinal != 4 {
		t.Errorf("apply calls = %d (ordinal of last %v), want 2 with ordinal 4", len(calls), calls)
	}
	if got := metric(t, reg, "tether_extract_jobs_total", "outcome", "coalesced"); got != 2 {
		t.Errorf("coalesced = %v, want 2", got)
	}
}

func TestPoolQueueFull(t *testing.T) {
	defer goleak.VerifyNone(t)
	release := make(chan struct{})
	started := make(chan struct{}, 10)
	reg := metrics.NewRegistry()
	p := NewPool(PoolOptions{Workers: 1, MaxPending: 2, Registerer: reg, Apply: (&applied{}).fn,
		Caller: ExtractFunc(func(ctx context.Context, in Input, _ string) ([]byte, dialect.Usage, error) {
			started <- struct{}{}
			select {
			case <-release:
			case <-ctx.Done():
			}
			return []byte(`{"ops":[]}`), dialect.Usage{}, nil
		})})
	defer stop(t, p)
	if err := p.Enqueue(job("a0", 0, user("use x"))); err != nil {
		t.Fatal(err)
	}
	<-started
	var full int
	for i := 1; i <= 5; i++ {
		err := p.Enqueue(job(fmt.Sprintf("a%d", i), 0, user("use x")))
		if errors.Is(err, ErrQueueFull) {
			full++
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if full != 3 {
		t.Errorf("ErrQueueFull %d times, want 3 (capacity 2)", full)
	}
	// A delta for an A-leg already queued is merged even when full.
	if err := p.Enqueue(job("a1", 1, user("use y"))); err != nil {
		t.Errorf("merge into a queued job refused: %v", err)
	}
	if got := metric(t, reg, "tether_extract_jobs_total", "outcome", "dropped_full"); got != 3 {
		t.Errorf("dropped_full = %v, want 3", got)
	}
	if got := metric(t, reg, "tether_extract_queue_capacity"); got != 2 {
		t.Errorf("capacity = %v", got)
	}
	close(release)
}

func TestPoolBarrier(t *testing.T) {
	defer goleak.VerifyNone(t)
	fake := fakemodel.Start(nil)
	defer fake.Close()
	release := make(chan struct{})
	fake.SetResponder(func(r *fakemodel.Request) fakemodel.Reply {
		if strings.Contains(string(r.Body), "HANG") {
			return fakemodel.Reply{Hang: true}
		}
		<-release
		return fakemodel.Reply{Text: `{"ops":[{"op":"add_decision","statement":"Use PostgreSQL","quote":"use PostgreSQL","turn":1}]}`}
	})
	var a applied
	reg := metrics.NewRegistry()
	p := NewPool(PoolOptions{Workers: 2, Timeout: 30 * time.Second, Registerer: reg, Apply: a.fn,
		Caller: NewOpenAICaller(config.Provider{BaseURL: fake.URL + "/v1"}, "m", 100, nil, testSecret)})
	defer stop(t, p)

	// Nothing in flight: returns at once.
	if waited, err := p.Wait(context.Background(), "leg", 100, time.Hour); waited || err != nil {
		t.Fatalf("Wait with nothing queued = %v, %v", waited, err)
	}
	if err := p.Enqueue(job("leg", 10, user("Let's use PostgreSQL"))); err != nil {
		t.Fatal(err)
	}
	// A job starting after the required ordinal is not waited for.
	if waited, err := p.Wait(context.Background(), "leg", 5, time.Hour); waited || err != nil {
		t.Errorf("Wait below the job = %v, %v", waited, err)
	}
	done := make(chan error, 1)
	go func() {
		waited, err := p.Wait(context.Background(), "leg", 11, 20*time.Second)
		if !waited {
			err = errors.New("did not wait")
		}
		done <- err
	}()
	// The job ends only once the waiter holds it: released earlier, it
	// could end before Wait looks, and Wait would rightly not wait.
	for deadline := time.Now().Add(10 * time.Second); p.waiting.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("Wait never found the running job")
		}
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("joined Wait: %v", err)
	}
	if n := len(a.get()); n != 1 {
		t.Fatalf("Apply calls after the barrier = %d, want 1 (barrier returned before the result was applied)", n)
	}
	if got := a.get()[0].ops[0].Turn; got != 10 {
		t.Errorf("op turn = %d, want ordinal 10", got)
	}

	// A hung call: the barrier gives up after its timeout.
	if err := p.Enqueue(job("hung", 0, user("HANG: use redis"))); err != nil {
		t.Fatal(err)
	}
	waited, err := p.Wait(context.Background(), "hung", 1, 50*time.Millisecond)
	if !waited || !errors.Is(err, ErrBarrierTimeout) {
		t.Errorf("Wait on a hung job = %v, %v; want true, ErrBarrierTimeout", waited, err)
	}
	if got := metric(t, reg, "tether_barrier_waits_total", "outcome", "timeout"); got != 1 {
		t.Errorf("barrier timeouts = %v", got)
	}
	if got := metric(t, reg, "tether_barrier_waits_total", "outcome", "joined"); got != 1 {
		t.Errorf("barrier joins = %v", got)
	}
	if got := metric(t, reg, "tether_barrier_waits_total", "outcome", "none"); got != 2 {
		t.Errorf("barrier none = %v", got)
	}
}

func TestPoolStopIsIdempotent(t *testing.T) {
	defer goleak.VerifyNone(t)
	var a applied
	var calls atomic.Int32
	p := NewPool(PoolOptions{Workers: 3, Apply: a.fn,
		Caller: ExtractFunc(func(ctx context.Context, in Input, _ string) ([]byte, dialect.Usage, error) {
			calls.Add(1)
			return []byte(`{"ops":[]}`), dialect.Usage{}, nil
		})})
	for i := range 10 {
		if err := p.Enqueue(job(fmt.Sprintf("l%d", i), 0, user("use x"))); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	if err := p.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 10 || len(a.get()) != 10 {
		t.Errorf("Stop did not drain: %d calls, %d applied", calls.Load(), len(a.get()))
	}
	if err := p.Stop(ctx); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if err := p.StopAndCancel(ctx); err != nil {
		t.Errorf("StopAndCancel after Stop: %v", err)
	}
	if err := p.Enqueue(job("late", 0, user("use x"))); !errors.Is(err, ErrStopped) {
		t.Errorf("Enqueue after Stop = %v, want ErrStopped", err)
	}
}

func TestPoolStopAndCancelCancelsRunningCalls(t *testing.T) {
	defer goleak.VerifyNone(t)
	fake := fakemodel.Start(fakemodel.Script(fakemodel.Reply{Hang: true}))
	defer fake.Close()
	var a applied
	reg := metrics.NewRegistry()
	p := NewPool(PoolOptions{Workers: 1, Timeout: time.Hour, Registerer: reg, Apply: a.fn,
		Caller: NewOpenAICaller(config.Provider{BaseURL: fake.URL + "/v1"}, "m", 100, nil, testSecret)})
	for i := range 3 {
		if err := p.Enqueue(job(fmt.Sprintf("l%d", i), 0, user("use x"))); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.StopAndCancel(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.StopAndCancel(ctx); err != nil {
		t.Errorf("second StopAndCancel: %v", err)
	}
	if err := p.Stop(ctx); err != nil {
		t.Errorf("Stop after StopAndCancel: %v", err)
	}
	if len(a.get()) != 0 {
		t.Errorf("cancelled jobs applied")
	}
	if got := metric(t, reg, "tether_extract_queue_depth"); got != 0 {
		t.Errorf("queue depth after cancel = %v", got)
	}
}

func TestAC15_ExtractorRunsBehindBoundedWorkerPool(t *testing.T) {
	defer goleak.VerifyNone(t)
	const workers, jobs = 3, 200
	var mu sync.Mutex
	cur, peak := 0, 0
	arrived := make(chan struct{}, jobs)
	release := make(chan struct{})
	fake := fakemodel.Start(func(*fakemodel.Request) fakemodel.Reply {
		mu.Lock()
		cur++
		peak = max(peak, cur)
		mu.Unlock()
		arrived <- struct{}{}
		<-release
		mu.Lock()
		cur--
		mu.Unlock()
		return fakemodel.Reply{Text: `{"ops":[]}`}
	})
	defer fake.Close()
	var a applied
	reg := metrics.NewRegistry()
	before := runtime.NumGoroutine()
	p := NewPool(PoolOptions{Workers: workers, MaxPending: jobs - workers, Timeout: time.Minute, Registerer: reg, Apply: a.fn,
		Caller: NewOpenAICaller(config.Provider{BaseURL: fake.URL + "/v1"}, "m", 100, nil, testSecret)})
	defer stop(t, p)
	enqueue := func(from, to int) {
		for i := from; i < to; i++ {
			if err := p.Enqueue(job(fmt.Sprintf("leg-%d", i), 0, user("let's use postgres"))); err != nil {
				t.Fatalf("enqueue %d: %v", i, err)
			}
		}
	}
	enqueue(0, workers)
	for range workers {
		<-arrived
	}
	enqueue(workers, jobs)
	// All workers busy, the rest queued: goroutines do not grow per job.
	if g := runtime.NumGoroutine() - before; g > workers*4+10 {
		t.Errorf("goroutines grew by %d for %d jobs on %d workers", g, jobs, workers)
	}
	if d := metric(t, reg, "tether_extract_queue_depth"); d != jobs-workers {
		t.Errorf("queue depth = %v, want %d", d, jobs-workers)
	}
	if err := p.Enqueue(job("one-too-many", 0, user("use x"))); !errors.Is(err, ErrQueueFull) {
		t.Errorf("enqueue beyond the bound = %v, want ErrQueueFull", err)
	}
	close(release)
	for i := range jobs {
		waitDone(t, p, fmt.Sprintf("leg-%d", i))
	}
	mu.Lock()
	defer mu.Unlock()
	if peak != workers {
		t.Errorf("peak concurrent calls at the provider = %d, want %d", peak, workers)
	}
	if n := len(fake.Requests()); n != jobs {
		t.Errorf("provider calls = %d, want %d", n, jobs)
	}
	if n := len(a.get()); n != jobs {
		t.Errorf("applied = %d, want %d", n, jobs)
	}
}

func TestAC09_LargeToolOutputsNotSentToExtractor(t *testing.T) {
	fake := fakemodel.Start(fakemodel.Script(fakemodel.Reply{Text: `{"ops":[]}`}))
	defer fake.Close()
	var a applied
	p := NewPool(PoolOptions{Workers: 1, Apply: a.fn,
		Caller: NewOpenAICaller(config.Provider{BaseURL: fake.URL + "/v1"}, "m", 100, nil, testSecret)})
	defer stop(t, p)
	longCode := "```\n" + strings.Repeat("FILEDUMP line\n", 200) + "```"
	err := p.Enqueue(job("leg", 0,
		user("We decided: use PostgreSQL, not MongoDB. Deploy key: "+fakeKey),
		toolCall("Bash", `{"command":"go test ./... 2>&1"}`),
		toolResult(bigToolOutput),
		dialect.Message{Role: "user", Type: "message", Text: "see the chart", HasImage: true},
		assistant("Here is the file:\n"+longCode),
	))
	if err != nil {
		t.Fatal(err)
	}
	waitDone(t, p, "leg")
	reqs := fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("extractor requests = %d, want 1", len(reqs))
	}
	body := string(reqs[0].Body)
	for _, banned := range []string{"BIGLOG-MARKER", "coverage: 81.2%", "FILEDUMP", fakeKey, "Zx9Qw8Er7Ty6"} {
		if strings.Contains(body, banned) {
			t.Errorf("extractor received %q", banned)
		}
	}
	if len(body) > 12000 {
		t.Errorf("extractor request is %d bytes for a delta with 50 KB of tool output", len(body))
	}
	for _, want := range []string{"use PostgreSQL, not MongoDB", "[tool output omitted: ", "[image omitted]", "[code block omitted: 200 lines]"} {
		if !strings.Contains(body, want) {
			t.Errorf("extractor request lacks %q", want)
		}
	}
}

func TestPoolFaults(t *testing.T) {
	good := `{"ops":[{"op":"add_decision","statement":"Use PostgreSQL","quote":"use PostgreSQL","turn":1}]}`
	reset := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.(*net.TCPConn).SetLinger(0)
			conn.Close()
		}
	}))
	defer reset.Close()
	drip := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
		bw := bufio.NewWriter(w)
		bw.WriteString(`{"id":"x","object":"chat.completion","choices":[`)
		bw.Flush()
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer drip.Close()

	tests := []struct {
		name    string
		reply   *fakemodel.Reply
		baseURL string
		admit   Admission
		outcome string
		calls   int // requests expected at the provider
	}{
		{"timeout", &fakemodel.Reply{Text: good, Delay: time.Minute}, "", nil, OutcomeFailed, 1},
		{"hang", &fakemodel.Reply{Hang: true}, "", nil, OutcomeFailed, 1},
		{"http 400", &fakemodel.Reply{Status: 400}, "", nil, OutcomeFailed, 1},
		{"http 429 not retried", &fakemodel.Reply{Status: 429}, "", nil, OutcomeFailed, 1},
		{"http 500 not retried", &fakemodel.Reply{Status: 500}, "", nil, OutcomeFailed, 1},
		{"malformed json body", &fakemodel.Reply{RawBody: `{"choices":[{"message":`}, "", nil, OutcomeFailed, 1},
		{"connection reset", nil, reset.URL, nil, OutcomeFailed, 0},
		{"slow drip", nil, drip.URL, nil, OutcomeFailed, 0},
		{"non-json output", &fakemodel.Reply{Text: "Sure! I recorded: use PostgreSQL"}, "", nil, OutcomeInvalid, 1},
		{"schema-invalid output", &fakemodel.Reply{Text: `{"ops":[{"op":"add_decision","turn":1}]}`}, "", nil, OutcomeInvalid, 1},
		{"rewritten capsule", &fakemodel.Reply{Text: `{"decisions":[{"id":"D1","statement":"x"}]}`}, "", nil, OutcomeInvalid, 1},
		{"oversize output", &fakemodel.Reply{Text: `{"ops":[],"pad":"` + strings.Repeat("x", 70<<10) + `"}`}, "", nil, OutcomeInvalid, 1},
		{"cites a message it was not given", &fakemodel.Reply{Text: `{"ops":[{"op":"add_decision","statement":"x","turn":9}]}`}, "", nil, OutcomeInvalid, 1},
		{"cites the assistant for a decision", &fakemodel.Reply{Text: `{"ops":[{"op":"add_decision","statement":"x","turn":2}]}`}, "", nil, OutcomeInvalid, 1},
		{"budget rejection", &fakemodel.Reply{Text: good}, "", AdmissionFunc(func(context.Context, ledger.Charge) (func(ledger.Result), error) {
			return nil, fmt.Errorf("principal alice: %w", flow.ErrBudgetExceeded)
		}), OutcomeSkippedBudget, 0},
		{"admission unavailable", &fakemodel.Reply{Text: good}, "", AdmissionFunc(func(context.Context, ledger.Charge) (func(ledger.Result), error) {
			return nil, errors.New("ledger down")
		}), OutcomeFailed, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			fake := fakemodel.Start(nil)
			defer fake.Close()
			if tc.reply != nil {
				fake.SetResponder(fakemodel.Script(*tc.reply))
			}
			base := fake.URL
			if tc.baseURL != "" {
				base = tc.baseURL
			}
			var a applied
			reg := metrics.NewRegistry()
			p := NewPool(PoolOptions{Workers: 1, Timeout: 300 * time.Millisecond, Registerer: reg, Apply: a.fn, Admission: tc.admit,
				Route: "cheap/small", Caller: NewOpenAICaller(config.Provider{BaseURL: base + "/v1"}, "m", 100, nil, testSecret)})
			defer stop(t, p)
			if err := p.Enqueue(job("leg", 0, user("Let's use PostgreSQL"), assistant("Sure, PostgreSQL it is."))); err != nil {
				t.Fatal(err)
			}
			waitDone(t, p, "leg")
			if n := len(a.get()); n != 0 {
				t.Errorf("Apply called %d times", n)
			}
			if got := metric(t, reg, "tether_extract_jobs_total", "outcome", tc.outcome); got != 1 {
				t.Errorf("jobs{outcome=%s} = %v, want 1", tc.outcome, got)
			}
			if got := metric(t, reg, "tether_extract_jobs_total", "outcome", OutcomeCompleted); got != 0 {
				t.Errorf("completed = %v", got)
			}
			if tc.baseURL == "" {
				if n := len(fake.Requests()); n != tc.calls {
					t.Errorf("provider requests = %d, want %d", n, tc.calls)
				}
			}
		})
	}
}

func TestPoolAccountsToOriginatingPrincipal(t *testing.T) {
	fake := fakemodel.Start(fakemodel.Script(fakemodel.Reply{Text: `{"ops":[]}`, InputTokens: 800, OutputTokens: 20, CacheReadTokens: 100}))
	defer fake.Close()
	var (
		mu      sync.Mutex
		charges []ledger.Charge
		results []ledger.Result
	)
	admit := AdmissionFunc(func(_ context.Context, c ledger.Charge) (func(ledger.Result), error) {
		mu.Lock()
		charges = append(charges, c)
		mu.Unlock()
		return func(r ledger.Result) { mu.Lock(); results = append(results, r); mu.Unlock() }, nil
	})
	reg := metrics.NewRegistry()
	p := NewPool(PoolOptions{Workers: 1, Registerer: reg, Apply: (&applied{}).fn, Admission: admit, Route: "cheap/small",
		Provider: "cheap", Model: "small", Family: config.FamilyOpenAI, MaxOutputTokens: 500,
		Caller: NewOpenAICaller(config.Provider{BaseURL: fake.URL + "/v1"}, "small", 500, nil, testSecret)})
	defer stop(t, p)
	if err := p.Enqueue(job("leg", 0, user("use postgres"))); err != nil {
		t.Fatal(err)
	}
	waitDone(t, p, "leg")
	mu.Lock()
	defer mu.Unlock()
	if len(charges) != 1 || len(results) != 1 {
		t.Fatalf("charges %d, settlements %d; want 1 each", len(charges), len(results))
	}
	c := charges[0]
	if c.Principal != "alice" || c.Account != "acme" || c.Kind != ledger.KindExtraction || c.Route != "cheap/small" ||
		c.ALeg != "leg" || c.ParentRequestID != "req1" || c.EstimatedOutputTokens != 500 || c.EstimatedTokens <= 500 {
		t.Errorf("charge = %+v", c)
	}
	if r := results[0]; r.Usage.InputTokens != 800 || r.Usage.OutputTokens != 20 || r.Status != 200 {
		t.Errorf("settled = %+v", r)
	}
	if got := metric(t, reg, "tether_extract_tokens_total", "route", "cheap/small", "direction", "input"); got != 800 {
		t.Errorf("input tokens metric = %v", got)
	}
}

// growingSession returns the input of each of n successive extractions
// over a session that grows by an equal-size delta each time, with the
// capsule carrying every earlier result.
func growingSession(n int) []Input {
	prev := capsule.New("s", "leg")
	var out []Input
	turn := 0
	for i := range n {
		// One stretch between compactions: a few exchanges, each with a
		// proposal, tool work and a user answer.
		var delta []dialect.Message
		for k := range 4 {
			delta = append(delta,
				user(fmt.Sprintf("Let's use component %d-%d for the cache layer; never block the request path, and keep the handler API unchanged.", i, k)),
				assistant(proposalText),
				toolCall("Bash", `{"command":"go test ./..."}`),
				toolResult(bigToolOutput),
				toolCall("update_plan", `{"plan":[{"step":"write the cache","status":"in_progress"}]}`),
				user("yes, go ahead"),
				assistant("Done: the cache now sits behind the interface. "+strings.Repeat("Details of the change. ", 20)),
			)
		}
		in := Prepare(prev, delta, turn, 12000)
		out = append(out, in)
		next, err := capsule.Apply(prev, []capsule.Op{{Op: capsule.OpAddDecision, Statement: fmt.Sprintf("Use component %d for the cache layer", i), Turn: turn}},
			capsule.Delta{FromTurn: turn, ToTurn: turn + len(delta) - 1, UserTurns: []int{turn}}, fmt.Sprintf("tx%d", i))
		if err != nil {
			panic(err)
		}
		prev, _ = capsule.Bound(next, config.DefaultMaxCapsuleTokens)
		turn += len(delta)
	}
	return out
}

func TestInputCostProportionalToDelta(t *testing.T) {
	ins := growingSession(10)
	first, last := ins[0].Tokens, ins[9].Tokens
	if float64(last) > 1.2*float64(first) {
		t.Errorf("input tokens grew from %d (1st) to %d (10th) for equal deltas", first, last)
	}
}

func BenchmarkExtractInputGrowth(b *testing.B) {
	var ins []Input
	for b.Loop() {
		ins = growingSession(10)
	}
	b.ReportMetric(float64(ins[0].Tokens), "tokens/first-compaction")
	b.ReportMetric(float64(ins[9].Tokens), "tokens/10th-compaction")
	total := 0
	for _, in := range ins {
		total += in.Tokens
	}
	b.ReportMetric(float64(total)/10, "tokens/compaction")
}

func TestPoolDropsExpiredAndPurgedJobs(t *testing.T) {
	defer goleak.VerifyNone(t)
	var clock atomic.Int64
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	release := make(chan struct{})
	started := make(chan string, 10)
	var a applied
	reg := metrics.NewRegistry()
	p := NewPool(PoolOptions{Workers: 1, JobTTL: time.Minute, Now: now, Registerer: reg, Apply: a.fn,
		Caller: ExtractFunc(func(ctx context.Context, in Input, _ string) ([]byte, dialect.Usage, error) {
			started <- in.Text
			select {
			case <-release:
			case <-ctx.Done():
				return nil, dialect.Usage{}, ctx.Err()
			}
			return []byte(`{"ops":[]}`), dialect.Usage{}, nil
		})})
	defer stop(t, p)
	if err := p.Enqueue(job("busy", 0, user("use x"))); err != nil {
		t.Fatal(err)
	}
	<-started
	for _, l := range []string{"old", "purged"} {
		if err := p.Enqueue(job(l, 0, user("use y"))); err != nil {
			t.Fatal(err)
		}
	}
	p.Purge("purged")
	if waited, err := p.Wait(context.Background(), "purged", 1<<62, time.Second); waited || err != nil {
		t.Errorf("Wait on a purged A-leg = %v, %v; want nothing to wait for", waited, err)
	}
	clock.Add(int64(2 * time.Minute)) // "old" is now past its TTL
	close(release)
	waitDone(t, p, "busy")
	waitDone(t, p, "old")
	if n := len(a.get()); n != 1 {
		t.Errorf("applied %d jobs, want only the running one", n)
	}
	if got := metric(t, reg, "tether_extract_jobs_total", "outcome", OutcomeDropped); got != 2 {
		t.Errorf("dropped = %v, want 2 (purged, expired)", got)
	}
}

// An op the merge refuses is dropped and the rest of the result applied:
// before, one refused op cost every decision of the result, and each retry
// of the same result was refused the same way.
func TestPoolAppliesTheRestOfARefusedResult(t *testing.T) {
	defer goleak.VerifyNone(t)
	var mu sync.Mutex
	// React decided, then replaced by Vue.
	cur, err := capsule.Apply(capsule.New("s1", "leg"), []capsule.Op{{Op: capsule.OpAddDecision, Statement: "Use React", Turn: 0}}, capsule.Delta{ToTurn: 0, UserTurns: []int{0}}, "t1")
	if err == nil {
		cur, err = capsule.Apply(cur, []capsule.Op{{Op: capsule.OpSupersedeDecision, ID: "D1", Statement: "Use Vue", Turn: 2}}, capsule.Delta{FromTurn: 1, ToTurn: 2, UserTurns: []int{2}}, "t2")
	}
	if err != nil {
		t.Fatal(err)
	}
	prev := cur
	apply := func(_ context.Context, _ Job, ops []capsule.Op, d capsule.Delta) error {
		mu.Lock()
		defer mu.Unlock()
		next, err := capsule.Apply(cur, ops, d, "tx")
		if err == nil {
			cur = next
		}
		return err
	}
	reg := metrics.NewRegistry()
	p := NewPool(PoolOptions{Workers: 1, MaxPending: 4, Registerer: reg, Apply: apply, Route: "model/x",
		Caller: ExtractFunc(func(ctx context.Context, in Input, _ string) ([]byte, dialect.Usage, error) {
			// The first op replaces D1, which Vue already replaced: the
			// merge refuses it.
			return []byte(`{"ops":[{"op":"supersede_decision","id":"D1","statement":"Use React","turn":2,"quote":"go back to react"},` +
				`{"op":"add_constraint","text":"Never touch the API","turn":2,"quote":"never touch the API"}]}`), dialect.Usage{}, nil
		})})
	defer stop(t, p)
	j := job("leg", 3, dialect.Message{Role: "assistant", Text: "OK."}, user("go back to react, and never touch the API"))
	j.Prev = prev
	if err := p.Enqueue(j); err != nil {
		t.Fatal(err)
	}
	waitDone(t, p, "leg")
	mu.Lock()
	got := capsule.Render(cur)
	mu.Unlock()
	if !strings.Contains(got, "Never touch the API") {
		t.Errorf("want the valid op applied beside the refused one:\n%s", got)
	}
	if n := metric(t, reg, "tether_extract_ops_refused_total", "route", "model/x"); n != 1 {
		t.Errorf("tether_extract_ops_refused_total = %v, want 1", n)
	}
}
