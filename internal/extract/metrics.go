package extract

import "github.com/prometheus/client_golang/prometheus"

// Job outcomes (label values of tether_extract_jobs_total).
const (
	OutcomeQueued        = "queued"
	OutcomeCoalesced     = "coalesced"
	OutcomeDroppedFull   = "dropped_full"
	OutcomeDropped       = "dropped" // expired, purged or cancelled at shutdown
	OutcomeStarted       = "started"
	OutcomeCompleted     = "completed"
	OutcomeFailed        = "failed"
	OutcomeInvalid       = "invalid"
	OutcomeSkippedBudget = "skipped_budget"
	OutcomeSkippedEmpty  = "skipped_empty" // no user message survived input preparation
	OutcomeStale         = "stale"
	OutcomeFallback      = "fallback" // the model call failed or was invalid; the fallback extractor's result was used
)

type metrics struct {
	jobs      *prometheus.CounterVec
	depth     prometheus.Gauge
	capacity  prometheus.Gauge
	calls     *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	tokens    *prometheus.CounterVec
	gate      *prometheus.CounterVec
	barrier   *prometheus.CounterVec
	barrierS  prometheus.Histogram
	inflight  prometheus.Gauge
	inputToks prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		jobs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tether_extract_jobs_total",
			Help: "Extraction jobs by outcome: queued, coalesced, dropped_full, dropped, started, completed, failed, invalid, skipped_budget, skipped_empty, stale."}, []string{"outcome"}),
		depth: prometheus.NewGauge(prometheus.GaugeOpts{Name: "tether_extract_queue_depth",
			Help: "Extraction jobs waiting for a worker."}),
		capacity: prometheus.NewGauge(prometheus.GaugeOpts{Name: "tether_extract_queue_capacity",
			Help: "Maximum extraction jobs waiting for a worker (max_pending_jobs)."}),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tether_extract_calls_total",
			Help: "Extractor model calls by route and outcome: ok, timeout, http_4xx, http_5xx, error, no_output."}, []string{"route", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "tether_extract_call_duration_seconds",
			Help: "Extractor model call latency.", Buckets: prometheus.ExponentialBuckets(0.05, 2, 10)}, []string{"route"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tether_extract_tokens_total",
			Help: "Extractor tokens reported by the provider, by route and direction (input, output, cache_read)."}, []string{"route", "direction"}),
		gate: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tether_extract_gate_total",
			Help: "Eligibility gate results (eligible, skipped)."}, []string{"result"}),
		barrier: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tether_barrier_waits_total",
			Help: "Preservation barrier joins of extraction: none (nothing in flight), joined, timeout."}, []string{"outcome"}),
		barrierS: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "tether_barrier_wait_seconds",
			Help: "Time spent waiting at the preservation barrier for extraction.", Buckets: prometheus.ExponentialBuckets(0.001, 3, 10)}),
		inflight: prometheus.NewGauge(prometheus.GaugeOpts{Name: "tether_extract_inflight",
			Help: "Extraction jobs running on a worker."}),
		inputToks: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "tether_extract_input_tokens",
			Help: "Estimated tokens of one prepared extractor input.", Buckets: prometheus.ExponentialBuckets(64, 2, 10)}),
	}
	if reg != nil {
		reg.MustRegister(m.jobs, m.depth, m.capacity, m.calls, m.duration, m.tokens, m.gate, m.barrier, m.barrierS, m.inflight, m.inputToks)
	}
	return m
}
