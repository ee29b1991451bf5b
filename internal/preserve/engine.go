package preserve

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
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
	RecordSummary(ctx context.Context, ref session.Ref, summaryText string) error
	EpochToken(ref session.Ref) string
	Lock(ref session.Ref) (unlock func())
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
}

// Engine is the preservation hook (flow.Hook).
type Engine struct {
	opt     Options
	log     *slog.Logger
	m       *Metrics
	scanned scanMarks // how much of each A-leg's history the gate has seen
}

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
	return &Engine{opt: opt, log: log, m: m}
}

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

	ref, err := e.opt.Resolver.Resolve(ctx, x.Principal.ID, x.View, session.Hints{
		Compaction: cls.Compaction, OutOfBand: cls.Kind == compaction.OutOfBand, Opaque: cls.Kind == compaction.Opaque,
		PostCompaction: cls.PostCompaction, Agent: cls.Agent,
	})
	if err != nil {
		e.m.failures.WithLabelValues("resolve").Inc()
		return fmt.Errorf("resolve lineage: %w", err)
	}
	e.m.lineage.WithLabelValues(string(ref.Event)).Inc()
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

	t := &turn{e: e, x: x, ref: ref, pol: pol, cls: cls}
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
	if t.x.Dialect != dialect.AnthropicMessages || !bytes.Contains(t.x.Body, []byte(dialect.AnthropicCompactEdit)) {
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
	if err := t.harvest(ctx, lc, msgs); err != nil {
		return err
	}
	if err := t.offer(lc, msgs); err != nil {
		return err
	}

	// A compaction the provider made (a compaction block the client sent
	// back) opens no epoch Tether saw: the history goes on, and the turns
	// that follow it get the block all the same.
	provider := t.cls.PostCompaction && t.cls.Kind == compaction.Opaque
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
	body, err := dialect.AppendSystemText(x.Dialect, x.Body, reinjectPreamble+block)
	if err != nil {
		e.m.failures.WithLabelValues("reinject").Inc()
		return fmt.Errorf("reinject capsule: %w", err)
	}
	x.Body = body
	e.m.reinjections.Inc()
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
		_ = t.harvest(ctx, lc, msgs) // loaded already: no load error
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
	if cur.Empty() {
		// Nothing to add, but the summary still marks the branch: the turn
		// that opens with it is this branch's next epoch (Pi sends no
		// session id). Lineage never depends on the capsule's content.
		e.m.augment.WithLabelValues("empty").Inc()
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
	if t.cls.Kind != compaction.Opaque {
		x.AddResponseHook(&summaryHook{e: e, ref: t.ref, block: block, anchor: anchorFor(t.cls),
			merger: dialect.NewTextMerger(x.Dialect, block, anchorFor(t.cls))})
	}
	e.log.Info("compaction augmented", slog.String("id", x.ID), slog.String("a_leg", t.ref.ALeg), slog.Int64("revision", cur.Revision),
		slog.String("kind", string(t.cls.Kind)), slog.String("rule", t.cls.RuleID))
	return nil
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

// load returns the A-leg's capsule, empty when there is none. A fork with
// copy_on_fork starts from the parent's newest revision at or before the
// fork point.
func (t *turn) load(ctx context.Context) (*capsule.Capsule, error) {
	c, err := t.e.get(ctx, t.x.Principal.ID, t.ref.ALeg)
	if err != nil {
		return nil, err
	}
	if c != nil {
		return c, nil
	}
	if t.ref.Event == session.EventFork && t.pol.CopyOnFork && t.ref.ParentALeg != "" {
		if inherited := t.e.forkCopy(ctx, t.x.Principal.ID, t.ref); inherited != nil {
			// Persist the copy as the branch's first revision so later
			// updates (harvest, extraction) build on it.
			next, err := t.e.update(ctx, t.x.Principal.ID, t.ref, func(c *capsule.Capsule) (*capsule.Capsule, error) {
				if c.Revision > 0 {
					return nil, capsule.ErrAlreadyApplied // the branch already has state
				}
				return inherited, nil
			})
			if err == nil && next != nil {
				return next, nil
			}
		}
	}
	return capsule.New(t.ref.Session, t.ref.ALeg), nil
}

// harvest copies structured plan state from the history into the capsule,
// mechanically (no model call). It returns the capsule to use afterwards.
func (t *turn) harvest(ctx context.Context, lc *lazyCapsule, msgs []dialect.Message) error {
	if !t.pol.Preserve.PlanOn() {
		return nil
	}
	// The plan the capsule recorded seeds the carriers that accumulate
	// state, so a step toggled by id still applies after a compaction
	// removed the calls that created it. Before any compaction (Tether's
	// or the provider's) the history holds every such call and the seed
	// cannot make a plan appear: the capsule is read only once the history
	// yields one.
	rules := t.e.opt.Rules.HarvestRules()
	var plan harvest.Plan
	ok := false
	before := t.ref.Epoch == 0 && !t.cls.PostCompaction
	if before {
		if plan, ok = harvest.Harvest(rules, msgs, 0); !ok || len(plan.Steps) == 0 {
			return nil
		}
	}
	cur, err := lc.get()
	if err != nil {
		return err
	}
	if p := cur.LatestPlan; p != nil && p.Source == capsule.SourceStructuredTool {
		sd := harvest.Plan{Tool: p.Tool, Source: harvest.SourceStructuredTool, Offset: p.Condensed}
		for _, st := range p.Steps {
			sd.Steps = append(sd.Steps, harvest.Step{Text: st.Text, Status: st.Status})
		}
		plan, ok = harvest.Harvest(rules, msgs, 0, sd)
	} else if !before {
		plan, ok = harvest.Harvest(rules, msgs, 0)
	}
	if !ok || len(plan.Steps) == 0 {
		return nil
	}
	turnOrd := int(session.Ordinal(t.ref.Epoch, plan.Turn))
	op := capsule.Op{Op: capsule.OpSetPlan, Status: plan.Status, Source: plan.Source, Tool: plan.Tool, Turn: turnOrd}
	for _, s := range plan.Steps {
		op.Steps = append(op.Steps, capsule.Step{Text: s.Text, Status: s.Status})
	}
	tx := "plan:" + t.ref.ALeg + ":" + digestJSON(op)
	if containsTx(cur, tx) {
		return nil
	}
	d := capsule.Delta{FromTurn: turnOrd, ToTurn: turnOrd}
	next, err := t.e.update(ctx, t.x.Principal.ID, t.ref, func(c *capsule.Capsule) (*capsule.Capsule, error) {
		return capsule.Apply(c, []capsule.Op{op}, d, tx, capsule.WithProvenance(capsule.ProvenanceStructured))
	})
	if err != nil {
		t.e.m.failures.WithLabelValues("harvest").Inc()
		return nil
	}
	t.e.m.harvest.WithLabelValues(plan.Tool).Inc()
	lc.cur = next
	return nil
}

// lazyCapsule is the A-leg's capsule of one turn, loaded on first use.
type lazyCapsule struct {
	t      *turn
	ctx    context.Context
	cur    *capsule.Capsule
	loaded bool
}

func (lc *lazyCapsule) get() (*capsule.Capsule, error) {
	if !lc.loaded {
		cur, err := lc.t.load(lc.ctx)
		if err != nil {
			return nil, err
		}
		lc.cur, lc.loaded = cur, true
	}
	return lc.cur, nil
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

// needsReinjection reports whether a post-compaction history lacks facts of
// the capsule that predate this epoch: either no block at all is carried
// (opaque compaction, or an agent that dropped it), or the carried block
// misses an active item that a late extraction added.
func (t *turn) needsReinjection(cur *capsule.Capsule, msgs []dialect.Message) bool {
	if t.pol.Reinjection == "first_turn" && t.ref.Event != session.EventEpoch {
		return false
	}
	carried := carriedBlock(msgs)
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

// stripCarried removes the capsule blocks the request carries in its
// history — all of them, or all but the newest (keepLast) — so the model
// never reads two versions of the state side by side. Failures leave the
// body as it is.
func (t *turn) stripCarried(keepLast bool) {
	// Counting the opening tags is the whole cost on most turns.
	drop := capsule.CountOpen(t.x.Body)
	if keepLast {
		drop--
	}
	if drop <= 0 {
		return
	}
	seen := 0
	out, err := dialect.RewriteStrings(t.x.Body, capsule.Marker, func(s string) string {
		n := capsule.CountOpenText(s)
		defer func() { seen += n }()
		if seen+n <= drop {
			r, _ := capsule.Strip(s)
			return r
		}
		// The string holding the block that stays: drop its earlier ones.
		k := capsule.IndexLast(s)
		if k < 0 {
			return s
		}
		head, _ := capsule.Strip(s[:k])
		return head + s[k:]
	})
	if err != nil {
		t.e.m.failures.WithLabelValues("strip").Inc()
		return
	}
	t.x.Body = out
	t.e.m.stripped.Add(float64(drop))
}

// carriedBlock returns the text of the newest capsule block in the history.
func carriedBlock(msgs []dialect.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		txt := msgs[i].Text
		for _, r := range msgs[i].ToolResults {
			if capsule.Contains(r.Text) {
				txt += "\n" + r.Text
			}
		}
		if blk := capsule.Last(txt); blk != "" {
			return blk
		}
	}
	return ""
}

// block renders the capsule with the epoch token that lets the lineage layer
// recognise the summary on the next turn.
func (t *turn) block(c *capsule.Capsule) string {
	return capsule.RenderRef(c, t.e.opt.Resolver.EpochToken(t.ref))
}

const reinjectPreamble = "The following is context kept by the proxy across a context compaction (not a new user request): " +
	"the plan the user accepted and the user's decisions from earlier in this conversation.\n"

// get loads and decodes the head capsule; nil when there is none. A corrupt
// or unknown-version capsule is reported (ids only) and treated as absent.
func (e *Engine) get(ctx context.Context, principal, aLeg string) (*capsule.Capsule, error) {
	rec, err := e.opt.Store.GetCapsule(ctx, principal, aLeg)
	if errors.Is(err, backend.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		e.m.failures.WithLabelValues("store").Inc()
		return nil, fmt.Errorf("load capsule %s: %w", aLeg, err)
	}
	c, err := capsule.Decode(rec.Data)
	if err != nil {
		e.m.failures.WithLabelValues("corrupt").Inc()
		e.log.Error("stored capsule unreadable; ignored", slog.String("a_leg", aLeg), slog.Int64("revision", rec.Revision))
		return nil, fmt.Errorf("decode capsule %s@%d: %w", aLeg, rec.Revision, err)
	}
	c.Revision = rec.Revision
	return c, nil
}

func (e *Engine) forkCopy(ctx context.Context, principal string, ref session.Ref) *capsule.Capsule {
	hist, err := e.opt.Store.CapsuleHistory(ctx, principal, ref.ParentALeg, 0)
	if err != nil {
		return nil
	}
	for _, rec := range hist { // newest first
		c, err := capsule.Decode(rec.Data)
		if err != nil {
			continue
		}
		if int64(c.Watermark.Turn) <= ref.ForkOrdinal && latestTurn(c) <= ref.ForkOrdinal {
			c.Session, c.ALeg, c.Revision = ref.Session, ref.ALeg, 0
			c.Applied = nil
			e.m.lineage.WithLabelValues("fork_copied").Inc()
			return c
		}
	}
	return nil
}

// latestTurn is the newest transcript position any fact of c comes from:
// a revision whose facts all predate a fork point is state the fork shares.
func latestTurn(c *capsule.Capsule) int64 {
	m := 0
	if p := c.LatestPlan; p != nil {
		m = max(m, p.SourceTurn)
	}
	for _, d := range c.Decisions {
		m = max(m, d.SourceTurn, d.ClosedTurn)
	}
	for _, x := range c.Constraints {
		m = max(m, x.SourceTurn, x.ClosedTurn)
	}
	for _, r := range c.Rejected {
		m = max(m, r.SourceTurn)
	}
	for _, q := range c.OpenQuestions {
		m = max(m, q.SourceTurn, q.ClosedTurn)
	}
	return int64(m)
}

// update applies fn to the current capsule with compare-and-swap, retrying
// on conflicts, and bounds the result.
func (e *Engine) update(ctx context.Context, principal string, ref session.Ref, fn func(*capsule.Capsule) (*capsule.Capsule, error)) (*capsule.Capsule, error) {
	pol := e.opt.Policy(auth.Principal{ID: principal})
	for attempt := 0; attempt < 16; attempt++ {
		cur, err := e.get(ctx, principal, ref.ALeg)
		if err != nil {
			return nil, err
		}
		var base int64
		if cur == nil {
			cur = capsule.New(ref.Session, ref.ALeg)
		} else {
			base = cur.Revision
		}
		next, err := fn(cur)
		if errors.Is(err, capsule.ErrAlreadyApplied) {
			return cur, nil
		}
		if err != nil {
			return nil, err
		}
		next.Session, next.ALeg = ref.Session, ref.ALeg
		next.Revision = base + 1
		if pol.MaxTokens > 0 {
			var dropped int
			// The block the model gets also carries the ref="…" epoch
			// token (see block); the budget covers it.
			next, dropped = capsule.Bound(next, pol.MaxTokens-capsule.EstimateTokens(` ref="`+e.opt.Resolver.EpochToken(ref)+`"`))
			e.m.dropped.Add(float64(dropped))
		}
		data, err := capsule.Encode(next)
		if err != nil {
			return nil, err
		}
		err = e.opt.Store.PutCapsule(ctx, backend.CapsuleRecord{Principal: principal, Session: ref.Session, ALeg: ref.ALeg, Revision: next.Revision, Data: data}, base)
		if errors.Is(err, backend.ErrConflict) {
			e.m.conflicts.Inc()
			continue
		}
		if err != nil {
			e.m.failures.WithLabelValues("store").Inc()
			return nil, fmt.Errorf("store capsule %s@%d: %w", ref.ALeg, next.Revision, err)
		}
		st := next.Stats()
		e.m.observeCapsule(next.Revision, st)
		e.log.Info("capsule updated", slog.String("a_leg", ref.ALeg), slog.Int64("revision", next.Revision),
			slog.Int("active_decisions", st.ActiveDecisions), slog.Int("steps", st.Steps), slog.Int("tokens", st.Tokens))
		return next, nil
	}
	return nil, fmt.Errorf("store capsule %s: %w", ref.ALeg, backend.ErrConflict)
}

// ApplyOps merges a validated extraction result (extract.ApplyFunc). A result
// computed on an older revision is rebased; one that covers nothing newer
// than the capsule is rejected as stale.
func (e *Engine) ApplyOps(ctx context.Context, job extract.Job, ops []capsule.Op, d capsule.Delta) error {
	pol := e.opt.Policy(auth.Principal{ID: job.Principal, Account: job.Account})
	ops = filterOps(ops, pol.Preserve)
	ref := session.Ref{Principal: job.Principal, Session: job.Session, ALeg: job.ALeg}
	unlock := e.opt.Resolver.Lock(ref)
	defer unlock()
	tx := fmt.Sprintf("x:%s:%d-%d", job.ALeg, job.FirstTurn, job.Ordinal)
	wm := capsule.Watermark{Turn: int(job.Ordinal)}
	_, err := e.update(ctx, job.Principal, ref, func(cur *capsule.Capsule) (*capsule.Capsule, error) {
		var baseRev int64
		var baseWM capsule.Watermark
		if job.Prev != nil {
			baseRev, baseWM = job.Prev.Revision, job.Prev.Watermark
		}
		if cur.Revision == baseRev {
			if d.ToTurn < cur.Watermark.Turn {
				return nil, fmt.Errorf("apply %s: %w", tx, capsule.ErrStale)
			}
			return capsule.Apply(cur, ops, d, tx, capsule.WithWatermark(wm))
		}
		return capsule.Rebase(cur, ops, d, tx, baseRev, baseWM, capsule.WithWatermark(wm))
	})
	switch {
	case errors.Is(err, capsule.ErrStale):
		e.m.stale.Inc()
	case err != nil:
		e.m.failures.WithLabelValues("apply").Inc()
	}
	return err
}

// filterOps drops ops of kinds the operator chose not to preserve.
func filterOps(ops []capsule.Op, p config.Preserve) []capsule.Op {
	out := ops[:0:0]
	for _, op := range ops {
		switch op.Op {
		case capsule.OpAddDecision, capsule.OpSupersedeDecision, capsule.OpRejectDecision:
			if !p.UserDecisionsOn() {
				continue
			}
		case capsule.OpAddConstraint, capsule.OpSupersedeConstraint, capsule.OpRemoveConstraint:
			if !p.ConstraintsOn() {
				continue
			}
		case capsule.OpRejectAlternative:
			if !p.RejectedAlternativesOn() {
				continue
			}
		case capsule.OpSetPlan, capsule.OpSetStepStatus:
			if !p.PlanOn() {
				continue
			}
		}
		if !p.RationaleOn() {
			op.Rationale, op.Reason = "", ""
		}
		out = append(out, op)
	}
	return out
}

func containsTx(c *capsule.Capsule, tx string) bool {
	for _, a := range c.Applied {
		if a == tx {
			return true
		}
	}
	return false
}

func digestJSON(v any) string {
	b, _ := json.Marshal(v)
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:8])
}

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
