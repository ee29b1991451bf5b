package web

import (
	"cmp"
	"strconv"

	"github.com/tether-dev/tether/internal/capsule"
)

// Change is one thing a revision changed.
type Change struct {
	Item   string `json:"item"`   // plan | decision | constraint | rejected_alternative | question
	Action string `json:"action"` // added | superseded | rejected | removed | resolved | updated
	ID     string `json:"id,omitempty"`
	Text   string `json:"text"`
	// Source is where the change came from: plan_tool (the harness's plan
	// or todo tool, named in Tool), marked (a statement the user marked,
	// read by the built-in extractor), model (the model extractor),
	// conversation (a plan proposed in the assistant's text), or extractor
	// (revisions written before the two extractors were told apart).
	Source string `json:"source,omitempty"`
	Tool   string `json:"tool,omitempty"`
}

// Sources of a change.
const (
	SourcePlanTool     = "plan_tool"
	SourceMarked       = "marked"
	SourceModel        = "model"
	SourceConversation = "conversation"
	SourceExtractor    = "extractor"
)

// sourceOf maps a capsule provenance to a change's source.
func sourceOf(provenance string) string {
	switch provenance {
	case capsule.ProvenanceStructured:
		return SourcePlanTool
	case capsule.ProvenanceMarked:
		return SourceMarked
	case capsule.ProvenanceModel:
		return SourceModel
	case "":
		return ""
	}
	return SourceExtractor
}

// closedBy is the source of the change that closed an item: the op's own
// provenance when recorded, else the successor's, else the item's.
func closedBy(closed, successor, own string) string {
	return sourceOf(cmp.Or(closed, successor, own))
}

// SourceLabel is how the page names a source.
func SourceLabel(src string) string {
	switch src {
	case SourcePlanTool:
		return "plan tool"
	case SourceMarked:
		return "marked statement"
	case SourceModel:
		return "model"
	case SourceConversation:
		return "assistant's plan text"
	case SourceExtractor:
		return "extractor"
	}
	return src
}

// Diff lists what next changed against prev.
func Diff(prev, next *capsule.Capsule) []Change {
	out := []Change{}
	if p := next.LatestPlan; p != nil && !samePlan(prev.LatestPlan, p) {
		src := SourcePlanTool
		if p.Source == capsule.SourceConversation {
			src = SourceConversation
		}
		action := "updated"
		if prev.LatestPlan == nil {
			action = "added"
		}
		out = append(out, Change{Item: "plan", Action: action, Text: planText(p), Source: src, Tool: p.Tool})
	}
	provD := map[string]string{}
	for _, d := range next.Decisions {
		provD[d.ID] = d.Provenance
	}
	oldD := map[string]capsule.Decision{}
	for _, d := range prev.Decisions {
		oldD[d.ID] = d
	}
	for _, d := range next.Decisions {
		o, had := oldD[d.ID]
		switch {
		case !had && d.Status == capsule.StatusActive:
			out = append(out, Change{Item: "decision", Action: "added", ID: d.ID, Text: d.Statement, Source: sourceOf(d.Provenance)})
		case !had || o.Status != d.Status:
			out = append(out, Change{Item: "decision", Action: d.Status, ID: d.ID, Text: d.Statement,
				Source: closedBy(d.ClosedBy, provD[d.SupersededBy], d.Provenance)})
		}
	}
	provC := map[string]string{}
	for _, c := range next.Constraints {
		provC[c.ID] = c.Provenance
	}
	oldC := map[string]capsule.Constraint{}
	for _, c := range prev.Constraints {
		oldC[c.ID] = c
	}
	for _, c := range next.Constraints {
		o, had := oldC[c.ID]
		switch {
		case !had && c.Status == capsule.StatusActive:
			out = append(out, Change{Item: "constraint", Action: "added", ID: c.ID, Text: c.Text, Source: sourceOf(c.Provenance)})
		case !had || o.Status != c.Status:
			out = append(out, Change{Item: "constraint", Action: c.Status, ID: c.ID, Text: c.Text,
				Source: closedBy(c.ClosedBy, provC[c.SupersededBy], c.Provenance)})
		}
	}
	oldR := map[string]bool{}
	for _, r := range prev.Rejected {
		oldR[r.ID] = true
	}
	for _, r := range next.Rejected {
		if !oldR[r.ID] {
			out = append(out, Change{Item: "rejected_alternative", Action: "rejected", ID: r.ID, Text: r.Text, Source: sourceOf(r.Provenance)})
		}
	}
	oldQ := map[string]capsule.Question{}
	for _, q := range prev.OpenQuestions {
		oldQ[q.ID] = q
	}
	for _, q := range next.OpenQuestions {
		if o, had := oldQ[q.ID]; !had || o.Status != q.Status {
			action, src := "added", sourceOf(q.Provenance)
			if q.Status == capsule.StatusResolved {
				action, src = "resolved", closedBy(q.ClosedBy, "", q.Provenance)
			}
			out = append(out, Change{Item: "question", Action: action, ID: q.ID, Text: q.Text, Source: src})
		}
	}
	return out
}

// countActions counts a revision's changes by action (added, superseded,
// rejected, …).
func countActions(ch []Change) map[string]int {
	out := map[string]int{}
	for _, c := range ch {
		out[c.Action]++
	}
	return out
}

func samePlan(a, b *capsule.Plan) bool {
	if a == nil || b == nil || a.Status != b.Status || len(a.Steps) != len(b.Steps) {
		return false
	}
	for i := range a.Steps {
		if a.Steps[i] != b.Steps[i] {
			return false
		}
	}
	return true
}

func planText(p *capsule.Plan) string {
	done := 0
	for _, s := range p.Steps {
		if s.Status == "completed" {
			done++
		}
	}
	return p.Status + " plan, " + strconv.Itoa(len(p.Steps)) + " steps, " + strconv.Itoa(done) + " completed"
}
