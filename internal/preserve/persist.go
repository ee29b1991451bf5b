package preserve

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/tether-dev/tether/internal/auth"
	"github.com/tether-dev/tether/internal/capsule"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/extract"
	"github.com/tether-dev/tether/internal/session"
	"github.com/tether-dev/tether/internal/store/backend"
	"github.com/tether-dev/tether/internal/tokens"
)

// load returns the A-leg's capsule, empty when there is none. A fork with
// copy_on_fork starts from the parent's newest revision at or before the
// fork point; so does any fork whose point lies past a compaction: what
// came before it, the fork's own history holds only as the summary, which
// is not read again.
func (t *turn) load(ctx context.Context) (*capsule.Capsule, error) {
	var c *capsule.Capsule
	var err error
	if rec, found, ok := t.ref.Capsule(); ok && !t.prefetchTaken {
		// Read with the lineage, before anything of this turn wrote: good
		// for the first load only.
		t.prefetchTaken = true
		c, err = t.e.decode(t.ref.ALeg, rec, found)
	} else {
		c, err = t.e.get(ctx, t.x.Principal.ID, t.ref.ALeg)
	}
	if err != nil {
		return nil, err
	}
	if c != nil {
		return c, nil
	}
	if t.ref.Event == session.EventFork && (t.pol.CopyOnFork || t.ref.Epoch > 0) && t.ref.ParentALeg != "" {
		if inherited := t.e.forkCopy(ctx, t.x.Principal.ID, t.ref); inherited != nil {
			// Persist the copy as the branch's first revision so later
			// updates (harvest, extraction) build on it.
			next, err := t.e.update(ctx, t.x.Principal.ID, t.ref, func(c *capsule.Capsule) (*capsule.Capsule, error) {
				if c.Revision > 0 {
					return nil, capsule.ErrAlreadyApplied // the branch already has state
				}
				return inherited, nil
			})
			if err == nil && next != nil {
				return next, nil
			}
		}
	}
	return capsule.New(t.ref.Session, t.ref.ALeg), nil
}

// lazyCapsule is the A-leg's capsule of one turn, loaded on first use.
type lazyCapsule struct {
	t      *turn
	ctx    context.Context
	cur    *capsule.Capsule
	loaded bool
}

func (lc *lazyCapsule) get() (*capsule.Capsule, error) {
	if !lc.loaded {
		cur, err := lc.t.load(lc.ctx)
		if err != nil {
			return nil, err
		}
		lc.cur, lc.loaded = cur, true
	}
	return lc.cur, nil
}

// get loads and decodes the head capsule; nil when there is none. A corrupt
// or unknown-version capsule is reported (ids only) and treated as absent.
func (e *Engine) get(ctx context.Context, principal, aLeg string) (*capsule.Capsule, error) {
	rec, err := e.opt.Store.GetCapsule(ctx, principal, aLeg)
	if errors.Is(err, backend.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		e.m.failures.WithLabelValues("store").Inc()
		return nil, fmt.Errorf("load capsule %s: %w", aLeg, err)
	}
	return e.decode(aLeg, rec, true)
}

// decode decodes a head capsule the store returned; nil when it held none
// (found false).
func (e *Engine) decode(aLeg string, rec backend.CapsuleRecord, found bool) (*capsule.Capsule, error) {
	if !found {
		return nil, nil
	}
	c, err := capsule.Decode(rec.Data)
	if err != nil {
		e.m.failures.WithLabelValues("corrupt").Inc()
		e.log.Error("stored capsule unreadable; ignored", slog.String("a_leg", aLeg), slog.Int64("revision", rec.Revision))
		return nil, fmt.Errorf("decode capsule %s@%d: %w", aLeg, rec.Revision, err)
	}
	c.Revision = rec.Revision
	return c, nil
}

func (e *Engine) forkCopy(ctx context.Context, principal string, ref session.Ref) *capsule.Capsule {
	hist, err := e.opt.Store.CapsuleHistory(ctx, principal, ref.ParentALeg, 0)
	if err != nil {
		return nil
	}
	for _, rec := range hist { // newest first
		c, err := capsule.Decode(rec.Data)
		if err != nil {
			continue
		}
		if int64(c.Watermark.Turn) <= ref.ForkOrdinal && latestTurn(c) <= ref.ForkOrdinal {
			c.Session, c.ALeg, c.Revision = ref.Session, ref.ALeg, 0
			c.Applied = nil
			e.m.lineage.WithLabelValues("fork_copied").Inc()
			return c
		}
	}
	return nil
}

// latestTurn is the newest transcript position any fact of c comes from:
// a revision whose facts all predate a fork point is state the fork shares.
func latestTurn(c *capsule.Capsule) int64 {
	m := 0
	if p := c.LatestPlan; p != nil {
		m = max(m, p.SourceTurn)
	}
	for _, d := range c.Decisions {
		m = max(m, d.SourceTurn, d.ClosedTurn)
	}
	for _, x := range c.Constraints {
		m = max(m, x.SourceTurn, x.ClosedTurn)
	}
	for _, r := range c.Rejected {
		m = max(m, r.SourceTurn)
	}
	for _, q := range c.OpenQuestions {
		m = max(m, q.SourceTurn, q.ClosedTurn)
	}
	return int64(m)
}

// update applies fn to the current capsule with compare-and-swap, retrying
// on conflicts, and bounds the result.
func (e *Engine) update(ctx context.Context, principal string, ref session.Ref, fn func(*capsule.Capsule) (*capsule.Capsule, error)) (*capsule.Capsule, error) {
	pol := e.opt.Policy(auth.Principal{ID: principal})
	for attempt := 0; attempt < 16; attempt++ {
		cur, err := e.get(ctx, principal, ref.ALeg)
		if err != nil {
			return nil, err
		}
		var base int64
		if cur == nil {
			cur = capsule.New(ref.Session, ref.ALeg)
		} else {
			base = cur.Revision
		}
		next, err := fn(cur)
		if errors.Is(err, capsule.ErrAlreadyApplied) {
			return cur, nil
		}
		if err != nil {
			return nil, err
		}
		next.Session, next.ALeg = ref.Session, ref.ALeg
		next.Revision = base + 1
		if pol.MaxTokens > 0 {
			var dropped int
			// The block the model gets also carries the ref="…" epoch
			// token (see block); the budget covers it.
			next, dropped = capsule.Bound(next, pol.MaxTokens-tokens.Estimate(` ref="`+e.opt.Resolver.EpochToken(ref)+`"`))
			e.m.dropped.Add(float64(dropped))
		}
		data, err := capsule.Encode(next)
		if err != nil {
			return nil, err
		}
		err = e.opt.Store.PutCapsule(ctx, backend.CapsuleRecord{Principal: principal, Session: ref.Session, ALeg: ref.ALeg, Revision: next.Revision, Data: data}, base)
		if errors.Is(err, backend.ErrConflict) {
			e.m.conflicts.Inc()
			continue
		}
		if err != nil {
			e.m.failures.WithLabelValues("store").Inc()
			return nil, fmt.Errorf("store capsule %s@%d: %w", ref.ALeg, next.Revision, err)
		}
		st := next.Stats()
		e.m.observeCapsule(next.Revision, st)
		e.log.Info("capsule updated", slog.String("a_leg", ref.ALeg), slog.Int64("revision", next.Revision),
			slog.Int("active_decisions", st.ActiveDecisions), slog.Int("steps", st.Steps), slog.Int("tokens", st.Tokens))
		return next, nil
	}
	return nil, fmt.Errorf("store capsule %s: %w", ref.ALeg, backend.ErrConflict)
}

// ApplyOps merges a validated extraction result (extract.ApplyFunc). A result
// computed on an older revision is rebased; one that covers nothing newer
// than the capsule is rejected as stale.
func (e *Engine) ApplyOps(ctx context.Context, job extract.Job, ops []capsule.Op, d capsule.Delta) error {
	pol := e.opt.Policy(auth.Principal{ID: job.Principal, Account: job.Account})
	ops = filterOps(ops, pol.Preserve)
	ref := session.Ref{Principal: job.Principal, Session: job.Session, ALeg: job.ALeg}
	unlock := e.opt.Resolver.Lock(ref)
	defer unlock()
	tx := fmt.Sprintf("x:%s:%d-%d", job.ALeg, job.FirstTurn, job.Ordinal)
	wm := capsule.Watermark{Turn: int(job.Ordinal)}
	_, err := e.update(ctx, job.Principal, ref, func(cur *capsule.Capsule) (*capsule.Capsule, error) {
		var baseRev int64
		var baseWM capsule.Watermark
		if job.Prev != nil {
			baseRev, baseWM = job.Prev.Revision, job.Prev.Watermark
		}
		if cur.Revision == baseRev {
			if d.ToTurn < cur.Watermark.Turn {
				return nil, fmt.Errorf("apply %s: %w", tx, capsule.ErrStale)
			}
			return capsule.Apply(cur, ops, d, tx, capsule.WithWatermark(wm))
		}
		return capsule.Rebase(cur, ops, d, tx, baseRev, baseWM, capsule.WithWatermark(wm))
	})
	switch {
	case errors.Is(err, capsule.ErrStale):
		e.m.stale.Inc()
	case err != nil:
		e.m.failures.WithLabelValues("apply").Inc()
	}
	return err
}

// filterOps drops ops of kinds the operator chose not to preserve.
func filterOps(ops []capsule.Op, p config.Preserve) []capsule.Op {
	out := ops[:0:0]
	for _, op := range ops {
		switch op.Op {
		case capsule.OpAddDecision, capsule.OpSupersedeDecision, capsule.OpRejectDecision:
			if !p.UserDecisionsOn() {
				continue
			}
		case capsule.OpAddConstraint, capsule.OpSupersedeConstraint, capsule.OpRemoveConstraint:
			if !p.ConstraintsOn() {
				continue
			}
		case capsule.OpRejectAlternative:
			if !p.RejectedAlternativesOn() {
				continue
			}
		case capsule.OpSetPlan, capsule.OpSetStepStatus:
			if !p.PlanOn() {
				continue
			}
		}
		if !p.RationaleOn() {
			op.Rationale, op.Reason = "", ""
		}
		out = append(out, op)
	}
	return out
}

func containsTx(c *capsule.Capsule, tx string) bool {
	for _, a := range c.Applied {
		if a == tx {
			return true
		}
	}
	return false
}

func digestJSON(v any) string {
	b, _ := json.Marshal(v)
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:8])
}
