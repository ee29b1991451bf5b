package session

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tether-dev/tether/internal/compaction"
	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/store/backend"
)

// Commit records the lineage of a request the upstream answered: one record
// for its full-history digest, the A-leg's new head, the client hint's
// mapping, and fingerprints of the user turns new since the last commit, in
// one store write (plus one read when the request adds a user turn worth a
// fingerprint). A record this process knows to be stored already, with the
// same value, is not written again: a repeated request writes nothing.
// Compaction and out-of-band requests move no head and record nothing.
func (r *Resolver) Commit(ctx context.Context, ref Ref, v *dialect.View) error {
	w, unlock, err := r.commitWrites(ctx, ref, v)
	if w == nil {
		return err
	}
	defer unlock()
	ak := r.alegKey(ref.Principal, ref.ALeg)
	r.waits.queue(ak) // the A-leg's continuation before this one lands first
	if err := r.behind.wait(ctx, ak); err != nil {
		return wrap("commit", err)
	}
	return wrap("commit", w.flush(ctx))
}

// CommitBehind records the turn as Commit does, but returns once its
// records are held in memory, where the next turn looks first: the store
// write is returned for the caller to run. It is for a store this process alone
// writes (Exclusive), and for turns whose records the next turn can derive
// again should they be lost (a continuation of a known head): if the
// process dies before the write lands, the next turn after the restart
// finds the head before it. write must be called exactly once (it waits
// for the write, or runs it); it is nil when there is nothing to write. A
// store that takes writes without their caller waiting
// (backend.LineageEnqueuer) has them queued before CommitBehind returns.
func (r *Resolver) CommitBehind(ctx context.Context, ref Ref, v *dialect.View) (write func() error, err error) {
	w, unlock, err := r.commitWrites(ctx, ref, v)
	if w == nil {
		return nil, err
	}
	defer unlock()
	w.hold()
	ak := r.alegKey(ref.Principal, ref.ALeg)
	if q, ok := r.st.(backend.LineageEnqueuer); ok && r.opt.Coalesce > 0 && len(w.keys) > 0 {
		done := r.waits.add(r, q, ak, w)
		return func() error { return wrap("commit", <-done) }, nil
	}
	return r.writeHeld(ctx, "commit", ak, w)
}

// Flush queues for the store every continuation record waiting
// (Options.Coalesce) now; a process calls it before it waits for its
// writes and closes the store.
func (r *Resolver) Flush() { r.waits.flushAll(r) }

// waiting holds, per A-leg, the records of the newest continuation
// committed behind and not yet queued for the store (Options.Coalesce).
type waiting struct {
	mu    sync.Mutex
	m     map[string]*waitingBatch // A-leg key → its records
	timer *time.Timer              // queues them all; nil when none wait
}

type waitingBatch struct {
	w    *writes
	q    backend.LineageEnqueuer
	done chan error // the outcome of the write; nil when a newer batch took over
}

// add makes w the records waiting for A-leg ak (the caller holds its
// lock), taking over those of the continuation before it: its records that
// w does not replace are kept, except its head record, a turn passed over.
// The returned channel receives the outcome of w's write.
func (c *waiting) add(r *Resolver, q backend.LineageEnqueuer, ak string, w *writes) <-chan error {
	b := &waitingBatch{w: w, q: q, done: make(chan error, 1)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.m[ak]; old != nil {
		w.takeOver(old.w)
		old.done <- nil
	}
	if c.m == nil {
		c.m = make(map[string]*waitingBatch)
	}
	c.m[ak] = b
	if c.timer == nil {
		c.timer = time.AfterFunc(r.opt.Coalesce, func() { c.flushAll(r) })
	}
	return b.done
}

// queue hands what waits for ak, if anything, to the store; the caller
// holds ak's lock, so nothing else of the A-leg is queued in between.
func (c *waiting) queue(ak string) {
	c.mu.Lock()
	b := c.m[ak]
	delete(c.m, ak)
	c.mu.Unlock()
	if b != nil {
		b.queue()
	}
}

// flushAll queues every batch waiting, each under its A-leg's lock, so
// that no other write of the A-leg is queued between the take and the
// queueing.
func (c *waiting) flushAll(r *Resolver) {
	c.mu.Lock()
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	keys := slices.Collect(maps.Keys(c.m))
	c.mu.Unlock()
	for _, ak := range keys {
		unlock := r.heads.lock(ak, "")
		c.queue(ak)
		unlock()
	}
}

// queue hands the batch to the store; its outcome ends the hold of its
// records and goes to done.
func (b *waitingBatch) queue() {
	puts, err := b.w.puts()
	if err != nil {
		b.w.release(err)
		b.done <- err
		return
	}
	stored := b.q.EnqueueLineages(b.w.principal, puts)
	go func() {
		err := <-stored
		b.w.release(err)
		b.done <- err
	}()
}

// takeOver adds to w the records of old, the continuation of the same
// A-leg before it that was not written yet, that w does not replace,
// ahead of w's own (the order they were committed). old's head record is
// dropped: a turn passed over need not be found after a restart. The
// records w does not carry end their hold unstored.
func (w *writes) takeOver(old *writes) {
	// A turn writes a handful of records: old's kept ones are compacted
	// to the front of old's own slices, which nothing reads any more.
	keys, recs := old.keys[:0], old.recs[:0]
	for i, k := range old.keys {
		if slices.Contains(w.keys, k) || strings.HasPrefix(k, kindHead+":") {
			w.r.cache.release(old.principal+"\x00"+k, old.recs[i], false)
			continue
		}
		keys, recs = append(keys, k), append(recs, old.recs[i])
	}
	if len(keys) == 0 {
		return
	}
	w.keys, w.recs = append(keys, w.keys...), append(recs, w.recs...)
}

// writeHeld starts the write of w (for op, which names its errors), whose
// records are held (w.hold), after the writes of the A-leg (key ak) already
// under way and before any started later; the caller holds the A-leg's
// lock. It returns the function that
// waits for the write (or runs it) and ends the hold; call it once. A store
// that takes writes without their caller waiting (backend.LineageEnqueuer)
// keeps them in the order they were queued; otherwise the A-leg's write
// chain does.
func (r *Resolver) writeHeld(ctx context.Context, op, ak string, w *writes) (write func() error, err error) {
	r.waits.queue(ak) // the A-leg's continuation before this write lands first
	if q, ok := r.st.(backend.LineageEnqueuer); ok && len(w.keys) > 0 {
		puts, err := w.puts()
		if err != nil {
			w.release(err)
			return nil, wrap(op, err)
		}
		stored := q.EnqueueLineages(w.principal, puts)
		return func() error {
			err := <-stored
			w.release(err)
			return wrap(op, err)
		}, nil
	}
	prev, done := r.behind.next(ak)
	return func() (err error) {
		defer done()
		defer func() { w.release(err) }()
		if prev != nil {
			select { // the A-leg's write before this one lands first
			case <-prev:
			case <-ctx.Done():
				return wrap(op, ctx.Err())
			}
		}
		return wrap(op, w.flush(ctx))
	}, nil
}

// writeChains orders the writes CommitBehind leaves running, per A-leg: a
// write starts once the A-leg's write before it ended, so the store ends
// with the newest head; Commit waits for them, and RecordSummary's write
// joins the chain (writeHeld).
type writeChains struct {
	mu sync.Mutex
	m  map[string]chan struct{} // A-leg key → its newest write's end
}

// next returns the end of key's newest write (nil if none runs) and the
// done func of a new one, which takes its place.
func (c *writeChains) next(key string) (prev <-chan struct{}, done func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]chan struct{}{}
	}
	if p, ok := c.m[key]; ok {
		prev = p
	}
	mine := make(chan struct{})
	c.m[key] = mine
	return prev, func() {
		c.mu.Lock()
		if c.m[key] == mine {
			delete(c.m, key)
		}
		c.mu.Unlock()
		close(mine)
	}
}

// wait returns once key's writes left running have ended (or ctx is done).
func (c *writeChains) wait(ctx context.Context, key string) error {
	c.mu.Lock()
	p, ok := c.m[key]
	c.mu.Unlock()
	if !ok {
		return nil
	}
	select {
	case <-p:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// commitWrites gathers the records Commit writes, with the A-leg (and
// hint) held until unlock; nil writes when there is nothing to record.
func (r *Resolver) commitWrites(ctx context.Context, ref Ref, v *dialect.View) (w *writes, unlock func(), err error) {
	if err := checkArgs(ref.Principal, v); err != nil {
		return nil, nil, wrap("commit", err)
	}
	if ref.ALeg == "" || ref.compaction || ref.Event == EventOutOfBand || ref.Event == EventUnattributed {
		return nil, nil, nil
	}
	hist, turn, heads := ref.hist, ref.Turn, ref.heads
	if hist == nil { // a Ref not made by Resolve
		msgs := v.Messages()
		hist, turn, heads = history(msgs, v.ItemKeys(), v.PrefixIDs()), len(msgs), [2]string{}
	}
	if len(hist) == 0 {
		return nil, nil, nil
	}
	p := ref.Principal
	n := len(hist)
	headKey, prevKey := heads[0], heads[1]
	if headKey == "" {
		headKey = r.key(kindHead, p, string(hist[n-1].chain[:]))
	}
	if n >= 2 && prevKey == "" {
		prevKey = r.key(kindHead, p, string(hist[n-2].chain[:]))
	}
	fps, err := r.fingerprints(ctx, ref, hist)
	if err != nil {
		return nil, nil, wrap("commit", err)
	}

	ak := r.alegKey(p, ref.ALeg)
	hk := ""
	if ref.Hint != "" {
		hk = kindHint + ":" + ref.Hint
	}
	unlock = r.heads.lock(ak, hk)
	w = r.batch(p)
	w.add(headKey, record{ALeg: ref.ALeg, Session: ref.Session, Epoch: ref.Epoch, Norm: n, Turn: turn})
	if head, ok := r.nextHead(ref, ak, headKey, prevKey, n, turn); ok {
		w.add(ak, head)
	}
	if hint, ok := r.nextHint(ref, hk); ok {
		w.add(hk, hint)
	}
	for _, f := range fps {
		w.add(f.key, f.rec)
	}
	return w, unlock, nil
}

// nextHead is the A-leg head after this request, and whether to write it:
// not when this process already knows a later head of the same A-leg (a
// slower, older request finishing last).
func (r *Resolver) nextHead(ref Ref, ak, headKey, prevKey string, n, turn int) (record, bool) {
	cur, ok := r.cached(ref.Principal, ak)
	if ok && cur.Head != "" && Ordinal(cur.Epoch, cur.Turn) > Ordinal(ref.Epoch, turn) {
		return record{}, false
	}
	parent := ref.ParentALeg
	if ok && parent == "" {
		parent = cur.Parent
	}
	// The sealed client is the same for the same hint on this A-leg (its
	// nonce is a MAC of what it seals): the head's own is taken as it is.
	sealed := ""
	if ok && ref.Client != "" && ref.Hint != "" && cur.ClientHint == ref.Hint && cur.Client != "" {
		sealed = cur.Client
	} else {
		sealed = r.sealClient(ref.Principal, ref.ALeg, ref.Client)
	}
	next := record{ALeg: ref.ALeg, Session: ref.Session, Epoch: ref.Epoch, Norm: n, Turn: turn, Head: headKey, HeadParent: prevKey, Parent: parent,
		ClientHint: ref.Hint, Client: sealed, Agent: ref.Agent, Seen: r.opt.Now().Unix()}
	if ok {
		next.Client, next.Agent = cmp.Or(next.Client, cur.Client), cmp.Or(next.Agent, cur.Agent)
		// The same head again soon after (a client retry) keeps its time,
		// so that it is not written again.
		if again := cur; again.Seen > next.Seen-seenGranularity && again.Seen <= next.Seen {
			again.Seen = next.Seen
			if again.equal(next) {
				next.Seen = cur.Seen
			}
		}
	}
	return next, true
}

// seenGranularity is how stale (in seconds) an A-leg's last activity may be
// shown: a repeated head within it is not written again.
const seenGranularity = 600

// nextHint is the client hint's mapping after this request, and whether it
// changed.
func (r *Resolver) nextHint(ref Ref, hk string) (record, bool) {
	if hk == "" {
		return record{}, false
	}
	want := record{Session: ref.Session, ALeg: ref.ALeg, Window: ref.window}
	if cur, ok := r.cached(ref.Principal, hk); ok {
		if cur.Session == want.Session && cur.ALeg == want.ALeg && cur.Window >= want.Window {
			return record{}, false
		}
		if cur.ALeg == want.ALeg {
			want.Window = max(want.Window, cur.Window)
		}
	}
	return want, true
}

type keyed struct {
	key string
	rec record
}

// fingerprints returns the records that say, for the user turns this
// request added, which A-legs said them, so an out-of-band summarisation
// request quoting them can be attributed. Short texts are skipped; a text
// said in more than a few A-legs is marked as not discriminating.
// fingerRead is a fingerprint record as Resolve read it: found or absent.
type fingerRead struct {
	rec   record
	found bool
}

func (r *Resolver) fingerprints(ctx context.Context, ref Ref, hist []entry) ([]keyed, error) {
	var keys []string
	for i := len(hist) - 1; i >= ref.base && i >= 0 && len(keys) < fingerprintsMax; i-- {
		u := hist[i].user
		if len(u) < minFingerprint || len(u) > maxFingerprint {
			continue
		}
		keys = append(keys, r.key(kindFinger, ref.Principal, u))
	}
	if len(keys) == 0 {
		return nil, nil
	}
	// Records Resolve read with the candidates are not read again.
	got := make(map[string]record, len(keys))
	var missing []string
	for _, k := range keys {
		if f, ok := ref.fingers[k]; ok {
			if f.found {
				got[k] = f.rec
			}
			continue
		}
		missing = append(missing, k)
	}
	if len(missing) > 0 {
		read, err := r.fetch(ctx, ref.Principal, missing)
		if err != nil {
			return nil, err
		}
		maps.Copy(got, read)
	}
	var out []keyed
	for _, k := range keys {
		rec := got[k]
		if slices.Contains(rec.Legs, ref.ALeg) {
			continue
		}
		// A new array: rec shares its Legs with the record the cache
		// holds, which other turns read (and encode) meanwhile.
		rec.Legs = append(slices.Clip(rec.Legs), ref.ALeg)
		if len(rec.Legs) > maxLegsPerFinger {
			rec.Legs = rec.Legs[len(rec.Legs)-maxLegsPerFinger:]
			rec.Crowded = true
		}
		out = append(out, keyed{k, rec})
	}
	return out, nil
}

// RecordSummary records the compaction summary relayed for ref's A-leg:
// digests of its distinctive lines let the next epoch's first turn, which
// quotes the summary, join the A-leg.
func (r *Resolver) RecordSummary(ctx context.Context, ref Ref, summaryText string) error {
	if ref.Principal == "" {
		return wrap("record summary", ErrNoPrincipal)
	}
	if ref.ALeg == "" || ref.Event == EventUnattributed {
		return nil
	}
	lines := summaryLines(summaryText, 1<<10)
	// The longest lines are the most distinctive; keep the summary's order
	// among them for determinism.
	if len(lines) > summaryLinesMax {
		byLen := slices.Clone(lines)
		slices.SortStableFunc(byLen, func(a, b string) int { return len(b) - len(a) })
		keep := map[string]bool{}
		for _, l := range byLen[:summaryLinesMax] {
			keep[l] = true
		}
		lines = slices.DeleteFunc(lines, func(l string) bool { return !keep[l] })
	}
	p := ref.Principal
	ak := r.alegKey(p, ref.ALeg)
	// The head as the store has it: another replica may have moved it.
	l := &lookup{r: r, ctx: ctx, principal: p, got: map[string]record{}}
	if err := l.heads(ref.ALeg); err != nil {
		return wrap("record summary", err)
	}
	unlock := r.heads.lock(ak, "")
	H, ok := l.head(ref.ALeg)
	// Or as this process holds it: the write of a turn committed behind
	// may not have landed yet, and the store then returns the head before
	// it. Marking that older head would move the A-leg back to it, and the
	// next epoch's first turn, repeating that turn's history (the same
	// summary, the same first words), would read as its retry.
	if c, held := r.cached(p, ak); held && c.ALeg == ref.ALeg && (!ok || Ordinal(c.Epoch, c.Turn) > Ordinal(H.Epoch, H.Turn)) {
		H, ok = c, true
	}
	if !ok {
		// The epoch token in the summary resolves through the A-leg head
		// record: make sure one exists even if no turn was committed yet.
		H = record{ALeg: ref.ALeg, Session: ref.Session, Epoch: ref.Epoch, Turn: ref.Turn, Parent: ref.ParentALeg}
	}
	// Mark the head as compacted: the next turn that carries this summary
	// starts a new epoch even if its opening repeats an earlier epoch's.
	H.Compacted = true
	w := r.batch(p)
	for _, line := range lines {
		w.add(r.key(kindSumm, p, line), record{ALeg: ref.ALeg, Session: ref.Session, Epoch: ref.Epoch})
	}
	w.add(ak, H)
	w.hold()
	write, err := r.writeHeld(ctx, "record summary", ak, w)
	unlock()
	if err != nil {
		return err
	}
	return write()
}

// quoted is how out-of-band summarisation requests quote the history, from
// the compaction rule file (quoted_history): the one authority on agents'
// wire markers.
var quoted = func() (q struct{ open, close, speaker, sumOpen, sumClose string }) {
	h := compaction.Default().QuotedHistory()
	if h.TranscriptTag != "" {
		q.open, q.close, q.speaker = "<"+h.TranscriptTag+">", "</"+h.TranscriptTag+">", h.UserSpeaker
	}
	if h.SummaryTag != "" {
		q.sumOpen, q.sumClose = "<"+h.SummaryTag+">", "</"+h.SummaryTag+">"
	}
	return q
}()

// indexTag is strings.Index(text, tag), -1 for no tag ("").
func indexTag(text, tag string) int {
	if tag == "" {
		return -1
	}
	return strings.Index(text, tag)
}

// quotedUserTurns returns the user turns an out-of-band summarisation
// request quotes inside <conversation>…</conversation> as "[User]: …"
// blocks (OpenCode wraps the text in JSON quotes), normalised like Commit
// normalises user messages.
func quotedUserTurns(text string, limit int) []string {
	var out []string
	for {
		i := indexTag(text, quoted.open)
		if i < 0 {
			return out
		}
		text = text[i+len(quoted.open):]
		body := text
		if j := strings.Index(text, quoted.close); j >= 0 {
			body, text = text[:j], text[j:]
		} else {
			text = ""
		}
		var cur strings.Builder
		user := false
		flush := func() {
			if user {
				if u := normUser(cur.String()); u != "" {
					out = append(out, u)
				}
			}
			cur.Reset()
		}
		for line := range strings.SplitSeq(body, "\n") {
			if name, rest, ok := speaker(line); ok {
				flush()
				user = name == quoted.speaker
				cur.WriteString(rest)
				continue
			}
			cur.WriteByte('\n')
			cur.WriteString(line)
		}
		flush()
		if len(out) >= limit {
			return out[:limit]
		}
	}
}

// speaker parses a "[Name]: rest" block header.
func speaker(line string) (name, rest string, ok bool) {
	if !strings.HasPrefix(line, "[") {
		return "", "", false
	}
	end := strings.Index(line, "]:")
	if end < 2 || end > 40 {
		return "", "", false
	}
	name = line[1:end]
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == ' ') {
			return "", "", false
		}
	}
	return name, strings.TrimPrefix(line[end+2:], " "), true
}

// previousSummaries returns the text inside <previous-summary> blocks.
func previousSummaries(text string) string {
	var b strings.Builder
	for {
		i := indexTag(text, quoted.sumOpen)
		if i < 0 {
			return b.String()
		}
		text = text[i+len(quoted.sumOpen):]
		j := strings.Index(text, quoted.sumClose)
		if j < 0 {
			b.WriteString(text)
			return b.String()
		}
		b.WriteString(text[:j])
		b.WriteByte('\n')
		text = text[j:]
	}
}
