package preserve

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tether-dev/tether/internal/capsule"
)

// Metrics are the preservation path's content-free collectors.
type Metrics struct {
	augment      *prometheus.CounterVec
	merges       prometheus.Counter
	reinjections prometheus.Counter
	stripped     prometheus.Counter
	harvest      *prometheus.CounterVec
	lineage      *prometheus.CounterVec
	failures     *prometheus.CounterVec
	stale        prometheus.Counter
	conflicts    prometheus.Counter
	dropped      prometheus.Counter
	revision     prometheus.Histogram
	tokens       prometheus.Histogram
	decisions    prometheus.Histogram
	steps        prometheus.Histogram
	hookSeconds  prometheus.Histogram
	provider     *prometheus.CounterVec
	placement    *prometheus.CounterVec
}

// NewMetrics registers the collectors on reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		augment: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tether_preserve_augmentations_total",
			Help: "Compaction requests given the capsule block, by compaction kind (in_band|out_of_band|opaque), or 'empty' when there was nothing to add."}, []string{"kind"}),
		merges: prometheus.NewCounter(prometheus.CounterOpts{Name: "tether_preserve_summary_merges_total",
			Help: "Compaction summaries that went back to the client with the current capsule block merged in."}),
		reinjections: prometheus.NewCounter(prometheus.CounterOpts{Name: "tether_preserve_reinjections_total",
			Help: "Post-compaction turns given the capsule block as proxy-owned context because their history lacked it."}),
		stripped: prometheus.NewCounter(prometheus.CounterOpts{Name: "tether_preserve_stale_blocks_stripped_total",
			Help: "Older capsule blocks removed from forwarded requests so the model sees one current block."}),
		harvest: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tether_preserve_harvest_total",
			Help: "Structured plan states copied into the capsule without a model call, by tool."}, []string{"tool"}),
		lineage: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tether_lineage_events_total",
			Help: "Lineage resolutions by event (new, continue, fork, reset, epoch, out_of_band, unattributed, fork_copied, silent_compaction)."}, []string{"event"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tether_preserve_failures_total",
			Help: "Preservation steps that failed open (traffic continued unchanged), by step."}, []string{"step"}),
		stale: prometheus.NewCounter(prometheus.CounterOpts{Name: "tether_capsule_stale_rejections_total",
			Help: "Extraction results rejected because a newer capsule revision already covered them."}),
		conflicts: prometheus.NewCounter(prometheus.CounterOpts{Name: "tether_capsule_cas_conflicts_total",
			Help: "Compare-and-swap conflicts on capsule writes (retried)."}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{Name: "tether_capsule_items_dropped_total",
			Help: "Capsule items dropped to stay within max_capsule_tokens."}),
		revision: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "tether_capsule_revision",
			Help: "Capsule revision at each write.", Buckets: prometheus.ExponentialBuckets(1, 2, 12)}),
		tokens: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "tether_capsule_tokens",
			Help: "Estimated rendered capsule size in tokens at each write.", Buckets: prometheus.ExponentialBuckets(16, 2, 10)}),
		decisions: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "tether_capsule_active_decisions",
			Help: "Active decisions in the capsule at each write.", Buckets: []float64{0, 1, 2, 4, 8, 16, 32, 64}}),
		steps: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "tether_capsule_plan_steps",
			Help: "Plan steps in the capsule at each write.", Buckets: []float64{0, 1, 2, 4, 8, 16, 32, 64}}),
		hookSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "tether_preserve_request_seconds",
			Help: "Time the preservation path adds before the upstream call (barrier waits included).", Buckets: prometheus.ExponentialBuckets(0.00005, 3, 12)}),
		provider: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tether_preserve_provider_context_total",
			Help: "Provider answers that showed a compaction or a context edit the provider made inside an ordinary call, by mark (compaction|context_edit) and rule."}, []string{"mark", "rule"}),
		placement: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tether_preserve_reinjection_placements_total",
			Help: "Reinjected blocks by placement: system_prompt, or system_message (a role system message inside the conversation, where the provider accepts one for the model)."}, []string{"placement"}),
	}
	if reg != nil {
		reg.MustRegister(m.augment, m.merges, m.reinjections, m.stripped, m.harvest, m.lineage, m.failures,
			m.stale, m.conflicts, m.dropped, m.revision, m.tokens, m.decisions, m.steps, m.hookSeconds, m.provider, m.placement)
	}
	return m
}

func (m *Metrics) observeCapsule(rev int64, st capsule.Stats) {
	m.revision.Observe(float64(rev))
	m.tokens.Observe(float64(st.Tokens))
	m.decisions.Observe(float64(st.ActiveDecisions))
	m.steps.Observe(float64(st.Steps))
}
