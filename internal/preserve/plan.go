package preserve

import (
	"context"

	"github.com/tether-dev/tether/internal/capsule"
	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/harvest"
	"github.com/tether-dev/tether/internal/session"
)

// harvest copies structured plan state from the history into the capsule,
// mechanically (no model call). It returns the capsule to use afterwards.
//
// ids are the PrefixIDs of msgs when msgs are the request's own messages
// (nil otherwise): a history whose added messages hold no carrier takes the
// answer remembered for the history it extends (harvest.Memo).
func (t *turn) harvest(ctx context.Context, lc *lazyCapsule, msgs []dialect.Message, ids []dialect.PrefixID) error {
	if !t.pol.Preserve.PlanOn() {
		return nil
	}
	// The plan the capsule recorded seeds the carriers that accumulate
	// state, so a step toggled by id still applies after a compaction
	// removed the calls that created it. Before any compaction (Tether's
	// or the provider's) the history holds every such call and the seed
	// cannot make a plan appear: the capsule is read only once the history
	// yields one.
	var plan harvest.Plan
	ok := false
	before := t.ref.Epoch == 0 && !t.cls.PostCompaction
	if before {
		if plan, ok = t.e.plans.Harvest(t.e.opt.Rules, msgs, ids); !ok || len(plan.Steps) == 0 {
			return nil
		}
	}
	cur, err := lc.get()
	if err != nil {
		return err
	}
	if p := cur.LatestPlan; p != nil && p.Source == capsule.SourceStructuredTool {
		sd := harvest.Plan{Tool: p.Tool, Source: harvest.SourceStructuredTool, Offset: p.Condensed}
		for _, st := range p.Steps {
			sd.Steps = append(sd.Steps, harvest.Step{Text: st.Text, Status: st.Status})
		}
		plan, ok = harvest.Harvest(t.e.opt.Rules.HarvestRules(), msgs, 0, sd)
	} else if !before {
		plan, ok = t.e.plans.Harvest(t.e.opt.Rules, msgs, ids)
	}
	if !ok || len(plan.Steps) == 0 {
		return nil
	}
	turnOrd := int(session.Ordinal(t.ref.Epoch, plan.Turn))
	op := capsule.Op{Op: capsule.OpSetPlan, Status: plan.Status, Source: plan.Source, Tool: plan.Tool, Turn: turnOrd}
	for _, s := range plan.Steps {
		op.Steps = append(op.Steps, capsule.Step{Text: s.Text, Status: s.Status})
	}
	tx := "plan:" + t.ref.ALeg + ":" + digestJSON(op)
	if containsTx(cur, tx) {
		return nil
	}
	d := capsule.Delta{FromTurn: turnOrd, ToTurn: turnOrd}
	next, err := t.e.update(ctx, t.x.Principal.ID, t.ref, func(c *capsule.Capsule) (*capsule.Capsule, error) {
		return capsule.Apply(c, []capsule.Op{op}, d, tx, capsule.WithProvenance(capsule.ProvenanceStructured))
	})
	if err != nil {
		t.e.m.failures.WithLabelValues("harvest").Inc()
		return nil
	}
	t.e.m.harvest.WithLabelValues(plan.Tool).Inc()
	lc.cur = next
	return nil
}
