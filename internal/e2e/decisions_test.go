package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/tether-dev/tether/internal/demo"
	"github.com/tether-dev/tether/internal/fakemodel"
)

// decisionsSection returns the item lines under the block section whose
// title line starts with title ("ACTIVE DECISIONS", "REJECTED", "ACCEPTED
// PLAN", …), or nil when the block has no such section.
func decisionsSection(blk, title string) []string {
	var out []string
	in := false
	for _, l := range strings.Split(blk, "\n") {
		switch {
		case strings.HasPrefix(l, title):
			in = true
		case in && (strings.HasPrefix(l, "- ") || decisionsStep.MatchString(l)):
			out = append(out, l)
		case in:
			return out
		}
	}
	return out
}

var decisionsStep = regexp.MustCompile(`^\d+\. `)

// decisionsAnyContains reports whether any line contains s.
func decisionsAnyContains(lines []string, s string) bool {
	for _, l := range lines {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

// decisionsFiller are ordinary turns with no decision, constraint or
// correction wording in them.
var decisionsFiller = []string{
	"What does main.go do?",
	"Show me the README.",
	"Run the unit tests please.",
	"What is in the internal folder?",
	"Explain the handler for /items.",
	"How is logging set up here?",
	"Print the Makefile targets.",
	"What does the stock table look like?",
	"Which Go version is in go.mod?",
	"Show me the last commit message.",
	"How many handlers are there?",
	"Where is the configuration loaded?",
	"What does the health check return?",
	"List the files in cmd.",
}

// decisionsAfterExtraction wraps a responder and closes the returned
// channel when the extractor receives a request whose body contains s: the
// job carrying s is running, so the next job of the A-leg queues behind it
// and starts from the capsule it produced.
func decisionsAfterExtraction(next fakemodel.Responder, s string) (fakemodel.Responder, <-chan struct{}) {
	ch := make(chan struct{})
	var once sync.Once
	return func(r *fakemodel.Request) fakemodel.Reply {
		if r.Model() == demo.ExtractorModel && strings.Contains(string(r.Body), s) {
			defer once.Do(func() { close(ch) })
		}
		return next(r)
	}, ch
}

// Decisions and a constraint stated early still reach the model, as active,
// after many unrelated turns and a compaction whose summary forgot them.
func TestAC02_DecisionsAndConstraintsSurviveManyTurnsLater(t *testing.T) {
	e := newEnv(t, envOptions{yaml: continuityYAML})
	a := e.agent("ac02-session")
	say(t, a,
		"We're building an inventory service. Decision: use PostgreSQL for storage, because we need multi-row transactions.",
		"Constraint: never change the public REST API.",
		"Decision: expose metrics in Prometheus format.")
	say(t, a, decisionsFiller[:12]...)
	compact(t, a)
	if !strings.Contains(a.Shown, demo.LossySummary) {
		t.Fatalf("the compactor's own summary is not what the agent kept:\n%s", a.Shown)
	}
	say(t, a, "Continue.")

	b := block(e.lastPrimary())
	if b == "" {
		t.Fatalf("the first turn after compaction carries no continuity block:\n%s", e.lastPrimary())
	}
	active := decisionsSection(b, "ACTIVE DECISIONS")
	for _, want := range []string{"use PostgreSQL for storage", "expose metrics in Prometheus format"} {
		if !decisionsAnyContains(active, want) {
			t.Errorf("decision %q is not active after compaction:\n%s", want, b)
		}
	}
	if !decisionsAnyContains(active, "why: we need multi-row transactions") {
		t.Errorf("the rationale given with the decision was lost:\n%s", b)
	}
	if !decisionsAnyContains(decisionsSection(b, "CONSTRAINTS"), "never change the public REST API") {
		t.Errorf("the constraint is not active after compaction:\n%s", b)
	}
	if rej := decisionsSection(b, "REJECTED"); len(rej) != 0 {
		t.Errorf("nothing was rejected or superseded, but the block lists %q", rej)
	}
}

// A later correction supersedes the earlier decision: after one and after
// two compactions Redis is the active choice and Memcached is listed only
// as superseded.
func TestAC03_LaterCorrectionSupersedesEarlierDecision(t *testing.T) {
	resp, picked := decisionsAfterExtraction(demo.Model(), "Memcached for the cache")
	e := newEnv(t, envOptions{yaml: continuityYAML, responder: resp})
	a := e.agent("ac03-session")
	say(t, a, "Decision: use Memcached for the cache.")
	<-picked
	say(t, a, decisionsFiller[:3]...)
	say(t, a, "Actually, use Redis instead of Memcached for the cache.")
	say(t, a, decisionsFiller[3:5]...)

	check := func(round int) {
		t.Helper()
		b := block(e.lastPrimary())
		if b == "" {
			t.Fatalf("compaction %d: the next turn carries no continuity block", round)
		}
		active := decisionsSection(b, "ACTIVE DECISIONS")
		if !decisionsAnyContains(active, "Redis") {
			t.Errorf("compaction %d: the correction (Redis) is not active:\n%s", round, b)
		}
		for _, l := range active {
			// The correction may name what it replaces; nothing else active
			// may mention Memcached.
			if strings.Contains(l, "Memcached") && !strings.Contains(l, "instead of Memcached") {
				t.Errorf("compaction %d: Memcached is still presented as active: %q\n%s", round, l, b)
			}
		}
		var superseded []string
		for _, l := range decisionsSection(b, "REJECTED") {
			if strings.Contains(l, "Memcached") && strings.Contains(l, "superseded by") {
				superseded = append(superseded, l)
			}
		}
		if len(superseded) != 1 {
			t.Errorf("compaction %d: want Memcached listed once as superseded under REJECTED, got %q:\n%s", round, superseded, b)
		}
	}
	compact(t, a)
	say(t, a, "Continue.")
	check(1)
	say(t, a, decisionsFiller[5:7]...)
	compact(t, a)
	say(t, a, "Continue with the next step.")
	check(2)
}

// An assistant brainstorm is not a user decision: even when the extractor
// (wrongly) reports the assistant's option as an add_decision citing the
// assistant's message, the capsule does not gain it and the model is never
// shown it as decided.
func TestAC04_AssistantBrainstormNotPromotedToDecision(t *testing.T) {
	var wrongOps atomic.Int32
	assistantLine := regexp.MustCompile(`\[m(\d+) assistant\][^\[]*Option A: Kafka`)
	base := demo.Model()
	resp := func(r *fakemodel.Request) fakemodel.Reply {
		if r.Model() == demo.ExtractorModel {
			in := decisionsExtractorInput(r)
			if m := assistantLine.FindStringSubmatch(in); m != nil {
				wrongOps.Add(1)
				return fakemodel.Reply{Text: fmt.Sprintf(`{"ops":[{"op":"add_decision","statement":"Use Kafka for the event bus","turn":%s}]}`, m[1])}
			}
			return base(r)
		}
		if fakemodel.Classify(r) != fakemodel.KindCompaction {
			if strings.Contains(decisionsLastUser(r), "brainstorm") {
				return fakemodel.Reply{Text: "Here are two options for the event bus.\n" +
					"Option A: Kafka — a durable log with replay; heavier to operate.\n" +
					"Option B: RabbitMQ — simpler routing and lighter to run.\n" +
					"Which option would you prefer?"}
			}
		}
		return base(r)
	}
	e := newEnv(t, envOptions{yaml: continuityYAML, responder: resp})
	a := e.agent("ac04-session")
	say(t, a,
		"Decision: use PostgreSQL for storage.",
		"Let's brainstorm the event bus: what are the choices?",
		"Hmm, I will think about it. Show me the README for now.",
		"What does main.go do?")
	compact(t, a)
	say(t, a, "Continue.")

	if wrongOps.Load() == 0 {
		t.Fatalf("the extractor never saw the assistant's options; the test proves nothing")
	}
	b := block(e.lastPrimary())
	active := decisionsSection(b, "ACTIVE DECISIONS")
	if !decisionsAnyContains(active, "use PostgreSQL for storage") {
		t.Fatalf("the user's own decision is missing, so the block proves nothing:\n%s", b)
	}
	for _, s := range []string{"Kafka", "RabbitMQ"} {
		if decisionsAnyContains(active, s) {
			t.Errorf("the assistant's option %s became an active decision:\n%s", s, b)
		}
		if strings.Contains(b, s) {
			t.Errorf("the assistant's option %s entered the continuity block:\n%s", s, b)
		}
	}
	if n := decisionsMetric(t, e, `tether_extract_jobs_total{outcome="invalid"}`); n < 1 {
		t.Errorf("the extractor's add_decision citing the assistant was not discarded as invalid (count %v)", n)
	}
	caps, err := e.store.ListCapsules(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range caps {
		if strings.Contains(string(c.Data), "Kafka") {
			t.Errorf("the stored capsule gained the assistant's option: %s", c.Data)
		}
	}
}

// decisionsExtractorInput is the user payload of an extractor request.
func decisionsExtractorInput(r *fakemodel.Request) string {
	var b strings.Builder
	gjson.GetBytes(r.Body, "messages").ForEach(func(_, m gjson.Result) bool {
		if m.Get("role").String() == "user" {
			b.WriteString(m.Get("content").String())
		}
		return true
	})
	return b.String()
}

// decisionsLastUser is the text of the last user message of a Messages
// request.
func decisionsLastUser(r *fakemodel.Request) string {
	last := gjson.GetBytes(r.Body, "messages.@reverse.0")
	if last.Get("role").String() != "user" {
		return ""
	}
	var b strings.Builder
	last.Get("content").ForEach(func(_, p gjson.Result) bool {
		b.WriteString(p.Get("text").String())
		return true
	})
	return b.String()
}

// The MongoDB plan the model proposes first and the plan it records after
// the user rejects MongoDB.
var (
	decisionsMongoPlan = []string{
		"Model items as MongoDB documents",
		"Implement the repository on the MongoDB driver",
		"Add the REST handlers",
	}
	decisionsNewPlan = []string{
		"Create the PostgreSQL tables for items and stock",
		"Implement the repository with transactions",
		"Add the REST handlers behind the existing API",
	}
)

func decisionsTodoWrite(steps []string, done int) fakemodel.ToolCall {
	var todos []string
	for i, s := range steps {
		st := "pending"
		switch {
		case i < done:
			st = "completed"
		case i == done:
			st = "in_progress"
		}
		todos = append(todos, fmt.Sprintf(`{"content":%q,"status":%q,"activeForm":%q}`, s, st, s))
	}
	return fakemodel.ToolCall{Name: "TodoWrite", Arguments: `{"todos":[` + strings.Join(todos, ",") + `]}`}
}

// A plan built on an alternative the user rejected does not come back: after
// the user rejects MongoDB and the model records a new plan, every
// compaction shows the new plan as the plan and MongoDB only as rejected.
func TestAC05_RejectedAlternativeDoesNotReturnAsPlan(t *testing.T) {
	base := demo.Model()
	resp := func(r *fakemodel.Request) fakemodel.Reply {
		if r.Model() != demo.ExtractorModel && fakemodel.Classify(r) != fakemodel.KindCompaction {
			switch u := decisionsLastUser(r); {
			case strings.Contains(u, "new plan"):
				return fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{decisionsTodoWrite(decisionsNewPlan, 0)}}
			case strings.Contains(u, "propose a plan"):
				return fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{decisionsTodoWrite(decisionsMongoPlan, 0)}}
			}
		}
		return base(r)
	}
	e := newEnv(t, envOptions{yaml: continuityYAML, responder: resp})
	a := e.agent("ac05-session")
	say(t, a,
		"We're building an inventory service. Please propose a plan for the storage layer and track it with your todo list.",
		"Rejected: MongoDB — we need transactions. Please make a new plan without it and track it with your todo list.",
		"Yes, go ahead with that plan.")

	check := func(round int) {
		t.Helper()
		b := block(e.lastPrimary())
		if b == "" {
			t.Fatalf("compaction %d: the next turn carries no continuity block", round)
		}
		plan := decisionsSection(b, "ACCEPTED PLAN")
		if len(plan) != len(decisionsNewPlan) {
			t.Errorf("compaction %d: accepted plan has %d steps, want the %d of the new plan:\n%s", round, len(plan), len(decisionsNewPlan), b)
		}
		for _, s := range decisionsNewPlan {
			if !decisionsAnyContains(plan, s) {
				t.Errorf("compaction %d: new plan step %q missing:\n%s", round, s, b)
			}
		}
		if decisionsAnyContains(plan, "MongoDB") || strings.Contains(b, "PROPOSED PLAN") {
			t.Errorf("compaction %d: the rejected MongoDB plan is back as a plan:\n%s", round, b)
		}
		for _, s := range decisionsMongoPlan[:2] {
			if strings.Contains(b, s) {
				t.Errorf("compaction %d: step %q of the rejected plan is in the block:\n%s", round, s, b)
			}
		}
		if !decisionsAnyContains(decisionsSection(b, "REJECTED"), "MongoDB (reason: we need transactions)") {
			t.Errorf("compaction %d: MongoDB is not listed as rejected:\n%s", round, b)
		}
		if decisionsAnyContains(decisionsSection(b, "ACTIVE DECISIONS"), "MongoDB") {
			t.Errorf("compaction %d: MongoDB is an active decision:\n%s", round, b)
		}
	}
	compact(t, a)
	say(t, a, "Continue.")
	check(1)
	say(t, a, decisionsFiller[:2]...)
	compact(t, a)
	say(t, a, "Continue with the next step.")
	check(2)
}

// decisionsMetric reads one sample from the proxy's /metrics over HTTP; a
// sample that is not exposed reads as 0.
func decisionsMetric(t *testing.T, e *env, series string) float64 {
	t.Helper()
	resp, err := http.Get(e.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return sumSamples(t, string(body), series)
}

// sumSamples sums the samples of /metrics text that match series: a metric
// name with, optionally, some of its labels (`name{k="v"}`); labels not
// named match any value (so per-route series add up).
func sumSamples(t *testing.T, text, series string) float64 {
	t.Helper()
	name, want, _ := strings.Cut(series, "{")
	want = strings.TrimSuffix(want, "}")
	var sum float64
	for _, l := range strings.Split(text, "\n") {
		sample, v, ok := strings.Cut(l, " ")
		if !ok || strings.HasPrefix(l, "#") {
			continue
		}
		n, labels, _ := strings.Cut(sample, "{")
		if n != name {
			continue
		}
		have := "," + strings.TrimSuffix(labels, "}") + ","
		match := true
		for _, kv := range strings.Split(want, ",") {
			if kv != "" && !strings.Contains(have, ","+kv+",") {
				match = false
			}
		}
		if !match {
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatalf("metric %s: %v", series, err)
		}
		sum += f
	}
	return sum
}
