package extract

import (
	"regexp"
	"strconv"
	"strings"

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

// structureWords may appear in a statement without appearing in the
// transcript: they only give it shape ("Use X for Y instead of Z").
var structureWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`use using keep not no never always avoid instead of for the a an and or with to in on by
		from as is are be do don't dont does must should only all any this that it its we our rather than over plan step
		decision rejected reason because since so`) {
		structureWords[w] = true
	}
}

// grounded reports whether every word of s that is not a structure word
// occurs in source.
func grounded(s string, source map[string]bool) bool {
	for _, w := range words(s) {
		if len(w) < 2 || structureWords[w] || source[w] {
			continue
		}
		return false
	}
	return true
}

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range words(s) {
		m[w] = true
	}
	return m
}

// Ground drops the ops of a model result whose text the transcript does not
// support: a statement, constraint or rejected option must be made of the
// words of the user message it cites (and of the assistant proposal just
// before it, which a user's "yes, option B" adopts); a rationale or reason
// that is not is cleared. ops carry transcript ordinals (after Validate).
// It returns the kept ops and how many were dropped.
func Ground(ops []capsule.Op, in Input) ([]capsule.Op, int) {
	texts, roles := turnTexts(in)
	byOrd := map[int]int{}
	for id, ord := range in.Turns {
		n, _ := strconv.Atoi(strings.TrimPrefix(id, "m"))
		byOrd[ord] = n
	}
	sources := map[int]map[string]bool{}
	source := func(n int) map[string]bool {
		if s, ok := sources[n]; ok {
			return s
		}
		text := texts[n]
		for k := n - 1; k >= 1; k-- {
			if roles[k] == "assistant" {
				text += " " + texts[k]
				break
			}
			if roles[k] == "user" {
				break
			}
		}
		sources[n] = wordSet(text)
		return sources[n]
	}
	kept := ops[:0:0]
	dropped := 0
	for _, op := range ops {
		n, ok := byOrd[op.Turn]
		if !ok || !intentOps[op.Op] {
			kept = append(kept, op)
			continue
		}
		src := source(n)
		if !grounded(op.Statement, src) || !grounded(op.Text, src) {
			dropped++
			continue
		}
		if !grounded(op.Rationale, src) {
			op.Rationale = ""
		}
		if !grounded(op.Reason, src) {
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
