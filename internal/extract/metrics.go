package extract

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
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

// metrics are one pool's view of the collectors every pool shares: the
// per-pool series carry the pool's route label.
type metrics struct {
	jobs      *prometheus.CounterVec // curried with the route
	depth     prometheus.Gauge
	capacity  prometheus.Gauge
	owed      prometheus.Gauge
	owedAge   prometheus.Gauge
	calls     *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	tokens    *prometheus.CounterVec
	gate      *prometheus.CounterVec
	barrier   *prometheus.CounterVec
	barrierS  prometheus.Histogram
	inflight  prometheus.Gauge
	inputToks prometheus.Histogram
	// ungrounded counts model ops dropped because their quote was missing
	// or not in the user turn they cite.
	ungrounded prometheus.Counter
}

// register registers c, or returns the collector already registered under
// its name, so every pool on one registry shares one set.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if reg == nil {
		return c
	}
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
		panic(err)
	}
	return c
}

func newMetrics(reg prometheus.Registerer, route string) *metrics {
	jobs := register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tether_extract_jobs_total",
		Help: "Extraction jobs by extractor route and outcome: queued, coalesced, deferred, resumed, retried, abandoned, dropped_full, dropped, started, completed, inline, empty, failed, invalid, skipped_budget, skipped_empty, stale, fallback."},
		[]string{"route", "outcome"}))
	gauge := func(name, help string) prometheus.Gauge {
		return register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, []string{"route"})).WithLabelValues(route)
	}
	m := &metrics{
		jobs:     jobs.MustCurryWith(prometheus.Labels{"route": route}),
		depth:    gauge("tether_extract_queue_depth", "Extraction jobs waiting for a worker, by extractor route."),
		capacity: gauge("tether_extract_queue_capacity", "Maximum extraction jobs waiting for a worker (max_pending_jobs), by extractor route."),
		owed: gauge("tether_extract_owed",
			"Extraction work owed in the store's outbox (deferred, retrying, or held by a running job), as seen by the pool of this extractor route."),
		owedAge: gauge("tether_extract_owed_oldest_seconds", "Age of the oldest owed extraction work in the outbox (0: none)."),
		calls: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tether_extract_calls_total",
			Help: "Extractor model calls by route and outcome: ok, timeout, http_4xx, http_5xx, error, no_output."}, []string{"route", "outcome"})),
		duration: register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "tether_extract_call_duration_seconds",
			Help: "Extractor model call latency.", Buckets: prometheus.ExponentialBuckets(0.05, 2, 10)}, []string{"route"})),
		tokens: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tether_extract_tokens_total",
			Help: "Extractor tokens reported by the provider, by route and direction (input, output, cache_read)."}, []string{"route", "direction"})),
		gate: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tether_extract_gate_total",
			Help: "Eligibility gate results (eligible, skipped)."}, []string{"result"})),
		barrier: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tether_barrier_waits_total",
			Help: "Preservation barrier joins of extraction: none (nothing in flight), joined, timeout."}, []string{"outcome"})),
		barrierS: register(reg, prometheus.NewHistogram(prometheus.HistogramOpts{Name: "tether_barrier_wait_seconds",
			Help: "Time spent waiting at the preservation barrier for extraction.", Buckets: prometheus.ExponentialBuckets(0.001, 3, 10)})),
		inflight: gauge("tether_extract_inflight", "Extraction jobs running on a worker, by extractor route."),
		inputToks: register(reg, prometheus.NewHistogram(prometheus.HistogramOpts{Name: "tether_extract_input_tokens",
			Help: "Estimated tokens of one prepared extractor input.", Buckets: prometheus.ExponentialBuckets(64, 2, 10)})),
		ungrounded: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tether_extract_ops_ungrounded_total",
			Help: "Model extractor ops dropped because their quote was missing or not in the user turn they cite."}, []string{"route"})).WithLabelValues(route),
	}
	return m
}
