package extract

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tether-dev/tether/internal/capsule"
	"github.com/tether-dev/tether/internal/dialect"
)

// markers runs the built-in extractor over one delta and merges its ops
// into prev, as the pool does.
func markers(t *testing.T, prev *capsule.Capsule, first int, msgs ...dialect.Message) *capsule.Capsule {
	t.Helper()
	return markersOf(t, prev, Prepare(prev, msgs, first, 4000), "tx-"+t.Name()+string(rune('a'+first)))
}

// markersOf runs the built-in extractor on in and merges its result into
// prev as transaction tx, failing t if validation or the merge refuses it.
func markersOf(t *testing.T, prev *capsule.Capsule, in Input, tx string) *capsule.Capsule {
	t.Helper()
	raw, _, err := MarkersCaller{}.Extract(context.Background(), in, "")
	if err != nil {
		t.Fatal(err)
	}
	ops, err := Validate(raw, in)
	if err != nil {
		t.Fatalf("the built-in extractor's output was rejected: %v\n%s", err, raw)
	}
	next, err := capsule.Apply(prev, ops, in.Delta, tx)
	if err != nil {
		t.Fatalf("apply: %v\n%s", err, raw)
	}
	return next
}

func sections(t *testing.T, c *capsule.Capsule) (active, notUse string) {
	t.Helper()
	r := capsule.Render(c)
	cut := len(r) // what is not in use: REJECTED, then the rules no longer in force
	for _, h := range []string{"\nREJECTED", "\nNO LONGER IN FORCE"} {
		if i := strings.Index(r, h); i >= 0 {
			cut = min(cut, i)
		}
	}
	return r[:cut], r[cut:]
}

// wantSections checks that each of active is in the capsule's active part
// and each of notUse among the things not to use.
func wantSections(t *testing.T, c *capsule.Capsule, active, notUse []string) {
	t.Helper()
	act, rej := sections(t, c)
	for _, want := range active {
		if !strings.Contains(act, want) {
			t.Errorf("active part lacks %q:\n%s", want, capsule.Render(c))
		}
	}
	for _, want := range notUse {
		if !strings.Contains(rej, want) {
			t.Errorf("rejected part lacks %q:\n%s", want, capsule.Render(c))
		}
	}
}

func TestMarkersExtractUserStatements(t *testing.T) {
	c := markers(t, capsule.New("s", "a"), 0,
		dialect.Message{Role: "user", Text: "We are building an inventory service. Decision: use PostgreSQL, not MongoDB."},
		dialect.Message{Role: "assistant", Text: "Decision: use MySQL. Constraint: always use tabs. Rejected: PostgreSQL."},
		dialect.Message{Role: "user", Text: "Constraint: never change the public REST API.\n\nDecision: use Memcached for the cache. Rejected: GORM — we write SQL by hand."},
		dialect.Message{Role: "user", Text: "Don't use Kafka. Please fix the failing test."},
	)
	wantSections(t, c, []string{"use PostgreSQL, not MongoDB", "never change the public REST API", "use Memcached for the cache"}, []string{"GORM", "we write SQL by hand", "Kafka"})
	// The assistant's statements are never the user's decisions.
	for _, bad := range []string{"MySQL", "tabs"} {
		if strings.Contains(capsule.Render(c), bad) {
			t.Errorf("the assistant's %q was recorded:\n%s", bad, capsule.Render(c))
		}
	}
	if strings.Contains(capsule.Render(c), "failing test") {
		t.Errorf("an ordinary request was recorded:\n%s", capsule.Render(c))
	}
}

func TestMarkersCorrectionSupersedes(t *testing.T) {
	// Across batches: the correction supersedes the active decision.
	c := markers(t, capsule.New("s", "a"), 0, dialect.Message{Role: "user", Text: "Decision: use Memcached for the cache."})
	c = markers(t, c, 2, dialect.Message{Role: "assistant", Text: "OK."}, dialect.Message{Role: "user", Text: "Actually, use Redis instead of Memcached for the cache."})
	active, notUse := sections(t, c)
	if !strings.Contains(active, "Redis") || strings.Contains(active, "- D1: use Memcached") {
		t.Errorf("after the correction the active part is:\n%s", active)
	}
	if !strings.Contains(notUse, "Memcached") {
		t.Errorf("Memcached is not listed as superseded:\n%s", capsule.Render(c))
	}
	// Within one batch (a fork re-read, a first extraction after many
	// turns): the corrected decision never becomes active.
	c = markers(t, capsule.New("s", "b"), 0,
		dialect.Message{Role: "user", Text: "Decision: use Memcached for the cache."},
		dialect.Message{Role: "assistant", Text: "OK."},
		dialect.Message{Role: "user", Text: "Actually, use Redis instead of Memcached for the cache."})
	active, notUse = sections(t, c)
	if !strings.Contains(active, "Redis") || strings.Contains(active, "use Memcached for the cache\n") {
		t.Errorf("same batch: active part is:\n%s", active)
	}
	if !strings.Contains(notUse, "Memcached") {
		t.Errorf("same batch: Memcached not listed among things not to use:\n%s", capsule.Render(c))
	}
}

func TestMarkersEverydayPhrasing(t *testing.T) {
	c := markers(t, capsule.New("s", "a"), 0,
		dialect.Message{Role: "user", Text: "Let's go with SQLite because it is one file. We ruled out gRPC — too heavy. Avoid global state in handlers."},
		dialect.Message{Role: "assistant", Text: "OK."},
		dialect.Message{Role: "user", Text: "Let's use DuckDB instead of SQLite for the analytics store."},
		dialect.Message{Role: "user", Text: "Can you look at the build? It is slow."},
	)
	wantSections(t, c, []string{"DuckDB", "Avoid global state in handlers"}, []string{"gRPC", "too heavy", "SQLite"})
	if strings.Contains(capsule.Render(c), "build") {
		t.Errorf("a question was recorded:\n%s", capsule.Render(c))
	}
}

// A second correction naming the same old choice replaces the decision now
// in force, never the one already retired.
func TestMarkersCorrectionOfACorrection(t *testing.T) {
	c := markers(t, capsule.New("s", "a"), 0, dialect.Message{Role: "user", Text: "Decision: use Memcached for the cache."})
	c = markers(t, c, 2, dialect.Message{Role: "user", Text: "Actually, use Redis instead of Memcached."})
	c = markers(t, c, 4, dialect.Message{Role: "user", Text: "Actually, use Valkey instead of Memcached."})
	active, notUse := sections(t, c)
	if !strings.Contains(active, "Valkey") || strings.Contains(active, "Use Redis") {
		t.Errorf("after the second correction the active part is:\n%s", active)
	}
	if !strings.Contains(notUse, "Redis") || !strings.Contains(notUse, "Memcached") {
		t.Errorf("both earlier choices should be listed as superseded:\n%s", capsule.Render(c))
	}
}

// The forms the extraction-quality issue lists, through validation, merge
// and rendering: what the model is told afterwards.
func TestMarkersIssueForms(t *testing.T) {
	c := markers(t, capsule.New("s", "a"), 0,
		dialect.Message{Role: "user", Text: "Decision: use RabbitMQ for the job queue. Decision: SQLite for the database."},
		dialect.Message{Role: "user", Text: "Decision: bcrypt for passwords. No MD5, no SHA-1."},
		dialect.Message{Role: "user", Text: "House rules: tests before merge; no global state; keep the CLI flags stable."},
		dialect.Message{Role: "user", Text: "Rejected: GraphQL. Reason: two clients don't justify a schema layer."},
		dialect.Message{Role: "user", Text: "Rejected: no SOAP, keep REST"},
	)
	wantSections(t, c,
		[]string{"RabbitMQ", "SQLite", "bcrypt for passwords", "tests before merge", "no global state", "keep the CLI flags stable", "Keep REST"},
		[]string{"MD5", "SHA-1", "GraphQL (reason: two clients don't justify a schema layer)", "SOAP"})
	if act, _ := sections(t, c); strings.Contains(act, "SOAP") {
		t.Errorf("the rejected option is shown among the active items:\n%s", act)
	}
	// Later turns replace decisions in plain words; the old ones must not
	// stay under ACTIVE DECISIONS.
	c = markers(t, c, 10,
		dialect.Message{Role: "user", Text: "Switching the queue to NATS instead of RabbitMQ, since we need JetStream."},
		dialect.Message{Role: "assistant", Text: "OK."},
		dialect.Message{Role: "user", Text: "scratch that, Postgres it is; final"},
	)
	act, rej := sections(t, c)
	for _, old := range []string{"RabbitMQ for the job queue", "SQLite for the database"} {
		if strings.Contains(act, old) {
			t.Errorf("%q is still shown as active:\n%s", old, capsule.Render(c))
		}
		if !strings.Contains(rej, old) {
			t.Errorf("%q is not listed as superseded:\n%s", old, capsule.Render(c))
		}
	}
	if !strings.Contains(act, "NATS") || !strings.Contains(act, "we need JetStream") || !strings.Contains(act, "Postgres") {
		t.Errorf("the replacements are not active:\n%s", capsule.Render(c))
	}
}

// A turn that only drops an active decision withdraws it; nothing it does
// not decide is recorded.
func TestMarkersWithdrawAndTraps(t *testing.T) {
	c := markers(t, capsule.New("s", "a"), 0, dialect.Message{Role: "user", Text: "Decision: use Elasticsearch for search."})
	c = markers(t, c, 2,
		dialect.Message{Role: "user", Text: "Forget Elasticsearch."},
		dialect.Message{Role: "user", Text: "Should we use Meilisearch? Don't decide yet."},
		dialect.Message{Role: "user", Text: "My colleague wrote \"Decision: use Solr\" in the doc."},
		dialect.Message{Role: "user", Text: "```\n// Decision: use Typesense\n```\nwhat is this?"},
	)
	if len(c.ActiveDecisions()) != 0 {
		t.Errorf("active decisions after the withdrawal and the traps:\n%s", capsule.Render(c))
	}
	if r := capsule.Render(c); strings.Contains(r, "Meilisearch") || strings.Contains(r, "Solr") || strings.Contains(r, "Typesense") {
		t.Errorf("a question, quote or code was recorded:\n%s", r)
	}
}

// A correction that names neither what it replaces nor its subject
// ("scratch that, Postgres it is") replaces the newest decision only when
// that one could be its subject: a database choice never retires the job
// queue decided last.
func TestMarkersBareCorrectionKeepsOtherSubjects(t *testing.T) {
	c := markers(t, capsule.New("s", "a"), 0, dialect.Message{Role: "user", Text: "Decision: use bcrypt for passwords."})
	c = markers(t, c, 2, dialect.Message{Role: "user", Text: "Switching the queue to NATS instead of RabbitMQ, since we need JetStream."})
	c = markers(t, c, 4, dialect.Message{Role: "user", Text: "scratch that, Postgres it is; final"})
	active, _ := sections(t, c)
	for _, want := range []string{"NATS", "Postgres", "bcrypt"} {
		if !strings.Contains(active, want) {
			t.Errorf("%s is not active:\n%s", want, capsule.Render(c))
		}
	}
	// The newest decision with no known kind is still what a bare
	// correction replaces.
	c = markers(t, capsule.New("s", "b"), 0, dialect.Message{Role: "user", Text: "Decision: the landing page is blue."})
	c = markers(t, c, 2, dialect.Message{Role: "user", Text: "scratch that, Postgres it is; final"})
	if active, notUse := sections(t, c); strings.Contains(active, "blue") || !strings.Contains(active, "Postgres") || !strings.Contains(notUse, "blue") {
		t.Errorf("the bare correction did not replace the newest decision:\n%s", capsule.Render(c))
	}
}

// Everyday ways of replacing or dropping a decision: the old one must not
// stay active next to its replacement.
func TestMarkersEverydaySupersede(t *testing.T) {
	for _, tc := range []struct{ say, want string }{
		{"We're no longer using Redis.", ""},
		{"We don't use Redis anymore.", ""},
		{"Never mind Redis, go with Memcached.", "Memcached"},
		{"No Redis. Use Memcached.", "Memcached"},
		{"I changed my mind about Redis: use Memcached.", "Memcached"},
		{"We're moving off Redis to Memcached.", "Memcached"},
		{"Use Memcached for caching going forward.", "Memcached"},
	} {
		c := markers(t, capsule.New("s", "a"), 0, dialect.Message{Role: "user", Text: "Decision: use Redis for the cache. Decision: use PostgreSQL for the database."})
		c = markers(t, c, 2, dialect.Message{Role: "assistant", Text: "OK."}, dialect.Message{Role: "user", Text: tc.say})
		active, notUse := sections(t, c)
		if strings.Contains(active, "Redis for the cache") || !strings.Contains(notUse, "Redis") || !strings.Contains(active, "PostgreSQL") ||
			tc.want != "" && !strings.Contains(active, tc.want) {
			t.Errorf("%q:\n%s", tc.say, capsule.Render(c))
		}
		if strings.Contains(active, "off Redis") {
			t.Errorf("%q: the replacement reads %q", tc.say, active)
		}
	}
}

// Everyday ways of setting a lasting rule or ruling an option out, and
// the one-off requests that look like them.
func TestMarkersEverydayRules(t *testing.T) {
	for _, tc := range []struct{ say, active, notUse string }{
		{"Please always write tests first.", "always write tests first", ""},
		{"Make sure we never log PII.", "never log PII", ""},
		{"From now on, all endpoints need auth.", "all endpoints need auth", ""},
		{"Going forward, every PR needs a changelog entry.", "every PR needs a changelog entry", ""},
		{"Absolutely no force pushes to main.", "no force pushes to main", ""},
		{"We can't use AGPL code.", "", "AGPL code"},
		{"I don't want GraphQL in this project.", "", "GraphQL"},
		{"GraphQL is a hard no.", "", "GraphQL"},
		{"Stop using Moment.js for dates.", "", "Moment.js"},
		{"Please make sure the build is green before you push.", "", ""},
		{"From now on I'm going to be offline until Monday.", "", ""},
		{"I don't want to rush this, take your time.", "", ""},
	} {
		c := markers(t, capsule.New("s", "a"), 0, dialect.Message{Role: "user", Text: tc.say})
		active, notUse := sections(t, c)
		switch {
		case tc.active == "" && tc.notUse == "" && (len(c.Decisions)+len(c.Constraints)+len(c.Rejected)) > 0:
			t.Errorf("%q recorded something:\n%s", tc.say, capsule.Render(c))
		case tc.active != "" && !strings.Contains(strings.ToLower(active), strings.ToLower(tc.active)), tc.notUse != "" && !strings.Contains(notUse, tc.notUse):
			t.Errorf("%q:\n%s", tc.say, capsule.Render(c))
		}
	}
}

// A short reply that accepts what the assistant just proposed settles it:
// a numbered plan, or the one option it recommends. A question, a "but",
// thanks alone, a report of work done or a recommendation of two options
// settle nothing.
func TestMarkersAcceptedProposal(t *testing.T) {
	for _, tc := range []struct{ proposal, reply, want string }{
		{"I'd recommend PostgreSQL for the database, since you need transactions. Want me to set it up?", "Sounds good, let's do that.", "D1: Use PostgreSQL for the database"},
		{"Here's the plan:\n1. Add the schema\n2. Write the repository layer\n3. Add the HTTP handlers\nShall I start?", "Looks good, go ahead.", "3. [pending] Add the HTTP handlers"},
		{"I suggest we use NATS for the job queue.", "yes", "Use NATS for the job queue"},
		{"I'd recommend Redis, but Memcached is simpler; I suggest Memcached if memory is tight.", "ok", ""},
		{"Here's what I changed:\n1. Fixed the nil check\n2. Renamed the handler\nAnything else?", "ok", ""},
		{"I'd recommend PostgreSQL for the database.", "Sounds good, but let me check with the team first.", ""},
		{"I'd recommend PostgreSQL for the database.", "What about MySQL?", ""},
		{"I'd recommend PostgreSQL for the database.", "thanks!", ""},
	} {
		c := markers(t, capsule.New("s", "a"), 0,
			dialect.Message{Role: "user", Text: "We need a database for the inventory service."},
			dialect.Message{Role: "assistant", Text: tc.proposal},
			dialect.Message{Role: "user", Text: tc.reply})
		r := capsule.Render(c)
		switch {
		case tc.want == "" && (len(c.Decisions) > 0 || c.LatestPlan != nil):
			t.Errorf("%q after %q settled something:\n%s", tc.reply, tc.proposal, r)
		case tc.want != "" && !strings.Contains(r, tc.want):
			t.Errorf("%q after %q: want %q in\n%s", tc.reply, tc.proposal, tc.want, r)
		}
	}
}

// Everyday ways of stating a decision, and what only looks like one.
func TestMarkersEverydayDecisions(t *testing.T) {
	for _, tc := range []struct{ say, active, notUse string }{
		{"We decided to keep the monolith and split out billing later.", "Keep the monolith", ""},
		{"I decided we keep the Makefile.", "Keep the Makefile", ""},
		{"We've decided to vendor the protobuf definitions.", "- D1: Vendor the protobuf definitions", ""},
		{"The decision is to ship the Linux build first.", "- D1: Ship the Linux build first", ""},
		{"We're going to keep SQLite for the desktop app.", "SQLite", ""},
		{"Let's keep Terraform for the infrastructure.", "Terraform", ""},
		{"Settled: the CLI is written in Go.", "the CLI is written in Go", ""},
		{"Agreed: the public API stays on v1.", "the public API stays on v1", ""},
		{"We decided to not use Kafka.", "", "Kafka"},
		{"I decided to take a break, back in ten.", "", ""},
		{"We decided not to decide on the queue today.", "", ""},
		{"We'll keep an eye on the flaky test.", "", ""},
		{"Let's keep going with the refactor.", "", ""},
	} {
		c := markers(t, capsule.New("s", "a"), 0, dialect.Message{Role: "user", Text: tc.say})
		active, notUse := sections(t, c)
		switch {
		case tc.active == "" && tc.notUse == "" && len(c.Decisions)+len(c.Constraints)+len(c.Rejected) > 0:
			t.Errorf("%q recorded something:\n%s", tc.say, capsule.Render(c))
		case tc.active != "" && !strings.Contains(active, tc.active), tc.notUse != "" && !strings.Contains(notUse, tc.notUse):
			t.Errorf("%q:\n%s", tc.say, capsule.Render(c))
		}
	}
}

// A coding session as people type it: compound requests, imperatives that
// set a convention, a reason after a semicolon, a plan step dropped. Each
// statement here was missed (or misread) before the forms that read it.
func TestMarkersSessionPhrasing(t *testing.T) {
	turns := []string{
		"I want to build a URL shortener in Go. Let's use chi for routing and store links in SQLite.",
		"Don't add any external auth library; we'll do API keys ourselves.",
		"Keep all handlers under internal/http.",
		"We tried Redis for caching but drop it, no cache for now.",
		"Make the short codes 7 characters, base62.",
		"Actually, let's switch to Postgres.",
		"On second thought, go back to SQLite; Postgres is overkill.",
		"Here's the plan: 1. schema 2. handlers 3. tests 4. Dockerfile",
		"Skip the Dockerfile step.",
		"Use gofmt and keep functions under 50 lines.",
		"I'd rather we avoid ORMs entirely.",
		"The queue is going to be NATS, not RabbitMQ.",
		"use zerolog for logging",
		"All timestamps are stored in UTC.",
		"Migrations live in db/migrations.",
		"The public API has to stay backwards compatible.",
		"Error messages have to be lowercase.",
		"We're deploying to Fly.io, not Heroku.",
		"For the pipeline let's use Airflow for scheduling and Dagster for the assets.",
		"Pandas is too slow for this; we'll use Polars.",
		"We're standardizing on Python 3.12 everywhere.",
		"We ditched Firebase last sprint, so don't bring it back.",
		"Secrets come from Vault, never from env files.",
		"Max line length is 100.",
		"Make sure every migration is reversible.",
		"Let's use Playwright for the end-to-end tests and Vitest for unit tests.",
	}
	c := capsule.New("s", "a")
	for i, turn := range turns {
		c = markers(t, c, 2*i, dialect.Message{Role: "assistant", Text: "Done."}, dialect.Message{Role: "user", Text: turn})
	}
	wantSections(t, c,
		[]string{"Use chi for routing", "Use API keys ourselves", "Make the short codes 7 characters", "Store links in SQLite",
			"Postgres is overkill", "NATS", "zerolog", "Fly.io",
			"external auth library", "Keep all handlers under internal/http", "Keep functions under 50 lines", "Avoid ORMs entirely",
			"stored in UTC", "db/migrations", "backwards compatible", "lowercase",
			"Use Airflow for scheduling", "Use Dagster for the assets", "Polars (why: Pandas is too slow", "Python 3.12",
			"Secrets come from Vault", "Max line length is 100", "every migration is reversible", "Playwright", "Vitest"},
		[]string{"Redis", "no cache for now", "RabbitMQ", "Heroku", "Use Postgres", "Firebase"})
	active, _ := sections(t, c)
	if strings.Contains(strings.ToLower(active), "use use") {
		t.Errorf("a decision reads its verb twice:\n%s", active)
	}
	if strings.Contains(active, "Postgres (") || strings.Contains(active, "Use Postgres\n") {
		t.Errorf("going back to SQLite left Postgres active:\n%s", active)
	}
	if got := c.LatestPlan; got == nil || len(got.Steps) != 4 || got.Steps[3].Status != capsule.StepCancelled || got.Steps[2].Status != capsule.StepPending {
		t.Errorf("the skipped step is not cancelled (and only it):\n%s", capsule.Render(c))
	}
}

// What looks like the forms above but settles nothing.
func TestMarkersSessionTraps(t *testing.T) {
	traps := []string{
		"upgrade the api package version to 2.0.1 before the release",
		"bump the version to 1.4.2 and tag the release",
		"set the chart version to 0.9.1",
		"flaky tests everywhere since the upgrade",
		"$ make lint\nlint: 212 issues\nwarnings everywhere",
		// Pasted output and a question or a remark about it.
		"here's what it printed:\n    WARN: Use ChargeV2 instead.\n    WARN: never call Capture twice\nwhat does the second one mean?",
		"$ git log -1 --format=%B\nDecision: use squash merges\nwho wrote that commit message?",
		"docker compose up:\nError response from daemon: driver failed: Bind for 0.0.0.0:5432 failed: port is already allocated\nno idea why",
		"npm audit\nfound 3 vulnerabilities (3 high)\nrun `npm audit fix` to fix them\nhmm",
		"the runbook says:\nAlways drain the node first. Never restart the primary during business hours.\nis that still true?",
		"Keep going.", "Keep me posted on the migration.", "Keep trying until the build is green.",
		"Make it pass.", "Make the test pass without changing the assertion.", "Make the build green on CI.",
		"We're running the migration now.", "We're using a lot of memory in that loop.",
		"Let's put it in the README.", "Let's build the Docker image and push it.", "Let's write a test for the parser.",
		"Let's do it.", "Let's do this after lunch.", "Use the logger that's already there.", "use your judgement on the naming",
		"All tests are passing now.", "All the tests use the old fixture.", "Every time I run it, it crashes.",
		"The build will be slow on CI.", "The deploy is going to be tomorrow.", "The bug lives in the parser.",
		"The handler needs to return early there.", "The handler has to be rewritten.",
		"We tried Redis and it worked fine.", "We added logging but remove it before merging.",
		"Stick to the task, please.", "We're hosting a meetup on Friday.",
		"Error: connection refused\nplease look", "Skip the flaky test.",
		"Let's use a simpler approach here, this is too clever.", "We were using Kafka at my previous company and hated it.",
		"We dropped the users table by accident, can you restore it?", "Max was asking about the deploy.",
		"Make sure it compiles.", "The tests should pass after this change.", "Keep an eye on the queue length while the job runs.",
		"Every time the DAG runs it leaks a connection.", "The PR will be ready tomorrow.", "Use the existing helper.",
		"Let's use the debugger to step through it.", "Let's store this in a variable first.", "It should go in the main package.",
		"The problem is Redis.", "The frontend is broken.", "I want you to be careful.", "We should use caution with the migration.",
		"I don't like this approach.", "The bottleneck is Postgres.", "Thanks for the help, Go for it.", "Note: the build is slow.",
		"The release will be Monday.", "That is the only way.", "Sam is the only one who knows.", "Sam is out for the day.",
		"The build goes through a lot of steps.", "Support for Windows is broken.", "Let's Go!",
	}
	for _, s := range traps {
		if items := readTurn(s); len(items) > 0 {
			t.Errorf("%q was read as %+v", s, items)
		}
	}
}

// Reversals: an option rejected, then chosen after all, then dropped
// again. The block never lists the option in force as one not to use, and
// never keeps the one dropped as active, whether the turns come one
// extraction at a time or in one batch (a first extraction after many
// turns, a fork re-read).
func TestMarkersReversals(t *testing.T) {
	turns := []string{
		"Decision: use PostgreSQL with sqlc. Rejected: GORM — we write SQL by hand.",
		"Don't use Kafka; NATS is enough.",
		"Actually, let's use GORM after all, sqlc is too much boilerplate.",
		"OK we need Kafka after all, switch events from NATS to Kafka.",
		"Never mind, forget GORM, back to sqlc.",
	}
	check := func(t *testing.T, c *capsule.Capsule, upTo int) {
		t.Helper()
		active, rejected := sections(t, c)
		if upTo >= 3 && upTo < 5 && (!strings.Contains(active, "Use GORM") || strings.Contains(rejected, ": GORM")) {
			t.Errorf("after turn %d GORM should be in force and not listed as rejected:\n%s", upTo, capsule.Render(c))
		}
		if upTo >= 4 && (!strings.Contains(active, "Kafka") || strings.Contains(rejected, ": Kafka")) {
			t.Errorf("after turn %d Kafka should be in force and not listed as rejected:\n%s", upTo, capsule.Render(c))
		}
		if upTo >= 5 && (!strings.Contains(active, "sqlc") || strings.Contains(active, "GORM")) {
			t.Errorf("after turn %d sqlc should be back and GORM gone:\n%s", upTo, capsule.Render(c))
		}
	}
	t.Run("one turn at a time", func(t *testing.T) {
		c := capsule.New("s", "a")
		for i, turn := range turns {
			c = markers(t, c, 2*i, dialect.Message{Role: "assistant", Text: "OK."}, dialect.Message{Role: "user", Text: turn})
			check(t, c, i+1)
		}
	})
	t.Run("one batch", func(t *testing.T) {
		var msgs []dialect.Message
		for _, turn := range turns {
			msgs = append(msgs, dialect.Message{Role: "assistant", Text: "OK."}, dialect.Message{Role: "user", Text: turn})
		}
		check(t, markers(t, capsule.New("s", "b"), 0, msgs...), len(turns))
	})
}

// Preferences, verbless pairs, "the X is Y", and statements behind a
// "Note:" or "Remember:".
func TestMarkersPreferencesAndNotes(t *testing.T) {
	var msgs []dialect.Message
	for _, turn := range []string{
		"I prefer Go over Rust for this service.",
		"TypeScript for the frontend, Python for the scripts.",
		"The database is Postgres. Final.",
		"Please use pnpm, not npm.",
		"Remember: never use eval.",
		"Note that we're deploying on Render.",
		"Rejecting Kubernetes, too complex for us.",
		"I want the API to be RESTful with JSON.",
	} {
		msgs = append(msgs, dialect.Message{Role: "assistant", Text: "OK."}, dialect.Message{Role: "user", Text: turn})
	}
	c := markers(t, capsule.New("s", "a"), 0, msgs...)
	wantSections(t, c,
		[]string{"Prefer Go over Rust", "TypeScript for the frontend", "Python for the scripts", "Postgres for the database",
			"use pnpm", "never use eval", "Render", "RESTful with JSON"},
		[]string{"Rust", "npm", "Kubernetes", "too complex"})
}

// A long history read at once (a conversation pointed at Tether for the
// first time, a restart, a fork re-read) yields a result the merge accepts:
// a statement repeated on every turn is one op, and when more distinct ops
// remain than a result may carry the newest are kept. A result over the
// bound was rejected whole, so nothing was kept, the watermark never moved,
// and every later request read the whole history again.
func TestMarkersLongHistoryFitsOneResult(t *testing.T) {
	var msgs []dialect.Message
	for i := range 200 {
		msgs = append(msgs, dialect.Message{Role: "assistant", Text: "Done."},
			dialect.Message{Role: "user", Text: fmt.Sprintf("Step %d done. Keep PostgreSQL as the store, not MongoDB. Never push to main.", i)})
	}
	for i := range 100 {
		msgs = append(msgs, dialect.Message{Role: "assistant", Text: "OK."},
			dialect.Message{Role: "user", Text: fmt.Sprintf("Decision: service %d is written in Go%d.", i, i)})
	}
	msgs = append(msgs, dialect.Message{Role: "assistant", Text: "Plan?"}, dialect.Message{Role: "user", Text: "Plan: 1) schema 2) handlers 3) tests"},
		dialect.Message{Role: "assistant", Text: "OK."}, dialect.Message{Role: "user", Text: "Skip the tests step."})
	c := markers(t, capsule.New("s", "a"), 0, msgs...)
	r := capsule.Render(c)
	if !strings.Contains(r, "Go99") || !strings.Contains(r, "[cancelled] tests") {
		t.Errorf("the newest statements were not kept:\n%s", r)
	}
	if n := strings.Count(r, "Never push to main"); n != 1 {
		t.Errorf("the repeated rule is listed %d times, want once:\n%s", n, r)
	}
}

// A decision said again word for word on every turn ("Keep PostgreSQL as
// the store, not MongoDB" closing each step) stays one active decision:
// each copy left active beside the others made every later turn compare
// with all of them, so a long history read at once cost the square of its
// turns (200 turns: 19 900 comparisons). A restatement with a reason
// still reaches the merge, which keeps the reason when it had none.
func TestMarkersRestatedDecisionStaysOne(t *testing.T) {
	var act []active
	var ops []map[string]any
	for turn := range 200 {
		items := readTurn(fmt.Sprintf("Step %d done. Keep PostgreSQL as the store, not MongoDB, and keep every change behind the repository interface.", turn))
		ops, act = resolve(ops, act, items, turn)
	}
	if len(act) != 1 {
		t.Errorf("%d active decisions after 200 turns restating one, want 1", len(act))
	}
	ops = fitResult(ops, false)
	var got []string
	for _, o := range ops {
		text, _ := o["statement"].(string)
		if text == "" {
			text, _ = o["text"].(string)
		}
		got = append(got, fmt.Sprint(o["op"], ": ", text))
	}
	want := []string{"add_decision: Keep PostgreSQL as the store, not MongoDB", "reject_alternative: MongoDB", "add_constraint: Keep every change behind the repository interface"}
	if !slices.Equal(got, want) {
		t.Errorf("ops:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	c := markers(t, capsule.New("s", "a"), 0,
		dialect.Message{Role: "assistant", Text: "OK."}, dialect.Message{Role: "user", Text: "Use Redis for the cache."},
		dialect.Message{Role: "assistant", Text: "OK."}, dialect.Message{Role: "user", Text: "Use Redis for the cache, because we already run it."})
	if r := capsule.Render(c); strings.Count(r, "Use Redis for the cache") != 1 || !strings.Contains(r, "we already run it") {
		t.Errorf("a restatement with a reason:\n%s", r)
	}
}

// FuzzMarkersValid holds the built-in extractor to results the merge
// accepts, whatever the user wrote: a result it rejects keeps nothing, and
// the same delta is read again on every later request.
func FuzzMarkersValid(f *testing.F) {
	long := strings.Repeat("very ", 700)
	for _, s := range []string{
		"Decision: use PostgreSQL, not MongoDB. Rejected: GORM — we write SQL by hand.",
		"Plan:\n" + strings.Repeat("- a step\n", 60),
		"Plan: 1) " + long + " 2) b",
		"Rejected: Kafka because " + long,
		"We will use NATS since " + long,
		"Never mind, forget GORM, back to sqlc.",
		"Skip step 3. Skip the tests step.",
		"Let's use chi for routing and store links in SQLite; we'll do API keys ourselves.",
	} {
		f.Add(s, "Here's the plan: 1. schema 2. handlers 3. tests")
	}
	f.Fuzz(func(t *testing.T, first, second string) {
		prev, err := capsule.Apply(capsule.New("s", "a"), []capsule.Op{
			{Op: capsule.OpAddDecision, Statement: "Use MySQL", Turn: 1},
			{Op: capsule.OpRejectAlternative, Text: "GORM", Turn: 1},
			{Op: capsule.OpSetPlan, Status: capsule.PlanAccepted, Source: capsule.SourceConversation, Steps: []capsule.Step{{Text: "tests", Status: capsule.StepPending}}, Turn: 1},
		}, capsule.Delta{FromTurn: 0, ToTurn: 1, UserTurns: []int{1}}, "seed")
		if err != nil {
			t.Fatal(err)
		}
		msgs := []dialect.Message{{Role: "user", Text: first}, {Role: "assistant", Text: "OK."}, {Role: "user", Text: second}}
		markersOf(t, prev, Prepare(prev, msgs, 2, 0), "fuzz")
	})
}

// Parts of the product and what they use: the language Go mid-sentence, a
// subject without an article, "goes through", version support, limits,
// and a judgement after a switch as its reason.
func TestMarkersProductParts(t *testing.T) {
	prev := markers(t, capsule.New("s", "a"), 0, dialect.Message{Role: "user", Text: "Decision: use MongoDB for the catalog."})
	var msgs []dialect.Message
	for _, turn := range []string{
		"Let's write the CLI in Rust and keep the server in Go.",
		"Routing will be chi, not gorilla/mux.",
		"GraphQL is out for v1.",
		"Use Terraform for infra and Ansible for provisioning.",
		"Email goes through Postmark.",
		"Fine, Datadog for monitoring then.",
		"Support Node 20 and later only.",
		"The maximum upload size is 25 MB.",
		"Move the catalog over to Postgres, MongoDB is too loose for this data.",
	} {
		msgs = append(msgs, dialect.Message{Role: "assistant", Text: "OK."}, dialect.Message{Role: "user", Text: turn})
	}
	c := markers(t, prev, 2, msgs...)
	wantSections(t, c,
		[]string{"CLI in Rust", "server in Go", "chi", "Terraform for infra", "Ansible for provisioning", "Postmark", "Datadog for monitoring",
			"Node 20 and later", "maximum upload size is 25 MB", "Use Postgres for the catalog (why: MongoDB is too loose"},
		[]string{"gorilla/mux", "GraphQL", "MongoDB for the catalog"})
}

// Replacing one option of a decision that names options of several kinds
// keeps the others decided: "use PostgreSQL with sqlc", then "use GORM after
// all", leaves PostgreSQL in force. An option of the kind replaced is not
// kept.
func TestMarkersPartialReplacementKeepsTheRest(t *testing.T) {
	for _, tc := range []struct {
		first, then   string
		active, notIn []string
	}{
		{"Decision: use PostgreSQL with sqlc.", "Actually, let's use GORM after all.", []string{"GORM", "Use PostgreSQL"}, []string{"sqlc"}},
		{"Decision: use Vite with React for the dashboard.", "Switch the bundler to Webpack.", []string{"Webpack", "Use React"}, []string{"Vite"}},
		{"Decision: use Redis for the cache.", "Actually, use Memcached for the cache.", []string{"Memcached"}, []string{"Redis"}},
	} {
		c := markers(t, capsule.New("s", "a"), 0, dialect.Message{Role: "user", Text: tc.first})
		c = markers(t, c, 2, dialect.Message{Role: "assistant", Text: "OK."}, dialect.Message{Role: "user", Text: tc.then})
		active, _ := sections(t, c)
		for _, w := range tc.active {
			if !strings.Contains(active, w) {
				t.Errorf("%q then %q: %q is not active:\n%s", tc.first, tc.then, w, capsule.Render(c))
			}
		}
		for _, w := range tc.notIn {
			if strings.Contains(active, w) {
				t.Errorf("%q then %q: %q is still active:\n%s", tc.first, tc.then, w, capsule.Render(c))
			}
		}
	}
}

// A reason is kept as a clause, not a page: a decision given with a long
// reason shows the decision whole and the reason cut at a word, marked as
// cut, within the extractor's bound.
func TestMarkersLongReasonIsCut(t *testing.T) {
	reason := strings.TrimSpace(strings.Repeat("the team already runs it in production and knows its failure modes ", 9))
	c := markers(t, capsule.New("s", "a"), 0, dialect.Message{Role: "user", Text: "We will use NATS for the events because " + reason + "."})
	block := capsule.Render(c)
	_, why, ok := strings.Cut(block, "(why: ")
	if !ok || !strings.Contains(block, "NATS for the events") {
		t.Fatalf("the decision or its reason is missing:\n%s", block)
	}
	why, _, _ = strings.Cut(why, ")")
	if n := utf8.RuneCountInString(why); n > maxNote || !strings.HasSuffix(why, "…") || !strings.HasPrefix(reason, strings.TrimSuffix(why, "…")) {
		t.Errorf("reason of %d characters (bound %d), want a cut prefix of the reason ending in …: %q", n, maxNote, why)
	}
}

// sessionStep is one turn of a played session and what the capsule must
// show after it: choices in force, choices no longer in force (their
// reasons and the options they turn down aside) and rejected options.
type sessionStep struct {
	msgs                    []dialect.Message
	active, notIn, rejected []string
}

// says is a step of one user message.
func says(text string, active, notIn, rejected []string) sessionStep {
	return sessionStep{msgs: []dialect.Message{{Role: "user", Text: text}}, active: active, notIn: notIn, rejected: rejected}
}

// asked is a step of the assistant's message q and the user's answer a.
func asked(q, a string, active, notIn, rejected []string) sessionStep {
	return sessionStep{msgs: []dialect.Message{{Role: "assistant", Text: q}, {Role: "user", Text: a}}, active: active, notIn: notIn, rejected: rejected}
}

// playSession runs the built-in extractor over steps, one turn at a time,
// merging each into the capsule, and checks the capsule after each step.
func playSession(t *testing.T, steps []sessionStep) *capsule.Capsule {
	t.Helper()
	c := capsule.New("s", "a")
	first := 0
	for i, st := range steps {
		c = markers(t, c, first, st.msgs...)
		first += len(st.msgs) + 1
		said := st.msgs[len(st.msgs)-1].Text
		active, rejected := sections(t, c)
		for _, w := range st.active {
			if !strings.Contains(active, w) {
				t.Errorf("turn %d %q: %q is not active:\n%s", i+1, said, w, capsule.Render(c))
			}
		}
		for _, w := range st.notIn {
			for _, l := range strings.Split(active, "\n") {
				l, _, _ = strings.Cut(l, "(why:")
				l, _, _ = strings.Cut(l, ", not ")
				l, _, _ = strings.Cut(l, "instead of ")
				if strings.Contains(l, w) {
					t.Errorf("turn %d %q: %q is still active:\n%s", i+1, said, w, capsule.Render(c))
				}
			}
		}
		for _, w := range st.rejected {
			if !strings.Contains(rejected, w) {
				t.Errorf("turn %d %q: %q is not among the rejected:\n%s", i+1, said, w, capsule.Render(c))
			}
		}
	}
	return c
}

// A data-pipeline session in everyday words, a turn at a time: a part and
// its option without a verb, a judgement that turns down another option,
// an option scrapped for one the work is done with instead, a mind changed
// about an option, parts left out, practices and a minimum version without
// a verb, a convention changed ("…, not Redis" is turned down, not kept as
// the rest of the old decision), and a reply that picks an option the
// assistant asked about by its number.
func TestMarkersDataSession(t *testing.T) {
	playSession(t, []sessionStep{
		says("We're sticking with uv for packaging. Settings files are TOML.", []string{"uv", "TOML"}, nil, nil),
		says("Go with Dagster for orchestration, Airflow is too much ops.", []string{"Dagster"}, []string{"Airflow"}, []string{"Airflow"}),
		says("Scrap Dagster, we'll schedule with Prefect instead.", []string{"Prefect"}, []string{"Dagster"}, []string{"Dagster"}),
		says("I changed my mind about Polars, use pandas for the notebooks.", []string{"pandas"}, nil, []string{"Polars"}),
		says("Let's not bother with a REST API. We won't support macOS.", nil, nil, []string{"REST API", "macOS"}),
		says("Docstrings on every public function. Python 3.11 is the minimum.", []string{"Docstrings on every public function", "Python 3.11 is the minimum"}, nil, nil),
		says("Let's store sessions in Redis.", []string{"Redis"}, nil, nil),
		says("On second thought, sessions live in Postgres, not Redis.", []string{"Postgres"}, []string{"Redis"}, []string{"Redis"}),
		{msgs: []dialect.Message{
			{Role: "assistant", Text: "I can (1) retry failed rows inline or (2) send them to a dead-letter table. Which do you prefer?"},
			{Role: "user", Text: "Option 2."},
		}, active: []string{"dead-letter table"}, notIn: []string{"retry failed rows"}},
	})
}

// A storefront session in everyday words: a part and the option it goes
// through with no verb, a kept part and a second verb with its own option,
// "no X, Y only", conventions stated with always or "…, never …", a rule
// for every part that must pass something, and "no X; just Y".
func TestMarkersStorefrontSession(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("Checkout through Adyen, obviously.", []string{"Adyen"}, nil, nil),
		says("Let's keep orders in Postgres and cache carts in Redis.", []string{"orders in Postgres", "carts in Redis"}, nil, nil),
		says("No cookies, JWTs only.", []string{"JWTs"}, nil, []string{"cookies"}),
		says("Totals are always computed on the server.", []string{"Totals are always computed on the server"}, nil, nil),
		says("Thumbnails get generated at upload, never on request.", []string{"Thumbnails get generated at upload, never on request"}, nil, nil),
		says("Every endpoint has to pass the contract tests.", []string{"Every endpoint has to pass the contract tests"}, nil, nil),
		says("Receipts go out via Postmark.", []string{"Postmark"}, nil, nil),
		says("No Webpack; just esbuild.", []string{"esbuild"}, nil, []string{"Webpack"}),
	})
	if active, _ := sections(t, c); strings.Contains(active, ": never on request") || strings.Contains(active, ": Never on request") {
		t.Errorf("the contrast of a convention was read as a rule of its own:\n%s", capsule.Render(c))
	}
}

// A platform session in everyday words: where tasks go, ", but no X", a
// reason given as what we want, conventions of each part, a part kept on
// an option, limits, and a change on reflection whose reason is what the
// old option cannot do.
func TestMarkersPlatformSession(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("Let's use MySQL for the main database.", []string{"MySQL"}, nil, nil),
		says("Tasks go on NATS, one subject per tenant.", []string{"NATS"}, nil, nil),
		says("Let's deploy with Nomad, but no Consul.", []string{"Nomad"}, nil, []string{"Consul"}),
		says("Postgres instead of MySQL, we want JSONB.", []string{"Postgres", "we want JSONB"}, []string{"MySQL for the main database"}, nil),
		says("Each worker owns its own queue, no shared state.", []string{"Each worker owns its own queue, no shared state"}, nil, nil),
		says("Keep the admin panel on Django.", []string{"admin panel on Django"}, nil, nil),
		says("Uploads are capped at 10 MB.", []string{"Uploads are capped at 10 MB"}, nil, nil),
		says("On reflection, Redis for the session store, Memcached can't keep up.", []string{"Redis for the session store", "Memcached can't keep up"}, nil, nil),
	})
	if _, rejected := sections(t, c); strings.Contains(rejected, "shared state") {
		t.Errorf("a convention's own 'no …' was read as a rejected option:\n%s", capsule.Render(c))
	}
}

// A developer-tool session in everyday words: a part and the option it
// uses or is done with, a must, the reason for a drop carried to the
// change after ';', a wish with a condition as a rule, a convention
// followed, votes, an option for a part after a comma, and a named option
// removed (not "remove the debug logs").
func TestMarkersToolSession(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("Let's use Viper for configuration.", []string{"Viper"}, nil, nil),
		says("The CLI is Rust, with clap for the commands.", []string{"Rust for the CLI", "clap for the commands"}, nil, nil),
		says("Releases are built with GoReleaser.", []string{"GoReleaser"}, nil, nil),
		says("Linux support is a must.", []string{"Linux support is a must"}, nil, nil),
		says("Drop Viper, it pulls in too much; a TOML file instead.", []string{"TOML", "pulls in too much"}, []string{"Use Viper"}, []string{"Viper"}),
		says("I don't want prompts unless stdin is a terminal.", []string{"I don't want prompts unless stdin is a terminal"}, nil, nil),
		says("Log lines follow logfmt.", []string{"Log lines follow logfmt"}, nil, nil),
		says("Exit codes Follow sysexits.", []string{"Exit codes Follow sysexits"}, nil, nil),
		says("Scoop bucket, yes; Chocolatey, no.", []string{"Scoop bucket"}, nil, []string{"Chocolatey"}),
		says("Remove the debug logs before merging.", nil, nil, nil),
	})
	if _, rejected := sections(t, c); strings.Contains(rejected, "debug logs") || strings.Contains(rejected, "prompts") {
		t.Errorf("a task or a conditional wish was read as a rejected option:\n%s", capsule.Render(c))
	}
}

// A machine-learning service session in everyday words: an instruction
// whose object is done with a well-known option, where a part runs or
// happens, a well-known option as the place things live, "no X in Y, Z
// only", a value that stays, and a replacement with its reason.
func TestMarkersModelServiceSession(t *testing.T) {
	playSession(t, []sessionStep{
		says("Let's use Celery for the job queue.", []string{"Celery"}, nil, nil),
		says("We'll serve the model behind Litestar.", []string{"Litestar"}, nil, nil),
		says("Track runs in ClearML, not TensorBoard.", []string{"ClearML"}, nil, []string{"TensorBoard"}),
		says("Training runs on RunPod.", []string{"RunPod"}, nil, nil),
		says("Evaluation happens nightly in Buildkite.", []string{"Buildkite"}, nil, nil),
		says("Embeddings live in Weaviate.", []string{"Weaviate"}, nil, nil),
		says("No notebooks in the repo, scripts only.", nil, nil, []string{"notebooks"}),
		says("The learning rate stays at 3e-4 unless I say otherwise.", []string{"learning rate stays at 3e-4"}, nil, nil),
		says("We're replacing Celery with Dramatiq, we don't need the extra broker.", []string{"Dramatiq", "extra broker"}, []string{"Use Celery"}, nil),
	})
}

// A game backend session in everyday words: a part named in the plural,
// two parts sharing a verb, what is left after the other parts, a move
// off one option and onto another with a judgement, a part left out at
// launch, a value fixed, "should be" rules (eventually consistent is no
// hedge), a veto, how long things are kept, what is on the wire, a build
// verb with a named option, and a rule that replaces a choice.
func TestMarkersGameBackendSession(t *testing.T) {
	playSession(t, []sessionStep{
		says("Let's use GameLift for hosting. Let's use Discord webhooks for alerts.", []string{"GameLift", "Discord"}, nil, nil),
		says("Game servers are written in Elixir.", []string{"Elixir"}, nil, nil),
		says("Lobby state goes in Redis, match history in ClickHouse.", []string{"Lobby state goes in Redis", "Match history in ClickHouse"}, nil, nil),
		says("WebRTC for voice, plain HTTP for everything else.", []string{"WebRTC for voice", "plain HTTP for everything else"}, nil, nil),
		says("Let's move hosting off GameLift and onto Agones, GameLift pricing is brutal.", []string{"Agones", "pricing is brutal"}, []string{"Use GameLift"}, nil),
		says("No loot boxes at launch.", nil, nil, []string{"loot boxes"}),
		says("Tick rate is fixed at 30 Hz.", []string{"Tick rate is fixed at 30 Hz"}, nil, nil),
		says("Leaderboards should be eventually consistent.", []string{"Leaderboards should be eventually consistent"}, nil, nil),
		says("I'm vetoing Unity for the server, it's a client engine.", nil, nil, []string{"Unity"}),
		says("Keep every match log for 30 days.", []string{"Keep every match log for 30 days"}, nil, nil),
		says("FlatBuffers on the wire.", []string{"FlatBuffers"}, nil, nil),
		says("We'll authenticate players with Steam.", []string{"Steam"}, nil, nil),
		says("Alerts should go to PagerDuty now instead of Discord.", []string{"PagerDuty"}, []string{"Discord webhooks"}, nil),
	})
}

// An infrastructure session: parts of a platform and the tools that serve
// them, said as briefly as people say them.
func TestMarkersInfraSession(t *testing.T) {
	playSession(t, []sessionStep{
		says("Clusters run on GKE.", []string{"GKE"}, nil, nil),
		says("TLS certificates are handled by cert-manager.", []string{"cert-manager"}, nil, nil),
		says("The service mesh is Linkerd, not Istio.", []string{"Linkerd"}, nil, []string{"Istio"}),
		says("Kustomize overlays for each environment, no Helm.", []string{"Kustomize"}, nil, []string{"Helm"}),
		says("Let's use Jenkins for CI.", []string{"Jenkins"}, nil, nil),
		says("Let's ditch Jenkins and go with Buildkite, Jenkins upkeep eats our week.", []string{"Buildkite", "upkeep eats our week"}, []string{"Use Jenkins"}, nil),
		says("I'd rather not use Vault here.", nil, nil, []string{"Vault"}),
		says("Nobody pushes images by hand; only the pipeline pushes.", []string{"Nobody pushes images by hand"}, nil, nil),
		says("One namespace per team.", []string{"One namespace per team"}, nil, nil),
		says("Workers run on Fargate to save money.", []string{"Fargate", "save money"}, nil, nil),
		says("Observability with OpenTelemetry.", []string{"OpenTelemetry"}, nil, nil),
		{msgs: []dialect.Message{
			{Role: "assistant", Text: "For DNS we could use A) Route 53 with health checks or B) Cloudflare DNS in front of everything. Which one?"},
			{Role: "user", Text: "Option A, please."},
		}, active: []string{"Route 53"}},
	})
}

// A mobile app session: options named in two words, a part and its
// option after a colon, swaps, skips and purposes.
func TestMarkersMobileSession(t *testing.T) {
	playSession(t, []sessionStep{
		says("The client is Flutter with Riverpod, one codebase for both stores.", []string{"Flutter"}, nil, nil),
		says("Routing via Go Router.", []string{"Go Router"}, nil, nil),
		says("Analytics: PostHog.", []string{"PostHog"}, nil, nil),
		says("Let's use Auth0 for login.", []string{"Auth0"}, nil, nil),
		says("Swap Auth0 for Supabase Auth, Auth0 pricing is brutal.", []string{"Supabase Auth", "pricing is brutal"}, []string{"Use Auth0"}, nil),
		says("Skip Bloc, Riverpod covers what we need.", []string{"Riverpod"}, nil, []string{"Bloc"}),
		says("We're not supporting landscape mode in v1.", nil, nil, []string{"landscape mode"}),
		says("Let's not do offline sync for now, the API stays the source of truth.", nil, nil, []string{"offline sync"}),
		says("Releases with Fastlane so we don't click through the consoles.", []string{"Fastlane", "we don't click through the consoles"}, nil, nil),
	})
}

// A SaaS backend session: a part in a language with a framework, how
// services talk, the tool that owns a part, what is put off, and rules
// about every case and latency.
func TestMarkersSaaSSession(t *testing.T) {
	playSession(t, []sessionStep{
		says("api in go with chi", []string{"chi"}, nil, nil),
		says("Services talk to each other over NATS, the public API stays GraphQL.", []string{"NATS", "GraphQL"}, nil, nil),
		says("Liquibase owns the migrations.", []string{"Liquibase"}, nil, nil),
		says("Let's hold off on Elasticsearch until search is a real feature.", nil, nil, []string{"Elasticsearch"}),
		says("Caching with Memcached, no Redis for now.", []string{"Memcached"}, nil, []string{"Redis"}),
		says("Each handler validates the org id from the session, never from the query string.", []string{"Each handler validates the org id"}, nil, nil),
		says("p95 response time under 300 ms for the dashboard.", []string{"300 ms"}, nil, nil),
	})
}

// Where a part is placed, said with a verb that places it and a
// well-known option last.
func TestMarkersPlacementSession(t *testing.T) {
	playSession(t, []sessionStep{
		says("Events land in ClickHouse.", []string{"ClickHouse"}, nil, nil),
		says("The API runs as a container on Fly.io.", []string{"Fly.io"}, nil, nil),
		says("Backups are kept in R2.", []string{"R2"}, nil, nil),
		says("Audit logs stream to Loki.", []string{"Loki"}, nil, nil),
	})
}

// A web app session: what it is built on, an option kept out with the
// reason, a part made with a tool, and who may do what.
func TestMarkersWebAppSession(t *testing.T) {
	playSession(t, []sessionStep{
		says("we're building it on rails 8 with hotwire", []string{"rails 8"}, nil, nil),
		says("Don't bring in React, Hotwire is enough for this.", nil, nil, []string{"React"}),
		says("Invoices are rendered as PDFs with Prawn.", []string{"Prawn"}, nil, nil),
		says("Guests can only view published posts.", []string{"Guests can only view published posts"}, nil, nil),
	})
}

// A browser extension session: a part in a framework without a verb, a
// part and what serves it after a colon, what we never do, what is kept
// out "for now", and what the whole thing targets only.
func TestMarkersExtensionSession(t *testing.T) {
	playSession(t, []sessionStep{
		says("Options page in Svelte, it's small.", []string{"Svelte"}, nil, nil),
		says("API is Hono on Cloudflare Workers.", []string{"Hono"}, nil, nil),
		says("Email: receipts through Postmark.", []string{"Postmark"}, nil, nil),
		says("We never log full URLs, only their hashes.", []string{"We never log full URLs"}, nil, nil),
		says("I don't want to support Edge yet.", nil, nil, []string{"Edge"}),
		says("The app supports iOS 17 and up only.", []string{"iOS 17"}, nil, nil),
	})
}

// A bot session: a move whose reason speaks of the option left, every
// case answering in time, a feature left out for good.
func TestMarkersBotSession(t *testing.T) {
	playSession(t, []sessionStep{
		says("Host the bot on Render.", []string{"Render"}, nil, nil),
		says("Move the bot off Render to a Hetzner VPS, Render's free tier sleeps.", []string{"Hetzner", "free tier sleeps"}, []string{"Host the bot on Render"}, nil),
		says("Every webhook responds within 2 seconds.", []string{"Every webhook responds within 2 seconds"}, nil, nil),
		says("We're skipping music playback entirely.", nil, nil, []string{"music playback"}),
		says("Let's use Mocha for tests.", []string{"Mocha"}, nil, nil),
		says("Replace Mocha with Vitest, Mocha needs too much glue for ESM.", []string{"Vitest", "needs too much glue"}, []string{"Use Mocha"}, nil),
		says("I'm not a fan of Lodash.", nil, nil, []string{"Lodash"}),
		says("Error reports: Sentry, with source maps uploaded.", []string{"Sentry"}, nil, nil),
		// A drop or swap whose last clause speaks of the old option: that
		// clause is shown as the reason, not as part of the choice.
		says("Let's use Travis for CI.", []string{"Travis"}, nil, nil),
		says("Let's ditch Travis and go with Buildkite, Travis builds queue for hours.", []string{"Use Buildkite (instead of Travis) (why: Travis builds queue for hours)"}, []string{"Use Travis"}, nil),
		says("Swap Buildkite for CircleCI, Buildkite agents need babysitting.", []string{"Use CircleCI (instead of Buildkite) (why: Buildkite agents need babysitting)"}, nil, nil),
	})
}

// A model training session in everyday words: a part said without an
// article with its option and the alternative set aside, a part handled
// with a named tool in the passive, a part placed on an option with a word
// about how, how often and how long something is done, a name of letters
// and digits used, a change whose last clause says what went wrong with
// the old option (it is shown as the reason, though the change names only
// the new one), why an option is turned down after a comma, and a purpose
// said as what the choice makes happen.
func TestMarkersTrainingSession(t *testing.T) {
	playSession(t, []sessionStep{
		says("Training code is PyTorch Lightning, not raw PyTorch loops.", []string{"PyTorch Lightning"}, nil, []string{"raw PyTorch loops"}),
		says("Experiment tracking goes to MLflow, self-hosted.", []string{"MLflow"}, nil, nil),
		says("Datasets are versioned with DVC on top of the S3 bucket.", []string{"DVC"}, nil, nil),
		says("Checkpoints are written every 1000 steps and kept for a week.", []string{"Checkpoints are written every 1000 steps"}, nil, nil),
		says("Use bf16 mixed precision on the A100s.", []string{"bf16 mixed precision"}, nil, nil),
		says("Let's use pandas for the feature code.", []string{"pandas"}, nil, nil),
		says("Actually let's switch the feature code to Polars, pandas runs out of memory on the full dump.",
			[]string{"Use Polars for the feature code", "(why: pandas runs out of memory on the full dump)"}, []string{"Use pandas"}, nil),
		says("Don't use Ray for now, a single node is enough.", nil, nil, []string{"Ray (reason: a single node is enough)"}),
		says("Serve the model with Flask.", []string{"Flask"}, nil, nil),
		says("Instead of Flask, serve the model with BentoML so batching comes for free.",
			[]string{"BentoML", "(why: batching comes for free)"}, []string{"Flask"}, nil),
	})
}

// A payments service session in turns of two or three sentences, as
// people type them to an agent: a part's option with a longer detail,
// what a thing always is and never is, what is required where, a change
// whose reason is what someone already does, an option turned down
// because another handles it, what does instead of an option just turned
// down, a change made "now that" something holds.
func TestMarkersPaymentsSession(t *testing.T) {
	playSession(t, []sessionStep{
		says("OK so the service is Go 1.23 with the standard library router. I don't want gin or echo in here.",
			[]string{"Go 1.23 with the standard library router"}, nil, []string{"gin", "echo"}),
		says("Money is always int64 minor units, never floats.", []string{"Money is always int64 minor units, never floats"}, nil, nil),
		says("Idempotency keys are required on every POST.", []string{"Idempotency keys are required on every POST"}, nil, nil),
		says("Publish outbox events to RabbitMQ.", []string{"RabbitMQ"}, nil, nil),
		says("Hmm, actually no RabbitMQ. Publish outbox events to Kafka, the data team already consumes from it.",
			[]string{"Kafka", "(why: the data team already consumes from it)"}, []string{"RabbitMQ"}, nil),
		says("We're not doing our own card vault, Stripe handles PCI.", nil, nil, []string{"own card vault (reason: Stripe handles PCI)"}),
		says("Please don't add an ORM. Plain SQL with pgx is fine.", []string{"Plain SQL with pgx"}, nil, []string{"ORM"}),
		says("Use zap for logging.", []string{"zap"}, nil, nil),
		says("Switch logging to slog now that it's in the stdlib, zap isn't worth the dependency.",
			[]string{"Use slog for logging", "(why: it's in the stdlib)"}, []string{"Use zap"}, nil),
	})
}

// A command-line tool session: a part with its option and the alternative
// set aside, a part and an option for each place, a part run under a
// well-known option with what it excludes, a part's option and where it
// lives, a change whose second clause says what the new option does (the
// old one is replaced, the clause is the reason), the minimum supported
// version by its short name, and an option skipped for now with why.
func TestMarkersCLISession(t *testing.T) {
	playSession(t, []sessionStep{
		says("Argument parsing with clap derive, not the builder API.", []string{"clap derive"}, nil, []string{"builder API"}),
		says("Errors: thiserror in the library crates, anyhow only in the binary.",
			[]string{"thiserror in the library crates", "anyhow only in the binary"}, nil, nil),
		says("Plugins run as WebAssembly under wasmtime, no native dylibs.", []string{"wasmtime"}, nil, []string{"native dylibs"}),
		says("The config file is TOML and lives in the XDG config dir.", []string{"Use TOML for the config file"}, nil, nil),
		says("Use cargo-release for releases.", []string{"cargo-release"}, nil, nil),
		says("Scratch cargo-release, cargo-dist builds the installers for us.",
			[]string{"Use cargo-dist", "(why: builds the installers for us)"}, []string{"cargo-release"}, []string{"cargo-release"}),
		says("MSRV is 1.75 and we don't bump it in patch releases.", []string{"MSRV is 1.75"}, nil, nil),
		says("I'd skip Windows ARM builds for now, nobody asked for them.", nil, nil, []string{"Windows ARM builds (reason: nobody asked for them)"}),
	})
}

// A web app session: a rule stressed with "no exceptions" (nothing turned
// down), one option kept and another dropped with why, strictness as a
// rule, an option dropped and what is done instead (it replaces the old
// decision), and names with a capital inside.
func TestMarkersPhoenixSession(t *testing.T) {
	playSession(t, []sessionStep{
		says("Use Tailwind for styling with daisyUI components.", []string{"Tailwind"}, nil, nil),
		says("Keep Tailwind but drop daisyUI, the components fight with our design tokens.",
			nil, nil, []string{"daisyUI (reason: the components fight with our design tokens)"}),
		says("Every LiveView mounts with the current_scope assigned, no exceptions.",
			[]string{"Every LiveView mounts with the current_scope assigned"}, nil, nil),
		says("Use Mox for test mocks.", []string{"Mox"}, nil, nil),
		says("Let's get rid of Mox, we'll hit a real Postgres in tests with the sandbox.",
			[]string{"real Postgres in tests"}, []string{"Mox"}, []string{"Mox"}),
		says("Credo runs in strict mode and CI fails on any warning.", []string{"Credo runs in strict mode"}, nil, nil),
	})
	c := playSession(t, []sessionStep{
		says("Every request carries a trace id, no exceptions.", []string{"trace id"}, nil, nil),
		says("Use Postgres for every service, no exceptions.", []string{"Postgres"}, nil, nil),
	})
	if _, rejected := sections(t, c); strings.Contains(rejected, "exceptions") {
		t.Errorf("'no exceptions' turned something down:\n%s", capsule.Render(c))
	}
}

// A backend session with many changes of mind: a judgement of the old
// option said before the change it explains, what the new option is
// needed for, a part through an option with the one set aside, an option
// dropped and what is enough instead, an option turned down until a
// condition holds, and keeping what is decided (nothing changes: the
// decision is not replaced by a copy of itself).
func TestMarkersDeliverySession(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("The ORM is Prisma.", []string{"Prisma"}, nil, nil),
		says("Prisma's migrations keep fighting us. Let's switch to Drizzle.",
			[]string{"Drizzle", "(why: Prisma's migrations keep fighting us)"}, []string{"Prisma"}, nil),
		says("The driver app API is REST.", []string{"REST"}, nil, nil),
		says("On reflection the driver app should talk GraphQL, the screens need nested data.",
			[]string{"GraphQL", "(why: the screens need nested data)"}, []string{"REST"}, nil),
		says("Geo queries go through PostGIS, not a separate Elasticsearch.", []string{"PostGIS"}, nil, []string{"Elasticsearch"}),
		says("Use Socket.IO for live order tracking.", []string{"Socket.IO"}, nil, nil),
		says("Ditch Socket.IO. Server-sent events are enough for order tracking.",
			[]string{"Server-sent events for order tracking"}, []string{"Socket.IO"}, nil),
		says("We agreed no microservices until we have more than three engineers.",
			nil, nil, []string{"microservices (reason: until we have more than three engineers)"}),
		says("Payments stay with Stripe Connect, payouts weekly.", []string{"Stripe Connect"}, nil, nil),
		says("Use BullMQ for the job queue.", []string{"BullMQ"}, nil, nil),
		says("Actually keep BullMQ, the Postgres queue idea was a mistake.", []string{"Use BullMQ for the job queue"}, nil, nil),
	})
	if active, rejected := sections(t, c); strings.Contains(rejected, "BullMQ") || strings.Contains(rejected, "Postgres") || !strings.Contains(active, "PostGIS") {
		t.Errorf("keeping BullMQ replaced or turned something down:\n%s", capsule.Render(c))
	}
}

// A scripted-sounding session: out of scope as turned down, a change
// whose replacement is said to be better (it replaces the old decision,
// with why), and a decision's purpose that is not one of its options
// ("Use JWT for sessions", then "forget JWT": "sessions" is not kept as a
// decision of its own).
func TestMarkersTodoSession(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("Authentication is out of scope for the first version.", nil, nil, []string{"Authentication"}),
		says("Use JWT for sessions.", []string{"JWT"}, nil, nil),
		says("Forget JWT, plain cookie sessions are simpler.",
			[]string{"Use plain cookie sessions", "(why: simpler)"}, []string{"Use JWT"}, nil),
		says("Use Redux for state.", []string{"Redux"}, nil, nil),
		says("Forget Redux, plain React context is simpler.", []string{"React context"}, []string{"Use Redux"}, nil),
	})
	if active, _ := sections(t, c); strings.Contains(active, "Use sessions") {
		t.Errorf("the purpose of a decision turned down was kept as a decision:\n%s", capsule.Render(c))
	}
}

// A session that changes one subject again and again: a judgement of the
// active option with what replaces it in the same sentence or the next,
// "swap X out for Y", and a change that keeps no part of the old decision
// ("for the report jobs" is what it was for, not an option).
func TestMarkersDashboardSession(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("Use Celery for the report jobs.", []string{"Celery"}, nil, nil),
		says("Celery is too much for five nightly jobs, just use cron with a lock file.",
			[]string{"Use cron with a lock file", "(why: Celery is too much for five nightly jobs)"}, []string{"Use Celery"}, nil),
		says("Cron was a bad idea, we need retries. Let's go back to Celery.",
			[]string{"Use Celery", "(why: Cron was a bad idea, we need retries)"}, []string{"Use cron"}, nil),
		says("Use Redis for caching query results.", []string{"Redis"}, nil, nil),
		says("Swap Redis out for an in-process LRU, we only run one instance.",
			[]string{"in-process LRU", "(why: we only run one instance)"}, []string{"Use Redis"}, nil),
		says("Use Memcached for sessions.", []string{"Memcached"}, nil, nil),
		says("Swap Memcached out for Redis, we need persistence.", []string{"Redis"}, []string{"Use Memcached"}, nil),
	})
	if active, _ := sections(t, c); strings.Contains(active, "Use sessions") || strings.Contains(active, "Out for") {
		t.Errorf("a change kept what the old decision was for as a decision:\n%s", capsule.Render(c))
	}
}

// A session typed the way people type to an agent: lower case, no verb
// ("franz-go as the kafka client"), answers to the agent's own options by
// number, a correction that starts "hmm no," and a crash pasted right
// before the instruction with no blank line between.
func TestMarkersIngestSession(t *testing.T) {
	options := sessionStep{
		msgs: []dialect.Message{
			{Role: "assistant", Text: "For the sink I see two options: (1) the official clickhouse-go driver with batch inserts, or (2) writing to the HTTP interface ourselves. Which one?"},
			{Role: "user", Text: "1, the official driver"},
		},
		active: []string{"clickhouse-go"},
	}
	c := playSession(t, []sessionStep{
		says("ok so go for the consumer, franz-go as the kafka client", []string{"franz-go as the kafka client"}, nil, nil),
		options,
		says("nah don't pull in viper for config, plain env vars are enough", nil, nil, []string{"viper", "plain env vars are enough"}),
		says("use zerolog for logging", []string{"zerolog"}, nil, nil),
		says("actually switch logging to log/slog, one less dependency", []string{"Use log/slog for logging", "(why: one less dependency)"}, []string{"zerolog"}, nil),
		says("batches are at most 10k rows or 2 seconds, whichever comes first", []string{"at most 10k rows"}, nil, nil),
		says("here's what i get:\npanic: runtime error: invalid memory address or nil pointer dereference\n"+
			"[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x6c2f1a]\ngoroutine 41 [running]:\nmain.(*sink).flush(0x0)\n"+
			"looks like flush runs before the conn is set. never call flush from the constructor",
			[]string{"never call flush from the constructor"}, nil, nil),
		says("use a single consumer group for all topics", []string{"single consumer group"}, nil, nil),
		says("hmm no, one consumer group per topic. a slow topic shouldn't stall the others",
			[]string{"one consumer group per topic", "(why: a slow topic shouldn't stall the others)"}, []string{"single consumer group"}, nil),
		says("tests use testcontainers for kafka and clickhouse, no mocks of either", []string{"testcontainers"}, nil, []string{"mocks"}),
		says("let's not do exactly-once, at-least-once plus dedup on event_id in clickhouse is fine",
			nil, nil, []string{"exactly-once", "at-least-once plus dedup"}),
		says("the dead letter topic is events.dlq, keep failed messages there for 7 days", []string{"events.dlq", "7 days"}, nil, nil),
		says("go 1.23 minimum", []string{"go 1.23 minimum"}, nil, nil),
	})
	if _, rej := sections(t, c); strings.Contains(rej, "of either") {
		t.Errorf("the rejected option kept the words after it:\n%s", capsule.Render(c))
	}
}

// A session whose decisions are changed, turned down and taken back inside
// longer turns: a judgement of what an option did to us said before the
// change it explains, "we can drop X entirely, the only … left", an option
// talked about and set aside, a part put off for a milestone, staying on
// what is decided, and a part with its option after a colon followed by a
// rule.
func TestMarkersAppBackendSession(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("alright, the plan looks fine. one thing though: use Fastify instead of Express, we need the schema validation built in.",
			[]string{"Fastify instead of Express", "(why: we need the schema validation built in)"}, []string{"one thing"}, nil),
		says("Use Prisma for database access.", []string{"Prisma"}, nil, nil),
		says("I've been burned by Prisma migrations before. let's use Drizzle for database access instead.",
			[]string{"Drizzle", "(why: I've been burned by Prisma migrations before)"}, []string{"Prisma"}, nil),
		says("ok I looked at the Drizzle output and I don't like it. back to Prisma, we'll live with the migrations.",
			[]string{"Prisma", "I don't like it"}, []string{"Drizzle"}, nil),
		says("Use BullMQ for background jobs.", []string{"BullMQ"}, nil, nil),
		says("we can drop BullMQ entirely, the only job left is the nightly digest and a cron on the box does that.", nil, []string{"BullMQ"}, nil),
		says("image uploads: presigned S3 URLs, the API never touches the bytes.", []string{"presigned S3 URLs", "The API never touches the bytes"}, nil, nil),
		says("Use REST for the mobile API.", []string{"REST for the mobile API"}, nil, nil),
		says("we talked about GraphQL for the mobile API but honestly REST is fine for the 12 endpoints we have. stay on REST.",
			[]string{"Use REST for the mobile API"}, nil, []string{"GraphQL", "REST is fine for the 12 endpoints we have"}),
		says("rate limit is 100 requests per minute per user", []string{"100 requests per minute"}, nil, nil),
		says("skip the admin dashboard for this milestone, support can use the database directly for now.",
			nil, nil, []string{"admin dashboard", "support can use the database directly"}),
	})
	if active, _ := sections(t, c); strings.Count(active, "REST") != 1 || strings.Contains(active, "entirely") {
		t.Errorf("staying on REST changed the decision, or a drop kept its adverb:\n%s", capsule.Render(c))
	}
}

// Feedback given in lists: bullets under a heading, and numbered answers
// to the agent's numbered questions, each read against its own question
// (an option it names, a yes, a "not yet").
func TestMarkersListFeedbackSession(t *testing.T) {
	questions := "Before I start: 1. Should I use Django REST Framework or Django Ninja? 2. Do you want the tenant resolved from the subdomain or a header? 3. Should I add Sentry now? 4. Should I write a seed script?"
	answers := sessionStep{
		msgs: []dialect.Message{
			{Role: "assistant", Text: questions},
			{Role: "user", Text: "1. ninja\n2. subdomain\n3. not yet, after the beta\n4. yes"},
		},
		active: []string{"Use Django Ninja", "subdomain", "Write a seed script"}, notIn: []string{"REST Framework", "header"}, rejected: []string{"Sentry", "after the beta"},
	}
	askedBack := sessionStep{
		msgs: []dialect.Message{
			{Role: "assistant", Text: "Two questions: 1. Should I use Redis or Memcached? 2. Should I add a CDN?"},
			{Role: "user", Text: "1. what's the difference?\n2. maybe later"},
		},
		notIn: []string{"Redis", "Memcached", "CDN"},
	}
	c := playSession(t, []sessionStep{
		says("a few things before you start:\n- use Postgres, not SQLite, even locally\n- no Celery, we'll use django-q for the two background tasks\n- all money amounts are stored as integer cents",
			[]string{"Postgres", "django-q", "integer cents"}, nil, []string{"SQLite", "Celery"}),
		answers,
		askedBack,
		says("For the frontend:\n* HTMX + Alpine, no React\n* Tailwind via the standalone CLI, no node in the build",
			[]string{"Use HTMX + Alpine", "Use Tailwind via the standalone CLI", "no node in the build"}, nil, []string{"React"}),
		says("Let's keep the settings in a single settings.py with env overrides. No split settings modules, they always drift.",
			[]string{"single settings.py"}, nil, []string{"split settings modules", "they always drift"}),
		says("migrations must be reversible, and never edit one that has been merged",
			[]string{"migrations must be reversible", "never edit one that has been merged"}, nil, nil),
		says("Use pytest-django for tests.", []string{"pytest-django"}, nil, nil),
		says("thinking about it more, stick with Django's own test runner. pytest-django adds another layer nobody on the team knows.",
			[]string{"Django's own test runner", "nobody on the team knows"}, []string{"pytest-django"}, nil),
	})
	if _, rej := sections(t, c); strings.Contains(rej, "node") {
		t.Errorf("a rule about where something runs was turned into an option turned down:\n%s", capsule.Render(c))
	}
}

// A session of long paragraphs that settle several things each, typed
// without apostrophes ("lets", "dont"), with an option ruled out while the
// one standing is praised ("Click directly is a no-go, Typer gives us the
// help for free": the praise is the reason, not a new decision), and a
// hedge inside a reason ("we want async later") that leaves the change
// settled.
func TestMarkersCLIToolSession(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("ok here's what I want. the CLI is built on Typer, and output is plain text by default with a --json flag. Click directly is a no-go, Typer gives us the help for free.",
			[]string{"built on Typer", "plain text by default with a --json flag"}, nil, []string{"Click", "Typer gives us the help for free"}),
		says("make it installable with pipx, we're not publishing to conda", []string{"installable with pipx"}, nil, []string{"conda"}),
		says("Use requests for HTTP calls.", []string{"requests"}, nil, nil),
		says("lets use httpx instead of requests, we want async later", []string{"httpx", "(why: we want async later)"}, []string{"Use requests"}, nil),
		says("I need every command to exit non-zero on failure, scripts depend on it", []string{"exit non-zero on failure"}, nil, nil),
		says("keep the dependency list short: typer, httpx, rich. nothing else without asking me.", []string{"nothing else without asking me"}, nil, nil),
		says("dont use pydantic for the config", nil, nil, []string{"pydantic"}),
	})
	if active, _ := sections(t, c); strings.Contains(active, "gives us the help") || strings.Contains(active, "directly") {
		t.Errorf("praise of the option standing was read as a decision:\n%s", capsule.Render(c))
	}
}

// Steering an agent that drifted: what was agreed said again ("no no, we
// agreed on …"), what is ruled out repeated ("I told you already, we don't
// use RSpec here"), the agent told to stop bringing something in (an
// option turned down; a practice ruled out), and a change whose old option
// is named with other words than the decision it replaces ("Redis
// caching" for "Use Redis for caching").
func TestMarkersSteeringSession(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("no no, we agreed on Sidekiq for jobs, not ActiveJob's async adapter.", []string{"Sidekiq"}, nil, []string{"async adapter"}),
		says("I told you already, we don't use RSpec here. minitest only.", []string{"minitest only"}, nil, []string{"RSpec"}),
		says("again: every migration needs a matching rollback", []string{"every migration needs a matching rollback"}, nil, nil),
		says("you keep adding devise. we roll our own auth with has_secure_password, that was the whole point.",
			[]string{"Roll our own auth with has_secure_password"}, nil, []string{"devise"}),
		says("Use Redis for caching.", []string{"Redis for caching"}, nil, nil),
		says("fine, let's drop Redis caching and use solid_cache, one less service to run.",
			[]string{"solid_cache", "(why: one less service to run)"}, []string{"Redis for caching"}, nil),
		says("stop suggesting Heroku, we deploy with Kamal to our own boxes", []string{"Kamal"}, nil, []string{"Heroku"}),
		says("and please stop putting business logic in controllers. service objects under app/services.",
			[]string{"Stop putting business logic in controllers", "service objects under app/services"}, nil, nil),
	})
	if _, rej := sections(t, c); strings.Contains(rej, "RSpec here") || strings.Contains(rej, "business logic") {
		t.Errorf("a rejected option kept a place word, or a practice was read as an option:\n%s", capsule.Render(c))
	}
}

// A monorepo session: options named together without a verb, a
// conclusion said as "X wins" with the other option's flaw after it, a
// practice ruled out beside a choice ("no manual version bumps" is a rule,
// not an option), and an option turned down earlier taken back ("bring Nx
// back"), which leaves the things not to use.
func TestMarkersMonorepoSession(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("pnpm workspaces with Turborepo. no Nx, it's too much magic for a team of three.",
			[]string{"Use pnpm workspaces with Turborepo"}, nil, []string{"Nx", "too much magic"}),
		says("ok so Vitest wins, Jest's ESM support is still painful.", []string{"Use Vitest"}, nil, []string{"Jest"}),
		says("Use tsup for building packages.", []string{"tsup"}, nil, nil),
		says("let's move the packages from tsup to plain tsc. the bundling was hiding type errors.",
			[]string{"plain tsc", "the bundling was hiding type errors"}, []string{"Use tsup"}, nil),
		says("don't reach for lodash, write the two helpers we need", nil, nil, []string{"lodash", "write the two helpers we need"}),
		says("Changesets for versioning, no manual version bumps.", []string{"Changesets", "no manual version bumps"}, nil, nil),
		says("bring Nx back, the caching alone is worth it now that we're twelve people.",
			[]string{"Use Nx", "the caching alone is worth it"}, nil, nil),
	})
	if _, rej := sections(t, c); strings.Contains(rej, "version bumps") || strings.Contains(rej, "Nx") {
		t.Errorf("a practice was turned down as an option, or Nx taken back is still not to be used:\n%s", capsule.Render(c))
	}
}

// What users tell an agent about how things are, complaints, and tasks
// done with a tool settle nothing, though each looks like a form that
// does: a part and the option it uses, where things go, a limit, a rule
// stated with "should be", an instruction with a well-known tool.
func TestMarkersReportsAndTasksAreNotChoices(t *testing.T) {
	for _, s := range []string{
		"Here's the PR description:\nUse Redis instead of Memcached for the session cache.",
		"the failing test is events_test.go",
		"viper is what the old service used",
		"Let's not add tests for this.",
		"the webhook never fires",
		"we talked about GraphQL at the offsite",
		"skip the flaky test for now",
		"I don't like it when the build is slow.",
		"1. the tests pass\n2. the lint fails on settings.py",
		"Logging is verbose by default.",
		"lets see what the tests say",
		"why did you add devise?",
		"did we agree on Sidekiq or GoodJob?",
		"I told you the tests were flaky",
		"All the fixtures are in tests/fixtures.",
		"Debuggability wins.",
		"Lunch with Priya.",
		"Nx came up in the retro again",
		"Our CI runs on GitHub Actions right now but it's slow.",
		"The build is written in Bash and it's a mess.",
		"Images are stored in S3 but some are missing.",
		"The frontend uses React 17, which is old.",
		"All endpoints return 200 even on errors.",
		"Deploys happen on Fridays, which is risky.",
		"Sessions live in Redis and they expire too early.",
		"Retries are capped at 3 but it still loops forever.",
		"Uploads are limited to 5 MB by nginx, that's why it fails.",
		"Tests should be faster.",
		"No response from the server.",
		"Let's run the tests with pytest.",
		"Run the benchmarks with hyperfine.",
		"Write a test with Vitest for the parser.",
		"Schedule the cleanup job with cron for tonight.",
		"Host the demo on Vercel so I can show it.",
		"Track the bug in Jira.",
		"Nobody knows why the deploy failed.",
		"The cluster runs on EKS but the nodes keep dying.",
		"Problems with Traefik again.",
		"I'd rather not use the debugger for this.",
		"One test per file is too strict.",
		"Helm charts for every service are broken.",
		"Skip the flaky test for now.",
		"The app is slow with large lists, one screen takes seconds.",
		"Crash logs: attached below.",
		"Every request fails with a 500 since the deploy.",
		"Bob owns the migrations.",
		"Latency under load is bad.",
		"Let's hold off on the refactor until Friday.",
		"hold off on the cleanup until Monday",
		"we used Airflow at my old job, it was fine honestly",
		"the dagster UI is kinda slow today",
		"Priya mentioned Airbyte in standup, no idea if it's any good",
		"our builds run on Buildkite, which is flaky lately",
		"Charts with Recharts for now, we can revisit later.",
		"the tests are slow, so I went for a walk",
		"always.",
		"it never touches the database",
		"forget it, I'll fix the Dockerfile myself",
		"revert the last commit, it broke the lobby",
		"go back to the login screen and check the error",
		"undo the migration on staging please",
		"my friend says Photon is great for this",
		"Redis? what about it?",
		"the Redis leaderboard was down again last night",
		"The logs go to stdout on my machine.",
		"Backups are stored in S3 but restores fail.",
		"Metrics go to Datadog again after the outage.",
		"Our data lands in Snowflake every night, which is slow.",
		"It runs on Kubernetes.",
		"I can only see half the logs.",
		"We're building the release notes now.",
		"Errors in Postgres, again.",
		"We always forget to bump the version.",
		"I don't want to rush this.",
		"I saw a bot that uses Kafka for everything.",
		"We're skipping the flaky tests today.",
		"Let's run the app with the devtools open.",
		"I'm not a fan of long meetings.",
		"The admin panel is built with Django by the other team.",
		"Uploads are capped at 10 MB by the proxy, that explains the 413s.",
		"Let's deploy the preview to Netlify and see.",
		"The release is Monday.",
		"Let's experiment with Ray on a branch.",
		"Experiment tracking was down all morning.",
		"Checkpoints were written every 500 steps until the disk filled up.",
		"Nightly runs are kept for a week but nobody reads them.",
		"Use 8 workers for this run.",
		"The trainer ran out of memory again.",
		"Datasets are versioned in DVC but the remote is broken.",
		"The build is always red.",
		"The API is always slow on Mondays.",
		"Kafka already handles this for the other team.",
		"Plain SQL is fine.",
		"Our services are written in Go except the billing one.",
		"The mobile app is built with Flutter by another team.",
		"Publish the test report to S3 for me.",
		"Forward this email to Stripe support.",
		"Send the invoice to Stripe now.",
		"I'd skip the slow tests for this run.",
		"Logging: see the attached file, the errors start at line 40.",
		"The lockfile is committed and lives in the repo root.",
		"Every page loads slowly, that's the problem.",
		"The build fails on every push.",
		"Drop it, we'll talk about it tomorrow.",
		"No exceptions were thrown in the logs.",
		"No tests were run.",
		"The tests are flaky again. Let's rerun them.",
		"Let's wait until we have numbers before picking a cache.",
		"The queue idea was a mistake, I think.",
		"Is search out of scope?",
		"Honestly Go is simpler than Rust for this.",
		"Someone asked for PDF exports.",
		"A customer asked for SSO.",
		"Users want dark mode.",
	} {
		if items := readTurn(s); len(items) > 0 {
			t.Errorf("%q read as %+v", s, items)
		}
	}
}

// An analytics pipeline settled in a chat window: a turn-down then the
// option alone ("nah, not Airflow. Dagster."), a reason in the last clause
// ("…, too expensive for 12 sources"), preferences said as comparisons, a
// part put off until a condition, a rule stressed by a sentence of one
// word ("always."), an answer by the option's number with more after it,
// a reason then ", so X it is", and a take-back of the orchestrator.
func TestMarkersAnalyticsSession(t *testing.T) {
	options := sessionStep{
		msgs: []dialect.Message{
			{Role: "assistant", Text: "For late-arriving events we can (1) reprocess the last 3 days on every run, or (2) use a lookback window driven by the loaded_at column. Which do you prefer?"},
			{Role: "user", Text: "2, and make the window configurable"},
		},
		active: []string{"lookback window"},
	}
	c := playSession(t, []sessionStep{
		says("nah, not Airflow. Dagster. the asset model maps way better onto our dbt models",
			[]string{"Use Dagster", "(why: the asset model maps way better"}, nil, []string{"Airflow"}),
		says("Fivetran is out, too expensive for 12 sources. we'll write the extractors with dlt",
			[]string{"dlt"}, nil, []string{"Fivetran", "too expensive for 12 sources"}),
		says("prefer sqlfluff over sqlfmt, we need the lint rules not just formatting", []string{"Use sqlfluff"}, nil, []string{"sqlfmt"}),
		says("let's hold off on the semantic layer until the core marts are stable", nil, nil, []string{"semantic layer", "until the core marts are stable"}),
		says("Use Looker for dashboards.", []string{"Looker"}, nil, nil),
		says("we're switching dashboards to Metabase, the Looker renewal quote was insane",
			[]string{"Metabase", "the Looker renewal quote was insane"}, []string{"Looker for dashboards"}, nil),
		says("secrets go through Secret Manager, never in profiles.yml", []string{"never in profiles.yml"}, nil, nil),
		says("one dbt project, not a project per team.", []string{"One dbt project"}, nil, []string{"project per team"}),
		says("dagster schedules in UTC. always.", []string{"Dagster schedules in UTC"}, nil, nil),
		options,
		says("turn freshness off for ads_*, their API only syncs once a day", []string{"freshness off", "their API only syncs once a day"}, nil, nil),
		says("ugh ok, Dagster's out after all. the platform team will only support Airflow, so Airflow it is",
			[]string{"Use Airflow", "the platform team will only support Airflow"}, []string{"Use Dagster"}, nil),
		says("Great Expectations is overkill for us, dbt tests plus elementary will do", []string{"elementary"}, nil, []string{"Great Expectations", "overkill"}),
		says("local runs never touch the prod dataset.", []string{"never touch the prod dataset"}, nil, nil),
		says("nope, not Jenkins. Buildkite. the agents run on our own boxes",
			[]string{"Use Buildkite", "(why: the agents run on our own boxes"}, nil, []string{"Jenkins"}),
	})
	if _, rej := sections(t, c); strings.Contains(rej, "Airflow") {
		t.Errorf("Airflow, taken back, is still turned down:\n%s", capsule.Render(c))
	}
}

// A history is written by whoever the agent talked to, so a sentence of
// clauses chained by ", so " (or any other join) must cost readings in
// proportion to its clauses: the forms that ask whether a clause settles
// anything on its own (trailingReason, soThen, judgedThen) ask it once,
// not once for every way of splitting what is left. Before the probe
// reader, sixteen ", so " clauses took 215 037 readings (seconds).
func TestMarkersClauseChainsReadLinearly(t *testing.T) {
	for _, sep := range []string{", so ", " so ", ", ", "; ", ", the cache is fine, so ", ". ", " over ", ", never in "} {
		for _, n := range []int{4, 8, 16, 32} {
			s := strings.Repeat("Redis is too slow"+sep, n-1) + "Redis is too slow"
			reads := 0
			r := reader{reads: &reads}
			r.lines(userLines(s))
			if reads > 8*n {
				t.Errorf("%d clauses joined by %q: %d readings, want at most %d", n, sep, reads, 8*n)
			}
		}
	}
	// The operator's forms read what follows them: a setting's reason,
	// what follows "don't apply that".
	for _, chain := range []func(n int) string{
		func(n int) string { return strings.Repeat("raise pool_size to 40, ", n-1) + "raise pool_size to 40" },
		func(n int) string { return strings.Repeat("don't apply that, ", n-1) + "use Redis" },
	} {
		for _, n := range []int{4, 8, 16, 32} {
			s := chain(n)
			reads := 0
			r := reader{reads: &reads}
			r.lines(userLines(s))
			if reads > 8*n {
				t.Errorf("%q: %d readings, want at most %d", s, reads, 8*n)
			}
		}
	}
	// "a: b: c: d: e: f: g" is an error chain, not the user's words, even
	// with a sentence end in it; a paragraph of three labels is theirs.
	for text, want := range map[string]bool{
		"ok. " + strings.Repeat("db: ", 8) + "x, y":                false,
		"New tool. Stack: Go. Keep it simple: no Redis, no Kafka.": true,
	} {
		if got := slices.ContainsFunc(userLines(text), func(ul userLine) bool { return ul.text != "" }); got != want {
			t.Errorf("userLines(%q) kept the user's words: %v, want %v", text, got, want)
		}
	}
	// Labels read what follows them ("Stack: …", "db: …"), once: a label
	// within a label's text is not read as one again. userLines drops a
	// line of six labels or more as an error chain; the reader's own
	// bound is checked on such lines given to it directly.
	for _, chain := range []func(n int) string{
		func(n int) string { return strings.Repeat("db: ", n) + "x, y" },
		func(n int) string { return strings.Repeat("keep it simple: no Redis, ", n) + "no Kafka" },
		func(n int) string { return "- " + strings.Repeat("db: ", n) + "x, y" },
	} {
		for _, n := range []int{4, 8, 16, 32} {
			s := chain(n)
			reads := 0
			r := reader{reads: &reads}
			r.lines([]userLine{{text: s, low: lower(s)}})
			if reads > 8*n {
				t.Errorf("%q: %d readings, want at most %d", s, reads, 8*n)
			}
		}
	}
}

// A game backend whose owner keeps changing their mind: back to an earlier
// option ("forget what I said about UDP, we're back to websockets"), a
// take-back whose pronoun stands for what it was about ("I take that back
// about the leaderboards, keep them in Postgres"), turn-downs in a word
// ("Mongo? no.") or in passing ("not a fan of Firebase", "a non-starter
// in Lambda", "no to Unity Netcode"), and a drop with what it is instead
// ("kill the microservice split, it's one Go binary until …").
func TestMarkersChangeOfMindSession(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("Use WebSockets for the realtime channel.", []string{"WebSockets"}, nil, nil),
		says("on second thought let's do plain UDP for the match traffic, websockets add too much latency for a shooter",
			[]string{"UDP for the match traffic", "too much latency"}, []string{"Use WebSockets"}, []string{"WebSockets"}),
		says("ok forget what I said about UDP, we're back to websockets. the browser client can't do raw UDP anyway",
			[]string{"Use WebSockets for the realtime channel", "the browser client can't do raw UDP anyway"}, []string{"UDP for the match traffic"}, nil),
		says("Mongo? no. player profiles go in Postgres like everything else", []string{"Postgres"}, nil, []string{"Mongo"}),
		says("not a fan of Firebase for auth, we'll run our own with the account service", []string{"account service"}, nil, []string{"Firebase"}),
		says("Use Redis sorted sets for the leaderboards.", []string{"Redis sorted sets"}, nil, nil),
		says("I take that back about the leaderboards, keep them in Postgres for now. Redis is one more thing to run",
			[]string{"leaderboards in Postgres", "Redis is one more thing to run"}, []string{"Redis sorted sets"}, nil),
		says("matchmaking is a non-starter in Lambda, cold starts would kill the queue times", nil, nil, []string{"Lambda", "cold starts would kill"}),
		says("kill the microservice split, it's one Go binary until we have more than two devs",
			[]string{"One Go binary", "until we have more than two devs"}, nil, []string{"microservice split"}),
		says("server-authoritative physics, never trust the client's positions",
			[]string{"server-authoritative physics", "Never trust the client's positions"}, nil, nil),
		says("no to Unity Netcode, we roll our own tick loop", []string{"our own tick loop"}, nil, []string{"Unity Netcode"}),
		says("anti-cheat runs server side only, nothing on the client we can't verify", []string{"server side only"}, nil, nil),
	})
	if _, rej := sections(t, c); strings.Contains(rej, "websockets") {
		t.Errorf("websockets, taken back, are still turned down:\n%s", capsule.Render(c))
	}
}

// A user who pastes what a terminal, a CI run or a log printed and decides
// around it: the paste, whatever it says ("Use ChargeV2 instead", "never
// call Capture twice", "Decision: …" in a commit message), is the
// program's; the user's words after it are read, however technical.
func TestMarkersPastedOutputSession(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("the nightly job died again:\n[2026-12-01T03:00:12Z] ERROR worker: context deadline exceeded (timeout=30s)\n[2026-12-01T03:00:12Z] WARN  worker: use a larger timeout\nbump job_timeout to 120s, the export of the big tenants takes 90",
			[]string{"job_timeout to 120s", "the export of the big tenants takes 90"}, nil, nil),
		says("pytest says:\n    FAILED tests/test_invoice.py::test_total - AssertionError: 10.000000001 != 10.0\n    1 failed, 212 passed in 4.31s\nfloats for money are banned in this repo, that's exactly why",
			[]string{"floats for money are banned"}, nil, nil),
		says("kubectl top pods\nNAME            CPU(cores)   MEMORY(bytes)\napi-7d9f-x2     912m         1830Mi\nput the PDF rendering behind a worker queue instead of running it in the API pods",
			[]string{"PDF rendering behind a worker queue"}, nil, nil),
		says("terraform wants to do this:\n  # aws_instance.api will be replaced\n  ~ ami = \"ami-0a1\" -> \"ami-0b2\"\nPlan: 1 to add, 0 to change, 1 to destroy.\ndon't apply it, we stay on the current AMI until the kernel patch is out",
			[]string{"current AMI"}, nil, nil),
		says("here's the linter:\n    handlers.go:88:3: error strings should not be capitalized (ST1005)\nok, new rule: lower-case error strings everywhere, the linter stays on in CI",
			[]string{"lower-case error strings"}, nil, nil),
		says("Use RabbitMQ for the order events.", []string{"RabbitMQ"}, nil, nil),
		says("$ rabbitmqctl list_queues\norder.events    912004\nwe're dropping rabbit for this, move the order events to Kafka",
			[]string{"Kafka"}, []string{"Use RabbitMQ"}, nil),
		says("select now();\n              now\n-------------------------------\n 2026-12-06 09:14:07.123+01\nUTC timestamps everywhere, no exceptions",
			[]string{"UTC timestamps everywhere"}, nil, nil),
		says("the CI image reports:\n    Python 3.11.9\nPython is 3.12 everywhere, no exceptions", nil, nil, nil),
		says("the gateway logged:\n    WARN status=unknown value=\"frozen\" account=81\nonly the three documented statuses are valid. reject anything else with a 422",
			[]string{"anything else with a 422"}, nil, nil),
	})
	for _, r := range c.Rejected {
		if strings.EqualFold(r.Text, "rabbit") {
			t.Errorf("\"rabbit\", the RabbitMQ the turn replaced, is turned down on its own:\n%s", capsule.Render(c))
		}
	}
	active, rej := sections(t, c)
	if strings.Contains(active, "Use Python is") {
		t.Errorf("a sentence with its verb was read as a verbless choice:\n%s", capsule.Render(c))
	}
	if strings.Contains(rej, "anything else") {
		t.Errorf("\"reject anything else\" turned down an option:\n%s", capsule.Render(c))
	}
	for _, never := range []string{"ChargeV2", "larger timeout", "ami-0b2", "1 to add", "ST1005", "AssertionError"} {
		if strings.Contains(active+rej, never) {
			t.Errorf("%q, from the paste, is in the capsule:\n%s", never, capsule.Render(c))
		}
	}
}

// A session written in Markdown: headings over lists, bold labels, a
// struck option, a nested reason, checkboxes, status marks, a quote and a
// table that hold other people's words or data, open questions, and a
// pasted document. What each turn settles reaches the capsule; what is
// quoted, asked, left open or pasted does not.
func TestMarkersMarkdownSession(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("## Stack\n- **Runtime:** Bun, not Node\n- **Queue:** `pg-boss`, no extra infra", []string{"Bun"}, nil, []string{"Node"}),
		says("### Decided\n- Caddy in front of the API\n- ~~nginx~~", []string{"Caddy in front of the API"}, nil, []string{"nginx"}),
		says("Architecture choices:\n- IDs: ULIDs\n  - they sort by time\n- caching: no. the read replica is fast enough",
			[]string{"IDs: ULIDs (why: they sort by time)"}, []string{"read replica is fast enough"}, []string{"caching"}),
		says("> honestly we could just use Firebase for all of this\nnope, the data stays in our own Postgres", []string{"data stays in our own Postgres", "IDs: ULIDs"}, nil, []string{"Firebase"}),
		says("- [x] Sentry for error tracking\n- [ ] maybe PostHog for analytics", []string{"Sentry"}, []string{"PostHog"}, nil),
		says("❌ Redux", nil, nil, []string{"Redux"}),
		says("Open questions:\n- use GraphQL subscriptions?\n- Kafka or NATS?", nil, []string{"GraphQL", "Kafka", "NATS"}, nil),
		says("paste from the runbook, for reference:\n## Failover\nUse the replica in eu-west-2\ndon't touch it", nil, []string{"eu-west-2", "touch it"}, nil),
		says("| queue | p99 |\n|---|---|\n| use SQS | 40ms |\nwe keep pg-boss", nil, []string{"SQS"}, nil),
		says("- **Logging:** ~~logrus~~ `slog`, one dependency less", []string{"slog"}, nil, []string{"logrus"}),
		says("TODO for tomorrow:\n- [ ] wire the health check\n- [ ] rotate the staging keys", nil, nil, nil),
	})
	if c.LatestPlan == nil || len(c.LatestPlan.Steps) != 2 || !strings.Contains(c.LatestPlan.Steps[1].Text, "rotate the staging keys") {
		t.Errorf("a to-do list of open boxes is not the plan:\n%s", capsule.Render(c))
	}
	active, rej := sections(t, c)
	for _, never := range []string{"**", "~~", "`", "[x]", "❌", "|"} {
		if strings.Contains(active+rej, never) {
			t.Errorf("Markdown %q reached the capsule:\n%s", never, capsule.Render(c))
		}
	}
}

// Each line's Markdown gives way to the plain form it stands for.
func TestMarkdownLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"> we should use MongoDB", ""},
		{"| Fly.io | 140ms |", ""},
		{"## Decisions", "Decisions:"},
		{"### Hosting ###", "Hosting:"},
		{"#hashtag stays", "#hashtag stays"},
		{"## ADR-7: Use MongoDB", "ADR-7: Use MongoDB"},
		{"- [x] use pnpm workspaces", "- use pnpm workspaces"},
		{"- [ ] fix the login test", "- [ ] fix the login test"},
		{"✅ Keycloak realm is set up", "Keycloak realm is set up"},
		{"❌ Redux", "no Redux"},
		{"- ❌ dropping the Grafana Cloud idea", "- dropping the Grafana Cloud idea"},
		{"**Decision:** use `sqlc`", "Decision: use `sqlc`"},
		{"the frontend must *not* call the database", "the frontend must not call the database"},
		{"keep my_var_name and __init__.py, 2 * 3 * 4", "keep my_var_name and __init__.py, 2 * 3 * 4"},
		{"__really__ keep it", "really keep it"},
		{"Use the [Stripe portal](https://stripe.com/billing) here", "Use the Stripe portal here"},
		{"- ~~cache sessions in Redis~~ sessions go in signed cookies", "- sessions go in signed cookies instead of cache sessions in Redis"},
		{"~~REST~~ **GraphQL** for the public API, the partners asked", "GraphQL for the public API instead of REST, the partners asked"},
		{"- ~~nginx~~", "- no nginx"},
		{"  - nested item", "  - nested item"},
	} {
		if got := markdownLine(tc.in); got != tc.want {
			t.Errorf("markdownLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// Reasons said the way notes and reviews give them reach what they
// explain: a choice's reason is also why its alternative went, a reason
// in parentheses or after "because of", an old option judged archived,
// and a passive "was turned down by".
func TestMarkersReasonsSaidInPassing(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("agreed: error tracking via GlitchTip, not Sentry (price)", []string{"GlitchTip", "(why: price)"}, nil, []string{"Sentry (reason: price)"}),
		says("We'll use Hetzner for the servers, not AWS, because of the egress bill.", []string{"Hetzner for the servers", "(why: the egress bill)"}, nil, []string{"AWS (reason: the egress bill)"}),
		says("switch the job runner from kue to BullMQ, kue is archived", []string{"BullMQ", "(why: kue is archived)", "Hetzner"}, nil, []string{"kue"}),
		says("PDF export was turned down by legal", nil, nil, []string{"PDF export (reason: turned down by legal)"}),
	})
	active, _ := sections(t, c)
	if strings.Contains(active, "BullMQ, kue") {
		t.Errorf("the judgement of the old option stayed in the choice:\n%s", capsule.Render(c))
	}
}

// Markdown that reports, asks, quotes or leaves open settles nothing.
func TestMarkersMarkdownTraps(t *testing.T) {
	for _, text := range []string{
		"Current numbers:\n- p95: 412ms\n- error rate: 2%\n- CPU: 80%",
		"Environment:\n- Node: 20.11\n- OS: macOS 14",
		"Questions for you:\n- should the API be public?\n- Redis or Memcached?",
		"## Summary\nAdds CSV export for the reports page.",
		"> Decision: use MongoDB",
		"- [ ] switch to Vite",
		"## Steps to reproduce\n1. open the settings page\n2. click save",
		"Still open:\n- Kafka or NATS\n- which CDN",
		"the agent wrote:\n```go\n// Decision: use MongoDB here\nvar db = mongo.Connect()\n```\nwhat does this do?",
		"| option | verdict |\n|---|---|\n| use MongoDB | fine |",
		"TODO: use lodash here",
	} {
		if ops := markerOps(Prepare(nil, []dialect.Message{{Role: "user", Type: "message", Text: text}}, 0, 0)); len(ops) > 0 {
			t.Errorf("%q settled %v", text, ops)
		}
	}
}

// A session dictated without punctuation, and reviewed the way code
// review reads: the seams of a run-on sentence ("and also", "actually no",
// "no wait", "we already …" as a reason) and review labels ("nit:",
// "blocking:", "LGTM but", "+1 on") are read; a suggestion or a question
// is not settled, and an "actually" inside a clause is no seam.
func TestMarkersDictatedAndReviewSession(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("ok lets keep the invoices in postgres and also never send invoice emails from the request handler", []string{"invoices in postgres", "never send invoice emails"}, nil, nil),
		says("lets use SQS for the billing events actually no make it RabbitMQ we already run a RabbitMQ cluster", []string{"RabbitMQ", "we already run a RabbitMQ cluster"}, []string{"Use SQS"}, nil),
		says("so the plan is we write the exporter first then the scheduler then the dashboard", nil, nil, nil),
		says("nit: the config flag name should be --dry-run not --noop", []string{"--dry-run"}, nil, []string{"--noop"}),
		says("LGTM but swap Jest for Vitest in the new package", []string{"Vitest"}, nil, nil),
		says("+1 on Tailwind, keep it", []string{"Tailwind"}, nil, nil),
		says("we're standardising on pnpm now so drop npm everywhere", []string{"pnpm"}, nil, []string{"npm"}),
		says("suggestion (non-blocking): maybe move the retry logic into its own package", nil, []string{"retry logic"}, nil),
		says("question: why did you pick Redis here?", nil, []string{"Redis"}, nil),
		says("we keep polling until we actually need websockets", nil, []string{"until we"}, nil),
		says("for context we also use Kafka for the clickstream which the data team owns and runs", nil, []string{"Kafka"}, nil),
	})
	if c.LatestPlan == nil || len(c.LatestPlan.Steps) != 3 || !strings.Contains(c.LatestPlan.Steps[2].Text, "dashboard") {
		t.Errorf("a plan said in one breath is not the plan:\n%s", capsule.Render(c))
	}
	_, rej := sections(t, c)
	if strings.Contains(rej, "npm everywhere") {
		t.Errorf("the adverb stayed with the option turned down:\n%s", capsule.Render(c))
	}
}

// Answers in part and options turned down in passing: a judged past
// try, "I was going to say X but", what the assistant suggested judged,
// "ignore what I said about X", a choice after a dash, and rules said as
// "pin every …" or "keep X alive until …".
func TestMarkersTurnedDownInPassing(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("we used Mongoose on the old service and it was a mess — use Drizzle here", []string{"Use Drizzle"}, []string{"Drizzle here"}, []string{"Mongoose (reason: it was a mess)"}),
		says("I was going to suggest Celery but honestly RQ is simpler for this. RQ it is.", []string{"RQ"}, nil, []string{"Celery (reason: RQ is simpler for this)"}),
		says("The assistant suggested Elasticsearch earlier, but that's overkill. Postgres full-text search will do.", nil, nil, []string{"Elasticsearch (reason: overkill)"}),
		says("We're staying on Vercel, ignore what I said about Netlify yesterday.", nil, nil, []string{"Netlify"}),
		says("Pin every base image to an exact digest, no latest tags.", []string{"Pin every base image to an exact digest"}, nil, nil),
		says("ok go ahead — but keep the v1 webhook running until the partners migrate", []string{"Keep the v1 webhook running until the partners migrate"}, nil, nil),
		says("for the emails use a queue instead of a cronjob", nil, nil, []string{"cronjob"}),
	})
	_, rej := sections(t, c)
	if strings.Contains(rej, "earlier") {
		t.Errorf("\"earlier\" stayed with the option turned down:\n%s", capsule.Render(c))
	}
}

// A session's opening brief sets the project up in one paragraph: a stack
// listed after its label, a framing label over what is turned down, where
// it has to run, what stays as it is, and imperatives that name what is
// used. A brief that only describes, or a label over a pointer to a file,
// settles nothing.
func TestMarkersOpeningBrief(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("I want a small tool to book meeting rooms. Stack: SvelteKit with TypeScript, SQLite via Kysely, auth through our Okta. Keep it lean: no ORM, no Redux. It has to run on the office NAS with Docker.",
			[]string{"Use SvelteKit with TypeScript", "Use SQLite via Kysely", "Okta", "It has to run on the office NAS"}, nil, []string{"ORM", "Redux"}),
		says("Keep the export format identical, only the transport changes. Build the importer with Temporal workflows. Expose OpenTelemetry traces.",
			[]string{"Keep the export format identical", "Build the importer with Temporal workflows", "Expose OpenTelemetry traces"}, nil, nil),
		says("Logging: see the attached file, the errors start at line 40.", nil, []string{"line 40"}, nil),
		says("The current setup is Flask + MySQL on a VPS and it mostly works. I just need a CSV export.", nil, []string{"Flask", "MySQL"}, nil),
	})
	active, _ := sections(t, c)
	if strings.Contains(active, "Use not") || strings.Contains(active, "Use see") {
		t.Errorf("a part that is no choice became one:\n%s", capsule.Render(c))
	}
}

// answers is a step of an assistant's message and the user's reply.
func answers(asked, text string, active, notIn, rejected []string) sessionStep {
	st := says(text, active, notIn, rejected)
	st.msgs = append([]dialect.Message{{Role: "assistant", Text: asked}}, st.msgs...)
	return st
}

// Short replies in the middle of a session settle things in few words: a
// choice "for now", an option "only", a check switched on, a number
// capped, a list of amounts, an assistant's suggestion taken ("yes, do
// that") or answered with how ("yes, cursor-based, 500 rows per page
// max"), an option named in answer to a question, half-hearted consent
// ("i guess X is fine for now"). Replies that only agree to an action, ask
// or report settle nothing.
func TestMarkersShortReplies(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("MySQL for now, not CockroachDB — we can revisit after the launch.", []string{"Use MySQL for now"}, nil, []string{"CockroachDB"}),
		answers("Which scheduler should the reports use — Airflow, or plain cron?", "cron. Airflow is overkill for four jobs.",
			[]string{"Use cron"}, []string{"Airflow"}, []string{"Airflow (reason: overkill for four jobs)"}),
		answers("I'd suggest we add a circuit breaker to the payments client, opening after 5 failures.", "yes, do that",
			[]string{"Add a circuit breaker to the payments client"}, nil, nil),
		answers("Should the search endpoint cache its results?", "yes, in Redis, 60 s TTL max",
			[]string{"The search endpoint cache its results: in Redis", "60 s TTL max"}, nil, nil),
		says("eslint strict mode on for every package.", []string{"eslint strict mode on for every package"}, nil, nil),
		says("Cap the upload size at 20 MB.", []string{"Cap the upload size at 20 MB"}, nil, nil),
		says("i guess zod is fine for now", []string{"Use zod for now"}, nil, nil),
		says("No ORM for the analytics queries, plain SQL with sqlx.", []string{"Use plain SQL with sqlx for the analytics queries"}, nil, []string{"ORM"}),
		says("Retries: 3 for the mailer, 5 for the webhook sender.", []string{"Retries: 3 for the mailer", "Retries: 5 for the webhook sender"}, nil, nil),
		says("Releases go through the release workflow only — nobody pushes tags by hand.",
			[]string{"Releases go through the release workflow only", "Nobody pushes tags by hand"}, nil, nil),
		// Traps.
		answers("Should I run the migrations on staging?", "yes, please", nil, []string{"migrations"}, nil),
		says("the build is fine for now", nil, []string{"build"}, nil),
		says("No Kafka, no Pulsar.", nil, []string{"Use no"}, []string{"Kafka", "Pulsar"}),
		says("No Lodash, it's all in the standard library now.", nil, []string{"Use it"}, []string{"Lodash"}),
		answers("Should the exporter retry?", "yes, maybe, not sure how many times", nil, []string{"exporter"}, nil),
	})
	if r := capsule.Render(c); strings.Contains(r, "Use cron (reason") || strings.Contains(r, "Pnpm") {
		t.Errorf("the reason judging the other option went to the choice:\n%s", r)
	}
}

// Late in a session several things are settled, and a change of mind
// names the one it replaces by its option, its kind or its part, often
// after tool output: that decision, and only that one, is replaced or
// dropped. A turn that asks about a change, reports an old one, or keeps
// what stands replaces nothing.
func TestMarkersChangesLate(t *testing.T) {
	for _, tc := range []struct {
		prev     []string
		asked    string // the assistant's message before the turn
		said     string
		gone     []string // decisions no longer active
		active   []string // in the active part after the turn
		rejected []string
		// notListed: not in the rejected part (a drop the replacement
		// already covers is not listed again in the user's words).
		notListed []string
	}{
		{prev: []string{"Use MySQL for the billing database", "Use RabbitMQ for billing events", "Use gin for HTTP routing"},
			said: "Let's move billing events from RabbitMQ to Kafka, the data team needs replay.",
			gone: []string{"RabbitMQ"}, active: []string{"Kafka", "MySQL", "gin"}},
		{prev: []string{"Use Thrift between the gateway and the search service", "Use MySQL for the search index metadata"},
			said: "drop Thrift between those two, plain HTTP+JSON is enough at this volume",
			gone: []string{"Thrift"}, active: []string{"HTTP+JSON", "MySQL"}, notListed: []string{"between those two"}},
		{prev: []string{"Use Nomad for scheduling", "Use Packer for images"},
			said: "We're not going to need Packer at all, plain Dockerfiles with buildx.",
			gone: []string{"Packer"}, active: []string{"buildx", "Nomad"}},
		{prev: []string{"Use Rollbar for error tracking", "Use Prometheus for metrics"},
			said: "Actually, let's not pay for Rollbar. Errors go to Prometheus alerts plus Loki.",
			gone: []string{"Rollbar"}, active: []string{"Loki", "Use Prometheus for metrics"}},
		{prev: []string{"Use Zipkin as the trace backend", "Use OpenTelemetry for tracing"},
			said: "Tempo replaces Zipkin as the backend; the OpenTelemetry SDK stays.",
			gone: []string{"Zipkin"}, active: []string{"Tempo", "OpenTelemetry"}},
		{prev: []string{"Use Algolia for search", "Use Vonage for SMS"},
			said: "ok that settles it, search moves to Meilisearch self-hosted. Keep Vonage.",
			gone: []string{"Algolia"}, active: []string{"Meilisearch", "Vonage"}},
		{prev: []string{"Use opaque tokens in headers for the admin auth", "Use Redis for the job queue"},
			said: "Revert this morning's change — back to cookie sessions. Opaque token revocation was a mess.",
			gone: []string{"opaque tokens"}, active: []string{"cookie sessions", "Redis"}},
		{prev: []string{"Use mockery for mocks"},
			said: "we can get rid of mockery, hand-written fakes are fine and it's one less tool",
			gone: []string{"mockery"}, rejected: []string{"mockery"}},
		{prev: []string{"Use dbmate for migrations"},
			said: "Migrations: atlas instead of dbmate. It diffs the schema for us.",
			gone: []string{"dbmate"}, active: []string{"atlas", "It diffs the schema for us"}},
		{prev: []string{"Use Pulumi for the infrastructure"},
			said:   "We're keeping Pulumi, ignore what I said earlier about Crossplane.",
			active: []string{"Pulumi"}, rejected: []string{"Crossplane"}},
		{prev: []string{"Use Memcached for the session cache"},
			asked:  "Memcached is at 90% memory. I could move sessions to Postgres instead. Want me to?",
			said:   "no, keep Memcached. Just raise the memory limit to 4 GB.",
			active: []string{"Memcached", "Raise the memory limit to 4 GB"}},
		// Traps: a question, an old change reported, a change put off.
		{prev: []string{"Use NATS for events", "Use Postgres for orders"},
			said: "Would Kafka be better than NATS for the events? Just curious about the tradeoffs.", active: []string{"NATS", "Postgres"}},
		{prev: []string{"Use yarn for the web app"},
			said: "we switched the web app to yarn last year, before you joined", active: []string{"yarn"}},
		{prev: []string{"Use REST for the mobile API"},
			said: "I'm tempted to try gRPC for the mobile API, but let's stay on REST until v2 ships.", active: []string{"REST"}},
	} {
		var ops []capsule.Op
		for _, d := range tc.prev {
			ops = append(ops, capsule.Op{Op: capsule.OpAddDecision, Statement: d, Turn: 1})
		}
		prev, err := capsule.Apply(capsule.New("s", "a"), ops, capsule.Delta{FromTurn: 0, ToTurn: 1, UserTurns: []int{1}}, "seed")
		if err != nil {
			t.Fatal(err)
		}
		msgs := []dialect.Message{{Role: "user", Text: "Let's settle the stack."}, {Role: "assistant", Text: cmp.Or(tc.asked, "Done; the tests pass.")}, {Role: "user", Text: tc.said}}
		c := markersOf(t, prev, Prepare(prev, msgs, 2, 0), "tx-late")
		active, rejected := sections(t, c)
		for _, w := range tc.gone {
			for _, l := range strings.Split(active, "\n") {
				l, _, _ = strings.Cut(l, "instead of ")
				l, _, _ = strings.Cut(l, "(why:")
				if strings.Contains(l, w) {
					t.Errorf("%q: %q is still active:\n%s", tc.said, w, capsule.Render(c))
				}
			}
		}
		for _, w := range tc.active {
			if !strings.Contains(active, w) {
				t.Errorf("%q: %q is not active:\n%s", tc.said, w, capsule.Render(c))
			}
		}
		for _, w := range tc.rejected {
			if !strings.Contains(rejected, w) {
				t.Errorf("%q: %q is not among the rejected:\n%s", tc.said, w, capsule.Render(c))
			}
		}
		for _, w := range tc.notListed {
			if strings.Contains(rejected, w) {
				t.Errorf("%q: %q is listed among the rejected:\n%s", tc.said, w, capsule.Render(c))
			}
		}
	}
}

// A plan the assistant proposes, numbered on one line as often as on
// several, is accepted with the changes the reply makes to it: steps
// reordered, added after the step named, or held back; later turns mark
// a step done or skip it by its words. A reply that holds the plan back
// accepts nothing, and "move on to the renderer" chooses nothing.
func TestMarkersPlanAcceptedWithChanges(t *testing.T) {
	plan := "Here's the plan: 1. add the invoices table 2. write the PDF renderer 3. wire up the reminder emails 4. add the admin UI"
	steps := func(c *capsule.Capsule) string {
		if c.LatestPlan == nil {
			return ""
		}
		var out []string
		for _, st := range c.LatestPlan.Steps {
			out = append(out, st.Status+" "+st.Text)
		}
		return strings.Join(out, "; ")
	}
	for _, tc := range []struct {
		turns []string // assistant, user, assistant, user, …
		want  string
	}{
		{[]string{plan, "sounds good, but do 3 before 2"},
			"pending add the invoices table; pending wire up the reminder emails; pending write the PDF renderer; pending add the admin UI"},
		{[]string{"Plan: 1. migrate the schema 2. backfill 3. switch reads 4. drop the old table", "yes, and add a step to verify row counts after the backfill"},
			"pending migrate the schema; pending backfill; pending verify row counts; pending switch reads; pending drop the old table"},
		{[]string{"Plan: 1. migrate the schema 2. backfill 3. switch reads 4. drop the old table", "looks good but don't drop the old table yet, keep it for a week"},
			"pending migrate the schema; pending backfill; pending switch reads; cancelled drop the old table"},
		{[]string{plan, "ok go", "Done with the table.", "step 1 is done, move on to the renderer", "Starting on the renderer.", "skip the admin UI for now"},
			"completed add the invoices table; pending write the PDF renderer; pending wire up the reminder emails; cancelled add the admin UI"},
		{[]string{plan, "sounds good, but check with Ana before you start"}, ""},
		{[]string{"I finished the migration.", "the report step is done"}, ""},
	} {
		var msgs []dialect.Message
		for i, s := range tc.turns {
			role := "assistant"
			if i%2 == 1 {
				role = "user"
			}
			msgs = append(msgs, dialect.Message{Role: role, Text: s})
		}
		c := markers(t, capsule.New("s", "a"), 0, msgs...)
		if got := steps(c); got != tc.want {
			t.Errorf("%q:\n got %s\nwant %s", tc.turns, got, tc.want)
		}
		if r := capsule.Render(c); strings.Contains(r, "Use the renderer") || strings.Contains(r, "R1: the admin UI") {
			t.Errorf("%q: a step read as a choice:\n%s", tc.turns, r)
		}
	}
}

// What an agent's input box adds is not the user's words ("[Image #1]",
// "[Pasted text #2 +40 lines]" in place of a paste), and a choice typed
// fast leaves out the comma before what it is not.
func TestMarkersTypedFast(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("[Image #1] use CSS grid not flexbox", []string{"CSS grid"}, []string{"flexbox"}, []string{"flexbox"}),
		says("[Pasted text #2 +40 lines] go with zerolog not logrus for the service", []string{"zerolog"}, nil, []string{"logrus"}),
		// Traps: "not" inside a clause.
		says("use the cache if it does not fit in memory", nil, []string{"cache"}, nil),
		says("[Image #3] what do you think of this layout?", nil, []string{"layout"}, nil),
	})
	if r := capsule.Render(c); strings.Contains(r, "Image #") || strings.Contains(r, "Pasted text") {
		t.Errorf("a placeholder was kept:\n%s", r)
	}
}

// A session outside web backends (a forecasting model and its batch job)
// settles things in forms of its own: the option for a part said after
// it, a value set and the one it is not, what was tried and not worth it,
// where things belong, which rows the data leaves out, a plan in order
// after its label, a rule kept with its purpose.
func TestMarkersAnalysisSession(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("For the forecaster itself, Prophet.", []string{"Use Prophet for the forecaster"}, nil, nil),
		says("For auth: API keys only.", []string{"API keys only for auth"}, nil, nil),
		says("the cutoff should be 0.2, not 0.5 — a missed outage costs more than a false page",
			[]string{"The cutoff should be 0.2", "missed outage costs more"}, nil, []string{"0.5"}),
		says("Let's stay with Prophet, the LSTM experiment wasn't worth the complexity.", []string{"Prophet"}, nil, []string{"LSTM (reason: not worth the complexity)"}),
		says("Dashboards are for monitoring only; anything that pages someone goes into the alert rules with tests.",
			[]string{"Dashboards are for monitoring only", "Anything that pages someone goes into the alert rules with tests"}, nil, nil),
		says("Drop sensors with fewer than 10 readings a day from training.", []string{"Drop sensors with fewer than 10 readings a day from training"}, nil, nil),
		says("No Neptune, we can't send data outside.", nil, nil, []string{"Neptune (reason: we can't send data outside)"}),
		says("ok the loss is too high, let's drop the day_of_week feature, I think it leaks the target.", nil, nil, []string{"day_of_week feature (reason: I think it leaks the target)"}),
		says("Use a fixed random seed everywhere so the runs are reproducible.", []string{"Use a fixed random seed everywhere so the runs are reproducible"}, nil, nil),
		// Traps.
		says("Thanks for the help, Go for it.", nil, []string{"help"}, nil),
		says("For what it's worth, Prophet was fine last year.", nil, []string{"what"}, nil),
	})
	if c.LatestPlan != nil {
		t.Errorf("no plan was said yet:\n%s", capsule.Render(c))
	}
	c = playSession(t, []sessionStep{
		says("Plan for this week: first the baseline model, then the residual plots, then the scoring job, and the dashboard last.", nil, nil, nil),
	})
	if c.LatestPlan == nil || len(c.LatestPlan.Steps) != 4 || c.LatestPlan.Steps[3].Text != "the dashboard" {
		t.Errorf("the plan in order after its label:\n%s", capsule.Render(c))
	}
}

// Most turns of a working afternoon settle nothing though they name
// options and sound firm; the few that do are read, and "X stays, Y is
// off the table" keeps X rather than turning it down with Y.
func TestMarkersNoisyAfternoon(t *testing.T) {
	var steps []sessionStep
	for _, s := range []string{
		"Deploy the branch to staging now and ping me when it's green.",
		"Celery is eating all the memory on the worker again, this is killing me.",
		"FYI the search team moved their API to Rust last month.",
		"If we ever need a graph database we could look at Neo4j, but not now.",
		"Memcached is faster than Redis for this kind of lookup, obviously.",
		"Can you explain why the previous dev used Passport instead of rolling their own auth?",
		"Who decided to use Cassandra for the event log? It makes no sense to me.",
		"Their dashboard uses MobX with decorators, which is a nightmare, but that's their problem.",
		"Try bumping django to 5.1 and see if the tests still pass.",
		"Someone on the channel suggested we switch to Remix. Thoughts?",
		"Revert your last commit, it broke checkout.",
	} {
		steps = append(steps, says(s, nil, []string{"Passport", "Neo4j", "Remix", "Rust", "Memcached", "Cassandra", "MobX", "django"}, nil))
	}
	steps = append(steps,
		says("ok final answer on the cache: Redis stays, Memcached is off the table.", []string{"Keep Redis"}, []string{"Memcached"}, []string{"Memcached"}))
	c := playSession(t, steps)
	if _, rejected := sections(t, c); strings.Contains(rejected, "Redis") {
		t.Errorf("the option kept was turned down:\n%s", capsule.Render(c))
	}
}

// Typed fast into an agent's input box: lower case, no apostrophes, tool
// abbreviations ("pg", "tf", "gh actions"), "pls", "nvm", arrows and
// equals signs; the reactions around them settle nothing.
func TestMarkersTypedFastSession(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("sqlite not pg pls", []string{"Use sqlite"}, []string{"pg"}, []string{"pg"}),
		says("lol what", nil, nil, nil),
		says("nomad only", []string{"Use nomad only"}, nil, nil),
		says("lets do tf for infra", []string{"tf for infra"}, nil, nil),
		says("dont add underscore, we have native stuff for all of it", nil, nil, []string{"underscore (reason: we have native stuff for all of it)"}),
		says("ci = gitlab-ci. travis is gone", []string{"Use gitlab-ci for ci"}, nil, []string{"travis"}),
		says("k thx", nil, nil, nil),
		says("nvm about koa, stay on fastify", []string{"fastify"}, []string{"koa"}, []string{"koa"}),
		says("npm -> pnpm, npm installs are way too slow", []string{"Use pnpm instead of npm"}, nil, nil),
		says("4 spaces not tabs", []string{"Use 4 spaces"}, nil, []string{"tabs"}),
		says("vue is fine i guess", []string{"Use vue"}, nil, nil),
		says("no inline sql unless its a migration", []string{"No inline sql unless its a migration"}, nil, nil),
		says("can u check the logs?", nil, nil, nil),
		says("Cap the u.id lookups at 5.", []string{"Cap the u.id lookups at 5"}, nil, nil), // the user's words kept
		says("ok ship it", nil, nil, nil),
	})
	if _, rejected := sections(t, c); strings.Contains(rejected, "fastify") || strings.Contains(rejected, "inline sql") {
		t.Errorf("an option kept was turned down:\n%s", capsule.Render(c))
	}
}

// The assistant offers an option and the user turns it down: a short
// "no" with a reason, "…, no." after the reason, a judgement of it while
// choosing another, "hard no on X", a dislike of one thing about it; a
// later "I said no to X, but … changed my mind, let's use it" takes it
// back. A "no" that keeps what is there, or puts the offer off, bans
// nothing.
func TestMarkersProposalsTurnedDown(t *testing.T) {
	c := playSession(t, []sessionStep{
		answers("I'd suggest adding Elasticsearch next to Postgres for the search page.", "nah, too much ops for one search box",
			nil, nil, []string{"Elasticsearch (reason: too much ops for one search box)"}),
		answers("Want me to switch the worker to Temporal?", "I've been burned by Temporal before, no.",
			nil, nil, []string{"Temporal (reason: I've been burned by Temporal before)"}),
		answers("I could run the thumbnailer as a Lambda function.", "hmm, lambdas have a 15 minute limit and big videos take an hour. Fargate task it is.",
			[]string{"Fargate task"}, nil, []string{"Lambda"}),
		answers("I recommend Datadog for the metrics.", "I don't like Datadog's pricing. Let's self-host Prometheus instead.",
			[]string{"Self-host Prometheus"}, nil, []string{"Datadog (reason: pricing)"}),
		answers("I suggest we draw the floor plan in WebGL.", "hard no on WebGL, accessibility matters here", nil, nil, []string{"WebGL"}),
		answers("I suggest we put the seat map in a canvas instead of SVG.", "hard no on canvas, accessibility matters here", nil, nil, []string{"canvas"}),
		answers("I'm going to add lefthook with a pre-commit hook running every test.", "lefthook yes, but only lint in the hook",
			[]string{"Use lefthook", "Only lint in the hook"}, nil, nil),
		says("earlier I said no to Elasticsearch, but after the search demo I changed my mind, let's use it", []string{"Elasticsearch"}, nil, nil),
		// Traps.
		answers("Prisma is slow here. I could switch us to Kysely.", "no, we keep Prisma, the slowness is fine", nil, []string{"Kysely"}, nil),
		answers("Should I add retries to the sender?", "yes, and also fix the typo in the README", nil, []string{"retries", "typo"}, nil),
		answers("Want me to open the PR now?", "definitely yes, ship it", nil, []string{"definitely"}, nil),
		says("nobody runs the tests anymore lol", nil, []string{"Nobody"}, nil),
		answers("Should I add Storybook for the design system?", "not now, maybe after the redesign", nil, []string{"Storybook"}, nil),
	})
	if _, rejected := sections(t, c); strings.Contains(rejected, "Kysely") || strings.Contains(rejected, "Storybook") || strings.Contains(rejected, "Postgres") || strings.Contains(rejected, "SVG") {
		t.Errorf("an option was turned down that the user did not turn down:\n%s", capsule.Render(c))
	}
}

// "the error" in the user's own talk about a result is not someone else's
// words; what an error message says still is.
func TestMarkersErrorTalk(t *testing.T) {
	playSession(t, []sessionStep{
		says("ok the error is too high, let's drop the tenure_days feature.", nil, nil, []string{"tenure_days"}),
		says("The error says Redis is unreachable and suggests using Memcached.", nil, []string{"Memcached", "Redis"}, nil),
		says("the error message mentions GORM, not sqlc", nil, []string{"GORM", "sqlc"}, nil),
	})
}

// A "no" answers what the assistant's message ends with, not an offer
// made before it.
func TestMarkersNoAnswersTheLastQuestion(t *testing.T) {
	c := playSession(t, []sessionStep{
		answers("I could add Redis caching to the endpoint. Should I also update the README?", "no", nil, nil, nil),
		answers("Done. Want me to switch the logger to zerolog?", "no, not worth it", nil, nil, []string{"zerolog"}),
	})
	if _, rejected := sections(t, c); strings.Contains(rejected, "Redis") {
		t.Errorf("the offer before the last question was turned down:\n%s", capsule.Render(c))
	}
}

// Two rules said as one sentence are two rules: where things go and where
// they never go, and one "always" for each place.
func TestMarkersTwoRulesInOne(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("Backups go to the offsite bucket, never to the app server.", []string{"Backups go to the offsite bucket", "Backups: never to the app server"}, nil, nil),
		says("Amounts are always cents in the database and decimal strings in JSON.",
			[]string{"Amounts are always cents in the database", "Amounts are always decimal strings in JSON"}, nil, nil),
		// A report, not a rule.
		says("maybe logs go to stdout, never to files? not sure", nil, []string{"logs"}, nil),
	})
	if n := len(c.Constraints); n != 4 {
		t.Errorf("%d rules, want 4:\n%s", n, capsule.Render(c))
	}
}

// "never" before an option's name rules the option out for good, beside
// the choice it follows; before a practice or a verb it stays a rule.
func TestMarkersNeverAnOption(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("Use Redis for the job queue — never Memcached.", []string{"Redis"}, []string{"Memcached"}, []string{"Memcached"}),
		says("Let's deploy with Kamal, never Capistrano again, it bit us before.", []string{"Kamal"}, []string{"Capistrano"}, []string{"Capistrano (reason: it bit us before)"}),
		says("never Mongo again, the migration was hell", nil, []string{"Mongo"}, []string{"Mongo (reason: the migration was hell)"}),
		// Traps: practices and verbs stay rules, a report settles nothing.
		says("Money is always int64 minor units, never floats.", []string{"never floats"}, nil, nil),
		says("Never push to main.", []string{"Never push to main"}, nil, nil),
		says("We never Dockerized the worker, which is why it fails.", nil, []string{"Dockerized"}, []string{}),
	})
	if _, rejected := sections(t, c); strings.Contains(rejected, "floats") || strings.Contains(rejected, "push") || strings.Contains(rejected, "Dockerized") {
		t.Errorf("a practice or a report was turned down:\n%s", capsule.Render(c))
	}
}

// A mobile app's session: the platforms' own names, a part qualified by
// its platform, a choice followed by a rule after its comma, an option
// weighed beside the choice and passed over, "X is enough", a purpose
// after ", so", a replacement said as "we'll do it in Go".
func TestMarkersMobilePlatforms(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("For the Android app we go with Jetpack Compose, XML layouts only where Compose can't do it.",
			[]string{"Jetpack Compose", "XML layouts only where Compose can't do it"}, nil, nil),
		says("Caching on iOS: Kingfisher.", []string{"Use Kingfisher for caching on iOS"}, nil, nil),
		says("Koin for dependency injection. Hilt is nicer but the SDK team already ships Koin.",
			[]string{"Koin"}, []string{"Hilt"}, []string{"Hilt (reason: the SDK team already ships Koin)"}),
		answers("Should I add Moya on top of the networking layer?", "URLSession is enough, skip Moya",
			[]string{"Use URLSession"}, []string{"Moya"}, []string{"Moya"}),
		says("SwiftData is fine for the drafts.", []string{"Use SwiftData for the drafts"}, nil, nil),
		says("Builds ship through fastlane, nobody uploads from Xcode by hand.",
			[]string{"Builds ship through fastlane", "Nobody uploads from Xcode by hand"}, nil, nil),
		says("Use Ktor for the backend API.", []string{"Ktor"}, nil, nil),
		says("scrap Ktor for the backend, we'll do it in Go with chi — the team knows Go.",
			[]string{"Use Go with chi (why: the team knows Go)"}, []string{"Ktor"}, []string{"Ktor"}),
		says("Let's keep drafts in SwiftData for now.", nil, nil, nil),
		says("Actually let's move the drafts to GRDB, so the share extension can read them.",
			[]string{"GRDB for the drafts (why: the share extension can read them)"}, []string{"SwiftData"}, nil),
		// Traps.
		says("We'll use Docker Compose locally, Kubernetes only in production.", []string{"Docker Compose"}, nil, nil),
		says("The build is fine, so let's ship it.", nil, []string{"build"}, nil),
		says("It crashed again, nobody knows why.", nil, []string{"crashed", "nobody knows"}, nil),
	})
	if r := capsule.Render(c); strings.Contains(r, "URLSession (reason") || strings.Contains(r, "Use it in") || strings.Contains(r, "Only in production") {
		t.Errorf("a choice's own words became its reason, or a part became a rule:\n%s", r)
	}
	if !slices.ContainsFunc(c.Constraints, func(k capsule.Constraint) bool { return strings.HasPrefix(k.Text, "XML layouts only where") }) {
		t.Errorf("the rule after the choice's comma is not a rule of its own:\n%s", capsule.Render(c))
	}
}

// A game's session: engine and middleware names, "we're making this in
// X", an option judged badly after the choice (turned down) or before it
// (the choice's reason), the other side of an "or" question judged in
// the answer, budgets and targets as rules, a history told after a dash,
// "sure, X works", a switch for a day that may come.
func TestMarkersGameSession(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("We're making this in Bevy, not Unreal — the C++ build times last year were brutal.",
			[]string{"Bevy"}, []string{"Unreal"}, []string{"Unreal"}),
		says("Physics goes through Rapier. PhysX is overkill for a 2D game.",
			[]string{"Rapier"}, []string{"PhysX"}, []string{"PhysX (reason: overkill for a 2D game)"}),
		says("Wwise is too heavy for us; we'll use FMOD.", []string{"FMOD (why: Wwise is too heavy for us)"}, nil, nil),
		answers("Should the replays store inputs or snapshots?", "inputs. snapshots are way too big for 20 minute matches",
			[]string{"nputs"}, []string{"snapshots"}, []string{"snapshots (reason:"}),
		says("The memory budget is 2 GB on the handheld, no exceptions.", []string{"The memory budget is 2 GB on the handheld"}, nil, nil),
		says("Target 30 fps on the handheld.", []string{"Target 30 fps on the handheld"}, nil, nil),
		answers("I could use Colyseus for the match rooms.", "sure, Colyseus works", []string{"Use Colyseus"}, nil, nil),
		says("Save files are JSON for now, we'll switch to a binary format if they get big.",
			[]string{"Use JSON for save files"}, []string{"binary format"}, nil),
		// Traps.
		says("Use LightGBM for the model. XGBoost was fine but LightGBM trains faster.", []string{"LightGBM"}, []string{"XGBoost"}, nil),
		says("The profiler says the frame takes 21 ms with 300 sprites.", nil, []string{"21 ms"}, nil),
		says("ok, the build works now", nil, []string{"build"}, nil),
	})
	if _, rejected := sections(t, c); strings.Contains(rejected, "Wwise") || strings.Contains(rejected, "XGBoost") || strings.Contains(rejected, "binary") {
		t.Errorf("a reason said first, praise or a someday switch turned something down:\n%s", capsule.Render(c))
	}
}

// A security review's words: "hashed with X, never Y for …", a second
// choice "as the fallback", properties data must have, a version floor,
// a rate limit, an activity done with a tool, an offer turned down by a
// judgement of it beside what stays.
func TestMarkersSecurityReview(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("Tokens are signed with EdDSA, never HS256 for anything public.", []string{"Tokens are signed with EdDSA"}, []string{"HS256"}, []string{"HS256"}),
		says("We'll support passkeys, with YubiKey as the fallback.", []string{"passkeys", "Use YubiKey as the fallback"}, nil, nil),
		says("Backups are encrypted at rest with keys in KMS.", []string{"Backups are encrypted at rest"}, nil, nil),
		says("The event store is append-only.", []string{"The event store is append-only"}, nil, nil),
		says("Postgres 15 minimum in every environment.", []string{"Postgres 15 minimum"}, nil, nil),
		says("Rate-limit the reset endpoint to 3 attempts per hour per account.", []string{"Rate-limit the reset endpoint to 3 attempts per hour per account"}, nil, nil),
		says("Secret scanning with gitleaks in CI.", []string{"Use gitleaks for secret scanning"}, nil, nil),
		answers("I could use Cerbos for the policy checks instead.", "no, Cerbos's policies are hard to review. stay with OpenFGA",
			[]string{"OpenFGA"}, []string{"Cerbos"}, []string{"Cerbos"}),
		// Traps.
		answers("I could switch us to Drizzle.", "no, we keep Prisma, the slowness is fine", nil, []string{"Drizzle"}, nil),
		says("struggling with Redis again today", nil, []string{"Redis"}, nil),
		says("Please run the migrations with goose on my machine.", nil, []string{"goose"}, nil),
	})
	if _, rejected := sections(t, c); strings.Contains(rejected, "Drizzle") || strings.Contains(rejected, "Prisma") {
		t.Errorf("a reply that keeps what is there turned something down:\n%s", capsule.Render(c))
	}
}

// A design system's words: a styling library as the part's option, a part
// done through an option with no verb, "respect X" and "support the last
// N versions" as rules, "plain X" after an option turned down, a size or
// a duration with "max".
func TestMarkersDesignSystem(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("Styling is Linaria, not Emotion — we want zero runtime CSS.", []string{"Linaria"}, []string{"Emotion"}, []string{"Emotion"}),
		says("Theming through CSS variables on :root, no ThemeProvider.", []string{"Use CSS variables for theming", "Linaria"}, nil, []string{"ThemeProvider"}),
		says("Honor prefers-contrast everywhere, no exceptions.", []string{"Honor prefers-contrast everywhere"}, []string{"Use Honor"}, nil),
		says("no GSAP, it's 70 KB for two fades. plain CSS transitions", []string{"Use plain CSS transitions"}, nil, []string{"GSAP"}),
		says("Icons are Heroicons.", []string{"Use Heroicons for icons"}, nil, nil),
		says("200ms max for any transition.", []string{"200ms max for any transition"}, nil, nil),
		says("We support the last two major versions of every browser.", []string{"We support the last two major versions of every browser"}, []string{"Use the last"}, nil),
		// Traps.
		says("Tokens go through the vault agent, never into env files.", []string{"Tokens go through the vault agent, never into env files"}, nil, nil),
		says("Payments through PayPal are broken again.", nil, []string{"PayPal"}, nil),
		says("just checking, is the build green?", nil, []string{"checking"}, nil),
	})
	if len(c.Decisions) != 4 {
		t.Errorf("%d decisions, want 4 (Linaria, CSS variables, CSS transitions, Heroicons):\n%s", len(c.Decisions), capsule.Render(c))
	}
}

// Two choices of one kind for two parts both stand; one replaces the
// other only when it is for the same part, or for a part as general as
// "the cache" or none. Each pair is a session of its own.
func TestMarkersTwoPartsKeepBoth(t *testing.T) {
	for _, tc := range []struct {
		first, then string
		replaced    bool
	}{
		{"Use Postgres for the database.", "Use SQLite for the test fixtures.", false},
		{"Use Redis for the cache.", "Use Memcached for the session store on the legacy app.", false},
		{"Use Jest for unit tests.", "Use Playwright for the end-to-end tests.", false},
		{"Use Postgres for the main database.", "Use DuckDB for the analytics database.", false},
		{"Use Jest for unit tests.", "Use Vitest for unit tests.", true},
		{"Use RabbitMQ for the queue.", "Use Postgres for the queue.", true},
		{"Use Redis for the cache.", "Use Memcached for caching going forward.", true},
		{"Use Postgres for the database.", "Use MySQL for storage.", true},
	} {
		c := playSession(t, []sessionStep{says(tc.first, nil, nil, nil), says(tc.then, nil, nil, nil)})
		active, _ := sections(t, c)
		first := strings.TrimSuffix(tc.first, ".")
		if kept := strings.Contains(active, first); kept == tc.replaced {
			t.Errorf("%q then %q: the first still active = %v, want %v:\n%s", tc.first, tc.then, kept, !tc.replaced, capsule.Render(c))
		}
	}
}

// A rule said again with another amount replaces the rule it updates,
// across turns and within one; "make it N" and "bump it to N" say a new
// amount for the rule they update and nothing on their own; the same
// kind of rule for another thing stands beside it.
func TestMarkersRuleNewAmount(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("Max 3 retries for the webhook sender.", []string{"Max 3 retries for the webhook sender"}, nil, nil),
		says("Cap the upload size at 20 MB.", []string{"Cap the upload size at 20 MB"}, nil, nil),
		says("Make it 5 retries for the webhook sender.", []string{"Max 5 retries for the webhook sender"}, []string{"Max 3 retries"}, nil),
		says("The session timeout is 30 minutes.", nil, nil, nil),
		says("bump it to 60 minutes", []string{"The session timeout is 60 minutes"}, []string{"30 minutes"}, nil),
		says("Cap the avatar size at 2 MB. Actually, cap the avatar size at 1 MB.", []string{"Cap the avatar size at 1 MB", "Cap the upload size at 20 MB"}, []string{"2 MB"}, nil),
		// Traps: nothing to update, another thing.
		says("make it 4 columns", nil, []string{"4 columns"}, nil),
		says("Max 2 retries for the mailer.", []string{"Max 2 retries for the mailer", "Max 5 retries for the webhook sender"}, nil, nil),
	})
	active := 0
	for _, k := range c.Constraints {
		if k.Status == capsule.StatusActive {
			active++
		}
	}
	if active != 5 {
		t.Errorf("%d active rules, want 5 (webhook retries, upload size, session timeout, avatar size, mailer retries):\n%s", active, capsule.Render(c))
	}
}

// A rule of where or how data is kept, said again otherwise, replaces
// the rule it changes; a change that says the other option stays keeps
// that decision.
func TestMarkersRuleChanged(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("All timestamps are stored in UTC.", []string{"All timestamps are stored in UTC"}, nil, nil),
		says("Invoices are stored as PDF.", []string{"Invoices are stored as PDF"}, nil, nil),
		says("Actually, store timestamps in the user's local time.", []string{"Store timestamps in the user's local time", "Invoices are stored as PDF"}, []string{"UTC"}, nil),
		says("Invoices are stored in the archive bucket.", []string{"Invoices are stored in the archive bucket", "Invoices are stored as PDF"}, nil, nil),
		says("Use Postgres for the database.", []string{"Postgres"}, nil, nil),
		says("Actually, let's use Mongo after all for the event log, Postgres stays for everything else.", []string{"Use Postgres for the database", "Mongo"}, nil, nil),
		// Traps: a one-off, a decision said with "keep".
		says("Store the fixture in testdata for now.", nil, []string{"fixture"}, nil),
		says("Keep PostgreSQL as the store.", []string{"PostgreSQL"}, nil, nil),
	})
	if _, rejected := sections(t, c); !strings.Contains(rejected, "All timestamps are stored in UTC") {
		t.Errorf("the rule changed is not listed as replaced:\n%s", capsule.Render(c))
	}
}

// An option turned down and later taken after all leaves the rejected
// list and stands as a decision: the capsule must not tell the agent
// never to propose what the user now wants.
func TestMarkersTakenAfterAll(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("No Redis, we don't need a cache yet.", nil, nil, []string{"Redis"}),
		says("We won't use Docker.", nil, nil, []string{"Docker"}),
		says("Let's add Redis after all for the rate limiter.", []string{"Redis after all for the rate limiter"}, nil, nil),
		says("ok Docker is fine actually", []string{"Use Docker"}, nil, nil),
		// Traps: tasks, and "fine" of what was never turned down.
		says("Let's add a test for the parser.", nil, []string{"test"}, nil),
		says("the build is fine actually", nil, []string{"build"}, nil),
	})
	if _, rejected := sections(t, c); strings.Contains(rejected, "Redis") || strings.Contains(rejected, "Docker") {
		t.Errorf("an option taken after all is still listed as turned down:\n%s", capsule.Render(c))
	}
}

// "back to X" names the option gone back to, however the vocabulary
// knows it: the newest choice is replaced, not left active.
func TestMarkersBackToNamed(t *testing.T) {
	playSession(t, []sessionStep{
		says("We'll deploy on Fly.io.", []string{"Fly.io"}, nil, nil),
		says("Fly had an outage again. Move us to Northflank.", []string{"Northflank"}, []string{"Fly.io"}, nil),
		says("Northflank's build minutes are too expensive, back to Fly.", []string{"Use Fly"}, []string{"Northflank"}, nil),
		says("Use Koyeb for the preview apps.", []string{"Koyeb"}, nil, nil),
		says("back to Fly.", []string{"Use Fly", "Koyeb for the preview apps"}, nil, nil),
		// Traps.
		says("back to the drawing board on the parser", nil, []string{"drawing board"}, nil),
	})
}

// An option dropped for what does its job instead: that option is the
// choice that replaces it.
func TestMarkersDroppedForWhatDoesTheJob(t *testing.T) {
	playSession(t, []sessionStep{
		says("Use Stripe for payments.", []string{"Stripe"}, nil, nil),
		says("We're not doing Stripe anymore, Paddle handles the VAT for us.", []string{"Use Paddle"}, []string{"Stripe"}, nil),
		says("Use Sentry for tracing.", []string{"Sentry"}, nil, nil),
		says("We don't use Sentry anymore, Honeycomb covers tracing for us.", []string{"Use Honeycomb"}, []string{"Sentry"}, nil),
		// Trap: a person does the job, no option.
		says("We're not doing the migration anymore, the DBA handles it for us.", nil, []string{"DBA"}, nil),
	})
}

// A reply that picks an option by its place or its label in the
// assistant's question: "the first one", "the latter", a bare "B".
func TestMarkersPicksByOrder(t *testing.T) {
	playSession(t, []sessionStep{
		answers("Should we use Postgres or MySQL for this?", "the first one", []string{"Use Postgres"}, []string{"MySQL"}, nil),
		answers("Should the worker use Celery or Dramatiq?", "the latter, our ops team knows it", []string{"Use Dramatiq (why: our ops team knows it)"}, []string{"Celery"}, nil),
		answers("I can go with option A (Redis streams) or option B (NATS JetStream). Which do you prefer?", "B", []string{"NATS JetStream"}, []string{"Redis streams"}, nil),
		// Traps: the option changed in the reply, a "last" that picks
		// nothing, a letter to a question with no options.
		answers("Option A: a monorepo with Turborepo. Option B: separate repos. Which one?", "A, but without Turborepo", nil, []string{"monorepo with Turborepo"}, nil),
		answers("Should I rerun the flaky test or skip it?", "the last time we tried this it broke", nil, []string{"skip it"}, nil),
		answers("Did the deploy finish?", "a", nil, []string{"deploy"}, nil),
	})
}

// A reply that accepts a plan is read as a few changes to it: one made
// of thousands of comma-separated parts is not read part by part.
func TestPlanAcceptedReadsFewChanges(t *testing.T) {
	reply := "sounds good, but " + strings.Repeat("use Redis for the cache, ", 2000) + "ok"
	items := planAccepted(reply, "Here's the plan: 1. add the table 2. write the renderer")
	if len(items) == 0 || items[0].kind != "plan" {
		t.Fatalf("the plan was not accepted: %v", items)
	}
	if n := len(items) - 1; n > maxPlanChanges {
		t.Errorf("%d items read from the reply's parts, want at most %d", n, maxPlanChanges)
	}
}

// A sensor fleet's firmware and backend, a turn at a time: a language
// and what runs on it chosen in one breath and replaced one at a time,
// an option passed over after a comma ("… was a nice idea but …"), a part
// done in Go with a clause after it, a name after a qualifier, retention
// and reporting rules with their numbers, two rules in one sentence, an
// option nobody wants, and a store that stays while another is added for
// one part, named shorter than it was chosen ("timescale").
func TestMarkersSensorFleet(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("The device firmware is Rust with RTIC, not the vendor SDK.", []string{"Use Rust for the device firmware", "Use RTIC for the device firmware"}, nil, []string{"the vendor SDK"}),
		says("The nodes talk CoAP to the gateway, MQTT was a nice idea but the radios can't afford TCP.", []string{"CoAP"}, nil, []string{"MQTT"}),
		says("Metrics pipeline in Go, it reads from NATS.", []string{"Use Go for metrics pipeline"}, nil, nil),
		says("Provisioning uses factory-flashed X.509 certificates.", []string{"Provisioning uses factory-flashed X.509 certificates"}, nil, nil),
		says("Telemetry lands in TimescaleDB.", []string{"TimescaleDB"}, nil, nil),
		says("Readings are purged after 180 days, hourly rollups are kept for 2 years.", []string{"Readings are purged after 180 days", "Hourly rollups are kept for 2 years"}, nil, nil),
		says("Sensors poll every 30 seconds.", []string{"Sensors poll every 30 seconds"}, nil, nil),
		says("Config updates must be signed, and the agent rejects anything unsigned.", []string{"Config updates must be signed", "The agent rejects anything unsigned"}, nil, nil),
		says("RTIC's scheduling model fights our drivers. go to Embassy instead", []string{"Use Embassy", "Use Rust for the device firmware"}, []string{"RTIC"}, nil),
		says("actually for the alerts let's use VictoriaMetrics, timescale stays for everything else.", []string{"VictoriaMetrics", "TimescaleDB"}, nil, nil),
		says("Alerting through Grafana, nobody wants another Opsgenie integration.", []string{"Use Grafana for alerting"}, nil, []string{"Opsgenie"}),
		// Traps.
		says("the gateway dropped off again at 03:10, probably the power strip", nil, []string{"03:10"}, nil),
		says("The broker reports over 9000 connections today.", nil, []string{"9000"}, []string{}),
		says("The worker uses about 2 GB of RAM at peak.", nil, []string{"2 GB"}, nil),
		says("The pizza was a nice idea but it arrived cold.", nil, nil, nil),
	})
	if _, rejected := sections(t, c); strings.Contains(rejected, "9000") || strings.Contains(rejected, "pizza") {
		t.Errorf("a trap was read as an option turned down:\n%s", capsule.Render(c))
	}
}

// A headless shop, a turn at a time: commerce engines, content systems,
// image CDNs and shipping services by name, a labelled choice hosted "on
// our own box", a hosted service judged good "but" too costly after it, a
// fallback rule after a dash, page-speed, expiry, "nothing … except" and
// threshold rules, and a choice with what it is used with after a comma.
func TestMarkersHeadlessShop(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("The commerce engine is Saleor, self-hosted.", []string{"Use Saleor for the commerce engine"}, nil, nil),
		says("Editorial pages live in Storyblok.", []string{"Storyblok"}, nil, nil),
		says("search: Typesense on our own box. algolia is great but the per-request pricing hurts", []string{"Use Typesense for search"}, nil, []string{"algolia"}),
		says("Product images go through Cloudinary.", []string{"Cloudinary"}, nil, nil),
		says("Label printing through Shippo.", []string{"Use Shippo for label printing"}, []string{"Shippo."}, nil),
		says("Payments must never wait on the fraud check — fall back to manual review after 2 seconds.", []string{"Payments must never wait on the fraud check", "Fall back to manual review after 2 seconds"}, nil, nil),
		says("INP under 200 ms on the checkout page.", []string{"INP under 200 ms on the checkout page"}, nil, nil),
		says("Wishlists live in Redis, 90-day TTL, nothing in cookies except the session id.", []string{"Redis", "90-day TTL", "nothing in cookies except the session id"}, nil, nil),
		says("orders over 2000 euros need a manual fraud review", []string{"orders over 2000 euros need a manual fraud review"}, nil, nil),
		says("The storefront is Remix, with Tailwind for the styling.", []string{"Use Remix for the storefront", "Tailwind"}, nil, nil),
		// Traps.
		says("order #88123 went through twice, refund one of them", nil, []string{"88123"}, nil),
		says("lighthouse gives the PDP 64 on mobile, LCP 4.1s", nil, []string{"LCP"}, nil),
		says("the marketing team keeps asking for Klaviyo flows, not my call", nil, []string{"Klaviyo"}, []string{}),
	})
	if _, rejected := sections(t, c); strings.Contains(rejected, "Klaviyo") {
		t.Errorf("an option someone else asks for was turned down:\n%s", capsule.Render(c))
	}
}

// Changes and undos late in a session, a turn at a time, in the words
// people use for them: the decision a complaint names is the one
// replaced, not the newest of its kind; an option that stays beside a new
// one, or is kept for one place only, is not replaced; "I was wrong
// about X" and "undo the X change" drop X, and what follows replaces it.
func TestMarkersChangesUndone(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("Use goreleaser for releases.", []string{"goreleaser"}, nil, nil),
		says("Use changesets for the changelog.", []string{"changesets", "goreleaser"}, nil, nil),
		says("goreleaser didn't work out, the config is too magic. Back to a hand-written GitHub Actions workflow.", []string{"hand-written GitHub Actions workflow", "changesets"}, []string{"goreleaser"}, nil),
		says("Use serde_json for the output format.", []string{"serde_json"}, nil, nil),
		says("on reflection JSON output stays, but NDJSON when --follow is passed", []string{"serde_json", "NDJSON when --follow is passed"}, nil, nil),
		says("actually use NDJSON for the streamed output, JSON output stays for everything else", []string{"Use serde_json for the output format", "NDJSON"}, nil, nil),
		says("Use eyre for error handling.", []string{"eyre"}, nil, nil),
		says("revert to thiserror for the library crate; eyre only in the binary", []string{"thiserror", "eyre only in the binary", "Use eyre for error handling"}, nil, nil),
		says("Use clap for argument parsing.", []string{"clap"}, nil, nil),
		says("I was wrong about clap, the build time is brutal. argh is enough.", []string{"argh"}, []string{"clap"}, nil),
		says("Use indicatif for progress bars.", []string{"indicatif"}, nil, nil),
		says("undo the indicatif change, it garbles piped output. plain status lines on stderr.", []string{"plain status lines on stderr"}, []string{"indicatif"}, nil),
		says("homebrew stays, but add a Scoop manifest for Windows", []string{"Add a Scoop manifest for Windows"}, nil, nil),
		says("The CLI honors XDG_CONFIG_HOME.", []string{"The CLI honors XDG_CONFIG_HOME"}, nil, nil),
		// Traps.
		says("undo that last edit to main.rs, it broke the help text", nil, []string{"main.rs"}, nil),
		says("I was wrong about the deadline, it's Friday", nil, []string{"Friday", "deadline"}, nil),
		says("Don't touch the public API.", []string{"Don't touch the public API"}, nil, nil),
	})
	if _, rejected := sections(t, c); strings.Contains(rejected, "public API") || strings.Contains(rejected, "deadline") {
		t.Errorf("a rule or a remark was read as an option turned down:\n%s", capsule.Render(c))
	}
}

// A support assistant on a language model, a turn at a time: a model
// named by its versioned id, a rule after a dash or a comma said as an
// order on the data, timeouts, sizes, a budget and its alert, a switch
// whose reason is what an evaluation reported, and a part dropped by its
// doer ("the reranker") or scratched for a plain replacement, with the
// reason carried to it.
func TestMarkersModelAssistant(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("embeddings: nomic-embed-text-v1.5", []string{"nomic-embed-text-v1.5"}, nil, nil),
		says("Never log the raw prompt — redact it before it's written.", []string{"Never log the raw prompt", "Redact it before it's written"}, nil, nil),
		says("Hard cap of 4k output tokens per answer, truncate the retrieved context first.", []string{"Hard cap of 4k output tokens per answer", "Truncate the retrieved context first"}, nil, nil),
		says("Replies time out after 15 seconds.", []string{"Replies time out after 15 seconds"}, nil, nil),
		says("chunks are 400 tokens", []string{"chunks are 400 tokens"}, nil, nil),
		says("Model spend stays under $500 a month; alert at 90%.", []string{"Model spend stays under $500 a month", "alert at 90%"}, nil, nil),
		says("Use gpt-4o for triage.", []string{"gpt-4o"}, nil, nil),
		says("the benchmark says haiku matches gpt-4o on triage at a tenth of the price, switch triage to haiku", []string{"haiku"}, []string{"gpt-4o for triage"}, nil),
		says("Use Cohere for reranking.", []string{"Cohere"}, nil, nil),
		says("drop the reranker, it doubled the latency", nil, []string{"Cohere"}, nil),
		says("Use Redis for the semantic cache.", []string{"Redis"}, nil, nil),
		says("scratch the semantic cache, it returned stale answers. plain exact-match cache keyed on the ticket id.", []string{"exact-match cache keyed on the ticket id (why: it returned stale answers)"}, []string{"Redis"}, nil),
		// Traps.
		says("| model | accuracy |\n| haiku | 0.88 |\n| gpt-4o | 0.86 |", nil, []string{"0.88"}, nil),
		says("the eval output says sonnet wins, but let's wait for the full run", nil, []string{"sonnet"}, nil),
		says("someone on sales wants us to try Gemini, I'm not convinced", nil, []string{"Gemini"}, []string{}),
	})
	if _, rejected := sections(t, c); strings.Contains(rejected, "Gemini") || strings.Contains(rejected, "reranker") {
		t.Errorf("a remark or a dropped part was listed as an option turned down:\n%s", capsule.Render(c))
	}
}

// A browser extension, a turn at a time: an option the choice's comma
// says is not shipped either, an option that "felt nice but" has a flaw
// (while praise of the other beside the choice's own reason stays that
// reason), and a part that holds no state as a rule.
func TestMarkersBrowserExtension(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("Manifest V3 only, we don't ship an MV2 build either.", []string{"Manifest V3"}, nil, []string{"MV2 build"}),
		says("We build it with WXT. Plasmo felt nice but its messaging layer hides too much.", []string{"WXT"}, nil, []string{"Plasmo"}),
		says("Use Dexie for storage. idb was fine but Dexie's queries are shorter.", []string{"Dexie"}, nil, nil),
		says("The background worker keeps no state between events.", []string{"The background worker keeps no state between events"}, nil, nil),
		// Traps.
		says("We won't build it today.", nil, nil, nil),
		says("Preact is 4 KB gzipped.", nil, []string{"4 KB"}, nil),
	})
	if _, rejected := sections(t, c); strings.Contains(rejected, "either") || strings.Contains(rejected, "idb") || strings.Contains(rejected, "it today") {
		t.Errorf("turned down what was not, or with a word too many:\n%s", capsule.Render(c))
	}
}

// An option named by two capitalised words is chosen as any other: "Use
// Cohere Rerank for reranking" was read as nothing, so dropping the
// reranker later had nothing to retire.
func TestMarkersTwoWordNames(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("Use Google Cloud.", []string{"Use Google Cloud"}, nil, nil),
		says("Use Cohere Rerank for reranking.", []string{"Use Cohere Rerank for reranking"}, nil, nil),
		says("drop the reranker, it doubled the latency", []string{"Google Cloud"}, []string{"Cohere Rerank"}, nil),
		// Traps.
		says("Use The Force.", nil, []string{"Force"}, nil),
	})
	if active, _ := sections(t, c); strings.Contains(active, "Force") {
		t.Errorf("a phrase was read as an option:\n%s", capsule.Render(c))
	}
}

// A reply that picks an option of the kind the question offered, though
// not one it named, takes it ("Preact" to "React or plain DOM?"), and an
// offered option it says the team does not need is turned down.
func TestMarkersReplyOfferedKind(t *testing.T) {
	c := playSession(t, []sessionStep{
		asked("Should the popup be React or plain DOM?", "Preact, React is 40 KB we don't need in a popup", []string{"Preact"}, nil, []string{"React"}),
		// Traps: another kind than asked, a wish for some day.
		asked("Postgres or MySQL for the main store?", "Redis, just curious how fast it would be", nil, []string{"Redis"}, nil),
		asked("React or Vue for the admin?", "Svelte would be fun someday", nil, []string{"Svelte"}, nil),
	})
	if _, rejected := sections(t, c); strings.Contains(rejected, "Postgres") || strings.Contains(rejected, "Vue") {
		t.Errorf("an option asked about was turned down by a remark:\n%s", capsule.Render(c))
	}
}

// A choice said to extend to one more part ("… too") replaces no
// decision whose option it names again, and "we're reverting the X
// decision" retires X.
func TestMarkersExtendedNotReplaced(t *testing.T) {
	playSession(t, []sessionStep{
		says("Use Kafka for events.", []string{"Kafka"}, nil, nil),
		says("Use Postgres for the database.", []string{"Postgres for the database", "Kafka"}, nil, nil),
		says("hmm, actually postgres for events too, one less thing to run", []string{"Use Postgres for the database"}, nil, nil),
		says("Use Redis for caching.", []string{"Redis"}, nil, nil),
		says("We're reverting the Redis decision.", []string{"Use Postgres for the database"}, []string{"Redis"}, nil),
		// Traps: a judged option named again is still replaced.
		says("Use Wi-Fi for connectivity.", []string{"Wi-Fi"}, nil, nil),
		says("actually connectivity is LTE-M, Wi-Fi drains the battery", []string{"LTE-M"}, []string{"Use Wi-Fi"}, nil),
	})
}

// "keep X but add Y" adds Y beside X; "no more X" turns down X itself.
func TestMarkersKeepButAdd(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("Use Stripe for payments.", []string{"Stripe"}, nil, nil),
		says("keep stripe but add PayPal as a second option at checkout", []string{"Use Stripe for payments", "Add PayPal as a second option at checkout"}, nil, nil),
		says("Use GraphQL for the public API.", []string{"GraphQL"}, nil, nil),
		says("No more GraphQL, REST only.", []string{"REST only"}, []string{"GraphQL"}, []string{"GraphQL"}),
	})
	if _, rejected := sections(t, c); strings.Contains(rejected, "more GraphQL") {
		t.Errorf("\"more\" kept in what is turned down:\n%s", capsule.Render(c))
	}
}

// An option the user already ruled out, said as a reminder, is turned
// down: "Don't suggest Kubernetes again, …", "We already said no to
// MongoDB", "Kafka was rejected last week, don't bring it up again".
func TestMarkersRuledOutBefore(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("Don't suggest Kubernetes again, we're a team of two.", nil, nil, []string{"Kubernetes (reason: we're a team of two)"}),
		says("We already said no to MongoDB.", nil, nil, []string{"MongoDB"}),
		says("Kafka was rejected last week, don't bring it up again.", nil, nil, []string{"Kafka"}),
		// Traps: a failure, a rule about what not to mention.
		says("The Stripe webhook was rejected by the load balancer with a 413.", nil, nil, nil),
		says("Don't mention the outage in the changelog.", []string{"Don't mention the outage in the changelog"}, nil, nil),
	})
	if _, rejected := sections(t, c); strings.Contains(rejected, "Stripe") || strings.Contains(rejected, "outage") || strings.Contains(rejected, "Kubernetes again") {
		t.Errorf("turned down what was not, or with a word too many:\n%s", capsule.Render(c))
	}
}

// A genomics pipeline: tools named in the field's words (aligners,
// callers, reference builds, schedulers), changes said as a cost then a
// switch or as "use that instead", the other option of a question judged
// after the one taken, and rules about paths, versions and run time. Each
// of these read as nothing, or as the wrong thing, before.
func TestMarkersGenomicsPipeline(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("We went with Nextflow. Snakemake was the other candidate but nobody here reads Python rules fluently.", []string{"Nextflow"}, nil, []string{"Snakemake"}),
		says("Align with bwa-mem2, and call variants with GATK HaplotypeCaller.", []string{"Align with bwa-mem2", "HaplotypeCaller"}, nil, nil),
		says("HaplotypeCaller takes 9 hours a sample on our nodes. switching to DeepVariant.", []string{"DeepVariant", "9 hours", "bwa-mem2"}, []string{"HaplotypeCaller"}, nil),
		says("Reference is GRCh38. Don't let anyone slip hg19 back in.", []string{"GRCh38"}, nil, []string{"hg19"}),
		says("Use Singularity for containers.", []string{"Singularity"}, nil, nil),
		says("the admins moved to Apptainer last month, use that instead of Singularity", []string{"Apptainer", "admins moved"}, []string{"Singularity"}, nil),
		asked("Keep the BAMs too, or CRAM only?", "CRAM only, BAMs are 3x the size", []string{"CRAM"}, nil, []string{"BAMs"}),
		says("Executor is SLURM, local only for the test profile.", []string{"SLURM", "local only for the test profile"}, nil, nil),
		says("No Excel files, ever.", nil, nil, []string{"Excel"}),
		says("scratch files go to /scratch/$USER; nothing else leaves the cluster", []string{"/scratch/$USER", "nothing else leaves the cluster"}, nil, nil),
		says("We pin the VEP cache to release 110.", []string{"VEP", "release 110"}, nil, nil),
		says("I was wrong about Cromwell for the WDL parts, we don't need WDL. Keep everything in Nextflow.", []string{"Nextflow"}, []string{"Cromwell"}, []string{"Cromwell"}),
		says("The test profile has to finish in under 10 minutes.", []string{"under 10 minutes"}, nil, nil),
		says("Use fastp for trimming.", []string{"fastp"}, nil, nil),
		says("trimming with fastp is fine but skip it for the PacBio runs", []string{"skip it for the PacBio runs"}, nil, nil),
		// Traps.
		says("scratch that, I'll look at the logs first", nil, nil, nil),
		says("align the buttons with the header", nil, []string{"buttons"}, nil),
		says(`the banner reads "Use Postgres"`, nil, []string{"Postgres"}, nil),
		says("we went with a colleague to the meetup", nil, []string{"colleague"}, nil),
		says("I went with my gut on the naming", nil, []string{"gut"}, nil),
	})
	if active, rejected := sections(t, c); strings.Contains(rejected, "files go") || strings.Contains(rejected, "logs") || strings.Contains(rejected, ": WDL") || !strings.Contains(active, "fastp") {
		t.Errorf("turned down what was not, or dropped what stays:\n%s", capsule.Render(c))
	}
}

// A word in two categories of options got either at random (categoryOf
// is built by ranging over a map), so the same turn could replace a
// decision in one run and leave it in the next: "kong" (a gateway and a
// CLI parser) and "bun" (a runtime and an ORM) were. Every well-known
// option has one kind.
func TestCategoriesDisjoint(t *testing.T) {
	seen := map[string]string{}
	for c, names := range categories {
		for _, n := range names {
			if o, ok := seen[n]; ok {
				t.Errorf("%q is in both %q and %q", n, o, c)
			}
			seen[n] = c
		}
	}
}

// A live video platform: media servers, players and formats named in the
// field's words; changes whose reason names the option replaced ("Shaka's
// bundle is twice the size", "wowza's licence is per instance"), an
// option dropped and brought back, and rules of cadence, expiry and scope.
func TestMarkersLiveVideo(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("The SFU is mediasoup. We looked at Janus but its plugin model is more than we need.", []string{"mediasoup"}, nil, []string{"Janus"}),
		says("Deliver with HLS, low-latency mode, and keep DASH out of it for now.", []string{"HLS"}, nil, []string{"DASH"}),
		says("Use Wowza for transcoding.", []string{"Wowza"}, nil, nil),
		says("Use Shaka Player for playback.", []string{"Shaka"}, nil, nil),
		says("Use CloudFront as the CDN.", []string{"CloudFront"}, nil, nil),
		says("back to hls.js, Shaka's bundle is twice the size", []string{"hls.js", "CloudFront", "Wowza"}, []string{"Shaka"}, nil),
		says("wowza's licence is per instance and we autoscale, so transcode with ffmpeg on our own workers instead", []string{"ffmpeg", "CloudFront"}, []string{"Wowza"}, nil),
		says("Recordings go to R2, not S3: egress is free.", []string{"R2"}, nil, []string{"S3"}),
		says("Use MediaLive for ingest.", []string{"MediaLive"}, nil, nil),
		says("drop MediaLive, our own RTMP ingest is cheaper", nil, []string{"MediaLive"}, nil),
		says("I was wrong to drop MediaLive, our RTMP ingest keeps falling over at peak. Bring MediaLive back for ingest.", []string{"MediaLive", "falling over"}, nil, nil),
		says("Captions come from Whisper on our own GPUs; no third-party captioning service sees the audio.", []string{"Whisper", "no third-party captioning service"}, nil, nil),
		says("Every stream key is single use and expires after 24 hours.", []string{"single use"}, nil, nil),
		says("Thumbnails every 10 seconds.", []string{"every 10 seconds"}, nil, nil),
		says("leave DRM for later", []string{"DRM for later"}, nil, nil),
		// Traps.
		says("secrets come from Vault, never from env files", nil, []string{"Use Vault"}, nil),
		says("we looked at the logs but nothing stood out", nil, nil, nil),
	})
	if active, rejected := sections(t, c); strings.Contains(rejected, "logs") || strings.Contains(rejected, "DRM") || !strings.Contains(active, "hls.js") {
		t.Errorf("turned down what was not, or dropped what stays:\n%s", capsule.Render(c))
	}
}

// A bookkeeping app, with turns that paste a traceback, a failing test
// or a query plan before what they settle: the typed rule after the
// paste is read, a complaint before a change is its reason ("celery's
// retry semantics bit us twice …, moving jobs to Procrastinate"), the
// other export format of the question is turned down for what a later
// clause says of it, and a package of a known option ("django-money") is
// an option that can be ripped out and replaced.
func TestMarkersBookkeeping(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("Amounts are integers in minor units, never floats, and every amount carries its ISO currency code.", []string{"integers in minor units", "ISO currency code"}, nil, nil),
		says("Traceback (most recent call last):\n  File \"ledger/posting.py\", line 88, in post\nledger.errors.UnbalancedTransaction: -0.01\nok so rounding is the problem. Round half to even at the posting level.", []string{"Round half to even"}, nil, nil),
		says("for bank feeds we use GoCardless, Plaid doesn't cover half our EU banks", []string{"GoCardless"}, nil, []string{"Plaid"}),
		says("Use WeasyPrint for invoice PDFs.", []string{"WeasyPrint"}, nil, nil),
		says("WeasyPrint takes 4 seconds per invoice. Render invoices with Typst instead.", []string{"Typst", "4 seconds"}, []string{"WeasyPrint"}, nil),
		says("we take the ECB reference rate of the transaction date, no intraday rates", []string{"ECB reference rate"}, nil, []string{"intraday rates"}),
		says("Use Celery for background jobs.", []string{"Celery"}, nil, nil),
		says("celery's retry semantics bit us twice with duplicate postings, moving jobs to Procrastinate on Postgres", []string{"Procrastinate", "duplicate postings"}, []string{"Celery"}, nil),
		asked("CSV per journal or one XLSX workbook?", "csv, accountants open them anywhere and xlsx files keep breaking their macros", []string{"csv"}, nil, []string{"xlsx"}),
		says("Nothing is ever deleted, only reversed.", []string{"Nothing is ever deleted"}, nil, nil),
		says("add a composite index on (account_id, posted_at), no partitioning yet", nil, nil, []string{"partitioning"}),
		says("Use django-money for money fields.", []string{"django-money"}, nil, nil),
		says("rip out django-money, it stores Decimal. a small Money value type of our own is enough.", []string{"Money value type"}, []string{"django-money"}, nil),
		// Traps.
		says(`{"error":{"code":"RateLimitExceeded","detail":"Daily request limit reached"}}`, nil, nil, nil),
		says("I read the logs, no errors yet", nil, nil, nil),
		says("Xero does this with tracking categories, worth a look later", nil, []string{"Xero"}, nil),
	})
	if _, rejected := sections(t, c); strings.Contains(rejected, "errors") || strings.Contains(rejected, "Xero") || strings.Contains(rejected, "RateLimit") {
		t.Errorf("turned down what was not:\n%s", capsule.Render(c))
	}
}

// A C++ simulation code: parallel and GPU libraries named in the field's
// words, an option judged after the choice ("Raw CUDA would lock us to
// NVIDIA") turned down, one option kept for a part and another for the
// other part, a replacement that did the same with no code, and rules of
// cadence, units and where conversions happen.
func TestMarkersSimulationCode(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("Parallelise with MPI across nodes.", []string{"MPI"}, nil, nil),
		says("For the GPU back end we go with Kokkos so the same kernels run on CUDA and HIP. Raw CUDA would lock us to NVIDIA.", []string{"Kokkos", "same kernels run"}, nil, []string{"Raw CUDA"}),
		says("Use Eigen for the dense linear algebra.", []string{"Eigen"}, nil, nil),
		says("Eigen is fine for the small dense blocks but the big sparse solves go through PETSc", []string{"Eigen", "PETSc"}, nil, nil),
		says("scrap the custom allocator, jemalloc gave us the same numbers with zero code", []string{"jemalloc"}, nil, []string{"custom allocator"}),
		says("Every PR runs the 2-rank regression suite; the 64-rank runs are nightly only.", []string{"2-rank regression suite", "nightly only"}, nil, nil),
		says("Units are SI everywhere in the code; conversions only happen in the input parser.", []string{"SI everywhere", "conversions only happen in the input parser"}, nil, nil),
		says("Use HDF5 for checkpoints.", []string{"HDF5"}, nil, nil),
		says("HDF5 parallel writes are a nightmare on Lustre; checkpoints go to ADIOS2 from now on", []string{"ADIOS2"}, []string{"HDF5"}, nil),
		// Traps: a reason after a change stays its reason, praise of the
		// other option before "but" is the choice's reason.
		says("Use Postgres for the leaderboards.", []string{"Postgres"}, nil, nil),
		says("Actually use SQLite for the leaderboards. Postgres is one more thing to run.", []string{"SQLite"}, []string{"Postgres"}, nil),
		says("For the model, LightGBM. XGBoost was fine but LightGBM trains faster here.", []string{"LightGBM"}, nil, nil),
		says("error: no matching function for call to 'Kokkos::parallel_reduce(const char [4])'", nil, nil, nil),
	})
	_, rejected := sections(t, c)
	for _, l := range strings.Split(rejected, "\n") {
		if strings.HasPrefix(l, "- R") && (strings.Contains(l, "XGBoost") || strings.Contains(l, "Kokkos::") || strings.Contains(l, "Postgres")) {
			t.Errorf("turned down what was not: %s\n%s", l, capsule.Render(c))
		}
	}
}

// A password manager, settled tersely: a reviewer's judgement the user
// agrees with is the user's own, "plain HTTPS with JSON" is one option
// (not JSON for a part called "plain https"), an instruction said as a
// change ("… instead"), a reply whose reason says "would", settings of an
// option, and rules of time-outs, printing and what a server stores.
func TestMarkersPasswordManager(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("argon2id params: 64 MiB memory, 3 iterations", []string{"64 MiB memory"}, nil, nil),
		says("Use gRPC for the sync protocol.", []string{"gRPC"}, nil, nil),
		says("reviewer says gRPC is overkill for three endpoints and they're right, plain HTTPS with JSON", []string{"plain HTTPS with JSON", "overkill for three endpoints"}, []string{"gRPC"}, nil),
		asked("Should conflicts be resolved last-writer-wins or with a per-entry merge?", "per-entry merge. LWW would silently drop a password someone just changed", []string{"Per-entry merge"}, nil, nil),
		says("Use the OS Keychain for the unlocked key.", []string{"Keychain"}, nil, nil),
		says("on Linux the keychain story is a mess, cache the unlocked key in the agent process instead, 15 minute timeout", []string{"agent process", "15 minute timeout"}, []string{"Keychain"}, nil),
		says("The CLI never prints a secret unless --show is passed; clipboard copies clear after 30 seconds.", []string{"never prints a secret", "clear after 30 seconds"}, nil, nil),
		says("Sync is end-to-end encrypted: the server only ever stores ciphertext blobs.", []string{"only ever stores ciphertext"}, nil, nil),
		says("Browser integration goes through native messaging, no extension talks to the server directly.", []string{"native messaging", "no extension talks to the server directly"}, nil, nil),
		// Traps.
		says("The build goes through a lot of steps.", nil, []string{"steps"}, nil),
		asked("Postgres or SQLite for the index?", "maybe SQLite, it would be simpler", nil, []string{"SQLite"}, nil),
		says("my colleague says Kafka is overkill", nil, nil, nil),
		says("Use the same style as the other files.", nil, []string{"same style"}, nil),
		says("use the Chrome debugger to step through it", nil, []string{"debugger"}, nil),
	})
	if _, rejected := sections(t, c); strings.Contains(rejected, "Kafka") {
		t.Errorf("a colleague's judgement, not agreed with, turned an option down:\n%s", capsule.Render(c))
	}
}

// A long working session on a plain web app: decisions said beside a
// task or after an aside ("btw", "oh and", "fwiw", "hmm, I'd …"), a
// correction of the agent ("no, I said Vitest, not Jest"), a rule after
// "while you're at it" or after a request's "but don't", and a package
// that covers what the one ripped out did.
func TestMarkersWorkingSession(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("can you add the settings page? btw we're using react-hook-form for all forms from now on, formik is too heavy", []string{"react-hook-form"}, nil, []string{"formik"}),
		says("Use Jest for tests.", []string{"Jest"}, nil, nil),
		says("no, I said Vitest, not Jest. please redo the test setup with vitest", []string{"Vitest"}, []string{"Use Jest"}, nil),
		says("oh and keep the API responses in camelCase, the frontend shouldn't have to map field names", []string{"camelCase"}, nil, nil),
		says("fix the date bug in the invoice list and while you're at it store all timestamps as timestamptz", []string{"timestamptz"}, nil, nil),
		says("Use Redux Toolkit for state.", []string{"Redux Toolkit"}, nil, nil),
		says("actually let's rip out redux toolkit, react query covers the server state", []string{"react query"}, []string{"Redux Toolkit"}, nil),
		says("lmk if the auth middleware needs changes but don't touch the session cookie settings, those were tuned for Safari", []string{"touch the session cookie settings"}, nil, nil),
		says("Use Tailwind with daisyUI for styling.", []string{"daisyUI"}, nil, nil),
		says("hmm, I'd keep tailwind but drop daisyUI, its components fight our design tokens", []string{"Tailwind"}, []string{"daisyUI"}, []string{"daisyUI"}),
		// Traps.
		says("btw the tests are flaky on CI", nil, nil, nil),
		says("I said I'd look at it tomorrow", nil, []string{"look at it"}, nil),
		says("fix the header and while you're at it rename the file", nil, []string{"rename"}, nil),
	})
	if active, _ := sections(t, c); strings.Contains(active, "redo the test setup") || strings.Contains(active, "tests are flaky") {
		t.Errorf("a task was kept as a decision:\n%s", capsule.Render(c))
	}
}

// Steering an agent after its context was compacted: it proposes what
// was dropped, and the user says so in passing ("we dropped Diesel weeks
// ago, it's sqlx …", "you keep reaching for actix — it's axum"), restates
// rules after "reminder:" or "as agreed", and changes one part while
// another stays ("still tracing, but switch the subscriber to …", "keep
// serde_json, but reject unknown fields on every request type").
func TestMarkersSteeringAfterCompaction(t *testing.T) {
	c := playSession(t, []sessionStep{
		asked("I'll add Diesel for the new tables.", "we dropped Diesel weeks ago, it's sqlx with compile-time checked queries. don't bring it back", []string{"sqlx"}, nil, []string{"Diesel"}),
		asked("Should I put the job queue on Redis?", "no redis. jobs live in postgres with SKIP LOCKED, we agreed on that", []string{"SKIP LOCKED"}, nil, []string{"redis"}),
		says("reminder: handlers return our AppError type, never anyhow::Error across the API boundary", []string{"AppError"}, nil, []string{"anyhow::Error"}),
		says("still tracing, but switch the subscriber to OpenTelemetry export, we're adding Honeycomb", []string{"OpenTelemetry", "Honeycomb"}, nil, nil),
		says("you keep reaching for actix — it's axum, it has been since the start", []string{"axum"}, nil, []string{"actix"}),
		says("Use bb8 for the connection pool.", []string{"bb8"}, nil, nil),
		says("drop bb8, sqlx has its own pool and two pools fought over connections in load tests", []string{"Use sqlx"}, []string{"bb8"}, nil),
		says("keep serde_json, but reject unknown fields on every request type", []string{"unknown fields on every request type"}, nil, nil),
		// Traps: a reason after "it's" stays a reason.
		says("No Lombok, it's Kotlin anyway.", nil, []string{"Kotlin"}, []string{"Lombok"}),
		says("no framer motion, it's 30 KB for two fades", nil, []string{"30 KB"}, []string{"framer motion"}),
		says("we dropped the old cron job last week", nil, nil, nil),
	})
	if active, rejected := sections(t, c); strings.Contains(active, "don't bring it back") || strings.Contains(rejected, "unknown fields") || strings.Contains(rejected, "weeks ago") {
		t.Errorf("emphasis or a rule read as something else:\n%s", capsule.Render(c))
	}
}

// Trying things out: a try and a branch-only change settle nothing; how
// the try went does ("the Polars experiment worked, 6x faster …", "the
// Litestar spike was a bust, …", "DuckDB won the comparison, switch the
// reports to it for real", "uv is in, poetry is out — …"), and what
// stays after a failed try is kept, not read as an option named "Celery
// stays".
func TestMarkersTrialsSettled(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("let's try Polars instead of pandas for the aggregation step and see if it's faster", nil, []string{"Polars"}, nil),
		says("ok the Polars experiment worked, 6x faster on the monthly rollup. we're keeping it, pandas is out", []string{"Polars", "6x faster"}, nil, []string{"pandas"}),
		says("Use Postgres for the reports.", []string{"Postgres for the reports"}, nil, nil),
		says("for this branch only, use DuckDB for the reports so we can compare against Postgres", []string{"Postgres for the reports"}, []string{"DuckDB"}, nil),
		says("DuckDB won the comparison, switch the reports to it for real", []string{"DuckDB for the reports"}, []string{"Postgres for the reports"}, nil),
		says("Use FastAPI for the API.", []string{"FastAPI"}, nil, nil),
		says("the Litestar spike was a bust, half our middleware doesn't port. staying on FastAPI", []string{"FastAPI"}, nil, []string{"Litestar"}),
		says("uv is in, poetry is out — the lock step went from 90s to 4s", []string{"uv"}, nil, []string{"poetry"}),
		says("Use Celery for background jobs.", []string{"Celery"}, nil, nil),
		says("the Dramatiq prototype didn't pan out, retries behaved the same. Celery stays.", []string{"Celery"}, nil, []string{"Dramatiq"}),
		// Traps.
		says("Terraform state is in an S3 bucket somewhere.", nil, []string{"Terraform"}, nil),
		says("let's experiment with caching the rollups and see what happens", nil, []string{"caching"}, nil),
		says("the benchmark branch is still running, I'll check tomorrow", nil, nil, nil),
		// "X is out, <why>" after an interjection is read where
		// interjections are taken off, not as an option named "ok X".
		says("Use Mux for live streaming.", []string{"Mux"}, nil, nil),
		says("ok Mux is out, their per-minute pricing kills us at 2000 viewers", nil, []string{"Mux"}, nil),
	})
	active, rejected := sections(t, c)
	if strings.Contains(active, "Celery stays") {
		t.Errorf("what stays was read as an option's name:\n%s", capsule.Render(c))
	}
	if strings.Contains(rejected, "ok Mux") {
		t.Errorf("an interjection was kept in the name of what was turned down:\n%s", capsule.Render(c))
	}
}

// Two decisions about parts of one kind ("the orders service", "the
// billing service"; "component c-0-0-1", "component c-0-0-2"; "shard 1",
// "shard 2") are two subjects: the second must not supersede the first,
// which would list a settled choice as rejected. Nor does a decision for
// a part of an earlier one's subject ("payments in the EU"). A decision
// about the same part still replaces the earlier one.
func TestMarkersPartsOfOneKind(t *testing.T) {
	for _, tc := range []struct {
		first, second string
		a, b          string // the option of each
		replaces      bool
	}{
		{"Decision: use ds-0-0-1 for component c-0-0-1.", "Decision: use ds-0-0-2 for component c-0-0-2.", "ds-0-0-1", "ds-0-0-2", false},
		{"Use gRPC for the orders service.", "Use REST for the billing service.", "gRPC", "REST", false},
		{"Use Postgres for service A.", "Use MySQL for service B.", "Postgres", "MySQL", false},
		{"Use Kafka for the events topic.", "Use NATS for the metrics topic.", "Kafka", "NATS", false},
		{"Use Vitest for the frontend tests.", "Use pytest for the backend tests.", "Vitest", "pytest", false},
		{"Use ruff for linting in repo one.", "Use flake8 for linting in repo two.", "ruff", "flake8", false},
		{"Use Redis for cache shard 1.", "Use Memcached for cache shard 2.", "Redis", "Memcached", false},
		{"Use JWT for the v1 API.", "Use OAuth for the v2 API.", "JWT", "OAuth", false},
		{"Use queue2 for the job queue of service S2.", "Use queue3 for the job queue of service S3.", "queue2", "queue3", false},
		{"Use Stripe for payments.", "Use Paddle for payments in the EU.", "Stripe", "Paddle", false},
		{"Use Tailwind for styling.", "Use CSS modules for the admin panel styling.", "Tailwind", "CSS modules", false},
		{"Use Sentry for error tracking.", "Use Datadog for metrics.", "Sentry", "Datadog", false},
		{"Use Postgres for the database.", "Switch the database to MySQL.", "Postgres", "MySQL", true},
		{"Use Postgres for the database.", "Use MySQL for the main database.", "Postgres", "MySQL", true},
		{"Use React for the frontend.", "Use Vue for the UI.", "React", "Vue", true},
		{"Use Redis for the session cache.", "Use Memcached for caching sessions.", "Redis", "Memcached", true},
		{"Use S3 for file uploads.", "Use R2 for uploaded files.", "S3", "R2", true},
		{"Use RabbitMQ for the payment events.", "Move the payment events to the Postgres outbox table we already have.", "RabbitMQ", "outbox", true},
		{"Use Kafka for the events topic.", "Actually, use NATS for the events topic.", "Kafka", "NATS", true},
		{"Use Postgres for the user data.", "Use MySQL for the user data instead.", "Postgres", "MySQL", true},
	} {
		c := markers(t, capsule.New("s", "a"), 0, dialect.Message{Role: "user", Text: tc.first})
		c = markers(t, c, 2, dialect.Message{Role: "assistant", Text: "OK."}, dialect.Message{Role: "user", Text: tc.second})
		var firstActive, secondActive bool
		for _, d := range c.Decisions {
			if d.Status == capsule.StatusActive {
				firstActive = firstActive || strings.Contains(d.Statement, tc.a)
				secondActive = secondActive || strings.Contains(d.Statement, tc.b)
			}
		}
		if !secondActive || firstActive == tc.replaces {
			t.Errorf("%q, then %q: %s is active: %v, want %v:\n%s", tc.first, tc.second, tc.a, firstActive, !tc.replaces, capsule.Render(c))
		}
	}
}

// "Let's go for X" and "we'll opt for X" settle an option as "go with X"
// does; "go for it", "go for a walk" and "go for now" name none.
func TestMarkersGoFor(t *testing.T) {
	wantOneDecision(t, []sayWant{
		{"Let's go for Postgres.", "Postgres"},
		{"We'll go for Drizzle for the ORM.", "Drizzle"},
		{"We're going for a monorepo with pnpm workspaces.", "pnpm"},
		{"Let's opt for Vite.", "Vite"},
		{"Go for it!", ""},
		{"Let's go for a walk.", ""},
		{"Let's go for now and revisit later.", ""},
	})
}

// An imperative that names the option the work is done with settles it
// ("Build it with WXT", "Pick Svelte"); one that names none is a task.
func TestMarkersImperativeChoice(t *testing.T) {
	wantOneDecision(t, []sayWant{
		{"Build the admin tool as a Rails app with Hotwire.", "Rails"},
		{"Build it with Vite.", "Vite"},
		{"Pick Svelte.", "Svelte"},
		{"Choose Postgres.", "Postgres"},
		{"Implement the cache with Redis.", "Redis"},
		{"Deploy to Fly.io.", "Fly.io"},
		{"Deploy the demo to Vercel so I can show it.", ""},
		{"Write a test for the parser.", ""},
		{"Build the project.", ""},
		{"Pick the cheaper one.", ""},
		{"Implement the retry loop.", ""},
		{"Choose a name for the package.", ""},
	})
}

// "Drop X, it's overkill": the judgement is why X goes, not a decision
// (it read as a decision "Overkill"); "Ditch X, it's Y now" and "Scrap X,
// Y has better caching" put Y in X's place (Y was listed as rejected).
func TestMarkersDropBecause(t *testing.T) {
	for _, tc := range []struct{ say, rejected, active string }{
		{"Drop the Redis idea, it's overkill.", "Redis", ""},
		{"Forget Kafka, it's too heavy.", "Kafka", ""},
		{"Ditch Jest, it's Vitest now.", "Jest", "Vitest"},
		{"Scrap Turborepo, Nx has better caching.", "Turborepo", "Nx"},
		{"Kill the plugin system, it's a single binary until someone asks for plugins.", "plugin system", "single binary"},
	} {
		c := markers(t, capsule.New("s", "a"), 0, dialect.Message{Role: "user", Text: tc.say})
		active, rejected := sections(t, c)
		if !strings.Contains(rejected, tc.rejected) || strings.Contains(active, "D1:") != (tc.active != "") || !strings.Contains(active, tc.active) {
			t.Errorf("%q: want %q rejected and %q active:\n%s", tc.say, tc.rejected, tc.active, capsule.Render(c))
		}
	}
}

// Options taken back up and replaced in everyday words, a turn at a time:
// "React was right" after React was replaced (the batch was refused: its
// text equals the retired decision's, which it did not say it reinstates),
// "X, not Y" (the choice was dropped and only Y turned down), "wait, X
// after all", "we do need X" (read as "Use need X"), "use Jest again"
// (read as nothing).
func TestMarkersTakenBack(t *testing.T) {
	for _, tc := range []struct {
		turns          []string
		active, notIn  string
		notInStatement string
	}{
		{[]string{"Use React.", "Use Vue instead.", "Hmm no, React was right. Go back to React."}, "Use React", "Vue", ""},
		{[]string{"Use Jest for tests.", "Vitest, not Jest."}, "Vitest", "Jest", ""},
		{[]string{"Use Jest.", "Use Vitest instead.", "Use Jest again."}, "Use Jest", "Vitest", ""},
		{[]string{"Use Postgres.", "MySQL, not Postgres."}, "MySQL", "Postgres", ""},
		{[]string{"We'll deploy on AWS.", "Decision: deploy on GCP instead of AWS.", "Wait, AWS after all."}, "AWS", "GCP", "Wait"},
		{[]string{"Don't use Docker.", "OK we do need Docker for CI."}, "Docker for CI", "", "need"},
	} {
		c := capsule.New("s", "a")
		for i, say := range tc.turns {
			c = markers(t, c, 2*i, dialect.Message{Role: "assistant", Text: "OK."}, dialect.Message{Role: "user", Text: say})
		}
		var active []string
		for _, d := range c.Decisions {
			if d.Status == capsule.StatusActive {
				active = append(active, d.Statement)
			}
		}
		all := strings.Join(active, "\n")
		if !strings.Contains(all, tc.active) || tc.notIn != "" && strings.Contains(all, tc.notIn) || tc.notInStatement != "" && strings.Contains(all, tc.notInStatement) {
			t.Errorf("%q: active %q, want %q and not %q:\n%s", tc.turns, active, tc.active, tc.notIn, capsule.Render(c))
		}
	}
}

// A rule's amount said again as a choice ("Use 4 spaces for indentation"
// after "Always use 2 spaces for indentation") replaces the rule: it stayed
// in force beside the new choice. In one batch as over two.
func TestMarkersRuleReplacedByAChoice(t *testing.T) {
	for _, tc := range []struct{ rule, choice, old, now string }{
		{"Always use 2 spaces for indentation.", "Use 4 spaces for indentation from now on.", "2 spaces", "4 spaces"},
		{"Always use 2 spaces for indentation.", "We'll use 4 spaces for indentation.", "2 spaces", "4 spaces"},
	} {
		for _, batched := range []bool{false, true} {
			var c *capsule.Capsule
			if batched {
				c = markers(t, capsule.New("s", "a"), 0, dialect.Message{Role: "user", Text: tc.rule}, dialect.Message{Role: "assistant", Text: "OK."},
					dialect.Message{Role: "user", Text: tc.choice})
			} else {
				c = markers(t, capsule.New("s", "a"), 0, dialect.Message{Role: "user", Text: tc.rule})
				c = markers(t, c, 2, dialect.Message{Role: "assistant", Text: "OK."}, dialect.Message{Role: "user", Text: tc.choice})
			}
			active, _ := sections(t, c)
			if strings.Contains(active, tc.old) || !strings.Contains(active, tc.now) {
				t.Errorf("%q, then %q (one batch: %v): want %q in force and %q not:\n%s", tc.rule, tc.choice, batched, tc.now, tc.old, capsule.Render(c))
			}
		}
	}
}

// A rule of how data is kept said with a modal ("must be stored in UTC")
// is replaced by the same rule said otherwise, as "are stored in UTC" is.
func TestMarkersModalRuleChanged(t *testing.T) {
	playSession(t, []sessionStep{
		says("All timestamps must be stored in UTC.", []string{"All timestamps must be stored in UTC"}, nil, nil),
		says("Actually, store timestamps in the user's local time.", []string{"Store timestamps in the user's local time"}, []string{"UTC"}, nil),
	})
}

// "Actually we need Windows support after all" takes back a rejection:
// Windows was left listed as not to be used. Said plainly, "we need Redis
// running for the tests" decides nothing.
func TestMarkersWantedAgain(t *testing.T) {
	playSession(t, []sessionStep{
		says("We won't support Windows.", nil, nil, []string{"Windows"}),
		says("Actually we need Windows support after all.", []string{"Windows"}, nil, nil),
	})
	c := markers(t, capsule.New("s", "a"), 0, dialect.Message{Role: "user", Text: "We need Redis running for the tests."})
	if len(c.Decisions) != 0 {
		t.Errorf("a task read as a decision:\n%s", capsule.Render(c))
	}
	c = markers(t, capsule.New("s", "a"), 0, dialect.Message{Role: "user", Text: "We won't support Windows."})
	c = markers(t, c, 2, dialect.Message{Role: "assistant", Text: "OK."}, dialect.Message{Role: "user", Text: "Actually we need Windows support after all."})
	if _, rejected := sections(t, c); strings.Contains(rejected, "Windows") {
		t.Errorf("Windows is wanted again and still listed as rejected:\n%s", capsule.Render(c))
	}
}

// "We decided in standup to use Terraform for infra, not Pulumi": where the
// decision was made does not hide it (only Pulumi was recorded, turned
// down).
func TestMarkersDecidedInAMeeting(t *testing.T) {
	c := markers(t, capsule.New("s", "a"), 0, dialect.Message{Role: "user", Text: "Thanks! One more thing: we decided in standup to use Terraform for infra, not Pulumi."})
	active, rejected := sections(t, c)
	if !strings.Contains(active, "Terraform") || !strings.Contains(rejected, "Pulumi") {
		t.Errorf("want Terraform in force and Pulumi turned down:\n%s", capsule.Render(c))
	}
}

// A session in the words people type, lower case and all: what stands
// after "don't bother with X" is not turned down with X ("CLI + API only"
// was listed as rejected), "let's not use goose after all, atlas is
// nicer" puts atlas in goose's place, and a reason said as "we're going
// to …" is the reason, not part of the choice.
func TestMarkersLowercaseSession(t *testing.T) {
	playSession(t, []sessionStep{
		says("use chi for the router. sqlite for storage is fine for now", []string{"chi", "sqlite"}, nil, nil),
		says("actually let's move storage to postgres, we're going to deploy on fly and sqlite won't cut it", []string{"Use postgres for storage"}, []string{"sqlite", "deploy on fly and"}, nil),
		says("don't bother with a web UI, CLI + API only", []string{"CLI + API only"}, nil, []string{"web UI"}),
		says("for migrations use goose", []string{"goose"}, nil, nil),
		says("let's not use goose after all, atlas is nicer", []string{"atlas"}, []string{"goose"}, nil),
	})
	c := markers(t, capsule.New("s", "a"), 0, dialect.Message{Role: "user", Text: "don't bother with a web UI, CLI + API only"})
	if _, rejected := sections(t, c); strings.Contains(rejected, "CLI") {
		t.Errorf("what stands is listed as rejected:\n%s", capsule.Render(c))
	}
}

// Acceptance and choice in a few more everyday words: "go with your
// recommendation" and "let's do what you suggested" take what the
// assistant recommended (the first read as a decision "Use your
// recommendation", the second as nothing), "…, ok?" checks a decision
// with the agent without asking a question, "X seems like the best fit,
// let's go with it" and "+1 to X" choose X.
func TestMarkersMoreEverydayChoices(t *testing.T) {
	const rec = "For the cache I recommend Redis: it is fast and we already run it. Want me to set it up?"
	for _, tc := range []struct{ assistant, user, want string }{
		{rec, "Go with your recommendation.", "Use Redis"},
		{rec, "Let's do what you suggested.", "Use Redis"},
		{"", "Let's use Postgres, ok?", "Use Postgres"},
		{"", "Redis seems like the best fit, let's go with it.", "Use Redis"},
		{"", "+1 to Redis", "Use Redis"},
		{"", "We're on Postgres, right?", ""},
	} {
		var msgs []dialect.Message
		if tc.assistant != "" {
			msgs = append(msgs, dialect.Message{Role: "assistant", Text: tc.assistant})
		}
		c := markers(t, capsule.New("s", "a"), 0, append(msgs, dialect.Message{Role: "user", Text: tc.user})...)
		var got []string
		for _, d := range c.Decisions {
			got = append(got, d.Statement)
		}
		if tc.want == "" && len(got) > 0 || tc.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], tc.want)) {
			t.Errorf("%q: decisions %q, want %q", tc.user, got, tc.want)
		}
	}
}

// "Mongo is a no" turns Mongo down (it recorded "Mongo is a"); "I really
// don't want to pull in Lodash" turns Lodash down (it read as nothing).
func TestMarkersMoreRejections(t *testing.T) {
	for _, tc := range []struct{ say, want string }{
		{"Mongo is a no.", "Mongo"},
		{"I really don't want to pull in Lodash.", "Lodash"},
	} {
		c := markers(t, capsule.New("s", "a"), 0, dialect.Message{Role: "user", Text: tc.say})
		if len(c.Rejected) != 1 || c.Rejected[0].Text != tc.want {
			t.Errorf("%q: rejected %+v, want %q", tc.say, c.Rejected, tc.want)
		}
	}
}

// "Keep the public API backwards compatible" and "use snake_case for DB
// columns" are lasting rules (both read as nothing); "use uppercase for
// the constant" is a one-off.
func TestMarkersKeptStatesAndNaming(t *testing.T) {
	for _, tc := range []struct {
		say  string
		rule bool
	}{
		{"Keep the public API backwards compatible.", true},
		{"Keep the CLI flags stable.", true},
		{"Use snake_case for DB columns.", true},
		{"Use uppercase for the constant.", false},
		{"Keep it simple.", false},
	} {
		c := markers(t, capsule.New("s", "a"), 0, dialect.Message{Role: "user", Text: tc.say})
		if got := len(c.Constraints) == 1 && len(c.Decisions) == 0; got != tc.rule {
			t.Errorf("%q: read as a rule %v, want %v:\n%s", tc.say, got, tc.rule, capsule.Render(c))
		}
	}
}

// sayWant is a user turn and the option its one decision names ("" for
// none).
type sayWant struct{ say, want string }

// wantOneDecision reads each turn on its own and checks that it records
// one decision naming want, or none.
func wantOneDecision(t *testing.T, cases []sayWant) {
	t.Helper()
	for _, tc := range cases {
		c := markers(t, capsule.New("s", "a"), 0, dialect.Message{Role: "user", Text: tc.say})
		active, _ := sections(t, c)
		if got := strings.Contains(active, "D1:"); got != (tc.want != "") || tc.want != "" && !strings.Contains(active, tc.want) {
			t.Errorf("%q: want a decision naming %q:\n%s", tc.say, tc.want, capsule.Render(c))
		}
	}
}

// A change that names its own part ("move the backend to a small Go
// service") does not replace the newest decision when that one is about
// another part with options of another kind ("expo-router for
// navigation" was listed as replaced); "switch the bundler to Webpack"
// still replaces "Vite with React for the dashboard", both bundlers.
func TestMarkersChangeOfAnotherPart(t *testing.T) {
	playSession(t, []sessionStep{
		says("let's use expo-router for navigation", []string{"expo-router"}, nil, nil),
		says("Hmm, Supabase's row level security is going to be painful. Move the backend to a small Go service with Postgres on Fly.", []string{"expo-router", "Go service"}, nil, nil),
	})
	playSession(t, []sessionStep{
		says("Use Vite with React for the dashboard.", []string{"Vite"}, nil, nil),
		says("Switch the bundler to Webpack.", []string{"Webpack"}, []string{"Vite"}, nil),
	})
}

// A mind changed about what a rule or a decision asked for: "no X after
// all" and "not X, Y" turn X down and choose Y (Y was read as a second
// option turned down, or the whole turn as a rule), and a rule that asked
// for what is turned down is lifted (it stayed in force beside the
// rejection: "The API should be GraphQL" and "GraphQL: do not use").
func TestMarkersTurnedDownAfterAll(t *testing.T) {
	playSession(t, []sessionStep{
		says("The API should be GraphQL.", []string{"GraphQL"}, nil, nil),
		says("No GraphQL after all — plain REST with OpenAPI.", []string{"plain REST with OpenAPI"}, []string{"GraphQL"}, []string{"GraphQL"}),
		says("Max 200ms p95 latency for the search endpoint.", []string{"200ms p95"}, nil, nil),
		says("Let's drop the 200ms target, 500ms is fine.", nil, []string{"200ms"}, []string{"200ms target"}),
		says("Never use MongoDB.", []string{"Never use MongoDB"}, nil, nil),
		says("No MongoDB after all.", []string{"Never use MongoDB"}, nil, []string{"MongoDB"}),
		says("Not Redis, Memcached.", []string{"Memcached"}, []string{"Redis"}, []string{"Redis"}),
		says("No Helm anymore; we'll use Kustomize.", []string{"Kustomize"}, []string{"Helm"}, []string{"Helm"}),
	})
}

// A change whose reason judges an option by its name that no decision
// holds ("victory-native is heavy, use … instead" when the charts library
// was never recorded) replaces that option, not the newest decision (which
// was listed as rejected); one whose reason judges a held option, or no
// option by name, replaces as before.
func TestMarkersJudgedOptionNeverRecorded(t *testing.T) {
	playSession(t, []sessionStep{
		says("Auth goes through Okta.", []string{"Okta"}, nil, nil),
		says("actually victory-native is heavy, use react-native-svg-charts instead", []string{"Okta", "react-native-svg-charts"}, nil, []string{"victory-native"}),
		says("Use Postgres for the database.", []string{"Postgres"}, nil, nil),
		says("actually Postgres is overkill, use SQLite instead", []string{"SQLite", "Okta"}, []string{"Postgres"}, []string{"Postgres"}),
		says("Use Vite as the bundler.", []string{"Vite"}, nil, nil),
		says("actually the bundler is slow, use esbuild instead", []string{"esbuild", "SQLite"}, []string{"Vite"}, []string{"Vite"}),
	})
}

// What a part is written in, said as the instruction to write it: "Write
// the CLI in Rust" was read as a text asked for (a summary, a README) and
// recorded nothing; "Build the frontend in Svelte" kept the verb in its
// part ("Use Svelte for build the frontend"), so the same part said with
// "write" was another subject.
func TestMarkersWrittenIn(t *testing.T) {
	wantOneDecision(t, []sayWant{
		{"Write the CLI in Rust.", "Use Rust for the cli"},
		{"Write the backend in Go.", "Use Go for the backend"},
		{"Build the frontend in Svelte.", "Use Svelte for the frontend"},
		{"Write the README in English.", ""},
		{"Write a summary in French.", ""},
		{"Write a test for the parser.", ""},
	})
	playSession(t, []sessionStep{
		says("Build the CLI in Go.", []string{"Go for the cli"}, nil, nil),
		says("Actually, write the CLI in Rust.", []string{"Rust for the cli"}, []string{"Go for the cli"}, nil),
	})
}

// A part and its option after a colon, the option a package name in lower
// case ("charts: victory-native"), was read as nothing; a label before a
// remark or a code stays nothing.
func TestMarkersPartColonPackage(t *testing.T) {
	wantOneDecision(t, []sayWant{
		{"charts: victory-native", "Use victory-native for charts"},
		{"Icons: lucide-react", "Use lucide-react for icons"},
		{"Forms: react-hook-form", "Use react-hook-form for forms"},
		{"Note: the build is slow", ""},
		{"TODO: fix-the-build", ""},
		{"Update: v2.3.1", ""},
	})
}

// A stack listed after "for this project:" or "the stack is" is one
// decision an option (it read as nothing, or "The stack is Next.js,
// Prisma and Postgres" as "Use Prisma and Postgres", Next.js lost), and
// what follows "… instead," is why the change was made, not part of it.
func TestMarkersStackListed(t *testing.T) {
	for _, say := range []string{
		"ok so for this project: Next.js with the app router, Prisma, and Postgres on Neon.",
		"The stack is Next.js, Prisma and Postgres.",
	} {
		c := markers(t, capsule.New("s", "a"), 0, dialect.Message{Role: "user", Text: say})
		if len(c.Decisions) != 3 {
			t.Errorf("%q: want three decisions:\n%s", say, capsule.Render(c))
		}
		wantSections(t, c, []string{"Use Next.js", "Use Prisma", "Use Postgres"}, nil)
	}
	c := playSession(t, []sessionStep{
		says("Deploy everything on Vercel.", []string{"Vercel"}, nil, nil),
		says("Actually, host the API on Fly.io instead, Vercel functions time out.", []string{"Fly.io"}, nil, nil),
	})
	if d := c.Decisions[len(c.Decisions)-1]; strings.Contains(d.Statement, "time out") || !strings.Contains(d.Rationale, "Vercel functions time out") {
		t.Errorf("the reason is not the decision's rationale:\n%s", capsule.Render(c))
	}
}

// A part of an earlier subject named before the verb ("Admin auth goes
// through Okta" after "Auth goes through Auth0", "Nightly tests run on
// Buildkite") is a subject of its own, as one named after "for" was; a
// word that says how a part is done ("structured logging") names no part
// of its own and replaces (it kept zap beside zerolog).
func TestMarkersPartNamedBeforeTheVerb(t *testing.T) {
	playSession(t, []sessionStep{
		says("Auth goes through Auth0.", []string{"Auth0"}, nil, nil),
		says("Admin auth goes through Okta.", []string{"Auth0", "Okta"}, nil, nil),
		says("Tests run on GitHub Actions.", []string{"GitHub Actions"}, nil, nil),
		says("Nightly tests run on Buildkite.", []string{"GitHub Actions", "Buildkite"}, nil, nil),
		says("Use zap for logging.", []string{"zap"}, nil, nil),
		says("Use zerolog for structured logging.", []string{"zerolog"}, []string{"zap"}, nil),
		says("Use Postgres for the database.", []string{"Postgres"}, nil, nil),
		says("Actually use MySQL for the main database.", []string{"MySQL"}, []string{"Postgres"}, nil),
	})
}

// Options passed over in everyday words: "rather than X, let's use Y"
// (X was neither replaced nor turned down), "ditch X — Y is way faster"
// (Y was read as the reason only) and "migrating to X isn't worth it"
// ("Use Fastify isn't worth it" was recorded as a decision).
func TestMarkersPassedOver(t *testing.T) {
	playSession(t, []sessionStep{
		says("Rather than Kafka, let's use NATS.", []string{"NATS"}, []string{"Kafka"}, []string{"Kafka"}),
		says("Use Webpack as the bundler.", []string{"Webpack"}, nil, nil),
		says("Ditch Webpack — Vite is way faster.", []string{"Vite"}, []string{"Webpack"}, []string{"Webpack"}),
		says("Keep Express; migrating to Fastify isn't worth it.", []string{"Express"}, []string{"Fastify"}, []string{"Fastify"}),
		says("Adding Redis isn't worth it.", []string{"NATS", "Vite"}, []string{"Redis"}, []string{"Redis"}),
	})
}

// Short imperatives that read as nothing: a runtime targeted, a check
// mode used, a part not to be touched. A target with no name stays a
// requirement.
func TestMarkersShortImperatives(t *testing.T) {
	wantOneDecision(t, []sayWant{
		{"Target Node 20.", "Target Node 20"},
		{"Use TypeScript strict mode.", "TypeScript strict mode"},
		{"Target 60 fps.", ""},
	})
	playSession(t, []sessionStep{
		says("Target Node 20.", []string{"Node 20"}, nil, nil),
		says("Actually, target Node 22.", []string{"Node 22"}, []string{"Node 20"}, nil),
		says("Leave the migrations folder alone.", []string{"Leave the migrations folder alone"}, nil, nil),
	})
}

// A proposed plan accepted with changes said in words: a step left out
// ("looks good, skip step 2" recorded no plan at all: only "… but" or
// "… and" opened a change) and steps moved by what they say ("do tests
// before the handlers" was left unread).
func TestMarkersPlanChangedInWords(t *testing.T) {
	const plan = "I propose this plan:\n1. Add the schema\n2. Write the repository layer\n3. Add the HTTP handlers\n4. Write tests\nShall I proceed?"
	for _, tc := range []struct {
		reply string
		want  []string
	}{
		{"looks good, skip step 2", []string{"Add the schema", "Add the HTTP handlers", "Write tests"}},
		{"ok, drop the repository layer step", []string{"Add the schema", "Add the HTTP handlers", "Write tests"}},
		{"yes, but do tests before the handlers", []string{"Add the schema", "Write the repository layer", "Write tests", "Add the HTTP handlers"}},
		{"sounds good, but do 4 before 3", []string{"Add the schema", "Write the repository layer", "Write tests", "Add the HTTP handlers"}},
		{"yes, go ahead", []string{"Add the schema", "Write the repository layer", "Add the HTTP handlers", "Write tests"}},
	} {
		c := markers(t, capsule.New("s", "a"), 0, dialect.Message{Role: "assistant", Text: plan}, dialect.Message{Role: "user", Text: tc.reply})
		var got []string
		if c.LatestPlan != nil {
			for _, st := range c.LatestPlan.Steps {
				got = append(got, st.Text)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q: plan %q, want %q", tc.reply, got, tc.want)
		}
	}
}

// Replies to the assistant's closing offer: "nope, Cloud Run" chose Cloud
// Run (it was kept as the reason for turning down "AWS", the name cut
// short), "no, keep it simple with a cron job" turns BullMQ down, "neither,
// use valibot" turns both options down, and "yes go ahead" to "Should I
// switch the ORM to Drizzle?" settles the switch (it settled nothing).
func TestMarkersRepliesToAnOffer(t *testing.T) {
	for _, tc := range []struct {
		offer, reply     string
		active, rejected []string
	}{
		{"I'll deploy it to AWS Lambda then.", "nope, Cloud Run", []string{"Use Cloud Run"}, []string{"AWS Lambda"}},
		{"Should the worker use BullMQ?", "no, keep it simple with a cron job", []string{"cron job"}, []string{"BullMQ"}},
		{"Do you want me to use Zod or Yup for validation?", "neither, use valibot", []string{"valibot"}, []string{"Zod", "Yup"}},
		{"Should I switch the ORM to Drizzle as discussed?", "yes go ahead", []string{"Switch the ORM to Drizzle"}, nil},
		{"I'll move the background jobs to Temporal.", "sounds good", []string{"Move the background jobs to Temporal"}, nil},
		{"Should I run the tests now?", "yes", nil, nil},
	} {
		c := markers(t, capsule.New("s", "a"), 0, dialect.Message{Role: "assistant", Text: tc.offer}, dialect.Message{Role: "user", Text: tc.reply})
		if tc.active == nil && len(c.Decisions)+len(c.Rejected) > 0 {
			t.Errorf("%q to %q settled something:\n%s", tc.reply, tc.offer, capsule.Render(c))
		}
		wantSections(t, c, tc.active, tc.rejected)
	}
}

// A new amount whose unit holds a slash ("make it 200 req/min") updates
// the rule (it was recorded as a decision "make it 200 req/min" beside
// the old limit), and what was left out said to be "back in scope" or
// "back on the table" is no longer listed as rejected.
func TestMarkersBackAgain(t *testing.T) {
	playSession(t, []sessionStep{
		says("Rate limit the public API to 100 req/min per key.", []string{"100 req/min"}, nil, nil),
		says("Actually make it 200 req/min.", []string{"200 req/min per key"}, []string{"100 req/min", "make it"}, nil),
	})
	c := playSession(t, []sessionStep{
		says("Skip the admin panel for the MVP.", nil, nil, []string{"admin panel"}),
		says("We won't support Windows.", nil, nil, []string{"Windows"}),
		says("The admin panel is back in scope.", []string{"admin panel"}, nil, []string{"Windows"}),
		says("Windows is back on the table.", []string{"Windows"}, nil, nil),
	})
	if len(c.Rejected) != 0 {
		t.Errorf("what is back is still listed as rejected:\n%s", capsule.Render(c))
	}
}

// A part and where it is kept, said with its verb ("Put secrets in
// Doppler, not .env files"): the verb is not part of the part ("Use
// Doppler for put secrets"), and what follows "not" is the option turned
// down, not the reason.
func TestMarkersPutIn(t *testing.T) {
	c := markers(t, capsule.New("s", "a"), 0, dialect.Message{Role: "user", Text: "Put secrets in Doppler, not .env files."})
	wantSections(t, c, []string{"Use Doppler for secrets"}, []string{"env files"})
	if act, _ := sections(t, c); strings.Contains(act, "why") {
		t.Errorf("the option turned down is kept as the reason:\n%s", capsule.Render(c))
	}
}

// "Add Redis for caching" was read as the option "Add Redis" ("Use Add
// Redis for caching"; dropping Redis then left "Use Add" active), and a
// judgement, a dash, then the change ("Stripe's fees are too high for us
// — move payments to Paddle") read as nothing.
func TestMarkersAddForAndDashedChange(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("We'll use Stripe for payments.", []string{"Stripe"}, nil, nil),
		says("And Stripe's fees are too high for us — move payments to Paddle.", []string{"Paddle for payments"}, []string{"Stripe"}, nil),
		says("Let's keep Postgres but add Redis for caching.", []string{"Add Redis for caching"}, []string{"Use Add"}, nil),
		says("Remove Redis, caching in Postgres is enough.", []string{"Paddle"}, []string{"Redis", "Add"}, []string{"Redis"}),
	})
	if d := c.Decisions[1]; d.Rationale == "" || strings.HasPrefix(d.Rationale, "And ") {
		t.Errorf("the change to Paddle has no reason of its own:\n%s", capsule.Render(c))
	}
}

// What a rule kept out, now allowed ("OK you can use lodash now" after
// "Never use lodash"), lifts the rule; a rule named by what it is about
// ("Drop the coverage requirement") is lifted; and support no longer
// needed retires the decision to support it. Each was left in force.
func TestMarkersRulesLifted(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("Never use lodash.", []string{"Never use lodash"}, nil, nil),
		says("Don't add new dependencies without asking.", []string{"dependencies"}, nil, nil),
		says("We must support IE11.", []string{"IE11"}, nil, nil),
		says("Test coverage must stay above 90%.", []string{"90%"}, nil, nil),
		says("OK you can use lodash now.", []string{"dependencies", "90%", "IE11"}, []string{"lodash"}, nil),
		says("Feel free to add dependencies from now on.", []string{"90%"}, []string{"dependencies"}, nil),
		says("We no longer need to support IE11.", []string{"90%"}, []string{"IE11"}, nil),
		says("Drop the coverage requirement.", nil, []string{"90%"}, nil),
	})
	if len(c.Decisions)+len(c.Constraints) == 0 {
		t.Fatal("nothing was recorded")
	}
	for _, k := range c.Constraints {
		if k.Status == capsule.StatusActive {
			t.Errorf("rule %q is still in force:\n%s", k.Text, capsule.Render(c))
		}
	}
}

// Permissions and rejections that lift nothing: a hedge, a rule of
// another thing, a permission about "it", and a word as general as
// "tests" turned down ("No tests for now" is no word on the rule that
// tests must pass).
func TestMarkersRulesNotLifted(t *testing.T) {
	playSession(t, []sessionStep{
		says("Never use lodash.", []string{"Never use lodash"}, nil, nil),
		says("Maybe you can use lodash later.", []string{"Never use lodash"}, nil, nil),
		says("You can use Ramda now.", []string{"Never use lodash"}, nil, nil),
		says("All tests must pass before merging.", []string{"All tests must pass"}, nil, nil),
		says("No tests for now.", []string{"All tests must pass", "Never use lodash"}, nil, nil),
		says("Don't edit the generated files.", []string{"generated files"}, nil, nil),
		says("You can edit it now.", []string{"generated files"}, nil, nil),
	})
}

// A proposed plan accepted together with a decision ("sounds good, use
// Redis for the cache") records both; only the decision was recorded.
func TestMarkersPlanAcceptedWithADecision(t *testing.T) {
	const plan = "I propose this plan:\n1. Add the schema\n2. Write the repository layer\n3. Add the HTTP handlers\nShall I proceed?"
	for _, reply := range []string{"sounds good, use Redis for the cache", "ok, and use Redis for the cache"} {
		c := markers(t, capsule.New("s", "a"), 0, dialect.Message{Role: "assistant", Text: plan}, dialect.Message{Role: "user", Text: reply})
		if c.LatestPlan == nil || len(c.LatestPlan.Steps) != 3 {
			t.Errorf("%q: the plan was not recorded:\n%s", reply, capsule.Render(c))
		}
		wantSections(t, c, []string{"Use Redis for the cache"}, nil)
	}
	c := markers(t, capsule.New("s", "a"), 0, dialect.Message{Role: "assistant", Text: plan}, dialect.Message{Role: "user", Text: "sounds good, but wait until Monday"})
	if c.LatestPlan != nil {
		t.Errorf("a plan held back was recorded:\n%s", capsule.Render(c))
	}
}

// "Let's just use …" (the "just" made it nothing) and what the thing being
// built must never do, said of it ("It should never delete remote files
// unless I pass --prune"); a question or a report of what it does is no
// rule.
func TestMarkersJustAndNeverOfIt(t *testing.T) {
	wantOneDecision(t, []sayWant{
		{"Let's just use the standard flag package.", "Use the standard flag package"},
	})
	for _, tc := range []struct {
		say  string
		rule bool
	}{
		{"It should never delete remote files unless I pass --prune.", true},
		{"The sync tool must never overwrite local notes.", true},
		{"Should it never delete remote files?", false},
		{"It never deletes remote files.", false},
	} {
		c := markers(t, capsule.New("s", "a"), 0, dialect.Message{Role: "user", Text: tc.say})
		if got := len(c.Constraints) == 1; got != tc.rule {
			t.Errorf("%q: read as a rule %v, want %v:\n%s", tc.say, got, tc.rule, capsule.Render(c))
		}
	}
}

// Two parts and their options in one sentence ("The backend is Django
// and the frontend is React": nothing, or only the first with a comma)
// and the stack said as what the user uses ("I'm using SvelteKit and
// Supabase": nothing); a report of what the user runs is no decision.
func TestMarkersPartsAndStackSaid(t *testing.T) {
	for _, tc := range []struct {
		say  string
		want []string
	}{
		{"The backend is Django and the frontend is React.", []string{"Use Django for the backend", "Use React for the frontend"}},
		{"The backend is Django, the frontend is React.", []string{"Use Django for the backend", "Use React for the frontend"}},
		{"I'm using SvelteKit and Supabase.", []string{"Use SvelteKit", "Use Supabase"}},
		{"I'm using Chrome 120 and the page breaks.", nil},
		{"The bug is real and the fix is easy.", nil},
	} {
		c := markers(t, capsule.New("s", "a"), 0, dialect.Message{Role: "user", Text: tc.say})
		if len(c.Decisions) != len(tc.want) {
			t.Errorf("%q: %d decisions, want %d:\n%s", tc.say, len(c.Decisions), len(tc.want), capsule.Render(c))
		}
		wantSections(t, c, tc.want, nil)
	}
}

// The language's own library as the choice ("Use the stdlib only", "Use
// the standard library flag package") read as nothing.
func TestMarkersStandardLibrary(t *testing.T) {
	wantOneDecision(t, []sayWant{
		{"Use the stdlib only.", "Use the stdlib only"},
		{"Use the standard library flag package.", "standard library flag package"},
		{"Use net/http from the standard library.", "net/http"},
	})
}

// "I'd go with Tailwind" read as nothing, and "Sticking with Tailwind" as
// Tailwind for "sticking".
func TestMarkersSoftPicks(t *testing.T) {
	wantOneDecision(t, []sayWant{
		{"I'd go with Tailwind.", "Use Tailwind"},
		{"Sticking with Tailwind.", "Use Tailwind"},
	})
	c := markers(t, capsule.New("s", "a"), 0, dialect.Message{Role: "user", Text: "Sticking with Tailwind."})
	if act, _ := sections(t, c); strings.Contains(act, "sticking") {
		t.Errorf("the verb is read as a part:\n%s", capsule.Render(c))
	}
}

// A switch already made ("We've switched from Yarn to pnpm", "We moved to
// pnpm last week") and "pnpm from here on" read as nothing; what holds now
// replaces what was decided.
func TestMarkersSwitchAlreadyMade(t *testing.T) {
	wantOneDecision(t, []sayWant{
		{"We moved to pnpm last week.", "Use pnpm"},
		{"pnpm from here on.", "pnpm"},
		{"We moved to the new office last week.", ""},
	})
	playSession(t, []sessionStep{
		says("Use Yarn for packages.", []string{"Yarn"}, nil, nil),
		says("We've switched from Yarn to pnpm.", []string{"pnpm"}, []string{"Yarn"}, nil),
	})
}

// A change whose reason judges a held option named in lower case
// ("victory-native is heavy, use …" after "charts: victory-native")
// replaces that option's decision; the reason's names were looked up
// only when capitalised, so the newest decision (about auth) was replaced.
func TestMarkersJudgedPackageHeld(t *testing.T) {
	playSession(t, []sessionStep{
		says("charts: victory-native", []string{"victory-native"}, nil, nil),
		says("Auth goes through Okta.", []string{"Okta"}, nil, nil),
		says("actually victory-native is heavy, use react-native-svg-charts instead", []string{"Okta", "react-native-svg-charts"}, []string{"victory-native"}, nil),
	})
}

// A rule said again, then given another amount: the update replaces it.
// The second saying was kept as a copy of the rule, and the update reached
// only the copy, leaving "Max 3 retries per job" in force beside "Max 5".
func TestMarkersRuleSaidAgainThenUpdated(t *testing.T) {
	steps := []sessionStep{
		says("Max 3 retries per job.", []string{"Max 3 retries"}, nil, nil),
		says("Remember: max 3 retries per job.", []string{"Max 3 retries"}, nil, nil),
		says("Make it 5 retries.", []string{"5 retries"}, []string{"3 retries"}, nil),
	}
	playSession(t, steps)

	// The same turns read at once, as a history seen for the first time.
	var msgs []dialect.Message
	for _, st := range steps {
		msgs = append(msgs, st.msgs[0], dialect.Message{Role: "assistant", Text: "Done."})
	}
	c := markers(t, capsule.New("s", "a"), 0, msgs...)
	if act, _ := sections(t, c); !strings.Contains(act, "5 retries") || strings.Contains(act, "3 retries") {
		t.Errorf("read at once, the rule is not the updated one alone:\n%s", capsule.Render(c))
	}
}

// Going back to the choice a change had replaced, in fewer words ("Undo
// that, Jest is fine" after "Use Jest for tests", "Switch to Vitest"),
// takes that decision back: it was recorded as a new "Use Jest" beside
// "D1: Use Jest for tests (superseded by D2)" under REJECTED, so the
// agent read Jest both as chosen and as never to be used again.
func TestMarkersTakenBackInFewerWords(t *testing.T) {
	for _, back := range []string{"Undo that, Jest is fine.", "Actually, go back to Jest.", "Let's use Jest after all."} {
		c := playSession(t, []sessionStep{
			says("Use Jest for tests.", []string{"Jest"}, nil, nil),
			says("Switch to Vitest.", []string{"Vitest"}, nil, nil),
			says(back, []string{"Use Jest for tests"}, []string{"Vitest"}, []string{"Vitest"}),
		})
		if r := capsule.Render(c); strings.Count(r, "Jest") != 1 {
			t.Errorf("%q: Jest is listed %d times, want once (in force):\n%s", back, strings.Count(r, "Jest"), r)
		}
	}
}

// A plan accepted with two changes joined by "and" ("yes, but skip the
// tests and use Vitest") makes both: the reply's part was read whole,
// and neither the skipped step nor the decision was recorded.
func TestMarkersPlanAcceptedWithTwoChanges(t *testing.T) {
	const plan = "I propose this plan:\n1. Add the schema\n2. Write the repository layer\n3. Add the tests\nShall I proceed?"
	for _, tc := range []struct{ reply, decided string }{
		{"yes, but skip the tests and use Vitest", "Vitest"},
		{"yes, but use Vitest and skip the tests", "Vitest"},
		{"sounds good, but skip step 3 and use Postgres", "Postgres"},
	} {
		c := playSession(t, []sessionStep{asked(plan, tc.reply, []string{"Add the schema", tc.decided}, []string{"Add the tests"}, nil)})
		if c.LatestPlan == nil || c.LatestPlan.Status != capsule.PlanAccepted {
			t.Errorf("%q: no accepted plan:\n%s", tc.reply, capsule.Render(c))
		}
	}
}

// A turn that only judges an option not worth taking turns it down, with
// the judgement as its reason ("Moving to Kubernetes would be overkill"
// read as nothing: "would" made it a hedge). Judgements of what is not an
// option, or said beside a choice, are not read so.
func TestMarkersJudgedNotWorthAlone(t *testing.T) {
	for _, tc := range []struct{ say, option, why string }{
		{"Moving to Kubernetes would be overkill.", "Kubernetes", "overkill"},
		{"Honestly Kafka is overkill for three events a day.", "Kafka", "three events a day"},
		{"Adding Redis is unnecessary right now.", "Redis", "unnecessary"},
		{"Microservices are overkill for a team of two.", "Microservices", "team of two"},
	} {
		c := playSession(t, []sessionStep{says(tc.say, nil, nil, []string{tc.option})})
		if len(c.Rejected) != 1 || c.Rejected[0].Text != tc.option || !strings.Contains(c.Rejected[0].Reason, tc.why) {
			t.Errorf("%q: want %s rejected for %q:\n%s", tc.say, tc.option, tc.why, capsule.Render(c))
		}
	}
	for _, say := range []string{"This is overkill.", "The retry logic is over-engineered.", "That would be overkill for now."} {
		if items := readTurn(say); len(items) > 0 {
			t.Errorf("%q read as %v", say, items)
		}
	}
}

// "Change the database to MySQL" switches that part, as "switch" does;
// "change" of what is no part of the product is an edit, not a choice.
// "We're not going to use Terraform" turns Terraform down. Each read as
// nothing.
func TestMarkersChangeToAndNotGoingTo(t *testing.T) {
	playSession(t, []sessionStep{
		says("Use Postgres for the database.", []string{"Postgres"}, nil, nil),
		says("Change the database to MySQL.", []string{"MySQL"}, []string{"Postgres"}, []string{"Postgres"}),
		says("Let's change the auth provider from Auth0 to Clerk.", []string{"Clerk", "MySQL"}, []string{"Auth0"}, []string{"Auth0"}),
		says("Change the function name to parseConfig.", []string{"Clerk", "MySQL"}, []string{"parseConfig"}, nil),
		says("We're not going to use Terraform.", []string{"Clerk", "MySQL"}, nil, []string{"Terraform"}),
	})
}

// "No more than 100 lines per function" is a bound, read as a rule as
// "At most 100 lines per function" is; its "No" read it as an option
// turned down, and no option was found.
func TestMarkersNoMoreThanIsABound(t *testing.T) {
	playSession(t, []sessionStep{
		says("No more than 100 lines per function.", []string{"No more than 100 lines per function"}, nil, nil),
		says("No more than 5 concurrent uploads per user.", []string{"5 concurrent uploads per user"}, nil, nil),
	})
}

// "Scrap the Redis idea" turns down Redis, not a thing called "Redis
// idea": when the user takes Redis back, it is no longer listed as
// rejected beside the decision that uses it.
func TestMarkersIdeaOfAnOptionTakenBack(t *testing.T) {
	for _, c := range []struct{ drop, back, option string }{
		{"Scrap the Redis idea.", "Actually, let's use Redis for the cache after all.", "Redis"},
		{"Drop the Kafka plan, too much to run.", "OK, let's use Kafka for the events after all.", "Kafka"},
		{"Forget the GraphQL approach.", "Let's use GraphQL for the public API after all.", "GraphQL"},
	} {
		t.Run(c.option, func(t *testing.T) {
			cap := playSession(t, []sessionStep{
				says("Use Postgres for the database.", []string{"Postgres"}, nil, nil),
				says(c.drop, []string{"Postgres"}, nil, []string{c.option}),
			})
			if _, rejected := sections(t, cap); strings.Contains(rejected, c.option+" idea") || strings.Contains(rejected, c.option+" plan") || strings.Contains(rejected, c.option+" approach") {
				t.Errorf("rejected as more than the option:\n%s", capsule.Render(cap))
			}
			cap = markers(t, cap, 4, dialect.Message{Role: "user", Text: c.back})
			if active, rejected := sections(t, cap); !strings.Contains(active, c.option) || strings.Contains(rejected, c.option) {
				t.Errorf("%q taken back, the capsule still turns it down:\n%s", c.option, capsule.Render(cap))
			}
		})
	}
}

// "I'd rather we use Postgres than MySQL", "I'd prefer we use Vitest over
// Jest": the first replaces the second, as "instead of" says it.
func TestMarkersRatherThanReplaces(t *testing.T) {
	playSession(t, []sessionStep{
		says("Use MySQL for the database.", []string{"MySQL"}, nil, nil),
		says("I'd rather we use Postgres than MySQL here.", []string{"Use Postgres"}, []string{"MySQL"}, []string{"MySQL"}),
		says("Tests run on Jest.", []string{"Jest"}, nil, nil),
		says("I'd prefer we use Vitest over Jest.", []string{"Use Vitest"}, []string{"Jest"}, []string{"Jest"}),
	})
	// "over" before what a thing travels over is no alternative: the
	// HTTP/2 decision stays.
	playSession(t, []sessionStep{
		says("Use HTTP/2 for the public API.", []string{"HTTP/2"}, nil, nil),
		says("Use gRPC over HTTP/2 for the internal calls.", []string{"HTTP/2 for the public API", "gRPC"}, nil, nil),
	})
}

// "The frontend will be in Svelte": a part of the product and what it is
// made with, said in the future tense; a meeting in Berlin is no choice.
func TestMarkersPartWillBeIn(t *testing.T) {
	playSession(t, []sessionStep{
		says("The frontend will be in Svelte.", []string{"Svelte"}, nil, nil),
		says("The backend will be written in Rust.", []string{"Svelte", "Rust"}, nil, nil),
		says("The meeting will be in Berlin.", []string{"Svelte", "Rust"}, []string{"Berlin"}, nil),
	})
}

// A bound said with its number in words is a bound as with digits.
func TestMarkersBoundInWords(t *testing.T) {
	playSession(t, []sessionStep{
		says("At most two database calls per request.", []string{"two database calls per request"}, nil, nil),
		says("No more than three retries per job.", []string{"three retries per job"}, nil, nil),
	})
}

// "We should use Go for the backend": "Go" after "use" is the language
// (the word alone is a verb too); "we should use caution" chooses nothing.
func TestMarkersShouldUseGo(t *testing.T) {
	playSession(t, []sessionStep{
		says("We should use Go for the backend.", []string{"Use Go for the backend"}, nil, nil),
		says("We should use caution with the migration.", []string{"Go"}, []string{"caution"}, nil),
	})
}

// "From now on" before a bare imperative is a standing rule, whatever its
// verb; "the linter" in it is what the rule runs, not what a linter said.
func TestMarkersFromNowOnImperative(t *testing.T) {
	playSession(t, []sessionStep{
		says("From now on, run the linter before every commit.", []string{"Run the linter before every commit"}, nil, nil),
		says("also from now on write tests first", []string{"Write tests first", "Run the linter"}, nil, nil),
		says("The linter says: \"always use errors.Is\". Fix those warnings.", []string{"Write tests first"}, []string{"errors.Is"}, nil),
	})
}

// A package named in lower case with a hyphen or a dot is an option
// ("use pg-boss"), as a capitalised name is.
func TestMarkersUseLowerCasePackage(t *testing.T) {
	playSession(t, []sessionStep{
		asked("For the queue, I'd suggest BullMQ. Should I proceed?", "nah, not BullMQ. use pg-boss, we already have postgres", []string{"pg-boss"}, nil, []string{"BullMQ"}),
		says("Use date-fns for dates.", []string{"pg-boss", "date-fns"}, nil, nil),
	})
}

// "No Sentry, we self-host GlitchTip": one option turned down and what is
// done instead, not a rule made of both; "please" closing a choice is not
// part of the option.
func TestMarkersNoThenInstead(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("No Sentry, we self-host GlitchTip.", []string{"GlitchTip"}, []string{"Sentry"}, []string{"Sentry"}),
		says("hmm actually no prisma — drizzle please", []string{"Use drizzle"}, nil, []string{"prisma"}),
	})
	if active, _ := sections(t, c); strings.Contains(active, "please") {
		t.Errorf("the request's \"please\" kept as part of the option:\n%s", capsule.Render(c))
	}
}

// Options an agent lists a line each ("1. Redis", "2. **Memcached** —
// lighter") are picked by their number as inline ones are.
func TestMarkersPickFromListedOptions(t *testing.T) {
	const q = "I can set up the cache. Options:\n1. Redis\n2. **Memcached** — lighter, no persistence\n3. In-process LRU\nWhich do you prefer?"
	playSession(t, []sessionStep{
		asked(q, "lets go with 2", []string{"Use Memcached"}, []string{"Use 2", "Redis"}, nil),
	})
	playSession(t, []sessionStep{
		asked(q, "the first one", []string{"Use Redis"}, []string{"Memcached"}, nil),
	})
}

// "hm no, use the existing logger" to "I'll add winston for logging":
// the "no" turns down the agent's offer, and what the user chooses
// replaces that offer, not the user's own newest decision.
func TestMarkersNoToTheOfferKeepsOwnDecision(t *testing.T) {
	for _, reply := range []string{"hm no, use the existing logger", "no, use the existing logger"} {
		playSession(t, []sessionStep{
			says("Use SQLite for storage.", []string{"SQLite"}, nil, nil),
			asked("SQLite it is. I'll add winston for logging.", reply, []string{"SQLite", "use the existing logger"}, nil, []string{"winston"}),
		})
	}
}

// Terse answers to an agent's either-or question: "k, sqlite is fine for
// now", "env vars, no yaml files" (the pick beside what is turned down),
// "fastify instead".
func TestMarkersTerseAnswers(t *testing.T) {
	playSession(t, []sessionStep{
		asked("For storage, Postgres or SQLite?", "k, sqlite is fine for now", []string{"sqlite"}, nil, nil),
		asked("Config: YAML files or env vars?", "env vars, no yaml files", []string{"sqlite", "Env vars"}, nil, []string{"yaml files"}),
		asked("I'll use Express for the server. OK?", "fastify instead", []string{"Use fastify"}, nil, nil),
	})
}

// "use fastify anyway", "use vitest then": the choice, with a word after
// it that says nothing of it.
func TestMarkersUseThenAnyway(t *testing.T) {
	playSession(t, []sessionStep{
		says("use fastify anyway", []string{"fastify"}, nil, nil),
		says("use vitest then", []string{"fastify", "vitest"}, nil, nil),
	})
}

// "Change of plan: skip step 2 and do step 4 first" cancels step 2 of the
// accepted plan; read whole, it was one decision of both changes, and the
// step stayed pending.
func TestMarkersPlanStepsChangedTogether(t *testing.T) {
	c := playSession(t, []sessionStep{
		asked("Plan:\n1. Add the schema\n2. Write the importer\n3. Add the API\n4. Add auth\n\nShall I start?", "sounds good", nil, nil, nil),
	})
	c = markers(t, c, 2, dialect.Message{Role: "assistant", Text: "Schema added."}, dialect.Message{Role: "user", Text: "Change of plan: skip step 2 and do step 4 first"})
	r := capsule.Render(c)
	if !strings.Contains(r, "[cancelled] Write the importer") {
		t.Errorf("step 2 not cancelled:\n%s", r)
	}
	if active, _ := sections(t, c); strings.Contains(active, "D1") {
		t.Errorf("the plan's change recorded as a decision:\n%s", r)
	}
}

// A fault found with an option in one sentence is why the change in the
// next replaces it ("SQS has no priorities. let's do Redis streams
// instead"), and going back to an option replaced before undoes the
// replacement, whatever kind of option replaced it ("go back to what we
// had before, SQS"); going to the same option for another part does not.
func TestMarkersFaultFoundThenBackAgain(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("use RabbitMQ for the job queue", []string{"RabbitMQ"}, nil, nil),
		says("actually switch the queue to SQS, we're all-in on AWS", []string{"SQS"}, []string{"RabbitMQ"}, nil),
		says("hmm SQS has no priorities. let's do Redis streams instead", []string{"Redis streams", "SQS has no priorities"}, []string{"SQS for the queue"}, nil),
		says("ugh, go back to what we had before, SQS", []string{"Use SQS for the queue"}, []string{"Redis streams", "what we had"}, nil),
		says("and don't use RabbitMQ again, ops hates it", []string{"SQS"}, nil, []string{"RabbitMQ"}),
	})
	if _, rejected := sections(t, c); strings.Contains(rejected, "RabbitMQ again") {
		t.Errorf("\"again\" kept as part of the option turned down:\n%s", capsule.Render(c))
	}
	playSession(t, []sessionStep{
		says("use SQS for the job queue", []string{"SQS"}, nil, nil),
		says("hmm SQS has no priorities. let's do Redis streams instead", []string{"Redis streams"}, []string{"SQS for the job queue"}, nil),
		says("actually use SQS for the email notifications", []string{"Redis streams", "SQS for the email notifications"}, nil, nil),
	})
}

// Rules taken back in everyday words: a permission with its reason after
// it ("you can use lodash now, it's tree-shaken"), said with "we" ("we can
// push to main directly now, I'm the only dev"), and a rule taken back by
// what it was about ("forget what I said about tabs", which asked for
// something rather than keeping it out).
func TestMarkersRulesLiftedInEverydayWords(t *testing.T) {
	playSession(t, []sessionStep{
		says("never use lodash. always use tabs. never push to main directly. max 3 retries per job.", []string{"lodash", "tabs", "push to main", "3 retries"}, nil, nil),
		says("you can use lodash now, it's tree-shaken", []string{"tabs", "push to main", "3 retries"}, []string{"lodash"}, nil),
		says("forget what I said about tabs", []string{"push to main", "3 retries"}, []string{"tabs", "lodash"}, nil),
		says("we can push to main directly now, I'm the only dev", []string{"3 retries"}, []string{"push to main", "tabs", "lodash"}, nil),
	})
}

// "lodash is fine now" lifts the rule against lodash; "the build is fine
// now" reports a fix and lifts nothing.
func TestMarkersOptionFineNow(t *testing.T) {
	playSession(t, []sessionStep{
		says("never use lodash. never touch the build config.", []string{"lodash", "build config"}, nil, nil),
		says("the build is fine now", []string{"lodash", "build config"}, nil, nil),
		says("lodash is fine now, it's tree-shaken", []string{"build config"}, []string{"lodash"}, nil),
	})
}

// A change to an option of the same kind for another part is a decision
// beside the first: "use Postgres for the analytics store" leaves MySQL
// the database, while "Postgres for the main DB" replaces it.
func TestMarkersSameKindOtherPart(t *testing.T) {
	playSession(t, []sessionStep{
		says("Use MySQL for the database.", []string{"MySQL"}, nil, nil),
		says("Actually, use Postgres for the analytics store.", []string{"Use MySQL for the database", "Postgres for the analytics store"}, nil, nil),
	})
	playSession(t, []sessionStep{
		says("Use MySQL for the database.", []string{"MySQL"}, nil, nil),
		says("Actually, use Postgres for the main DB.", []string{"Postgres"}, []string{"MySQL"}, nil),
	})
}

// A new amount for what a rule bounds is the rule's new amount ("raise
// the retries to 5" after "Max 3 retries per job"), said with any of the
// usual verbs; with no rule about it, it is a decision, and a later amount
// for the same thing replaces that decision.
func TestMarkersNewAmountForRule(t *testing.T) {
	playSession(t, []sessionStep{
		says("Max 3 retries per job.", []string{"Max 3 retries per job"}, nil, nil),
		says("Let's raise the retries to 5.", []string{"Max 5 retries per job"}, []string{"3 retries", "Raise the retries"}, nil),
		says("Bump the retries to 1.", []string{"Max 1 retry per job"}, []string{"5 retries", "Bump the retries"}, nil),
	})
	playSession(t, []sessionStep{
		says("Request timeout is 10s.", []string{"Request timeout is 10s"}, nil, nil),
		says("Increase the timeout to 30s.", []string{"Request timeout is 30s"}, []string{"10s", "Increase the timeout"}, nil),
	})
	playSession(t, []sessionStep{
		says("Keep the cache TTL at 5 minutes.", []string{"Keep the cache TTL at 5 minutes"}, nil, nil),
		says("Cut the cache TTL down to 1 minute.", []string{"Keep the cache TTL at 1 minute"}, []string{"5 minutes", "Cut the cache TTL"}, nil),
	})
	playSession(t, []sessionStep{
		says("Max 3 retries per job.", []string{"Max 3 retries per job"}, nil, nil),
		says("Lower the TTL to 60 seconds.", []string{"Max 3 retries per job", "Lower the TTL to 60 seconds"}, nil, nil),
		says("Set the pool size to 20.", []string{"Set the pool size to 20"}, nil, nil),
		says("Raise the pool size to 50.", []string{"Raise the pool size to 50", "Lower the TTL to 60 seconds"}, []string{"pool size to 20"}, nil),
		says("Bump the version to 1.4.2.", nil, []string{"version"}, nil),
	})
}

// What a part of the design is, said as a fact ("Primary keys are
// UUIDv7", "Pagination is cursor-based"), is a decision, and said again
// with another thing replaces it; a property the design must have ("Make
// the API stateless") is a rule. A report of the same shape ("The
// bottleneck is Postgres", "Option A is Redis") and a task ("Make the
// tests pass") are neither.
func TestMarkersDesignFacts(t *testing.T) {
	playSession(t, []sessionStep{
		says("Primary keys are UUIDv7.", []string{"Primary keys are UUIDv7"}, nil, nil),
		says("Actually, primary keys are ULIDs.", []string{"ULIDs"}, []string{"UUIDv7"}, nil),
		says("Pagination is cursor-based.", []string{"Pagination is cursor-based", "ULIDs"}, nil, nil),
		says("Make the API stateless.", []string{"Make the API stateless", "cursor-based"}, nil, nil),
		says("Make every handler idempotent.", []string{"Make every handler idempotent"}, nil, nil),
		says("The bottleneck is Postgres. The problem is CORS. The deadline is Friday. Option A is Redis.", nil, []string{"Postgres", "CORS", "Friday", "Redis"}, nil),
		says("Make the tests pass.", nil, []string{"tests pass"}, nil),
	})
}

// An option picked by its number, then more ("2, and max 3 retries per
// job"), keeps the pick beside what the rest says.
func TestMarkersNumberedPickWithMore(t *testing.T) {
	const q = "For late-arriving events we can (1) reprocess the last 3 days on every run, or (2) use a lookback window driven by the loaded_at column. Which do you prefer?"
	playSession(t, []sessionStep{
		asked(q, "2, and max 3 retries per job", []string{"lookback window", "max 3 retries per job"}, []string{"reprocess"}, nil),
	})
	playSession(t, []sessionStep{
		asked(q, "2, and make the window configurable", []string{"lookback window", "Make the window configurable"}, nil, nil),
	})
	playSession(t, []sessionStep{
		asked(q, "2. Make the window configurable.", []string{"lookback window", "Make the window configurable"}, nil, nil),
	})
}

// "Replace winston by pino" is "replace … with"; a date after "by" is no
// option.
func TestMarkersReplaceBy(t *testing.T) {
	playSession(t, []sessionStep{
		says("Log with winston.", []string{"winston"}, nil, nil),
		says("Replace winston by pino.", []string{"pino"}, []string{"winston"}, nil),
		says("Replace the stub by tomorrow.", []string{"pino"}, []string{"tomorrow"}, nil),
	})
}

// A plan accepted in other everyday words ("go ahead, but skip step 2"),
// and a step left out by its bare number or with "without", is accepted
// without that step.
func TestMarkersPlanAcceptedWithoutAStep(t *testing.T) {
	const plan = "Plan:\n1. Add the migration\n2. Write the repository\n3. Wire the handler\nShall I proceed?"
	for _, reply := range []string{"go ahead, but skip step 2", "yes, skip 2", "yes but without step 2", "works for me, but drop #2"} {
		c := markers(t, capsule.New("s", "a"), 0, dialect.Message{Role: "assistant", Text: plan}, dialect.Message{Role: "user", Text: reply})
		block := capsule.Render(c)
		if !strings.Contains(block, "Add the migration") || !strings.Contains(block, "Wire the handler") || strings.Contains(block, "Write the repository") {
			t.Errorf("%q: want the plan accepted without step 2:\n%s", reply, block)
		}
	}
}

// An offer turned down in other everyday words ("let's not", "no
// thanks") is turned down, "thanks" no reason; "not now" puts it off
// without ruling the option out. An option of the question picked by its
// bare name is used.
func TestMarkersOfferDeclinedInOtherWords(t *testing.T) {
	playSession(t, []sessionStep{
		asked("Want me to migrate the tests to Vitest?", "not now", nil, nil, nil),
		asked("Should I add Sentry for error tracking?", "let's not", nil, nil, []string{"Sentry"}),
		asked("Should I set up Renovate for the dependencies?", "no thanks", nil, nil, []string{"Renovate"}),
		asked("I can write a custom retry wrapper or use p-retry. Which one?", "p-retry", []string{"Use p-retry"}, nil, nil),
	})
	c := markers(t, capsule.New("s", "a"), 0, dialect.Message{Role: "assistant", Text: "Should I set up Renovate for the dependencies?"}, dialect.Message{Role: "user", Text: "no thanks"})
	if block := capsule.Render(c); strings.Contains(block, "thanks") {
		t.Errorf("a courtesy kept as the reason:\n%s", block)
	}
}

// "not now" to an offer puts it off: the option it names (here the
// library the project works with) is not ruled out.
func TestMarkersPutOffRulesNothingOut(t *testing.T) {
	c := markers(t, capsule.New("s", "a"), 0, dialect.Message{Role: "assistant", Text: "Want me to switch the reduction to Kokkos::Sum?"}, dialect.Message{Role: "user", Text: "not now"})
	if _, rejected := sections(t, c); strings.Contains(rejected, "Kokkos") {
		t.Errorf("\"not now\" ruled the option out:\n%s", capsule.Render(c))
	}
}

// A link-shortener session: "Go" the language before a part, options
// listed each for its part, a store replaced and taken back, a rule's
// amount raised by "that", and a need said with "actually" beside an
// unrelated decision that names a well-known option (it replaces none).
func TestMarkersLinkShortenerSession(t *testing.T) {
	playSession(t, []sessionStep{
		says("We're building a link shortener. Go for the backend, Postgres for storage.", []string{"Use Go for the backend", "Use Postgres for storage"}, nil, nil),
		says("Actually let's store the links in Redis instead of Postgres — it's all key-value.", []string{"Go for the backend", "Redis"}, []string{"Postgres for storage"}, nil),
		says("Hmm, Redis persistence worries me. Go back to Postgres.", []string{"Go for the backend", "Postgres for storage"}, []string{"Redis"}, nil),
		says("Rate limit: max 100 creates per minute per API key.", []string{"max 100 creates per minute per API key"}, nil, nil),
		says("Let's raise that to 300.", []string{"max 300 creates per minute per API key"}, []string{"100 creates", "Raise that"}, nil),
		says("Deploy on Fly.io.", []string{"Fly.io"}, nil, nil),
		says("Fly's pricing changed, move to Railway.", []string{"Railway"}, []string{"Fly.io"}, nil),
		says("Actually we do need click counts, just a counter per link.", []string{"click counts", "Railway", "Postgres for storage"}, nil, nil),
	})
}

// A Rust CLI session: a rule against something lifted when the user
// chooses it ("Use async for the HTTP calls" after "No async"), an option
// switched by name ("Switch reqwest to ureq", not ureq "for reqwest"), and
// the option the reason judges dropped with it ("tokio is too heavy").
func TestMarkersRustCLIAsync(t *testing.T) {
	playSession(t, []sessionStep{
		says("No async, keep it synchronous.", []string{"No async"}, nil, nil),
		says("Actually we need async for the HTTP calls. Use tokio, but only in the fetch module.", []string{"async for the HTTP calls", "tokio"}, []string{"No async"}, nil),
		says("Use reqwest for HTTP.", []string{"reqwest"}, nil, nil),
		says("Switch reqwest to ureq, tokio is too heavy after all.", []string{"Use ureq"}, []string{"reqwest", "Use tokio", "for reqwest"}, []string{"tokio"}),
	})
}

// "Let's drop iOS 16, iOS 17 minimum": the old bound goes and the new one
// is a rule, not a second option turned down.
func TestMarkersDropThenNewBound(t *testing.T) {
	playSession(t, []sessionStep{
		says("Support iOS 16 and up only.", []string{"iOS 16"}, nil, nil),
		says("Let's drop iOS 16, iOS 17 minimum.", []string{"iOS 17"}, []string{"iOS 16"}, nil),
	})
	c := markers(t, capsule.New("s", "a"), 0, dialect.Message{Role: "user", Text: "Let's drop iOS 16, iOS 17 minimum."})
	if _, rejected := sections(t, c); strings.Contains(rejected, "17") {
		t.Errorf("the new bound was turned down:\n%s", capsule.Render(c))
	}
}

// Stacks said without a verb in a project's first turns: a part "with" a
// well-known option (and another option for another place), a part
// "is" an option for some purpose, a tool in a language; each a decision
// a later change can replace.
func TestMarkersStackWithoutVerbs(t *testing.T) {
	playSession(t, []sessionStep{
		says("State management with Zustand.", []string{"Zustand for state management"}, nil, nil),
		says("Backend is Supabase for auth and data.", []string{"Supabase for auth and data", "Zustand"}, nil, nil),
		says("Actually, use Firebase instead of Supabase, we need offline sync.", []string{"Firebase", "Zustand"}, []string{"Supabase for auth"}, nil),
	})
	playSession(t, []sessionStep{
		says("CLI tool in Rust.", []string{"Rust"}, nil, nil),
		says("Errors with anyhow in the binary, thiserror in the library.", []string{"anyhow for errors in the binary", "thiserror in the library", "Rust"}, nil, nil),
	})
	// A part of the list said with "only" is a rule, not a decision.
	playSession(t, []sessionStep{
		says("GDScript for gameplay code, C# only for the pathfinding.", []string{"GDScript", "C# only for the pathfinding"}, []string{"Use C#"}, nil),
	})
}

// An invoices API session: a limit named then its amount per something,
// raised later by name; an option ruled out, then needed after all (it
// leaves the rejected list, with what it is needed for).
func TestMarkersInvoiceAPISession(t *testing.T) {
	c := playSession(t, []sessionStep{
		says("Let's add rate limiting: 60 requests per minute per token.", []string{"Rate limiting: 60 requests per minute per token"}, nil, nil),
		says("Bump the rate limit to 120.", []string{"Rate limiting: 120 requests per minute per token"}, []string{"60 requests", "Bump the rate limit"}, nil),
		says("We won't support XML.", nil, nil, []string{"XML"}),
		says("Okay XML is needed after all for one legacy client.", []string{"Use XML for one legacy client"}, nil, nil),
	})
	if _, rejected := sections(t, c); strings.Contains(rejected, "XML") {
		t.Errorf("XML, needed after all, is still rejected:\n%s", capsule.Render(c))
	}
}

// "every 15 minutes instead" to the assistant's "I'll schedule it
// hourly" changes what the assistant offered; the user's newest decision
// (dbt for the transforms) stays.
func TestMarkersChangeToTheOffer(t *testing.T) {
	playSession(t, []sessionStep{
		asked("I'll write the transforms in pandas.", "no, use dbt for transforms", []string{"dbt for transforms"}, nil, []string{"pandas"}),
		asked("I'll schedule it hourly.", "every 15 minutes instead", []string{"dbt for transforms", "every 15 minutes"}, nil, nil),
	})
}

// A plan accepted with an option swapped ("yes, but alerts go to
// PagerDuty not Slack") is accepted with its step rewritten: the plan
// never asks for what the block rejects. A name inside another word is
// left alone.
func TestMarkersPlanAcceptedWithASwap(t *testing.T) {
	const plan = "Here's the plan:\n1. Shopify extractor\n2. Staging models in dbt\n3. Dagster job and schedule\n4. Alerts to Slack\n5. Slackware image for the runner\nOK to proceed?"
	c := markers(t, capsule.New("s", "a"), 0, dialect.Message{Role: "assistant", Text: plan}, dialect.Message{Role: "user", Text: "yes, but alerts go to PagerDuty not Slack"})
	block := capsule.Render(c)
	if !strings.Contains(block, "Alerts to PagerDuty") || strings.Contains(block, "Alerts to Slack") || !strings.Contains(block, "Slackware image") {
		t.Errorf("want step 4 rewritten to PagerDuty, step 5 as it was:\n%s", block)
	}
	c = markers(t, capsule.New("s", "a"), 0, dialect.Message{Role: "assistant", Text: plan}, dialect.Message{Role: "user", Text: "yes, but use Prefect instead of Dagster"})
	if block := capsule.Render(c); !strings.Contains(block, "Prefect job and schedule") {
		t.Errorf("want step 3 rewritten to Prefect:\n%s", block)
	}
}

// How the work is to be done, said plainly, is a rule: "Ask me before
// deleting files", "Commit after each step", "Everything has to run
// offline", "Use conventional commits", "Stay within the free tier".
func TestMarkersWorkPractices(t *testing.T) {
	playSession(t, []sessionStep{
		says("Ask me before deleting files.", []string{"Ask me before deleting files"}, nil, nil),
		says("Commit after each step.", []string{"Commit after each step"}, nil, nil),
		says("Everything has to run offline.", []string{"Everything has to run offline"}, nil, nil),
		says("Use conventional commits.", []string{"Use conventional commits"}, nil, nil),
		says("Stay within the free tier.", []string{"Stay within the free tier"}, nil, nil),
		says("Ask me anything if you're stuck?", nil, []string{"Ask me anything"}, nil),
	})
}
