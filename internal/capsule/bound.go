package capsule

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tether-dev/tether/internal/tokens"
)

// rationaleKeep is the rune length a long rationale is truncated to before it
// is dropped entirely.
const rationaleKeep = 80

// Bound returns a copy of c whose Render fits maxTokens (by tokens.Estimate),
// and the number of items it dropped (also added to Dropped). c is not
// modified. Items go in this fixed order, one at a time, until the block fits:
//
//  1. leading completed/cancelled plan steps (condensed to a "steps 1-N done" line)
//  2. resolved questions, oldest first
//  3. tombstones (superseded/rejected decisions, superseded constraints), oldest first
//  4. rationale text: truncated to 80 characters, then dropped, oldest decision first
//  5. rejected-alternative reasons, oldest first
//  6. rejected alternatives, oldest first
//  7. open questions, oldest first
//  8. active constraints, oldest first
//  9. a provisional plan
//  10. active decisions and accepted-plan steps, oldest first: whichever of
//     the oldest active decision and the plan is older loses an item (the
//     plan on a tie); plan steps go from the end (done, then pending, then
//     in progress).
//
// If even an empty block exceeds maxTokens, the empty block is returned.
func Bound(c *Capsule, maxTokens int) (*Capsule, int) {
	if c == nil {
		c = &Capsule{SchemaVersion: SchemaVersion}
	}
	out := canonical(c).Clone()
	stages := []func(*Capsule) (bool, bool){
		condenseStep, dropResolvedQuestion, dropTombstone, shrinkRationale,
		dropReason, dropAlternative, dropOpenQuestion, dropConstraint,
		dropProvisionalPlan, dropCore,
	}
	dropped := 0
	for _, stage := range stages {
		for tokens.Estimate(renderRef(out, placeholderDigest, "")) > maxTokens {
			changed, counted := stage(out)
			if !changed {
				break
			}
			if counted {
				dropped++
				out.Dropped++
			}
		}
	}
	return out, dropped
}

func condenseStep(c *Capsule) (bool, bool) {
	p := c.LatestPlan
	if p == nil || len(p.Steps) == 0 {
		return false, false
	}
	if s := p.Steps[0].Status; s != StepCompleted && s != StepCancelled {
		return false, false
	}
	p.Steps = slices.Delete(p.Steps, 0, 1)
	p.Condensed++
	return true, true
}

// oldest returns the index of the element with the smallest key (ties: the
// first), considering only elements for which ok is true.
func oldest[T any](xs []T, ok func(T) bool, key func(T) (int, int)) int {
	best := -1
	var bk1, bk2 int
	for i, x := range xs {
		if !ok(x) {
			continue
		}
		k1, k2 := key(x)
		if best < 0 || k1 < bk1 || (k1 == bk1 && k2 < bk2) {
			best, bk1, bk2 = i, k1, k2
		}
	}
	return best
}

func dropResolvedQuestion(c *Capsule) (bool, bool) {
	i := oldest(c.OpenQuestions, func(q Question) bool { return q.Status == StatusResolved },
		func(q Question) (int, int) { return q.ClosedTurn, idNum(q.ID) })
	if i < 0 {
		return false, false
	}
	c.OpenQuestions = slices.Delete(c.OpenQuestions, i, i+1)
	return true, true
}

func dropTombstone(c *Capsule) (bool, bool) {
	di := oldest(c.Decisions, func(d Decision) bool { return d.Status != StatusActive },
		func(d Decision) (int, int) { return d.ClosedTurn, idNum(d.ID) })
	ci := oldest(c.Constraints, func(k Constraint) bool { return k.Status != StatusActive },
		func(k Constraint) (int, int) { return k.ClosedTurn, idNum(k.ID) })
	switch {
	case di < 0 && ci < 0:
		return false, false
	case ci < 0 || (di >= 0 && c.Decisions[di].ClosedTurn <= c.Constraints[ci].ClosedTurn):
		c.Decisions = slices.Delete(c.Decisions, di, di+1)
	default:
		c.Constraints = slices.Delete(c.Constraints, ci, ci+1)
	}
	return true, true
}

func shrinkRationale(c *Capsule) (bool, bool) {
	for i := range c.Decisions {
		d := &c.Decisions[i]
		if d.Status == StatusActive && utf8.RuneCountInString(d.Rationale) > rationaleKeep+1 {
			r := []rune(d.Rationale)
			d.Rationale = strings.TrimSpace(string(r[:rationaleKeep])) + "…"
			return true, false
		}
	}
	for i := range c.Decisions {
		d := &c.Decisions[i]
		if d.Status == StatusActive && d.Rationale != "" {
			d.Rationale = ""
			return true, true
		}
	}
	return false, false
}

func dropReason(c *Capsule) (bool, bool) {
	for i := range c.Rejected {
		if c.Rejected[i].Reason != "" {
			c.Rejected[i].Reason = ""
			return true, true
		}
	}
	return false, false
}

func dropAlternative(c *Capsule) (bool, bool) {
	i := oldest(c.Rejected, func(Rejected) bool { return true },
		func(r Rejected) (int, int) { return r.SourceTurn, idNum(r.ID) })
	if i < 0 {
		return false, false
	}
	c.Rejected = slices.Delete(c.Rejected, i, i+1)
	return true, true
}

func dropOpenQuestion(c *Capsule) (bool, bool) {
	i := oldest(c.OpenQuestions, func(Question) bool { return true },
		func(q Question) (int, int) { return q.SourceTurn, idNum(q.ID) })
	if i < 0 {
		return false, false
	}
	c.OpenQuestions = slices.Delete(c.OpenQuestions, i, i+1)
	return true, true
}

func dropConstraint(c *Capsule) (bool, bool) {
	i := oldest(c.Constraints, func(Constraint) bool { return true },
		func(k Constraint) (int, int) { return k.SourceTurn, idNum(k.ID) })
	if i < 0 {
		return false, false
	}
	c.Constraints = slices.Delete(c.Constraints, i, i+1)
	return true, true
}

func dropProvisionalPlan(c *Capsule) (bool, bool) {
	if c.LatestPlan == nil || c.LatestPlan.Status != PlanProvisional {
		return false, false
	}
	c.LatestPlan = nil
	return true, true
}

func dropCore(c *Capsule) (bool, bool) {
	di := oldest(c.Decisions, func(Decision) bool { return true },
		func(d Decision) (int, int) { return d.SourceTurn, idNum(d.ID) })
	p := c.LatestPlan
	if p != nil && len(p.Steps) == 0 {
		c.LatestPlan = nil
		return true, false
	}
	if di < 0 && p == nil {
		return false, false
	}
	if p != nil && (di < 0 || p.SourceTurn <= c.Decisions[di].SourceTurn) {
		c.LatestPlan.Steps = slices.Delete(p.Steps, stepToDrop(p.Steps), stepToDrop(p.Steps)+1)
		if len(c.LatestPlan.Steps) == 0 {
			c.LatestPlan = nil
		}
		return true, true
	}
	c.Decisions = slices.Delete(c.Decisions, di, di+1)
	return true, true
}

// stepToDrop picks the last done/cancelled step, else the last pending step,
// else the last step.
func stepToDrop(steps []Step) int {
	for _, want := range []func(string) bool{
		func(s string) bool { return s == StepCompleted || s == StepCancelled },
		func(s string) bool { return s == StepPending },
	} {
		for i := len(steps) - 1; i >= 0; i-- {
			if want(steps[i].Status) {
				return i
			}
		}
	}
	return len(steps) - 1
}
