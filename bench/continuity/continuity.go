// Package continuity is Tether's public continuity benchmark: a hand-written
// corpus of user statements (corpus/*.txt), each with the operations a
// careful reader would record for it, and a scorer that runs an extractor
// over every case the way the preservation path does (Prepare, Extract,
// Validate, Apply) and reports precision and recall per operation kind.
//
// The corpus was written from how people talk to coding agents, not from
// any extractor's output. About a third of it is traps: questions,
// brainstorms, "don't decide yet", quoted or pasted text, code, assistant
// proposals and tool output that looks like a decision.
package continuity

import (
	"bufio"
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/tether-dev/tether/internal/capsule"
	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/extract"
)

//go:embed corpus/*.txt heldout/*.txt
var corpusFS embed.FS

// Sets of the corpus.
const (
	// SetCorpus is the main corpus the targets apply to.
	SetCorpus = "corpus"
	// SetHeldOut was written after the built-in extractor was tuned on
	// SetCorpus; it shows how the figures carry over to unseen phrasing.
	SetHeldOut = "heldout"
)

// Kinds scored, in report order.
const (
	KindDecision   = "decision"   // add_decision
	KindSupersede  = "supersede"  // supersede_decision / reject_decision of an active decision
	KindReject     = "reject"     // reject_alternative
	KindConstraint = "constraint" // add_constraint
	KindPlan       = "plan"       // set_plan (accepted)
	KindRationale  = "rationale"  // the reason attached to a decision or rejection
)

// Kinds lists the scored kinds in report order.
var Kinds = []string{KindDecision, KindSupersede, KindReject, KindConstraint, KindPlan, KindRationale}

// Expect is one expected operation.
type Expect struct {
	Kind  string
	ID    string   // supersede: the decision replaced or withdrawn
	Key   string   // words the op's text must contain (empty for a bare retirement)
	Why   string   // words its rationale or reason must contain
	Steps []string // plan: one key per step
}

// Case is one user statement with its context.
type Case struct {
	Pos    string            // file:line
	Prev   []capsule.Op      // add_decision / add_constraint ops building the capsule before the turn
	Msgs   []dialect.Message // context messages, the user turn last
	Expect []Expect
}

// Load reads one set of the embedded corpus (SetCorpus, SetHeldOut).
func Load(set string) ([]Case, error) {
	files, err := fs.Glob(corpusFS, set+"/*.txt")
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []Case
	for _, f := range files {
		data, err := corpusFS.ReadFile(f)
		if err != nil {
			return nil, err
		}
		cs, err := Parse(f, string(data))
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	return out, nil
}

// Parse reads one corpus file. A case is a run of lines separated from the
// next by a blank line:
//
//	prev: D Use SQLite for the database     (capsule before the turn: D1, D2 … / C1 …)
//	assistant: …                            (context; "tool:" for tool output)
//	user: …                                 (the statement; later lines continue it)
//	expect: decision | key [| why: words]
//	expect: reject | key [| why: words]
//	expect: constraint | key
//	expect: supersede D1 | key [| why: words]
//	expect: retire D1
//	expect: plan | step ;; step ;; step
//	expect: none
//
// Lines starting with "#" outside a message are comments.
func Parse(name, data string) ([]Case, error) {
	var (
		out  []Case
		cur  *Case
		msg  *dialect.Message
		line int
	)
	flush := func() {
		if cur != nil {
			out = append(out, *cur)
		}
		cur, msg = nil, nil
	}
	sc := bufio.NewScanner(strings.NewReader(data))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line++
		l := sc.Text()
		if strings.TrimSpace(l) == "" {
			flush()
			continue
		}
		if cur == nil && strings.HasPrefix(l, "#") {
			continue
		}
		if cur == nil {
			cur = &Case{Pos: fmt.Sprintf("%s:%d", name, line)}
		}
		head, rest, _ := strings.Cut(l, ":")
		rest = strings.TrimSpace(rest)
		switch head {
		case "prev":
			kind, text, _ := strings.Cut(rest, " ")
			op := capsule.Op{Op: capsule.OpAddDecision, Statement: text}
			if kind == "C" {
				op = capsule.Op{Op: capsule.OpAddConstraint, Text: text}
			}
			cur.Prev = append(cur.Prev, op)
			msg = nil
		case "user", "assistant", "tool":
			m := dialect.Message{Role: head, Text: rest}
			if head == "tool" {
				m = dialect.Message{Role: "user", ToolResults: []dialect.ToolResult{{CallID: "c1", Text: rest}}}
			}
			cur.Msgs = append(cur.Msgs, m)
			msg = &cur.Msgs[len(cur.Msgs)-1]
		case "expect":
			e, err := parseExpect(rest)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, line, err)
			}
			if e.Kind != "" {
				cur.Expect = append(cur.Expect, e)
			}
			msg = nil
		default:
			if msg == nil {
				return nil, fmt.Errorf("%s:%d: line outside a message", name, line)
			}
			if len(msg.ToolResults) > 0 {
				msg.ToolResults[0].Text += "\n" + l
			} else {
				msg.Text += "\n" + l
			}
		}
	}
	flush()
	for _, c := range out {
		if n := len(c.Msgs); n == 0 || c.Msgs[n-1].Role != "user" || len(c.Msgs[n-1].ToolResults) > 0 {
			return nil, fmt.Errorf("%s: a case must end with a user statement", c.Pos)
		}
	}
	return out, sc.Err()
}

func parseExpect(s string) (Expect, error) {
	fields := strings.Split(s, "|")
	for i := range fields {
		fields[i] = strings.TrimSpace(fields[i])
	}
	head := strings.Fields(fields[0])
	if len(head) == 0 {
		return Expect{}, fmt.Errorf("empty expectation")
	}
	e := Expect{Kind: head[0]}
	switch e.Kind {
	case "none":
		return Expect{}, nil
	case "retire", KindSupersede:
		if len(head) != 2 {
			return e, fmt.Errorf("%s wants a decision id", e.Kind)
		}
		e.Kind, e.ID = KindSupersede, head[1]
	case KindDecision, KindReject, KindConstraint, KindPlan:
	default:
		return e, fmt.Errorf("unknown kind %q", e.Kind)
	}
	for _, f := range fields[1:] {
		switch {
		case strings.HasPrefix(f, "why:"):
			e.Why = strings.TrimSpace(strings.TrimPrefix(f, "why:"))
		case e.Kind == KindPlan:
			for _, st := range strings.Split(f, ";;") {
				e.Steps = append(e.Steps, strings.TrimSpace(st))
			}
		default:
			e.Key = f
		}
	}
	if e.Key == "" && e.Kind != KindSupersede && e.Kind != KindPlan {
		return e, fmt.Errorf("%s wants a key", e.Kind)
	}
	return e, nil
}

// Counts are one kind's tallies.
type Counts struct{ TP, FP, FN int }

// Precision is TP/(TP+FP); 1 when nothing was produced.
func (c Counts) Precision() float64 {
	if c.TP+c.FP == 0 {
		return 1
	}
	return float64(c.TP) / float64(c.TP+c.FP)
}

// Recall is TP/(TP+FN); 1 when nothing was expected.
func (c Counts) Recall() float64 {
	if c.TP+c.FN == 0 {
		return 1
	}
	return float64(c.TP) / float64(c.TP+c.FN)
}

// Report is the result of one run over the corpus.
type Report struct {
	Cases   int
	Kinds   map[string]*Counts
	Errors  int      // cases whose result was rejected by validation or merge
	Details []string // one line per miss or false positive: position, kind, text
}

// Total sums every kind.
func (r *Report) Total() Counts {
	var t Counts
	for _, c := range r.Kinds {
		t.TP, t.FP, t.FN = t.TP+c.TP, t.FP+c.FP, t.FN+c.FN
	}
	return t
}

// Run scores caller over cases. prompt is passed to the caller as its
// system prompt.
func Run(ctx context.Context, cases []Case, caller extract.Caller, prompt string) (*Report, error) {
	r := &Report{Kinds: map[string]*Counts{}}
	for _, k := range Kinds {
		r.Kinds[k] = &Counts{}
	}
	for _, c := range cases {
		r.Cases++
		prev, err := prevCapsule(c)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Pos, err)
		}
		in := extract.Prepare(prev, c.Msgs, 1, 12000)
		raw, _, err := caller.Extract(ctx, in, prompt)
		if err != nil {
			return nil, fmt.Errorf("%s: extract: %w", c.Pos, err)
		}
		ops, err := extract.Validate(raw, in)
		if _, builtin := caller.(extract.MarkersCaller); err == nil && !builtin {
			ops, _ = extract.Ground(ops, in) // as the pool does for a model route
		}
		if err == nil {
			_, err = capsule.Apply(prev, ops, in.Delta, "bench")
		}
		if err != nil {
			r.Errors++
			r.Details = append(r.Details, fmt.Sprintf("%s: result rejected: %v", c.Pos, err))
			ops = nil
		}
		score(r, c, ops)
	}
	return r, nil
}

func prevCapsule(c Case) (*capsule.Capsule, error) {
	prev := capsule.New("bench", "bench")
	if len(c.Prev) == 0 {
		return prev, nil
	}
	return capsule.Apply(prev, c.Prev, capsule.Delta{UserTurns: []int{0}}, "prev")
}

// norm lower-cases s and keeps letters and digits, one space between words.
func norm(s string) string {
	var b strings.Builder
	space := true
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 {
			b.WriteRune(r)
			space = false
		} else if !space {
			b.WriteByte(' ')
			space = true
		}
	}
	return strings.TrimSpace(b.String())
}

func contains(text, key string) bool {
	k := norm(key)
	return k == "" || strings.Contains(" "+norm(text)+" ", " "+k+" ") || strings.Contains(norm(text), k)
}

// kindOf maps a produced op to its scored kind ("" for ops not scored).
func kindOf(op capsule.Op) string {
	switch op.Op {
	case capsule.OpAddDecision:
		return KindDecision
	case capsule.OpSupersedeDecision, capsule.OpRejectDecision:
		return KindSupersede
	case capsule.OpRejectAlternative:
		return KindReject
	case capsule.OpAddConstraint:
		return KindConstraint
	case capsule.OpSetPlan:
		return KindPlan
	}
	return ""
}

func textOf(op capsule.Op) string {
	if op.Statement != "" {
		return op.Statement
	}
	return op.Text
}

func matches(e Expect, op capsule.Op) bool {
	if kindOf(op) != e.Kind {
		return false
	}
	switch e.Kind {
	case KindSupersede:
		return op.ID == e.ID && (e.Key == "" || op.Op == capsule.OpSupersedeDecision && contains(op.Statement, e.Key))
	case KindPlan:
		if op.Status != capsule.PlanAccepted || len(op.Steps) != len(e.Steps) {
			return false
		}
		for i, s := range e.Steps {
			if !contains(op.Steps[i].Text, s) {
				return false
			}
		}
		return true
	}
	return contains(textOf(op), e.Key)
}

func score(r *Report, c Case, ops []capsule.Op) {
	used := make([]bool, len(ops))
	for _, e := range c.Expect {
		hit := -1
		for i, op := range ops {
			if !used[i] && matches(e, op) {
				hit = i
				break
			}
		}
		if hit < 0 {
			r.Kinds[e.Kind].FN++
			r.Details = append(r.Details, fmt.Sprintf("%s: missed %s %s%q", c.Pos, e.Kind, idPrefix(e.ID), cmpOr(e.Key, strings.Join(e.Steps, " ;; "))))
			if e.Why != "" {
				r.Kinds[KindRationale].FN++
			}
			continue
		}
		used[hit] = true
		r.Kinds[e.Kind].TP++
		why := ops[hit].Rationale + ops[hit].Reason
		switch {
		case e.Why != "" && contains(why, e.Why):
			r.Kinds[KindRationale].TP++
		case e.Why != "":
			r.Kinds[KindRationale].FN++
			r.Details = append(r.Details, fmt.Sprintf("%s: missed rationale %q", c.Pos, e.Why))
			if why != "" {
				r.Kinds[KindRationale].FP++
			}
		case why != "":
			r.Kinds[KindRationale].FP++
			r.Details = append(r.Details, fmt.Sprintf("%s: unexpected rationale %q", c.Pos, why))
		}
	}
	for i, op := range ops {
		k := kindOf(op)
		if used[i] || k == "" {
			continue
		}
		r.Kinds[k].FP++
		r.Details = append(r.Details, fmt.Sprintf("%s: false %s %s%q", c.Pos, k, idPrefix(op.ID), textOf(op)))
	}
}

func idPrefix(id string) string {
	if id == "" {
		return ""
	}
	return id + " "
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Markdown renders r as a table.
func (r *Report) Markdown(title string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s — %d statements\n\n", title, r.Cases)
	b.WriteString("| op kind | expected | produced | precision | recall |\n|---|---:|---:|---:|---:|\n")
	row := func(name string, c Counts) {
		fmt.Fprintf(&b, "| %s | %d | %d | %.3f | %.3f |\n", name, c.TP+c.FN, c.TP+c.FP, c.Precision(), c.Recall())
	}
	for _, k := range Kinds {
		row(k, *r.Kinds[k])
	}
	row("all", r.Total())
	if r.Errors > 0 {
		fmt.Fprintf(&b, "\n%d results rejected by validation or merge\n", r.Errors)
	}
	return b.String()
}
