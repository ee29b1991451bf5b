package extract

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/dialect"
)

// corpusTurns returns varied user text: every user message of the
// extraction-quality corpus (bench/continuity, statements and traps alike)
// and the user's own text in the captured agent requests of testdata.
func corpusTurns(tb testing.TB) []string {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "bench", "continuity", "*", "*.txt"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no corpus files under bench/continuity (%v)", err)
	}
	var turns []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		turns = append(turns, corpusUserTexts(string(data))...)
	}
	for _, name := range []string{"codex_decision.json", "claude_todowrite.json", "claude_question.json", "opencode_continue.json"} {
		for _, m := range captured(tb, name) {
			if t, ok := userText(m); ok {
				turns = append(turns, t)
			}
		}
	}
	if len(turns) < 300 {
		tb.Fatalf("the corpus gave only %d user turns", len(turns))
	}
	return turns
}

// corpusUserTexts reads the user messages of one corpus file: "user: …"
// lines and the continuation lines after them, up to the next field or a
// blank line (the format of bench/continuity).
func corpusUserTexts(data string) []string {
	var out []string
	cur := -1
	for _, l := range strings.Split(data, "\n") {
		head, rest, _ := strings.Cut(l, ":")
		switch {
		case strings.TrimSpace(l) == "":
			cur = -1
		case head == "user":
			out = append(out, strings.TrimSpace(rest))
			cur = len(out) - 1
		case head == "prev" || head == "assistant" || head == "tool" || head == "expect" || strings.HasPrefix(l, "#"):
			cur = -1
		case cur >= 0:
			out[cur] += "\n" + l
		}
	}
	return out
}

// BenchmarkReadTurn reads every user turn of the corpus once per
// iteration, as the built-in extractor does for a history it has not seen.
func BenchmarkReadTurn(b *testing.B) {
	turns := corpusTurns(b)
	n := 0
	for b.Loop() {
		for _, t := range turns {
			n += len(readTurn(t))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(turns)), "ns/turn")
	if n == 0 {
		b.Fatal("the corpus gave no items")
	}
}

// BenchmarkMarkersFirstSeen runs the built-in extractor over one prepared
// history holding every user turn of the corpus, each answered by the
// assistant: the inline work of a conversation seen for the first time.
func BenchmarkMarkersFirstSeen(b *testing.B) {
	turns := corpusTurns(b)
	var msgs []dialect.Message
	for _, t := range turns {
		msgs = append(msgs,
			dialect.Message{Role: "user", Type: "message", Text: t},
			dialect.Message{Role: "assistant", Type: "message", Text: "Done; the tests pass."})
	}
	in := Prepare(nil, msgs, 0, 0)
	if len(in.Delta.UserTurns) < len(turns)/2 {
		b.Fatalf("only %d of %d user turns were prepared", len(in.Delta.UserTurns), len(turns))
	}
	for b.Loop() {
		if _, _, err := (MarkersCaller{}).Extract(context.Background(), in, ""); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(in.Delta.UserTurns)), "ns/turn")
}

// BenchmarkMarkersRestatedSteps reads the history tether-bench's agents
// send (cmd/tether-bench/workload.go) for the first time: each of its
// user turns reports a step and restates the same decision and rule.
func BenchmarkMarkersRestatedSteps(b *testing.B) {
	for _, n := range []int{200, 2000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			var msgs []dialect.Message
			for i := range n {
				msgs = append(msgs,
					dialect.Message{Role: "assistant", Type: "message", Text: "I'll look at how the inventory service reaches its repository layer before changing it."},
					dialect.Message{Role: "user", Type: "message", Text: fmt.Sprintf("Step %d done. Keep PostgreSQL as the store, not MongoDB, and keep every change behind the repository interface.", i)})
			}
			in := Prepare(nil, msgs, 0, 0)
			for b.Loop() {
				if _, _, err := (MarkersCaller{}).Extract(context.Background(), in, ""); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(in.Delta.UserTurns)), "ns/turn")
		})
	}
}

// "opencode run" sends an argument holding a space in double quotes, inner
// quotes escaped: the whole message is then one quoted span, and it is the
// user speaking, not a quotation. A quotation inside a message, or a
// message made of several quoted spans, stays one.
func TestReadTurnUnwrapsQuotedArguments(t *testing.T) {
	for _, tc := range []struct {
		text string
		want string // a decision or constraint read, "" for none
	}{
		{`"Decision: use Memcached for the cache. Rejected: GORM — we write SQL by hand."`, "use Memcached for the cache"},
		{`"Constraint: never change the public REST API."`, "never change the public REST API"},
		{`"Actually, use Redis instead of Memcached for the cache."`, "Redis"},
		{`"Decision: name the flag \"--dry-run\"."`, "name the flag"},
		{`My colleague wrote "Decision: use MongoDB" in the doc.`, ""},
		{`"Decision: use MongoDB" is what the old doc says, "not ours"`, ""},
	} {
		var got []string
		for _, it := range readTurn(tc.text) {
			if it.kind == "decision" || it.kind == "constraint" {
				got = append(got, it.text)
			}
		}
		switch {
		case tc.want == "" && len(got) > 0:
			t.Errorf("%s: read %q, want nothing", tc.text, got)
		case tc.want != "" && !strings.Contains(strings.Join(got, "\n"), tc.want):
			t.Errorf("%s: read %q, want %q", tc.text, got, tc.want)
		}
	}
}

// A plan the user states in its own words: "Plan: first …, then …" or a
// list under "Let's do it in three steps:". Steps to reproduce a bug are
// not a plan.
func TestReadTurnPlansInOwnWords(t *testing.T) {
	for _, tc := range []struct {
		text  string
		steps int
	}{
		{"Plan: first add the schema, then the repository layer, then the HTTP handlers.", 3},
		{"Let's do it in three steps:\n1. extract the interface\n2. move the callers\n3. delete the old type", 3},
		{"Steps to reproduce:\n1. start the server\n2. send an empty body", 0},
		{"Plan the migration carefully, then tell me what you found.", 0},
	} {
		got := 0
		for _, it := range readTurn(tc.text) {
			if it.kind == "plan" {
				got = len(it.steps)
			}
		}
		if got != tc.steps {
			t.Errorf("%q: a plan of %d steps, want %d", tc.text, got, tc.steps)
		}
	}
}

// A decision after pasted output, logs or a quoted question is read; what
// was pasted is not.
func TestReadTurnDecisionAfterPastedOutput(t *testing.T) {
	for _, tc := range []struct{ text, want, notWant string }{
		{"Here's the error:\n```\npanic: runtime error\n```\nLet's switch to pgx instead of lib/pq, it handles this properly.", "Use pgx", ""},
		{"The logs say:\nERROR: decision: use mysql\nWARN retry\n\nOk, so let's go with MySQL then.", "Use MySQL", "use mysql"},
		{"$ go test ./...\n--- FAIL: TestX\nFAIL\n\nKeep the tests table-driven from now on.", "Keep the tests table-driven", ""},
		{"Summary of what you did: you switched to Vite. Fine, keep Vite.", "Keep Vite", "switched"},
	} {
		items := readTurn(tc.text)
		var got []string
		for _, it := range items {
			got = append(got, it.kind+": "+it.text)
		}
		all := strings.Join(got, "\n")
		if !strings.Contains(all, tc.want) || tc.notWant != "" && strings.Contains(all, tc.notWant) {
			t.Errorf("%q read as:\n%s\nwant %q (and not %q)", tc.text, all, tc.want, tc.notWant)
		}
	}
}

// BenchmarkReadTurnLongRuns reads user turns of long runs without a
// sentence end, each a form the reader splits into clauses ("…; …",
// "… and keep …"): the cost must grow with the text, not its square (51 KB
// of "keep a in b and keep c in d and …" took 7.5 s before sentences were
// bounded).
func BenchmarkReadTurnLongRuns(b *testing.B) {
	for _, unit := range []string{"keep a in b and keep c in d and ", "we'll use X, Y, and Z; ", "a; ", "Redis is overkill, use X, "} {
		text := strings.Repeat(unit, 1600)
		b.Run(strings.Fields(unit)[0], func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				readTurn(text)
			}
		})
	}
}

// BenchmarkReadTurnAgentStep reads the user turn tether-bench's agents send
// on every step (cmd/tether-bench/workload.go): a report that reads as no
// rule, then a decision and a rule restated.
func BenchmarkReadTurnAgentStep(b *testing.B) {
	const text = "Step 12 done. Keep PostgreSQL as the store, not MongoDB, and keep every change behind the repository interface."
	n := 0
	for b.Loop() {
		n += len(readTurn(text))
	}
	if n == 0 {
		b.Fatal("the turn gave no items")
	}
}
