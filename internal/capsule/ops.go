package capsule

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Op kinds.
const (
	OpAddDecision         = "add_decision"
	OpSupersedeDecision   = "supersede_decision"
	OpRejectDecision      = "reject_decision"
	OpRejectAlternative   = "reject_alternative"
	OpAddConstraint       = "add_constraint"
	OpSupersedeConstraint = "supersede_constraint"
	OpRemoveConstraint    = "remove_constraint"
	OpAddQuestion         = "add_question"
	OpResolveQuestion     = "resolve_question"
	OpSetPlan             = "set_plan"
	OpSetStepStatus       = "set_step_status"
)

// Op is one change to a capsule; Op.Op discriminates the kind. The fields
// each kind uses are those of schema/ops.v2.json:
//
//	add_decision          statement, rationale?, reinstates?, turn
//	supersede_decision    id, statement, rationale?, reinstates? (a rejected alternative), turn
//	reject_decision       id, turn
//	reject_alternative    text, reason?, turn
//	add_constraint        text, reinstates?, turn
//	supersede_constraint  id, text, turn
//	remove_constraint     id, turn
//	add_question          text, turn
//	resolve_question      id, turn
//	set_plan              steps, status (accepted|provisional), source, tool?, turn
//	set_step_status       step (1-based, as rendered), status (step status), turn
type Op struct {
	Op        string `json:"op"`
	ID        string `json:"id,omitempty"`
	Statement string `json:"statement,omitempty"`
	Text      string `json:"text,omitempty"`
	Rationale string `json:"rationale,omitempty"`
	Reason    string `json:"reason,omitempty"`
	// Reinstates names a retired item (decision, constraint or rejected
	// alternative) that an add_decision / add_constraint explicitly
	// re-decides.
	Reinstates string `json:"reinstates,omitempty"`
	Status     string `json:"status,omitempty"`
	Source     string `json:"source,omitempty"`
	Tool       string `json:"tool,omitempty"`
	Steps      []Step `json:"steps,omitempty"`
	StepNumber int    `json:"step,omitempty"`
	// Quote is the verbatim span of the cited user turn a model extractor
	// gives as its evidence (schema/ops.v2.json); see extract.Ground.
	Quote string `json:"quote,omitempty"`
	// Turn is the transcript turn the op is based on.
	Turn int `json:"turn"`
	// Origin is the extractor that produced the op (ProvenanceMarked or
	// ProvenanceModel), set by the code that ran it, never read from an
	// extractor's output; "" takes the batch's provenance (WithProvenance).
	Origin string `json:"-"`
}

// changesIntent reports whether kind must cite a user turn of the delta.
func changesIntent(kind string) bool {
	switch kind {
	case OpAddDecision, OpSupersedeDecision, OpRejectDecision, OpRejectAlternative,
		OpAddConstraint, OpSupersedeConstraint, OpRemoveConstraint, OpResolveQuestion:
		return true
	}
	return false
}

// Delta is the transcript range a batch of ops was derived from: turns
// FromTurn..ToTurn inclusive, of which UserTurns were authored by the user.
// Ops may cite only turns inside it.
type Delta struct {
	FromTurn, ToTurn int
	UserTurns        []int
}

func (d Delta) validate() error {
	if d.FromTurn < 0 || d.ToTurn < d.FromTurn {
		return fmt.Errorf("delta [%d,%d] is not a valid turn range", d.FromTurn, d.ToTurn)
	}
	for _, t := range d.UserTurns {
		if t < d.FromTurn || t > d.ToTurn {
			return fmt.Errorf("user turn %d outside delta [%d,%d]", t, d.FromTurn, d.ToTurn)
		}
	}
	return nil
}

func (d Delta) isUserTurn(t int) bool { return slices.Contains(d.UserTurns, t) }

// OpError reports why one op of a batch was rejected. It wraps ErrInvalidOp.
// Reason names ids and turns only, never item text.
type OpError struct {
	Index  int
	Op     string
	Reason string
}

func (e *OpError) Error() string {
	return fmt.Sprintf("op %d (%s): %s", e.Index, e.Op, e.Reason)
}

func (e *OpError) Unwrap() error { return ErrInvalidOp }

// Option configures Apply and Rebase.
type Option func(*options)

type options struct {
	watermark  *Watermark
	provenance string
}

// WithWatermark advances the result's watermark to w. The watermark never
// moves backwards: w.Turn below the previous watermark's turn is ErrStale.
// Without this option the watermark is unchanged.
func WithWatermark(w Watermark) Option {
	return func(o *options) { o.watermark = &w }
}

// WithProvenance sets the provenance recorded on the items the batch adds
// or closes, for ops without an Origin of their own (ProvenanceExtractor,
// the default, ProvenanceStructured, ProvenanceMarked or ProvenanceModel).
func WithProvenance(p string) Option {
	return func(o *options) { o.provenance = p }
}

// Apply applies ops, derived from delta d, to prev as transaction txID and
// returns a new capsule; prev is never modified and may be nil (empty). The
// result has Revision prev.Revision+1 and txID appended to Applied.
//
// If txID is already in prev.Applied, Apply returns prev and an error wrapping
// ErrAlreadyApplied. If any op is invalid, nothing is applied and the error
// is an *OpError (wrapping ErrInvalidOp). See the package documentation for
// the merge rules.
func Apply(prev *Capsule, ops []Op, d Delta, txID string, opts ...Option) (*Capsule, error) {
	if txID == "" {
		return nil, fmt.Errorf("apply: empty transaction id: %w", ErrInvalidOp)
	}
	if prev != nil && slices.Contains(prev.Applied, txID) {
		return prev, fmt.Errorf("apply %s: %w", txID, ErrAlreadyApplied)
	}
	o := options{provenance: ProvenanceExtractor}
	for _, opt := range opts {
		opt(&o)
	}
	if !validProvenance(o.provenance) {
		return nil, fmt.Errorf("apply %s: unknown provenance %q: %w", txID, o.provenance, ErrInvalidOp)
	}
	if err := d.validate(); err != nil {
		return nil, fmt.Errorf("apply %s: %w: %w", txID, ErrInvalidOp, err)
	}
	if len(ops) > MaxOps {
		return nil, fmt.Errorf("apply %s: %d ops exceed %d: %w", txID, len(ops), MaxOps, ErrInvalidOp)
	}
	next := prev.Clone()
	if next == nil {
		next = New("", "")
	}
	next.SchemaVersion = SchemaVersion
	next.repairCounters() // ids stay unique even for hand-built capsules
	if w := o.watermark; w != nil && w.Turn < next.Watermark.Turn {
		return nil, fmt.Errorf("apply %s: watermark turn %d behind current %d: %w", txID, w.Turn, next.Watermark.Turn, ErrStale)
	}
	m := merger{c: next, d: d, provenance: o.provenance}
	for i, op := range ops {
		if err := m.apply(op); err != nil {
			return nil, fmt.Errorf("apply %s: %w", txID, &OpError{Index: i, Op: op.Op, Reason: err.Error()})
		}
	}
	next.pruneTombstones()
	next.Applied = append(next.Applied, txID)
	if n := len(next.Applied); n > MaxApplied {
		next.Applied = slices.Clone(next.Applied[n-MaxApplied:])
	}
	next.Revision++
	if o.watermark != nil {
		next.Watermark = *o.watermark
	}
	return next, nil
}

// Rebase applies a result computed against an older capsule (baseRevision,
// baseWatermark) onto current. Ids are never reused, so ops referring to ids
// of the base resolve to the same items in current; the merge rules then
// reject ops that conflict with newer state (e.g. superseding an item that is
// no longer active) and Rebase fails as a whole.
//
// The result is stale (ErrStale) when it covers nothing new: its delta ends
// before current's watermark, or current has advanced past the base watermark
// and already covers the delta's last turn. A replayed txID yields current and
// ErrAlreadyApplied.
func Rebase(current *Capsule, ops []Op, d Delta, txID string, baseRevision int64, baseWatermark Watermark, opts ...Option) (*Capsule, error) {
	var rev int64
	var wm Watermark
	if current != nil {
		if slices.Contains(current.Applied, txID) {
			return current, fmt.Errorf("rebase %s: %w", txID, ErrAlreadyApplied)
		}
		rev, wm = current.Revision, current.Watermark
	}
	switch {
	case baseRevision > rev:
		return nil, fmt.Errorf("rebase %s: base revision %d ahead of current %d: %w", txID, baseRevision, rev, ErrStale)
	case d.ToTurn < wm.Turn:
		return nil, fmt.Errorf("rebase %s: delta ends at turn %d, current watermark is %d: %w", txID, d.ToTurn, wm.Turn, ErrStale)
	case baseRevision < rev && wm.Turn > baseWatermark.Turn && d.ToTurn <= wm.Turn:
		return nil, fmt.Errorf("rebase %s: current already covers through turn %d: %w", txID, wm.Turn, ErrStale)
	}
	return Apply(current, ops, d, txID, opts...)
}

// merger applies ops to a private capsule.
type merger struct {
	c          *Capsule
	d          Delta
	provenance string
}

func (m *merger) apply(op Op) error {
	if op.Origin != "" {
		if !validProvenance(op.Origin) {
			return fmt.Errorf("unknown origin %q", op.Origin)
		}
		batch := m.provenance
		m.provenance = op.Origin
		defer func() { m.provenance = batch }()
	}
	op.Statement, op.Text = clean(op.Statement), clean(op.Text)
	op.Rationale, op.Reason, op.Tool = clean(op.Rationale), clean(op.Reason), clean(op.Tool)
	if op.Turn < m.d.FromTurn || op.Turn > m.d.ToTurn {
		return fmt.Errorf("turn %d outside delta [%d,%d]", op.Turn, m.d.FromTurn, m.d.ToTurn)
	}
	if changesIntent(op.Op) && !m.d.isUserTurn(op.Turn) {
		return fmt.Errorf("turn %d is not a user turn of the delta", op.Turn)
	}
	switch op.Op {
	case OpAddDecision:
		_, err := m.addDecision(op.Statement, op.Rationale, op.Reinstates, false, op.Turn)
		return err
	case OpSupersedeDecision:
		return m.supersedeDecision(op)
	case OpRejectDecision:
		i, err := m.activeDecision(op.ID, op.Turn)
		if err != nil {
			return err
		}
		d := &m.c.Decisions[i]
		d.Status, d.ClosedTurn, d.ClosedBy = StatusRejected, op.Turn, m.provenance
		return nil
	case OpRejectAlternative:
		return m.rejectAlternative(op)
	case OpAddConstraint:
		_, err := m.addConstraint(op.Text, op.Reinstates, false, op.Turn)
		return err
	case OpSupersedeConstraint, OpRemoveConstraint:
		return m.retireConstraint(op)
	case OpAddQuestion:
		n := Normalize(op.Text)
		if n == "" {
			return errors.New("empty text")
		}
		for _, q := range m.c.OpenQuestions {
			if q.Status == StatusOpen && Normalize(q.Text) == n {
				return nil // duplicate of an open question
			}
		}
		m.c.OpenQuestions = append(m.c.OpenQuestions, Question{
			ID: m.c.allocID("Q"), Text: op.Text, Status: StatusOpen, SourceTurn: op.Turn, Provenance: m.provenance,
		})
		return nil
	case OpResolveQuestion:
		for i := range m.c.OpenQuestions {
			q := &m.c.OpenQuestions[i]
			if q.ID != op.ID {
				continue
			}
			if q.Status != StatusOpen {
				return fmt.Errorf("%s is %s, not open", q.ID, q.Status)
			}
			q.Status, q.ClosedTurn, q.ClosedBy = StatusResolved, op.Turn, m.provenance
			return nil
		}
		return fmt.Errorf("unknown id %q", op.ID)
	case OpSetPlan:
		return m.setPlan(op)
	case OpSetStepStatus:
		return m.setStepStatus(op)
	default:
		return errors.New("unknown op kind")
	}
}

// checkRetired enforces "no resurrection" for new text n of kind 'D' or 'C':
// a match with a retired item of the same kind or with a rejected
// alternative needs explicit intent (a supersede op, or reinstates naming
// that item) and a user turn later than the one that retired it. It returns
// the rejected alternatives the new item overrides: those of the same text,
// and the one it reinstates ("use GORM after all" reinstating R1 "GORM"),
// which would otherwise stay listed as not to be used beside the decision
// that uses it.
func (m *merger) checkRetired(kind byte, n, reinstates string, explicit bool, turn int) ([]string, error) {
	var overridden []string
	if reinstates != "" {
		closed, ok := m.retiredTurn(kind, reinstates)
		if !ok {
			return nil, fmt.Errorf("reinstates %q: not a retired item of this kind", reinstates)
		}
		if turn <= closed {
			return nil, fmt.Errorf("reinstates %s retired at turn %d: needs a later user turn", reinstates, closed)
		}
		if strings.HasPrefix(reinstates, "R") {
			overridden = append(overridden, reinstates)
		}
	}
	allowed := func(id string, closed int) error {
		if !explicit && reinstates != id {
			return fmt.Errorf("text equals retired %s: re-deciding it needs reinstates=%s", id, id)
		}
		if turn <= closed {
			return fmt.Errorf("text equals %s retired at turn %d: needs a later user turn", id, closed)
		}
		return nil
	}
	if kind == 'D' {
		for _, d := range m.c.Decisions {
			if d.Status != StatusActive && Normalize(d.Statement) == n {
				if err := allowed(d.ID, d.ClosedTurn); err != nil {
					return nil, err
				}
			}
		}
	} else {
		for _, k := range m.c.Constraints {
			if k.Status != StatusActive && Normalize(k.Text) == n {
				if err := allowed(k.ID, k.ClosedTurn); err != nil {
					return nil, err
				}
			}
		}
	}
	for _, r := range m.c.Rejected {
		if Normalize(r.Text) == n && !slices.Contains(overridden, r.ID) {
			if err := allowed(r.ID, r.SourceTurn); err != nil {
				return nil, err
			}
			overridden = append(overridden, r.ID)
		}
	}
	return overridden, nil
}

// retiredTurn returns the turn that retired item id, if id names a retired
// decision (kind 'D'), constraint (kind 'C') or any rejected alternative.
func (m *merger) retiredTurn(kind byte, id string) (int, bool) {
	switch {
	case strings.HasPrefix(id, "R"):
		for _, r := range m.c.Rejected {
			if r.ID == id {
				return r.SourceTurn, true
			}
		}
	case kind == 'D' && strings.HasPrefix(id, "D"):
		for _, d := range m.c.Decisions {
			if d.ID == id && d.Status != StatusActive {
				return d.ClosedTurn, true
			}
		}
	case kind == 'C' && strings.HasPrefix(id, "C"):
		for _, k := range m.c.Constraints {
			if k.ID == id && k.Status != StatusActive {
				return k.ClosedTurn, true
			}
		}
	}
	return 0, false
}

func (m *merger) dropRejected(ids []string) {
	if len(ids) == 0 {
		return
	}
	m.c.Rejected = slices.DeleteFunc(m.c.Rejected, func(r Rejected) bool { return slices.Contains(ids, r.ID) })
}

// addDecision adds statement as an active decision, or returns the id of the
// active decision it duplicates.
func (m *merger) addDecision(statement, rationale, reinstates string, explicit bool, turn int) (string, error) {
	n := Normalize(statement)
	if n == "" {
		return "", errors.New("empty statement")
	}
	for i := range m.c.Decisions {
		d := &m.c.Decisions[i]
		if d.Status == StatusActive && Normalize(d.Statement) == n {
			if d.Rationale == "" {
				d.Rationale = rationale
			}
			return d.ID, nil
		}
	}
	overridden, err := m.checkRetired('D', n, reinstates, explicit, turn)
	if err != nil {
		return "", err
	}
	m.dropRejected(overridden)
	id := m.c.allocID("D")
	m.c.Decisions = append(m.c.Decisions, Decision{
		ID: id, Statement: statement, Status: StatusActive, Rationale: rationale,
		SourceTurn: turn, Provenance: m.provenance,
	})
	return id, nil
}

// activeDecision returns the index of active decision id, checking that turn
// is not older than the decision itself.
func (m *merger) activeDecision(id string, turn int) (int, error) {
	i := slices.IndexFunc(m.c.Decisions, func(d Decision) bool { return d.ID == id })
	if i < 0 {
		return 0, fmt.Errorf("unknown id %q", id)
	}
	d := m.c.Decisions[i]
	if d.Status != StatusActive {
		return 0, fmt.Errorf("%s is %s, not active", d.ID, d.Status)
	}
	if turn < d.SourceTurn {
		return 0, fmt.Errorf("turn %d precedes %s's turn %d", turn, d.ID, d.SourceTurn)
	}
	return i, nil
}

func (m *merger) supersedeDecision(op Op) error {
	i, err := m.activeDecision(op.ID, op.Turn)
	if err != nil {
		return err
	}
	n := Normalize(op.Statement)
	if n == "" {
		return errors.New("empty statement")
	}
	if n == Normalize(m.c.Decisions[i].Statement) {
		if m.c.Decisions[i].Rationale == "" {
			m.c.Decisions[i].Rationale = op.Rationale
		}
		return nil // same decision restated
	}
	newID, err := m.addDecision(op.Statement, op.Rationale, op.Reinstates, true, op.Turn)
	if err != nil {
		return err
	}
	d := &m.c.Decisions[i] // re-take: addDecision may have grown the slice
	d.Status, d.SupersededBy, d.ClosedTurn, d.ClosedBy = StatusSuperseded, newID, op.Turn, m.provenance
	return nil
}

func (m *merger) rejectAlternative(op Op) error {
	n := Normalize(op.Text)
	if n == "" {
		return errors.New("empty text")
	}
	for i := range m.c.Decisions {
		d := &m.c.Decisions[i]
		if d.Status == StatusActive && Normalize(d.Statement) == n {
			if op.Turn < d.SourceTurn {
				return fmt.Errorf("turn %d precedes %s's turn %d", op.Turn, d.ID, d.SourceTurn)
			}
			d.Status, d.ClosedTurn, d.ClosedBy = StatusRejected, op.Turn, m.provenance
		}
	}
	for i := range m.c.Constraints {
		k := &m.c.Constraints[i]
		if k.Status == StatusActive && Normalize(k.Text) == n {
			if op.Turn < k.SourceTurn {
				return fmt.Errorf("turn %d precedes %s's turn %d", op.Turn, k.ID, k.SourceTurn)
			}
			k.Status, k.ClosedTurn, k.ClosedBy = StatusSuperseded, op.Turn, m.provenance
		}
	}
	for i := range m.c.Rejected {
		r := &m.c.Rejected[i]
		if Normalize(r.Text) == n {
			if r.Reason == "" {
				r.Reason = op.Reason
			}
			return nil
		}
	}
	m.c.Rejected = append(m.c.Rejected, Rejected{
		ID: m.c.allocID("R"), Text: op.Text, Reason: op.Reason, SourceTurn: op.Turn, Provenance: m.provenance,
	})
	return nil
}

func (m *merger) addConstraint(text, reinstates string, explicit bool, turn int) (string, error) {
	n := Normalize(text)
	if n == "" {
		return "", errors.New("empty text")
	}
	if reinstates != "" && explicit {
		return "", errors.New("reinstates is not allowed here")
	}
	for _, k := range m.c.Constraints {
		if k.Status == StatusActive && Normalize(k.Text) == n {
			return k.ID, nil
		}
	}
	overridden, err := m.checkRetired('C', n, reinstates, explicit, turn)
	if err != nil {
		return "", err
	}
	m.dropRejected(overridden)
	id := m.c.allocID("C")
	m.c.Constraints = append(m.c.Constraints, Constraint{ID: id, Text: text, Status: StatusActive, SourceTurn: turn, Provenance: m.provenance})
	return id, nil
}

func (m *merger) retireConstraint(op Op) error {
	i := slices.IndexFunc(m.c.Constraints, func(k Constraint) bool { return k.ID == op.ID })
	if i < 0 {
		return fmt.Errorf("unknown id %q", op.ID)
	}
	k := m.c.Constraints[i]
	if k.Status != StatusActive {
		return fmt.Errorf("%s is %s, not active", k.ID, k.Status)
	}
	if op.Turn < k.SourceTurn {
		return fmt.Errorf("turn %d precedes %s's turn %d", op.Turn, k.ID, k.SourceTurn)
	}
	var newID string
	if op.Op == OpSupersedeConstraint {
		n := Normalize(op.Text)
		if n == "" {
			return errors.New("empty text")
		}
		if n == Normalize(k.Text) {
			return nil // same constraint restated
		}
		id, err := m.addConstraint(op.Text, "", true, op.Turn)
		if err != nil {
			return err
		}
		newID = id
	}
	c := &m.c.Constraints[i]
	c.Status, c.SupersededBy, c.ClosedTurn, c.ClosedBy = StatusSuperseded, newID, op.Turn, m.provenance
	return nil
}

func validStepStatus(s string) bool {
	return s == StepPending || s == StepInProgress || s == StepCompleted || s == StepCancelled
}

func unfinished(p *Plan) bool {
	return slices.ContainsFunc(p.Steps, func(s Step) bool { return s.Status == StepPending || s.Status == StepInProgress })
}

func (m *merger) setPlan(op Op) error {
	if op.Status != PlanAccepted && op.Status != PlanProvisional {
		return errors.New("plan status must be accepted or provisional")
	}
	switch op.Source {
	case SourceStructuredTool, SourcePlanMode, SourceConversation:
	default:
		return errors.New("unknown plan source")
	}
	if len(op.Steps) == 0 {
		return errors.New("plan has no steps")
	}
	steps := make([]Step, len(op.Steps))
	for i, s := range op.Steps {
		s.Text = clean(s.Text)
		if Normalize(s.Text) == "" {
			return fmt.Errorf("step %d has empty text", i+1)
		}
		if !validStepStatus(s.Status) {
			return fmt.Errorf("step %d has unknown status", i+1)
		}
		steps[i] = s
	}
	status := op.Status
	if status == PlanAccepted && op.Source == SourceConversation && !m.d.isUserTurn(op.Turn) {
		status = PlanProvisional // no evidence of user acceptance
	}
	if cur := m.c.LatestPlan; cur != nil {
		if op.Turn < cur.SourceTurn {
			return nil // an older plan never replaces a newer one
		}
		if status == PlanProvisional && cur.Status == PlanAccepted && unfinished(cur) {
			return nil // a proposal does not displace the accepted plan
		}
	}
	m.c.LatestPlan = &Plan{Status: status, Source: op.Source, Tool: op.Tool, Steps: steps, SourceTurn: op.Turn}
	return nil
}

func (m *merger) setStepStatus(op Op) error {
	p := m.c.LatestPlan
	if p == nil {
		return errors.New("no plan")
	}
	if !validStepStatus(op.Status) {
		return errors.New("unknown step status")
	}
	if op.Turn < p.SourceTurn {
		return nil // refers to an older plan
	}
	i := op.StepNumber - p.Condensed - 1
	if i < 0 || i >= len(p.Steps) {
		return fmt.Errorf("step %d out of range", op.StepNumber)
	}
	p.Steps[i].Status = op.Status
	return nil
}

// pruneTombstones keeps the newest MaxTombstones retired decisions and
// constraints and the newest MaxResolvedQuestions resolved questions.
func (c *Capsule) pruneTombstones() {
	type tomb struct {
		id     string
		closed int
	}
	var ts []tomb
	for _, d := range c.Decisions {
		if d.Status != StatusActive {
			ts = append(ts, tomb{d.ID, d.ClosedTurn})
		}
	}
	for _, k := range c.Constraints {
		if k.Status != StatusActive {
			ts = append(ts, tomb{k.ID, k.ClosedTurn})
		}
	}
	older := func(a, b tomb) int {
		if a.closed != b.closed {
			return a.closed - b.closed
		}
		if a.id[0] != b.id[0] {
			return int(a.id[0]) - int(b.id[0])
		}
		return idNum(a.id) - idNum(b.id)
	}
	if n := len(ts) - MaxTombstones; n > 0 {
		slices.SortFunc(ts, older)
		drop := make(map[string]bool, n)
		for _, t := range ts[:n] {
			drop[t.id] = true
		}
		c.Decisions = slices.DeleteFunc(c.Decisions, func(d Decision) bool { return drop[d.ID] })
		c.Constraints = slices.DeleteFunc(c.Constraints, func(k Constraint) bool { return drop[k.ID] })
		c.Dropped += n
	}
	var rq []tomb
	for _, q := range c.OpenQuestions {
		if q.Status == StatusResolved {
			rq = append(rq, tomb{q.ID, q.ClosedTurn})
		}
	}
	if n := len(rq) - MaxResolvedQuestions; n > 0 {
		slices.SortFunc(rq, older)
		drop := make(map[string]bool, n)
		for _, t := range rq[:n] {
			drop[t.id] = true
		}
		c.OpenQuestions = slices.DeleteFunc(c.OpenQuestions, func(q Question) bool { return drop[q.ID] })
		c.Dropped += n
	}
}

// ParseOps validates an extractor result against schema/ops.v2.json and
// decodes it. It is strict: unknown fields and op kinds, more than MaxOps ops
// or more than MaxOpsBytes bytes are rejected with an error wrapping
// ErrMalformed. Errors name JSON locations, never values.
func ParseOps(data []byte) ([]Op, error) {
	if len(data) > MaxOpsBytes {
		return nil, fmt.Errorf("parse ops: %d bytes exceed %d: %w", len(data), MaxOpsBytes, ErrMalformed)
	}
	doc, err := decodeJSON(data)
	if err != nil {
		return nil, fmt.Errorf("parse ops: not a single JSON value: %w", ErrMalformed)
	}
	if err := opsShape.check(doc); err != nil {
		return nil, fmt.Errorf("parse ops: %w: %w", err, ErrMalformed)
	}
	var out struct {
		Ops []Op `json:"ops"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf("parse ops: decode: %w", ErrMalformed)
	}
	if len(out.Ops) > MaxOps {
		return nil, fmt.Errorf("parse ops: %d ops exceed %d: %w", len(out.Ops), MaxOps, ErrMalformed)
	}
	return out.Ops, nil
}
