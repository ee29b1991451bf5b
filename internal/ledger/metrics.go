package ledger

import (
	"github.com/tether-dev/tether/internal/metrics"
)

// ledgerMetrics are content-free: labels are kinds and directions, never a
// principal, session or model chosen by a caller.
type ledgerMetrics struct {
	tokens   *metrics.CounterVec // kind, direction
	cost     *metrics.CounterVec // kind
	entries  *metrics.CounterVec // kind
	rejected *metrics.CounterVec // kind
	unpriced *metrics.Counter
	flushErr *metrics.Counter
	pending  *metrics.Gauge
	// outage counts calls decided without the store (admitted, refused);
	// reconciled counts reservations of interrupted calls released.
	outage     *metrics.CounterVec
	reconciled *metrics.Counter
}

func newMetrics(reg metrics.Registerer) *ledgerMetrics {
	m := &ledgerMetrics{
		tokens: metrics.NewCounterVec(metrics.CounterOpts{
			Name: "tether_usage_tokens_total",
			Help: "Tokens used by upstream calls, by ledger kind and direction (input, output, cache_read, cache_write).",
		}, []string{"kind", "direction"}),
		cost: metrics.NewCounterVec(metrics.CounterOpts{
			Name: "tether_usage_cost_usd_total",
			Help: "Priced cost of upstream calls in USD, by ledger kind.",
		}, []string{"kind"}),
		entries: metrics.NewCounterVec(metrics.CounterOpts{
			Name: "tether_ledger_entries_total",
			Help: "Ledger entries recorded, one per upstream call, by ledger kind.",
		}, []string{"kind"}),
		rejected: metrics.NewCounterVec(metrics.CounterOpts{
			Name: "tether_admission_rejected_total",
			Help: "Upstream calls refused because a budget was exhausted, by ledger kind.",
		}, []string{"kind"}),
		unpriced: metrics.NewCounter(metrics.CounterOpts{
			Name: "tether_ledger_unpriced_total",
			Help: "Upstream calls on a model with no matching price (recorded at zero cost).",
		}),
		flushErr: metrics.NewCounter(metrics.CounterOpts{
			Name: "tether_ledger_flush_errors_total",
			Help: "Failed ledger batch writes (entries are kept and retried).",
		}),
		pending: metrics.NewGauge(metrics.GaugeOpts{
			Name: "tether_ledger_pending",
			Help: "Ledger entries waiting to be written to the store.",
		}),
	}
	m.outage = metrics.NewCounterVec(metrics.CounterOpts{
		Name: "tether_admission_store_outage_total",
		Help: "Upstream calls admitted or refused while the store could not record a reservation (store_outage policy).",
	}, []string{"decision"})
	m.reconciled = metrics.NewCounter(metrics.CounterOpts{
		Name: "tether_ledger_reconciled_total",
		Help: "Reservations left by a process that died mid-call, released and recorded with status 0.",
	})
	for _, k := range []Kind{KindPrimary, KindExtraction} {
		m.entries.WithLabelValues(string(k))
		m.rejected.WithLabelValues(string(k))
		m.cost.WithLabelValues(string(k))
	}
	m.tokens = metrics.Shared(reg, m.tokens)
	m.cost = metrics.Shared(reg, m.cost)
	m.entries = metrics.Shared(reg, m.entries)
	m.rejected = metrics.Shared(reg, m.rejected)
	m.unpriced = metrics.Shared(reg, m.unpriced)
	m.flushErr = metrics.Shared(reg, m.flushErr)
	m.pending = metrics.Shared(reg, m.pending)
	m.outage = metrics.Shared(reg, m.outage)
	m.reconciled = metrics.Shared(reg, m.reconciled)
	return m
}
