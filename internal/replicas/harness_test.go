package replicas

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/app"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/metrics"
	"github.com/tether-dev/tether/internal/store"
	"github.com/tether-dev/tether/internal/store/pgstore"
)

// replica is one Tether process serving on loopback, opened from its own
// configuration as `tether serve` would (its own connection pool).
type replica struct {
	app  *app.App
	url  string
	srv  *http.Server
	once sync.Once
}

// startReplica starts a replica from yaml (after Sprintf with the fake
// model's URL).
func startReplica(t testing.TB, yaml string) *replica {
	t.Helper()
	cfg, err := config.Parse([]byte(yaml), func(string) string { return "" })
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return serveApp(t, cfg, app.Options{})
}

// serveApp starts a replica from a parsed configuration.
func serveApp(t testing.TB, cfg *config.Config, opt app.Options) *replica {
	t.Helper()
	a, err := app.New(context.Background(), cfg, opt)
	if err != nil {
		t.Fatalf("start replica: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &replica{app: a, url: "http://" + ln.Addr().String(), srv: &http.Server{Handler: a.Handler(), ReadHeaderTimeout: 10 * time.Second}}
	go func() { _ = r.srv.Serve(ln) }()
	t.Cleanup(func() { r.stop(t, false) })
	return r
}

// stop ends the replica. kill cuts its connections and cancels its
// extraction jobs at once, as a crashed process would lose them; otherwise
// it shuts down gracefully.
func (r *replica) stop(t testing.TB, kill bool) {
	r.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if kill {
			_ = r.srv.Close()
			dead, c := context.WithCancel(context.Background())
			c()
			_ = r.app.Close(dead) // cancels running jobs; their owed work is not waited for
			return
		}
		_ = r.srv.Shutdown(ctx)
		if err := r.app.Close(ctx); err != nil {
			t.Errorf("close replica: %v", err)
		}
	})
}

// front is the tiny round-robin balancer: every request goes to the next
// live replica.
type front struct {
	mu   sync.Mutex
	reps []*replica
	dead map[int]bool
	next int
	hits []int
	url  string
}

func startFront(t testing.TB, reps []*replica) *front {
	t.Helper()
	f := &front{reps: reps, dead: map[int]bool{}, hits: make([]int, len(reps))}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			u, _ := url.Parse(pr.In.Header.Get("X-Replica-Target"))
			pr.Out.Header.Del("X-Replica-Target")
			pr.SetURL(u)
			pr.Out.Host = pr.In.Host
		},
		FlushInterval: -1,
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("X-Replica-Target", f.pick())
		proxy.ServeHTTP(w, r)
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	f.url = "http://" + ln.Addr().String()
	return f
}

func (f *front) pick() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	for range f.reps {
		i := f.next % len(f.reps)
		f.next++
		if !f.dead[i] {
			f.hits[i]++
			return f.reps[i].url
		}
	}
	panic("no live replica")
}

// kill takes replica i out of rotation and kills it.
func (f *front) kill(t testing.TB, i int) {
	f.mu.Lock()
	f.dead[i] = true
	f.mu.Unlock()
	f.reps[i].stop(t, true)
}

// openStore opens the shared store for the test's own checks.
func openStore(t testing.TB, u string) store.Store {
	t.Helper()
	st, err := pgstore.Open(context.Background(), u, pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// idle waits (bounded) until no live replica has extraction queued or
// running: the agent's think time, so that runs compare request by request.
func (f *front) idle(t testing.TB) {
	t.Helper()
	busy := func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		for i, r := range f.reps {
			if f.dead[i] {
				continue
			}
			for _, f := range r.app.Registry.Gather() {
				if f.Name == "tether_extract_inflight" || f.Name == "tether_extract_queue_depth" {
					for _, s := range f.Series {
						if s.Value > 0 {
							return true
						}
					}
				}
			}
		}
		return false
	}
	deadline := time.Now().Add(10 * time.Second)
	for quiet := 0; quiet < 2; {
		if time.Now().After(deadline) {
			t.Fatal("extraction still busy after 10s")
		}
		if busy() {
			quiet = 0
		} else {
			quiet++
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// sample sums the series of the family name whose label has value.
func sample(reg *metrics.Registry, name, label, value string) float64 {
	sum := 0.0
	for _, f := range reg.Gather() {
		if f.Name != name {
			continue
		}
		for _, s := range f.Series {
			if slices.Contains(s.Labels, metrics.Label{Name: label, Value: value}) {
				sum += s.Value
			}
		}
	}
	return sum
}
