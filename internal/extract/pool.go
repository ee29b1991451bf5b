package extract

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tether-dev/tether/internal/capsule"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/flow"
	"github.com/tether-dev/tether/internal/ledger"
	"github.com/tether-dev/tether/internal/metrics"
	"github.com/tether-dev/tether/internal/store/backend"
	"github.com/tether-dev/tether/internal/tokens"
	"github.com/tether-dev/tether/prompts"
)

// Pool errors.
var (
	ErrQueueFull      = errors.New("extraction queue full")
	ErrStopped        = errors.New("extraction pool stopped")
	ErrBarrierTimeout = errors.New("preservation barrier timed out waiting for extraction")
	// ErrRejectedResult: the extractor output was discarded (malformed,
	// schema-invalid, or citing messages it may not cite).
	ErrRejectedResult = errors.New("extractor result rejected")
)

// Admission reserves an auxiliary call against the originating principal's
// budgets; settle records what the call really used (ledger.Ledger).
type Admission interface {
	Reserve(ctx context.Context, c ledger.Charge) (settle func(ledger.Result), err error)
}

// Job is one extraction request for one A-leg.
type Job struct {
	Principal, Account, Session, ALeg, ParentRequestID string
	// Ordinal is the watermark this job brings the capsule to.
	Ordinal int64
	// Messages is the delta since the capsule's watermark; Messages[i] has
	// transcript ordinal FirstTurn+i.
	Messages  []dialect.Message
	FirstTurn int
	// Prev is the capsule the delta follows.
	Prev *capsule.Capsule
}

// ApplyFunc merges validated ops, derived from delta, into the A-leg's
// capsule with compare-and-swap; it returns an error wrapping
// capsule.ErrStale for a result older than the stored capsule.
type ApplyFunc func(ctx context.Context, job Job, ops []capsule.Op, delta capsule.Delta) error

// PoolOptions configures a Pool. Zero values take the documented defaults;
// those of the configurable settings are config.DefaultExtractor's.
type PoolOptions struct {
	Workers    int           // concurrent calls (extractor.workers)
	MaxPending int           // queued jobs, not counting running ones (extractor.max_pending_jobs)
	Timeout    time.Duration // one job's call, from its own root context (extractor.timeout)
	// MaxInputTokens bounds the prompt plus the prepared input
	// (extractor.max_input_tokens).
	MaxInputTokens int
	// MaxOutputTokens is the output cap the Caller was built with; it is
	// reserved with the admission (extractor.max_output_tokens).
	MaxOutputTokens int
	// JobTTL drops queued jobs older than this from memory; default
	// 10 × Timeout. With an Outbox the dropped job stays owed there.
	JobTTL time.Duration

	// Outbox, when set, keeps every job owed in the store until it is done
	// (see owed.go): a full queue defers instead of dropping, failures are
	// retried with backoff, and a restart picks the work up again.
	Outbox backend.Outbox
	// PollInterval is how often the outbox is checked for due work;
	// default 1s.
	PollInterval time.Duration
	// RetryBase and RetryMax bound the backoff of a failed job (defaults
	// 2s and 5m); MaxAttempts gives it up (default 8).
	RetryBase, RetryMax time.Duration
	MaxAttempts         int
	// Inline runs the Caller in Enqueue's goroutine instead of on a worker:
	// for a deterministic extractor (MarkersCaller) whose reading of a
	// turn's few new user messages costs microseconds, so its result is
	// applied before the request goes on. A delta of more than inlineTurns
	// user messages (a long history seen for the first time), or one for an
	// A-leg with a job queued or running, goes to a worker instead.
	Inline bool

	Caller Caller
	// Fallback, when set, extracts instead when Caller fails or returns an
	// invalid result (MarkersCaller: the user's explicit statements still
	// count when the model extractor is down or answers nonsense).
	Fallback Caller
	// Route is the configured "provider/model"; Provider, Model and Family
	// (config.FamilyOpenAI | config.FamilyAnthropic) describe it for the
	// ledger. Route is also the metrics route label.
	Route, Provider, Model, Family string
	Apply                          ApplyFunc
	// Load, when set, reads the A-leg's current capsule when a job starts,
	// so a job that waited behind another works on the newest revision
	// (with the ids the earlier job created) rather than the one current
	// when it was queued.
	Load func(ctx context.Context, job Job) (*capsule.Capsule, error)
	// Admission reserves and settles every call; nil means no accounting
	// (tests only).
	Admission  Admission
	Registerer metrics.Registerer
	Logger     *slog.Logger
	Now        func() time.Time
}

func (o PoolOptions) withDefaults() PoolOptions {
	d := config.DefaultExtractor()
	o.Workers = max(cmp.Or(o.Workers, d.Workers), 1)
	o.MaxPending = max(cmp.Or(o.MaxPending, d.MaxPendingJobs), 1)
	o.Timeout = cmp.Or(o.Timeout, d.Timeout)
	o.MaxInputTokens = cmp.Or(o.MaxInputTokens, d.MaxInputTokens)
	o.MaxOutputTokens = cmp.Or(o.MaxOutputTokens, d.MaxOutputTokens)
	o.JobTTL = cmp.Or(o.JobTTL, 10*o.Timeout)
	o.PollInterval = cmp.Or(o.PollInterval, time.Second)
	o.RetryBase = cmp.Or(o.RetryBase, 2*time.Second)
	o.RetryMax = cmp.Or(o.RetryMax, 5*time.Minute)
	o.MaxAttempts = cmp.Or(o.MaxAttempts, 8)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	o.Route = routeLabel(o.Route)
	return o
}

// routeLabel keeps a route safe as a metric label.
var unsafeLabel = regexp.MustCompile(`[^A-Za-z0-9._:/\-]`)

func routeLabel(r string) string {
	r = unsafeLabel.ReplaceAllString(strings.ToLower(r), "_")
	if len(r) > 80 {
		r = r[:80]
	}
	return cmp.Or(r, "none")
}

// Pool runs extraction jobs on a fixed number of workers, off the request
// path. It keeps at most one job per A-leg running and one queued; a job
// enqueued while another for the same A-leg is queued is merged into it.
type Pool struct {
	opt    PoolOptions
	m      *poolMetrics
	prompt string

	base   context.Context // root of every job's context
	cancel context.CancelFunc

	mu       sync.Mutex
	cond     *sync.Cond
	legs     map[string]*leg
	runnable []string // A-legs with a queued job and none running, FIFO
	queued   int
	closing  bool
	dead     bool // StopAndCancel: queued jobs dropped, running ones cancelled

	owner     string        // outbox lease owner
	kick      chan struct{} // wakes the drainer
	drainStop chan struct{}

	wg       sync.WaitGroup
	stopOnce sync.Once
	killOnce sync.Once

	waiting atomic.Int32 // callers of Wait holding jobs to wait for
}

// leg is the pool state of one A-leg.
type leg struct {
	running *task
	queued  *task
}

// task is a job (possibly several merged) with its completion signal.
type task struct {
	job      Job
	ords     []int // transcript ordinal of each job message
	enqueued time.Time
	done     chan struct{}
	cancel   context.CancelFunc // set while running
	owed     []owedRef          // outbox entries this task stands for
}

func (t *task) first() int {
	if len(t.ords) == 0 {
		return t.job.FirstTurn
	}
	return t.ords[0]
}

// NewPool starts opt.Workers workers.
func NewPool(opt PoolOptions) *Pool {
	opt = opt.withDefaults()
	p := &Pool{opt: opt, m: newMetrics(opt.Registerer, opt.Route), prompt: prompts.Extract(), legs: map[string]*leg{},
		owner: newOwner(), kick: make(chan struct{}, 1), drainStop: make(chan struct{})}
	p.cond = sync.NewCond(&p.mu)
	p.base, p.cancel = context.WithCancel(context.Background())
	p.m.capacity.Set(float64(opt.MaxPending))
	p.wg.Add(opt.Workers)
	for range opt.Workers {
		go p.worker()
	}
	if opt.Outbox != nil && !opt.Inline {
		p.wg.Add(1)
		go p.drain()
	}
	return p
}

// inlineTurns is the most user messages an Inline pool reads in the
// request's goroutine.
const inlineTurns = 8

// longDelta reports whether msgs hold more than inlineTurns messages the
// user wrote (userText: what the built-in extractor reads).
func longDelta(msgs []dialect.Message) bool {
	n := 0
	for _, m := range msgs {
		if _, ok := userText(m); ok {
			if n++; n > inlineTurns {
				return true
			}
		}
	}
	return false
}

// builtin reports whether the pool's extractor is the built-in one, which
// reads only the user's own messages.
func (p *Pool) builtin() bool {
	_, ok := p.opt.Caller.(MarkersCaller)
	return ok
}

// PromptVersion is the version of the prompt the pool sends.
func (p *Pool) PromptVersion() string { return prompts.ExtractVersion }

// ObserveGate counts one gate verdict.
func (p *Pool) ObserveGate(s Signal) {
	if s.Eligible {
		p.m.gate.WithLabelValues("eligible").Inc()
	} else {
		p.m.gate.WithLabelValues("skipped").Inc()
	}
}

// Enqueue queues job without blocking. A job for an A-leg that already has
// one queued is merged into it (messages appended, ordinal the maximum, the
// newer capsule kept). With an Outbox the job is first written there, so it
// stays owed until done: when MaxPending jobs are queued it is deferred
// (claimed later) rather than dropped. It returns ErrQueueFull only when the
// job could neither be queued nor written (the caller offers it again), and
// ErrStopped after Stop. An Inline pool runs the job before returning.
func (p *Pool) Enqueue(job Job) error {
	if job.ALeg == "" {
		return fmt.Errorf("enqueue extraction: empty A-leg")
	}
	p.opt.Logger.LogAttrs(context.Background(), slog.LevelDebug, "extraction offered", slog.String("parent_id", job.ParentRequestID),
		slog.String("a_leg", job.ALeg), slog.String("route", p.opt.Route), slog.Int("messages", len(job.Messages)),
		slog.Int64("ordinal", job.Ordinal), slog.Bool("inline", p.opt.Inline))
	if p.opt.Inline {
		p.mu.Lock()
		closing := p.closing
		_, busy := p.legs[job.ALeg]
		p.mu.Unlock()
		if closing {
			return ErrStopped
		}
		if !busy && !longDelta(job.Messages) {
			return p.runInline(job)
		}
		// A long delta (a history seen for the first time: about 60 µs of
		// reading a user turn, so tens of milliseconds for a long one), or
		// one that must follow a job of its A-leg still queued or running:
		// on a worker, in order, joined by a barrier as any job is. The
		// request goes on meanwhile.
		if err := p.enqueue(job, owedRef{}, false); !errors.Is(err, ErrQueueFull) {
			return err
		}
		return p.runInline(job)
	}
	if p.opt.Outbox == nil {
		return p.enqueue(job, owedRef{}, false)
	}
	p.mu.Lock()
	closing := p.closing
	full := p.queued >= p.opt.MaxPending && (p.legs[job.ALeg] == nil || p.legs[job.ALeg].queued == nil)
	p.mu.Unlock()
	if closing {
		return ErrStopped
	}
	ref, err := p.persist(job, full)
	switch {
	case err != nil && full:
		p.m.jobs.WithLabelValues(OutcomeDroppedFull).Inc()
		p.opt.Logger.Warn("extraction queue full and outbox unavailable; the delta will be offered again",
			slog.String("a_leg", job.ALeg), slog.String("route", p.opt.Route))
		return ErrQueueFull
	case err != nil:
		p.opt.Logger.Warn("outbox unavailable; extraction queued in memory only", slog.String("a_leg", job.ALeg), slog.String("route", p.opt.Route))
		return p.enqueue(job, owedRef{}, false)
	case full:
		p.m.jobs.WithLabelValues(OutcomeDeferred).Inc()
		p.opt.Logger.Info("extraction deferred: queue full (backpressure); owed in the outbox",
			slog.String("a_leg", job.ALeg), slog.String("route", p.opt.Route))
		return nil
	}
	if err := p.enqueue(job, ref, false); errors.Is(err, ErrQueueFull) {
		// The queue filled meanwhile: the entry becomes due after its hold.
		p.m.jobs.WithLabelValues(OutcomeDeferred).Inc()
		return nil
	} else if err != nil {
		return err
	}
	return nil
}

// enqueue puts job (standing for outbox entry ref, if any) in the memory
// queue; force ignores MaxPending (claimed outbox work).
func (p *Pool) enqueue(job Job, ref owedRef, force bool) error {
	ords := make([]int, len(job.Messages))
	for i := range ords {
		ords[i] = job.FirstTurn + i
	}
	var owed []owedRef
	if ref.id != 0 {
		owed = []owedRef{ref}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closing {
		return ErrStopped
	}
	l := p.legs[job.ALeg]
	if l == nil {
		l = &leg{}
		p.legs[job.ALeg] = l
	}
	if q := l.queued; q != nil {
		merge(q, job, ords)
		q.owed = append(q.owed, owed...)
		p.m.jobs.WithLabelValues(OutcomeCoalesced).Inc()
		return nil
	}
	if p.queued >= p.opt.MaxPending && !force {
		if l.running == nil {
			delete(p.legs, job.ALeg)
		}
		p.m.jobs.WithLabelValues(OutcomeDroppedFull).Inc()
		return ErrQueueFull
	}
	job.Messages = slices.Clone(job.Messages)
	l.queued = &task{job: job, ords: ords, enqueued: p.opt.Now(), done: make(chan struct{}), owed: owed}
	p.queued++
	p.m.depth.Set(float64(p.queued))
	p.m.jobs.WithLabelValues(OutcomeQueued).Inc()
	if l.running == nil {
		p.runnable = append(p.runnable, job.ALeg)
		p.cond.Signal()
	}
	return nil
}

// merge folds job into the queued task q: messages not already covered are
// appended in ordinal order.
func merge(q *task, job Job, ords []int) {
	last := -1
	if len(q.ords) > 0 {
		last = q.ords[len(q.ords)-1]
	}
	for i, m := range job.Messages {
		if ords[i] > last {
			q.job.Messages = append(q.job.Messages, m)
			q.ords = append(q.ords, ords[i])
		}
	}
	q.job.Ordinal = max(q.job.Ordinal, job.Ordinal)
	if job.Prev != nil && (q.job.Prev == nil || job.Prev.Revision >= q.job.Prev.Revision) {
		q.job.Prev = job.Prev
	}
	if job.ParentRequestID != "" {
		q.job.ParentRequestID = job.ParentRequestID
	}
}

// Wait is the preservation barrier. It returns (false, nil) at once when no
// job for aLeg whose delta starts at or before ordinal is queued or running.
// Otherwise it waits for those jobs to finish and returns (true, nil), or
// (true, ErrBarrierTimeout) after timeout (timeout <= 0: bounded by ctx
// only), or (true, ctx.Err()).
func (p *Pool) Wait(ctx context.Context, aLeg string, ordinal int64, timeout time.Duration) (bool, error) {
	var waits []chan struct{}
	p.mu.Lock()
	if l := p.legs[aLeg]; l != nil {
		for _, t := range []*task{l.running, l.queued} {
			if t != nil && int64(t.first()) <= ordinal {
				waits = append(waits, t.done)
			}
		}
	}
	p.mu.Unlock()
	if len(waits) == 0 {
		p.m.barrier.WithLabelValues("none").Inc()
		return false, nil
	}
	p.waiting.Add(1)
	defer p.waiting.Add(-1)
	start := time.Now()
	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timer = t.C
	}
	defer func() { p.m.barrierS.Observe(time.Since(start).Seconds()) }()
	for _, done := range waits {
		select {
		case <-done:
		case <-timer:
			p.m.barrier.WithLabelValues("timeout").Inc()
			return true, ErrBarrierTimeout
		case <-ctx.Done():
			p.m.barrier.WithLabelValues("timeout").Inc()
			return true, fmt.Errorf("preservation barrier: %w", ctx.Err())
		}
	}
	p.m.barrier.WithLabelValues("joined").Inc()
	return true, nil
}

// Purge drops the queued job of aLeg and cancels its running one, for an
// A-leg that ended or was deleted.
func (p *Pool) Purge(aLeg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.legs[aLeg]
	if l == nil {
		return
	}
	if l.queued != nil {
		p.dropQueued(aLeg, l)
	}
	if l.running != nil && l.running.cancel != nil {
		l.running.cancel()
	}
	if l.running == nil {
		delete(p.legs, aLeg)
	}
}

// dropQueued removes l's queued task; p.mu is held.
func (p *Pool) dropQueued(aLeg string, l *leg) {
	close(l.queued.done)
	l.queued = nil
	p.queued--
	p.m.depth.Set(float64(p.queued))
	p.m.jobs.WithLabelValues(OutcomeDropped).Inc()
	p.runnable = slices.DeleteFunc(p.runnable, func(a string) bool { return a == aLeg })
}

// Stop stops accepting jobs, lets the workers finish every queued and
// running job, and returns when they have; if ctx ends first it cancels
// what is left (StopAndCancel) and returns ctx's error. It is idempotent.
func (p *Pool) Stop(ctx context.Context) error {
	p.stopOnce.Do(func() {
		p.mu.Lock()
		p.closing = true
		p.cond.Broadcast()
		p.mu.Unlock()
		close(p.drainStop)
	})
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	select {
	case <-done:
		p.cancel()
		return nil
	case <-ctx.Done():
		p.kill()
		<-done
		return fmt.Errorf("stop extraction pool: %w", ctx.Err())
	}
}

// StopAndCancel stops accepting jobs, drops queued ones, cancels running
// calls and waits for the workers (or ctx). It is idempotent.
func (p *Pool) StopAndCancel(ctx context.Context) error {
	p.stopOnce.Do(func() {
		p.mu.Lock()
		p.closing = true
		p.mu.Unlock()
		close(p.drainStop)
	})
	p.kill()
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stop extraction pool: %w", ctx.Err())
	}
}

func (p *Pool) kill() {
	p.killOnce.Do(func() {
		p.mu.Lock()
		p.closing, p.dead = true, true
		for a, l := range p.legs {
			if l.queued != nil {
				p.dropQueued(a, l)
			}
		}
		p.cond.Broadcast()
		p.mu.Unlock()
		p.cancel()
	})
}

func (p *Pool) worker() {
	defer p.wg.Done()
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		switch {
		case p.dead:
			return
		case len(p.runnable) > 0:
			a := p.runnable[0]
			p.runnable = p.runnable[1:]
			l := p.legs[a]
			t := l.queued
			l.queued, l.running = nil, t
			p.queued--
			p.m.depth.Set(float64(p.queued))
			if p.opt.Now().Sub(t.enqueued) > p.opt.JobTTL {
				// Still owed in the outbox, if any: due again after its hold.
				p.m.jobs.WithLabelValues(OutcomeDropped).Inc()
			} else {
				ctx, cancel := context.WithTimeout(p.base, p.opt.Timeout)
				t.cancel = cancel
				p.mu.Unlock()
				switch v := p.run(ctx, t); {
				case v == verdictKeep:
				case p.opt.Outbox != nil:
					p.settleOwed(t, v == verdictRetry)
				}
				cancel()
				p.mu.Lock()
			}
			p.finish(a, l, t)
		case p.closing && p.queued == 0:
			return
		default:
			p.cond.Wait()
		}
	}
}

// finish ends t for A-leg a; p.mu is held.
func (p *Pool) finish(a string, l *leg, t *task) {
	l.running = nil
	close(t.done)
	select { // room for owed work
	case p.kick <- struct{}{}:
	default:
	}
	if l.queued != nil {
		p.runnable = append(p.runnable, a)
	} else {
		delete(p.legs, a)
	}
	p.cond.Broadcast()
}

// verdict is what becomes of a job's outbox entries.
type verdict int

const (
	verdictDone  verdict = iota // applied, provably empty, stale or refused by budget: complete
	verdictRetry                // failed: release with backoff
	verdictKeep                 // interrupted by shutdown: left owed as it is
)

// run executes one job. It never panics on a bad answer and changes the
// capsule only through Apply with a fully validated result.
func (p *Pool) run(ctx context.Context, t *task) verdict {
	job := t.job
	log := p.opt.Logger.With(slog.String("a_leg", job.ALeg), slog.String("parent_request", job.ParentRequestID),
		slog.Int64("ordinal", job.Ordinal), slog.String("route", p.opt.Route))
	p.m.jobs.WithLabelValues(OutcomeStarted).Inc()
	p.m.inflight.Inc()
	defer p.m.inflight.Dec()

	if p.opt.Load != nil {
		if cur, err := p.opt.Load(ctx, job); err == nil && cur != nil && (job.Prev == nil || cur.Revision >= job.Prev.Revision) {
			job.Prev = cur
		}
	}
	budget := p.opt.MaxInputTokens - tokens.Estimate(p.prompt)
	in := prepareFor(job.Prev, job.Messages, t.ords, max(budget, 1), p.builtin())
	p.m.inputToks.Observe(float64(in.Tokens))
	if len(in.Delta.UserTurns) == 0 {
		p.m.jobs.WithLabelValues(OutcomeSkippedEmpty).Inc()
		return verdictDone
	}

	settle := func(ledger.Result) {}
	if p.opt.Admission != nil {
		s, err := p.opt.Admission.Reserve(ctx, ledger.Charge{
			Principal: job.Principal, Account: job.Account, Session: job.Session, ALeg: job.ALeg,
			ParentRequestID: job.ParentRequestID, Kind: ledger.KindExtraction,
			Route: p.opt.Route, Provider: p.opt.Provider, Model: p.opt.Model, Family: p.opt.Family,
			EstimatedTokens:       int64(in.Tokens + tokens.Estimate(p.prompt) + p.opt.MaxOutputTokens),
			EstimatedOutputTokens: int64(p.opt.MaxOutputTokens),
		})
		if err != nil {
			if errors.Is(err, flow.ErrBudgetExceeded) {
				p.m.jobs.WithLabelValues(OutcomeSkippedBudget).Inc()
				log.Info("extraction skipped: budget")
				return verdictDone
			}
			p.m.jobs.WithLabelValues(OutcomeFailed).Inc()
			log.Warn("extraction admission failed")
			return verdictRetry
		}
		settle = s
	}

	start := time.Now()
	raw, usage, err := p.call(ctx, in)
	dur := time.Since(start)
	status := 200
	if err != nil {
		status = statusOf(ctx, err)
	}
	settle(ledger.Result{Usage: usage, Status: status, Err: err, Duration: dur})
	p.m.duration.WithLabelValues(p.opt.Route).Observe(dur.Seconds())
	p.m.tokens.WithLabelValues(p.opt.Route, "input").Add(float64(usage.InputTokens))
	p.m.tokens.WithLabelValues(p.opt.Route, "output").Add(float64(usage.OutputTokens))
	p.m.tokens.WithLabelValues(p.opt.Route, "cache_read").Add(float64(usage.CacheReadTokens))
	outcome := callOutcome(ctx, err)
	p.m.calls.WithLabelValues(p.opt.Route, outcome).Inc()
	if err != nil {
		p.m.jobs.WithLabelValues(OutcomeFailed).Inc()
		log.Warn("extraction call failed", slog.String("outcome", outcome), slog.Int("status", status),
			slog.Int64("duration_ms", dur.Milliseconds()))
		if p.base.Err() != nil { // shutdown: the work stays owed
			return verdictKeep
		}
		// A timed-out call falls back too; what the fallback applied
		// completes the job, else the model is asked again later.
		if p.fallback(job, in, log) {
			return verdictDone
		}
		return verdictRetry
	}

	ops, err := validateFrom(p.opt.Caller, raw, in)
	if err != nil {
		p.m.jobs.WithLabelValues(OutcomeInvalid).Inc()
		log.Warn("extraction result discarded", slog.Int("bytes", len(raw)))
		if p.fallback(job, in, log) {
			return verdictDone
		}
		return verdictRetry
	}
	// Only what the user's own words support is kept; the user's plainly
	// stated choices are kept beside the model's reading. The built-in
	// extractor is exempt: its ops are cut from the user's text by
	// construction and carry no quote.
	dropped := 0
	if !p.builtin() {
		ops, dropped = Ground(ops, in)
	}
	if dropped > 0 {
		p.m.ungrounded.Add(float64(dropped))
		log.Warn("extraction ops without a verbatim quote of the cited user turn dropped", slog.Int("dropped", dropped))
	}
	actx, acancel := context.WithTimeout(p.base, p.opt.Timeout)
	defer acancel()
	if marked := p.marked(actx, in); len(marked) > 0 {
		merged := Merge(ops, marked)
		if len(merged) > len(ops) {
			err := p.apply(actx, job, merged, in.Delta, log)
			if err == nil {
				p.m.jobs.WithLabelValues(OutcomeCompleted).Inc()
				log.Info("extraction applied", slog.Int("ops", len(merged)), slog.Int("input_tokens", in.Tokens),
					slog.Int64("duration_ms", dur.Milliseconds()), slog.String("prompt_version", prompts.ExtractVersion))
				return verdictDone
			}
			if !errors.Is(err, capsule.ErrInvalidOp) {
				ops = merged // stale or store error: handled below as for the model's ops
			}
		}
	}
	switch err := p.apply(actx, job, ops, in.Delta, log); {
	case errors.Is(err, capsule.ErrStale), errors.Is(err, capsule.ErrAlreadyApplied):
		p.m.jobs.WithLabelValues(OutcomeStale).Inc()
		log.Info("extraction result stale")
	case err != nil:
		p.m.jobs.WithLabelValues(OutcomeFailed).Inc()
		log.Warn("extraction result not applied")
		return verdictRetry
	default:
		p.m.jobs.WithLabelValues(OutcomeCompleted).Inc()
		log.Info("extraction applied", slog.Int("ops", len(ops)), slog.Int("input_tokens", in.Tokens),
			slog.Int64("duration_ms", dur.Milliseconds()), slog.String("prompt_version", prompts.ExtractVersion))
	}
	return verdictDone
}

// apply merges ops with opt.Apply. An op the merge refuses (re-deciding a
// retired decision without saying so, naming an unknown id) is dropped
// and the rest merged: one such op used to cost every other decision of
// the result, a history read for the first time all of them, and a retry
// of the same result fails the same way. Ops refer only to ids the capsule
// already holds, so dropping one changes what no other op names.
func (p *Pool) apply(ctx context.Context, job Job, ops []capsule.Op, d capsule.Delta, log *slog.Logger) error {
	refused := 0
	defer func() {
		if refused > 0 {
			p.m.refused.Add(float64(refused))
			log.Warn("extraction ops the merge refused dropped; the rest applied", slog.Int("dropped", refused))
		}
	}()
	for {
		err := p.opt.Apply(ctx, job, ops, d)
		var oe *capsule.OpError
		if !errors.As(err, &oe) || oe.Index < 0 || oe.Index >= len(ops) || len(ops) == 1 {
			return err
		}
		ops = slices.Delete(slices.Clone(ops), oe.Index, oe.Index+1)
		refused++
	}
}

// fallback extracts with opt.Fallback after the model extractor failed; it
// reports whether it applied anything.
func (p *Pool) fallback(job Job, in Input, log *slog.Logger) bool {
	if p.opt.Fallback == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(p.base, p.opt.Timeout)
	defer cancel()
	raw, _, err := p.opt.Fallback.Extract(ctx, in, p.prompt)
	if err != nil {
		return false
	}
	ops, err := validateFrom(p.opt.Fallback, raw, in)
	if err != nil || len(ops) == 0 {
		return false
	}
	if err := p.apply(ctx, job, ops, in.Delta, log); err != nil {
		return false
	}
	p.m.jobs.WithLabelValues(OutcomeFallback).Inc()
	log.Info("fallback extraction applied", slog.Int("ops", len(ops)))
	return true
}

// marked returns the built-in extractor's validated ops for in (nil when
// the pool has no built-in fallback).
func (p *Pool) marked(ctx context.Context, in Input) []capsule.Op {
	if _, ok := p.opt.Fallback.(MarkersCaller); !ok {
		return nil
	}
	raw, _, err := p.opt.Fallback.Extract(ctx, in, p.prompt)
	if err != nil {
		return nil
	}
	ops, err := validateFrom(p.opt.Fallback, raw, in)
	if err != nil {
		return nil
	}
	return ops
}

// call runs the Caller, turning a panic in it into an error.
func (p *Pool) call(ctx context.Context, in Input) (raw []byte, u dialect.Usage, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("extractor call panicked")
		}
	}()
	return p.opt.Caller.Extract(ctx, in, p.prompt)
}

func statusOf(ctx context.Context, err error) int {
	var se *StatusError
	switch {
	case errors.As(err, &se):
		return se.Status
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		return 504
	default:
		return 502
	}
}

func callOutcome(ctx context.Context, err error) string {
	var se *StatusError
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &se) && se.Status >= 500:
		return "http_5xx"
	case errors.As(err, &se):
		return "http_4xx"
	case errors.Is(err, ErrNoOutput):
		return "no_output"
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	default:
		return "error"
	}
}

// intentOps change user intent and must cite a user message.
var intentOps = map[string]bool{
	capsule.OpAddDecision: true, capsule.OpSupersedeDecision: true, capsule.OpRejectDecision: true,
	capsule.OpRejectAlternative: true, capsule.OpAddConstraint: true, capsule.OpSupersedeConstraint: true,
	capsule.OpRemoveConstraint: true, capsule.OpResolveQuestion: true,
}

// Validate parses an extractor result against schema/ops.v2.json and maps
// the local message numbers it cites (turn N for message mN) to transcript
// ordinals. The result is rejected whole (ErrRejectedResult) when it is
// malformed, cites a message not present in in.Text, or cites a non-user
// message for an op that changes user intent. Plans from the extractor are
// always sourced "conversation", so only a cited user turn can accept one.
func Validate(raw []byte, in Input) ([]capsule.Op, error) {
	ops, err := capsule.ParseOps(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRejectedResult, err)
	}
	out := make([]capsule.Op, len(ops))
	for i, op := range ops {
		id := "m" + strconv.Itoa(op.Turn)
		ord, ok := in.Turns[id]
		if !ok {
			return nil, fmt.Errorf("%w: op %d cites message %s outside the input", ErrRejectedResult, i, id)
		}
		if intentOps[op.Op] && !in.Users[id] {
			return nil, fmt.Errorf("%w: op %d (%s) cites non-user message %s", ErrRejectedResult, i, op.Op, id)
		}
		op.Turn = ord
		if op.Op == capsule.OpSetPlan {
			op.Source, op.Tool = capsule.SourceConversation, ""
			if op.Status == capsule.PlanAccepted && !in.Users[id] {
				op.Status = capsule.PlanProvisional
			}
		}
		out[i] = op
	}
	return out, nil
}
