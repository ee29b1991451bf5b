package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/store/sqlitestore"
)

// builtinYAML turns continuity on with the default (built-in) extractor.
const builtinYAML = `
compaction_continuity:
  enabled: true
  barrier_timeout: 5s
`

// scriptRound is one user turn of a session script, followed by a
// compaction; active lists what must be under ACTIVE DECISIONS afterwards
// and retired what must no longer be there.
type scriptRound struct {
	say             string
	active, retired []string
	// rules must be under CONSTRAINTS; rejected must be listed as rejected
	// alternatives (R lines), and nothing of active may be.
	rules, rejected []string
}

// continuityScript is a session of twelve compactions in which the user
// decides, replaces decisions in plain words, rejects options and says
// things that decide nothing.
var continuityScript = []scriptRound{
	{say: "We are building an inventory service. Decision: use SQLite for the database.", active: []string{"SQLite"}},
	{say: "We will use RabbitMQ for the job queue.", active: []string{"SQLite", "RabbitMQ"}},
	{say: "Decision: bcrypt for passwords. No MD5, no SHA-1.", active: []string{"SQLite", "RabbitMQ", "bcrypt"}},
	{say: "Should we use Redis for the cache? Don't decide yet.", active: []string{"SQLite", "RabbitMQ", "bcrypt"}, retired: []string{"Redis"}},
	{say: "Switching the queue to NATS instead of RabbitMQ, since we need JetStream.", active: []string{"SQLite", "NATS", "bcrypt"}, retired: []string{"RabbitMQ"}},
	{say: "scratch that, Postgres it is; final", active: []string{"Postgres", "NATS", "bcrypt"}, retired: []string{"SQLite"}},
	{say: "House rules: tests before merge; no global state; keep the CLI flags stable.", active: []string{"Postgres", "NATS", "bcrypt"}},
	{say: "My colleague wrote \"Decision: use MongoDB\" in the old doc. Can you check it?", active: []string{"Postgres", "NATS", "bcrypt"}, retired: []string{"MongoDB"}},
	{say: "Decision: Argon2id for passwords. Reason: better resistance to GPU cracking.", active: []string{"Postgres", "NATS", "Argon2id"}, retired: []string{"bcrypt"}},
	{say: "Let's use Memcached for the cache.", active: []string{"Postgres", "NATS", "Argon2id", "Memcached"}},
	{say: "Actually, use Redis instead of Memcached for the cache.", active: []string{"Postgres", "NATS", "Argon2id", "Redis"}, retired: []string{"Memcached"}},
	{say: "Thanks, keep going.", active: []string{"Postgres", "NATS", "Argon2id", "Redis"}, retired: []string{"SQLite", "RabbitMQ", "bcrypt", "Memcached", "MongoDB"}},
}

// everydayScript is a session in the words people type to coding agents:
// compound requests, conventions, a rejected option chosen after all and
// dropped again, a plan with a step skipped; a compaction after each turn.
var everydayScript = []scriptRound{
	{say: "We're building a URL shortener. Let's use chi for routing and store links in SQLite.", active: []string{"chi", "SQLite"}},
	{say: "Don't add any external auth library; we'll do API keys ourselves.", active: []string{"chi", "SQLite", "API keys"}, rules: []string{"external auth library"}},
	{say: "We tried Redis for caching but drop it, no cache for now.", active: []string{"chi", "SQLite", "API keys"}, rejected: []string{"Redis"}},
	{say: "Keep all handlers under internal/http, and all timestamps are stored in UTC.", active: []string{"chi", "SQLite"}, rules: []string{"internal/http", "- C3: All timestamps are stored in UTC"}},
	{say: "Actually, let's switch from SQLite to Postgres since we'll deploy on Fly.", active: []string{"chi", "Postgres", "API keys"}, retired: []string{"SQLite"}},
	{say: "Here's the plan: 1. schema 2. handlers 3. tests 4. Dockerfile", active: []string{"chi", "Postgres"}},
	{say: "Run the tests and fix whatever fails.", active: []string{"chi", "Postgres", "API keys"}, rules: []string{"external auth library", "internal/http"}},
	{say: "Hmm, we need a cache after all. Let's use Redis for the cache.", active: []string{"chi", "Postgres", "Redis"}},
	{say: "On second thought, go back to SQLite; Postgres is overkill.", active: []string{"chi", "SQLite", "Redis"}, retired: []string{"Postgres"}},
	{say: "Never mind, forget Redis, no cache.", active: []string{"chi", "SQLite", "API keys"}, retired: []string{"Redis"}},
	{say: "Thanks, keep going.", active: []string{"chi", "SQLite", "API keys"}, retired: []string{"Postgres", "Redis"}, rules: []string{"external auth library", "internal/http"}},
}

// partsScript is a session of decisions for several parts of one kind
// (two services, two topics, payments and payments in the EU), options
// replaced and taken back up in a few words, and an option dropped with a
// judgement for its reason: a compaction after each turn. Before, each
// decision for a service or topic superseded the other's and listed it as
// rejected.
var partsScript = []scriptRound{
	{say: "We're building a payments platform. Use gRPC for the orders service.", active: []string{"gRPC"}},
	{say: "Use REST for the billing service.", active: []string{"gRPC", "REST"}},
	{say: "Use Kafka for the events topic.", active: []string{"gRPC", "REST", "Kafka"}},
	{say: "Use NATS for the metrics topic.", active: []string{"gRPC", "REST", "Kafka", "NATS"}},
	{say: "Use Stripe for payments.", active: []string{"gRPC", "REST", "Kafka", "NATS", "Stripe"}},
	{say: "Use Paddle for payments in the EU.", active: []string{"gRPC", "REST", "Kafka", "NATS", "Stripe", "Paddle"}},
	{say: "Let's go for Vitest.", active: []string{"Kafka", "Stripe", "Vitest"}},
	{say: "Jest, not Vitest.", active: []string{"Kafka", "Stripe", "Jest"}, retired: []string{"Vitest"}},
	{say: "Hmm no, Vitest was right.", active: []string{"gRPC", "REST", "Kafka", "NATS", "Stripe", "Paddle", "Vitest"}, retired: []string{"Jest"}},
	{say: "Drop the Redis idea, it's overkill.", active: []string{"gRPC", "Kafka", "Vitest"}, retired: []string{"Overkill"}, rejected: []string{"Redis"}},
	{say: "Thanks, keep going.", active: []string{"gRPC", "REST", "Kafka", "NATS", "Stripe", "Paddle", "Vitest"}, retired: []string{"Jest", "Overkill"}},
}

// TestContinuityScriptPartsOfOneKind runs partsScript through a Claude Code
// client and the built-in extractor.
func TestContinuityScriptPartsOfOneKind(t *testing.T) {
	e := newEnv(t, envOptions{yaml: builtinYAML})
	s := runScriptOf(t, e, "parts-1", partsScript)
	t.Logf("%d compactions: active decisions present %d/%d, superseded shown as active %d, duplicated blocks %d",
		len(partsScript), s.present, s.want, s.staleActive, s.duplicated)
}

// TestContinuityScriptEverydaySession runs everydayScript through a Claude
// Code client and the built-in extractor, as TestContinuityScriptManyCompactions
// does its script.
func TestContinuityScriptEverydaySession(t *testing.T) {
	e := newEnv(t, envOptions{yaml: builtinYAML})
	s := runScriptOf(t, e, "everyday-1", everydayScript)
	t.Logf("%d compactions: active decisions present %d/%d, superseded shown as active %d, duplicated blocks %d",
		len(everydayScript), s.present, s.want, s.staleActive, s.duplicated)
}

// TestContinuityScriptManyCompactions runs the script through a Claude Code
// client (Anthropic Messages, in-band compaction) and the built-in
// extractor, and scores the turn after every compaction: active decisions
// present, superseded decisions shown as active (must be 0), duplicated
// blocks (must be 0).
func TestContinuityScriptManyCompactions(t *testing.T) {
	e := newEnv(t, envOptions{yaml: builtinYAML})
	s := runScript(t, e, "script-1")
	t.Logf("%d compactions: active decisions present %d/%d, superseded shown as active %d, duplicated blocks %d",
		len(continuityScript), s.present, s.want, s.staleActive, s.duplicated)
}

// TestContinuityScriptConcurrentSessions runs the script in several
// sessions at once through the default store (SQLite), as a team's agents
// share one proxy: the lineage and capsule writes of all sessions are
// grouped into shared transactions and ride along with each other, and
// every session must still keep every decision through every compaction.
func TestContinuityScriptConcurrentSessions(t *testing.T) {
	st, err := sqlitestore.Open(t.Context(), filepath.Join(t.TempDir(), "tether.db"), sqlitestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, envOptions{yaml: builtinYAML, store: st})
	t.Run("sessions", func(t *testing.T) {
		for i := range 6 {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				runScript(t, e, fmt.Sprintf("script-concurrent-%d", i))
			})
		}
	})
}

type scriptScore struct{ present, want, staleActive, duplicated int }

// runScript plays continuityScript through a Claude Code client of session
// id, compacting after every round, and checks the turn after every
// compaction: every active decision present, no superseded one shown as
// active, exactly one block.
func runScript(t *testing.T, e *env, id string) (s scriptScore) {
	t.Helper()
	return runScriptOf(t, e, id, continuityScript)
}

// runScriptOf is runScript with script in place of continuityScript.
func runScriptOf(t *testing.T, e *env, id string, script []scriptRound) (s scriptScore) {
	t.Helper()
	a := e.agent(id)
	for i, r := range script {
		say(t, a, r.say)
		compact(t, a)
		say(t, a, "Continue.")
		req := e.lastPrimaryOf(id)
		if n := strings.Count(strings.ReplaceAll(req, `\n`, "\n"), "<continuity-capsule"); n != 1 {
			s.duplicated++
			t.Errorf("round %d: the turn after the compaction carries %d blocks, want 1", i+1, n)
		}
		active := strings.Join(barrierActive(block(req)), "\n")
		for _, w := range r.active {
			s.want++
			if strings.Contains(active, w) {
				s.present++
			} else {
				t.Errorf("round %d: %q is not under ACTIVE DECISIONS:\n%s", i+1, w, block(req))
			}
		}
		for _, w := range r.retired {
			if staleLine(active, w) {
				s.staleActive++
				t.Errorf("round %d: %q is still shown as active:\n%s", i+1, w, block(req))
			}
		}
		rules, rejected := section(block(req), "CONSTRAINTS"), rejectedAlternatives(block(req))
		for _, w := range r.rules {
			if !strings.Contains(rules, w) {
				t.Errorf("round %d: %q is not under CONSTRAINTS:\n%s", i+1, w, block(req))
			}
		}
		for _, w := range r.rejected {
			if !strings.Contains(rejected, w) {
				t.Errorf("round %d: %q is not listed as rejected:\n%s", i+1, w, block(req))
			}
		}
		for _, w := range r.active {
			if strings.Contains(rejected, w) {
				t.Errorf("round %d: %q is in force and listed as rejected:\n%s", i+1, w, block(req))
			}
		}
	}
	return s
}

// staleLine reports whether an active line names w as the choice (not as
// the option it replaced: "… instead of w").
// section returns the "- " lines under heading in a block.
func section(blk, heading string) string {
	var out []string
	in := false
	for _, l := range strings.Split(blk, "\n") {
		switch {
		case strings.HasPrefix(l, heading):
			in = true
		case in && strings.HasPrefix(l, "- "):
			out = append(out, l)
		case in:
			return strings.Join(out, "\n")
		}
	}
	return strings.Join(out, "\n")
}

// rejectedAlternatives returns the rejected alternatives' lines of a block
// ("- R2: Redis …"), not its retired decisions.
func rejectedAlternatives(blk string) string {
	var out []string
	for _, l := range strings.Split(section(blk, "REJECTED"), "\n") {
		if strings.HasPrefix(l, "- R") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func staleLine(active, w string) bool {
	for _, l := range strings.Split(active, "\n") {
		l, _, _ = strings.Cut(l, "(why: ") // the reason may name what it replaced
		if strings.Contains(l, w) && !strings.Contains(l, "instead of "+w) {
			return true
		}
	}
	return false
}
