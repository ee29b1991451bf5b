//go:build agents

package realagents

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/fakemodel"
)

// GeminiCLIVersion is the pinned Gemini CLI release the suite installs.
const GeminiCLIVersion = "0.61.0"

// geminiTokens is what each of the user's turns reports as the prompt size:
// above half of the model's 1M-token window, Gemini CLI's compression
// threshold.
const geminiTokens = 600000

// TestGeminiCLI runs Gemini CLI (generateContent over SSE, with its
// write_todos plan tool) in headless mode through Tether, resuming the
// session each turn. Gemini CLI decides to compress from the prompt size
// the last answer reported, and re-estimates it from the history when a
// session resumes; so each of the user's turns is first answered with a
// harmless directory listing reporting a large prompt, and Gemini CLI
// compresses (a <state_snapshot> request and its verification) before it
// sends the listing back.
func TestGeminiCLI(t *testing.T) {
	testGemini(t)
}

// TestGeminiCLIBuiltinExtractor runs the Gemini CLI flow with the default
// extractor, the built-in one.
func TestGeminiCLIBuiltinExtractor(t *testing.T) {
	testGemini(t, "extractor: {route: builtin/markers}")
}

func testGemini(t *testing.T, continuity ...string) {
	bin := install(t, "@google/gemini-cli", GeminiCLIVersion)
	inner := agentModel(100)
	s := start(t, func(req *fakemodel.Request) fakemodel.Reply {
		r := inner(req)
		if req.Dialect != fakemodel.DialectGemini || fakemodel.Classify(req) != fakemodel.KindMain ||
			lastIsToolResult(req) || len(r.ToolCalls) > 0 || !toolNames(req)["list_directory"] {
			return r
		}
		u := lastUser(req)
		if !strings.Contains(u, afterCompaction) && !slices.ContainsFunc(script, func(s string) bool { return strings.Contains(u, s) }) {
			return r
		}
		return fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{Name: "list_directory", Arguments: `{"dir_path":"."}`}}, InputTokens: geminiTokens, OutputTokens: 10}
	}, continuity...)
	home, work := t.TempDir(), t.TempDir()
	dir := filepath.Join(home, ".gemini")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	settings := `{
  "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}},
  "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false},
  "model": {"compressionThreshold": 0.5},
  "ui": {"hideTips": true}
}`
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "gemini"), append([]string{"-m", "gemini-2.5-pro", "--yolo", "--skip-trust"}, args...)...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "HOME="+home, "GEMINI_API_KEY=sk-test-0123456789",
			"GOOGLE_GEMINI_BASE_URL="+s.url, "GEMINI_CLI_NO_RELAUNCH=true", "NO_BROWSER=1")
		cmd.Stdin = strings.NewReader("")
		cmd.WaitDelay = 5 * time.Second
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("gemini %v: %v\n%s\nthe model saw:\n%s", args, err, tail(out), s.summary())
		}
	}
	run("-p", script[0])
	for _, m := range append(script[1:], afterCompaction) {
		run("-r", "latest", "-p", m)
	}
	reqs := s.requests()
	t.Logf("the model saw:\n%s", s.summary())
	name := "gemini-cli"
	name = withExtractor(t, name, reqs, continuity)
	dump(t, name, reqs)
	if !planCalled(reqs, "write_todos") {
		t.Error("the model never got a write_todos round trip; did Gemini CLI stop offering the tool?")
	}
	rules := agentRules{Compaction: []string{"gemini-state-snapshot"}, After: []string{"gemini-state-snapshot-history"}, PlanUpdate: true}
	n, after := checkRun(t, reqs, rules, true)
	if n < 16 {
		t.Fatalf("Gemini CLI sent %d compression requests (two per compression), want at least 16", n)
	}
	record(t, name, after[len(after)-1], reqs)
}
