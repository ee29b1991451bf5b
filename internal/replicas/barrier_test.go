package replicas

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/app"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/demo"
	"github.com/tether-dev/tether/internal/fakemodel"
	"github.com/tether-dev/tether/internal/store/pgstore"
	"github.com/tether-dev/tether/internal/store/storetest"
)

// barrierYAML: the scripted model as extractor, so extraction is a real,
// slow upstream call on whichever replica queued it.
const barrierYAML = `
store: "%[2]s"
secret: ` + secret + `
providers:
  - {name: model, dialect: anthropic, base_url: "%[1]s"}
  - {name: extractor, dialect: openai, base_url: "%[1]s/v1"}
routes:
  - {match: "*", provider: model}
compaction_continuity:
  enabled: true
  barrier_timeout: 5s
  extractor:
    route: extractor/` + demo.ExtractorModel + `
    workers: 2
`

// slowFirstExtraction starts the scripted model, its first extraction
// call answered after first, the others after later.
func slowFirstExtraction(t *testing.T, first, later time.Duration) *fakemodel.Server {
	t.Helper()
	model := demo.Model()
	var mu sync.Mutex
	calls := 0
	fake := fakemodel.Start(func(r *fakemodel.Request) fakemodel.Reply {
		rep := model(r)
		if r.Model() == demo.ExtractorModel {
			mu.Lock()
			calls++
			rep.Delay = later
			if calls == 1 {
				rep.Delay = first
			}
			mu.Unlock()
		}
		return rep
	})
	t.Cleanup(fake.Close)
	return fake
}

// stateDecision opens the conversation and states the decision the
// barrier tests look for.
func stateDecision(t *testing.T, ag *demo.Agent) {
	t.Helper()
	for _, say := range []string{"We are building an inventory service, please help.",
		"Decision: use PostgreSQL for storage, not MongoDB, because we need transactions."} {
		if _, err := ag.Say(context.Background(), say); err != nil {
			t.Fatal(err)
		}
	}
}

// compactionSent is the body of the last compaction request the model
// received ("" if none).
func compactionSent(fake *fakemodel.Server) string {
	var body string
	for _, r := range fake.Requests() {
		if r.Model() != demo.ExtractorModel && fakemodel.Classify(&r) == fakemodel.KindCompaction {
			body = string(r.Body)
		}
	}
	return body
}

// TestBarrierAcrossReplicas: a decision stated on one replica is extracted
// there by a slow model call (1.5 s); the compaction request, sent at once
// and landing on the next replica, waits (bounded) until that job is done
// and its revision is in the store, and carries the decision to the
// summariser; the first turn after the compaction lands on a third replica.
func TestBarrierAcrossReplicas(t *testing.T) {
	base := storetest.PostgresURL(t)
	storeURL := storetest.FreshSearchPath(t, base, "tether_replicas")
	// The first extraction (the decision's turn) is slow; the compaction
	// replica's own pass over the history is quick.
	fake := slowFirstExtraction(t, 1500*time.Millisecond, 100*time.Millisecond)
	yaml := sprintf(barrierYAML, fake.URL, storeURL)
	reps := []*replica{startReplica(t, yaml), startReplica(t, yaml), startReplica(t, yaml)}
	fr := startFront(t, reps)
	ag := &demo.Agent{BaseURL: fr.url, APIKey: "replicas-barrier-key-0123456789", SessionID: "barrier-session", Model: "claude-sonnet-4-5",
		HTTP: &http.Client{Timeout: 30 * time.Second}}
	ctx := context.Background()
	stateDecision(t, ag)
	start := time.Now()
	if err := ag.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	waited := time.Since(start)
	compaction := compactionSent(fake)
	if !strings.Contains(compaction, "<continuity-capsule") || !strings.Contains(compaction, "PostgreSQL") {
		t.Fatalf("the compaction request (on another replica than the extraction) lacks the decision; it waited %s", waited)
	}
	if !strings.Contains(ag.Shown, "PostgreSQL") {
		t.Errorf("the summary the agent keeps lacks the decision: %q", ag.Shown)
	}
	joined := 0.0
	for _, r := range reps {
		joined += sample(r.app.Registry, "tether_barrier_remote_waits_total", "outcome", "joined")
	}
	if joined < 1 || waited < 1200*time.Millisecond {
		t.Errorf("no barrier joined an extraction running on another replica (waited %s)", waited)
	}
	if _, err := ag.Say(ctx, "What's next?"); err != nil {
		t.Fatal(err)
	}
	t.Logf("requests per replica %v; the compaction waited %s; remote joins %v", fr.hits, waited, joined)
}

// TestKilledReplicaJobFinishedElsewhere: a replica is killed while its
// extraction call is in flight; the job, owed in the shared outbox, is
// claimed by a surviving replica once the dead one's hold ends, and the
// decision reaches the capsule. Nothing of it lived only in the dead
// process.
func TestKilledReplicaJobFinishedElsewhere(t *testing.T) {
	storeURL := storetest.FreshSearchPath(t, storetest.PostgresURL(t), "tether_replicas")
	model := demo.Model()
	var mu sync.Mutex
	calls := 0
	fake := fakemodel.Start(func(r *fakemodel.Request) fakemodel.Reply {
		rep := model(r)
		if r.Model() == demo.ExtractorModel {
			mu.Lock()
			calls++
			if calls == 1 {
				rep.Hang = true // the replica dies during this call
			}
			mu.Unlock()
		}
		return rep
	})
	t.Cleanup(fake.Close)
	// A 1 s extractor timeout makes the outbox hold of a job 12 s.
	yaml := sprintf(strings.Replace(barrierYAML, "    workers: 2\n", "    workers: 2\n    timeout: 1s\n", 1), fake.URL, storeURL)
	reps := []*replica{startReplica(t, yaml), startReplica(t, yaml)}
	fr := startFront(t, reps)
	ag := &demo.Agent{BaseURL: fr.url, APIKey: "replicas-killed-key-0123456789", SessionID: "killed-session", Model: "claude-sonnet-4-5",
		HTTP: &http.Client{Timeout: 30 * time.Second}}
	ctx := context.Background()
	if _, err := ag.Say(ctx, "Decision: use PostgreSQL for storage, not MongoDB, because we need transactions."); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		mu.Lock()
		started := calls > 0
		mu.Unlock()
		if started {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the extraction call never started")
		}
		time.Sleep(5 * time.Millisecond)
	}
	fr.kill(t, 0)
	st := openStore(t, storeURL)
	start := time.Now()
	for {
		recs, err := st.ListCapsules(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 1 && strings.Contains(string(recs[0].Data), "PostgreSQL") {
			break
		}
		if time.Since(start) > 25*time.Second {
			t.Fatalf("the killed replica's extraction was not finished elsewhere within 25s (%d extractor calls)", calls)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("finished by the surviving replica %s after the kill; %d extractor calls", time.Since(start).Round(time.Millisecond), calls)
	jobs := map[string]float64{}
	for _, outcome := range []string{"resumed", "completed"} {
		jobs[outcome] = sample(reps[1].app.Registry, "tether_extract_jobs_total", "outcome", outcome)
	}
	if jobs["resumed"] < 1 || jobs["completed"] < 1 {
		t.Errorf("the surviving replica's jobs: %v; want the dead one's job resumed and completed there", jobs)
	}
}

// TestCompactionReloadsTheCapsuleAfterItsBarrier: on one replica, the
// compaction request reads the A-leg's capsule with its lineage (one round
// trip), then waits at the barrier for the decision's slow extraction; what
// it sends the summariser is the capsule as the store has it after the
// wait, not the one read before it.
func TestCompactionReloadsTheCapsuleAfterItsBarrier(t *testing.T) {
	storeURL := storetest.FreshSearchPath(t, storetest.PostgresURL(t), "tether_replicas")
	fake := slowFirstExtraction(t, 1500*time.Millisecond, 0)
	cfg, err := config.Parse([]byte(sprintf(barrierYAML, fake.URL, storeURL)), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	var prefetches atomic.Int64
	st, err := pgstore.Open(t.Context(), storeURL, pgstore.Options{OnRoundTrip: func(sql string) {
		if strings.Contains(sql, "FROM capsules") && strings.Contains(sql, "FROM lineage") {
			prefetches.Add(1)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	rep := serveApp(t, cfg, app.Options{Store: st})
	ag := &demo.Agent{BaseURL: rep.url, APIKey: "replicas-reload-key-0123456789", SessionID: "reload-session", Model: "claude-sonnet-4-5",
		HTTP: &http.Client{Timeout: 30 * time.Second}}
	ctx := context.Background()
	stateDecision(t, ag)
	before := prefetches.Load()
	if err := ag.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if prefetches.Load() == before {
		t.Fatal("the compaction request did not read the capsule with its lineage; this test needs it to")
	}
	compaction := compactionSent(fake)
	if !strings.Contains(compaction, "<continuity-capsule") || !strings.Contains(compaction, "PostgreSQL") {
		t.Fatal("the compaction request lacks the decision its barrier waited for")
	}
}
