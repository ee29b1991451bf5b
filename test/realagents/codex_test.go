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

	"github.com/tether-dev/tether/internal/demo"
	"github.com/tether-dev/tether/internal/fakemodel"
)

// CodexVersion is the pinned Codex CLI release the suite installs.
const CodexVersion = "0.171.0"

// TestCodexCustomProvider runs Codex CLI (custom provider, local
// compaction) through Tether with an auto-compaction limit below every
// turn's reported usage, so it compacts before each of the later turns:
// after four compactions the model still has the active decisions, the
// constraint, the rejection, and Memcached only as superseded.
func TestCodexCustomProvider(t *testing.T) {
	bin := install(t, "@openai/codex", CodexVersion)
	s := start(t)
	home, work := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o700); err != nil {
		t.Fatal(err)
	}
	conf := `model = "fake-model"
model_provider = "tether"
model_auto_compact_token_limit = 900

[model_providers.tether]
name = "tether"
base_url = "` + s.url + `/v1"
env_key = "TETHER_TEST_KEY"
wire_api = "responses"
`
	if err := os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "codex"), append([]string{"exec", "--json", "--skip-git-repo-check"}, args...)...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "HOME="+home, "TETHER_TEST_KEY=sk-test-0123456789", "CODEX_HOME="+filepath.Join(home, ".codex"))
		cmd.Stdin = strings.NewReader("")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("codex %v: %v\n%s", args, err, tail(out))
		}
	}
	run("We are building an inventory service. Decision: use PostgreSQL, not MongoDB.")
	for _, m := range []string{
		"Constraint: never change the public REST API.",
		"Decision: use Memcached for the cache. Rejected: GORM — we write SQL by hand.",
		"Actually, use Redis instead of Memcached for the cache.",
		"What is next?",
	} {
		run("resume", "--last", m)
	}
	var compactions int
	var last fakemodel.Request
	for _, r := range s.requests() {
		if r.Model() == demo.ExtractorModel {
			continue
		}
		if fakemodel.Classify(&r) == fakemodel.KindCompaction {
			compactions++
			if !strings.Contains(string(r.Body), "<continuity-capsule") && compactions > 1 {
				t.Errorf("compaction %d reached the model without the continuity block; did rule codex.local.* in internal/compaction/rules.yaml stop matching?", compactions)
			}
			continue
		}
		last = r
	}
	if compactions < 3 {
		t.Fatalf("Codex compacted %d times, want at least 3", compactions)
	}
	var view strings.Builder
	gjson.GetBytes(last.Body, "input").ForEach(func(_, it gjson.Result) bool {
		it.Get("content").ForEach(func(_, c gjson.Result) bool {
			view.WriteString(c.Get("text").String() + "\n")
			return true
		})
		return true
	})
	v := view.String()
	for _, want := range []string{"use PostgreSQL, not MongoDB", "never change the public REST API", "Use Redis", "GORM"} {
		if !strings.Contains(v, want) {
			t.Errorf("after %d compactions the model was not shown %q", compactions, want)
		}
	}
	for _, x := range demo.Check(v) {
		if !strings.Contains(x, "plan step") && !strings.Contains(x, "Prometheus") {
			t.Error(x)
		}
	}
	if n := strings.Count(v, "<continuity-capsule"); n != 1 {
		t.Errorf("the last turn shows %d blocks, want 1", n)
	}
}
