package replicas

import (
	"context"
	"fmt"
	"net/http"
	"sort"
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

// roundTrips counts PostgreSQL round trips (pgstore.Options.OnRoundTrip):
// every statement, BEGIN, COMMIT and ROLLBACK.
type roundTrips struct {
	n  atomic.Int64
	mu sync.Mutex
	by map[string]int64
}

func (r *roundTrips) count(sql string) {
	r.n.Add(1)
	f := strings.Fields(sql)
	key := strings.Join(f[:min(len(f), 6)], " ")
	r.mu.Lock()
	r.by[key]++
	r.mu.Unlock()
}

func (r *roundTrips) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n.Store(0)
	r.by = map[string]int64{}
}

// BenchmarkReplicas: ordinary agent turns (Claude Code shaped, continuity
// on, the built-in extractor, nothing to extract) of 16 concurrent
// conversations through a round-robin front over 1 or 3 replicas on one
// PostgreSQL, all on this machine. It reports turns per second and
// PostgreSQL round trips per turn (request path, commit after the answer
// and the ledger's batched writes together); -v lists the statements.
//
//	TETHER_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test?sslmode=disable \
//	  go test -run '^$' -bench Replicas -benchtime 2000x ./internal/replicas/
func BenchmarkReplicas(b *testing.B) {
	for _, n := range []int{1, 3} {
		b.Run(fmt.Sprintf("replicas=%d", n), func(b *testing.B) {
			storeURL := storetest.FreshSearchPath(b, storetest.PostgresURL(b), "tether_replicas")
			fake := fakemodel.Start(demo.Model())
			b.Cleanup(fake.Close)
			rt := &roundTrips{by: map[string]int64{}}
			cfg, err := config.Parse([]byte(sprintf(replicaYAML, fake.URL, storeURL)), func(string) string { return "" })
			if err != nil {
				b.Fatal(err)
			}
			reps := make([]*replica, n)
			for i := range reps {
				st, err := pgstore.Open(context.Background(), storeURL, pgstore.Options{OnRoundTrip: rt.count})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = st.Close() })
				reps[i] = serveApp(b, cfg, app.Options{Store: st})
			}
			fr := startFront(b, reps)
			const conversations = 16
			agents := make([]*demo.Agent, conversations)
			ctx := context.Background()
			for i := range agents {
				agents[i] = &demo.Agent{BaseURL: fr.url, APIKey: "replicas-bench-key-0123456789", SessionID: fmt.Sprintf("bench-%d", i),
					Model: "claude-sonnet-4-5", HTTP: &http.Client{Timeout: 30 * time.Second}}
				for range 2 {
					if _, err := agents[i].Say(ctx, fmt.Sprintf("Conversation %d: keep going with the inventory service work.", i)); err != nil {
						b.Fatal(err)
					}
				}
			}
			time.Sleep(1200 * time.Millisecond) // the warm-up's ledger rows are flushed
			rt.reset()
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for i := range agents {
				wg.Add(1)
				go func(a *demo.Agent) {
					defer wg.Done()
					for next.Add(1) <= int64(b.N) {
						if _, err := a.Say(ctx, "Next small step please, nothing new to decide."); err != nil {
							b.Error(err)
							return
						}
					}
				}(agents[i])
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			for _, r := range reps {
				r.stop(b, false) // flushes the ledger: its writes are counted
			}
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "turns/s")
			b.ReportMetric(float64(rt.n.Load())/float64(b.N), "pg-roundtrips/turn")
			rt.mu.Lock()
			keys := make([]string, 0, len(rt.by))
			for k := range rt.by {
				keys = append(keys, k)
			}
			sort.Slice(keys, func(i, j int) bool { return rt.by[keys[i]] > rt.by[keys[j]] })
			for _, k := range keys {
				b.Logf("%6.3f per turn  %s", float64(rt.by[k])/float64(b.N), k)
			}
			rt.mu.Unlock()
		})
	}
}

// BenchmarkExtractionCalls: model extraction calls for the demo session
// (eight turns, three compactions; the scripted extractor answers in
// 300 ms, the agent sends its next turn at once) through 1 or 3 replicas.
// A replica that did not see the previous turn offers the history again
// from the capsule's watermark while the other replica's job still runs:
// the difference is the cost of scan marks being per replica.
//
//	TETHER_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test?sslmode=disable \
//	  go test -run '^$' -bench ExtractionCalls -benchtime 3x ./internal/replicas/
func BenchmarkExtractionCalls(b *testing.B) {
	for _, n := range []int{1, 3} {
		b.Run(fmt.Sprintf("replicas=%d", n), func(b *testing.B) {
			var calls atomic.Int64
			model := demo.Model()
			fake := fakemodel.Start(func(r *fakemodel.Request) fakemodel.Reply {
				rep := model(r)
				if r.Model() == demo.ExtractorModel {
					calls.Add(1)
					rep.Delay = 300 * time.Millisecond
				}
				return rep
			})
			b.Cleanup(fake.Close)
			for i := range b.N {
				storeURL := storetest.FreshSearchPath(b, storetest.PostgresURL(b), "tether_replicas")
				yaml := sprintf(barrierYAML, fake.URL, storeURL)
				reps := make([]*replica, n)
				for j := range reps {
					reps[j] = startReplica(b, yaml)
				}
				fr := startFront(b, reps)
				ag := &demo.Agent{BaseURL: fr.url, APIKey: "replicas-calls-key-0123456789", SessionID: fmt.Sprintf("calls-%d", i),
					Model: "claude-sonnet-4-5", HTTP: &http.Client{Timeout: 30 * time.Second}}
				for _, s := range demo.Script {
					var err error
					if s.Compact {
						err = ag.Compact(context.Background())
					} else {
						_, err = ag.Say(context.Background(), s.User)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				for _, r := range reps {
					r.stop(b, false) // drains the extraction still running
				}
			}
			b.ReportMetric(float64(calls.Load())/float64(b.N), "extractor-calls/session")
		})
	}
}
