package preserve

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/extract"
	"github.com/tether-dev/tether/internal/session"
)

// scanMarks remembers, per A-leg, how much of the history was already
// offered to the gate, so a turn offers only what is new. It is a bounded
// cache: when full it starts over, and the capsule's watermark bounds the
// re-offered part.
type scanMarks struct {
	mu sync.Mutex
	m  map[string]scanMark
}

const maxScanMarks = 100_000

func (s *scanMarks) get(aLeg string) (scanMark, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[aLeg]
	return v, ok
}

func (s *scanMarks) set(aLeg string, v scanMark) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil || len(s.m) >= maxScanMarks {
		s.m = make(map[string]scanMark)
	}
	s.m[aLeg] = v
}

// barrier joins in-flight extraction for this A-leg up to ordinal; it reports
// whether it waited (so the caller reloads the capsule).
func (t *turn) barrier(ctx context.Context, ordinal int64) bool {
	ex := t.pol.Extractor
	if ex == nil {
		return false
	}
	start := time.Now()
	var waited bool
	var err error
	if sx, ok := ex.(*SharedExtractor); ok {
		waited, err = sx.WaitAcross(ctx, t.x.Principal.ID, t.ref.ALeg, ordinal, t.pol.BarrierTimeout)
	} else {
		waited, err = ex.Wait(ctx, t.ref.ALeg, ordinal, t.pol.BarrierTimeout)
	}
	if err != nil {
		// Counted by the extractor (tether_barrier_waits_total{outcome="timeout"}).
		t.e.log.Warn("preservation barrier timed out", slog.String("id", t.x.ID), slog.String("a_leg", t.ref.ALeg),
			slog.Int64("waited_ms", time.Since(start).Milliseconds()))
		return true
	}
	return waited
}

// offer runs the eligibility gate over the part of the history not yet
// offered and enqueues extraction when it may add something. It never waits.
func (t *turn) offer(lc *lazyCapsule, msgs []dialect.Message) error {
	ex := t.pol.Extractor
	if ex == nil || !extractionWanted(t.pol) {
		return nil
	}
	from := 0
	if s, ok := t.e.scanned.get(t.ref.ALeg); ok && s.epoch == t.ref.Epoch {
		from = s.n
	}
	if from >= len(msgs) {
		return nil // the capsule's watermark could only move from further
	}
	if extract.Quiet(msgs[from:]) {
		// A tool loop's turn: nothing to extract whatever the capsule
		// holds, so it is not read.
		ex.ObserveGate(extract.Signal{Reason: extract.ReasonNoSignal})
		t.e.scanned.set(t.ref.ALeg, scanMark{epoch: t.ref.Epoch, n: len(msgs)})
		return nil
	}
	cur, err := lc.get()
	if err != nil {
		return err
	}
	if wm := cur.Watermark.Turn; wm>>20 == t.ref.Epoch && int(wm&(1<<20-1)) > from {
		from = int(wm & (1<<20 - 1))
	}
	if from >= len(msgs) {
		return nil
	}
	delta := msgs[from:]
	mark := scanMark{epoch: t.ref.Epoch, n: len(msgs)}
	sig := extract.Gate(cur, delta)
	ex.ObserveGate(sig)
	if !sig.Eligible {
		t.e.scanned.set(t.ref.ALeg, mark) // provably nothing to extract
		return nil
	}
	job := extract.Job{
		Principal: t.x.Principal.ID, Account: t.x.Principal.Account, Session: t.ref.Session, ALeg: t.ref.ALeg,
		ParentRequestID: t.x.ID, Ordinal: session.Ordinal(t.ref.Epoch, len(msgs)), Messages: delta,
		FirstTurn: int(session.Ordinal(t.ref.Epoch, from)), Prev: cur,
	}
	if err := ex.Enqueue(job); err != nil {
		// Not queued, not owed: the mark stays, so the next turn offers
		// this delta again.
		t.e.m.failures.WithLabelValues("enqueue").Inc()
		t.e.log.Warn("extraction not queued; offered again next turn", slog.String("id", t.x.ID), slog.String("a_leg", t.ref.ALeg))
		return nil
	}
	// Applied (inline), queued, or owed in the store's outbox.
	t.e.scanned.set(t.ref.ALeg, mark)
	return nil
}

type scanMark struct{ epoch, n int }

// withoutCompactionPrompt returns the history of an in-band compaction
// request without the agent's own compaction instruction, which is not user
// intent: Claude Code appends it as a block to the last user message (cut at
// its first line), the other in-band agents send it as the last user message
// (dropped).
func withoutCompactionPrompt(msgs []dialect.Message, promptStart string) []dialect.Message {
	// Claude Code may end the request with system messages after the user
	// message that holds the instruction; they are not user intent either.
	k := len(msgs) - 1
	for k >= 0 && (msgs[k].Role == "system" || msgs[k].Role == "developer") {
		k--
	}
	if k < 0 || msgs[k].Role != "user" {
		return msgs
	}
	last := msgs[k]
	if i := strings.Index(last.Text, promptStart); promptStart != "" && i >= 0 {
		out := append([]dialect.Message(nil), msgs[:k+1]...)
		last.Text = strings.TrimSpace(last.Text[:i])
		out[k] = last
		return out
	}
	return msgs[:k]
}

func extractionWanted(p Policy) bool {
	pr := p.Preserve
	return pr.UserDecisionsOn() || pr.ConstraintsOn() || pr.RejectedAlternativesOn()
}
