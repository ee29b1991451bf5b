package extract

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tether-dev/tether/internal/capsule"
)

// A model extractor is untrusted: what it writes into the capsule is shown
// to the coding model as the user's settled choices. Ground keeps only what
// the transcript it was given supports, and Merge keeps the user's plainly
// stated choices (the built-in extractor's reading) beside a model result.

var transcriptTurn = regexp.MustCompile(`^\[m(\d+) (user|assistant|tool|context)\] ?(.*)$`)

// turnTexts returns the text of every message of the prepared transcript by
// local number, and the role of each.
func turnTexts(in Input) (map[int]string, map[int]string) {
	_, transcript, _ := strings.Cut(in.Text, "<transcript>")
	transcript, _, _ = strings.Cut(transcript, "</transcript>")
	texts, roles := map[int]string{}, map[int]string{}
	cur := -1
	for _, l := range strings.Split(transcript, "\n") {
		if m := transcriptTurn.FindStringSubmatch(l); m != nil {
			cur, _ = strconv.Atoi(m[1])
			roles[cur] = m[2]
			texts[cur] += " " + m[3]
			continue
		}
		if cur >= 0 && strings.HasPrefix(l, "  ") {
			texts[cur] += "\n" + l[2:]
		}
	}
	return texts, roles
}

// quoteFold maps the characters a quote may differ in from the turn it
// cites: typographic quotes and dashes, and markdown emphasis and code marks,
// which are dropped.
var quoteFold = strings.NewReplacer(
	"\u2018", "'", "\u2019", "'", "\u201a", "'", "\u201b", "'", "\u2032", "'",
	"\u201c", `"`, "\u201d", `"`, "\u201e", `"`, "\u201f", `"`, "\u2033", `"`,
	"\u2010", "-", "\u2011", "-", "\u2012", "-", "\u2013", "-", "\u2014", "-", "\u2015", "-", "\u2212", "-",
	"\u2026", "...", "\u00a0", " ",
	"*", "", "_", "", "`", "", "~~", "",
)

// normQuote is the form in which a quote is looked up in its turn: case,
// whitespace, typographic quotes and dashes, and markdown emphasis do not
// count.
func normQuote(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(quoteFold.Replace(s))), " ")
}

// inTurn reports whether quote, normalised, occurs in the normalised turn
// text. An empty quote, or one without a letter or digit, never does.
func inTurn(quote, turn string) bool {
	q := strings.Trim(normQuote(quote), " .,;:!?\"'()[]")
	if !strings.ContainsFunc(q, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
		return false
	}
	return strings.Contains(normQuote(turn), q)
}

// fromQuote is the text an op records: the op's own statement when it is
// itself a span of the quote (the subject cut out of a longer quote),
// otherwise the quote, tidied.
func fromQuote(own, quote string) string {
	if own != "" && inTurn(own, quote) {
		return strings.Join(strings.Fields(own), " ")
	}
	q := strings.TrimRight(strings.Join(strings.Fields(quote), " "), " .,;:")
	if r, n := utf8.DecodeRuneInString(q); n > 0 && unicode.IsLower(r) {
		q = string(unicode.ToUpper(r)) + q[n:]
	}
	return q
}

// Ground keeps of a model result only what the user said. Every op that
// changes user intent must carry a quote that occurs verbatim (see normQuote)
// in the user message it cites; an op without one, or whose quote is not
// there, is dropped. The statement, constraint or rejected option it records
// is built from that quote (see fromQuote), never from the model's own
// wording, and a rationale or reason that is not itself verbatim in that
// message is cleared. ops carry transcript ordinals (after Validate). It
// returns the kept ops and how many were dropped.
//
// The built-in extractor (markers*.go) is exempt: it does not call a model,
// and every statement it records is cut from the user's text by
// construction.
func Ground(ops []capsule.Op, in Input) ([]capsule.Op, int) {
	texts, _ := turnTexts(in)
	byOrd := map[int]int{}
	for id, ord := range in.Turns {
		n, _ := strconv.Atoi(strings.TrimPrefix(id, "m"))
		byOrd[ord] = n
	}
	kept := ops[:0:0]
	dropped := 0
	for _, op := range ops {
		if !intentOps[op.Op] {
			kept = append(kept, op)
			continue
		}
		n, ok := byOrd[op.Turn]
		turn := texts[n]
		if !ok || !inTurn(op.Quote, turn) {
			dropped++
			continue
		}
		switch op.Op {
		case capsule.OpAddDecision, capsule.OpSupersedeDecision:
			op.Statement = fromQuote(op.Statement, op.Quote)
		case capsule.OpRejectAlternative, capsule.OpAddConstraint, capsule.OpSupersedeConstraint:
			op.Text = fromQuote(op.Text, op.Quote)
		}
		if op.Rationale != "" && !inTurn(op.Rationale, turn) {
			op.Rationale = ""
		}
		if op.Reason != "" && !inTurn(op.Reason, turn) {
			op.Reason = ""
		}
		kept = append(kept, op)
	}
	return kept, dropped
}

// family groups op kinds that record the same sort of item.
func family(kind string) string {
	switch kind {
	case capsule.OpAddDecision, capsule.OpSupersedeDecision, capsule.OpRejectDecision:
		return "decision"
	case capsule.OpAddConstraint, capsule.OpSupersedeConstraint, capsule.OpRemoveConstraint:
		return "constraint"
	case capsule.OpRejectAlternative:
		return "reject"
	case capsule.OpSetPlan, capsule.OpSetStepStatus:
		return "plan"
	}
	return kind
}

// covered reports whether the model already recorded what marked says, in
// any form: the same item as a decision, a rejection or a replacement.
func covered(marked capsule.Op, model []capsule.Op) bool {
	mt := strings.ToLower(marked.Statement + marked.Text)
	mw := subjectWordsOf(mt)
	for _, op := range model {
		if op.ID != "" && op.ID == marked.ID {
			return true // the same item retired twice
		}
		ot := strings.ToLower(op.Statement + op.Text)
		if ot == "" || mt == "" {
			if op.Turn == marked.Turn && family(op.Op) == family(marked.Op) && op.ID == marked.ID {
				return true
			}
			continue
		}
		if strings.Contains(ot, mt) || strings.Contains(mt, ot) {
			return true
		}
		ow := subjectWordsOf(ot)
		shared := 0
		for w := range mw {
			if ow[w] {
				shared++
			}
		}
		if shared > 0 && 2*shared >= min(len(mw), len(ow)) {
			return true
		}
	}
	return false
}

func subjectWordsOf(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range words(s) {
		if !stopWords[w] && len(w) > 1 {
			m[stem(w)] = true
		}
	}
	return m
}

// Merge adds to a model result the built-in extractor's ops for statements
// the model did not record, so the user's plainly stated choices are kept
// whatever the model answered. Both are validated ops over the same input.
func Merge(model, marked []capsule.Op) []capsule.Op {
	out := append([]capsule.Op(nil), model...)
	for _, op := range marked {
		if !covered(op, model) {
			out = append(out, op)
		}
	}
	return out
}
