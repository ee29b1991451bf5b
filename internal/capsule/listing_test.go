package capsule

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRenderListing(t *testing.T) {
	c := New("s", "a")
	c.Revision = 12
	c.LatestPlan = &Plan{Status: PlanAccepted, Condensed: 2, Steps: []Step{
		{Text: "schema\nmigrations", Status: StepCompleted}, {Text: "repository", Status: StepPending}}}
	c.Decisions = []Decision{
		{ID: "D1", Statement: "Use PostgreSQL", Rationale: strings.Repeat("é", 100), Status: StatusActive},
		{ID: "D2", Statement: "Use SQLite", Status: StatusSuperseded, SupersededBy: "D1"},
		{ID: "D3", Statement: "Use Redis", Status: StatusRejected}}
	c.Constraints = []Constraint{{ID: "C1", Text: "no ORM", Status: StatusActive}, {ID: "C2", Text: "Go 1.21", Status: StatusSuperseded}}
	c.Rejected = []Rejected{{ID: "R1", Text: "MongoDB", Reason: "not relational"}}
	c.OpenQuestions = []Question{{ID: "Q1", Text: "Which version?", Status: StatusOpen}, {ID: "Q2", Text: "Port?", Status: StatusResolved}}

	got := RenderWith(c, RenderOptions{Format: FormatListing, Line: strings.ToUpper})
	want := `revision 12
PLAN (ACCEPTED):
3. [COMPLETED] SCHEMA MIGRATIONS
4. [PENDING] REPOSITORY
ACTIVE DECISIONS:
- D1: USE POSTGRESQL (WHY: ` + strings.Repeat("É", 80) + ` […])
CONSTRAINTS:
- C1: NO ORM
REJECTED ALTERNATIVES:
- R1: MONGODB
RETIRED (SUPERSEDED OR REJECTED; REINSTATE ONLY ON EXPLICIT USER REQUEST):
- D2: USE SQLITE (SUPERSEDED)
- D3: USE REDIS (REJECTED)
- C2: GO 1.21 (SUPERSEDED)
OPEN QUESTIONS:
- Q1: WHICH VERSION?`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("listing (-want +got):\n%s", diff)
	}

	for _, empty := range []*Capsule{nil, {Revision: 4}} {
		rev := "0"
		if empty != nil {
			rev = "4"
		}
		if got := RenderWith(empty, RenderOptions{Format: FormatListing}); got != "revision "+rev+": (empty)" {
			t.Errorf("empty listing = %q", got)
		}
	}
	if got := RenderWith(c, RenderOptions{}); got != Render(c) {
		t.Errorf("FormatBlock differs from Render")
	}
}
