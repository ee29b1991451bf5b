package preserve

import (
	"github.com/tether-dev/tether/internal/capsule"
	"github.com/tether-dev/tether/internal/metrics"
)

// Metrics are the preservation path's content-free collectors.
type Metrics struct {
	augment      *metrics.CounterVec
	merges       *metrics.Counter
	reinjections *metrics.Counter
	stripped     *metrics.Counter
	harvest      *metrics.CounterVec
	lineage      *metrics.CounterVec
	failures     *metrics.CounterVec
	stale        *metrics.Counter
	conflicts    *metrics.Counter
	dropped      *metrics.Counter
	revision     *metrics.Histogram
	tokens       *metrics.Histogram
	decisions    *metrics.Histogram
	steps        *metrics.Histogram
	hookSeconds  *metrics.Histogram
	provider     *metrics.CounterVec
	placement    *metrics.CounterVec
}

// NewMetrics registers the collectors on reg (nil: not registered).
func NewMetrics(reg metrics.Registerer) *Metrics {
	m := &Metrics{
		augment: metrics.NewCounterVec(metrics.CounterOpts{Name: "tether_preserve_augmentations_total",
			Help: "Compaction requests given the capsule block, by compaction kind (in_band|out_of_band|opaque), or 'empty' when there was nothing to add."}, []string{"kind"}),
		merges: metrics.NewCounter(metrics.CounterOpts{Name: "tether_preserve_summary_merges_total",
			Help: "Compaction summaries that went back to the client with the current capsule block merged in."}),
		reinjections: metrics.NewCounter(metrics.CounterOpts{Name: "tether_preserve_reinjections_total",
			Help: "Post-compaction turns given the capsule block as proxy-owned context because their history lacked it."}),
		stripped: metrics.NewCounter(metrics.CounterOpts{Name: "tether_preserve_stale_blocks_stripped_total",
			Help: "Older capsule blocks removed from forwarded requests so the model sees one current block."}),
		harvest: metrics.NewCounterVec(metrics.CounterOpts{Name: "tether_preserve_harvest_total",
			Help: "Structured plan states copied into the capsule without a model call, by tool."}, []string{"tool"}),
		lineage: metrics.NewCounterVec(metrics.CounterOpts{Name: "tether_lineage_events_total",
			Help: "Lineage resolutions by event (new, continue, fork, reset, epoch, out_of_band, unattributed, fork_copied, silent_compaction)."}, []string{"event"}),
		failures: metrics.NewCounterVec(metrics.CounterOpts{Name: "tether_preserve_failures_total",
			Help: "Preservation steps that failed open (traffic continued unchanged), by step."}, []string{"step"}),
		stale: metrics.NewCounter(metrics.CounterOpts{Name: "tether_capsule_stale_rejections_total",
			Help: "Extraction results rejected because a newer capsule revision already covered them."}),
		conflicts: metrics.NewCounter(metrics.CounterOpts{Name: "tether_capsule_cas_conflicts_total",
			Help: "Compare-and-swap conflicts on capsule writes (retried)."}),
		dropped: metrics.NewCounter(metrics.CounterOpts{Name: "tether_capsule_items_dropped_total",
			Help: "Capsule items dropped to stay within max_capsule_tokens."}),
		revision: metrics.NewHistogram(metrics.HistogramOpts{Name: "tether_capsule_revision",
			Help: "Capsule revision at each write.", Buckets: metrics.ExponentialBuckets(1, 2, 12)}),
		tokens: metrics.NewHistogram(metrics.HistogramOpts{Name: "tether_capsule_tokens",
			Help: "Estimated rendered capsule size in tokens at each write.", Buckets: metrics.ExponentialBuckets(16, 2, 10)}),
		decisions: metrics.NewHistogram(metrics.HistogramOpts{Name: "tether_capsule_active_decisions",
			Help: "Active decisions in the capsule at each write.", Buckets: []float64{0, 1, 2, 4, 8, 16, 32, 64}}),
		steps: metrics.NewHistogram(metrics.HistogramOpts{Name: "tether_capsule_plan_steps",
			Help: "Plan steps in the capsule at each write.", Buckets: []float64{0, 1, 2, 4, 8, 16, 32, 64}}),
		hookSeconds: metrics.NewHistogram(metrics.HistogramOpts{Name: "tether_preserve_request_seconds",
			Help: "Time the preservation path adds before the upstream call (barrier waits included).", Buckets: metrics.ExponentialBuckets(0.00005, 3, 12)}),
		provider: metrics.NewCounterVec(metrics.CounterOpts{Name: "tether_preserve_provider_context_total",
			Help: "Provider answers that showed a compaction or a context edit the provider made inside an ordinary call, by mark (compaction|context_edit) and rule."}, []string{"mark", "rule"}),
		placement: metrics.NewCounterVec(metrics.CounterOpts{Name: "tether_preserve_reinjection_placements_total",
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
