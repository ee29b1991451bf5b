package extract

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/tether-dev/tether/internal/dialect"
)

// MarkersCaller is the built-in extractor (route config.MarkersRoute): no
// model call, no cost. It reads only the user's own turns of the prepared
// input and turns explicitly marked statements into operations:
//
//	Decision: use PostgreSQL, not MongoDB.      → add_decision
//	Let's go with SQLite.                       → add_decision ("Use SQLite")
//	Constraint: never change the public API.    → add_constraint
//	Never/Always/Avoid … (a sentence of its own) → add_constraint
//	Rejected: GORM — we write SQL by hand.      → reject_alternative (reason after "—" or "because")
//	Don't use Kafka. We ruled out gRPC.         → reject_alternative
//	Actually, use Redis instead of Memcached.   → supersede_decision of the active decision naming Memcached
//
// Prose without such markers is left to a model extractor. The output goes
// through the same validation and merge as a model's.
type MarkersCaller struct{}

var (
	markerTurn      = regexp.MustCompile(`^\[m(\d+) user\] ?(.*)$`)
	markerItem      = regexp.MustCompile(`^- (D\d+): (.*)$`)
	markerSentence  = regexp.MustCompile(`(?:[.!?;]+\s+|\n+)`)
	markerDecision  = regexp.MustCompile(`(?i)^(?:decision|decided|we decided(?: to)?|final decision)\s*[:\-–—]?\s+(.+)$`)
	markerGoWith    = regexp.MustCompile(`(?i)^(?:let's|we'll|we will|we're going to|we are going to)\s+(?:go with|stick with|settle on)\s+(.+)$`)
	markerAgainst   = regexp.MustCompile(`(?i)^(?:we decided against|decided against|we ruled out|ruled out|we rejected)\s+(.+)$`)
	markerAvoid     = regexp.MustCompile(`(?i)^avoid\s+\S.+$`)
	markerConstr    = regexp.MustCompile(`(?i)^(?:constraint|requirement|rule|hard rule)\s*[:\-–—]\s*(.+)$`)
	markerAlways    = regexp.MustCompile(`(?i)^(?:never|always|must never|must always)\s+\S.+$`)
	markerRejected  = regexp.MustCompile(`(?i)^(?:rejected|reject|not|no)\s*[:\-–—]\s*(.+)$`)
	markerDontUse   = regexp.MustCompile(`(?i)^(?:do not|don't|we won't|we will not|never) (?:use|adopt|pick|choose)\s+(.+)$`)
	markerInsteadOf = regexp.MustCompile(`(?i)^(?:actually,?\s+|no,?\s+|instead,?\s+|change of plan:?\s+|correction:?\s+)?(?:let's\s+|we'll\s+|we will\s+)?(?:use|switch to|go with|move to)\s+(.+?)\s+instead of\s+(.+?)(?:\s+for\s+(.+?))?$`)
	markerReason    = regexp.MustCompile(`\s+(?:—|–|--|because|since)\s+`)
)

// Extract implements Caller.
func (MarkersCaller) Extract(ctx context.Context, in Input, prompt string) ([]byte, dialect.Usage, error) {
	if err := ctx.Err(); err != nil {
		return nil, dialect.Usage{}, err
	}
	ops := markerOps(in)
	raw, err := json.Marshal(map[string]any{"ops": ops})
	return raw, dialect.Usage{}, err
}

// markerOps reads the capsule's active decisions and the user's turns out
// of the prepared input text.
func markerOps(in Input) []map[string]any {
	capsulePart, transcript, _ := strings.Cut(in.Text, "<transcript>")
	type decision struct{ id, text string }
	var active []decision
	for _, l := range strings.Split(capsulePart, "\n") {
		if m := markerItem.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			active = append(active, decision{m[1], m[2]})
		}
	}
	type turn struct {
		n    int
		text string
	}
	var turns []turn
	cur := -1
	for _, l := range strings.Split(transcript, "\n") {
		if m := markerTurn.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			if !in.Users["m"+m[1]] {
				cur = -1
				continue
			}
			turns = append(turns, turn{n, m[2]})
			cur = len(turns) - 1
			continue
		}
		if strings.HasPrefix(l, "[m") {
			cur = -1 // another speaker's message
			continue
		}
		if cur >= 0 && strings.HasPrefix(l, "  ") {
			turns[cur].text += "\n" + strings.TrimSpace(l)
		}
	}

	var ops []map[string]any
	added := map[string]int{} // lower-cased statement → index in ops (decisions added in this batch)
	for _, t := range turns {
		for _, s := range markerSentence.Split(t.text, -1) {
			s = strings.Trim(strings.TrimSpace(s), "\"'“”`*_ ")
			s = strings.TrimRight(strings.TrimLeft(s, "-•> "), ".!?;: ")
			if s == "" {
				continue
			}
			switch {
			case markerInsteadOf.MatchString(s):
				m := markerInsteadOf.FindStringSubmatch(s)
				stmt := "Use " + m[1] + " instead of " + m[2]
				if m[3] != "" {
					stmt = "Use " + m[1] + " for " + m[3] + " (instead of " + m[2] + ")"
				}
				old := strings.ToLower(m[2])
				if i := slices.IndexFunc(active, func(d decision) bool { return strings.Contains(strings.ToLower(d.text), old) }); i >= 0 {
					ops = append(ops, map[string]any{"op": "supersede_decision", "id": active[i].id, "statement": stmt, "turn": t.n})
					active = slices.Delete(active, i, i+1)
					break
				}
				// Decided and corrected within this batch: the earlier
				// statement never becomes active; it is kept as rejected.
				latest := -1
				for k, i := range added {
					if strings.Contains(k, old) && i > latest {
						latest = i
					}
				}
				if latest >= 0 {
					delete(added, strings.ToLower(ops[latest]["statement"].(string)))
					ops[latest] = map[string]any{"op": "reject_alternative", "text": ops[latest]["statement"], "reason": "replaced by: " + stmt, "turn": ops[latest]["turn"]}
				}
				added[strings.ToLower(stmt)] = len(ops)
				ops = append(ops, map[string]any{"op": "add_decision", "statement": stmt, "turn": t.n})
			case markerDecision.MatchString(s):
				stmt := markerDecision.FindStringSubmatch(s)[1]
				stmt, why := splitReason(stmt)
				op := map[string]any{"op": "add_decision", "statement": stmt, "turn": t.n}
				if why != "" {
					op["rationale"] = why
				}
				added[strings.ToLower(stmt)] = len(ops)
				ops = append(ops, op)
			case markerGoWith.MatchString(s):
				stmt, why := splitReason("Use " + markerGoWith.FindStringSubmatch(s)[1])
				op := map[string]any{"op": "add_decision", "statement": stmt, "turn": t.n}
				if why != "" {
					op["rationale"] = why
				}
				added[strings.ToLower(stmt)] = len(ops)
				ops = append(ops, op)
			case markerAgainst.MatchString(s):
				alt, why := splitReason(markerAgainst.FindStringSubmatch(s)[1])
				op := map[string]any{"op": "reject_alternative", "text": alt, "turn": t.n}
				if why != "" {
					op["reason"] = why
				}
				ops = append(ops, op)
			case markerConstr.MatchString(s):
				ops = append(ops, map[string]any{"op": "add_constraint", "text": markerConstr.FindStringSubmatch(s)[1], "turn": t.n})
			case markerRejected.MatchString(s), markerDontUse.MatchString(s):
				m := markerRejected.FindStringSubmatch(s)
				if m == nil {
					m = markerDontUse.FindStringSubmatch(s)
				}
				alt, why := splitReason(m[1])
				op := map[string]any{"op": "reject_alternative", "text": alt, "turn": t.n}
				if why != "" {
					op["reason"] = why
				}
				ops = append(ops, op)
			case markerAlways.MatchString(s), markerAvoid.MatchString(s):
				ops = append(ops, map[string]any{"op": "add_constraint", "text": s, "turn": t.n})
			}
		}
	}
	return ops
}

// splitReason splits "GORM — we write SQL by hand" into the item and its
// reason.
func splitReason(s string) (item, reason string) {
	if loc := markerReason.FindStringIndex(s); loc != nil {
		return strings.TrimRight(s[:loc[0]], ",;: "), strings.TrimSpace(s[loc[1]:])
	}
	return strings.TrimRight(s, ",;: "), ""
}
