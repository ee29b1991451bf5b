// Package detect is the detection path: it classifies every request with the
// shared rule authority (internal/compaction) before any other hook, records
// the verdict on the exchange, and drives the metadata-only compaction
// lifecycle (detected → started → completed | failed). It never changes a
// request or a response.
package detect

import (
	"context"

	"github.com/tether-dev/tether/internal/compaction"
	"github.com/tether-dev/tether/internal/server"
)

type verdictKey struct{}

// Verdict returns the classification recorded on x (zero Result if none).
func Verdict(x *server.Exchange) compaction.Result {
	r, _ := x.Value(verdictKey{}).(compaction.Result)
	return r
}

// Hook classifies requests and emits lifecycle events to observers.
type Hook struct {
	rules *compaction.Ruleset
	hub   *compaction.Hub
}

var _ server.Hook = (*Hook)(nil)

// New returns the detection hook.
func New(rules *compaction.Ruleset, hub *compaction.Hub) *Hook {
	return &Hook{rules: rules, hub: hub}
}

// Before implements server.Hook. It runs on every request, whether or not
// preservation is enabled.
func (h *Hook) Before(_ context.Context, x *server.Exchange) error {
	res := h.rules.Classify(x.View)
	x.SetValue(verdictKey{}, res)
	x.Agent = res.Agent
	x.Compaction = res.Compaction
	if !res.Compaction {
		return nil
	}
	lc := compaction.NewLifecycle(h.hub, compaction.Correlation{RequestID: x.ID, BLeg: x.ID}, res, nil)
	lc.Detected()
	x.AddResponseHook(&lifecycleHook{lc: lc})
	return nil
}

// lifecycleHook forwards the B-leg's progress as metadata-only events.
type lifecycleHook struct {
	server.NopResponseHook
	lc *compaction.Lifecycle
}

func (l *lifecycleHook) Opened(x *server.Exchange, status int) {
	l.lc.Started(1)
}

func (l *lifecycleHook) Finish(x *server.Exchange, o server.Outcome) {
	if o.Status == 200 && o.Err == nil {
		l.lc.Completed(o.Status, o.Usage.InputTokens, o.Usage.OutputTokens)
		return
	}
	l.lc.Failed(o.Status)
}
