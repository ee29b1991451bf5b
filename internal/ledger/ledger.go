package ledger

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/flow"
	"github.com/tether-dev/tether/internal/store/backend"
)

// Store is what the ledger needs from Tether's store.
type Store interface {
	// AppendLedger records entries; an entry whose ID is already recorded is
	// ignored (so a retried batch never double-counts).
	AppendLedger(ctx context.Context, entries []backend.LedgerEntry) error
	// Usage sums a principal's entries since a time, by day, kind and model.
	Usage(ctx context.Context, principal string, since time.Time) ([]backend.UsageRow, error)
	// LedgerEntries returns the newest entries first.
	LedgerEntries(ctx context.Context, principal string, limit int) ([]backend.LedgerEntry, error)
	// Reserve atomically adds amount to key if the result stays within limit.
	Reserve(ctx context.Context, key string, amount, limit int64) (bool, error)
	// Adjust adds delta to key.
	Adjust(ctx context.Context, key string, delta int64) error
}

// ErrInvalidCharge is returned by Reserve for a charge that names no
// principal or an unknown kind: there is no account to bill it to, and the
// ledger never falls back to a system account.
var ErrInvalidCharge = errors.New("invalid charge")

// Defaults.
const (
	DefaultFlushInterval = time.Second
	DefaultBufferSize    = 1024
	// DefaultOutputTokens is the output reserved for a call whose request
	// sets no output cap.
	DefaultOutputTokens = 4096
	// flushBatch pending entries wake the writer before its interval.
	flushBatch = 256
	// settleTimeout bounds the budget adjustments a settle makes; they run
	// on a context detached from the (possibly cancelled) request.
	settleTimeout = 10 * time.Second
)

// Options configures a Ledger. Store is required; the rest have defaults.
type Options struct {
	Store   Store
	Prices  []config.Price
	Budgets []config.Budget
	// Registerer receives the ledger's metrics; nil uses a private registry.
	Registerer prometheus.Registerer
	Logger     *slog.Logger
	Now        func() time.Time
	// FlushInterval is how often pending entries are written; default 1s.
	FlushInterval time.Duration
	// BufferSize bounds the pending entries; when full, the call that
	// records an entry writes the batch itself. Default 1024.
	BufferSize int
	// DefaultOutputTokens is the output estimate of a primary call whose
	// request carries no max_tokens; default 4096.
	DefaultOutputTokens int64
}

// Ledger prices and records B-legs and admits them against budgets. It owns
// one writer goroutine; Close stops it after writing everything pending.
type Ledger struct {
	store     Store
	prices    *PriceTable
	limits    []limit
	log       *slog.Logger
	now       func() time.Time
	interval  time.Duration
	bufSize   int
	batch     int
	outTokens int64
	m         *metrics

	mu      sync.Mutex
	pending []backend.LedgerEntry
	closed  bool

	flushMu sync.Mutex // one store write at a time, in order

	kick      chan struct{}
	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// New returns a Ledger and starts its writer.
func New(opt Options) *Ledger {
	l := &Ledger{
		store:     opt.Store,
		prices:    NewPriceTable(opt.Prices),
		limits:    limits(opt.Budgets),
		log:       opt.Logger,
		now:       opt.Now,
		interval:  opt.FlushInterval,
		bufSize:   opt.BufferSize,
		outTokens: opt.DefaultOutputTokens,
		kick:      make(chan struct{}, 1),
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
	}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	if l.now == nil {
		l.now = time.Now
	}
	if l.interval <= 0 {
		l.interval = DefaultFlushInterval
	}
	if l.bufSize <= 0 {
		l.bufSize = DefaultBufferSize
	}
	if l.outTokens <= 0 {
		l.outTokens = DefaultOutputTokens
	}
	l.batch = min(flushBatch, l.bufSize)
	reg := opt.Registerer
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	l.m = newMetrics(reg)
	go l.run()
	return l
}

// Prices returns the price table in use.
func (l *Ledger) Prices() *PriceTable { return l.prices }

// reservation is one counter amount taken by Reserve.
type reservation struct {
	key    string
	unit   string
	amount int64
}

// Reserve admits the B-leg c is about to open: for every budget that applies
// to c's principal or account in the current period, it atomically reserves
// c.EstimatedTokens (token budgets) or the estimated cost (spend budgets). If
// any budget refuses, the reservations already taken are released and the
// error wraps flow.ErrBudgetExceeded and names the budget.
//
// The returned settle must be called exactly once when the B-leg ends (later
// calls do nothing): it adjusts the reservations to the actual usage and
// cost and records one ledger entry. Every attempt (retry, failover) is its
// own Reserve and settle.
func (l *Ledger) Reserve(ctx context.Context, c Charge) (settle func(Result), err error) {
	if c.Principal == "" {
		return nil, fmt.Errorf("reserve %s call: no principal: %w", c.Kind, ErrInvalidCharge)
	}
	if c.Kind != KindPrimary && c.Kind != KindExtraction {
		return nil, fmt.Errorf("reserve call of kind %q: %w", c.Kind, ErrInvalidCharge)
	}
	if c.Account == "" {
		c.Account = c.Principal
	}
	start := l.now()
	estTokens := max(c.EstimatedTokens, 1)
	estCost, _ := l.prices.Cost(c.Model, c.estimatedUsage())
	estCost = max(estCost, 1)

	var held []reservation
	release := func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
		defer cancel()
		for _, r := range held {
			if err := l.store.Adjust(rctx, r.key, -r.amount); err != nil {
				l.log.Error("ledger: release budget reservation failed", slog.String("key", r.key), slog.Any("error", err))
			}
		}
	}
	for _, lim := range l.limits {
		if !lim.applies(c.Principal, c.Account) {
			continue
		}
		amount := estTokens
		if lim.unit == unitMicros {
			amount = estCost
		}
		key := lim.key(start)
		ok, err := l.store.Reserve(ctx, key, amount, lim.max)
		if err != nil {
			release()
			return nil, fmt.Errorf("reserve %s: %w", lim, err)
		}
		if !ok {
			release()
			l.m.rejected.WithLabelValues(string(c.Kind)).Inc()
			return nil, fmt.Errorf("%s call for principal %q refused by the %s: %w", c.Kind, c.Principal, lim, flow.ErrBudgetExceeded)
		}
		held = append(held, reservation{key: key, unit: lim.unit, amount: amount})
	}

	bleg := newID()
	var once sync.Once
	return func(r Result) {
		once.Do(func() { l.settle(ctx, c, bleg, start, held, r) })
	}, nil
}

// estimatedUsage splits EstimatedTokens into input and output for pricing.
func (c Charge) estimatedUsage() dialect.Usage {
	out := min(max(c.EstimatedOutputTokens, 0), max(c.EstimatedTokens, 0))
	return dialect.Usage{InputTokens: max(c.EstimatedTokens, 0) - out, OutputTokens: out}
}

func (l *Ledger) settle(ctx context.Context, c Charge, bleg string, start time.Time, held []reservation, r Result) {
	u := r.Usage
	if c.Family == config.FamilyOpenAI {
		u.InputTokens = max(u.InputTokens-u.CacheReadTokens, 0)
	}
	cost, priced := l.prices.Cost(c.Model, u)
	if !priced {
		l.m.unpriced.Inc()
	}
	tokens := max(u.InputTokens, 0) + max(u.OutputTokens, 0) + max(u.CacheReadTokens, 0) + max(u.CacheWriteTokens, 0)

	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	for _, h := range held {
		actual := tokens
		if h.unit == unitMicros {
			actual = cost
		}
		if d := actual - h.amount; d != 0 {
			if err := l.store.Adjust(actx, h.key, d); err != nil {
				l.log.Error("ledger: settle budget failed", slog.String("key", h.key), slog.Any("error", err))
			}
		}
	}

	id := r.BLeg
	if id == "" {
		id = bleg
	}
	status := r.Status
	e := backend.LedgerEntry{
		ID:               id,
		Time:             start,
		Principal:        c.Principal,
		Account:          c.Account,
		Session:          c.Session,
		ALeg:             c.ALeg,
		BLeg:             id,
		Kind:             string(c.Kind),
		Route:            c.Route,
		Provider:         c.Provider,
		Model:            c.Model,
		InputTokens:      u.InputTokens,
		OutputTokens:     u.OutputTokens,
		CacheReadTokens:  u.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens,
		CostMicros:       cost,
		Status:           status,
		DurationMS:       r.Duration.Milliseconds(),
	}
	k := string(c.Kind)
	l.m.entries.WithLabelValues(k).Inc()
	l.m.cost.WithLabelValues(k).Add(float64(cost) / 1e6)
	l.m.tokens.WithLabelValues(k, "input").Add(float64(max(u.InputTokens, 0)))
	l.m.tokens.WithLabelValues(k, "output").Add(float64(max(u.OutputTokens, 0)))
	l.m.tokens.WithLabelValues(k, "cache_read").Add(float64(max(u.CacheReadTokens, 0)))
	l.m.tokens.WithLabelValues(k, "cache_write").Add(float64(max(u.CacheWriteTokens, 0)))
	l.record(actx, e)
}

// record queues e for the writer. When the buffer is full, or after Close,
// the caller writes the batch itself: an entry is never dropped.
func (l *Ledger) record(ctx context.Context, e backend.LedgerEntry) {
	l.mu.Lock()
	l.pending = append(l.pending, e)
	n, closed := len(l.pending), l.closed
	l.m.pending.Set(float64(n))
	l.mu.Unlock()
	switch {
	case closed || n >= l.bufSize:
		if err := l.Flush(ctx); err != nil {
			l.log.Error("ledger: synchronous write failed; entries kept for retry", slog.Int("pending", n), slog.Any("error", err))
		}
	case n >= l.batch:
		select {
		case l.kick <- struct{}{}:
		default:
		}
	}
}

// Flush writes every pending entry to the store. On failure the entries stay
// pending (in order) and are retried by the next flush; the store ignores an
// entry it already holds, so a retry never double-counts.
func (l *Ledger) Flush(ctx context.Context) error {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.mu.Lock()
	batch := l.pending
	l.pending = nil
	l.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	if err := l.store.AppendLedger(ctx, batch); err != nil {
		l.m.flushErr.Inc()
		l.mu.Lock()
		l.pending = append(batch, l.pending...)
		l.m.pending.Set(float64(len(l.pending)))
		l.mu.Unlock()
		return fmt.Errorf("write %d ledger entries: %w", len(batch), err)
	}
	l.mu.Lock()
	l.m.pending.Set(float64(len(l.pending)))
	l.mu.Unlock()
	return nil
}

// Pending returns the number of entries not yet written.
func (l *Ledger) Pending() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.pending)
}

func (l *Ledger) run() {
	defer close(l.done)
	t := time.NewTicker(l.interval)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		case <-l.kick:
		}
		ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
		if err := l.Flush(ctx); err != nil {
			l.log.Error("ledger: background write failed; entries kept for retry", slog.Any("error", err))
		}
		cancel()
	}
}

// Close stops the writer and writes every pending entry. It is idempotent;
// entries settled after Close are written synchronously. It returns ctx's
// error if the writer does not stop in time, or the final write's error.
func (l *Ledger) Close(ctx context.Context) error {
	l.closeOnce.Do(func() {
		l.mu.Lock()
		l.closed = true
		l.mu.Unlock()
		close(l.stop)
	})
	select {
	case <-l.done:
	case <-ctx.Done():
		return fmt.Errorf("close ledger: %w", ctx.Err())
	}
	return l.Flush(ctx)
}

func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "bl_" + hex.EncodeToString(b[:])
}
