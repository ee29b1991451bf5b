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

	"github.com/tidwall/gjson"
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

// TestClaudeCodeBuiltinExtractor is the auto-compaction flow with the
// default extractor, the built-in one: no model call is made to extract
// anything, and the explicitly marked decisions still come through.
func TestClaudeCodeBuiltinExtractor(t *testing.T) {
	testClaudeCode(t, true, "extractor: {route: builtin/markers}")
}

// TestClaudeCodeTasks runs the /compact flow with Claude Code's default
// plan tools (TaskCreate/TaskUpdate) instead of TodoWrite.
func TestClaudeCodeTasks(t *testing.T) {
	t.Setenv("TETHER_TEST_CLAUDE_TASKS", "1")
	testClaudeCode(t, false)
}

func testClaudeCode(t *testing.T, auto bool, continuity ...string) {
	bin := install(t, "@anthropic-ai/claude-code", ClaudeCodeVersion)
	tokens := int64(2000)
	if auto {
		tokens = 190000
	}
	s := start(t, agentModel(tokens), continuity...)
	run := claude(t, bin, s)
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
	tool := "TodoWrite"
	if os.Getenv("TETHER_TEST_CLAUDE_TASKS") != "" {
		tool = "TaskCreate"
	}
	if !planCalled(reqs, tool) {
		t.Errorf("the model never got a %s round trip; did Claude Code stop offering the tool?", tool)
	}
	n, after := checkRun(t, reqs, agentRules{Compaction: []string{"claude-code-summary-2.1"}, After: []string{"claude-code-continued-session"}, PlanUpdate: tool == "TodoWrite"}, true)
	t.Logf("%d compactions; the model saw:\n%s", n, s.summary())
	switch {
	case !auto && (n != 1 || len(after) != 1):
		t.Fatalf("the model saw %d compaction requests and %d turns after one, want 1 and 1", n, len(after))
	case auto && n < 8:
		t.Fatalf("Claude Code compacted %d times by itself, want at least 8", n)
	}
	name := "claude-code"
	if tool != "TodoWrite" {
		name = "claude-code-tasks"
	}
	if auto {
		name = "claude-code-auto"
	}
	name = withExtractor(t, name, reqs, continuity)
	record(t, name, after[len(after)-1], reqs)
}

// claude returns a runner of Claude Code in print mode against the stack,
// with its own HOME and working directory; it fails the test on a non-zero
// exit and returns the stream-json output.
func claude(t *testing.T, bin string, s *stack) func(args ...string) string {
	home, work := t.TempDir(), t.TempDir()
	return func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "claude"), append([]string{"-p", "--output-format", "stream-json", "--verbose", "--allowedTools=Bash"}, args...)...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "HOME="+home, "ANTHROPIC_BASE_URL="+s.url, "ANTHROPIC_API_KEY=sk-ant-test-0123456789",
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "CLAUDE_CODE_AUTO_COMPACT_WINDOW=200000")
		if os.Getenv("TETHER_TEST_CLAUDE_TASKS") == "" {
			cmd.Env = append(cmd.Env, "CLAUDE_CODE_ENABLE_TASKS=false") // TodoWrite instead of the task tools
		}
		cmd.WaitDelay = 5 * time.Second
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("claude %v: %v\n%s", args, err, tail(out))
		}
		return string(out)
	}
}

// sessionID is the session id Claude Code reports in its stream-json init
// event.
func sessionID(t *testing.T, out string) string {
	for _, line := range strings.Split(out, "\n") {
		if id := gjson.Get(line, "session_id").String(); id != "" {
			return id
		}
	}
	t.Fatalf("no session id in Claude Code's output:\n%s", tail([]byte(out)))
	return ""
}

// TestClaudeCodeFork forks a Claude Code session (--fork-session) after
// the Memcached decision: the fork corrects it to Redis, the original goes
// on to decide Prometheus. Each branch is then compacted, and each must
// come back with its own decisions only. copy_on_fork lets the fork start
// from the state the original had at the fork point.
func TestClaudeCodeFork(t *testing.T) {
	bin := install(t, "@anthropic-ai/claude-code", ClaudeCodeVersion)
	s := start(t, agentModel(2000), "copy_on_fork: true")
	run := claude(t, bin, s)
	orig := sessionID(t, run(script[0]))
	for _, m := range script[1:3] {
		run("-r", orig, m)
	}
	fork := sessionID(t, run("-r", orig, "--fork-session", script[4]))
	if fork == orig {
		t.Fatal("--fork-session kept the session id")
	}
	run("-r", orig, script[3])
	lastAfter := func(id string) string {
		t.Helper()
		run("-r", id, "/compact")
		run("-r", id, afterCompaction)
		return s.lastMain(t, "X-Claude-Code-Session-Id", id)
	}
	checkBranch(t, "original", lastAfter(orig), []string{"PostgreSQL", "never change the public REST API", "Memcached", "Prometheus"}, []string{"GORM"}, []string{"Redis"})
	checkBranch(t, "fork", lastAfter(fork), []string{"PostgreSQL", "never change the public REST API", "Redis"}, []string{"GORM", "Memcached"}, []string{"Prometheus"})
	record(t, "claude-code-fork", s.requests()[len(s.requests())-1], s.requests())
}

// TestClaudeCodeTwins runs two Claude Code sessions of the same user with
// the same script, turn for turn, against the deterministic scripted model:
// their histories are the same but for the session id. Each is compacted,
// and each must come back with every decision, under its own block: the
// two neither merge nor fork from each other.
func TestClaudeCodeTwins(t *testing.T) {
	bin := install(t, "@anthropic-ai/claude-code", ClaudeCodeVersion)
	s := start(t, agentModel(2000), "extractor: {route: builtin/markers}")
	run := claude(t, bin, s)
	ids := []string{sessionID(t, run(script[0])), sessionID(t, run(script[0]))}
	if ids[0] == ids[1] {
		t.Fatal("the two sessions have one id")
	}
	for _, m := range script[1:5] {
		for _, id := range ids {
			run("-r", id, m)
		}
	}
	for _, id := range ids {
		run("-r", id, "/compact")
	}
	for _, id := range ids {
		run("-r", id, afterCompaction)
	}
	checkTwins(t, s, "X-Claude-Code-Session-Id", ids)
}
