package capsule

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/tether-dev/tether/internal/tokens"
)

// SchemaVersion is the capsule schema version this package reads and writes.
const SchemaVersion = 1

// Bounds kept by Apply and ParseOps.
const (
	MaxApplied           = 64       // transaction ids remembered for idempotency
	MaxTombstones        = 16       // superseded/rejected decisions + superseded constraints
	MaxResolvedQuestions = 8        // resolved questions kept until Bound drops them
	MaxOps               = 64       // ops accepted in one extractor result
	MaxOpsBytes          = 64 << 10 // size of one extractor result
)

// Sentinel errors. Errors returned by this package wrap one of them.
var (
	ErrInvalidOp      = errors.New("invalid capsule op")
	ErrMalformed      = errors.New("malformed extractor output")
	ErrAlreadyApplied = errors.New("transaction already applied")
	ErrStale          = errors.New("stale capsule update")
	ErrUnknownSchema  = errors.New("unknown capsule schema version")
	ErrCorrupt        = errors.New("corrupt capsule")
)

// Statuses, sources and provenances.
const (
	StatusActive     = "active"
	StatusSuperseded = "superseded"
	StatusRejected   = "rejected"
	StatusOpen       = "open"
	StatusResolved   = "resolved"

	PlanAccepted    = "accepted"
	PlanProvisional = "provisional"

	SourceStructuredTool = "structured_tool"
	SourcePlanMode       = "plan_mode"
	SourceConversation   = "conversation"

	StepPending    = "pending"
	StepInProgress = "in_progress"
	StepCompleted  = "completed"
	StepCancelled  = "cancelled"

	// Provenance says where an item (or the op that closed it) came from:
	// the harness's plan tool (structured), a statement the user marked
	// and the built-in extractor read (marked), or the model extractor's
	// reading (model). ProvenanceExtractor is what capsules written before
	// the two extractors were told apart say.
	ProvenanceExtractor  = "extractor"
	ProvenanceStructured = "structured"
	ProvenanceMarked     = "marked"
	ProvenanceModel      = "model"
)

// validProvenance reports whether p is a provenance Apply records.
func validProvenance(p string) bool {
	switch p {
	case ProvenanceExtractor, ProvenanceStructured, ProvenanceMarked, ProvenanceModel:
		return true
	}
	return false
}

// Capsule is the continuity state of one A-leg. Field order is the canonical
// JSON order; see [Encode].
type Capsule struct {
	SchemaVersion int       `json:"schema_version"`
	Session       string    `json:"session,omitempty"`
	ALeg          string    `json:"a_leg,omitempty"`
	Revision      int64     `json:"revision"`
	Watermark     Watermark `json:"watermark"`
	// Applied holds the newest MaxApplied transaction ids, newest last.
	Applied []string `json:"applied,omitempty"`
	// NextIDs is the next number per id prefix ("D", "C", "R", "Q").
	NextIDs       map[string]int `json:"next_ids,omitempty"`
	LatestPlan    *Plan          `json:"latest_plan,omitempty"`
	Decisions     []Decision     `json:"decisions,omitempty"`
	Constraints   []Constraint   `json:"constraints,omitempty"`
	Rejected      []Rejected     `json:"rejected_alternatives,omitempty"`
	OpenQuestions []Question     `json:"open_questions,omitempty"`
	// Dropped counts items removed by bounds (tombstone pruning and Bound).
	Dropped int `json:"dropped,omitempty"`
}

// Watermark is how far into the A-leg's transcript the capsule is current.
type Watermark struct {
	Turn   int    `json:"turn"`
	Digest string `json:"digest,omitempty"`
}

// Plan is the latest plan.
type Plan struct {
	Status string `json:"status"` // accepted | provisional
	Source string `json:"source"` // structured_tool | plan_mode | conversation
	Tool   string `json:"tool,omitempty"`
	Steps  []Step `json:"steps"`
	// Condensed counts completed or cancelled steps removed by Bound; they
	// are rendered as one line and shift step numbering by this amount.
	Condensed  int `json:"condensed_steps,omitempty"`
	SourceTurn int `json:"source_turn"`
}

// Step is one plan step.
type Step struct {
	Text   string `json:"text"`
	Status string `json:"status"` // pending | in_progress | completed | cancelled
}

// Decision is an explicit user decision.
type Decision struct {
	ID           string `json:"id"`
	Statement    string `json:"statement"`
	Status       string `json:"status"` // active | superseded | rejected
	Rationale    string `json:"rationale,omitempty"`
	SupersededBy string `json:"superseded_by,omitempty"`
	SourceTurn   int    `json:"source_turn"`
	// ClosedTurn is the user turn that superseded or rejected the decision.
	ClosedTurn int    `json:"closed_turn,omitempty"`
	Provenance string `json:"provenance,omitempty"` // structured | marked | model (extractor: older capsules)
	// ClosedBy is the provenance of the op that superseded or rejected it.
	ClosedBy string `json:"closed_by,omitempty"`
}

// Constraint is a user constraint or preference.
type Constraint struct {
	ID           string `json:"id"`
	Text         string `json:"text"`
	Status       string `json:"status"` // active | superseded
	SupersededBy string `json:"superseded_by,omitempty"`
	SourceTurn   int    `json:"source_turn"`
	ClosedTurn   int    `json:"closed_turn,omitempty"`
	Provenance   string `json:"provenance,omitempty"`
	ClosedBy     string `json:"closed_by,omitempty"`
}

// Rejected is an alternative the user rejected; it must not be proposed again.
type Rejected struct {
	ID         string `json:"id"`
	Text       string `json:"text"`
	Reason     string `json:"reason,omitempty"`
	SourceTurn int    `json:"source_turn"`
	Provenance string `json:"provenance,omitempty"`
}

// Question is an open question or blocker.
type Question struct {
	ID         string `json:"id"`
	Text       string `json:"text"`
	Status     string `json:"status"` // open | resolved
	SourceTurn int    `json:"source_turn"`
	ClosedTurn int    `json:"closed_turn,omitempty"`
	Provenance string `json:"provenance,omitempty"`
	ClosedBy   string `json:"closed_by,omitempty"`
}

// Stats are content-free counts for metrics and logs.
type Stats struct {
	ActiveDecisions int
	Steps           int // steps in the latest plan (excluding condensed ones)
	PendingSteps    int // pending + in_progress
	Constraints     int // active constraints
	Rejected        int // items rendered as "do not use": rejected alternatives + retired decisions and constraints
	Questions       int // open questions
	Tokens          int // tokens.Estimate(Render(c))
}

// New returns an empty capsule for one A-leg.
func New(session, aLeg string) *Capsule {
	return &Capsule{SchemaVersion: SchemaVersion, Session: session, ALeg: aLeg}
}

// Empty reports whether the capsule carries no continuity facts (a nil
// capsule is empty). Revision, watermark and applied ids are not facts.
func (c *Capsule) Empty() bool {
	return c == nil || (c.LatestPlan == nil && len(c.Decisions) == 0 && len(c.Constraints) == 0 &&
		len(c.Rejected) == 0 && len(c.OpenQuestions) == 0)
}

// ActiveDecisions returns copies of the active decisions in id order.
func (c *Capsule) ActiveDecisions() []Decision {
	if c == nil {
		return nil
	}
	var out []Decision
	for _, d := range c.Decisions {
		if d.Status == StatusActive {
			out = append(out, d)
		}
	}
	return out
}

// Stats returns content-free counts.
func (c *Capsule) Stats() Stats {
	var s Stats
	if c == nil {
		return s
	}
	for _, d := range c.Decisions {
		if d.Status == StatusActive {
			s.ActiveDecisions++
		} else {
			s.Rejected++
		}
	}
	for _, k := range c.Constraints {
		if k.Status == StatusActive {
			s.Constraints++
		} else {
			s.Rejected++
		}
	}
	s.Rejected += len(c.Rejected)
	for _, q := range c.OpenQuestions {
		if q.Status == StatusOpen {
			s.Questions++
		}
	}
	if p := c.LatestPlan; p != nil {
		s.Steps = len(p.Steps)
		for _, st := range p.Steps {
			if st.Status == StepPending || st.Status == StepInProgress {
				s.PendingSteps++
			}
		}
	}
	s.Tokens = tokens.Estimate(Render(c))
	return s
}

// Clone returns a deep copy (nil for nil).
func (c *Capsule) Clone() *Capsule {
	if c == nil {
		return nil
	}
	n := *c
	n.Applied = slices.Clone(c.Applied)
	if c.NextIDs != nil {
		n.NextIDs = make(map[string]int, len(c.NextIDs))
		for k, v := range c.NextIDs {
			n.NextIDs[k] = v
		}
	}
	if c.LatestPlan != nil {
		p := *c.LatestPlan
		p.Steps = slices.Clone(p.Steps)
		n.LatestPlan = &p
	}
	n.Decisions = slices.Clone(c.Decisions)
	n.Constraints = slices.Clone(c.Constraints)
	n.Rejected = slices.Clone(c.Rejected)
	n.OpenQuestions = slices.Clone(c.OpenQuestions)
	return &n
}

// Normalize folds case, whitespace and punctuation so that "Use Postgres."
// and "use  postgres" compare equal: letters and digits separated by single
// spaces. Two texts with the same normal form are the same fact.
func Normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	sep := false
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if sep && b.Len() > 0 {
				b.WriteByte(' ')
			}
			sep = false
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		sep = true
	}
	return b.String()
}

// clean trims text, collapses whitespace runs (including newlines) to one
// space and removes control characters, so stored text renders on one line.
func clean(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			space = true
		case unicode.IsControl(r):
			// dropped
		default:
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		}
	}
	return b.String()
}

// idNum returns the numeric part of an id like "D12" (0 if malformed).
func idNum(id string) int {
	if len(id) < 2 {
		return 0
	}
	n, err := strconv.Atoi(id[1:])
	if err != nil || n < 1 {
		return 0
	}
	return n
}

// allocID returns the next id for prefix and advances the counter.
func (c *Capsule) allocID(prefix string) string {
	if c.NextIDs == nil {
		c.NextIDs = make(map[string]int, 4)
	}
	n := max(c.NextIDs[prefix], 1)
	c.NextIDs[prefix] = n + 1
	return prefix + strconv.Itoa(n)
}

// repairCounters makes every counter greater than the highest id in use.
func (c *Capsule) repairCounters() {
	bump := func(prefix, id string) {
		if n := idNum(id); n > 0 {
			if c.NextIDs == nil {
				c.NextIDs = make(map[string]int, 4)
			}
			if c.NextIDs[prefix] <= n {
				c.NextIDs[prefix] = n + 1
			}
		}
	}
	for _, d := range c.Decisions {
		bump("D", d.ID)
	}
	for _, k := range c.Constraints {
		bump("C", k.ID)
	}
	for _, r := range c.Rejected {
		bump("R", r.ID)
	}
	for _, q := range c.OpenQuestions {
		bump("Q", q.ID)
	}
}
