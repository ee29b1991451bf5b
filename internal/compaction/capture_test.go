package compaction

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/dialect"
)

// capture is one line of a testdata/*.jsonl file recorded from a real agent.
type capture struct {
	Seq     int               `json:"seq"`
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Headers map[string]string `json:"headers"`
	Body    json.RawMessage   `json:"body"`
	Kind    string            `json:"kind"`
}

func loadCaptures(t testing.TB, file string) []capture {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []capture
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		var c capture
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func dialectFor(path string) dialect.Name {
	switch {
	case strings.HasPrefix(path, "/v1/messages"):
		return dialect.AnthropicMessages
	case strings.HasPrefix(path, "/v1/chat/completions"):
		return dialect.OpenAIChat
	default:
		return dialect.OpenAIResponses
	}
}

func (c capture) view(t testing.TB) *dialect.View {
	t.Helper()
	h := http.Header{}
	for k, v := range c.Headers {
		h.Set(k, v)
	}
	v, err := dialect.Parse(dialectFor(c.Path), c.Path, h, c.Body)
	if err != nil {
		t.Fatalf("seq %d: %v", c.Seq, err)
	}
	return v
}

func captureFiles(t testing.TB) []string {
	files, err := filepath.Glob("testdata/*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no captures: %v", err)
	}
	return files
}

// TestClassifyCaptures runs every request recorded from the real agents
// through the default rules.
func TestClassifyCaptures(t *testing.T) {
	want := map[string]struct {
		agent string
		kind  Kind
		rule  string
	}{
		"claude.jsonl":                {"claude-code", InBand, "claude-code-summary-2.1"},
		"claude-auto.jsonl":           {"claude-code", InBand, "claude-code-summary-2.1"},
		"claude-todowrite.jsonl":      {"claude-code", InBand, "claude-code-summary-2.1"},
		"codex.jsonl":                 {"codex", InBand, "codex-local-request-kind"},
		"codex-openai-provider.jsonl": {"codex", Opaque, "codex-remote-compaction-v2"},
		"opencode.jsonl":              {"opencode", OutOfBand, "opencode-anchored-summary-1.18"},
		"opencode-update.jsonl":       {"opencode", OutOfBand, ""},
		"pi.jsonl":                    {"pi", OutOfBand, ""},
		"pi-anthropic-messages.jsonl": {"pi", OutOfBand, ""},
		"pi-split-turn.jsonl":         {"pi", OutOfBand, ""},
	}
	rs := Default()
	for _, file := range captureFiles(t) {
		name := filepath.Base(file)
		w, ok := want[name]
		if !ok {
			t.Errorf("%s: no expectation for this capture", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			compacted, sawPost := false, false
			for _, c := range loadCaptures(t, file) {
				if c.Method != http.MethodPost {
					continue // the refused websocket upgrade carries no body
				}
				got := rs.Classify(c.view(t))
				switch c.Kind {
				case "compaction":
					if !got.Compaction || got.Title {
						t.Errorf("seq %d: want compaction, got %+v", c.Seq, got)
						continue
					}
					if got.Agent != w.agent || got.Kind != w.kind {
						t.Errorf("seq %d: agent/kind = %s/%s, want %s/%s", c.Seq, got.Agent, got.Kind, w.agent, w.kind)
					}
					if w.rule != "" && got.RuleID != w.rule {
						t.Errorf("seq %d: rule = %s, want %s", c.Seq, got.RuleID, w.rule)
					}
					compacted = true
				case "title":
					if !got.Title || got.Compaction || got.PostCompaction {
						t.Errorf("seq %d: want title only, got %+v", c.Seq, got)
					}
				case "main":
					if got.Compaction || got.Title {
						t.Errorf("seq %d: main turn classified %+v", c.Seq, got)
					}
					if got.PostCompaction != compacted {
						t.Errorf("seq %d: PostCompaction = %v, want %v (%+v)", c.Seq, got.PostCompaction, compacted, got)
					}
					if got.PostCompaction {
						sawPost = true
						if got.Agent != w.agent {
							t.Errorf("seq %d: post-compaction agent = %s, want %s", c.Seq, got.Agent, w.agent)
						}
					}
				default:
					t.Fatalf("seq %d: unexpected kind %q", c.Seq, c.Kind)
				}
			}
			if !compacted || !sawPost {
				t.Errorf("capture has compaction=%v post-compaction=%v, want both", compacted, sawPost)
			}
		})
	}
}

// TestOpenCodeLaterCompactions: OpenCode words its first compaction
// ("Create a new anchored summary") differently from every later one (the
// new conversation plus the previous summary in <prior-summary>); both must
// be recognised, or the second compaction of a session loses the block.
func TestOpenCodeLaterCompactions(t *testing.T) {
	var rules []string
	for _, c := range loadCaptures(t, "testdata/opencode-update.jsonl") {
		if c.Kind == "compaction" {
			rules = append(rules, Default().Classify(c.view(t)).RuleID)
		}
	}
	if len(rules) < 3 {
		t.Fatalf("capture holds %d compactions, want at least 3", len(rules))
	}
	if rules[0] != "opencode-anchored-summary-1.18" {
		t.Errorf("first compaction matched %q", rules[0])
	}
	for i, r := range rules[1:] {
		if r != "opencode-anchored-update-1.18" {
			t.Errorf("compaction %d matched %q, want opencode-anchored-update-1.18", i+2, r)
		}
	}
}

// TestPiSplitTurnIsPartial: with a small keepRecentTokens Pi sends two
// summarisation requests per compaction and joins the answers into one
// summary. Only the history summary may carry the block; the split-turn
// prefix is marked partial and left alone, or the next turn shows two.
func TestPiSplitTurnIsPartial(t *testing.T) {
	var whole, partial int
	for _, c := range loadCaptures(t, "testdata/pi-split-turn.jsonl") {
		if c.Kind != "compaction" {
			continue
		}
		got := Default().Classify(c.view(t))
		prefix := strings.Contains(string(c.Body), "This is the PREFIX of a turn")
		if got.Partial != prefix {
			t.Errorf("seq %d: Partial = %v for a %s request (rule %s)", c.Seq, got.Partial, map[bool]string{true: "split-turn", false: "history"}[prefix], got.RuleID)
		}
		if got.Partial {
			partial++
		} else {
			whole++
		}
	}
	if whole < 3 || partial < 3 {
		t.Fatalf("capture holds %d history and %d split-turn compactions, want at least 3 of each", whole, partial)
	}
}

// TestProbeAgreesWithView checks that the fast tail reader sees the same
// system prompt, last user text and last item type as the View.
func TestProbeAgreesWithView(t *testing.T) {
	for _, file := range captureFiles(t) {
		for _, c := range loadCaptures(t, file) {
			if c.Method != http.MethodPost {
				continue
			}
			v := c.view(t)
			p := probe{v: v, name: v.Dialect()}
			if got, want := p.system(), v.System(); got != want {
				t.Errorf("%s seq %d: system differs:\n got %.80q\nwant %.80q", file, c.Seq, got, want)
			}
			if got, want := lastUserText(&p), v.LastUserText(); got != want {
				t.Errorf("%s seq %d: last user text differs:\n got %.80q\nwant %.80q", file, c.Seq, got, want)
			}
			if got, want := p.lastItemType(), v.LastItemType(); got != want {
				t.Errorf("%s seq %d: last item type %q, want %q", file, c.Seq, got, want)
			}
			if p.fallback {
				t.Errorf("%s seq %d: scanner fell back to a full parse", file, c.Seq)
			}
		}
	}
}

// Verdicts remembered per item (the tail rules and the last user message)
// change no classification: every captured request classifies the same
// with the memo warm from all the others as with it empty, and a rule set
// whose conditions differ does not take another's verdicts.
func TestItemVerdictsChangeNothing(t *testing.T) {
	files, err := filepath.Glob("testdata/*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no captures: %v", err)
	}
	var views []*dialect.View
	for _, f := range files {
		for _, c := range loadCaptures(t, f) {
			if c.Method != http.MethodPost || len(c.Body) == 0 || c.Body[0] != '{' {
				continue
			}
			views = append(views, c.view(t))
		}
	}
	reset := func() {
		userItems.forget()
		itemVerdicts.forget()
		forgetIndexes()
	}
	rs := Default()
	cold := make([]Result, len(views))
	for i, v := range views {
		reset()
		cold[i] = rs.Classify(v)
	}
	reset()
	for _, v := range views {
		rs.Classify(v)
	}
	for i, v := range views {
		if got := rs.Classify(v); !reflect.DeepEqual(got, cold[i]) {
			t.Errorf("request %d: warm memo classifies %+v, empty memo %+v", i, got, cold[i])
		}
	}
	// The same items under a rule set loaded again (other conditions, as
	// far as the memo can tell) classify as that rule set does cold.
	other := mustLoad(embeddedRules)
	for i, v := range views {
		if got := other.Classify(v); !reflect.DeepEqual(got, cold[i]) {
			t.Errorf("request %d: a second rule set classifies %+v, want %+v", i, got, cold[i])
		}
	}
}

// Two rules testing the same tail items with different conditions each get
// their own verdict: the first rule's "no" is not the second's.
func TestItemVerdictsPerCondition(t *testing.T) {
	rs, err := LoadRules([]byte(`schema_version: 1
rules:
  - {id: alpha, version: 1, agent: a, marks: compaction, kind: in_band, evidence: signature, match: [{where: "message_text:user", how: contains, value: alpha-marker}]}
  - {id: beta, version: 1, agent: b, marks: compaction, kind: in_band, evidence: signature, match: [{where: "message_text:user", how: contains, value: beta-marker}]}
  - {id: gamma, version: 1, agent: c, marks: title, evidence: signature, match: [{where: block_type, how: equals, value: tool_result}]}
  - {id: delta, version: 1, agent: d, marks: title, evidence: signature, match: [{where: block_type, how: equals, value: tool_use}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ last, want string }{
		{"please apply the beta-marker now", "beta"},
		{"please apply the alpha-marker now", "alpha"},
	} {
		body := `{"model":"m","messages":[{"role":"user","content":"start"},` +
			`{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]},` +
			`{"role":"user","content":"` + tc.last + `"}]}`
		v, err := dialect.Parse(dialect.AnthropicMessages, "/v1/messages", http.Header{}, []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			got := rs.Classify(v)
			if !got.Compaction || got.RuleID != tc.want {
				t.Errorf("%q: compaction %v by %q, want by %q", tc.last, got.Compaction, got.RuleID, tc.want)
			}
		}
	}
}

// forgetIndexes empties the memos of item indexes (sliding windows, last
// user messages), not the per-item verdicts.
func forgetIndexes() {
	windows.forget()
	lastUsers.forget()
}

// TestSlidingWindowsAgreeWithCold: an agent's conversation growing one
// tool call at a time, each request classified after the one before (the
// windows slide), classifies as with every memo empty: the continued-
// session summary counts while it is within the rule's last 32 items,
// stops counting once the tool loop has pushed it out, and counts again
// when a request adds another one among its new items.
func TestSlidingWindowsAgreeWithCold(t *testing.T) {
	rs := Default()
	var b strings.Builder
	b.WriteString(`{"model":"claude-x","max_tokens":100,"messages":[{"role":"user","content":[{"type":"text","text":"This session is being continued from a previous conversation that ran out of context. The conversation is summarized below: we use PostgreSQL."}]}`)
	seen := map[bool]bool{}
	for turn := range 60 {
		if turn == 45 {
			// A summary again, not the newest of the items the request
			// adds: the slide tests every new item, not only the last.
			b.WriteString(`,{"role":"user","content":[{"type":"text","text":"This session is being continued from a previous conversation that ran out of context. The conversation is summarized below: again."}]}`)
		}
		fmt.Fprintf(&b, `,{"role":"assistant","content":[{"type":"tool_use","id":"t%d","name":"Read","input":{"file_path":"/f%d"}}]}`, turn, turn)
		fmt.Fprintf(&b, `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"t%d","content":"ok %d"}]}`, turn, turn)
		if turn%7 == 3 {
			fmt.Fprintf(&b, `,{"role":"user","content":[{"type":"text","text":"keep going %d"}]}`, turn)
		}
		body := []byte(b.String() + `],"system":[{"type":"text","text":"You are Claude Code."}]}`)
		v, err := dialect.ParseFrom(t.Name(), dialect.AnthropicMessages, "/v1/messages", http.Header{}, body)
		if err != nil {
			t.Fatal(err)
		}
		warm := rs.Classify(v)
		p := probe{v: v, name: v.Dialect()}
		if got, want := lastUserText(&p), v.LastUserText(); got != want {
			t.Fatalf("turn %d: last user text %q, the View says %q", turn, got, want)
		}
		forgetIndexes()
		cold, err := dialect.Parse(dialect.AnthropicMessages, "/v1/messages", http.Header{}, body)
		if err != nil {
			t.Fatal(err)
		}
		if want := rs.Classify(cold); !reflect.DeepEqual(warm, want) {
			t.Fatalf("turn %d: sliding memo classifies %+v, empty memo %+v", turn, warm, want)
		}
		seen[warm.PostCompaction] = true
		// Warm again for the next turn (the cold pass forgot the windows).
		rs.Classify(v)
	}
	if !seen[true] || !seen[false] {
		t.Fatalf("the summary never left the window (or never counted): %v", seen)
	}
}

// forget empties the memo.
func (c *memo[K, V]) forget() {
	c.mu.Lock()
	c.m = nil
	c.mu.Unlock()
}
