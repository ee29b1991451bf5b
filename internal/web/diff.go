package web

import (
	"strconv"

	"github.com/tether-dev/tether/internal/capsule"
)

// Change is one thing a revision changed.
type Change struct {
	Item   string `json:"item"`   // plan | decision | constraint | rejected_alternative | question
	Action string `json:"action"` // added | superseded | rejected | removed | resolved | updated
	ID     string `json:"id,omitempty"`
	Text   string `json:"text"`
	// Source is where it came from: the plan tool (plan source and tool),
	// or a decision's provenance (structured, markers, extractor).
	Source string `json:"source,omitempty"`
}

// Diff lists what next changed against prev.
func Diff(prev, next *capsule.Capsule) []Change {
	out := []Change{}
	if p := next.LatestPlan; p != nil && !samePlan(prev.LatestPlan, p) {
		src := p.Source
		if p.Tool != "" {
			src += " (" + p.Tool + ")"
		}
		action := "updated"
		if prev.LatestPlan == nil {
			action = "added"
		}
		out = append(out, Change{Item: "plan", Action: action, Text: planText(p), Source: src})
	}
	oldD := map[string]capsule.Decision{}
	for _, d := range prev.Decisions {
		oldD[d.ID] = d
	}
	for _, d := range next.Decisions {
		o, had := oldD[d.ID]
		switch {
		case !had && d.Status == "active":
			out = append(out, Change{Item: "decision", Action: "added", ID: d.ID, Text: d.Statement, Source: d.Provenance})
		case !had || o.Status != d.Status:
			out = append(out, Change{Item: "decision", Action: d.Status, ID: d.ID, Text: d.Statement, Source: d.Provenance})
		}
	}
	oldC := map[string]capsule.Constraint{}
	for _, c := range prev.Constraints {
		oldC[c.ID] = c
	}
	for _, c := range next.Constraints {
		o, had := oldC[c.ID]
		switch {
		case !had && c.Status == "active":
			out = append(out, Change{Item: "constraint", Action: "added", ID: c.ID, Text: c.Text})
		case !had || o.Status != c.Status:
			out = append(out, Change{Item: "constraint", Action: c.Status, ID: c.ID, Text: c.Text})
		}
	}
	oldR := map[string]bool{}
	for _, r := range prev.Rejected {
		oldR[r.ID] = true
	}
	for _, r := range next.Rejected {
		if !oldR[r.ID] {
			out = append(out, Change{Item: "rejected_alternative", Action: "added", ID: r.ID, Text: r.Text})
		}
	}
	oldQ := map[string]capsule.Question{}
	for _, q := range prev.OpenQuestions {
		oldQ[q.ID] = q
	}
	for _, q := range next.OpenQuestions {
		if o, had := oldQ[q.ID]; !had || o.Status != q.Status {
			action := "added"
			if q.Status == "resolved" {
				action = "resolved"
			}
			out = append(out, Change{Item: "question", Action: action, ID: q.ID, Text: q.Text})
		}
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
