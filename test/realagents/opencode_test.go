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

	"github.com/tidwall/gjson"
)

// OpenCodeVersion is the pinned OpenCode release the suite installs.
const OpenCodeVersion = "1.18.33"

// TestOpenCode runs OpenCode (Chat Completions through an
// @ai-sdk/openai-compatible provider) with a model context small enough
// that every reported usage overflows it, so OpenCode compacts out of band
// (a separate summarisation request holding the flattened conversation)
// after each turn; Tether attributes that request to the session by its
// header, merges the block into the summary, and the next turn carries it.
func TestOpenCode(t *testing.T) {
	testOpenCode(t)
}

// TestOpenCodeBuiltinExtractor runs the OpenCode flow with the default
// extractor, the built-in one: no model call extracts anything, and the
// decisions, sent by "opencode run" in double quotes, still come through
// every compaction.
func TestOpenCodeBuiltinExtractor(t *testing.T) {
	testOpenCode(t, "extractor: {route: builtin/markers}")
}

func testOpenCode(t *testing.T, continuity ...string) {
	bin := install(t, "opencode-ai", OpenCodeVersion)
	s := start(t, agentModel(20000), continuity...)
	run := opencode(t, bin, s)
	run(script[0])
	for _, m := range append(script[1:], afterCompaction) {
		run("-c", m)
	}
	reqs := s.requests()
	t.Logf("the model saw:\n%s", s.summary())
	if !planCalled(reqs, "todowrite") {
		t.Error("the model never got a todowrite round trip; did OpenCode stop offering the tool?")
	}
	rules := agentRules{Compaction: []string{"opencode-anchored-summary-1.18"}, After: []string{"opencode-what-did-we-do", "opencode-anchored-assistant"}, PlanUpdate: true}
	name := "opencode"
	name = withExtractor(t, name, reqs, continuity)
	dump(t, name, reqs)
	n, after := checkRun(t, reqs, rules, true)
	if n < 8 {
		t.Fatalf("OpenCode compacted %d times, want at least 8", n)
	}
	record(t, name, after[len(after)-1], reqs)
}

// opencode configures OpenCode (its own HOME and working directory, a
// provider pointing at the stack, a context limit below every turn's
// reported usage) and returns a runner of "opencode run --format json".
func opencode(t *testing.T, bin string, s *stack) func(args ...string) string {
	home, work := t.TempDir(), t.TempDir()
	conf := `{
  "$schema": "https://opencode.ai/config.json",
  "model": "tether/fake-model",
  "small_model": "tether/fake-model",
  "autoupdate": false,
  "share": "disabled",
  "provider": {
    "tether": {
      "npm": "@ai-sdk/openai-compatible",
      "name": "Tether",
      "options": {"baseURL": "` + s.url + `/v1", "apiKey": "sk-test-0123456789"},
      "models": {"fake-model": {"name": "fake-model", "tool_call": true, "limit": {"context": 16000, "output": 2000}}}
    }
  }
}`
	dir := filepath.Join(home, ".config", "opencode")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "opencode.json"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "opencode"), append([]string{"run", "--format", "json", "-m", "tether/fake-model"}, args...)...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
			"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
			"XDG_STATE_HOME="+filepath.Join(home, ".local", "state"),
			"OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_LSP_DOWNLOAD=1",
			"OPENCODE_DISABLE_DEFAULT_PLUGINS=1", "OPENCODE_DISABLE_CLAUDE_CODE=1")
		cmd.Stdin = strings.NewReader("")
		cmd.WaitDelay = 5 * time.Second
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("opencode %v: %v\n%s\nthe model saw:\n%s", args, err, tail(out), s.summary())
		}
		for _, line := range strings.Split(string(out), "\n") {
			if gjson.Get(line, "type").String() == "error" {
				t.Fatalf("opencode %v reported an error:\n%s\nthe model saw:\n%s", args, tail(out), s.summary())
			}
		}
		return string(out)
	}
}

// TestOpenCodeFork forks an OpenCode session (run --session … --fork)
// after the Memcached decision: the fork corrects it to Redis, the original
// goes on to decide Prometheus. Both compact on every turn; each must come
// back with its own decisions only.
func TestOpenCodeFork(t *testing.T) {
	bin := install(t, "opencode-ai", OpenCodeVersion)
	s := start(t, agentModel(20000), "copy_on_fork: true")
	run := opencode(t, bin, s)
	orig := jsonSessionID(t, run(script[0]))
	for _, m := range script[1:3] {
		run("--session", orig, m)
	}
	fork := jsonSessionID(t, run("--session", orig, "--fork", script[4]))
	if fork == orig {
		t.Fatal("--fork kept the session id")
	}
	run("--session", orig, script[3])
	run("--session", orig, afterCompaction)
	run("--session", fork, afterCompaction)
	last := func(id string) string { return s.lastMain(t, "X-Session-Id", id) }
	dump(t, "opencode-fork", s.requests())
	checkBranch(t, "original", last(orig), []string{"PostgreSQL", "never change the public REST API", "Memcached", "Prometheus"}, []string{"GORM"}, []string{"Redis"})
	checkBranch(t, "fork", last(fork), []string{"PostgreSQL", "never change the public REST API", "Redis"}, []string{"GORM", "Memcached"}, []string{"Prometheus"})
}

// jsonSessionID is the first sessionID in OpenCode's JSON event output.
func jsonSessionID(t *testing.T, out string) string {
	for _, line := range strings.Split(out, "\n") {
		if id := gjson.Get(line, "sessionID").String(); id != "" {
			return id
		}
	}
	t.Fatalf("no session id in OpenCode's output:\n%s", tail([]byte(out)))
	return ""
}

// TestOpenCodeTwins runs two OpenCode sessions with the same script, turn
// for turn, against the deterministic scripted model, compacting out of
// band after every turn, with the default (built-in) extractor: each must
// come back with every decision under a block of its own. "opencode run"
// sends each message in double quotes, which the built-in extractor once
// read as a quotation, keeping nothing.
func TestOpenCodeTwins(t *testing.T) {
	bin := install(t, "opencode-ai", OpenCodeVersion)
	s := start(t, agentModel(20000), "extractor: {route: builtin/markers}")
	run := opencode(t, bin, s)
	ids := []string{jsonSessionID(t, run(script[0])), jsonSessionID(t, run(script[0]))}
	if ids[0] == ids[1] {
		t.Fatal("the two sessions have one id")
	}
	for _, m := range slices.Concat(script[1:5], []string{afterCompaction}) {
		for _, id := range ids {
			run("--session", id, m)
		}
	}
	checkTwins(t, s, "X-Session-Id", ids)
}
