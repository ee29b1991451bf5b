package preserve

import (
	"context"
	"log/slog"

	"github.com/tether-dev/tether/internal/capsule"
	"github.com/tether-dev/tether/internal/store/backend"
	"github.com/tether-dev/tether/internal/tokens"
)

// Timeline records the compactions preservation handled (backend.Compactions).
type Timeline interface {
	AppendCompaction(ctx context.Context, ev backend.CompactionEvent) (int64, error)
}

// Timeline actions: what preservation did for a compaction.
const (
	ActionAugmented  = "augmented"  // the block went into the summarisation request
	ActionEmpty      = "empty"      // the capsule held nothing yet
	ActionReinjected = "reinjected" // the block went back into the first turn after a compaction
	ActionRelayed    = "relayed"    // a compaction whose answer the provider signs went as sent; the block goes back on the turns after it
	ActionObserved   = "observed"   // the provider's answer showed a compaction it made inside an ordinary call
)

// recordCompaction adds what this turn did for a compaction to the A-leg's
// timeline: ids, rule, and the injected capsule's revision and counts,
// never its text. A failure is logged and counted, never returned: the
// timeline is for people, and the request goes on.
func (t *turn) recordCompaction(ctx context.Context, action string, c *capsule.Capsule, block string) {
	t.record(ctx, t.cls.Agent, t.cls.RuleID, t.cls.RuleVersion, string(t.cls.Kind), action, c, block)
}

// record is recordCompaction for the rule named (the turn's own, or one
// that matched the provider's answer).
func (t *turn) record(ctx context.Context, agent, rule string, version int, kind, action string, c *capsule.Capsule, block string) {
	tl := t.e.opt.Timeline
	if tl == nil {
		return
	}
	ev := backend.CompactionEvent{
		Principal: t.x.Principal.ID, Session: t.ref.Session, ALeg: t.ref.ALeg, RequestID: t.x.ID,
		Agent: agent, RuleID: rule, RuleVersion: version, Kind: kind, Action: action,
	}
	if c != nil && block != "" {
		st := c.Stats()
		ev.Revision, ev.Tokens = c.Revision, tokens.Estimate(block)
		ev.Decisions, ev.Constraints, ev.Rejected, ev.Questions, ev.Steps = st.ActiveDecisions, st.Constraints, st.Rejected, st.Questions, st.Steps
	}
	if _, err := tl.AppendCompaction(ctx, ev); err != nil {
		t.e.m.failures.WithLabelValues("timeline").Inc()
		t.e.log.Warn("compaction timeline not recorded", slog.String("id", t.x.ID), slog.String("a_leg", t.ref.ALeg))
	}
}
