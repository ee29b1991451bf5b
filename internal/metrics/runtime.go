package metrics

import (
	"runtime"
	"runtime/debug"
	rm "runtime/metrics"
	"sync"
	"time"
)

// goFamily is a go_* family read from runtime/metrics: the sum of the
// named samples.
type goFamily struct {
	name, help string
	typ        Type
	samples    []string // runtime/metrics names, summed
}

// goFamilies are the go_memstats_* and go_* families the Prometheus Go
// client exposes by default, with its names and help, computed from
// runtime/metrics as it computes them (no stop-the-world ReadMemStats).
var goFamilies = []goFamily{
	{"go_gc_gogc_percent", "Heap size target percentage configured by the user, otherwise 100. This value is set by the GOGC environment variable, and the runtime/debug.SetGCPercent function. Sourced from /gc/gogc:percent.", TypeGauge, []string{"/gc/gogc:percent"}},
	{"go_gc_gomemlimit_bytes", "Go runtime memory limit configured by the user, otherwise math.MaxInt64. This value is set by the GOMEMLIMIT environment variable, and the runtime/debug.SetMemoryLimit function. Sourced from /gc/gomemlimit:bytes.", TypeGauge, []string{"/gc/gomemlimit:bytes"}},
	{"go_memstats_alloc_bytes", "Number of bytes allocated in heap and currently in use. Equals to /memory/classes/heap/objects:bytes.", TypeGauge, []string{"/memory/classes/heap/objects:bytes"}},
	{"go_memstats_alloc_bytes_total", "Total number of bytes allocated in heap until now, even if released already. Equals to /gc/heap/allocs:bytes.", TypeCounter, []string{"/gc/heap/allocs:bytes"}},
	{"go_memstats_buck_hash_sys_bytes", "Number of bytes used by the profiling bucket hash table. Equals to /memory/classes/profiling/buckets:bytes.", TypeGauge, []string{"/memory/classes/profiling/buckets:bytes"}},
	{"go_memstats_frees_total", "Total number of heap objects frees. Equals to /gc/heap/frees:objects + /gc/heap/tiny/allocs:objects.", TypeCounter, []string{"/gc/heap/frees:objects", "/gc/heap/tiny/allocs:objects"}},
	{"go_memstats_gc_sys_bytes", "Number of bytes used for garbage collection system metadata. Equals to /memory/classes/metadata/other:bytes.", TypeGauge, []string{"/memory/classes/metadata/other:bytes"}},
	{"go_memstats_heap_alloc_bytes", "Number of heap bytes allocated and currently in use, same as go_memstats_alloc_bytes. Equals to /memory/classes/heap/objects:bytes.", TypeGauge, []string{"/memory/classes/heap/objects:bytes"}},
	{"go_memstats_heap_idle_bytes", "Number of heap bytes waiting to be used. Equals to /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", TypeGauge, []string{"/memory/classes/heap/released:bytes", "/memory/classes/heap/free:bytes"}},
	{"go_memstats_heap_inuse_bytes", "Number of heap bytes that are in use. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes", TypeGauge, []string{"/memory/classes/heap/objects:bytes", "/memory/classes/heap/unused:bytes"}},
	{"go_memstats_heap_objects", "Number of currently allocated objects. Equals to /gc/heap/objects:objects.", TypeGauge, []string{"/gc/heap/objects:objects"}},
	{"go_memstats_heap_released_bytes", "Number of heap bytes released to OS. Equals to /memory/classes/heap/released:bytes.", TypeGauge, []string{"/memory/classes/heap/released:bytes"}},
	{"go_memstats_heap_sys_bytes", "Number of heap bytes obtained from system. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes + /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", TypeGauge, []string{"/memory/classes/heap/objects:bytes", "/memory/classes/heap/unused:bytes", "/memory/classes/heap/released:bytes", "/memory/classes/heap/free:bytes"}},
	{"go_memstats_mallocs_total", "Total number of heap objects allocated, both live and gc-ed. Semantically a counter version for go_memstats_heap_objects gauge. Equals to /gc/heap/allocs:objects + /gc/heap/tiny/allocs:objects.", TypeCounter, []string{"/gc/heap/allocs:objects", "/gc/heap/tiny/allocs:objects"}},
	{"go_memstats_mcache_inuse_bytes", "Number of bytes in use by mcache structures. Equals to /memory/classes/metadata/mcache/inuse:bytes.", TypeGauge, []string{"/memory/classes/metadata/mcache/inuse:bytes"}},
	{"go_memstats_mcache_sys_bytes", "Number of bytes used for mcache structures obtained from system. Equals to /memory/classes/metadata/mcache/inuse:bytes + /memory/classes/metadata/mcache/free:bytes.", TypeGauge, []string{"/memory/classes/metadata/mcache/inuse:bytes", "/memory/classes/metadata/mcache/free:bytes"}},
	{"go_memstats_mspan_inuse_bytes", "Number of bytes in use by mspan structures. Equals to /memory/classes/metadata/mspan/inuse:bytes.", TypeGauge, []string{"/memory/classes/metadata/mspan/inuse:bytes"}},
	{"go_memstats_mspan_sys_bytes", "Number of bytes used for mspan structures obtained from system. Equals to /memory/classes/metadata/mspan/inuse:bytes + /memory/classes/metadata/mspan/free:bytes.", TypeGauge, []string{"/memory/classes/metadata/mspan/inuse:bytes", "/memory/classes/metadata/mspan/free:bytes"}},
	{"go_memstats_next_gc_bytes", "Number of heap bytes when next garbage collection will take place. Equals to /gc/heap/goal:bytes.", TypeGauge, []string{"/gc/heap/goal:bytes"}},
	{"go_memstats_other_sys_bytes", "Number of bytes used for other system allocations. Equals to /memory/classes/other:bytes.", TypeGauge, []string{"/memory/classes/other:bytes"}},
	{"go_memstats_stack_inuse_bytes", "Number of bytes obtained from system for stack allocator in non-CGO environments. Equals to /memory/classes/heap/stacks:bytes.", TypeGauge, []string{"/memory/classes/heap/stacks:bytes"}},
	{"go_memstats_stack_sys_bytes", "Number of bytes obtained from system for stack allocator. Equals to /memory/classes/heap/stacks:bytes + /memory/classes/os-stacks:bytes.", TypeGauge, []string{"/memory/classes/heap/stacks:bytes", "/memory/classes/os-stacks:bytes"}},
	{"go_memstats_sys_bytes", "Number of bytes obtained from system. Equals to /memory/classes/total:byte.", TypeGauge, []string{"/memory/classes/total:bytes"}},
	{"go_sched_gomaxprocs_threads", "The current runtime.GOMAXPROCS setting, or the number of operating system threads that can execute user-level Go code simultaneously. Sourced from /sched/gomaxprocs:threads.", TypeGauge, []string{"/sched/gomaxprocs:threads"}},
}

// Help texts of the families not read from runtime/metrics.
const (
	helpGCDuration = "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles."
	helpGoroutines = "Number of goroutines that currently exist."
	helpGoInfo     = "Information about the Go environment."
	helpLastGC     = "Number of seconds since 1970 of last garbage collection."
	helpThreads    = "Number of OS threads created."
)

// GoCollector exposes the Go runtime's go_* metrics.
type GoCollector struct {
	mu      sync.Mutex
	samples []rm.Sample
	index   map[string]int // runtime/metrics name → samples index
}

// NewGoCollector returns the collector of the Go runtime's metrics: the
// families of the Prometheus Go client's default Go collector.
func NewGoCollector() *GoCollector {
	supported := map[string]bool{}
	for _, d := range rm.All() {
		supported[d.Name] = d.Kind == rm.KindUint64 || d.Kind == rm.KindFloat64
	}
	c := &GoCollector{index: map[string]int{}}
	for _, f := range goFamilies {
		for _, n := range f.samples {
			if _, ok := c.index[n]; !ok && supported[n] {
				c.index[n] = len(c.samples)
				c.samples = append(c.samples, rm.Sample{Name: n})
			}
		}
	}
	return c
}

func (c *GoCollector) descs() []*desc {
	ds := []*desc{
		{name: "go_gc_duration_seconds", help: helpGCDuration, typ: TypeSummary},
		{name: "go_goroutines", help: helpGoroutines, typ: TypeGauge},
		{name: "go_info", help: helpGoInfo, typ: TypeGauge, labels: []string{"version"}},
		{name: "go_memstats_last_gc_time_seconds", help: helpLastGC, typ: TypeGauge},
		{name: "go_threads", help: helpThreads, typ: TypeGauge},
	}
	for _, f := range goFamilies {
		ds = append(ds, &desc{name: f.name, help: f.help, typ: f.typ})
	}
	return ds
}

func (c *GoCollector) collect(dst []Family) []Family {
	var gc debug.GCStats
	gc.PauseQuantiles = make([]time.Duration, 5)
	debug.ReadGCStats(&gc)
	quantiles := make([]Quantile, len(gc.PauseQuantiles))
	for i, q := range gc.PauseQuantiles {
		quantiles[i] = Quantile{Quantile: float64(i) / float64(len(gc.PauseQuantiles)-1), Value: q.Seconds()}
	}
	lastGC := 0.0
	if !gc.LastGC.IsZero() {
		lastGC = float64(gc.LastGC.UnixNano()) / 1e9
	}
	threads, _ := runtime.ThreadCreateProfile(nil)
	one := func(name, help string, typ Type, v float64) Family {
		return Family{Name: name, Help: help, Type: typ, Series: []Series{{Value: v}}}
	}
	dst = append(dst,
		Family{Name: "go_gc_duration_seconds", Help: helpGCDuration, Type: TypeSummary,
			Series: []Series{{Quantiles: quantiles, Count: uint64(gc.NumGC), Sum: gc.PauseTotal.Seconds()}}},
		one("go_goroutines", helpGoroutines, TypeGauge, float64(runtime.NumGoroutine())),
		Family{Name: "go_info", Help: helpGoInfo, Type: TypeGauge,
			Series: []Series{{Labels: []Label{{Name: "version", Value: runtime.Version()}}, Value: 1}}},
		one("go_memstats_last_gc_time_seconds", helpLastGC, TypeGauge, lastGC),
		one("go_threads", helpThreads, TypeGauge, float64(threads)),
	)

	c.mu.Lock()
	defer c.mu.Unlock()
	rm.Read(c.samples)
	for _, f := range goFamilies {
		var v float64
		found := false
		for _, n := range f.samples {
			i, ok := c.index[n]
			if !ok {
				continue
			}
			found = true
			switch s := c.samples[i].Value; s.Kind() {
			case rm.KindUint64:
				v += float64(s.Uint64())
			case rm.KindFloat64:
				v += s.Float64()
			}
		}
		if found {
			dst = append(dst, one(f.name, f.help, f.typ, v))
		}
	}
	return dst
}
