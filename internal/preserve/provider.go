package preserve

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/tether-dev/tether/internal/compaction"
	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/flow"
	"github.com/tether-dev/tether/internal/session"
	"github.com/tether-dev/tether/internal/upstream"
)

// Compactions the request does not ask for: the provider compacts or edits
// the context inside an ordinary call (seen in its answer), the agent's
// history shrinks with no summarisation request (silent), and the placement
// of a reinjected block where the model reads role "system" messages inside
// the conversation.

// silentCompaction judges a reset — a history under the branch's own client
// hint that extends nothing of it — with the lineage rules: a much shorter
// history and no summarisation request is a compaction the agent made by
// itself (Claude Code session memory). It then resolves the request again as
// a post-compaction turn, so it opens the branch's next epoch and gets the
// capsule back. Anything else leaves the reset as it was.
func (e *Engine) silentCompaction(ctx context.Context, x *flow.Exchange, h session.Hints, ref session.Ref, cls compaction.Result) (session.Ref, compaction.Result) {
	sil := e.opt.Rules.ClassifyLineage(x.Dialect, compaction.Lineage{PreviousMessages: ref.PrevTurn, Messages: ref.Turn})
	if !sil.PostCompaction {
		return ref, cls
	}
	h.PostCompaction, h.Agent = true, sil.Agent
	next, err := e.opt.Resolver.Resolve(ctx, x.Principal.ID, x.View, h)
	if err != nil || next.Event != session.EventEpoch {
		return ref, cls
	}
	e.m.lineage.WithLabelValues("silent_compaction").Inc()
	e.log.Info("silent compaction", slog.String("id", x.ID), slog.String("a_leg", next.ALeg), slog.String("rule", sil.RuleID),
		slog.Int("previous_messages", ref.PrevTurn), slog.Int("messages", ref.Turn))
	return next, sil
}

// clears reports whether a context edit the request asks for removes what
// (tool_results, thinking) before the model reads the history.
func (t *turn) clears(what string) bool {
	return slices.ContainsFunc(t.edits, func(r compaction.Rule) bool { return r.Clears == what })
}

// reinject puts text (the preamble and the block) where the model reads
// it: a role "system" message after the prompt-cache prefix when the
// provider accepts one inside the conversation for this model
// (providers[].system_message_models), else the system prompt.
func (t *turn) reinject(text string) ([]byte, error) {
	x := t.x
	if x.Dialect == dialect.AnthropicMessages && acceptsSystemMessages(x.Target) {
		if body, err := dialect.InsertMessageBefore(x.Dialect, x.Body, dialect.AfterCachedPrefix(x.View), "system", text); err == nil {
			t.e.m.placement.WithLabelValues("system_message").Inc()
			return body, nil
		}
	}
	t.e.m.placement.WithLabelValues("system_prompt").Inc()
	return dialect.AppendSystemText(x.Dialect, x.Body, text)
}

func acceptsSystemMessages(t upstream.Target) bool {
	return slices.ContainsFunc(t.Provider.SystemMessageModels, func(p string) bool { return upstream.Match(p, t.Model) })
}

// watchAnswer attaches, to a request that asks the provider to compact or
// edit the context itself, a hook that reads what the answer shows of it:
// a compaction block or item marks the A-leg, so the turns after it get the
// capsule back even where their request carries no marker.
func (t *turn) watchAnswer() {
	if dialect.ProviderContextField(t.x.View) == "" {
		return
	}
	if w := t.e.opt.Rules.WatchAnswer(t.x.Dialect); w != nil {
		t.x.AddResponseHook(&answerHook{t: t, w: w})
	}
}

// answerHook reads a provider's answer for the compactions and context
// edits it made (metadata only) and passes the answer on unchanged.
type answerHook struct {
	flow.NopResponseHook
	t        *turn
	w        *compaction.AnswerWatch
	observed []compaction.Rule // compactions seen, put on the timeline at Finish
}

func (h *answerHook) EditBody(_ *flow.Exchange, body []byte) []byte {
	h.saw(h.w.Body(body))
	return body
}

func (h *answerHook) StreamEvent(_ *flow.Exchange, ev dialect.Event) []dialect.Event {
	h.saw(h.w.Event(ev))
	return []dialect.Event{ev}
}

func (h *answerHook) saw(rules []compaction.Rule) {
	for _, r := range rules {
		h.t.e.m.provider.WithLabelValues(string(r.Marks), r.ID).Inc()
		if r.Marks != compaction.MarkCompaction {
			continue
		}
		t := h.t
		t.e.compacted.set(t.ref.ALeg)
		h.observed = append(h.observed, r)
		t.e.log.Info("provider compaction observed", slog.String("id", t.x.ID), slog.String("a_leg", t.ref.ALeg), slog.String("rule", r.ID))
	}
}

// Finish puts the compactions seen on the A-leg's timeline once the answer
// is out, so the store write never holds it.
func (h *answerHook) Finish(*flow.Exchange, flow.Outcome) {
	if len(h.observed) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), lineageWriteBound)
	defer cancel()
	for _, r := range h.observed {
		h.t.record(ctx, r.Agent, r.ID, r.Version, string(r.Kind), ActionObserved, nil, "")
	}
}

// legMarks is a bounded set of A-legs (this replica's memory): when full it
// starts over. A-legs whose provider compacted are marked here so their
// later turns get the capsule back; a turn whose request carries the
// provider's compaction block is recognised by the rules as well.
type legMarks struct {
	mu sync.Mutex
	m  map[string]time.Time
}

const maxLegMarks = 100_000

func (s *legMarks) set(aLeg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil || len(s.m) >= maxLegMarks {
		s.m = make(map[string]time.Time)
	}
	s.m[aLeg] = time.Now()
}

func (s *legMarks) has(aLeg string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.m[aLeg]
	return ok
}
