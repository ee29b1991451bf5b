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
	testClaudeCode(t, false)
}

// TestClaudeCodeAutoCompact runs the same session with every turn
// reporting a context near Claude Code's auto-compaction window, so it
// compacts by itself before each later turn: the block must come through
// every one of those compactions, not only the first.
func TestClaudeCodeAutoCompact(t *testing.T) {
	testClaudeCode(t, true)
}

func testClaudeCode(t *testing.T, auto bool) {
	bin := install(t, "@anthropic-ai/claude-code", ClaudeCodeVersion)
	tokens := int64(2000)
	if auto {
		tokens = 190000
	}
	s := start(t, agentModel(tokens))
	home, work := t.TempDir(), t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "claude"), append([]string{"-p", "--output-format", "stream-json", "--verbose"}, args...)...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "HOME="+home, "ANTHROPIC_BASE_URL="+s.url, "ANTHROPIC_API_KEY=sk-ant-test-0123456789",
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "CLAUDE_CODE_ENABLE_TASKS=false", "CLAUDE_CODE_AUTO_COMPACT_WINDOW=200000")
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
	if !auto {
		if out := run("-c", "/compact"); strings.Contains(out, "Not enough messages to compact") {
			t.Fatalf("Claude Code did not compact:\n%s", tail([]byte(out)))
		}
	}
	run("-c", afterCompaction)
	reqs := s.requests()
	if !planCalled(reqs, "TodoWrite") {
		t.Error("the model never got a TodoWrite round trip; did Claude Code stop offering the tool?")
	}
	n, after := checkRun(t, reqs, agentRules{Compaction: []string{"claude-code-summary-2.1"}, After: []string{"claude-code-continued-session"}}, true)
	t.Logf("%d compactions; the model saw:\n%s", n, s.summary())
	switch {
	case !auto && (n != 1 || len(after) != 1):
		t.Fatalf("the model saw %d compaction requests and %d turns after one, want 1 and 1", n, len(after))
	case auto && n < 3:
		t.Fatalf("Claude Code compacted %d times by itself, want at least 3", n)
	}
	name := "claude-code"
	if auto {
		name = "claude-code-auto"
	}
	record(t, name, after[len(after)-1], reqs)
}
