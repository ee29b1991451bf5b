package compaction

import "github.com/tether-dev/tether/internal/metrics"

// Metrics is an Observer that counts compaction transactions. Its labels
// come from the rule file (agent, rule id, evidence) and the outcome: never
// a session, principal or any content.
type Metrics struct {
	detected  *metrics.CounterVec
	started   *metrics.CounterVec
	completed *metrics.CounterVec
	provider  *metrics.CounterVec
}

var _ Observer = (*Metrics)(nil)

// NewMetrics creates the counters and registers them on reg (skipped when
// reg is nil). Registering twice on the same registry panics, as
// Registry.MustRegister does.
func NewMetrics(reg metrics.Registerer) *Metrics {
	m := &Metrics{
		detected: metrics.NewCounterVec(metrics.CounterOpts{
			Name: "tether_compactions_detected_total",
			Help: "Compaction requests recognised, by agent, rule and evidence.",
		}, []string{"agent", "rule", "evidence"}),
		started: metrics.NewCounterVec(metrics.CounterOpts{
			Name: "tether_compactions_started_total",
			Help: "Compaction requests whose upstream call opened.",
		}, []string{"agent"}),
		completed: metrics.NewCounterVec(metrics.CounterOpts{
			Name: "tether_compactions_completed_total",
			Help: "Compaction transactions ended, by agent and outcome (ok or error).",
		}, []string{"agent", "outcome"}),
		provider: metrics.NewCounterVec(metrics.CounterOpts{
			Name: "tether_provider_context_total",
			Help: "Compactions and context edits the provider makes inside ordinary calls, by rule and side (request: asked for; answer: seen done).",
		}, []string{"agent", "rule", "side"}),
	}
	if reg != nil {
		reg.MustRegister(m.detected, m.started, m.completed, m.provider)
	}
	return m
}

// Observe counts e.
func (m *Metrics) Observe(e Event) {
	switch e.Type {
	case EventDetected:
		m.detected.WithLabelValues(e.Agent, e.RuleID, string(e.Evidence)).Inc()
	case EventStarted:
		m.started.WithLabelValues(e.Agent).Inc()
	case EventCompleted:
		outcome := "ok"
		if e.Status >= 400 {
			outcome = "error"
		}
		m.completed.WithLabelValues(e.Agent, outcome).Inc()
	case EventFailed:
		m.completed.WithLabelValues(e.Agent, "error").Inc()
	case EventProviderAsked:
		m.provider.WithLabelValues(e.Agent, e.RuleID, "request").Inc()
	case EventProviderDone:
		m.provider.WithLabelValues(e.Agent, e.RuleID, "answer").Inc()
	}
}
