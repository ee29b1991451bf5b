package extract

import (
	"github.com/tether-dev/tether/internal/metrics"
)

// Job outcomes (label values of tether_extract_jobs_total).
const (
	OutcomeQueued        = "queued"
	OutcomeCoalesced     = "coalesced"
	OutcomeDroppedFull   = "dropped_full" // neither queued nor written to the outbox: offered again on the next turn
	OutcomeDropped       = "dropped"      // expired, purged or cancelled at shutdown (still owed in the outbox, if any)
	OutcomeDeferred      = "deferred"     // queue full: owed in the outbox, run when workers have room
	OutcomeResumed       = "resumed"      // claimed from the outbox
	OutcomeRetried       = "retried"      // failed; released to the outbox with backoff
	OutcomeAbandoned     = "abandoned"    // failed max_attempts times; given up
	OutcomeStarted       = "started"
	OutcomeCompleted     = "completed"
	OutcomeInline        = "inline" // a deterministic extractor's ops applied in the request path
	OutcomeEmpty         = "empty"  // a deterministic extractor found nothing to add
	OutcomeFailed        = "failed"
	OutcomeInvalid       = "invalid"
	OutcomeSkippedBudget = "skipped_budget"
	OutcomeSkippedEmpty  = "skipped_empty" // no user message survived input preparation
	OutcomeStale         = "stale"
	OutcomeFallback      = "fallback" // the model call failed or was invalid; the fallback extractor's result was used
)

// poolMetrics are one pool's view of the collectors every pool shares: the
// per-pool series carry the pool's route label.
type poolMetrics struct {
	jobs      routeJobs
	depth     *metrics.Gauge
	capacity  *metrics.Gauge
	owed      *metrics.Gauge
	owedAge   *metrics.Gauge
	calls     *metrics.CounterVec
	duration  *metrics.HistogramVec
	tokens    *metrics.CounterVec
	gate      *metrics.CounterVec
	barrier   *metrics.CounterVec
	barrierS  *metrics.Histogram
	inflight  *metrics.Gauge
	inputToks *metrics.Histogram
	// ungrounded counts model ops dropped because their quote was missing
	// or not in the user turn they cite.
	ungrounded *metrics.Counter
	// refused counts ops the merge refused, dropped so that the rest of
	// their result is kept.
	refused *metrics.Counter
}

// routeJobs is tether_extract_jobs_total on one pool's route.
type routeJobs struct {
	vec   *metrics.CounterVec
	route string
}

// WithLabelValues returns the counter of outcome on the pool's route.
func (j routeJobs) WithLabelValues(outcome string) *metrics.Counter {
	return j.vec.WithLabelValues(j.route, outcome)
}

func newMetrics(reg metrics.Registerer, route string) *poolMetrics {
	jobs := metrics.Shared(reg, metrics.NewCounterVec(metrics.CounterOpts{Name: "tether_extract_jobs_total",
		Help: "Extraction jobs by extractor route and outcome: queued, coalesced, deferred, resumed, retried, abandoned, dropped_full, dropped, started, completed, inline, empty, failed, invalid, skipped_budget, skipped_empty, stale, fallback."},
		[]string{"route", "outcome"}))
	gauge := func(name, help string) *metrics.Gauge {
		return metrics.Shared(reg, metrics.NewGaugeVec(metrics.GaugeOpts{Name: name, Help: help}, []string{"route"})).WithLabelValues(route)
	}
	m := &poolMetrics{
		jobs:     routeJobs{vec: jobs, route: route},
		depth:    gauge("tether_extract_queue_depth", "Extraction jobs waiting for a worker, by extractor route."),
		capacity: gauge("tether_extract_queue_capacity", "Maximum extraction jobs waiting for a worker (max_pending_jobs), by extractor route."),
		owed: gauge("tether_extract_owed",
			"Extraction work owed in the store's outbox (deferred, retrying, or held by a running job), as seen by the pool of this extractor route."),
		owedAge: gauge("tether_extract_owed_oldest_seconds", "Age of the oldest owed extraction work in the outbox (0: none)."),
		calls: metrics.Shared(reg, metrics.NewCounterVec(metrics.CounterOpts{Name: "tether_extract_calls_total",
			Help: "Extractor model calls by route and outcome: ok, timeout, http_4xx, http_5xx, error, no_output."}, []string{"route", "outcome"})),
		duration: metrics.Shared(reg, metrics.NewHistogramVec(metrics.HistogramOpts{Name: "tether_extract_call_duration_seconds",
			Help: "Extractor model call latency.", Buckets: metrics.ExponentialBuckets(0.05, 2, 10)}, []string{"route"})),
		tokens: metrics.Shared(reg, metrics.NewCounterVec(metrics.CounterOpts{Name: "tether_extract_tokens_total",
			Help: "Extractor tokens reported by the provider, by route and direction (input, output, cache_read)."}, []string{"route", "direction"})),
		gate: metrics.Shared(reg, metrics.NewCounterVec(metrics.CounterOpts{Name: "tether_extract_gate_total",
			Help: "Eligibility gate results (eligible, skipped)."}, []string{"result"})),
		barrier: metrics.Shared(reg, metrics.NewCounterVec(metrics.CounterOpts{Name: "tether_barrier_waits_total",
			Help: "Preservation barrier joins of extraction: none (nothing in flight), joined, timeout."}, []string{"outcome"})),
		barrierS: metrics.Shared(reg, metrics.NewHistogram(metrics.HistogramOpts{Name: "tether_barrier_wait_seconds",
			Help: "Time spent waiting at the preservation barrier for extraction.", Buckets: metrics.ExponentialBuckets(0.001, 3, 10)})),
		inflight: gauge("tether_extract_inflight", "Extraction jobs running on a worker, by extractor route."),
		inputToks: metrics.Shared(reg, metrics.NewHistogram(metrics.HistogramOpts{Name: "tether_extract_input_tokens",
			Help: "Estimated tokens of one prepared extractor input.", Buckets: metrics.ExponentialBuckets(64, 2, 10)})),
		ungrounded: metrics.Shared(reg, metrics.NewCounterVec(metrics.CounterOpts{Name: "tether_extract_ops_ungrounded_total",
			Help: "Model extractor ops dropped because their quote was missing or not in the user turn they cite."}, []string{"route"})).WithLabelValues(route),
		refused: metrics.Shared(reg, metrics.NewCounterVec(metrics.CounterOpts{Name: "tether_extract_ops_refused_total",
			Help: "Extractor ops the capsule merge refused, dropped so that the rest of their result is applied."}, []string{"route"})).WithLabelValues(route),
	}
	return m
}
