package harvest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tether-dev/tether/internal/compaction"
	"github.com/tether-dev/tether/internal/dialect"
)

var ruleset = compaction.Default()

// grownViews returns, for every request of every capture, the View of each
// prefix of its conversation as a request of its own: an agent growing its
// history turn by turn, and (across requests) compactions and forks.
func grownViews(t *testing.T) map[string][]*dialect.View {
	t.Helper()
	files, err := filepath.Glob("testdata/*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("captures: %v", err)
	}
	out := map[string][]*dialect.View{}
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
		for sc.Scan() {
			var c struct {
				Path string          `json:"path"`
				Body json.RawMessage `json:"body"`
			}
			if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
				t.Fatal(err)
			}
			name, conv := dialect.OpenAIResponses, "input"
			switch {
			case strings.HasPrefix(c.Path, "/v1/messages"):
				name, conv = dialect.AnthropicMessages, "messages"
			case strings.HasPrefix(c.Path, "/v1/chat/completions"):
				name, conv = dialect.OpenAIChat, "messages"
			}
			v, err := dialect.Parse(name, c.Path, http.Header{}, c.Body)
			if err != nil {
				continue // a request that is not a conversation (an empty body)
			}
			for k := 1; k <= v.NumItems(); k++ {
				items := make([]string, k)
				for i := range k {
					items[i] = string(v.Item(i))
				}
				body := []byte(`{"model":"m","` + conv + `":[` + strings.Join(items, ",") + `]}`)
				pv, err := dialect.Parse(name, c.Path, http.Header{}, body)
				if err != nil {
					t.Fatalf("%s %s: %v\n%.400s", file, c.Path, err, body)
				}
				out[file] = append(out[file], pv)
			}
		}
		f.Close()
	}
	return out
}

// The memo answers every grown history exactly as a scan of it does.
func TestMemoAgreesWithHarvest(t *testing.T) {
	histories, scans := 0, 0
	for file, views := range grownViews(t) {
		mm := NewMemo(64)
		for i, v := range views {
			msgs := v.Messages()
			want, wantOK := Harvest(rules, msgs, 0)
			got, ok := mm.Harvest(ruleset, msgs, v.PrefixIDs())
			if ok != wantOK || !cmp.Equal(want, got) {
				t.Fatalf("%s, history %d (%d messages): memo gave %+v, %v; a scan %+v, %v", file, i, len(msgs), got, ok, want, wantOK)
			}
		}
		histories += len(views)
		scans += mm.scans
		t.Logf("%s: %d histories, %d scanned whole", file, len(views), mm.scans)
	}
	if scans*2 > histories {
		t.Errorf("%d of %d histories scanned whole: the memo answers too few to be tested", scans, histories)
	}
}

// Added messages that can change the answer are scanned: a carrier call,
// the result a Claude task call waited for, a proposed plan.
func TestMemoRescansWhatCanChangeIt(t *testing.T) {
	mm := NewMemo(64)
	var items []string
	add := func(s string) { items = append(items, s) }
	check := func(step string) {
		t.Helper()
		v, err := dialect.Parse(dialect.AnthropicMessages, "/v1/messages", http.Header{}, []byte(`{"model":"m","messages":[`+strings.Join(items, ",")+`]}`))
		if err != nil {
			t.Fatal(err)
		}
		msgs := v.Messages()
		want, wantOK := Harvest(rules, msgs, 0)
		got, ok := mm.Harvest(ruleset, msgs, v.PrefixIDs())
		if ok != wantOK || !cmp.Equal(want, got) {
			t.Fatalf("%s: memo gave %+v, %v; a scan %+v, %v", step, got, ok, want, wantOK)
		}
	}
	add(`{"role":"user","content":"Plan the inventory service."}`)
	check("start")
	add(`{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"TaskCreate","input":{"subject":"Set up the schema","description":"PostgreSQL"}}]}`)
	check("a task created, its result not yet in")
	add(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"Task #1 created successfully: Set up the schema"}]}`)
	check("the task's result")
	for i := range 3 {
		add(fmt.Sprintf(`{"role":"assistant","content":[{"type":"tool_use","id":"r%d","name":"Read","input":{"file_path":"f%d.go"}}]}`, i, i))
		add(fmt.Sprintf(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"r%d","content":"package f"}]}`, i))
		check(fmt.Sprintf("tool loop %d", i))
	}
	add(`{"role":"assistant","content":[{"type":"tool_use","id":"t2","name":"TaskUpdate","input":{"taskId":"1","status":"completed"}}]}`)
	add(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"Updated task #1 status"}]}`)
	check("the task completed")
	add(`{"role":"assistant","content":[{"type":"tool_use","id":"w1","name":"TodoWrite","input":{"todos":[{"content":"Write the migration","status":"pending"}]}}]}`)
	check("a todo list")
	add(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"w1","content":"ok"}]}`)
	add(`{"role":"assistant","content":"<proposed_plan>\n1. Add the users table\n2. Add its repository\n</proposed_plan>"}`)
	check("a proposed plan")
	add(`{"role":"user","content":"yes"}`)
	check("the user's answer")
	add(`{"role":"assistant","content":[{"type":"tool_use","id":"x1","name":"ExitPlanMode","input":{"plan":"1. Add the orders table\n2. Add its API"}}]}`)
	check("a plan proposed in plan mode")
	add(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"x1","content":"User has approved your plan. You can now start coding."}]}`)
	check("the plan approved (the call's result)")
}

// BenchmarkHarvestNextTurn: a 400-turn tool loop's next request, scanned
// whole and through the memo.
//
//	go test -run '^$' -bench HarvestNextTurn ./internal/harvest/
func BenchmarkHarvestNextTurn(b *testing.B) {
	items := []string{`{"role":"user","content":"Plan the inventory service."}`,
		`{"role":"assistant","content":[{"type":"tool_use","id":"w1","name":"TodoWrite","input":{"todos":[{"content":"Write the migration","status":"pending"}]}}]}`,
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"w1","content":"ok"}]}`}
	for i := range 400 {
		items = append(items, fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":"Reading file %d."},{"type":"tool_use","id":"r%d","name":"Read","input":{"file_path":"f%d.go"}}]}`, i, i, i),
			fmt.Sprintf(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"r%d","content":"package f\nfunc F%d() {}"}]}`, i, i))
	}
	view := func(n int) *dialect.View {
		v, err := dialect.Parse(dialect.AnthropicMessages, "/v1/messages", http.Header{}, []byte(`{"model":"m","messages":[`+strings.Join(items[:n], ",")+`]}`))
		if err != nil {
			b.Fatal(err)
		}
		v.Messages()
		v.PrefixIDs()
		return v
	}
	prev, next := view(len(items)-2), view(len(items))
	b.Run("scan", func(b *testing.B) {
		for b.Loop() {
			Harvest(rules, next.Messages(), 0)
		}
	})
	b.Run("memo", func(b *testing.B) {
		mm := NewMemo(64)
		mm.Harvest(ruleset, prev.Messages(), prev.PrefixIDs())
		for b.Loop() {
			// The next turn, not the same request again.
			mm.mu.Lock()
			id := next.PrefixIDs()[len(items)-1]
			delete(mm.m, id)
			mm.order = slices.DeleteFunc(mm.order, func(k dialect.PrefixID) bool { return k == id })
			mm.mu.Unlock()
			mm.Harvest(ruleset, next.Messages(), next.PrefixIDs())
		}
		if mm.scans > 1 {
			b.Fatalf("%d scans", mm.scans)
		}
	})
}

// An answer larger than memoEntryMax (the history is the caller's) is not
// kept: many large plans cannot grow the memo past its bound.
func TestMemoKeepsNoLargeAnswer(t *testing.T) {
	mm := NewMemo(64)
	var calls []string
	for i := range 400 {
		calls = append(calls, fmt.Sprintf(`{"type":"tool_use","id":"task-call-%04d","name":"TaskCreate","input":{"subject":"Step %d of a long plan","description":"x"}}`, i, i))
	}
	body := `{"model":"m","messages":[{"role":"user","content":"plan"},{"role":"assistant","content":[` + strings.Join(calls, ",") + `]}]}`
	v, err := dialect.Parse(dialect.AnthropicMessages, "/v1/messages", http.Header{}, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want, wantOK := Harvest(rules, v.Messages(), 0)
	got, ok := mm.Harvest(ruleset, v.Messages(), v.PrefixIDs())
	if ok != wantOK || !cmp.Equal(want, got) {
		t.Fatalf("memo gave %+v, %v; a scan %+v, %v", got, ok, want, wantOK)
	}
	mm.mu.Lock()
	defer mm.mu.Unlock()
	if len(mm.m) != 0 {
		t.Errorf("an answer of 400 steps waiting on 400 results was kept")
	}
}
