package compaction

import (
	"sync"
	"sync/atomic"
	"time"
)

// EventType is a step of a compaction transaction.
type EventType string

// Event types, in lifecycle order.
const (
	EventDetected  EventType = "detected"  // Classify recognised a compaction request
	EventStarted   EventType = "started"   // the upstream B-leg opened (emitted once per transaction)
	EventCompleted EventType = "completed" // the upstream answered; Status and usage are set
	EventFailed    EventType = "failed"    // the transaction ended without a summary

	// Not steps of a transaction: the provider compacts or edits the
	// context itself inside an ordinary call. RuleID names the rule.
	EventProviderAsked EventType = "provider_asked" // the request asks for a context edit (a context_edit rule matched)
	EventProviderDone  EventType = "provider_done"  // the answer shows a compaction or context edit the provider made
)

// Event describes one step of a compaction transaction. It holds ids, rule
// metadata, counts and timings only, never prompt or response text, and it
// is passed by value: an observer cannot reach the request through it.
type Event struct {
	Type         EventType
	At           time.Time
	RequestID    string
	Session      string
	ALeg         string
	BLeg         string
	Agent        string
	RuleID       string
	RuleVersion  int
	Evidence     Evidence
	Kind         Kind
	Attempt      int
	Duration     time.Duration // started → completed/failed (detected → failed when never started)
	Status       int           // upstream HTTP status, 0 when none
	InputTokens  int64
	OutputTokens int64
}

// Observer receives compaction events. It returns nothing: detection can
// never change what happens to a request.
type Observer interface {
	Observe(Event)
}

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(Event)

// Observe calls f(e).
func (f ObserverFunc) Observe(e Event) { f(e) }

// Hub fans events out to observers, in order, each getting its own copy. A
// panicking observer is recovered and counted; the others still run. A Hub
// is immutable after NewHub and safe for concurrent use.
type Hub struct {
	observers []Observer
	panics    atomic.Int64
}

var _ Observer = (*Hub)(nil)

// NewHub returns a Hub over the non-nil observers given.
func NewHub(observers ...Observer) *Hub {
	h := &Hub{}
	for _, o := range observers {
		if o != nil {
			h.observers = append(h.observers, o)
		}
	}
	return h
}

// Observe delivers e to every observer.
func (h *Hub) Observe(e Event) {
	if h == nil {
		return
	}
	for _, o := range h.observers {
		h.deliver(o, e)
	}
}

func (h *Hub) deliver(o Observer, e Event) {
	defer func() {
		if recover() != nil {
			h.panics.Add(1)
		}
	}()
	o.Observe(e)
}

// Panics returns how many observer panics were recovered.
func (h *Hub) Panics() int64 { return h.panics.Load() }

// Correlation holds the ids that tie an event to a request, a session and
// its legs.
type Correlation struct {
	RequestID, Session, ALeg, BLeg string
}

// Lifecycle emits the events of one compaction transaction: at most one
// detected, one started (retries and failover do not repeat it), and one
// terminal completed or failed, after which it is inert. It is safe for
// concurrent use.
type Lifecycle struct {
	obs  Observer
	now  func() time.Time
	base Event

	mu        sync.Mutex
	detected  bool
	started   bool
	done      bool
	t0        time.Time // detection time
	startedAt time.Time
}

// NewLifecycle starts a transaction for the classification r. now may be nil
// (time.Now).
func NewLifecycle(obs Observer, c Correlation, r Result, now func() time.Time) *Lifecycle {
	if now == nil {
		now = time.Now
	}
	l := &Lifecycle{obs: obs, now: now, base: Event{
		RequestID: c.RequestID, Session: c.Session, ALeg: c.ALeg, BLeg: c.BLeg,
		Agent: r.Agent, RuleID: r.RuleID, RuleVersion: r.RuleVersion, Evidence: r.Evidence, Kind: r.Kind,
	}}
	l.t0 = now()
	return l
}

// SetBLeg records the id of the upstream call (a retry or failover opens a
// new one) for the events that follow.
func (l *Lifecycle) SetBLeg(id string) {
	l.mu.Lock()
	l.base.BLeg = id
	l.mu.Unlock()
}

// Detected emits the detected event once.
func (l *Lifecycle) Detected() {
	l.mu.Lock()
	if l.detected || l.done {
		l.mu.Unlock()
		return
	}
	l.detected = true
	e := l.event(EventDetected)
	l.mu.Unlock()
	l.emit(e)
}

// Started records an upstream attempt. Only the first call emits started;
// later attempts update the attempt number reported on the terminal event.
func (l *Lifecycle) Started(attempt int) {
	l.mu.Lock()
	if l.done {
		l.mu.Unlock()
		return
	}
	l.base.Attempt = attempt
	if l.started {
		l.mu.Unlock()
		return
	}
	l.started = true
	l.startedAt = l.now()
	e := l.event(EventStarted)
	e.At = l.startedAt
	l.mu.Unlock()
	l.emit(e)
}

// Completed ends the transaction with the upstream status and token usage.
func (l *Lifecycle) Completed(status int, inputTokens, outputTokens int64) {
	l.finish(EventCompleted, status, inputTokens, outputTokens)
}

// Failed ends the transaction without a summary.
func (l *Lifecycle) Failed(status int) { l.finish(EventFailed, status, 0, 0) }

func (l *Lifecycle) finish(t EventType, status int, in, out int64) {
	l.mu.Lock()
	if l.done {
		l.mu.Unlock()
		return
	}
	l.done = true
	e := l.event(t)
	from := l.t0
	if l.started {
		from = l.startedAt
	}
	e.Duration = e.At.Sub(from)
	e.Status, e.InputTokens, e.OutputTokens = status, in, out
	l.mu.Unlock()
	l.emit(e)
}

func (l *Lifecycle) event(t EventType) Event {
	e := l.base
	e.Type = t
	e.At = l.now()
	return e
}

func (l *Lifecycle) emit(e Event) {
	if l.obs != nil {
		l.obs.Observe(e)
	}
}

// ProviderEvent returns the event of rule r for one request: typ is
// EventProviderAsked or EventProviderDone.
func ProviderEvent(typ EventType, c Correlation, r Rule, at time.Time) Event {
	return Event{Type: typ, At: at, RequestID: c.RequestID, Session: c.Session, ALeg: c.ALeg, BLeg: c.BLeg,
		Agent: r.Agent, RuleID: r.ID, RuleVersion: r.Version, Evidence: r.Evidence, Kind: r.Kind}
}
