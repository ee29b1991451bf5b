package capsule

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

const header = "Continuity state kept by the proxy for this conversation. " +
	"The plan, decisions and constraints below are the user's settled choices: treat them as authoritative and keep this block intact. " +
	"Never propose anything listed under REJECTED."

// Render returns the capsule as one delimited, model-friendly block:
//
//	<continuity-capsule revision="7" digest="ab12cd34ef56">
//	…header…
//	ACCEPTED PLAN (source: update_plan):
//	1. [done] …
//	ACTIVE DECISIONS:
//	- D1: … (why: …)
//	CONSTRAINTS:
//	- C1: …
//	REJECTED — do not propose or use again:
//	- R1: … (reason: …)
//	- D2: … (superseded by D4)
//	NO LONGER IN FORCE — rules the user lifted or replaced; do not apply them:
//	- C2: … (lifted by the user)
//	OPEN QUESTIONS:
//	- Q1: …
//	ANSWERED QUESTIONS (do not ask again):
//	- Q2: …
//	</continuity-capsule>
//
// Empty sections are omitted; a provisional plan is headed "PROPOSED PLAN
// (not yet accepted by the user)". Item text is kept on one line and any
// text that looks like a capsule tag is defused, so the block always parses
// back with [Find] and [Strip]. The output is deterministic.
func Render(c *Capsule) string {
	if c == nil {
		c = &Capsule{}
	}
	c = canonical(c)
	return renderRef(c, digestOf(c), "")
}

// placeholderDigest has the length of a real digest; token estimates do not
// depend on the digest's value, so Bound renders with it.
const placeholderDigest = "000000000000"

// renderRef renders a canonical capsule with the given digest and epoch
// token (none when ref is "").
func renderRef(c *Capsule, digest, ref string) string {
	var b strings.Builder
	b.WriteString(openTag)
	if ref != "" {
		fmt.Fprintf(&b, " ref=\"%s\"", ref)
	}
	fmt.Fprintf(&b, " revision=\"%d\" digest=\"%s\">\n%s\n", c.Revision, digest, header)
	if p := c.LatestPlan; p != nil {
		src := cmp.Or(p.Tool, p.Source)
		if p.Status == PlanAccepted {
			fmt.Fprintf(&b, "ACCEPTED PLAN (source: %s):\n", safe(src))
		} else {
			fmt.Fprintf(&b, "PROPOSED PLAN (not yet accepted by the user; source: %s):\n", safe(src))
		}
		switch p.Condensed {
		case 0:
		case 1:
			b.WriteString("(step 1 done)\n")
		default:
			fmt.Fprintf(&b, "(steps 1-%d done)\n", p.Condensed)
		}
		for i, s := range p.Steps {
			fmt.Fprintf(&b, "%d. [%s] %s\n", p.Condensed+i+1, stepLabel(s.Status), safe(s.Text))
		}
	}
	section := func(title string, lines []string) {
		if len(lines) == 0 {
			return
		}
		b.WriteString(title)
		b.WriteString(":\n")
		for _, l := range lines {
			b.WriteString("- ")
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	var active, retired, cons, lifted, open, answered []string
	// A decision or rule taken back ("revert to Jest for tests") is in force
	// again under a new id; its retired copy is not listed beside it, which
	// would tell the agent both to use it and never to use it again.
	inForce := map[string]bool{}
	for _, d := range c.Decisions {
		if d.Status == StatusActive {
			inForce[Normalize(d.Statement)] = true
		}
	}
	for _, k := range c.Constraints {
		if k.Status == StatusActive {
			inForce[Normalize(k.Text)] = true
		}
	}
	for _, d := range c.Decisions {
		switch {
		case d.Status != StatusActive && inForce[Normalize(d.Statement)]:
			// taken back: listed once, where it is in force
		case d.Status == StatusActive:
			l := d.ID + ": " + safe(d.Statement)
			if d.Rationale != "" {
				l += " (why: " + safe(d.Rationale) + ")"
			}
			active = append(active, l)
		case d.Status == StatusSuperseded:
			retired = append(retired, d.ID+": "+safe(d.Statement)+replacedBy(d.SupersededBy))
		default:
			retired = append(retired, d.ID+": "+safe(d.Statement)+" (rejected by the user)")
		}
	}
	for _, k := range c.Constraints {
		if k.Status == StatusActive {
			cons = append(cons, k.ID+": "+safe(k.Text))
		} else if inForce[Normalize(k.Text)] {
			continue
		} else if k.SupersededBy != "" {
			lifted = append(lifted, k.ID+": "+safe(k.Text)+replacedBy(k.SupersededBy))
		} else {
			// Not under REJECTED: "do not use again" of "Never use lodash"
			// reads as one more reason to avoid what the user allowed.
			lifted = append(lifted, k.ID+": "+safe(k.Text)+" (lifted by the user)")
		}
	}
	var rejected []string
	for _, r := range c.Rejected {
		l := r.ID + ": " + safe(r.Text)
		if r.Reason != "" {
			l += " (reason: " + safe(r.Reason) + ")"
		}
		rejected = append(rejected, l)
	}
	for _, q := range c.OpenQuestions {
		if q.Status == StatusOpen {
			open = append(open, q.ID+": "+safe(q.Text))
		} else {
			answered = append(answered, q.ID+": "+safe(q.Text))
		}
	}
	section("ACTIVE DECISIONS", active)
	section("CONSTRAINTS", cons)
	section("REJECTED — do not propose or use again", append(rejected, retired...))
	section("NO LONGER IN FORCE — rules the user lifted or replaced; do not apply them", lifted)
	section("OPEN QUESTIONS", open)
	section("ANSWERED QUESTIONS (do not ask again)", answered)
	if c.Dropped > 0 {
		fmt.Fprintf(&b, "(%d lower-priority items omitted to stay within budget)\n", c.Dropped)
	}
	b.WriteString(closeTag)
	return b.String()
}

func replacedBy(id string) string {
	if id == "" {
		return " (superseded)"
	}
	return " (superseded by " + id + ")"
}

func stepLabel(s string) string {
	switch s {
	case StepCompleted:
		return "done"
	case StepInProgress:
		return "in progress"
	case StepCancelled:
		return "cancelled"
	default:
		return "pending"
	}
}

// safe keeps text on one line and defuses anything that would open or close
// a capsule block.
func safe(s string) string {
	plain := len(s) == 0 || (s[0] != ' ' && s[len(s)-1] != ' ')
	for i := 0; plain && i < len(s); i++ {
		ch := s[i]
		plain = ch >= 0x20 && ch < 0x7f && ch != '<' && (ch != ' ' || s[i-1] != ' ')
	}
	if plain {
		return s
	}
	s = clean(s)
	for _, tag := range []string{openTag, "</continuity-capsule"} {
		for {
			i := indexFold(s, tag, 0)
			if i < 0 {
				break
			}
			s = s[:i] + "‹" + s[i+1:]
		}
	}
	return s
}

// Digest returns the first 12 hex digits of the SHA-256 of the capsule's
// canonical facts: plan, decisions, constraints, rejected alternatives and
// questions. Revision, watermark, applied ids, identity and counters are
// excluded, so the same facts always have the same digest.
func Digest(c *Capsule) string {
	if c == nil {
		c = &Capsule{}
	}
	return digestOf(canonical(c))
}

func digestOf(c *Capsule) string {
	facts := struct {
		V           int          `json:"v"`
		Plan        *Plan        `json:"plan,omitempty"`
		Decisions   []Decision   `json:"decisions,omitempty"`
		Constraints []Constraint `json:"constraints,omitempty"`
		Rejected    []Rejected   `json:"rejected,omitempty"`
		Questions   []Question   `json:"questions,omitempty"`
	}{SchemaVersion, c.LatestPlan, c.Decisions, c.Constraints, c.Rejected, c.OpenQuestions}
	b, err := json.Marshal(facts)
	if err != nil {
		panic("capsule: marshal facts: " + err.Error()) // plain structs of strings and ints
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6])
}

// canonical returns c with items sorted by id and empty collections nil. It
// copies only when something must change.
func canonical(c *Capsule) *Capsule {
	byID := func(a, b string) int { return idNum(a) - idNum(b) }
	sorted := slices.IsSortedFunc(c.Decisions, func(a, b Decision) int { return byID(a.ID, b.ID) }) &&
		slices.IsSortedFunc(c.Constraints, func(a, b Constraint) int { return byID(a.ID, b.ID) }) &&
		slices.IsSortedFunc(c.Rejected, func(a, b Rejected) int { return byID(a.ID, b.ID) }) &&
		slices.IsSortedFunc(c.OpenQuestions, func(a, b Question) int { return byID(a.ID, b.ID) })
	empties := (c.Applied != nil && len(c.Applied) == 0) || (c.NextIDs != nil && len(c.NextIDs) == 0) ||
		(c.Decisions != nil && len(c.Decisions) == 0) || (c.Constraints != nil && len(c.Constraints) == 0) ||
		(c.Rejected != nil && len(c.Rejected) == 0) || (c.OpenQuestions != nil && len(c.OpenQuestions) == 0)
	if sorted && !empties {
		return c
	}
	n := c.Clone()
	slices.SortStableFunc(n.Decisions, func(a, b Decision) int { return byID(a.ID, b.ID) })
	slices.SortStableFunc(n.Constraints, func(a, b Constraint) int { return byID(a.ID, b.ID) })
	slices.SortStableFunc(n.Rejected, func(a, b Rejected) int { return byID(a.ID, b.ID) })
	slices.SortStableFunc(n.OpenQuestions, func(a, b Question) int { return byID(a.ID, b.ID) })
	if len(n.Applied) == 0 {
		n.Applied = nil
	}
	if len(n.NextIDs) == 0 {
		n.NextIDs = nil
	}
	if len(n.Decisions) == 0 {
		n.Decisions = nil
	}
	if len(n.Constraints) == 0 {
		n.Constraints = nil
	}
	if len(n.Rejected) == 0 {
		n.Rejected = nil
	}
	if len(n.OpenQuestions) == 0 {
		n.OpenQuestions = nil
	}
	return n
}

// Encode returns the canonical JSON of c: fields in declaration order, items
// sorted by id, map keys sorted, no HTML escaping, no trailing newline.
func Encode(c *Capsule) ([]byte, error) {
	if c == nil {
		return nil, fmt.Errorf("encode capsule: nil capsule")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(canonical(c)); err != nil {
		return nil, fmt.Errorf("encode capsule: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// maxCapsuleBytes bounds what Decode accepts.
const maxCapsuleBytes = 1 << 20

// Decode parses and validates a stored capsule. An unknown or missing
// schema_version yields an error wrapping ErrUnknownSchema; anything else that
// is not a valid v1 capsule yields ErrCorrupt.
func Decode(data []byte) (*Capsule, error) {
	if len(data) > maxCapsuleBytes {
		return nil, fmt.Errorf("decode capsule: %d bytes exceed %d: %w", len(data), maxCapsuleBytes, ErrCorrupt)
	}
	var head struct {
		SchemaVersion *json.Number `json:"schema_version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("decode capsule: %w", ErrCorrupt)
	}
	if head.SchemaVersion == nil {
		return nil, fmt.Errorf("decode capsule: missing schema_version: %w", ErrUnknownSchema)
	}
	if v, err := head.SchemaVersion.Int64(); err != nil || v != SchemaVersion {
		return nil, fmt.Errorf("decode capsule: schema_version %s: %w", head.SchemaVersion.String(), ErrUnknownSchema)
	}
	doc, err := decodeJSON(data)
	if err != nil {
		return nil, fmt.Errorf("decode capsule: %w", ErrCorrupt)
	}
	if err := capsuleShape.check(doc); err != nil {
		return nil, fmt.Errorf("decode capsule: %w: %w", err, ErrCorrupt)
	}
	var c Capsule
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("decode capsule: %w", ErrCorrupt)
	}
	seen := make(map[string]bool)
	check := func(id string) error {
		if seen[id] {
			return fmt.Errorf("decode capsule: duplicate id %s: %w", id, ErrCorrupt)
		}
		seen[id] = true
		return nil
	}
	for _, d := range c.Decisions {
		if err := check(d.ID); err != nil {
			return nil, err
		}
		if d.SupersededBy != "" && d.Status != StatusSuperseded {
			return nil, fmt.Errorf("decode capsule: %s has superseded_by but is %s: %w", d.ID, d.Status, ErrCorrupt)
		}
	}
	for _, k := range c.Constraints {
		if err := check(k.ID); err != nil {
			return nil, err
		}
	}
	for _, r := range c.Rejected {
		if err := check(r.ID); err != nil {
			return nil, err
		}
	}
	for _, q := range c.OpenQuestions {
		if err := check(q.ID); err != nil {
			return nil, err
		}
	}
	c.repairCounters()
	return canonical(&c), nil
}
