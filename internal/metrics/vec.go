package metrics

import (
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// sep joins label values into a series key; 0xff never occurs in UTF-8,
// and label values must be UTF-8.
const sep = 0xff

// vec holds the series of a vector by their label values. Readers load an
// immutable map; a new series replaces it under mu.
type vec[T any] struct {
	d      *desc
	newT   func() *T
	series atomic.Pointer[map[string]*series[T]]
	mu     sync.Mutex
}

type series[T any] struct {
	values []string // in the order the labels were declared
	m      *T
}

func newVec[T any](d *desc, newT func() *T) *vec[T] {
	v := &vec[T]{d: d, newT: newT}
	v.series.Store(&map[string]*series[T]{})
	return v
}

// get returns the series of vals (in declared label order), creating it on
// first use. It panics if the count of values is wrong or one is not
// UTF-8, as a misspelt metric name would.
func (v *vec[T]) get(vals []string) *T {
	if len(vals) != len(v.d.labels) {
		panic(fmt.Sprintf("metrics: %s has labels %q, got %d values", v.d.name, v.d.labels, len(vals)))
	}
	m := *v.series.Load()
	if len(vals) == 1 {
		if s, ok := m[vals[0]]; ok {
			return s.m
		}
		return v.create(vals[0], vals)
	}
	var buf [128]byte
	key := appendKey(buf[:0], vals)
	if s, ok := m[string(key)]; ok {
		return s.m
	}
	return v.create(string(key), vals)
}

func appendKey(b []byte, vals []string) []byte {
	for i, s := range vals {
		if i > 0 {
			b = append(b, sep)
		}
		b = append(b, s...)
	}
	return b
}

func (v *vec[T]) create(key string, vals []string) *T {
	for _, s := range vals {
		if !utf8.ValidString(s) {
			panic(fmt.Sprintf("metrics: %s: label value %q is not valid UTF-8", v.d.name, s))
		}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	old := *v.series.Load()
	if s, ok := old[key]; ok {
		return s.m
	}
	m := make(map[string]*series[T], len(old)+1)
	for k, s := range old {
		m[k] = s
	}
	s := &series[T]{values: slices.Clone(vals), m: v.newT()}
	m[key] = s
	v.series.Store(&m)
	return s.m
}

// with orders the values of labels as declared.
func (v *vec[T]) with(labels Labels) *T {
	if len(labels) != len(v.d.labels) {
		panic(fmt.Sprintf("metrics: %s has labels %q, got %v", v.d.name, v.d.labels, labels))
	}
	var arr [8]string
	vals := arr[:0]
	for _, name := range v.d.labels {
		val, ok := labels[name]
		if !ok {
			panic(fmt.Sprintf("metrics: %s has labels %q, got %v", v.d.name, v.d.labels, labels))
		}
		vals = append(vals, val)
	}
	return v.get(vals)
}

// collect appends the vector's family, its series sorted by label values in
// label-name order, with fill setting each series' value.
func (v *vec[T]) collect(dst []Family, fill func(*T, *Series)) []Family {
	m := *v.series.Load()
	f := Family{Name: v.d.name, Help: v.d.help, Type: v.d.typ, Series: make([]Series, 0, len(m))}
	order := v.d.labelOrder()
	for _, s := range m {
		sr := Series{Labels: make([]Label, len(order))}
		for i, j := range order {
			sr.Labels[i] = Label{Name: v.d.labels[j], Value: s.values[j]}
		}
		fill(s.m, &sr)
		f.Series = append(f.Series, sr)
	}
	sort.Slice(f.Series, func(a, b int) bool {
		la, lb := f.Series[a].Labels, f.Series[b].Labels
		for i := range la {
			if la[i].Value != lb[i].Value {
				return la[i].Value < lb[i].Value
			}
		}
		return false
	})
	return append(dst, f)
}

// CounterVec is a counter per combination of label values.
type CounterVec struct{ v *vec[Counter] }

// NewCounterVec returns an unregistered counter vector with the given
// label names.
func NewCounterVec(opts CounterOpts, labels []string) *CounterVec {
	d := &desc{name: opts.Name, help: opts.Help, typ: TypeCounter, labels: slices.Clone(labels)}
	return &CounterVec{v: newVec(d, func() *Counter { return &Counter{} })}
}

// WithLabelValues returns the counter of these label values, given in the
// order the labels were declared.
func (c *CounterVec) WithLabelValues(values ...string) *Counter { return c.v.get(values) }

// With returns the counter of these label values.
func (c *CounterVec) With(labels Labels) *Counter { return c.v.with(labels) }

func (c *CounterVec) descs() []*desc { return []*desc{c.v.d} }

func (c *CounterVec) collect(dst []Family) []Family {
	return c.v.collect(dst, func(m *Counter, s *Series) { s.Value = m.Value() })
}

// GaugeVec is a gauge per combination of label values.
type GaugeVec struct{ v *vec[Gauge] }

// NewGaugeVec returns an unregistered gauge vector with the given label
// names.
func NewGaugeVec(opts GaugeOpts, labels []string) *GaugeVec {
	d := &desc{name: opts.Name, help: opts.Help, typ: TypeGauge, labels: slices.Clone(labels)}
	return &GaugeVec{v: newVec(d, func() *Gauge { return &Gauge{} })}
}

// WithLabelValues returns the gauge of these label values, given in the
// order the labels were declared.
func (g *GaugeVec) WithLabelValues(values ...string) *Gauge { return g.v.get(values) }

// With returns the gauge of these label values.
func (g *GaugeVec) With(labels Labels) *Gauge { return g.v.with(labels) }

func (g *GaugeVec) descs() []*desc { return []*desc{g.v.d} }

func (g *GaugeVec) collect(dst []Family) []Family {
	return g.v.collect(dst, func(m *Gauge, s *Series) { s.Value = m.Value() })
}

// HistogramVec is a histogram per combination of label values, all with
// the same buckets.
type HistogramVec struct{ v *vec[Histogram] }

// NewHistogramVec returns an unregistered histogram vector with the given
// label names.
func NewHistogramVec(opts HistogramOpts, labels []string) *HistogramVec {
	d := &desc{name: opts.Name, help: opts.Help, typ: TypeHistogram, labels: slices.Clone(labels), buckets: upperBounds(opts.Buckets)}
	return &HistogramVec{v: newVec(d, func() *Histogram { return newHistogram(d.buckets) })}
}

// WithLabelValues returns the histogram of these label values, given in
// the order the labels were declared.
func (h *HistogramVec) WithLabelValues(values ...string) *Histogram { return h.v.get(values) }

// With returns the histogram of these label values.
func (h *HistogramVec) With(labels Labels) *Histogram { return h.v.with(labels) }

func (h *HistogramVec) descs() []*desc { return []*desc{h.v.d} }

func (h *HistogramVec) collect(dst []Family) []Family {
	return h.v.collect(dst, func(m *Histogram, s *Series) { m.snapshot(s) })
}
