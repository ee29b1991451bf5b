package preserve

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/tether-dev/tether/internal/compaction"
	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/flow"
	"github.com/tether-dev/tether/internal/session"
)

const augmentInstruction = "\n\n<system-reminder>\nThe block below is the continuity state that the proxy keeps for this conversation: " +
	"the plan the user accepted, the user's active decisions and constraints, and the alternatives the user rejected. " +
	"Your summary must keep every one of these facts as settled: keep the plan steps and their status, do not reopen " +
	"superseded or rejected items, and do not present a rejected alternative as the plan. The proxy attaches the current " +
	"block to your summary itself, so you need not copy it verbatim.\n</system-reminder>\n"

// augment adds the block where the agent's compaction prompt reads it:
// out-of-band summarisation requests get it in the system prompt; a Codex
// remote compaction gets a plaintext message before the trigger item (the
// encrypted items are never touched); the in-band prompts (Codex local,
// Claude Code) get it appended to the final user message that carries the
// compaction instruction.
func augment(x *flow.Exchange, cls compaction.Result, block string) ([]byte, error) {
	text := augmentInstruction + block
	v := x.View
	switch {
	case cls.Placement == compaction.PlaceNone:
		return x.Body, nil
	case cls.Kind == compaction.OutOfBand:
		return dialect.AppendSystemText(x.Dialect, x.Body, strings.TrimPrefix(text, "\n\n"))
	case cls.Placement == compaction.PlaceBeforeLast:
		return dialect.InsertMessageBefore(x.Dialect, x.Body, v.NumMessages()-1, "user", strings.TrimPrefix(text, "\n\n"))
	case cls.Placement == compaction.PlaceAfterLastItem:
		return dialect.InsertMessageBefore(x.Dialect, x.Body, v.NumMessages(), "user", strings.TrimPrefix(text, "\n\n"))
	default:
		return dialect.AppendToLastUser(x.Dialect, x.Body, text)
	}
}

// anchorFor returns the text before which the block goes in the summary:
// agents that keep only part of the answer need it inside that part.
func anchorFor(cls compaction.Result) string {
	return cls.SummaryAnchor
}

// summaryHook merges exactly one current block into the compaction summary
// the client receives, and records the summary for epoch recognition.
type summaryHook struct {
	flow.NopResponseHook
	e        *Engine
	ref      session.Ref
	block    string
	anchor   string
	merger   *dialect.TextMerger
	recorded bool
}

func (h *summaryHook) EditBody(x *flow.Exchange, body []byte) []byte {
	if dialect.ResponseHasOpaqueCompaction(x.Dialect, body) {
		return body
	}
	out, err := dialect.EditResponseText(x.Dialect, body, func(s string) string {
		return dialect.MergeText(s, h.block, h.anchor)
	})
	if err != nil {
		h.e.m.failures.WithLabelValues("merge").Inc()
		return body
	}
	h.record(dialect.ResponseText(x.Dialect, out))
	return out
}

func (h *summaryHook) StreamEvent(x *flow.Exchange, ev dialect.Event) []dialect.Event {
	out := h.merger.Process(ev)
	if dialect.IsTerminal(x.Dialect, ev) {
		h.record(h.merger.Text())
	}
	return out
}

func (h *summaryHook) Finish(x *flow.Exchange, o flow.Outcome) {
	if o.Status == 200 && o.Err == nil && o.Stream {
		h.record(h.merger.Text()) // a stream that ended without its terminal event
	}
}

// record notes the summary the client receives, before its last byte goes
// out, so the client's next turn is recognised as the next epoch.
func (h *summaryHook) record(text string) {
	if h.recorded || text == "" {
		return
	}
	h.recorded = true
	h.e.m.merges.Inc()
	h.e.recordSummary(h.ref, text)
}

// recordSummary notes text as the summary the client received for ref's
// A-leg (failures are counted, never returned: traffic goes on).
func (e *Engine) recordSummary(ref session.Ref, text string) {
	ctx, cancel := context.WithTimeout(context.Background(), lineageWriteBound)
	defer cancel()
	if err := e.opt.Resolver.RecordSummary(ctx, ref, text); err != nil {
		e.m.failures.WithLabelValues("record_summary").Inc()
	}
}

// sideHook records the answer to a side request (a request quoting the
// branch's conversation that no rule recognised, probably a summarisation)
// as a summary of the branch, without changing it: if the agent opens its
// next turn with that text, the turn is attributed to the branch's next
// epoch even when the agent sends no client id (Pi).
type sideHook struct {
	flow.NopResponseHook
	e        *Engine
	ref      session.Ref
	text     strings.Builder
	recorded bool
}

func (h *sideHook) EditBody(x *flow.Exchange, body []byte) []byte {
	h.record(dialect.ResponseText(x.Dialect, body))
	return body
}

func (h *sideHook) StreamEvent(x *flow.Exchange, ev dialect.Event) []dialect.Event {
	h.text.WriteString(dialect.EventText(x.Dialect, ev))
	if dialect.IsTerminal(x.Dialect, ev) {
		h.record(h.text.String())
	}
	return []dialect.Event{ev}
}

func (h *sideHook) Finish(x *flow.Exchange, o flow.Outcome) {
	if o.Status == 200 && o.Err == nil && o.Stream {
		h.record(h.text.String())
	}
}

func (h *sideHook) record(text string) {
	if h.recorded || strings.TrimSpace(text) == "" {
		return
	}
	h.recorded = true
	h.e.recordSummary(h.ref, text)
}

// commitHook records the turn's lineage once the provider accepted it. The
// store write runs alongside the relayed answer (it does not delay the first
// byte) and is joined before the answer's last event reaches the client: the
// client's next turn may arrive the moment the answer ends, and it must find
// this turn's lineage.
//
// A turn that continues a known head, on a store this process alone writes
// (session.Resolver.Exclusive), is not joined: the resolver holds its
// records in memory before it writes them, and the write rides along with
// the turn's settlement (backend.LineageEnqueuer), one transaction for both.
// It is recorded where the commit would be joined (the answer's body or
// last event, else the end of the exchange), so the first byte never
// waits for it. Should the process die before that write lands, the next
// turn finds the head before it, on the same A-leg, and continues from
// there: a continuation's records are derived again from the history that
// follows them. A turn that opens an A-leg or an epoch, forks or resets is
// joined as before: its records name the A-leg its capsule is kept under.
type commitHook struct {
	flow.NopResponseHook
	e      *Engine
	ref    session.Ref
	done   chan struct{}
	behind bool // accepted, to be committed behind at the join point
}

func (h *commitHook) Opened(x *flow.Exchange, status int) {
	if status != 200 {
		return
	}
	if h.ref.Event == session.EventContinue && h.e.opt.Resolver.Exclusive() {
		h.behind = true
		return
	}
	h.done = make(chan struct{})
	// The answer waits for this commit, though not forever
	// (lineageWriteBound): the request it reads is held until it ends.
	release := x.Hold()
	runCommit(func() {
		defer release()
		defer close(h.done)
		ctx, cancel := context.WithTimeout(context.Background(), lineageWriteBound)
		defer cancel()
		if err := h.e.opt.Resolver.Commit(ctx, h.ref, x.View); err != nil {
			h.e.m.failures.WithLabelValues("commit").Inc()
		}
	})
}

// commitBehind records an accepted continuation in memory and leaves its
// write running, once.
func (h *commitHook) commitBehind(x *flow.Exchange) {
	if !h.behind {
		return
	}
	h.behind = false
	ctx, cancel := context.WithTimeout(context.Background(), lineageWriteBound)
	write, err := h.e.opt.Resolver.CommitBehind(ctx, h.ref, x.View)
	if err != nil || write == nil {
		cancel()
		if err != nil {
			h.e.m.failures.WithLabelValues("commit").Inc()
		}
		return
	}
	h.e.behind.Add(1)
	runCommit(func() {
		defer h.e.behind.Done()
		defer cancel()
		if err := write(); err != nil {
			h.e.m.failures.WithLabelValues("commit").Inc()
		}
	})
}

// runCommit runs a lineage commit on one of a few goroutines that outlive
// requests: the store's code runs deep (SQLite's pager and WAL), and a
// goroutine started per commit grows its stack to that depth every time.
// A commit that finds no worker idle gets a goroutine of its own.
func runCommit(fn func()) {
	startCommitters.Do(func() {
		for range committers {
			go func() {
				for fn := range commitJobs {
					fn()
				}
			}()
		}
	})
	select {
	case commitJobs <- fn:
	default:
		go fn()
	}
}

const committers = 4

var (
	commitJobs      = make(chan func())
	startCommitters sync.Once
)

// wait joins the commit (a continuation committed behind is recorded
// now instead), bounded so a stuck store never holds an answer.
func (h *commitHook) wait(x *flow.Exchange) {
	h.commitBehind(x)
	if h.done == nil {
		return
	}
	select {
	case <-h.done:
	case <-time.After(lineageWriteBound):
	}
}

// lineageWriteBound bounds the lineage writes an answer waits for (the turn
// commit, the summary record) so a stuck store never holds it forever. It is
// generous: a write that gives up loses the turn's lineage, and under load
// (a busy SQLite writer) 5 s was measured too short — the next turn after a
// compaction then started a new conversation without the decisions.
const lineageWriteBound = 30 * time.Second

func (h *commitHook) EditBody(x *flow.Exchange, body []byte) []byte {
	h.wait(x)
	return body
}

func (h *commitHook) StreamEvent(x *flow.Exchange, ev dialect.Event) []dialect.Event {
	if dialect.IsTerminal(x.Dialect, ev) {
		h.wait(x)
	}
	return []dialect.Event{ev}
}

func (h *commitHook) Finish(x *flow.Exchange, _ flow.Outcome) { h.wait(x) }
