package extract

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/tether-dev/tether/internal/capsule"
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

// markerOps reads the active decisions of in.Prev and the user's turns of
// the prepared transcript.
func markerOps(in Input) []map[string]any {
	type decision struct{ id, text string }
	var active []decision
	if in.Prev != nil {
		for _, d := range in.Prev.Decisions {
			if d.Status == capsule.StatusActive {
				active = append(active, decision{d.ID, strings.ToLower(d.Statement)})
			}
		}
	}
	var ops []map[string]any
	// withReason adds an op whose text may carry a reason ("X — because Y").
	withReason := func(op, field, text, reasonField string, turn int) {
		item, why := splitReason(text)
		o := map[string]any{"op": op, field: item, "turn": turn}
		if why != "" {
			o[reasonField] = why
		}
		ops = append(ops, o)
	}
	for _, t := range userTurns(in) {
		for _, s := range markerSentence.Split(t.text, -1) {
			s = strings.Trim(strings.TrimSpace(s), "\"'“”`*_ ")
			s = strings.TrimRight(strings.TrimLeft(s, "-•> "), ".!?;: ")
			if s == "" {
				continue
			}
			if m := markerInsteadOf.FindStringSubmatch(s); m != nil {
				stmt := "Use " + m[1] + " instead of " + m[2]
				if m[3] != "" {
					stmt = "Use " + m[1] + " for " + m[3] + " (instead of " + m[2] + ")"
				}
				old := strings.ToLower(m[2])
				if i := slices.IndexFunc(active, func(d decision) bool { return strings.Contains(d.text, old) }); i >= 0 {
					ops = append(ops, map[string]any{"op": "supersede_decision", "id": active[i].id, "statement": stmt, "turn": t.n})
					active = slices.Delete(active, i, i+1)
					continue
				}
				// Decided and corrected within this batch: the earlier
				// statement never becomes active; it is kept as rejected.
				for i := len(ops) - 1; i >= 0; i-- {
					if st, _ := ops[i]["statement"].(string); ops[i]["op"] == "add_decision" && strings.Contains(strings.ToLower(st), old) {
						ops[i] = map[string]any{"op": "reject_alternative", "text": st, "reason": "replaced by: " + stmt, "turn": ops[i]["turn"]}
						break
					}
				}
				ops = append(ops, map[string]any{"op": "add_decision", "statement": stmt, "turn": t.n})
				continue
			}
			switch {
			case markerDecision.MatchString(s):
				withReason("add_decision", "statement", markerDecision.FindStringSubmatch(s)[1], "rationale", t.n)
			case markerGoWith.MatchString(s):
				withReason("add_decision", "statement", "Use "+markerGoWith.FindStringSubmatch(s)[1], "rationale", t.n)
			case markerAgainst.MatchString(s):
				withReason("reject_alternative", "text", markerAgainst.FindStringSubmatch(s)[1], "reason", t.n)
			case markerConstr.MatchString(s):
				ops = append(ops, map[string]any{"op": "add_constraint", "text": markerConstr.FindStringSubmatch(s)[1], "turn": t.n})
			case markerRejected.MatchString(s):
				withReason("reject_alternative", "text", markerRejected.FindStringSubmatch(s)[1], "reason", t.n)
			case markerDontUse.MatchString(s):
				withReason("reject_alternative", "text", markerDontUse.FindStringSubmatch(s)[1], "reason", t.n)
			case markerAlways.MatchString(s), markerAvoid.MatchString(s):
				ops = append(ops, map[string]any{"op": "add_constraint", "text": s, "turn": t.n})
			}
		}
	}
	return ops
}

// userTurn is one user message of the prepared transcript: its local
// number (the "N" of "mN") and its text.
type userTurn struct {
	n    int
	text string
}

// userTurns reads the user's messages out of the prepared transcript:
// "[mN user] …" lines and their indented continuation lines.
func userTurns(in Input) []userTurn {
	_, transcript, _ := strings.Cut(in.Text, "<transcript>")
	var turns []userTurn
	cur := -1
	for _, l := range strings.Split(transcript, "\n") {
		if m := markerTurn.FindStringSubmatch(l); m != nil && in.Users["m"+m[1]] {
			n, _ := strconv.Atoi(m[1])
			turns = append(turns, userTurn{n, m[2]})
			cur = len(turns) - 1
			continue
		}
		switch {
		case strings.HasPrefix(l, "[m"):
			cur = -1 // another speaker's message
		case cur >= 0 && strings.HasPrefix(l, "  "):
			turns[cur].text += "\n" + strings.TrimSpace(l)
		}
	}
	return turns
}

// splitReason splits "GORM — we write SQL by hand" into the item and its
// reason.
func splitReason(s string) (item, reason string) {
	if loc := markerReason.FindStringIndex(s); loc != nil {
		return strings.TrimRight(s[:loc[0]], ",;: "), strings.TrimSpace(s[loc[1]:])
	}
	return strings.TrimRight(s, ",;: "), ""
}
