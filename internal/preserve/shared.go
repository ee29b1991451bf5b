package preserve

import (
	"context"
	"time"

	"github.com/tether-dev/tether/internal/extract"
	"github.com/tether-dev/tether/internal/metrics"
)

// OutboxProbe tells whether extraction work on an A-leg is in flight on any
// replica sharing the store (backend.Outbox).
type OutboxProbe interface {
	OutboxBusy(ctx context.Context, principal, aLeg string, now time.Time) (bool, error)
}

// SharedOptions configures a SharedExtractor.
type SharedOptions struct {
	// Poll is the barrier's re-read interval (default 20 ms).
	Poll       time.Duration
	Registerer metrics.Registerer
	Now        func() time.Time
}

// SharedExtractor makes the preservation barrier hold across replicas that
// share one store. Every model extraction job is owed in the store's outbox
// from the moment it is offered until its result is applied, held by the
// replica that runs it (or leased by the one that took it over), so a
// barrier on another replica — the compaction request, or the first turn
// after it, served elsewhere — finds it there and polls, bounded by the
// barrier timeout, until it is done and its revision is in the store. Only
// barriers pay the read; ordinary turns pay nothing.
type SharedExtractor struct {
	Extractor // this replica's pool
	probe     OutboxProbe
	opt       SharedOptions
	remote    *metrics.CounterVec
}

// NewSharedExtractor wraps a replica's pool.
func NewSharedExtractor(local Extractor, probe OutboxProbe, opt SharedOptions) *SharedExtractor {
	if opt.Poll <= 0 {
		opt.Poll = 20 * time.Millisecond
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	// One extractor per route shares the family on one registry.
	return &SharedExtractor{Extractor: local, probe: probe, opt: opt,
		remote: metrics.Shared(opt.Registerer, metrics.NewCounterVec(metrics.CounterOpts{Name: "tether_barrier_remote_waits_total",
			Help: "Preservation barriers that found extraction in flight on another replica (or owed work taken over): joined, timeout; error: the store was unreadable and the barrier did not wait."},
			[]string{"outcome"}))}
}

// WaitAcross is the barrier across replicas: this replica's jobs first
// (Wait), then, within what is left of timeout, the principal's A-leg work
// in flight elsewhere, by polling the outbox.
func (s *SharedExtractor) WaitAcross(ctx context.Context, principal, aLeg string, ordinal int64, timeout time.Duration) (bool, error) {
	start := time.Now()
	waited, err := s.Extractor.Wait(ctx, aLeg, ordinal, timeout)
	if err != nil {
		return waited, err
	}
	busy, err := s.probe.OutboxBusy(ctx, principal, aLeg, s.opt.Now())
	if err != nil {
		s.remote.WithLabelValues("error").Inc()
		return waited, nil
	}
	if !busy {
		return waited, nil
	}
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(max(timeout-time.Since(start), 0))
		defer t.Stop()
		deadline = t.C
	}
	tick := time.NewTicker(s.opt.Poll)
	defer tick.Stop()
	for {
		select {
		case <-deadline:
			s.remote.WithLabelValues("timeout").Inc()
			return true, extract.ErrBarrierTimeout
		case <-ctx.Done():
			s.remote.WithLabelValues("timeout").Inc()
			return true, ctx.Err()
		case <-tick.C:
		}
		if busy, err := s.probe.OutboxBusy(ctx, principal, aLeg, s.opt.Now()); err == nil && !busy {
			s.remote.WithLabelValues("joined").Inc()
			return true, nil
		}
	}
}
