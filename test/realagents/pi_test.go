//go:build agents

package realagents

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// PiVersion is the pinned Pi release the suite installs.
const PiVersion = "0.73.1"

// TestPi runs Pi (Chat Completions, with its packaged todo extension as the
// plan tool) in print mode, continuing the session each turn. A context
// window below every turn's reported usage makes Pi compact after each turn
// out of band; Pi sends no session id, so Tether attributes each
// summarisation request and the turn after it by content alone.
func TestPi(t *testing.T) {
	testPi(t, "openai-completions")
}

// TestPiAnthropic is the same session with Pi speaking Anthropic Messages.
func TestPiAnthropic(t *testing.T) {
	testPi(t, "anthropic-messages")
}

// TestPiBuiltinExtractor runs the Pi flow with the default extractor, the
// built-in one: no model call extracts anything, and the decisions still
// come through every compaction.
func TestPiBuiltinExtractor(t *testing.T) {
	testPi(t, "openai-completions", "extractor: {route: builtin/markers}")
}

func testPi(t *testing.T, api string, continuity ...string) {
	bin := install(t, "@mariozechner/pi-coding-agent", PiVersion)
	todo := filepath.Join(filepath.Dir(bin), "@mariozechner", "pi-coding-agent", "examples", "extensions", "todo.ts")
	if _, err := os.Stat(todo); err != nil {
		t.Fatalf("Pi's packaged todo extension moved: %v", err)
	}
	s := start(t, agentModel(20000), continuity...)
	home, work := t.TempDir(), t.TempDir()
	dir := filepath.Join(home, ".pi", "agent")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	base := s.url + "/v1"
	if api == "anthropic-messages" {
		base = s.url
	}
	models := `{"providers": {"tether": {
  "baseUrl": "` + base + `", "api": "` + api + `", "apiKey": "sk-test-0123456789",
  "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
  "models": [{"id": "fake-model", "contextWindow": 32000, "maxTokens": 2000}]}}}`
	settings := `{"compaction": {"enabled": true, "reserveTokens": 16384, "keepRecentTokens": 1}}`
	for name, body := range map[string]string{"models.json": models, "settings.json": settings} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "pi"), append([]string{"--model", "tether/fake-model", "-e", todo, "-p"}, args...)...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "HOME="+home, "PI_OFFLINE=1")
		cmd.Stdin = strings.NewReader("")
		cmd.WaitDelay = 5 * time.Second
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("pi %v: %v\n%s\nthe model saw:\n%s", args, err, tail(out), s.summary())
		}
	}
	run(script[0])
	for _, m := range append(script[1:], afterCompaction) {
		run("-c", m)
	}
	reqs := s.requests()
	t.Logf("the model saw:\n%s", s.summary())
	name := "pi"
	if api == "anthropic-messages" {
		name = "pi-anthropic"
	}
	name = withExtractor(t, name, reqs, continuity)
	dump(t, name, reqs)
	if !planCalled(reqs, "todo") {
		t.Error("the model never got a todo round trip; did the extension stop registering the tool?")
	}
	rules := agentRules{Compaction: []string{"pi-summary-initial", "pi-summary-update"}, After: []string{"pi-compacted-summary"}}
	n, after := checkRun(t, reqs, rules, true)
	if n < 8 {
		t.Fatalf("Pi compacted %d times, want at least 8", n)
	}
	record(t, name, after[len(after)-1], reqs)
}
