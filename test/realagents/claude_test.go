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

// ClaudeCodeVersion is the pinned Claude Code release the suite installs.
const ClaudeCodeVersion = "2.1.197"

// TestClaudeCode runs Claude Code through Tether: the scripted session (a
// TodoWrite plan, decisions, a constraint, a rejection and a correction),
// a /compact against the scripted lossy compactor, and one more turn, which
// must carry the plan and the active decisions in one continuity block and
// the superseded one only as superseded.
func TestClaudeCode(t *testing.T) {
	bin := install(t, "@anthropic-ai/claude-code", ClaudeCodeVersion)
	s := start(t, agentModel(2000))
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
	run(script[0])
	for _, m := range script[1:] {
		run("-c", m)
	}
	if out := run("-c", "/compact"); strings.Contains(out, "Not enough messages to compact") {
		t.Fatalf("Claude Code did not compact:\n%s", tail([]byte(out)))
	}
	run("-c", afterCompaction)
	reqs := s.requests()
	if !planCalled(reqs, "TodoWrite") {
		t.Error("the model never got a TodoWrite round trip; did Claude Code stop offering the tool?")
	}
	n, after := checkRun(t, reqs, agentRules{Compaction: []string{"claude-code-summary-2.1"}, After: []string{"claude-code-continued-session"}}, true)
	if n != 1 || len(after) != 1 {
		t.Fatalf("the model saw %d compaction requests and %d turns after one, want 1 and 1", n, len(after))
	}
	t.Logf("the model saw:\n%s", s.summary())
	record(t, "claude-code", after[0], reqs)
}
