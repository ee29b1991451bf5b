package compaction

import (
	"bytes"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tether-dev/tether/internal/metrics"
)

// recorder is an Observer that keeps what it receives.
type recorder struct {
	mu     sync.Mutex
	events []Event
}

func (r *recorder) Observe(e Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *recorder) types() []EventType {
	var out []EventType
	for _, e := range r.events {
		out = append(out, e.Type)
	}
	return out
}

// fakeClock advances one second per reading.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { c.t = c.t.Add(time.Second); return c.t }

func TestAC24_DetectionIsMetadataOnly(t *testing.T) {
	// 1. Event has no field that could carry text: strings only for ids on
	// an explicit allow-list, named string types only for enums, otherwise
	// numbers, durations and times. No slices, maps, pointers, interfaces.
	idFields := map[string]bool{"RequestID": true, "Session": true, "ALeg": true, "BLeg": true, "Agent": true, "RuleID": true}
	enums := map[reflect.Type]bool{
		reflect.TypeFor[EventType](): true, reflect.TypeFor[Evidence](): true, reflect.TypeFor[Kind](): true,
	}
	et := reflect.TypeFor[Event]()
	for i := range et.NumField() {
		f := et.Field(i)
		switch {
		case f.Type == reflect.TypeFor[string]():
			if !idFields[f.Name] {
				t.Errorf("Event.%s is a free string outside the id allow-list", f.Name)
			}
		case enums[f.Type]:
		case f.Type == reflect.TypeFor[time.Time](), f.Type == reflect.TypeFor[time.Duration]():
		case f.Type.Kind() == reflect.Int || f.Type.Kind() == reflect.Int64:
		default:
			t.Errorf("Event.%s has type %s, which could carry content", f.Name, f.Type)
		}
	}

	// 2. Observe returns nothing.
	m, ok := reflect.TypeFor[Observer]().MethodByName("Observe")
	if !ok || m.Type.NumOut() != 0 || m.Type.NumIn() != 1 || m.Type.In(0) != et {
		t.Errorf("Observer.Observe must take an Event by value and return nothing, got %v", m.Type)
	}

	// 3. An observer cannot change the request: it gets a copy, and the body
	// is byte-identical after classification and emission, even when the
	// observer scribbles on what it received.
	c := loadCaptures(t, "testdata/claude.jsonl")[2]
	v := c.view(t)
	before := bytes.Clone(v.Body())
	res := Default().Classify(v)
	if !res.Compaction {
		t.Fatalf("fixture not a compaction: %+v", res)
	}
	var seen []Event
	meddler := ObserverFunc(func(e Event) {
		e.RuleID, e.Agent, e.Kind = "hijacked", "x", Opaque
		seen = append(seen, e)
	})
	rec := &recorder{}
	hub := NewHub(meddler, rec)
	l := NewLifecycle(hub, Correlation{RequestID: "req-1", Session: "s", ALeg: "a", BLeg: "b"}, res, nil)
	l.Detected()
	l.Started(1)
	l.Completed(200, 10, 5)
	if !bytes.Equal(before, v.Body()) {
		t.Error("request body changed during classification or emission")
	}
	if len(seen) != 3 {
		t.Fatalf("meddler saw %d events", len(seen))
	}
	for _, e := range rec.events {
		if e.RuleID != res.RuleID || e.Agent != res.Agent || e.Kind != res.Kind {
			t.Errorf("a mutation by one observer reached another: %+v", e)
		}
	}
	// No event carries any text of the request.
	for _, e := range rec.events {
		ev := reflect.ValueOf(e)
		for i := range ev.NumField() {
			if s, ok := ev.Field(i).Interface().(string); ok && len(s) > 0 && strings.Contains(string(before), s) && len(s) > 40 {
				t.Errorf("event field %s carries request text", et.Field(i).Name)
			}
		}
	}
}

func TestLifecycle(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	rec := &recorder{}
	res := Result{Compaction: true, Kind: InBand, Agent: "codex", RuleID: "r", RuleVersion: 2, Evidence: EvidenceProtocol}
	l := NewLifecycle(rec, Correlation{RequestID: "q", Session: "s", ALeg: "a", BLeg: "b1"}, res, clk.now)
	l.Detected()
	l.Detected()
	l.Started(1)
	l.SetBLeg("b2")
	l.Started(2) // failover: no second started event
	l.Completed(200, 100, 20)
	l.Failed(500) // terminal already: ignored
	l.Started(3)
	if diff := cmp.Diff([]EventType{EventDetected, EventStarted, EventCompleted}, rec.types()); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
	last := rec.events[2]
	want := Event{Type: EventCompleted, At: last.At, RequestID: "q", Session: "s", ALeg: "a", BLeg: "b2",
		Agent: "codex", RuleID: "r", RuleVersion: 2, Evidence: EvidenceProtocol, Kind: InBand,
		Attempt: 2, Duration: 2 * time.Second, Status: 200, InputTokens: 100, OutputTokens: 20}
	if diff := cmp.Diff(want, last); diff != "" {
		t.Errorf("completed event (-want +got):\n%s", diff)
	}

	rec2 := &recorder{}
	l2 := NewLifecycle(rec2, Correlation{}, res, clk.now)
	l2.Detected()
	l2.Failed(http.StatusBadGateway)
	l2.Completed(200, 1, 1)
	if diff := cmp.Diff([]EventType{EventDetected, EventFailed}, rec2.types()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if got := rec2.events[1]; got.Status != http.StatusBadGateway || got.Duration <= 0 {
		t.Errorf("failed event %+v", got)
	}
}

func TestHubRecoversPanics(t *testing.T) {
	rec := &recorder{}
	h := NewHub(ObserverFunc(func(Event) { panic("boom") }), nil, rec)
	h.Observe(Event{Type: EventDetected})
	h.Observe(Event{Type: EventStarted})
	if len(rec.events) != 2 {
		t.Errorf("observer after the panicking one got %d events, want 2", len(rec.events))
	}
	if h.Panics() != 2 {
		t.Errorf("Panics() = %d, want 2", h.Panics())
	}
}

func TestMetrics(t *testing.T) {
	reg := metrics.NewRegistry()
	m := NewMetrics(reg)
	res := Result{Compaction: true, Kind: InBand, Agent: "pi", RuleID: "pi-summary-initial", RuleVersion: 1, Evidence: EvidenceSignature}
	ok := NewLifecycle(m, Correlation{}, res, nil)
	ok.Detected()
	ok.Started(1)
	ok.Started(2)
	ok.Completed(200, 1, 1)
	bad := NewLifecycle(m, Correlation{}, res, nil)
	bad.Detected()
	bad.Failed(502)
	got := map[string]float64{}
	for _, f := range reg.Gather() {
		for _, s := range f.Series {
			var labels []string
			for _, l := range s.Labels {
				labels = append(labels, l.Name+"="+l.Value)
			}
			got[f.Name+"{"+strings.Join(labels, ",")+"}"] = s.Value
		}
	}
	want := map[string]float64{
		"tether_compactions_detected_total{agent=pi,evidence=signature,rule=pi-summary-initial}": 2,
		"tether_compactions_started_total{agent=pi}":                                             1,
		"tether_compactions_completed_total{agent=pi,outcome=ok}":                                1,
		"tether_compactions_completed_total{agent=pi,outcome=error}":                             1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
}
