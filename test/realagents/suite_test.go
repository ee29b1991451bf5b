//go:build agents

package realagents

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/app"
	"github.com/tether-dev/tether/internal/capsule"
	"github.com/tether-dev/tether/internal/compaction"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/demo"
	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/fakemodel"
)

// install puts pkg@version into the agent cache (TETHER_AGENT_CACHE, default
// ~/.cache/tether-agents) and returns the path of its bin directory.
func install(t *testing.T, pkg, version string) string {
	t.Helper()
	cache := os.Getenv("TETHER_AGENT_CACHE")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache", "tether-agents")
	}
	dir := filepath.Join(cache, strings.NewReplacer("@", "", "/", "_").Replace(pkg)+"-"+version)
	bin := filepath.Join(dir, "node_modules", ".bin")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed; the real-agent suite needs it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "npm", "install", "--no-audit", "--no-fund", "--prefix", dir, pkg+"@"+version).CombinedOutput()
	if err != nil {
		// A registry that cannot be reached is the environment, not the
		// product: skip unless the caller insists on the suite.
		msg := fmt.Sprintf("npm install %s@%s: %v\n%s", pkg, version, err, tail(out))
		if os.Getenv("TETHER_AGENTS_REQUIRED") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}

// stack is the scripted model and Tether, both on 127.0.0.1; Tether routes
// every model to the scripted one in the caller's dialect.
type stack struct {
	fake *fakemodel.Server
	url  string
	mu   sync.Mutex
	seen []fakemodel.Request
}

// start runs the stack; continuity lines go under compaction_continuity,
// and without an extractor line the scripted model is the extractor.
func start(t *testing.T, model fakemodel.Responder, continuity ...string) *stack {
	t.Helper()
	if !slices.ContainsFunc(continuity, func(l string) bool { return strings.HasPrefix(l, "extractor:") }) {
		continuity = append(continuity, "extractor: {route: openai/"+demo.ExtractorModel+"}")
	}
	s := &stack{}
	s.fake = fakemodel.Start(func(r *fakemodel.Request) fakemodel.Reply {
		s.mu.Lock()
		s.seen = append(s.seen, *r)
		s.mu.Unlock()
		return model(r)
	})
	t.Cleanup(s.fake.Close)
	cfg, err := config.Parse([]byte(fmt.Sprintf(`
store: "memory:"
providers:
  - {name: anthropic, dialect: anthropic, base_url: %q}
  - {name: openai, dialect: openai, base_url: %q}
  - {name: gemini, dialect: gemini, base_url: %q}
routes:
  - {match: "*", provider: anthropic}
  - {match: "*", provider: openai}
  - {match: "*", provider: gemini}
compaction_continuity:
  enabled: true
  %s
`, s.fake.URL, s.fake.URL+"/v1", s.fake.URL, strings.Join(continuity, "\n  "))), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.New(context.Background(), cfg, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = a.Serve(ctx, ln); close(done) }()
	t.Cleanup(func() { stop(); <-done; _ = a.Close(context.Background()) })
	s.url = "http://" + ln.Addr().String()
	return s
}

func (s *stack) requests() []fakemodel.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]fakemodel.Request(nil), s.seen...)
}

// summary lists what the model received, one request a line, for failure
// messages.
func (s *stack) summary() string {
	var b strings.Builder
	for _, r := range s.requests() {
		fmt.Fprintf(&b, "%d %s %s %s %s %d bytes\n", r.Seq, r.Method, r.Path, r.Model(), fakemodel.Classify(&r), len(r.Body))
	}
	return b.String()
}

func tail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// facts are what each line of script establishes, as demo.Check quotes them:
// a check made after a compaction expects only what was said before it.
var facts = [][]string{
	append([]string{"PostgreSQL"}, demo.PlanSteps...),
	{"never change the public REST API"},
	{"GORM"},
	{"Prometheus"},
	{"Redis", "Memcached"},
	{}, {}, {}, {}, {}, {}, {}, {},
}

// withExtractor returns a flow's record name for its continuity lines:
// with the built-in extractor ("-builtin"), after checking that no
// extraction model call was made.
func withExtractor(t *testing.T, name string, reqs []fakemodel.Request, continuity []string) string {
	t.Helper()
	if len(continuity) == 0 {
		return name
	}
	for _, r := range reqs {
		if r.Model() == demo.ExtractorModel {
			t.Fatalf("the built-in extractor made a model call")
		}
	}
	return name + "-builtin"
}

// agentRules are the rule ids of internal/compaction/rules.yaml that must
// recognise an agent's compaction request and its first turn afterwards.
type agentRules struct {
	Compaction, After []string
	// PlanUpdate: the agent's plan tool records the step-one update, so
	// blocks after it must show that step done.
	PlanUpdate bool
}

// checkRun reads what the model received and checks, for every compaction,
// that Tether recognised it and sent the continuity block along, and that
// the first main turn afterwards shows exactly one block holding everything
// the user had settled by then: active decisions and constraint as active,
// GORM as rejected, Memcached (once corrected) only as superseded, and the
// plan when the agent has a plan tool. It returns the number of compactions
// and the first post-compaction request of each.
func checkRun(t *testing.T, reqs []fakemodel.Request, rules agentRules, plan bool) (int, []fakemodel.Request) {
	t.Helper()
	stated, compactions := -1, 0
	pending := false
	var after []fakemodel.Request
	for i := range reqs {
		r := &reqs[i]
		if r.Model() == demo.ExtractorModel {
			// The extractor reads the user's turns; an agent's compaction
			// instruction among them would pass for user intent.
			if fakemodel.Classify(r) == fakemodel.KindCompaction {
				t.Errorf("request %d: the extractor was sent the agent's compaction instruction as part of the conversation", r.Seq)
			}
			continue
		}
		switch fakemodel.Classify(r) {
		case fakemodel.KindCompaction:
			if classify(r).Partial {
				continue // a part of a compaction (Pi's split turn): left untouched
			}
			compactions++
			pending = true
			if stated < 0 || strings.Contains(string(r.Body), "<continuity-capsule") {
				continue
			}
			if res := classify(r); res.Compaction {
				t.Errorf("compaction %d: rule %s v%d matched, but the request reached the model without the continuity block", compactions, res.RuleID, res.RuleVersion)
			} else {
				t.Errorf("compaction %d: none of Tether's rules %v matched the agent's compaction request, which reached the model without the continuity block; the agent's wire format changed (internal/compaction/rules.yaml)", compactions, rules.Compaction)
			}
			continue
		case fakemodel.KindMain:
		default:
			continue
		}
		if pending {
			pending = false
			after = append(after, *r)
			v := view(r)
			res := classify(r)
			why := fmt.Sprintf("first turn after compaction %d (Tether's rules on it: %s; expected one of %v)", compactions, ruleName(res.PostCompaction, res), rules.After)
			if n := strings.Count(v, "<continuity-capsule"); n != 1 {
				t.Errorf("%s: the model was shown %d continuity blocks, want 1", why, n)
			}
			for _, p := range demo.Check(v) {
				if relevant(p, stated, plan) {
					t.Errorf("%s: %s", why, p)
				}
			}
			if rules.PlanUpdate && stated >= slices.Index(script, stepDone) {
				if i := strings.LastIndex(v, "<continuity-capsule"); i >= 0 && !strings.Contains(v[i:], "[done] "+demo.PlanSteps[0]) {
					t.Errorf("%s: the plan is not the latest one (step one done)", why)
				}
			}
			// The test run's output reads like decisions; none of it is.
			if i := strings.LastIndex(v, "<continuity-capsule"); i >= 0 {
				blk := v[i:]
				if j := strings.Index(blk, "</continuity-capsule>"); j >= 0 {
					blk = blk[:j]
				}
				_, notUse, _ := strings.Cut(blk, "\nREJECTED")
				if strings.Contains(blk, "use MongoDB") || strings.Contains(blk, "always change") || strings.Contains(notUse, "PostgreSQL") {
					t.Errorf("%s: tool output was taken for the user's decisions:\n%s", why, blk)
				}
			}
		}
		u := lastUser(r)
		for k := len(script) - 1; k > stated; k-- {
			if strings.Contains(u, script[k]) {
				stated = k
				break
			}
		}
	}
	if stated != len(script)-1 {
		t.Errorf("the model saw the user's turns only up to %d of %d", stated+1, len(script))
	}
	if !slices.ContainsFunc(reqs, func(r fakemodel.Request) bool {
		return strings.Contains(string(r.Body), "test 3 ok -- Decision: use MongoDB")
	}) {
		t.Errorf("the agent's shell tool never returned the test run's output to the model")
	}
	return compactions, after
}

// relevant reports whether a demo.Check problem concerns a fact the user
// had stated (script lines up to stated) and, for plan steps, whether the
// agent can record a plan at all.
func relevant(problem string, stated int, plan bool) bool {
	if strings.Contains(problem, "any continuity block") {
		return stated >= 0
	}
	for k, fs := range facts {
		for _, f := range fs {
			if !strings.Contains(problem, fmt.Sprintf("%q", f)) {
				continue
			}
			if strings.HasPrefix(problem, "plan step") && !plan {
				return false
			}
			return k <= stated
		}
	}
	return true
}

// classify runs Tether's own rules over a request the model received, to
// name the rule that matched it (or that no longer does).
func classify(r *fakemodel.Request) compaction.Result {
	v, err := dialect.Parse(dialect.Name(r.Dialect), r.Path, r.Header, r.Body)
	if err != nil {
		return compaction.Result{}
	}
	return compaction.Default().Classify(v)
}

func ruleName(ok bool, res compaction.Result) string {
	if !ok {
		return "none matched"
	}
	return fmt.Sprintf("%s v%d", res.RuleID, res.RuleVersion)
}

// planCalled reports whether the agent ran the model's call of its plan
// tool name and sent the result back.
func planCalled(reqs []fakemodel.Request, name string) bool {
	for i := range reqs {
		r := &reqs[i]
		if !lastIsToolResult(r) {
			continue
		}
		for _, it := range turns(r) {
			if it.Get("type").String() == "function_call" && it.Get("name").String() == name ||
				it.Get(`tool_calls.#(function.name=="`+name+`")`).Exists() ||
				it.Get(`content.#(name=="`+name+`")`).Exists() ||
				it.Get(`parts.#(functionCall.name=="`+name+`")`).Exists() {
				return true
			}
		}
	}
	return false
}

// record writes the trimmed post-compaction request to
// $TETHER_AGENTS_RECORD/<agent>.txt, when that is set, for the docs.
func record(t *testing.T, agent string, r fakemodel.Request, reqs []fakemodel.Request) {
	dir := os.Getenv("TETHER_AGENTS_RECORD")
	if dir == "" {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s (%s, %d bytes)\n", r.Method, r.Path, r.Dialect, len(r.Body))
	for _, it := range turns(&r) {
		role := it.Get("role").String()
		if role == "" {
			role = it.Get("type").String()
		}
		text := itemText(it)
		if i := strings.Index(text, "<continuity-capsule"); i >= 0 {
			end := strings.Index(text, "</continuity-capsule>")
			if end < i {
				end = len(text)
			} else {
				end += len("</continuity-capsule>")
			}
			before := []rune(strings.Join(strings.Fields(text[:i]), " "))
			if len(before) > 160 {
				before = append([]rune("…"), before[len(before)-160:]...)
			}
			fmt.Fprintf(&b, "[%s] %s\n%s\n", role, string(before), text[i:end])
			continue
		}
		r := []rune(strings.Join(strings.Fields(text), " "))
		if len(r) > 100 {
			r = append(r[:100], '…')
		}
		fmt.Fprintf(&b, "[%s] %s\n", role, string(r))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, agent+".txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	dump(t, agent, reqs)
}

// dump writes every request the model received to
// $TETHER_AGENTS_RECORD/<agent>.jsonl, when that is set.
func dump(t *testing.T, agent string, reqs []fakemodel.Request) {
	dir := os.Getenv("TETHER_AGENTS_RECORD")
	if dir == "" {
		return
	}
	var b bytes.Buffer
	for _, r := range reqs {
		line, _ := json.Marshal(map[string]any{"seq": r.Seq, "path": r.Path, "kind": fakemodel.Classify(&r), "headers": r.Header, "body": json.RawMessage(r.Body)})
		b.Write(append(line, '\n'))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, agent+".jsonl"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkBranch checks one branch's view after a fork: exactly one block,
// active holds what the branch settled, notUse what it rejected or
// superseded, and none of the other branch's decisions appear at all.
func checkBranch(t *testing.T, name, v string, active, notUse, none []string) {
	t.Helper()
	if n := strings.Count(v, "<continuity-capsule"); n != 1 {
		t.Errorf("%s: the turn shows %d blocks, want 1", name, n)
		return
	}
	block := v[strings.Index(v, "<continuity-capsule"):]
	block = block[:strings.Index(block, "</continuity-capsule>")]
	act, rej, _ := strings.Cut(block, "\nREJECTED")
	for _, f := range active {
		if !strings.Contains(act, f) {
			t.Errorf("%s: %q missing from the active part of its block", name, f)
		}
	}
	for _, f := range notUse {
		if !strings.Contains(rej, f) {
			t.Errorf("%s: %q not listed as rejected or superseded", name, f)
		}
	}
	for _, f := range none {
		if strings.Contains(block, f) {
			t.Errorf("%s: the other branch's %q leaked into this branch's block", name, f)
		}
	}
}

// checkTwins checks the last turn of each of two sessions that ran the
// same script up to the correction (ids, the client ids the header carries):
// each block holds every decision settled by then, and the two blocks are
// two branches' (their epoch tokens differ).
func checkTwins(t *testing.T, s *stack, header string, ids []string) {
	t.Helper()
	refs := map[string]bool{}
	for i, id := range ids {
		v := s.lastMain(t, header, id)
		checkBranch(t, fmt.Sprintf("session %d", i+1), v,
			[]string{"PostgreSQL", "never change the public REST API", "Redis", "Prometheus"}, []string{"GORM", "Memcached"}, nil)
		refs[capsule.Ref(v)] = true
	}
	if len(refs) != len(ids) || refs[""] {
		t.Errorf("the sessions do not each have a block of their own (epoch tokens %v)", slices.Collect(maps.Keys(refs)))
	}
}

// lastMain is the view of the last main request whose header carries id.
func (s *stack) lastMain(t *testing.T, header, id string) string {
	t.Helper()
	reqs := s.requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].Header.Get(header) == id && fakemodel.Classify(&reqs[i]) == fakemodel.KindMain {
			return view(&reqs[i])
		}
	}
	t.Fatalf("no request with %s %s reached the model", header, id)
	return ""
}
