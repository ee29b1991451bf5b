//go:build agents

package realagents

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/app"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/demo"
	"github.com/tether-dev/tether/internal/fakemodel"
)

// ClaudeCodeVersion is the pinned Claude Code release the suite installs.
const ClaudeCodeVersion = "2.1.197"

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

// stack is the scripted model and Tether, both on 127.0.0.1.
type stack struct {
	fake *fakemodel.Server
	url  string
	mu   sync.Mutex
	seen []fakemodel.Request
}

func start(t *testing.T) *stack {
	t.Helper()
	s := &stack{}
	model := demo.Model()
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
  - {name: model, dialect: anthropic, base_url: %q}
  - {name: extractor, dialect: openai, base_url: %q}
routes:
  - {match: "*", provider: model}
  - {match: "*", provider: extractor}
compaction_continuity:
  enabled: true
  extractor: {route: extractor/%s}
`, s.fake.URL, s.fake.URL+"/v1", demo.ExtractorModel)), func(string) string { return "" })
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

// TestClaudeCode runs Claude Code through Tether: decisions (one superseded,
// one alternative rejected) and a constraint over several turns, a /compact
// against the scripted lossy compactor, and a further turn, which must carry
// the active decisions in a continuity block and the superseded one only as
// superseded.
func TestClaudeCode(t *testing.T) {
	bin := install(t, "@anthropic-ai/claude-code", ClaudeCodeVersion)
	s := start(t)
	home, work := t.TempDir(), t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "claude"), append([]string{"-p", "--output-format", "stream-json", "--verbose"}, args...)...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "HOME="+home, "ANTHROPIC_BASE_URL="+s.url, "ANTHROPIC_API_KEY=sk-ant-test-0123456789",
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "CLAUDE_CODE_ENABLE_TASKS=false")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("claude %v: %v\n%s", args, err, tail(out))
		}
		return string(out)
	}
	run("We are building an inventory service. Decision: use PostgreSQL, not MongoDB.")
	run("-c", "Constraint: never change the public REST API.")
	run("-c", "Decision: use Memcached for the cache. Rejected: GORM — we write SQL by hand.")
	run("-c", "Actually, use Redis instead of Memcached for the cache.")
	out := run("-c", "/compact")
	if strings.Contains(out, "Not enough messages to compact") {
		t.Fatalf("Claude Code did not compact:\n%s", tail([]byte(out)))
	}
	var compactions int
	for _, r := range s.requests() {
		if fakemodel.Classify(&r) == fakemodel.KindCompaction {
			compactions++
			if !strings.Contains(string(r.Body), "<continuity-capsule") {
				t.Errorf("the compaction request reached the model without the continuity block; did rule claude_code.* in internal/compaction/rules.yaml stop matching?")
			}
		}
	}
	if compactions != 1 {
		t.Fatalf("the model saw %d compaction requests, want 1", compactions)
	}
	run("-c", "What is next?")
	reqs := s.requests()
	last := reqs[len(reqs)-1]
	view := modelText(t, last.Body)
	for _, want := range []string{"use PostgreSQL, not MongoDB", "never change the public REST API", "Use Redis", "GORM"} {
		if !strings.Contains(view, want) {
			t.Errorf("after compaction the model was not shown %q", want)
		}
	}
	if p := demo.Check(view); len(p) > 0 {
		for _, x := range p {
			if strings.Contains(x, "plan step") || strings.Contains(x, "Prometheus") {
				continue // this session makes no plan and no metrics decision
			}
			t.Error(x)
		}
	}
	if n := strings.Count(view, "<continuity-capsule"); n != 1 {
		t.Errorf("the first turn after compaction shows %d blocks, want 1", n)
	}
}

// modelText is every text the model reads in an Anthropic request.
func modelText(t *testing.T, body []byte) string {
	var req struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, m := range req.Messages {
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			b.WriteString(s + "\n")
			continue
		}
		var parts []struct {
			Text string `json:"text"`
		}
		_ = json.Unmarshal(m.Content, &parts)
		for _, p := range parts {
			b.WriteString(p.Text + "\n")
		}
	}
	return b.String()
}

func tail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}
