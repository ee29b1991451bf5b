//go:build agents

package realagents

import (
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/fakemodel"
)

// everyday is a session in the words people type to an agent, with no
// "Decision:" labels: compound requests, conventions, a rejected option
// chosen after all and dropped again, a reversal with its reason.
var everyday = []string{
	"We're building a URL shortener. Let's use chi for routing and store links in SQLite. Please make a plan.",
	"Don't add any external auth library; we'll do API keys ourselves.",
	"We tried Redis for caching but drop it, no cache for now.",
	"Keep all handlers under internal/http.",
	"Actually, let's switch from SQLite to Postgres since we'll deploy on Fly.",
	"Run the tests.",
	"Hmm, we need a cache after all. Let's use Redis for the cache.",
	"On second thought, go back to SQLite; Postgres is overkill.",
	"Never mind, forget Redis, no cache.",
}

// TestClaudeCodeEverydaySession drives Claude Code through the everyday
// session with the built-in extractor, compacting by itself before every
// turn: the block after the last compaction holds what the user settled in
// their own words and nothing they took back.
func TestClaudeCodeEverydaySession(t *testing.T) {
	bin := install(t, "@anthropic-ai/claude-code", ClaudeCodeVersion)
	s := start(t, agentModel(190000), "extractor: {route: builtin/markers}")
	run := claude(t, bin, s)
	run(everyday[0])
	for _, m := range everyday[1:] {
		run("-c", m)
	}
	run("-c", afterCompaction)
	reqs := s.requests()
	var last *fakemodel.Request
	compactions, pending := 0, false
	for i := range reqs {
		r := &reqs[i]
		switch fakemodel.Classify(r) {
		case fakemodel.KindCompaction:
			compactions++
			pending = true
		case fakemodel.KindMain:
			if pending {
				pending, last = false, r
				if n := strings.Count(view(r), "<continuity-capsule"); n != 1 {
					t.Errorf("the first turn after compaction %d shows %d continuity blocks, want 1", compactions, n)
				}
			}
		}
	}
	if compactions < 5 || last == nil || !strings.Contains(lastUser(last), afterCompaction) {
		t.Fatalf("Claude Code compacted %d times, want at least 5, the last before the final turn; the model saw:\n%s", compactions, s.summary())
	}
	blk := view(last)
	blk = blk[strings.LastIndex(blk, "<continuity-capsule"):]
	blk, _, _ = strings.Cut(blk, "</continuity-capsule>")
	active, rest, _ := strings.Cut(blk, "\nCONSTRAINTS")
	rules, rejected, _ := strings.Cut(rest, "\nREJECTED")
	for _, want := range []string{"chi", "SQLite", "API keys"} {
		if !strings.Contains(active, want) {
			t.Errorf("%q is not among the active decisions:\n%s", want, blk)
		}
	}
	for _, gone := range []string{"Redis", "Use Postgres"} {
		if strings.Contains(active, gone) {
			t.Errorf("%q, taken back, is still active:\n%s", gone, blk)
		}
	}
	for _, want := range []string{"external auth library", "internal/http"} {
		if !strings.Contains(rules, want) {
			t.Errorf("%q is not among the constraints:\n%s", want, blk)
		}
	}
	if !strings.Contains(rejected, "Redis") || !strings.Contains(rejected, "Postgres") {
		t.Errorf("Redis and Postgres are not shown as taken back:\n%s", blk)
	}
	record(t, withExtractor(t, "claude-code-everyday", reqs, []string{"builtin"}), *last, reqs)
}
