package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"
)

// cell is one measured combination.
type cell struct {
	stream bool
	conc   int
	target string
}

// makeTarget builds one proxy in front of the upstream at upURL; the func
// it returns releases the proxy's resources.
type makeTarget func(upURL string) (http.Handler, func(), error)

// builder names a proxy variant.
type builder struct {
	key, name string
	make      makeTarget
}

// wants reports whether target key is run: every target but the opt-in
// ones when -targets is not given, else those it names.
func (s settings) wants(key string) bool {
	if len(s.only) == 0 {
		return !optIn[key]
	}
	return s.only[key]
}

// optIn are the targets run only when -targets names them.
var optIn = map[string]bool{keyAppOff: true}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	s, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if s.cpuProfile != "" {
		f, err := os.Create(s.cpuProfile)
		if err != nil {
			return fmt.Errorf("cpu profile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("cpu profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	if s.memProfile != "" {
		defer func() {
			if f, err := os.Create(s.memProfile); err == nil {
				_ = pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
		}()
	}

	upURL, stopUp, err := serve(upstreamHandler())
	if err != nil {
		return fmt.Errorf("upstream: %w", err)
	}
	defer stopUp()

	var targets []target
	if s.wants("direct") {
		targets = append(targets, target{name: "direct", url: upURL, stop: func() {}})
	}
	defer func() {
		for _, t := range targets {
			t.stop()
		}
	}()
	builders := []builder{
		{"bare", "bare ReverseProxy", bareProxy},
		{"tether", "Tether (no hooks)", tetherCore},
	}
	builders = append(builders, extraTargets(ctx, s.store)...)
	for _, b := range builders {
		if !s.wants(b.key) {
			continue
		}
		h, closeIdle, err := b.make(upURL)
		if err != nil {
			return fmt.Errorf("%s: %w", b.name, err)
		}
		u, stop, err := serve(h)
		if err != nil {
			return fmt.Errorf("%s: %w", b.name, err)
		}
		targets = append(targets, target{name: b.name, url: u, stop: func() { stop(); closeIdle() }})
	}

	clients := map[string]*http.Client{}
	seqs := map[string][]int{}
	for _, t := range targets {
		c := newLoadClient()
		defer c.CloseIdleConnections()
		clients[t.name] = c
		seqs[t.name] = s.firstSeqs(slices.Max(s.concurrency))
	}

	results := map[cell]*samples{}
	began := time.Now()
	for round := range s.rounds {
		for _, stream := range s.streams {
			for _, conc := range s.concurrency {
				order := slices.Clone(targets)
				if round%2 == 1 {
					slices.Reverse(order)
				}
				for _, t := range order {
					url := t.url + s.work.path
					c := clients[t.name]
					if _, err := measure(ctx, c, url, s.work, seqs[t.name], stream, conc, s.warmup, s.maxRequests); err != nil {
						return fmt.Errorf("%s warm-up (stream=%v, c=%d): %w", t.name, stream, conc, err)
					}
					m, err := measure(ctx, c, url, s.work, seqs[t.name], stream, conc, s.duration, s.maxRequests)
					if err != nil {
						return fmt.Errorf("%s (stream=%v, c=%d): %w", t.name, stream, conc, err)
					}
					k := cell{stream, conc, t.name}
					if results[k] == nil {
						results[k] = &samples{}
					}
					results[k].add(m)
					fmt.Fprintf(stderr, "round %d stream=%-5v c=%-3d %-26s %6d requests", round+1, stream, conc, t.name, len(m.total))
					if m.errors > 0 {
						fmt.Fprintf(stderr, ", %d failed (last: %v)", m.errors, m.lastErr)
					}
					fmt.Fprintln(stderr)
				}
			}
		}
	}
	names := make([]string, len(targets))
	for i, t := range targets {
		names[i] = t.name
	}
	report(stdout, s, names, results, time.Since(began))
	return nil
}

func modeName(stream bool) string {
	if stream {
		return "stream (SSE, 20 events)"
	}
	return "non-stream (JSON)"
}

func ms(d time.Duration) string {
	if d < 10*time.Millisecond {
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	}
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

// report prints the Markdown tables and the overhead checks.
func report(w io.Writer, s settings, names []string, res map[cell]*samples, took time.Duration) {
	fmt.Fprintf(w, "Machine: %d CPUs (GOMAXPROCS %d), %s %s/%s", runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if la, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Fprintf(w, ", load average at end %s", strings.Join(strings.Fields(string(la))[:3], " "))
	}
	starts := ""
	if s.work.agent() {
		starts = ", sessions started together"
		if s.staggered {
			starts = ", sessions started staggered"
		}
	}
	fmt.Fprintf(w, ".\nBodies: %s%s. Production-hooks store: %s.", s.work.describe(), starts, s.store)
	fmt.Fprintf(w, "\nRun: %d round(s) × %s per target and cell (after %s warm-up), %s in all.\n\n", s.rounds, s.duration, s.warmup, took.Round(time.Second))

	fmt.Fprintln(w, "| mode | clients | target | req/s | p50 | p99 | TTFB p50 | TTFB p99 | CPU a request | requests | errors |")
	fmt.Fprintln(w, "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, stream := range s.streams {
		for _, conc := range s.concurrency {
			for _, n := range names {
				st := summarise(*res[cell{stream, conc, n}])
				ttfb50, ttfb99 := ms(st.ttfbP50), ms(st.ttfbP99)
				if !stream {
					ttfb50, ttfb99 = "–", "–"
				}
				fmt.Fprintf(w, "| %s | %d | %s | %.0f | %s | %s | %s | %s | %.0f µs | %d | %d |\n",
					modeName(stream), conc, n, st.rps, ms(st.p50), ms(st.p99), ttfb50, ttfb99, float64(st.cpuPerReq)/1e3, st.n, st.errors)
			}
		}
	}

	fmt.Fprintln(w, "\nOverhead targets, each Tether variant against the bare ReverseProxy hop:")
	fmt.Fprintln(w, "")
	fmt.Fprintln(w, "| mode | clients | target | check | measured | result |")
	fmt.Fprintln(w, "|---|---:|---|---|---:|---|")
	for _, stream := range s.streams {
		for _, conc := range s.concurrency {
			bs := res[cell{stream, conc, "bare ReverseProxy"}]
			if bs == nil {
				continue
			}
			bare := summarise(*bs)
			for _, n := range names {
				if !strings.HasPrefix(n, "Tether") {
					continue
				}
				st := summarise(*res[cell{stream, conc, n}])
				if conc == 1 {
					d := st.p50 - bare.p50
					fmt.Fprintf(w, "| %s | 1 | %s | added p50 ≤ 100 µs | %+.0f µs | %s |\n", modeName(stream), n, float64(d)/1e3, verdict(d <= 100*time.Microsecond))
				}
				if conc >= 64 {
					// Not a target: what the variant's work costs, read off
					// the process's CPU clock rather than off throughput,
					// which moves with whatever else the machine runs.
					fmt.Fprintf(w, "| %s | %d | %s | CPU a request over the bare hop | %+.0f µs | – |\n", modeName(stream), conc, n, float64(st.cpuPerReq-bare.cpuPerReq)/1e3)
					tr := st.rps / bare.rps
					pr := float64(st.p99) / float64(bare.p99)
					fmt.Fprintf(w, "| %s | %d | %s | throughput ≥ 0.90× | %.2f× | %s |\n", modeName(stream), conc, n, tr, verdict(tr >= 0.90))
					fmt.Fprintf(w, "| %s | %d | %s | p99 ≤ 1.15× | %.2f× | %s |\n", modeName(stream), conc, n, pr, verdict(pr <= 1.15))
				}
			}
		}
	}
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "**missed**"
}
