package metrics

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"
)

// Type is a metric family's type, spelt as on its # TYPE line.
type Type string

// The types of metric families.
const (
	TypeCounter   Type = "counter"
	TypeGauge     Type = "gauge"
	TypeHistogram Type = "histogram"
	TypeSummary   Type = "summary"
)

// Family is one metric family as gathered: every series of one name.
type Family struct {
	Name   string
	Help   string
	Type   Type
	Series []Series
}

// Series is one series of a family: its labels, sorted by name, and its
// value (counter, gauge) or distribution (histogram, summary).
type Series struct {
	Labels    []Label
	Value     float64
	Count     uint64     // histogram, summary
	Sum       float64    // histogram, summary
	Buckets   []Bucket   // histogram: cumulative, +Inf implied by Count
	Quantiles []Quantile // summary
}

// Label is one label pair.
type Label struct{ Name, Value string }

// Bucket is a histogram bucket: observations ≤ UpperBound.
type Bucket struct {
	UpperBound float64
	Count      uint64
}

// Quantile is one quantile of a summary.
type Quantile struct{ Quantile, Value float64 }

// desc is what a registry knows of a family before gathering it.
type desc struct {
	name, help string
	typ        Type
	labels     []string  // declared order
	buckets    []float64 // histograms
}

// labelOrder is the indices of d.labels sorted by label name.
func (d *desc) labelOrder() []int {
	order := make([]int, len(d.labels))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return d.labels[order[a]] < d.labels[order[b]] })
	return order
}

func (d *desc) sameShape(o *desc) bool {
	return d.name == o.name && d.help == o.help && d.typ == o.typ && slices.Equal(d.labels, o.labels)
}

func (d *desc) validate() error {
	if !validName(d.name, true) {
		return fmt.Errorf("metrics: invalid metric name %q", d.name)
	}
	seen := map[string]bool{}
	for _, l := range d.labels {
		if !validName(l, false) || len(l) >= 2 && l[:2] == "__" {
			return fmt.Errorf("metrics: %s: invalid label name %q", d.name, l)
		}
		if d.typ == TypeHistogram && l == "le" || d.typ == TypeSummary && l == "quantile" {
			return fmt.Errorf("metrics: %s: label %q is reserved for a %s", d.name, l, d.typ)
		}
		if seen[l] {
			return fmt.Errorf("metrics: %s: label %q declared twice", d.name, l)
		}
		seen[l] = true
	}
	for i, b := range d.buckets {
		if math.IsNaN(b) || i > 0 && b <= d.buckets[i-1] {
			return fmt.Errorf("metrics: %s: buckets %v do not strictly increase", d.name, d.buckets)
		}
	}
	return nil
}

// validName reports whether s is a metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)
// or, without colons, a label name.
func validName(s string, colon bool) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' || colon && c == ':'
		if !ok {
			return false
		}
	}
	return true
}

// Collector is anything a Registry exposes: a counter, gauge or histogram,
// a vector of them, or the Go runtime and process collectors. Only this
// package implements it.
type Collector interface {
	descs() []*desc
	collect(dst []Family) []Family
}

var (
	_ Collector = (*Counter)(nil)
	_ Collector = (*CounterVec)(nil)
	_ Collector = (*Gauge)(nil)
	_ Collector = (*GaugeVec)(nil)
	_ Collector = (*Histogram)(nil)
	_ Collector = (*HistogramVec)(nil)
)

// Registerer is where a package registers its collectors.
type Registerer interface {
	Register(Collector) error
	MustRegister(...Collector)
}

var _ Registerer = (*Registry)(nil)

// AlreadyRegisteredError is returned by Register when a collector of the
// same names, types, help and labels is registered already. Existing is
// that collector: use it in place of the new one to share its series.
type AlreadyRegisteredError struct {
	Existing, New Collector
}

func (e AlreadyRegisteredError) Error() string {
	return fmt.Sprintf("metrics: %s is already registered", e.New.descs()[0].name)
}

// Shared registers c on reg and returns it or, when a collector of the same
// names and shape is registered already, returns that one: code that builds
// its collectors more than once (a pool per extractor route, a second
// ledger, a barrier per route) shares one set of series. A nil reg
// registers nothing. Any other registration error panics, as MustRegister.
func Shared[C Collector](reg Registerer, c C) C {
	if reg == nil {
		return c
	}
	if err := reg.Register(c); err != nil {
		var are AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.Existing.(C); ok {
				return existing
			}
		}
		panic(err)
	}
	return c
}

// Registry holds collectors and gathers them for exposition. The zero
// value is not usable; call NewRegistry.
type Registry struct {
	mu         sync.RWMutex
	byName     map[string]owner
	collectors []Collector
}

type owner struct {
	c Collector
	d *desc
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{byName: map[string]owner{}}
}

// Register adds c. If c's families are registered already, with the same
// shape and by one collector, it returns an AlreadyRegisteredError with
// that collector; a name registered with another type, help or labels, or
// by several collectors, is an error.
func (r *Registry) Register(c Collector) error {
	ds := c.descs()
	if len(ds) == 0 || slices.Contains(ds, nil) {
		return errors.New("metrics: a series of a vector cannot be registered on its own")
	}
	names := map[string]bool{}
	for _, d := range ds {
		if err := d.validate(); err != nil {
			return err
		}
		if names[d.name] {
			return fmt.Errorf("metrics: %s is declared twice by one collector", d.name)
		}
		names[d.name] = true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var existing Collector
	taken := 0
	for _, d := range ds {
		o, ok := r.byName[d.name]
		if !ok {
			continue
		}
		if !o.d.sameShape(d) {
			return fmt.Errorf("metrics: %s is already registered with another type, help or labels", d.name)
		}
		if existing != nil && existing != o.c {
			return fmt.Errorf("metrics: %s overlaps several registered collectors", d.name)
		}
		existing = o.c
		taken++
	}
	if existing != nil {
		if taken != len(ds) || len(existing.descs()) != len(ds) {
			return fmt.Errorf("metrics: %s overlaps a registered collector", ds[0].name)
		}
		return AlreadyRegisteredError{Existing: existing, New: c}
	}
	for _, d := range ds {
		r.byName[d.name] = owner{c: c, d: d}
	}
	r.collectors = append(r.collectors, c)
	return nil
}

// MustRegister registers each collector and panics on any error, an
// AlreadyRegisteredError included.
func (r *Registry) MustRegister(cs ...Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

// Gather returns every registered family that has a series, sorted by
// name.
func (r *Registry) Gather() []Family {
	r.mu.RLock()
	cs := slices.Clone(r.collectors)
	r.mu.RUnlock()
	var fams []Family
	for _, c := range cs {
		fams = c.collect(fams)
	}
	fams = slices.DeleteFunc(fams, func(f Family) bool { return len(f.Series) == 0 })
	sort.Slice(fams, func(a, b int) bool { return fams[a].Name < fams[b].Name })
	return fams
}
