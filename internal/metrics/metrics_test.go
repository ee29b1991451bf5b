package metrics_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tether-dev/tether/internal/metrics"
)

func text(t *testing.T, reg *metrics.Registry) string {
	t.Helper()
	var b strings.Builder
	if err := metrics.WriteText(&b, reg.Gather()); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The exposition is the text format 0.0.4: families sorted by name, series
// by label values, labels by name, escapes in HELP and label values,
// histograms as cumulative buckets ending in +Inf with _sum and _count.
func TestExposition(t *testing.T) {
	reg := metrics.NewRegistry()
	reqs := metrics.NewCounterVec(metrics.CounterOpts{Name: "t_requests_total", Help: `Requests by "code", a \ and a` + "\nnewline."},
		[]string{"route", "code"})
	lat := metrics.NewHistogramVec(metrics.HistogramOpts{Name: "t_seconds", Help: "Latency.", Buckets: []float64{0.1, 1, 10}}, []string{"route"})
	depth := metrics.NewGauge(metrics.GaugeOpts{Name: "t_depth", Help: "Depth."})
	empty := metrics.NewCounterVec(metrics.CounterOpts{Name: "t_empty_total", Help: "Never used."}, []string{"x"})
	plain := metrics.NewHistogram(metrics.HistogramOpts{Name: "t_plain", Help: "Plain.", Buckets: []float64{1, math.Inf(1)}})
	reg.MustRegister(reqs, lat, depth, empty, plain)

	reqs.WithLabelValues("b", "200").Add(2)
	reqs.WithLabelValues(`a"q\uote`+"\n", "500").Inc()
	reqs.With(metrics.Labels{"code": "200", "route": "a"}).Add(0.5)
	for _, v := range []float64{0.1, 0.05, 1, 5, 50} { // 0.1 and 1 fall in their own bucket: le is inclusive
		lat.WithLabelValues("a").Observe(v)
	}
	depth.Set(3)
	depth.Dec()
	plain.Observe(math.NaN())

	want := `# HELP t_depth Depth.
# TYPE t_depth gauge
t_depth 2
# HELP t_plain Plain.
# TYPE t_plain histogram
t_plain_bucket{le="1"} 0
t_plain_bucket{le="+Inf"} 1
t_plain_sum NaN
t_plain_count 1
# HELP t_requests_total Requests by "code", a \\ and a\nnewline.
# TYPE t_requests_total counter
t_requests_total{code="200",route="a"} 0.5
t_requests_total{code="200",route="b"} 2
t_requests_total{code="500",route="a\"q\\uote\n"} 1
# HELP t_seconds Latency.
# TYPE t_seconds histogram
t_seconds_bucket{route="a",le="0.1"} 2
t_seconds_bucket{route="a",le="1"} 3
t_seconds_bucket{route="a",le="10"} 4
t_seconds_bucket{route="a",le="+Inf"} 5
t_seconds_sum 56.15
t_seconds_count{route="a"} 5
`
	// The sum's label set is the series' too.
	want = strings.Replace(want, "t_seconds_sum 56.15", `t_seconds_sum{route="a"} 56.15`, 1)
	if diff := cmp.Diff(want, text(t, reg)); diff != "" {
		t.Errorf("exposition (-want +got):\n%s", diff)
	}
}

// Registering a collector of a name taken with the same shape hands back
// the first one (code that builds its collectors per pool or per ledger
// shares them); another shape is an error; MustRegister panics on both.
func TestRegisterShared(t *testing.T) {
	reg := metrics.NewRegistry()
	opts := metrics.CounterOpts{Name: "t_jobs_total", Help: "Jobs."}
	first := metrics.NewCounterVec(opts, []string{"route"})
	reg.MustRegister(first)
	first.WithLabelValues("r1").Inc()

	second := metrics.NewCounterVec(opts, []string{"route"})
	err := reg.Register(second)
	var are metrics.AlreadyRegisteredError
	if !errors.As(err, &are) || are.Existing != first || are.New != second {
		t.Fatalf("Register of the same shape: %v, want AlreadyRegisteredError with the first collector", err)
	}
	are.Existing.(*metrics.CounterVec).WithLabelValues("r2").Inc()
	if err := reg.Register(first); !errors.As(err, &are) {
		t.Errorf("Register of the same collector again: %v, want AlreadyRegisteredError", err)
	}

	for name, c := range map[string]metrics.Collector{
		"other help":   metrics.NewCounterVec(metrics.CounterOpts{Name: "t_jobs_total", Help: "Other."}, []string{"route"}),
		"other labels": metrics.NewCounterVec(opts, []string{"route", "outcome"}),
		"other type":   metrics.NewGauge(metrics.GaugeOpts{Name: "t_jobs_total", Help: "Jobs."}),
		"bad name":     metrics.NewCounter(metrics.CounterOpts{Name: "t-jobs", Help: "Jobs."}),
		"bad label":    metrics.NewCounterVec(metrics.CounterOpts{Name: "t_x", Help: "X."}, []string{"__route"}),
		"le label":     metrics.NewHistogramVec(metrics.HistogramOpts{Name: "t_h", Help: "H."}, []string{"le"}),
		"bad buckets":  metrics.NewHistogram(metrics.HistogramOpts{Name: "t_h", Help: "H.", Buckets: []float64{1, 1}}),
		"a series":     first.WithLabelValues("r1"),
	} {
		err := reg.Register(c)
		if err == nil || errors.As(err, &are) {
			t.Errorf("%s: Register = %v, want an error that is not AlreadyRegisteredError", name, err)
		}
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("MustRegister of a taken name did not panic")
			}
		}()
		reg.MustRegister(second)
	}()
	want := "# HELP t_jobs_total Jobs.\n# TYPE t_jobs_total counter\nt_jobs_total{route=\"r1\"} 1\nt_jobs_total{route=\"r2\"} 1\n"
	if got := text(t, reg); got != want {
		t.Errorf("exposition:\n%s\nwant:\n%s", got, want)
	}
}

// A wrong count of label values or a value that is not UTF-8 is a
// programming error and panics, as a misspelt metric would.
func TestLabelValuesChecked(t *testing.T) {
	v := metrics.NewCounterVec(metrics.CounterOpts{Name: "t_total", Help: "T."}, []string{"a", "b"})
	for name, f := range map[string]func(){
		"too few":  func() { v.WithLabelValues("x") },
		"too many": func() { v.WithLabelValues("x", "y", "z") },
		"not utf8": func() { v.WithLabelValues("x", "\xff") },
		"missing":  func() { v.With(metrics.Labels{"a": "x", "c": "y"}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// Counting on a series that exists allocates nothing.
func TestHotPathAllocatesNothing(t *testing.T) {
	one := metrics.NewCounterVec(metrics.CounterOpts{Name: "t1_total", Help: "T."}, []string{"a"})
	three := metrics.NewCounterVec(metrics.CounterOpts{Name: "t3_total", Help: "T."}, []string{"a", "b", "c"})
	hist := metrics.NewHistogramVec(metrics.HistogramOpts{Name: "t_h", Help: "H.", Buckets: metrics.ExponentialBuckets(0.001, 2.5, 14)}, []string{"dialect"})
	g := metrics.NewGauge(metrics.GaugeOpts{Name: "t_g", Help: "G."})
	one.WithLabelValues("x").Inc()
	three.WithLabelValues("anthropic", "200", "ok").Inc()
	hist.WithLabelValues("openai").Observe(1)
	d := "anthropic"
	if n := testing.AllocsPerRun(1000, func() {
		one.WithLabelValues("x").Inc()
		three.WithLabelValues(d, "200", "ok").Add(2.5)
		hist.WithLabelValues("openai").Observe(0.2)
		g.Add(1)
	}); n != 0 {
		t.Errorf("%v allocations per update, want 0", n)
	}
}

// Concurrent updates are neither lost nor torn.
func TestConcurrentUpdates(t *testing.T) {
	c := metrics.NewCounterVec(metrics.CounterOpts{Name: "t_total", Help: "T."}, []string{"w"})
	g := metrics.NewGauge(metrics.GaugeOpts{Name: "t_g", Help: "G."})
	h := metrics.NewHistogram(metrics.HistogramOpts{Name: "t_h", Help: "H.", Buckets: []float64{1}})
	reg := metrics.NewRegistry()
	reg.MustRegister(c, g, h)
	const workers, n = 8, 2000
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			label := string(rune('a' + w%2)) // two workers per series, new series raced into existence
			for range n {
				c.WithLabelValues(label).Add(0.5)
				c.WithLabelValues(label).Inc()
				g.Inc()
				h.Observe(2)
			}
			_ = reg.Gather()
		}()
	}
	wg.Wait()
	if got, want := c.WithLabelValues("a").Value()+c.WithLabelValues("b").Value(), 1.5*workers*n; got != want {
		t.Errorf("counter sum %v, want %v", got, want)
	}
	if got := g.Value(); got != workers*n {
		t.Errorf("gauge %v, want %v", got, workers*n)
	}
	if got := family(t, reg, "t_h").Series[0].Count; got != workers*n {
		t.Errorf("histogram count %d, want %d", got, workers*n)
	}
}

func TestCounterRefusesToDecrease(t *testing.T) {
	c := metrics.NewCounter(metrics.CounterOpts{Name: "t_total", Help: "T."})
	defer func() {
		if recover() == nil {
			t.Error("Add(-1) did not panic")
		}
	}()
	c.Add(-1)
}

func TestExponentialBuckets(t *testing.T) {
	if diff := cmp.Diff([]float64{1, 2, 4, 8}, metrics.ExponentialBuckets(1, 2, 4)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// The handler serves the text format with its content type, gzipped when
// asked.
func TestHandler(t *testing.T) {
	reg := metrics.NewRegistry()
	c := metrics.NewCounter(metrics.CounterOpts{Name: "t_total", Help: "T."})
	reg.MustRegister(c)
	c.Inc()
	for enc, wantGz := range map[string]bool{"": false, "gzip": true, "gzip;q=0": false, "deflate, gzip;q=0.5": true, "identity": false} {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.Header.Set("Accept-Encoding", enc)
		rec := httptest.NewRecorder()
		reg.Handler().ServeHTTP(rec, req)
		if ct := rec.Header().Get("Content-Type"); ct != "text/plain; version=0.0.4; charset=utf-8" {
			t.Errorf("%q: Content-Type %q", enc, ct)
		}
		body := rec.Body.Bytes()
		gz := rec.Header().Get("Content-Encoding") == "gzip"
		if gz != wantGz {
			t.Errorf("%q: gzipped %v, want %v", enc, gz, wantGz)
		}
		if gz {
			r, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if body, err = io.ReadAll(r); err != nil {
				t.Fatal(err)
			}
		}
		if want := "# HELP t_total T.\n# TYPE t_total counter\nt_total 1\n"; string(body) != want {
			t.Errorf("%q: body %q, want %q", enc, body, want)
		}
	}
}

// The Go and process collectors report this process: values a reader can
// check against the runtime and /proc.
func TestRuntimeCollectors(t *testing.T) {
	reg := metrics.NewRegistry()
	reg.MustRegister(metrics.NewGoCollector(), metrics.NewProcessCollector())
	runtime.GC()
	fams := map[string]metrics.Family{}
	for _, f := range reg.Gather() {
		fams[f.Name] = f
	}
	val := func(name string) float64 {
		t.Helper()
		f, ok := fams[name]
		if !ok {
			t.Fatalf("no %s", name)
		}
		return f.Series[0].Value
	}
	if f := fams["go_info"]; len(f.Series) != 1 || f.Series[0].Labels[0] != (metrics.Label{Name: "version", Value: runtime.Version()}) {
		t.Errorf("go_info = %+v, want version %s", f, runtime.Version())
	}
	if g := val("go_goroutines"); g < 1 {
		t.Errorf("go_goroutines = %v", g)
	}
	if gc := fams["go_gc_duration_seconds"]; gc.Type != metrics.TypeSummary || gc.Series[0].Count < 1 || len(gc.Series[0].Quantiles) != 5 {
		t.Errorf("go_gc_duration_seconds after a GC = %+v", gc)
	}
	if v := val("go_memstats_last_gc_time_seconds"); math.Abs(v-float64(time.Now().Unix())) > 3600 {
		t.Errorf("go_memstats_last_gc_time_seconds = %v, not within an hour of now", v)
	}
	if a, i := val("go_memstats_alloc_bytes"), val("go_memstats_heap_inuse_bytes"); a <= 0 || i < a {
		t.Errorf("go_memstats_alloc_bytes %v, heap_inuse %v", a, i)
	}
	if runtime.GOOS != "linux" {
		return
	}
	if v := val("process_start_time_seconds"); v > float64(time.Now().Unix())+1 || v < float64(time.Now().Add(-24*time.Hour).Unix()) {
		t.Errorf("process_start_time_seconds = %v", v)
	}
	if v := val("process_resident_memory_bytes"); v < 1<<20 {
		t.Errorf("process_resident_memory_bytes = %v", v)
	}
	f, err := os.Open(os.Args[0]) // one more descriptor
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	open := metricsAgain(t, reg, "process_open_fds")
	f.Close()
	if after := metricsAgain(t, reg, "process_open_fds"); after != open-1 {
		t.Errorf("process_open_fds %v with a file open, %v after closing it", open, after)
	}
	if m := val("process_max_fds"); m < open {
		t.Errorf("process_max_fds %v < open %v", m, open)
	}
	if v := val("process_cpu_seconds_total"); v < 0 {
		t.Errorf("process_cpu_seconds_total = %v", v)
	}
}

func metricsAgain(t *testing.T, reg *metrics.Registry, name string) float64 {
	t.Helper()
	return family(t, reg, name).Series[0].Value
}

func family(t *testing.T, reg *metrics.Registry, name string) metrics.Family {
	t.Helper()
	for _, f := range reg.Gather() {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no %s", name)
	return metrics.Family{}
}

// Shared hands back the collector registered first for the same name and
// shape, registers nothing on a nil registry, and panics on a conflict.
func TestSharedHelper(t *testing.T) {
	reg := metrics.NewRegistry()
	opts := metrics.CounterOpts{Name: "t_shared_total", Help: "Shared."}
	first := metrics.Shared(reg, metrics.NewCounterVec(opts, []string{"route"}))
	if again := metrics.Shared(reg, metrics.NewCounterVec(opts, []string{"route"})); again != first {
		t.Error("Shared of the same shape returned a new collector, want the first")
	}
	alone := metrics.NewCounter(metrics.CounterOpts{Name: "t_alone_total", Help: "Alone."})
	if got := metrics.Shared(nil, alone); got != alone {
		t.Error("Shared on a nil registry did not return the collector")
	}
	defer func() {
		if recover() == nil {
			t.Error("Shared of a conflicting shape did not panic")
		}
	}()
	metrics.Shared(reg, metrics.NewGauge(metrics.GaugeOpts{Name: "t_shared_total", Help: "Shared."}))
}
