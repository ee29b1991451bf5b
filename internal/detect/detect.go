// Package detect is the detection path: it classifies every request with the
// shared rule authority (internal/compaction) before any hook runs, returns
// the verdict for the server to record on the exchange (Exchange.Verdict),
// and drives the metadata-only compaction lifecycle (detected → started →
// completed | failed). It never changes a request or a response.
package detect

import (
	"context"
	"time"

	"github.com/tether-dev/tether/internal/compaction"
	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/flow"
)

// Detector classifies requests and emits lifecycle events to observers.
type Detector struct {
	rules *compaction.Ruleset
	hub   *compaction.Hub
}

var _ flow.Detector = (*Detector)(nil)

// New returns the detector.
func New(rules *compaction.Ruleset, hub *compaction.Hub) *Detector {
	return &Detector{rules: rules, hub: hub}
}

// Detect implements flow.Detector. It runs on every request, whether or not
// preservation is enabled.
func (d *Detector) Detect(_ context.Context, x *flow.Exchange) compaction.Result {
	res := d.rules.Classify(x.View)
	x.Agent = res.Agent
	x.Compaction = res.Compaction
	d.watchProvider(x)
	if !res.Compaction {
		return res
	}
	lc := compaction.NewLifecycle(d.hub, compaction.Correlation{RequestID: x.ID, BLeg: x.ID}, res, nil)
	lc.Detected()
	x.AddResponseHook(&lifecycleHook{lc: lc})
	return res
}

// lifecycleHook forwards the B-leg's progress as metadata-only events.
type lifecycleHook struct {
	flow.NopResponseHook
	lc *compaction.Lifecycle
}

func (l *lifecycleHook) Opened(x *flow.Exchange, status int) {
	l.lc.Started(1)
}

func (l *lifecycleHook) Finish(x *flow.Exchange, o flow.Outcome) {
	if o.Status == 200 && o.Err == nil {
		l.lc.Completed(o.Status, o.Usage.InputTokens, o.Usage.OutputTokens)
		return
	}
	l.lc.Failed(o.Status)
}

// watchProvider reports, for a request that asks the provider to compact
// or edit the context itself, the context edits it asks for and, from the
// answer (body or stream), the compactions and edits the provider made:
// one EventProviderAsked or EventProviderDone each, rule metadata only.
func (d *Detector) watchProvider(x *flow.Exchange) {
	if dialect.ProviderContextField(x.View) == "" {
		return
	}
	c := compaction.Correlation{RequestID: x.ID, BLeg: x.ID}
	for _, r := range d.rules.ContextEdits(x.View) {
		d.hub.Observe(compaction.ProviderEvent(compaction.EventProviderAsked, c, r, time.Now()))
	}
	if w := d.rules.WatchAnswer(x.Dialect); w != nil {
		x.AddResponseHook(&answerHook{d: d, c: c, w: w})
	}
}

// answerHook reads the provider's answer (never changes it).
type answerHook struct {
	flow.NopResponseHook
	d *Detector
	c compaction.Correlation
	w *compaction.AnswerWatch
}

func (h *answerHook) EditBody(_ *flow.Exchange, body []byte) []byte {
	h.emit(h.w.Body(body))
	return body
}

func (h *answerHook) StreamEvent(_ *flow.Exchange, ev dialect.Event) []dialect.Event {
	h.emit(h.w.Event(ev))
	return []dialect.Event{ev}
}

func (h *answerHook) emit(rules []compaction.Rule) {
	for _, r := range rules {
		h.d.hub.Observe(compaction.ProviderEvent(compaction.EventProviderDone, h.c, r, time.Now()))
	}
}
