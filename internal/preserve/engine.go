package preserve

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/tether-dev/tether/internal/auth"
	"github.com/tether-dev/tether/internal/capsule"
	"github.com/tether-dev/tether/internal/compaction"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/extract"
	"github.com/tether-dev/tether/internal/flow"
	"github.com/tether-dev/tether/internal/harvest"
	"github.com/tether-dev/tether/internal/session"
	"github.com/tether-dev/tether/internal/store/backend"
)

// Store is the part of the durable store preservation uses.
type Store interface {
	GetCapsule(ctx context.Context, principal, aLeg string) (backend.CapsuleRecord, error)
	PutCapsule(ctx context.Context, rec backend.CapsuleRecord, expectRevision int64) error
	CapsuleHistory(ctx context.Context, principal, aLeg string, limit int) ([]backend.CapsuleRecord, error)
}

// Resolver is the lineage authority (session package).
type Resolver interface {
	Resolve(ctx context.Context, principal string, v *dialect.View, h session.Hints) (session.Ref, error)
	Commit(ctx context.Context, ref session.Ref, v *dialect.View) error
	CommitBehind(ctx context.Context, ref session.Ref, v *dialect.View) (write func() error, err error)
	RecordSummary(ctx context.Context, ref session.Ref, summaryText string) error
	EpochToken(ref session.Ref) string
	Lock(ref session.Ref) (unlock func())
	// Exclusive reports that this process alone writes the lineage store.
	Exclusive() bool
	// Flush queues the lineage records still waiting to be written.
	Flush()
}

// Extractor is the background extraction boundary (extract.Pool).
type Extractor interface {
	Enqueue(job extract.Job) error
	Wait(ctx context.Context, aLeg string, ordinal int64, timeout time.Duration) (bool, error)
	ObserveGate(s extract.Signal)
}

// Policy is the effective, trusted configuration for one principal.
type Policy struct {
	Enabled        bool
	Extractor      Extractor // nil: no semantic extraction
	MaxTokens      int
	Preserve       config.Preserve
	Reinjection    string // every_turn | first_turn
	CopyOnFork     bool
	BarrierTimeout time.Duration
}

// Options wires an Engine.
type Options struct {
	Rules    *compaction.Ruleset
	Resolver Resolver
	Store    Store
	Policy   func(p auth.Principal) Policy
	Metrics  *Metrics
	Logger   *slog.Logger
	// Timeline, when set, records each compaction handled (see
	// recordCompaction).
	Timeline Timeline
}

// Engine is the preservation hook (flow.Hook).
type Engine struct {
	opt       Options
	log       *slog.Logger
	m         *Metrics
	scanned   scanMarks      // how much of each A-leg's history the gate has seen
	compacted legMarks       // A-legs whose provider compacted inside an ordinary call
	behind    sync.WaitGroup // lineage commits no answer waits for (Wait)
	plans     *harvest.Memo  // plan harvests of recent histories
}

var _ flow.Hook = (*Engine)(nil)

// New returns an Engine.
func New(opt Options) *Engine {
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := opt.Metrics
	if m == nil {
		m = NewMetrics(nil)
	}
	return &Engine{opt: opt, log: log, m: m, plans: harvest.NewMemo(planMemoMax)}
}

// Wait queues the lineage records still waiting to be written
// (Resolver.Flush) and returns once the lineage commits no answer waited
// for have ended (or ctx is done): a process calls it after its server
// stopped, before it closes the store.
func (e *Engine) Wait(ctx context.Context) error {
	e.opt.Resolver.Flush()
	done := make(chan struct{})
	go func() {
		e.behind.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// planMemoMax bounds the histories whose plan harvest is remembered.
const planMemoMax = 4096

// Before implements flow.Hook.
func (e *Engine) Before(ctx context.Context, x *flow.Exchange) error {
	cls := x.Verdict
	if x.Internal || cls.Title || x.View == nil {
		return nil
	}
	pol := e.opt.Policy(x.Principal)
	if !pol.Enabled {
		return nil
	}
	start := time.Now()
	defer func() { e.m.hookSeconds.Observe(time.Since(start).Seconds()) }()

	hints := session.Hints{
		Compaction: cls.Compaction, OutOfBand: cls.Kind == compaction.OutOfBand, Opaque: cls.Kind == compaction.Opaque,
		PostCompaction: cls.PostCompaction, Agent: cls.Agent,
	}
	ref, err := e.opt.Resolver.Resolve(ctx, x.Principal.ID, x.View, hints)
	if err != nil {
		e.m.failures.WithLabelValues("resolve").Inc()
		return fmt.Errorf("resolve lineage: %w", err)
	}
	if ref.Event == session.EventReset && !cls.Any() {
		ref, cls = e.silentCompaction(ctx, x, hints, ref, cls)
	}
	e.m.lineage.WithLabelValues(string(ref.Event)).Inc()
	e.log.LogAttrs(ctx, slog.LevelDebug, "lineage resolved", slog.String("id", x.ID), slog.String("event", string(ref.Event)),
		slog.String("session", ref.Session), slog.String("a_leg", ref.ALeg), slog.String("parent_a_leg", ref.ParentALeg),
		slog.Int("epoch", ref.Epoch), slog.Int("turn", ref.Turn), slog.Bool("client_hint", ref.Hint != ""), slog.Bool("side", ref.Side),
		slog.Int64("resolve_us", time.Since(start).Microseconds()))
	if ref.Event == session.EventUnattributed {
		return nil
	}
	if ref.Side || cls.Partial {
		// Probably a summarisation request no rule knows, or the partial
		// part of a compaction (Pi's split-turn prefix, whose answer Pi
		// joins to its summary — or uses alone): leave it alone, and record
		// its answer as the branch's summary, so the turn that opens with it
		// starts the branch's next epoch.
		x.AddResponseHook(&sideHook{e: e, ref: ref})
		return nil
	}
	x.Session, x.ALeg = ref.Session, ref.ALeg

	t := &turn{e: e, x: x, ref: ref, pol: pol, cls: cls, edits: e.opt.Rules.ContextEdits(x.View)}
	t.watchAnswer()
	if cls.Compaction {
		return t.compaction(ctx)
	}
	if err := t.main(ctx); err != nil {
		return err
	}
	return t.compactInstructions(ctx)
}

// compactInstructions adds the block to the instructions a client gave the
// provider's own compaction (Anthropic compact_20260112), after them, so a
// summary the provider writes keeps the user's decisions too.
func (t *turn) compactInstructions(ctx context.Context) error {
	if t.x.Dialect != dialect.AnthropicMessages || t.x.View == nil {
		return nil
	}
	// Only context_management holds the edit: the history is not searched.
	if cm, ok := t.x.View.Field(dialect.FieldContextManagement); !ok || !bytes.Contains(cm, []byte(dialect.AnthropicCompactEdit)) {
		return nil
	}
	cur, err := t.load(ctx)
	if err != nil || cur.Empty() {
		return err
	}
	if body, ok := dialect.AppendCompactionInstructions(t.x.Dialect, t.x.Body, t.block(cur)); ok {
		t.x.Body = body
	}
	return nil
}

// turn is the preservation work of one exchange.
type turn struct {
	e   *Engine
	x   *flow.Exchange
	ref session.Ref
	pol Policy
	cls compaction.Result
	// edits are the context edits the request asks the provider for
	// (context_edit rules).
	edits []compaction.Rule
	// prefetchTaken: the capsule Resolve read with the lineage was used
	// (by the first load); later loads read the store.
	prefetchTaken bool
}

// main handles an ordinary turn: harvest, gate and enqueue, and on
// post-compaction turns the barrier and reinjection.
func (t *turn) main(ctx context.Context) error {
	e, x, ref := t.e, t.x, t.ref
	x.AddResponseHook(&commitHook{e: e, ref: ref})
	msgs := x.View.Messages()

	// The capsule is read only when this turn needs it: a turn of the
	// first epoch that brings no new plan and nothing new to offer the
	// extractor costs no store read for it.
	lc := &lazyCapsule{t: t, ctx: ctx}
	if ref.Event == session.EventFork {
		// A fork copies the parent's state now (copy_on_fork): the fork
		// point is known only on this turn.
		if _, err := lc.get(); err != nil {
			return err
		}
	}
	if err := t.harvest(ctx, lc, msgs, x.View.PrefixIDs()); err != nil {
		return err
	}
	if err := t.offer(lc, msgs); err != nil {
		return err
	}

	// A compaction the provider made (a compaction block the client sent
	// back) opens no epoch Tether saw: the history goes on, and the turns
	// that follow it get the block all the same.
	provider := t.cls.PostCompaction && t.cls.Kind == compaction.Opaque || e.compacted.has(ref.ALeg)
	if ref.Epoch == 0 && !provider {
		t.stripCarried(true)
		return nil
	}
	cur, err := lc.get()
	if err != nil {
		return err
	}
	if ref.Event == session.EventEpoch {
		// First turn after a compaction: join any extraction still covering
		// the previous epoch so this turn does not race ahead of it.
		// Reload also when nothing was in flight: a job that finished
		// between the load above and the barrier has written a newer
		// revision already.
		if waited := t.barrier(ctx, 1<<62); waited || t.pol.Extractor != nil {
			if cur, err = t.load(ctx); err != nil {
				return err
			}
		}
	}
	if cur.Empty() || !t.needsReinjection(cur, msgs) {
		// An agent that keeps older summaries (OpenCode after a mid-turn
		// compaction) carries older blocks too: only the newest stays.
		t.stripCarried(true)
		return nil
	}
	t.stripCarried(false) // the reinjected block replaces every carried one
	block := t.block(cur)
	body, err := t.reinject(reinjectPreamble + block)
	if err != nil {
		e.m.failures.WithLabelValues("reinject").Inc()
		return fmt.Errorf("reinject capsule: %w", err)
	}
	x.Body = body
	e.m.reinjections.Inc()
	if ref.Event == session.EventEpoch {
		t.recordCompaction(ctx, ActionReinjected, cur, block)
	}
	e.log.Info("capsule reinjected", slog.String("id", x.ID), slog.String("a_leg", ref.ALeg), slog.Int64("revision", cur.Revision), slog.Int("epoch", ref.Epoch))
	return nil
}

// compaction handles a compaction request: make the capsule current (bounded
// barrier), add it to the request, and merge it into the summary.
func (t *turn) compaction(ctx context.Context) error {
	e, x := t.e, t.x
	cur, err := t.load(ctx)
	if err != nil {
		return err
	}
	if t.cls.Kind != compaction.OutOfBand && !t.cls.Older {
		// In-band: the request carries the live history; its last turns may
		// hold state not yet offered to the extractor.
		msgs := withoutCompactionPrompt(x.View.Messages(), t.cls.PromptStart)
		lc := &lazyCapsule{t: t, ctx: ctx, cur: cur, loaded: true}
		_ = t.harvest(ctx, lc, msgs, nil) // loaded already: no load error
		_ = t.offer(lc, msgs)
		cur = lc.cur
	}
	// Every extraction in flight for the A-leg is joined, not only those up
	// to this request: Gemini CLI summarises an older part of the history
	// while the turn that made it compress (and its extraction) is newer.
	// Reload also when nothing was in flight: a job that finished between
	// the load above and the barrier has written a newer revision already.
	if waited := t.barrier(ctx, 1<<62); waited || t.pol.Extractor != nil {
		if cur, err = t.load(ctx); err != nil {
			return err
		}
	}
	if t.cls.Placement == compaction.PlaceNone {
		// The answer is a block the provider signs (Anthropic on-demand
		// compaction): nothing is added to the history. Instructions the
		// client gave the summariser (they replace the provider's prompt)
		// get the block after them; otherwise the request goes as sent.
		// Either way the capsule, current now, goes back on the turns that
		// lead with the signed block.
		e.compacted.set(t.ref.ALeg)
		if !cur.Empty() {
			block := t.block(cur)
			if body, ok := dialect.AppendCompactionInstructions(x.Dialect, x.Body, block); ok {
				x.Body = body
				e.m.augment.WithLabelValues(string(t.cls.Kind)).Inc()
				t.recordCompaction(ctx, ActionAugmented, cur, block)
				return nil
			}
		}
		t.recordCompaction(ctx, ActionRelayed, cur, "")
		return nil
	}
	if cur.Empty() {
		// Nothing to add, but the summary still marks the branch: the turn
		// that opens with it is this branch's next epoch (Pi sends no
		// session id). Lineage never depends on the capsule's content.
		e.m.augment.WithLabelValues("empty").Inc()
		t.recordCompaction(ctx, ActionEmpty, nil, "")
		if t.cls.Kind != compaction.Opaque {
			x.AddResponseHook(&sideHook{e: e, ref: t.ref})
		}
		return nil
	}
	// The summariser gets the current block only, not older ones the
	// history or a previous summary still carries.
	t.stripCarried(false)
	block := t.block(cur)
	body, err := augment(x, t.cls, block)
	if err != nil {
		e.m.failures.WithLabelValues("augment").Inc()
		return fmt.Errorf("augment compaction request: %w", err)
	}
	x.Body = body
	e.m.augment.WithLabelValues(string(t.cls.Kind)).Inc()
	t.recordCompaction(ctx, ActionAugmented, cur, block)
	if t.cls.Kind != compaction.Opaque {
		x.AddResponseHook(&summaryHook{e: e, ref: t.ref, block: block, anchor: anchorFor(t.cls),
			merger: dialect.NewTextMerger(x.Dialect, block, anchorFor(t.cls))})
	}
	e.log.Info("compaction augmented", slog.String("id", x.ID), slog.String("a_leg", t.ref.ALeg), slog.Int64("revision", cur.Revision),
		slog.String("kind", string(t.cls.Kind)), slog.String("rule", t.cls.RuleID))
	return nil
}

// needsReinjection reports whether a post-compaction history lacks facts of
// the capsule that predate this epoch: either no block at all is carried
// (opaque compaction, or an agent that dropped it), or the carried block
// misses an active item that a late extraction added.
func (t *turn) needsReinjection(cur *capsule.Capsule, msgs []dialect.Message) bool {
	if t.pol.Reinjection == "first_turn" && t.ref.Event != session.EventEpoch {
		return false
	}
	carried := carriedBlock(msgs, !t.clears("tool_results"))
	if carried == "" {
		return true
	}
	if _, digest, ok := capsule.Find(carried); ok && digest == capsule.Digest(cur) {
		return false
	}
	epochStart := int(session.Ordinal(t.ref.Epoch, 0))
	missing := func(id string, turn int) bool {
		return turn < epochStart && !strings.Contains(carried, id+":")
	}
	for _, d := range cur.Decisions {
		if d.Status == capsule.StatusActive && missing(d.ID, d.SourceTurn) {
			return true
		}
	}
	for _, c := range cur.Constraints {
		if c.Status == capsule.StatusActive && missing(c.ID, c.SourceTurn) {
			return true
		}
	}
	for _, r := range cur.Rejected {
		if missing(r.ID, r.SourceTurn) {
			return true
		}
	}
	if p := cur.LatestPlan; p != nil && p.SourceTurn < epochStart && !strings.Contains(carried, "PLAN") {
		return true
	}
	return false
}

// block renders the capsule with the epoch token that lets the lineage layer
// recognise the summary on the next turn.
func (t *turn) block(c *capsule.Capsule) string {
	return capsule.RenderRef(c, t.e.opt.Resolver.EpochToken(t.ref))
}

const reinjectPreamble = "The following is context kept by the proxy across a context compaction (not a new user request): " +
	"the plan the user accepted and the user's decisions from earlier in this conversation.\n"

// LoadForJob returns the A-leg's current capsule for an extraction job that
// is about to run (extract.PoolOptions.Load).
func (e *Engine) LoadForJob(ctx context.Context, job extract.Job) (*capsule.Capsule, error) {
	return e.get(ctx, job.Principal, job.ALeg)
}

// Capsule returns the current capsule of an A-leg (nil when none), for the
// operator CLI and tests.
func (e *Engine) Capsule(ctx context.Context, principal, aLeg string) (*capsule.Capsule, error) {
	return e.get(ctx, principal, aLeg)
}
