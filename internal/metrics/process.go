package metrics

import (
	"bytes"
	"math"
	"os"
	"strconv"
	"strings"
)

// ProcessCollector exposes the process_* metrics of this process, read
// from /proc/self (Linux; elsewhere it exposes nothing).
type ProcessCollector struct {
	proc string // the /proc mount
}

// NewProcessCollector returns the collector of this process's CPU time,
// memory, file descriptors, start time and network bytes: the families of
// the Prometheus Go client's process collector.
func NewProcessCollector() *ProcessCollector { return &ProcessCollector{proc: "/proc"} }

// userHZ is the kernel's USER_HZ, the unit of CPU times in /proc (100 on
// every Linux architecture Go runs on).
const userHZ = 100

var processDescs = []*desc{
	{name: "process_cpu_seconds_total", help: "Total user and system CPU time spent in seconds.", typ: TypeCounter},
	{name: "process_max_fds", help: "Maximum number of open file descriptors.", typ: TypeGauge},
	{name: "process_network_receive_bytes_total", help: "Number of bytes received by the process over the network.", typ: TypeCounter},
	{name: "process_network_transmit_bytes_total", help: "Number of bytes sent by the process over the network.", typ: TypeCounter},
	{name: "process_open_fds", help: "Number of open file descriptors.", typ: TypeGauge},
	{name: "process_resident_memory_bytes", help: "Resident memory size in bytes.", typ: TypeGauge},
	{name: "process_start_time_seconds", help: "Start time of the process since unix epoch in seconds.", typ: TypeGauge},
	{name: "process_virtual_memory_bytes", help: "Virtual memory size in bytes.", typ: TypeGauge},
	{name: "process_virtual_memory_max_bytes", help: "Maximum amount of virtual memory available in bytes.", typ: TypeGauge},
}

func (c *ProcessCollector) descs() []*desc { return processDescs }

func (c *ProcessCollector) collect(dst []Family) []Family {
	v := map[string]float64{}
	if stat, err := os.ReadFile(c.proc + "/self/stat"); err == nil {
		// Fields after the command, which is in parentheses and may hold
		// spaces: state is field 3 of proc(5), so field n is f[n-3].
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 {
			f := strings.Fields(string(stat[i+1:]))
			if len(f) > 21 {
				utime, _ := strconv.ParseUint(f[11], 10, 64)
				stime, _ := strconv.ParseUint(f[12], 10, 64)
				start, _ := strconv.ParseUint(f[19], 10, 64)
				vsize, _ := strconv.ParseUint(f[20], 10, 64)
				rss, _ := strconv.ParseUint(f[21], 10, 64)
				v["process_cpu_seconds_total"] = float64(utime+stime) / userHZ
				v["process_virtual_memory_bytes"] = float64(vsize)
				v["process_resident_memory_bytes"] = float64(rss) * float64(os.Getpagesize())
				if boot, ok := c.bootTime(); ok {
					v["process_start_time_seconds"] = boot + float64(start)/userHZ
				}
			}
		}
	}
	if limits, err := os.ReadFile(c.proc + "/self/limits"); err == nil {
		if n, ok := limit(string(limits), "Max open files"); ok {
			v["process_max_fds"] = n
		}
		if n, ok := limit(string(limits), "Max address space"); ok {
			v["process_virtual_memory_max_bytes"] = n
		}
	}
	if d, err := os.Open(c.proc + "/self/fd"); err == nil {
		names, err := d.Readdirnames(-1)
		d.Close()
		if err == nil {
			v["process_open_fds"] = float64(len(names))
		}
	}
	if netstat, err := os.ReadFile(c.proc + "/self/net/netstat"); err == nil {
		if in, out, ok := ipOctets(string(netstat)); ok {
			v["process_network_receive_bytes_total"] = in
			v["process_network_transmit_bytes_total"] = out
		}
	}
	for _, d := range processDescs {
		if x, ok := v[d.name]; ok {
			dst = append(dst, Family{Name: d.name, Help: d.help, Type: d.typ, Series: []Series{{Value: x}}})
		}
	}
	return dst
}

// bootTime is the btime line of /proc/stat: the boot time in Unix seconds.
func (c *ProcessCollector) bootTime() (float64, bool) {
	stat, err := os.ReadFile(c.proc + "/stat")
	if err != nil {
		return 0, false
	}
	for line := range strings.SplitSeq(string(stat), "\n") {
		if rest, ok := strings.CutPrefix(line, "btime "); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(rest), 10, 64)
			return float64(n), err == nil
		}
	}
	return 0, false
}

// limit reads the soft limit of the row called name in /proc/self/limits
// ("unlimited": the largest uint64, as the kernel's RLIM_INFINITY).
func limit(limits, name string) (float64, bool) {
	for line := range strings.SplitSeq(limits, "\n") {
		rest, ok := strings.CutPrefix(line, name)
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return 0, false
		}
		if f[0] == "unlimited" {
			return math.MaxUint64, true
		}
		n, err := strconv.ParseUint(f[0], 10, 64)
		return float64(n), err == nil
	}
	return 0, false
}

// ipOctets reads InOctets and OutOctets of the IpExt rows of
// /proc/self/net/netstat (a header row of names, then one of values).
func ipOctets(netstat string) (in, out float64, ok bool) {
	var header []string
	for line := range strings.SplitSeq(netstat, "\n") {
		rest, found := strings.CutPrefix(line, "IpExt:")
		if !found {
			continue
		}
		if header == nil {
			header = strings.Fields(rest)
			continue
		}
		vals := strings.Fields(rest)
		seen := 0
		for i, name := range header {
			if i >= len(vals) || name != "InOctets" && name != "OutOctets" {
				continue
			}
			n, err := strconv.ParseUint(vals[i], 10, 64)
			if err != nil {
				return 0, 0, false
			}
			if name == "InOctets" {
				in = float64(n)
			} else {
				out = float64(n)
			}
			seen++
		}
		return in, out, seen == 2
	}
	return 0, 0, false
}
