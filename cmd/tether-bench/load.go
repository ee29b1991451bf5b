package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// newLoadClient is the load generator's client: a large idle pool to one
// loopback host, no compression, HTTP/1.1 like the agents' SDKs over http://.
func newLoadClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:               nil,
		MaxIdleConns:        4096,
		MaxIdleConnsPerHost: 4096,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}}
}

// samples is what one measurement collected.
type samples struct {
	total   []time.Duration // whole request, until the last body byte
	ttfb    []time.Duration // until the first body byte
	elapsed time.Duration   // wall time of the measurement
	cpu     time.Duration   // the whole process's CPU time (user + system) during it
	errors  int             // requests that failed or got a wrong answer
	lastErr error
}

func (s *samples) add(o samples) {
	s.total = append(s.total, o.total...)
	s.ttfb = append(s.ttfb, o.ttfb...)
	s.elapsed += o.elapsed
	s.cpu += o.cpu
	s.errors += o.errors
	if o.lastErr != nil {
		s.lastErr = o.lastErr
	}
}

var errWrongAnswer = errors.New("wrong answer")

// one sends a request and reads the whole answer, checking its status and
// length.
func one(ctx context.Context, c *http.Client, url string, body []byte, want int, buf []byte) (ttfb, total time.Duration, err error) {
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, 0, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer sk-bench-caller-key")
	resp, err := c.Do(req)
	if err != nil {
		return 0, 0, fmt.Errorf("send: %w", err)
	}
	defer resp.Body.Close()
	n := 0
	for n == 0 {
		k, rerr := resp.Body.Read(buf)
		n += k
		if rerr != nil {
			if rerr != io.EOF {
				return 0, 0, fmt.Errorf("read: %w", rerr)
			}
			break
		}
	}
	ttfb = time.Since(start)
	rest, err := io.CopyBuffer(io.Discard, resp.Body, buf)
	if err != nil {
		return 0, 0, fmt.Errorf("read: %w", err)
	}
	total = time.Since(start)
	if resp.StatusCode != http.StatusOK || n+int(rest) != want {
		return 0, 0, fmt.Errorf("%w: status %d, %d bytes, want 200 and %d bytes", errWrongAnswer, resp.StatusCode, n+int(rest), want)
	}
	return ttfb, total, nil
}

// measure drives url with conc concurrent clients for d or max requests,
// whichever comes first. A failed request is counted, not sampled; more
// than 1% of failures fails the measurement.
// seqs holds each client's next request number for one target (agent
// workloads: the client's place in its sessions); client i owns seqs[i].
func measure(ctx context.Context, c *http.Client, url string, w *workload, seqs []int, stream bool, conc int, d time.Duration, max int) (samples, error) {
	want := answerLen(w, stream)
	deadline := time.Now().Add(d)
	var (
		issued atomic.Int64
		wg     sync.WaitGroup
		mu     sync.Mutex
		out    samples
	)
	start, cpu0 := time.Now(), processCPU()
	for client := range conc {
		wg.Go(func() {
			buf := make([]byte, 32<<10)
			var reqBuf []byte
			if w.agent() {
				reqBuf = make([]byte, 0, w.size+w.size/4+64<<10)
			}
			local := samples{
				total: make([]time.Duration, 0, 1024),
				ttfb:  make([]time.Duration, 0, 1024),
			}
			for ctx.Err() == nil && time.Now().Before(deadline) && issued.Add(1) <= int64(max) {
				body := w.body(reqBuf, client, seqs[client], stream)
				seqs[client]++
				ttfb, total, err := one(ctx, c, url, body, want, buf)
				if err != nil {
					local.errors++
					local.lastErr = err
					continue
				}
				local.total = append(local.total, total)
				local.ttfb = append(local.ttfb, ttfb)
			}
			mu.Lock()
			out.add(local)
			mu.Unlock()
		})
	}
	wg.Wait()
	out.elapsed, out.cpu = time.Since(start), processCPU()-cpu0
	if err := ctx.Err(); err != nil {
		return out, err
	}
	if out.errors*100 > len(out.total)+out.errors {
		return out, fmt.Errorf("%d of %d requests failed, last: %w", out.errors, len(out.total)+out.errors, out.lastErr)
	}
	return out, nil
}

// processCPU is the CPU time (user + system) this process has used: the
// clients, the fake provider and every target share it, so the difference
// between two targets' CPU a request is what one costs over the other,
// whatever else the machine runs.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// stats summarises pooled samples.
type stats struct {
	n, errors        int
	rps              float64
	cpuPerReq        time.Duration // the process's CPU time a completed request
	p50, p99         time.Duration
	ttfbP50, ttfbP99 time.Duration
}

func summarise(s samples) stats {
	st := stats{n: len(s.total), errors: s.errors}
	if st.n == 0 {
		return st
	}
	st.rps = float64(st.n) / s.elapsed.Seconds()
	st.cpuPerReq = s.cpu / time.Duration(st.n)
	slices.Sort(s.total)
	slices.Sort(s.ttfb)
	st.p50, st.p99 = quantile(s.total, 0.50), quantile(s.total, 0.99)
	st.ttfbP50, st.ttfbP99 = quantile(s.ttfb, 0.50), quantile(s.ttfb, 0.99)
	return st
}

// quantile is the nearest-rank quantile of sorted s.
func quantile(s []time.Duration, q float64) time.Duration {
	i := int(float64(len(s))*q+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}
