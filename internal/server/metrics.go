package server

import (
	"strconv"
	"time"

	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/metrics"
)

type httpMetrics struct {
	requests     *metrics.CounterVec
	duration     *metrics.HistogramVec
	hookFailures *metrics.Counter
	faults       *metrics.CounterVec
	auxRefused   *metrics.Counter
	loops        *metrics.Counter
}

func newHTTPMetrics(reg metrics.Registerer) *httpMetrics {
	m := &httpMetrics{
		requests: metrics.NewCounterVec(metrics.CounterOpts{
			Name: "tether_requests_total", Help: "Proxied requests by dialect and status code.",
		}, []string{"dialect", "code"}),
		duration: metrics.NewHistogramVec(metrics.HistogramOpts{
			Name: "tether_request_duration_seconds", Help: "Proxied request duration, whole exchange.",
			Buckets: metrics.ExponentialBuckets(0.001, 2.5, 14),
		}, []string{"dialect"}),
		hookFailures: metrics.NewCounter(metrics.CounterOpts{
			Name: "tether_hook_failures_total", Help: "Request hooks that failed or panicked; the request went on unchanged.",
		}),
		faults: metrics.NewCounterVec(metrics.CounterOpts{
			Name: "tether_upstream_faults_total", Help: "Provider answers that broke the protocol (redirect, too large, malformed body or stream, no terminal event); the caller got an error in its dialect.",
		}, []string{"kind"}),
		auxRefused: metrics.NewCounter(metrics.CounterOpts{
			Name: "tether_aux_marker_refused_total", Help: "Requests refused for an internal-request marker that was malformed, expired, not signed for their body and depth, or already used.",
		}),
	}
	m.loops = metrics.NewCounter(metrics.CounterOpts{
		Name: "tether_forwarding_loops_total", Help: "Requests refused with 508 because they had already passed through this proxy (a provider base_url leading back to it) or through too many Tether proxies.",
	})
	reg.MustRegister(m.requests, m.duration, m.hookFailures, m.faults, m.auxRefused, m.loops)
	return m
}

func (m *httpMetrics) observe(d dialect.Name, status int, dur time.Duration) {
	m.requests.WithLabelValues(string(d), strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(string(d)).Observe(dur.Seconds())
}
