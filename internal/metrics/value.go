package metrics

import (
	"fmt"
	"math"
	"sync/atomic"
)

// Labels are label values by label name.
type Labels map[string]string

// CounterOpts names and describes a counter.
type CounterOpts struct {
	Name string
	Help string
}

// GaugeOpts names and describes a gauge.
type GaugeOpts struct {
	Name string
	Help string
}

// HistogramOpts names and describes a histogram. Buckets are the upper
// bounds, strictly increasing; +Inf is implied (nil: [DefBuckets]).
type HistogramOpts struct {
	Name    string
	Help    string
	Buckets []float64
}

// DefBuckets are the buckets of a histogram that names none (seconds, from
// 5 ms to 10 s).
var DefBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// ExponentialBuckets returns count buckets, the first start and each next
// one factor times the previous. It panics unless count ≥ 1, start > 0 and
// factor > 1.
func ExponentialBuckets(start, factor float64, count int) []float64 {
	if count < 1 || start <= 0 || factor <= 1 {
		panic(fmt.Sprintf("metrics: ExponentialBuckets(%v, %v, %d): want start > 0, factor > 1, count ≥ 1", start, factor, count))
	}
	b := make([]float64, count)
	for i := range b {
		b[i] = start
		start *= factor
	}
	return b
}

// addFloat adds v to the float64 whose bits are in u.
func addFloat(u *atomic.Uint64, v float64) {
	for {
		old := u.Load()
		if u.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

// Counter is a value that only goes up. Its zero value is not registrable;
// make one with [NewCounter] or get one from a [CounterVec].
type Counter struct {
	d    *desc         // nil: a series of a vector
	n    atomic.Uint64 // whole increments
	frac atomic.Uint64 // float64 bits of everything else
}

// NewCounter returns an unregistered counter.
func NewCounter(opts CounterOpts) *Counter {
	return &Counter{d: &desc{name: opts.Name, help: opts.Help, typ: TypeCounter}}
}

// Inc adds 1.
func (c *Counter) Inc() { c.n.Add(1) }

// Add adds v. It panics if v is negative: a counter never goes down.
func (c *Counter) Add(v float64) {
	if v < 0 {
		panic("metrics: counter cannot decrease in value")
	}
	if v < 1<<53 {
		if u := uint64(v); float64(u) == v {
			c.n.Add(u)
			return
		}
	}
	addFloat(&c.frac, v)
}

// Value is the counter's current value.
func (c *Counter) Value() float64 {
	return float64(c.n.Load()) + math.Float64frombits(c.frac.Load())
}

func (c *Counter) descs() []*desc { return []*desc{c.d} }

func (c *Counter) collect(dst []Family) []Family {
	return append(dst, Family{Name: c.d.name, Help: c.d.help, Type: TypeCounter, Series: []Series{{Value: c.Value()}}})
}

// Gauge is a value that goes up and down. Make one with [NewGauge] or get
// one from a [GaugeVec].
type Gauge struct {
	d    *desc
	bits atomic.Uint64
}

// NewGauge returns an unregistered gauge.
func NewGauge(opts GaugeOpts) *Gauge {
	return &Gauge{d: &desc{name: opts.Name, help: opts.Help, typ: TypeGauge}}
}

// Set sets the gauge to v.
func (g *Gauge) Set(v float64) { g.bits.Store(math.Float64bits(v)) }

// Add adds v (which may be negative).
func (g *Gauge) Add(v float64) { addFloat(&g.bits, v) }

// Sub subtracts v.
func (g *Gauge) Sub(v float64) { addFloat(&g.bits, -v) }

// Inc adds 1.
func (g *Gauge) Inc() { addFloat(&g.bits, 1) }

// Dec subtracts 1.
func (g *Gauge) Dec() { addFloat(&g.bits, -1) }

// Value is the gauge's current value.
func (g *Gauge) Value() float64 { return math.Float64frombits(g.bits.Load()) }

func (g *Gauge) descs() []*desc { return []*desc{g.d} }

func (g *Gauge) collect(dst []Family) []Family {
	return append(dst, Family{Name: g.d.name, Help: g.d.help, Type: TypeGauge, Series: []Series{{Value: g.Value()}}})
}

// Histogram counts observations in buckets. Make one with [NewHistogram]
// or get one from a [HistogramVec].
type Histogram struct {
	d      *desc
	upper  []float64       // bucket upper bounds, +Inf excluded
	counts []atomic.Uint64 // per bucket, not cumulative; the last is +Inf
	sum    atomic.Uint64   // float64 bits
}

// NewHistogram returns an unregistered histogram.
func NewHistogram(opts HistogramOpts) *Histogram {
	d := &desc{name: opts.Name, help: opts.Help, typ: TypeHistogram, buckets: upperBounds(opts.Buckets)}
	h := newHistogram(d.buckets)
	h.d = d
	return h
}

func newHistogram(upper []float64) *Histogram {
	return &Histogram{upper: upper, counts: make([]atomic.Uint64, len(upper)+1)}
}

// upperBounds returns b without a trailing +Inf (implied), or DefBuckets.
// Whether they increase is checked at registration.
func upperBounds(b []float64) []float64 {
	if b == nil {
		b = DefBuckets
	}
	if n := len(b); n > 0 && math.IsInf(b[n-1], 1) {
		b = b[:n-1]
	}
	return append([]float64(nil), b...)
}

// Observe adds one observation of v.
func (h *Histogram) Observe(v float64) {
	i := 0
	for i < len(h.upper) && !(v <= h.upper[i]) { // NaN goes to +Inf
		i++
	}
	h.counts[i].Add(1)
	addFloat(&h.sum, v)
}

// snapshot fills s's buckets (cumulative), count and sum. The count is the
// +Inf bucket's, so the two always agree.
func (h *Histogram) snapshot(s *Series) {
	s.Buckets = make([]Bucket, len(h.upper))
	var cum uint64
	for i, ub := range h.upper {
		cum += h.counts[i].Load()
		s.Buckets[i] = Bucket{UpperBound: ub, Count: cum}
	}
	s.Count = cum + h.counts[len(h.upper)].Load()
	s.Sum = math.Float64frombits(h.sum.Load())
}

func (h *Histogram) descs() []*desc { return []*desc{h.d} }

func (h *Histogram) collect(dst []Family) []Family {
	var s Series
	h.snapshot(&s)
	return append(dst, Family{Name: h.d.name, Help: h.d.help, Type: TypeHistogram, Series: []Series{s}})
}
