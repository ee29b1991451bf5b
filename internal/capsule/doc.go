// Package capsule holds the continuity capsule: the small, typed, versioned
// state of one conversation branch (A-leg) that must survive lossy context
// compaction — the latest plan, the user's decisions and constraints, rejected
// alternatives and open questions.
//
// The package is pure: no I/O, no clocks, no goroutines. A capsule changes
// only through [Apply] (or [Rebase]) with a list of validated [Op]s; the
// result is always a new value and the input is never modified.
//
// # Merge rules
//
// The rules below are enforced in code, not left to the extractor's prompt:
//
//   - Ops that change user intent (add_decision, supersede_decision,
//     reject_decision, reject_alternative, add_constraint,
//     supersede_constraint, remove_constraint, resolve_question) must cite a
//     turn listed in [Delta].UserTurns. Every other op must cite a turn inside
//     [Delta.FromTurn, Delta.ToTurn]. A fact therefore leaves the active set
//     only through an explicit op citing a user turn of the delta it was
//     extracted from.
//   - Apply is all-or-nothing: one invalid op rejects the whole batch with an
//     error wrapping [ErrInvalidOp] that names the op index and the reason.
//   - Superseded and rejected items stay as tombstones (the newest
//     [MaxTombstones] are kept). A retired item never becomes active again.
//     Re-deciding the same thing creates a NEW item with a new id, and only
//     when it is explicit: either a supersede_decision / supersede_constraint
//     whose new text equals the tombstone, or an add_decision / add_constraint
//     whose "reinstates" field names the tombstone (or rejected alternative).
//     In both cases the cited user turn must be later than the turn that
//     retired the item. A plain add whose normalised text equals a tombstone
//     or a rejected alternative is an invalid op.
//   - Adding an item whose normalised text (case, whitespace and punctuation
//     folded) equals an ACTIVE item is a no-op (a missing rationale is filled
//     in); it never creates a second item.
//   - Ids are allocated per prefix (D, C, R, Q) from counters stored in the
//     capsule and are never reused, even after pruning.
//   - set_plan replaces the previous plan. A plan is accepted only when its
//     source is authoritative harness state (structured_tool, plan_mode) or
//     it cites a user turn; an "accepted" conversation plan citing a
//     non-user turn is stored as provisional. A provisional plan never
//     displaces an accepted plan that still has unfinished steps, and a plan
//     citing an older turn than the current one never replaces it.
//   - Every Apply increments Revision and records the transaction id in
//     Applied (the newest [MaxApplied] are kept); applying a recorded id again
//     returns the previous capsule and [ErrAlreadyApplied].
//   - The watermark moves only forward, via [WithWatermark]; a result for an
//     older watermark is [ErrStale].
//
// # Bounds
//
// [Bound] shrinks a capsule until its [Render] output fits a token budget,
// dropping items in a fixed order that never drops an active decision before
// lower-priority items (see [Bound]).
package capsule
