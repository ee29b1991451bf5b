package extract

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/tether-dev/tether/internal/capsule"
	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/store/backend"
	"github.com/tether-dev/tether/internal/tokens"
)

// Work owed on an A-leg is kept in the store's outbox (backend.Outbox) from
// the moment it is offered until its ops are applied or it is provably
// empty, so a full queue, a failed call or a crash never loses it:
//
//   - a job that fits the queue is written with a hold (NotBefore =
//     now + hold) and run from memory; completing it deletes the entry;
//   - a job that does not fit is written due at once, and the pool's
//     drainer claims it (under a lease) when workers have room;
//   - a failed job is released with exponential backoff and retried;
//   - after a crash, held entries become due when their hold or lease ends
//     and any pool (or replica) on the store claims them.

// owedRef is one outbox entry a task stands for.
type owedRef struct {
	id       int64
	owner    string // "" for an entry this pool wrote and never claimed
	attempts int
}

// owedJob is the stored form of a Job: what the extractor needs, with
// secrets redacted (Prev is not kept: a job loads the current capsule).
type owedJob struct {
	Principal, Account, Session, ALeg, ParentRequestID string
	Ordinal                                            int64
	FirstTurn                                          int
	Messages                                           []dialect.Message
}

func encodeJob(job Job) ([]byte, error) {
	o := owedJob{Principal: job.Principal, Account: job.Account, Session: job.Session, ALeg: job.ALeg,
		ParentRequestID: job.ParentRequestID, Ordinal: job.Ordinal, FirstTurn: job.FirstTurn,
		Messages: make([]dialect.Message, len(job.Messages))}
	for i, m := range job.Messages {
		m.Text = Redact(m.Text)
		m.ToolCalls = nil // the extractor reads call names only through results
		rs := make([]dialect.ToolResult, len(m.ToolResults))
		for j, r := range m.ToolResults {
			r.Text = Redact(r.Text)
			rs[j] = r
		}
		m.ToolResults = rs
		o.Messages[i] = m
	}
	return json.Marshal(o)
}

func decodeJob(data []byte) (Job, error) {
	var o owedJob
	if err := json.Unmarshal(data, &o); err != nil {
		return Job{}, err
	}
	if o.ALeg == "" {
		return Job{}, errors.New("owed job without an A-leg")
	}
	return Job{Principal: o.Principal, Account: o.Account, Session: o.Session, ALeg: o.ALeg,
		ParentRequestID: o.ParentRequestID, Ordinal: o.Ordinal, FirstTurn: o.FirstTurn, Messages: o.Messages}, nil
}

func newOwner() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "x_" + hex.EncodeToString(b[:])
}

// hold is how long an entry run from memory stays invisible to claims, and
// the lease of a claimed one: longer than a job may wait and run.
func (p *Pool) hold() time.Duration { return p.opt.JobTTL + 2*p.opt.Timeout }

// storeCtx bounds one outbox call.
func (p *Pool) storeCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), p.opt.Timeout)
}

// persist writes job to the outbox, due at once (due) or after the hold.
func (p *Pool) persist(job Job, due bool) (owedRef, error) {
	data, err := encodeJob(job)
	if err != nil {
		return owedRef{}, err
	}
	nb := p.opt.Now().Add(p.hold())
	if due {
		nb = p.opt.Now()
	}
	ctx, cancel := p.storeCtx()
	defer cancel()
	id, err := p.opt.Outbox.EnqueueOutbox(ctx, backend.OutboxEntry{Principal: job.Principal, ALeg: job.ALeg, Payload: data, NotBefore: nb})
	if err != nil {
		return owedRef{}, err
	}
	return owedRef{id: id}, nil
}

// settleOwed completes the entries of a finished task, or releases them
// for a retry with backoff; an entry that failed MaxAttempts times is given
// up (logged and counted).
func (p *Pool) settleOwed(t *task, retry bool) {
	if len(t.owed) == 0 {
		return
	}
	ctx, cancel := p.storeCtx()
	defer cancel()
	byOwner := map[string][]int64{}
	attempts := 0
	for _, o := range t.owed {
		byOwner[o.owner] = append(byOwner[o.owner], o.id)
		attempts = max(attempts, o.attempts+1)
	}
	log := p.opt.Logger.With(slog.String("a_leg", t.job.ALeg), slog.String("route", p.opt.Route), slog.Int("attempts", attempts))
	if retry && attempts >= p.opt.MaxAttempts {
		p.m.jobs.WithLabelValues(OutcomeAbandoned).Inc()
		log.Error("extraction given up after repeated failures")
		retry = false
	}
	for owner, ids := range byOwner {
		var err error
		if retry {
			backoff := min(p.opt.RetryBase<<min(attempts-1, 20), p.opt.RetryMax)
			err = p.opt.Outbox.ReleaseOutbox(ctx, owner, ids, p.opt.Now().Add(backoff))
		} else {
			err = p.opt.Outbox.CompleteOutbox(ctx, owner, ids)
		}
		if err != nil {
			// The entries stay owed and come back when their hold or
			// lease ends.
			log.Warn("outbox update failed; the work stays owed", slog.Bool("retry", retry))
		}
	}
	if retry {
		p.m.jobs.WithLabelValues(OutcomeRetried).Inc()
		log.Warn("extraction will be retried")
	}
}

// drain claims due outbox entries while workers have room, until Stop.
func (p *Pool) drain() {
	defer p.wg.Done()
	t := time.NewTicker(p.opt.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-p.base.Done():
			return
		case <-p.drainStop:
			return
		case <-t.C:
		case <-p.kick:
		}
		p.claim()
	}
}

// claim moves due entries into the queue, coalesced per A-leg.
func (p *Pool) claim() {
	p.mu.Lock()
	free := p.opt.MaxPending - p.queued
	p.mu.Unlock()
	ctx, cancel := p.storeCtx()
	defer cancel()
	if n, oldest, err := p.opt.Outbox.OutboxStats(ctx); err == nil {
		p.m.owed.Set(float64(n))
		age := 0.0
		if !oldest.IsZero() {
			age = max(p.opt.Now().Sub(oldest).Seconds(), 0)
		}
		p.m.owedAge.Set(age)
	}
	if free <= 0 {
		return
	}
	entries, err := p.opt.Outbox.ClaimOutbox(ctx, p.owner, p.opt.Now(), p.hold(), free)
	if err != nil {
		p.opt.Logger.Warn("outbox claim failed", slog.String("route", p.opt.Route))
		return
	}
	var bad []int64
	for _, e := range entries {
		job, err := decodeJob(e.Payload)
		if err != nil {
			bad = append(bad, e.ID)
			continue
		}
		p.m.jobs.WithLabelValues(OutcomeResumed).Inc()
		if err := p.enqueue(job, owedRef{id: e.ID, owner: p.owner, attempts: e.Attempts}, true); err != nil {
			// Stopping: the lease runs out and the entry is due again.
			return
		}
	}
	if len(bad) > 0 {
		p.opt.Logger.Error("unreadable outbox entries removed", slog.Int("entries", len(bad)))
		_ = p.opt.Outbox.CompleteOutbox(ctx, p.owner, bad)
	}
}

// runInline runs a deterministic extractor (no model call, no cost) in the
// caller's goroutine: its result is in the capsule before Enqueue returns.
// A delta with nothing to add is provably empty and changes nothing.
func (p *Pool) runInline(job Job) error {
	// The work is microseconds; the bound is for the store, which the rest
	// of the request path waits for without one, so it is generous: under
	// load a short one would fail the apply and lose the statement.
	ctx, cancel := context.WithTimeout(p.base, max(p.opt.Timeout, time.Minute))
	defer cancel()
	if p.opt.Load != nil {
		if cur, err := p.opt.Load(ctx, job); err == nil && cur != nil && (job.Prev == nil || cur.Revision >= job.Prev.Revision) {
			job.Prev = cur
		}
	}
	ords := make([]int, len(job.Messages))
	for i := range ords {
		ords[i] = job.FirstTurn + i
	}
	in := prepareFor(job.Prev, job.Messages, ords, max(p.opt.MaxInputTokens-tokens.Estimate(p.prompt), 1), p.builtin())
	if len(in.Delta.UserTurns) == 0 {
		p.m.jobs.WithLabelValues(OutcomeSkippedEmpty).Inc()
		return nil
	}
	raw, _, err := p.call(ctx, in)
	if err != nil {
		p.m.jobs.WithLabelValues(OutcomeFailed).Inc()
		return fmt.Errorf("inline extraction: %w", err)
	}
	ops, err := validateFrom(p.opt.Caller, raw, in)
	if err != nil {
		p.m.jobs.WithLabelValues(OutcomeInvalid).Inc()
		return fmt.Errorf("inline extraction: %w", err)
	}
	if len(ops) == 0 {
		p.m.jobs.WithLabelValues(OutcomeEmpty).Inc()
		return nil
	}
	switch err := p.opt.Apply(ctx, job, ops, in.Delta); {
	case errors.Is(err, capsule.ErrStale), errors.Is(err, capsule.ErrAlreadyApplied):
		p.m.jobs.WithLabelValues(OutcomeStale).Inc()
	case err != nil:
		p.m.jobs.WithLabelValues(OutcomeFailed).Inc()
		return fmt.Errorf("inline extraction: %w", err)
	default:
		p.m.jobs.WithLabelValues(OutcomeInline).Inc()
	}
	return nil
}
