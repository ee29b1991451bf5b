package ledger

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/tether-dev/tether/internal/store/backend"
)

// Outage policies (config store_outage.admission).
const (
	OutageFailOpen   = "fail_open"
	OutageFailClosed = "fail_closed"
)

// ErrStoreUnavailable: a call bound by a budget could not be admitted
// because the store cannot record its reservation (fail_closed, or the
// fail_open cap is spent). The server answers 503.
var ErrStoreUnavailable = errors.New("usage store unavailable")

// Outage is the admission policy while the store cannot record a
// reservation. A call no budget applies to is always admitted (there is
// nothing to enforce; its entry waits in memory until the store is back).
// A call bound by a budget is refused under fail_closed; under fail_open
// (the default) it is admitted while this process's spend admitted without
// the store stays within MaxTokens and MaxMicros, counted from the
// estimates and reset when the store is reachable again. Its settlement
// moves the counters when the store is back, so budgets still see it.
type Outage struct {
	Policy    string // fail_open (default) | fail_closed
	MaxTokens int64  // default 2,000,000
	MaxMicros int64  // default 5,000,000 ($5)
}

func (o Outage) withDefaults() Outage {
	if o.Policy == "" {
		o.Policy = OutageFailOpen
	}
	if o.MaxTokens <= 0 {
		o.MaxTokens = 2_000_000
	}
	if o.MaxMicros <= 0 {
		o.MaxMicros = 5_000_000
	}
	return o
}

type outageSpend struct {
	tokens, micros int64
	since          time.Time
}

// admitWithoutStore applies the outage policy to a call whose reservation
// the store could not record.
func (l *Ledger) admitWithoutStore(c Charge, held []reservation, estTokens, estCost int64) error {
	l.spentMu.Lock()
	defer l.spentMu.Unlock()
	if l.spent.since.IsZero() {
		l.spent.since = l.now()
		l.log.Error("ledger: store unreachable; admission follows the outage policy", slog.String("policy", l.outage.Policy))
	}
	if len(held) == 0 {
		l.m.outage.WithLabelValues("admitted").Inc()
		return nil
	}
	if l.outage.Policy == OutageFailClosed {
		l.m.outage.WithLabelValues("refused").Inc()
		return fmt.Errorf("%s call for principal %q: budgets cannot be checked (store_outage.admission fail_closed): %w", c.Kind, c.Principal, ErrStoreUnavailable)
	}
	if l.spent.tokens+estTokens > l.outage.MaxTokens || l.spent.micros+estCost > l.outage.MaxMicros {
		l.m.outage.WithLabelValues("refused").Inc()
		return fmt.Errorf("%s call for principal %q: the spend this process may admit while the store is unreachable is used up: %w", c.Kind, c.Principal, ErrStoreUnavailable)
	}
	l.spent.tokens += estTokens
	l.spent.micros += estCost
	l.m.outage.WithLabelValues("admitted").Inc()
	return nil
}

// storeReachable ends an outage: the cap starts over.
func (l *Ledger) storeReachable() {
	l.spentMu.Lock()
	defer l.spentMu.Unlock()
	if !l.spent.since.IsZero() {
		l.log.Info("ledger: store reachable again", slog.Int64("outage_ms", l.now().Sub(l.spent.since).Milliseconds()),
			slog.Int64("admitted_tokens", l.spent.tokens))
		l.spent = outageSpend{}
	}
}

// Reconcile ends reservations that expire at or before expiredBy: calls
// whose process died before settling them. Each is released (its counters
// go back down) and recorded as a ledger row with status 0 and no usage, so
// the interrupted call stays visible and the budget counters equal the
// ledger's sums. A process that is the store's only user reconciles
// everything at start (expiredBy far ahead); replicas sharing a store
// reconcile only expired reservations. It returns the number ended.
func (l *Ledger) Reconcile(ctx context.Context, expiredBy time.Time) (int, error) {
	total := 0
	for {
		rs, err := l.store.PendingReservations(ctx, expiredBy, 500)
		if err != nil {
			return total, fmt.Errorf("reconcile reservations: %w", err)
		}
		if len(rs) == 0 {
			break
		}
		st := make([]backend.Settlement, len(rs))
		for i, r := range rs {
			e := r.Entry
			e.InputTokens, e.OutputTokens, e.CacheReadTokens, e.CacheWriteTokens, e.CostMicros = 0, 0, 0, 0, 0
			e.Status, e.DurationMS = 0, 0
			st[i] = backend.Settlement{ReservationID: r.ID, Entry: e}
			for _, h := range r.Holds {
				st[i].Adjust = append(st[i].Adjust, backend.Hold{Key: h.Key, Amount: -h.Amount})
			}
		}
		if err := l.store.SettleReservations(ctx, st); err != nil {
			return total, fmt.Errorf("reconcile reservations: %w", err)
		}
		total += len(rs)
		l.m.reconciled.Add(float64(len(rs)))
		if len(rs) < 500 {
			break
		}
	}
	if total > 0 {
		l.log.Warn("ledger: reservations of calls interrupted by a process exit released", slog.Int("reservations", total))
	}
	return total, nil
}
