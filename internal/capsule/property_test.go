package capsule

import (
	"errors"
	"fmt"
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tether-dev/tether/internal/tokens"
)

var (
	propStatements = []string{"use postgres", "Use Postgres!", "use sqlite", "ship behind a flag", "no flag", "grpc api", "rest api", "monorepo"}
	propTexts      = []string{"no new deps", "p99 < 50ms", "never log prompts", "go 1.26 only", "rest api", "use sqlite"}
	propQuestions  = []string{"which region?", "who owns billing?", "ttl for capsules?"}
	propStepStat   = []string{StepPending, StepInProgress, StepCompleted, StepCancelled}
)

type gen struct {
	r *rand.Rand
	c *Capsule
}

func (g *gen) pick(xs []string) string { return xs[g.r.Intn(len(xs))] }

// id returns an existing id with the prefix most of the time, else a random one.
func (g *gen) id(prefix string) string {
	var ids []string
	if g.c != nil {
		switch prefix {
		case "D":
			for _, d := range g.c.Decisions {
				ids = append(ids, d.ID)
			}
		case "C":
			for _, k := range g.c.Constraints {
				ids = append(ids, k.ID)
			}
		case "Q":
			for _, q := range g.c.OpenQuestions {
				ids = append(ids, q.ID)
			}
		case "R":
			for _, r := range g.c.Rejected {
				ids = append(ids, r.ID)
			}
		}
	}
	if len(ids) == 0 || g.r.Intn(8) == 0 {
		return fmt.Sprintf("%s%d", prefix, 1+g.r.Intn(30))
	}
	return ids[g.r.Intn(len(ids))]
}

func (g *gen) turn(d Delta) int {
	switch {
	case g.r.Intn(30) == 0:
		return d.ToTurn + 1 // outside the delta
	case len(d.UserTurns) > 0 && g.r.Intn(4) != 0:
		return d.UserTurns[g.r.Intn(len(d.UserTurns))]
	default:
		return d.FromTurn + g.r.Intn(d.ToTurn-d.FromTurn+1)
	}
}

func (g *gen) op(d Delta) Op {
	t := g.turn(d)
	switch g.r.Intn(11) {
	case 0:
		op := Op{Op: OpAddDecision, Statement: g.pick(propStatements), Turn: t}
		if g.r.Intn(3) == 0 {
			op.Rationale = "because"
		}
		if g.r.Intn(4) == 0 {
			op.Reinstates = g.id([]string{"D", "R"}[g.r.Intn(2)])
		}
		return op
	case 1:
		return Op{Op: OpSupersedeDecision, ID: g.id("D"), Statement: g.pick(propStatements), Turn: t}
	case 2:
		return Op{Op: OpRejectDecision, ID: g.id("D"), Turn: t}
	case 3:
		return Op{Op: OpRejectAlternative, Text: g.pick(append(propStatements, propTexts...)), Reason: "no", Turn: t}
	case 4:
		op := Op{Op: OpAddConstraint, Text: g.pick(propTexts), Turn: t}
		if g.r.Intn(4) == 0 {
			op.Reinstates = g.id([]string{"C", "R"}[g.r.Intn(2)])
		}
		return op
	case 5:
		return Op{Op: OpSupersedeConstraint, ID: g.id("C"), Text: g.pick(propTexts), Turn: t}
	case 6:
		return Op{Op: OpRemoveConstraint, ID: g.id("C"), Turn: t}
	case 7:
		return Op{Op: OpAddQuestion, Text: g.pick(propQuestions), Turn: t}
	case 8:
		return Op{Op: OpResolveQuestion, ID: g.id("Q"), Turn: t}
	case 9:
		steps := make([]Step, 1+g.r.Intn(6))
		for i := range steps {
			steps[i] = Step{Text: fmt.Sprintf("step %d of the plan", i), Status: g.pick(propStepStat)}
		}
		return Op{Op: OpSetPlan, Steps: steps, Status: g.pick([]string{PlanAccepted, PlanProvisional}),
			Source: g.pick([]string{SourceConversation, SourceStructuredTool, SourcePlanMode}), Tool: "update_plan", Turn: t}
	default:
		return Op{Op: OpSetStepStatus, StepNumber: 1 + g.r.Intn(6), Status: g.pick(propStepStat), Turn: t}
	}
}

func TestApplyProperties(t *testing.T) {
	sequences, steps := 3000, 12
	if testing.Short() {
		sequences = 300
	}
	header := tokens.Estimate(Render(&Capsule{Revision: 1 << 40, Dropped: 1 << 20}))
	var applied, invalid, replayed, maxActive int
	defer func() {
		t.Logf("%d applied, %d invalid, %d replayed; max %d active decisions", applied, invalid, replayed, maxActive)
		if applied < sequences*steps/4 || invalid == 0 || replayed == 0 {
			t.Errorf("generator does not exercise Apply well")
		}
	}()
	for seq := range sequences {
		r := rand.New(rand.NewSource(int64(seq)))
		g := &gen{r: r}
		retired := map[string]bool{}
		turn := 0
		var txs []string
		for step := range steps {
			n := 1 + r.Intn(5)
			d := Delta{FromTurn: turn, ToTurn: turn + n}
			for t := turn; t <= turn+n; t++ {
				if r.Intn(2) == 0 {
					d.UserTurns = append(d.UserTurns, t)
				}
			}
			ops := make([]Op, r.Intn(6))
			for i := range ops {
				ops[i] = g.op(d)
			}
			prev := g.c
			var before []byte
			if prev != nil {
				before, _ = Encode(prev)
			}
			tx := fmt.Sprintf("tx-%d", step)
			if len(txs) > 0 && r.Intn(10) == 0 {
				tx = txs[r.Intn(len(txs))] // replay
			}
			next, err := Apply(prev, ops, d, tx, WithWatermark(Watermark{Turn: d.ToTurn}))
			if prev != nil {
				if after, _ := Encode(prev); string(after) != string(before) {
					t.Fatalf("seq %d step %d: Apply modified prev", seq, step)
				}
			}
			switch {
			case errors.Is(err, ErrAlreadyApplied):
				if next != prev {
					t.Fatalf("seq %d step %d: replay changed the capsule", seq, step)
				}
				replayed++
				continue
			case errors.Is(err, ErrInvalidOp):
				if next != nil {
					t.Fatalf("seq %d step %d: invalid batch returned a capsule", seq, step)
				}
				invalid++
				continue
			case err != nil:
				t.Fatalf("seq %d step %d: unexpected error %v", seq, step, err)
			}
			txs = append(txs, tx)
			applied++
			maxActive = max(maxActive, len(next.ActiveDecisions()))
			turn += n + 1
			var prevRev int64
			if prev != nil {
				prevRev = prev.Revision
			}
			if next.Revision != prevRev+1 {
				t.Fatalf("seq %d step %d: revision %d after %d", seq, step, next.Revision, prevRev)
			}
			checkInvariants(t, fmt.Sprintf("seq %d step %d", seq, step), next, retired)
			if step%4 == 3 {
				budget := header + r.Intn(400)
				b, dropped := Bound(next, budget)
				if got := tokens.Estimate(Render(b)); got > budget {
					t.Fatalf("seq %d step %d: Bound(%d) rendered %d tokens", seq, step, budget, got)
				}
				if dropped < 0 || b.Dropped != next.Dropped+dropped {
					t.Fatalf("seq %d step %d: dropped %d, Dropped %d→%d", seq, step, dropped, next.Dropped, b.Dropped)
				}
				checkInvariants(t, fmt.Sprintf("seq %d step %d bounded", seq, step), b, map[string]bool{})
			}
			g.c = next
		}
	}
}

func checkInvariants(t *testing.T, where string, c *Capsule, retired map[string]bool) {
	t.Helper()
	ids := map[string]bool{}
	activeD := map[string]string{}
	parent := map[string]string{}
	var find func(string) string
	find = func(x string) string {
		if p, ok := parent[x]; ok && p != x {
			return find(p)
		}
		return x
	}
	for _, d := range c.Decisions {
		if ids[d.ID] {
			t.Fatalf("%s: duplicate id %s", where, d.ID)
		}
		ids[d.ID] = true
		parent[d.ID] = d.ID
		if d.Status == StatusActive {
			if retired[d.ID] {
				t.Fatalf("%s: retired %s is active again", where, d.ID)
			}
			if d.SupersededBy != "" {
				t.Fatalf("%s: active %s has superseded_by", where, d.ID)
			}
			n := Normalize(d.Statement)
			if other, ok := activeD[n]; ok {
				t.Fatalf("%s: %s and %s are both active with the same statement", where, other, d.ID)
			}
			activeD[n] = d.ID
		} else {
			retired[d.ID] = true
		}
	}
	for _, d := range c.Decisions {
		if d.SupersededBy != "" && ids[d.SupersededBy] {
			parent[find(d.ID)] = find(d.SupersededBy)
		}
	}
	perChain := map[string]int{}
	for _, d := range c.Decisions {
		if d.Status == StatusActive {
			perChain[find(d.ID)]++
			if perChain[find(d.ID)] > 1 {
				t.Fatalf("%s: two active decisions in one supersede chain", where)
			}
		}
		if d.Status != StatusActive {
			if a, ok := activeD[Normalize(d.Statement)]; ok {
				ad := c.Decisions[indexOfDecision(c, a)]
				if ad.SourceTurn <= d.ClosedTurn || idNum(ad.ID) < idNum(d.ID) {
					t.Fatalf("%s: %s resurrects retired %s without a later user turn", where, a, d.ID)
				}
			}
		}
	}
	activeC := map[string]bool{}
	for _, k := range c.Constraints {
		if ids[k.ID] {
			t.Fatalf("%s: duplicate id %s", where, k.ID)
		}
		ids[k.ID] = true
		if k.Status == StatusActive {
			if retired[k.ID] {
				t.Fatalf("%s: retired %s is active again", where, k.ID)
			}
			if activeC[Normalize(k.Text)] {
				t.Fatalf("%s: duplicate active constraint %s", where, k.ID)
			}
			activeC[Normalize(k.Text)] = true
		} else {
			retired[k.ID] = true
		}
	}
	for _, r := range c.Rejected {
		if _, ok := activeD[Normalize(r.Text)]; ok {
			t.Fatalf("%s: rejected alternative %s is also an active decision", where, r.ID)
		}
		if activeC[Normalize(r.Text)] {
			t.Fatalf("%s: rejected alternative %s is also an active constraint", where, r.ID)
		}
	}
	if n := len(c.Decisions) + len(c.Constraints) - len(activeD) - len(activeC); n > MaxTombstones {
		t.Fatalf("%s: %d tombstones", where, n)
	}
	if p := c.LatestPlan; p != nil && p.Status == PlanAccepted && p.Source == SourceConversation {
		// Accepted conversation plans only come from user turns; the
		// generator's user turns are random, so just check the plan is sane.
		if len(p.Steps)+p.Condensed == 0 {
			t.Fatalf("%s: empty accepted plan", where)
		}
	}
	r1, r2 := Render(c), Render(c.Clone())
	if r1 != r2 || Digest(c) != Digest(c.Clone()) {
		t.Fatalf("%s: render/digest not deterministic", where)
	}
	b, err := Encode(c)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	back, err := Decode(b)
	if err != nil {
		t.Fatalf("%s: Decode(Encode): %v\n%s", where, err, b)
	}
	if diff := cmp.Diff(canonical(c), back); diff != "" {
		t.Fatalf("%s: round trip (-want +got):\n%s", where, diff)
	}
	if Render(back) != r1 {
		t.Fatalf("%s: render changed across Encode/Decode", where)
	}
}

func indexOfDecision(c *Capsule, id string) int {
	for i, d := range c.Decisions {
		if d.ID == id {
			return i
		}
	}
	return -1
}

// An accepted plan whose source is the conversation always cites a user turn.
func TestAssistantOnlyPlanNeverAccepted(t *testing.T) {
	for seed := range 500 {
		r := rand.New(rand.NewSource(int64(seed)))
		d := Delta{FromTurn: 0, ToTurn: 9}
		for t := 0; t < 10; t += 1 + r.Intn(3) {
			d.UserTurns = append(d.UserTurns, t)
		}
		turn := r.Intn(10)
		c, err := Apply(nil, []Op{{Op: OpSetPlan, Status: PlanAccepted, Source: SourceConversation, Steps: []Step{{"s", StepPending}}, Turn: turn}}, d, "tx")
		if err != nil {
			t.Fatal(err)
		}
		if got, want := c.LatestPlan.Status == PlanAccepted, d.isUserTurn(turn); got != want {
			t.Fatalf("seed %d: turn %d user=%v, plan accepted=%v", seed, turn, want, got)
		}
	}
}
