package e2e

import (
	"compress/gzip"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/tether-dev/tether/internal/metrics"
)

// hostile are label values and help text Prometheus's own parser must read
// back exactly: quotes, backslashes, newlines, and what looks like the
// end of a label set or a sample.
var hostile = []string{`say "hi"`, `C:\temp\`, "two\nlines", `\n is not a newline`, `"} 1` + "\n" + `x{y="`, "tab\tand ünïcode"}

// The proxy's /metrics, scraped from a running server after a session with
// a compaction, parses with Prometheus's text parser: every family has the
// type and labels docs/metrics.md gives it, label values and help text with
// hostile characters round-trip, and every histogram's buckets are
// cumulative and end in +Inf with its count.
func TestExpositionParsesWithPrometheus(t *testing.T) {
	e := accountingStart(t, accountingYAML, nil, nil)
	accountingAliceSession(t, e)

	help := "Help with a \\ backslash, a \"quote\"\nand a second line."
	odd := metrics.NewCounterVec(metrics.CounterOpts{Name: "e2e_hostile_total", Help: help}, []string{"value", "index"})
	e.app.Registry.MustRegister(odd)
	for i, v := range hostile {
		odd.WithLabelValues(v, string(rune('a'+i))).Add(float64(i + 1))
	}

	plain := scrape(t, e.url, "identity")
	zipped := scrape(t, e.url, "gzip")
	// The gzipped scrape comes second: a family whose first sample a
	// background job (extraction, a checkpoint) records between the two
	// may appear in it, but none may go missing.
	for name := range plain {
		if zipped[name] == nil {
			t.Errorf("%s is served plain but not gzipped", name)
		}
	}

	documented := documentedFamilies(t)
	for _, name := range []string{"go_goroutines", "go_gc_duration_seconds", "go_info", "go_memstats_alloc_bytes",
		"go_memstats_heap_inuse_bytes", "process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds",
		"process_start_time_seconds", "process_max_fds", "tether_requests_total", "tether_request_duration_seconds",
		"tether_compactions_detected_total", "tether_extract_jobs_total", "tether_usage_tokens_total"} {
		if plain[name] == nil {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	if v := plain["go_info"].GetMetric()[0].GetLabel()[0]; v.GetName() != "version" || !strings.HasPrefix(v.GetValue(), "go") {
		t.Errorf("go_info label %v", v)
	}

	observed := 0
	for name, mf := range plain {
		if name == "e2e_hostile_total" {
			continue
		}
		doc, ok := documented[name]
		if !ok {
			t.Errorf("%s is served but not in docs/metrics.md", name)
			continue
		}
		if got := strings.ToLower(mf.GetType().String()); got != doc.typ {
			t.Errorf("%s is a %s, docs/metrics.md says %s", name, got, doc.typ)
		}
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName())
			}
			slices.Sort(labels)
			if !slices.Equal(labels, doc.labels) {
				t.Errorf("%s has labels %v, docs/metrics.md says %v", name, labels, doc.labels)
			}
			if h := m.GetHistogram(); h != nil {
				observed += int(h.GetSampleCount())
				checkHistogram(t, name, h)
			}
		}
	}
	if observed == 0 {
		t.Error("no histogram has an observation; the bucket checks prove nothing")
	}

	mf := plain["e2e_hostile_total"]
	if mf == nil {
		t.Fatal("the hostile family is missing")
	}
	if mf.GetHelp() != help {
		t.Errorf("help read back as %q, want %q", mf.GetHelp(), help)
	}
	got := map[string]float64{}
	for _, m := range mf.GetMetric() {
		var value string
		for _, l := range m.GetLabel() {
			if l.GetName() == "value" {
				value = l.GetValue()
			}
		}
		got[value] = m.GetCounter().GetValue()
	}
	for i, v := range hostile {
		if got[v] != float64(i+1) {
			t.Errorf("label value %q read back with %v, want %d (read: %v)", v, got[v], i+1, got)
		}
	}
	if len(got) != len(hostile) {
		t.Errorf("%d hostile series read back, want %d: %v", len(got), len(hostile), got)
	}
}

// scrape GETs /metrics with the given Accept-Encoding and parses it.
func scrape(t *testing.T, url, encoding string) map[string]*dto.MetricFamily {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept-Encoding", encoding)
	resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); expfmt.ResponseFormat(resp.Header).FormatType() != expfmt.TypeTextPlain {
		t.Errorf("Content-Type %q is not the text format", ct)
	}
	var body io.Reader = resp.Body
	if got := resp.Header.Get("Content-Encoding"); got != map[string]string{"gzip": "gzip"}[encoding] {
		t.Errorf("Accept-Encoding %s: Content-Encoding %q", encoding, got)
	}
	if encoding == "gzip" {
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		body = zr
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(body)
	if err != nil {
		t.Fatalf("Prometheus cannot parse /metrics: %v", err)
	}
	return fams
}

func checkHistogram(t *testing.T, name string, h *dto.Histogram) {
	t.Helper()
	bs := h.GetBucket()
	if len(bs) == 0 || !math.IsInf(bs[len(bs)-1].GetUpperBound(), 1) {
		t.Errorf("%s: buckets %v do not end in +Inf", name, bs)
		return
	}
	for i := 1; i < len(bs); i++ {
		if bs[i].GetUpperBound() <= bs[i-1].GetUpperBound() || bs[i].GetCumulativeCount() < bs[i-1].GetCumulativeCount() {
			t.Errorf("%s: buckets %v are not increasing and cumulative", name, bs)
			return
		}
	}
	if bs[len(bs)-1].GetCumulativeCount() != h.GetSampleCount() {
		t.Errorf("%s: +Inf bucket %d, _count %d", name, bs[len(bs)-1].GetCumulativeCount(), h.GetSampleCount())
	}
	if h.GetSampleCount() > 0 && !(h.GetSampleSum() >= 0) {
		t.Errorf("%s: _sum %v", name, h.GetSampleSum())
	}
}

type docFamily struct {
	typ    string
	labels []string // sorted; none for "—"
}

// documentedFamilies reads the tables of docs/metrics.md.
func documentedFamilies(t *testing.T) map[string]docFamily {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]docFamily{}
	for line := range strings.SplitSeq(string(b), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 5 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		name := strings.Trim(strings.TrimSpace(cells[1]), "`")
		var labels []string
		if l := strings.TrimSpace(cells[3]); l != "—" {
			labels = strings.Split(l, ",")
		}
		slices.Sort(labels)
		out[name] = docFamily{typ: strings.TrimSpace(cells[2]), labels: labels}
	}
	if len(out) < 50 {
		t.Fatalf("read %d families from docs/metrics.md; has its table changed shape?", len(out))
	}
	return out
}
