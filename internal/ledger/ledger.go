package ledger

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/flow"
	"github.com/tether-dev/tether/internal/metrics"
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
	// Used returns a budget counter (to name the budget that refused).
	Used(ctx context.Context, key string) (int64, error)
	// Reservations: a call's reservation is durable before it is
	// forwarded, and its settlement moves the counters and appends the
	// entry in one transaction.
	backend.Reservations
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
	Registerer metrics.Registerer
	Logger     *slog.Logger
	Now        func() time.Time
	// FlushInterval is how often settlements the store refused are retried;
	// default 1s.
	FlushInterval time.Duration
	// BufferSize: while the store fails, an error is logged each time this
	// many more settlements wait for it (none is ever dropped). Default 1024.
	BufferSize int
	// DefaultOutputTokens is the output estimate of a primary call whose
	// request carries no max_tokens; default 4096.
	DefaultOutputTokens int64
	// Outage is the admission policy while the store cannot record a
	// reservation (see Outage).
	Outage Outage
	// ReservationTTL is how long an unsettled reservation is presumed to
	// belong to a live call; after it, Reconcile releases it. Default 30m.
	ReservationTTL time.Duration
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
	outTokens int64
	m         *ledgerMetrics

	outage  Outage
	ttl     time.Duration
	spentMu sync.Mutex
	spent   outageSpend // admitted without the store since it was last reachable

	mu      sync.Mutex
	pending []backend.Settlement

	flushMu sync.Mutex // one store write at a time, in order

	// Group commit: concurrent settles share one store transaction.
	cmu        sync.RWMutex
	committing bool
	settleCh   chan settleReq
	committed  chan struct{}

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
		outage:    opt.Outage.withDefaults(),
		ttl:       opt.ReservationTTL,
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
	if l.ttl <= 0 {
		l.ttl = 30 * time.Minute
	}
	reg := opt.Registerer
	if reg == nil {
		reg = metrics.NewRegistry()
	}
	l.m = newMetrics(reg)
	l.settleCh = make(chan settleReq, 1024)
	// A store that groups concurrent settlements itself is called
	// directly; for the others settles share a transaction here.
	_, grouped := opt.Store.(backend.SettlementGrouper)
	l.committing = !grouped
	l.committed = make(chan struct{})
	go l.commit()
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

// Reserve admits the B-leg c is about to open. In one store transaction it
// reserves, for every budget that applies to c's principal or account in the
// current period, c.EstimatedTokens (token budgets) or the estimated cost
// (spend budgets), and records the reservation, so that a process killed
// while the call runs leaves it in the store (Reconcile releases it). A
// call no budget applies to makes no store write here. If any
// budget refuses, nothing is reserved and the error wraps
// flow.ErrBudgetExceeded and names the budget. If the store cannot be
// reached, the Outage policy decides (the error then wraps
// ErrStoreUnavailable).
//
// The returned settle must be called exactly once when the B-leg ends (later
// calls do nothing): it corrects the reservations to the actual usage and
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
	var holds []backend.Hold
	var lims []limit
	for _, lim := range l.limits {
		if !lim.applies(c.Principal, c.Account) {
			continue
		}
		amount := estTokens
		if lim.unit == unitMicros {
			amount = estCost
		}
		key := lim.key(start)
		held = append(held, reservation{key: key, unit: lim.unit, amount: amount})
		holds = append(holds, backend.Hold{Key: key, Amount: amount, Limit: lim.max})
		lims = append(lims, lim)
	}
	bleg := backend.NewCallID(start)
	est := c.estimatedUsage()
	r := backend.Reservation{ID: bleg, Holds: holds, Expires: start.Add(l.ttl),
		Entry: l.entry(c, bleg, start, dialect.Usage{InputTokens: estTokens - est.OutputTokens, OutputTokens: est.OutputTokens}, estCost, 0, 0)}
	// A call no budget applies to holds nothing a dead process could leave
	// counted: it needs no reservation row, only its settlement (written
	// when the call ends, before settle returns).
	reserved := len(holds) > 0
	ok, err := true, error(nil)
	if reserved {
		ok, err = l.store.PutReservation(ctx, r)
	}
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, fmt.Errorf("reserve %s call: %w", c.Kind, err)
	case err != nil:
		if err := l.admitWithoutStore(c, held, estTokens, estCost); err != nil {
			return nil, err
		}
		reserved = false
	case !ok:
		l.m.rejected.WithLabelValues(string(c.Kind)).Inc()
		lim := l.refusing(ctx, lims, holds)
		var retry time.Duration
		if at := lim.resetAt(start); !at.IsZero() {
			retry = at.Sub(start)
		}
		return nil, &budgetError{msg: fmt.Sprintf("%s call for principal %q refused by the %s: %v", c.Kind, c.Principal, lim, flow.ErrBudgetExceeded), retry: retry}
	default:
		l.storeReachable()
	}

	var once sync.Once
	return func(res Result) {
		once.Do(func() { l.settle(ctx, c, bleg, start, held, reserved, res) })
	}, nil
}

// refusing names the budget that refused a reservation: the first whose
// counter cannot take its amount (the first applicable one if none can be
// read).
func (l *Ledger) refusing(ctx context.Context, lims []limit, holds []backend.Hold) limit {
	for i, h := range holds {
		if used, err := l.store.Used(ctx, h.Key); err == nil && used+h.Amount > h.Limit {
			return lims[i]
		}
	}
	return lims[0]
}

// entry is the ledger row of one call.
func (l *Ledger) entry(c Charge, id string, start time.Time, u dialect.Usage, cost int64, status int, dur time.Duration) backend.LedgerEntry {
	return backend.LedgerEntry{
		ID: id, Time: start, Principal: c.Principal, Account: c.Account, Session: c.Session, ALeg: c.ALeg, BLeg: id,
		Kind: string(c.Kind), Route: c.Route, Provider: c.Provider, Model: c.Model,
		InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens,
		CostMicros: cost, Status: status, DurationMS: dur.Milliseconds(),
	}
}

// estimatedUsage splits EstimatedTokens into input and output for pricing.
func (c Charge) estimatedUsage() dialect.Usage {
	out := min(max(c.EstimatedOutputTokens, 0), max(c.EstimatedTokens, 0))
	return dialect.Usage{InputTokens: max(c.EstimatedTokens, 0) - out, OutputTokens: out}
}

func (l *Ledger) settle(ctx context.Context, c Charge, bleg string, start time.Time, held []reservation, reserved bool, r Result) {
	u := r.Usage
	if c.Family == config.FamilyOpenAI {
		u.InputTokens = max(u.InputTokens-u.CacheReadTokens, 0)
	}
	cost, priced := l.prices.Cost(c.Model, u)
	if !priced {
		l.m.unpriced.Inc()
	}
	u.InputTokens, u.OutputTokens = max(u.InputTokens, 0), max(u.OutputTokens, 0)
	u.CacheReadTokens, u.CacheWriteTokens = max(u.CacheReadTokens, 0), max(u.CacheWriteTokens, 0)
	tokens := u.InputTokens + u.OutputTokens + u.CacheReadTokens + u.CacheWriteTokens

	st := backend.Settlement{ReservationID: bleg}
	if !reserved {
		// No reservation (no budget applies, or admitted while the store
		// was unreachable): the counters take the whole amount.
		st.ReservationID = ""
	}
	for _, h := range held {
		actual := tokens
		if h.unit == unitMicros {
			actual = cost
		}
		d := actual
		if reserved {
			d -= h.amount
		}
		if d != 0 {
			st.Adjust = append(st.Adjust, backend.Hold{Key: h.key, Amount: d})
		}
	}
	id := r.BLeg
	if id == "" {
		id = bleg
	}
	st.Entry = l.entry(c, id, start, u, cost, r.Status, r.Duration)
	k := string(c.Kind)
	l.m.entries.WithLabelValues(k).Inc()
	l.m.cost.WithLabelValues(k).Add(float64(cost) / 1e6)
	l.m.tokens.WithLabelValues(k, "input").Add(float64(u.InputTokens))
	l.m.tokens.WithLabelValues(k, "output").Add(float64(u.OutputTokens))
	l.m.tokens.WithLabelValues(k, "cache_read").Add(float64(u.CacheReadTokens))
	l.m.tokens.WithLabelValues(k, "cache_write").Add(float64(u.CacheWriteTokens))
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	l.record(actx, st)
}

// settleReq is one settlement waiting for the group commit.
type settleReq struct {
	st   backend.Settlement
	done chan error
}

// commit writes the settlements record hands it, as many per transaction as
// have arrived while the previous one was written (group commit): under
// load one SQLite writer transaction carries many calls' rows instead of one.
func (l *Ledger) commit() {
	defer close(l.committed)
	const maxBatch = 256
	batch := make([]settleReq, 0, maxBatch)
	for r := range l.settleCh {
		batch = append(batch[:0], r)
	more:
		for len(batch) < maxBatch {
			select {
			case r2, ok := <-l.settleCh:
				if !ok {
					break more
				}
				batch = append(batch, r2)
			default:
				break more
			}
		}
		sts := make([]backend.Settlement, len(batch))
		for i, r := range batch {
			sts[i] = r.st
		}
		ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
		err := l.store.SettleReservations(ctx, sts)
		cancel()
		for _, r := range batch {
			r.done <- err
		}
	}
}

// record writes a settlement before it returns (the call's counters and
// ledger row are durable when settle returns), in a transaction shared with
// the settlements that arrive meanwhile. If the store fails, the settlement
// is kept and retried by the writer; meanwhile the reservation stays in the
// store until the write succeeds (Reconcile ends it only after a crash or
// its TTL).
func (l *Ledger) record(ctx context.Context, st backend.Settlement) {
	var err error
	l.cmu.RLock()
	if l.committing {
		done := make(chan error, 1)
		l.settleCh <- settleReq{st: st, done: done}
		l.cmu.RUnlock()
		err = <-done
	} else {
		l.cmu.RUnlock()
		err = l.store.SettleReservations(ctx, []backend.Settlement{st})
	}
	if err == nil {
		l.storeReachable()
		return
	}
	l.m.flushErr.Inc()
	l.mu.Lock()
	l.pending = append(l.pending, st)
	n := len(l.pending)
	l.m.pending.Set(float64(n))
	l.mu.Unlock()
	if n == 1 || n%l.bufSize == 0 {
		l.log.Error("ledger: settlement not written; kept for retry", slog.Int("pending", n))
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
	if err := l.store.SettleReservations(ctx, batch); err != nil {
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
	l.storeReachable()
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
		l.cmu.Lock()
		l.committing = false
		close(l.settleCh)
		l.cmu.Unlock()
		close(l.stop)
	})
	select {
	case <-l.committed:
	case <-ctx.Done():
		return fmt.Errorf("close ledger: %w", ctx.Err())
	}
	select {
	case <-l.done:
	case <-ctx.Done():
		return fmt.Errorf("close ledger: %w", ctx.Err())
	}
	return l.Flush(ctx)
}
