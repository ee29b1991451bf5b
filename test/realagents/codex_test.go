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

	"github.com/tether-dev/tether/internal/fakemodel"
)

// CodexVersion is the pinned Codex CLI release the suite installs.
const CodexVersion = "0.171.0"

// TestCodexCustomProvider runs Codex CLI with a custom provider (local
// compaction: the summary comes back as text and Tether merges the block
// into it). The auto-compaction limit is below every turn's reported usage,
// so Codex compacts before each later turn.
func TestCodexCustomProvider(t *testing.T) {
	testCodex(t, false)
}

// TestCodexBuiltinProvider runs Codex CLI with the built-in OpenAI provider
// pointed at Tether (remote compaction v2: the answer is one opaque
// compaction item, which Tether passes through untouched, then reinjects
// the block on the following turns).
func TestCodexBuiltinProvider(t *testing.T) {
	testCodex(t, true)
}

func testCodex(t *testing.T, builtin bool) {
	bin := install(t, "@openai/codex", CodexVersion)
	s := start(t, agentModel(2000))
	run := codex(t, bin, s, builtin)
	run(script[0])
	for _, m := range append(script[1:], afterCompaction) {
		run("resume", "--last", m)
	}
	reqs := s.requests()
	if !planCalled(reqs, "update_plan") {
		t.Error("the model never got an update_plan round trip; did Codex stop offering the tool?")
	}
	rules := agentRules{Compaction: []string{"codex-local-request-kind", "codex-checkpoint-prompt"}, After: []string{"codex-summary-handoff"}, PlanUpdate: true}
	name := "codex-custom"
	if builtin {
		rules = agentRules{Compaction: []string{"codex-remote-compaction-v2"}, After: []string{"codex-opaque-compaction-item"}, PlanUpdate: true}
		name = "codex-builtin"
		for _, r := range reqs {
			if fakemodel.Classify(&r) == fakemodel.KindCompaction && gjson.GetBytes(r.Body, "input.@reverse.0.type").String() != "compaction_trigger" {
				t.Errorf("the built-in provider sent a compaction without a compaction_trigger item; not remote compaction v2")
			}
		}
	}
	n, after := checkRun(t, reqs, rules, true)
	if n < 8 {
		t.Fatalf("Codex compacted %d times, want at least 8", n)
	}
	t.Logf("%d compactions; the model saw:\n%s", n, s.summary())
	record(t, name, after[len(after)-1], reqs)
}

// codex returns a runner of Codex CLI (exec --json) against the stack, with
// its own HOME and working directory, the custom or the built-in provider;
// it fails the test on a non-zero exit or a
// reported error and returns the JSON event output.
func codex(t *testing.T, bin string, s *stack, builtin bool) func(args ...string) string {
	home, work := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o700); err != nil {
		t.Fatal(err)
	}
	conf := `model = "fake-model"
model_provider = "tether"

[model_providers.tether]
name = "tether"
base_url = "` + s.url + `/v1"
env_key = "TETHER_TEST_KEY"
wire_api = "responses"
`
	if builtin {
		conf = `model = "gpt-5.2-codex"
openai_base_url = "` + s.url + `/v1"
`
	}
	conf = "model_auto_compact_token_limit = 900\n" + conf + "\n[tools.update_plan]\nenabled = true\n"
	if err := os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "codex"), append([]string{"exec", "--json", "--skip-git-repo-check"}, args...)...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "HOME="+home, "CODEX_HOME="+filepath.Join(home, ".codex"),
			"TETHER_TEST_KEY=sk-test-0123456789", "OPENAI_API_KEY=sk-test-0123456789", "CODEX_API_KEY=sk-test-0123456789")
		cmd.Stdin = strings.NewReader("")
		cmd.WaitDelay = 5 * time.Second
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("codex %v: %v\n%s\nthe model saw:\n%s", args, err, tail(out), s.summary())
		}
		for _, line := range strings.Split(string(out), "\n") {
			if typ := gjson.Get(line, "type").String(); typ == "error" || typ == "turn.failed" {
				t.Fatalf("codex %v reported an error:\n%s", args, tail(out))
			}
		}
		return string(out)
	}
}

// TestCodexTwins runs two Codex threads with the same script, turn for
// turn, against the deterministic scripted model, compacting before every
// later turn: each must come back with every decision under a block of its
// own.
func TestCodexTwins(t *testing.T) {
	bin := install(t, "@openai/codex", CodexVersion)
	s := start(t, agentModel(2000), "extractor: {route: builtin/markers}")
	run := codex(t, bin, s, false)
	ids := []string{threadID(t, run(script[0])), threadID(t, run(script[0]))}
	if ids[0] == ids[1] {
		t.Fatal("the two threads have one id")
	}
	for _, m := range slices.Concat(script[1:5], []string{afterCompaction}) {
		for _, id := range ids {
			run("resume", id, m)
		}
	}
	checkTwins(t, s, "session-id", ids)
}

// threadID is the thread id Codex reports in its thread.started event.
func threadID(t *testing.T, out string) string {
	for _, line := range strings.Split(out, "\n") {
		if id := gjson.Get(line, "thread_id").String(); id != "" {
			return id
		}
	}
	t.Fatalf("no thread id in Codex's output:\n%s", tail([]byte(out)))
	return ""
}
