package session

import (
	"context"
	"encoding/json"
	"math"
	"strings"

	"github.com/tether-dev/tether/internal/capsule"
	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/store/backend"
)

// record is the value of every lineage key. The JSON names are short on
// purpose (records are small and stored by the million); each kind of key
// uses some of the fields: a head record (kindHead) the position fields, an
// A-leg head (kindALeg) also the head fields, a client hint (kindHint) the
// session, A-leg and window, a fingerprint (kindFinger) the A-leg list, a
// summary line (kindSumm) the A-leg, session and epoch. They hold ids,
// digests and counts only.
type record struct {
	ALeg    string `json:"a,omitempty"`
	Session string `json:"s,omitempty"`
	Epoch   int    `json:"e,omitempty"`
	Norm    int    `json:"n,omitempty"` // normalised messages in the history
	Turn    int    `json:"t,omitempty"` // raw messages in the history (Ref.Turn)

	// A-leg head only.
	Head       string `json:"h,omitempty"` // key of the head request's record
	HeadParent string `json:"b,omitempty"` // key of the head's history without its last message
	Parent     string `json:"p,omitempty"` // parent A-leg
	Compacted  bool   `json:"c,omitempty"` // a compaction summary was relayed after the head's last commit
	ClientHint string `json:"k,omitempty"` // the client hint of the request that moved the head

	Window int `json:"w,omitempty"` // client hint: Codex window number + 1

	// Fingerprint only.
	Legs    []string `json:"l,omitempty"` // A-legs whose user turn this is
	Crowded bool     `json:"x,omitempty"` // shared by too many A-legs to discriminate
}

func (r *Resolver) cached(principal, key string) (record, bool) {
	return r.cache.get(principal + "\x00" + key)
}

func (r *Resolver) remember(principal, key string, rec record) {
	r.cache.put(principal+"\x00"+key, rec, false)
}

// fetch reads keys from the store in one round trip, decodes and caches the
// records found. Undecodable records are treated as absent.
func (r *Resolver) fetch(ctx context.Context, principal string, keys []string) (map[string]record, error) {
	out := make(map[string]record, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	seen := make(map[string]bool, len(keys))
	uniq := keys[:0:0]
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			uniq = append(uniq, k)
		}
	}
	raw, err := r.st.GetLineage(ctx, principal, uniq)
	if err != nil {
		return nil, err
	}
	for k, b := range raw {
		var rec record
		if json.Unmarshal(b, &rec) != nil {
			continue
		}
		out[k] = rec
		r.remember(principal, k, rec)
	}
	return out, nil
}

func (r *Resolver) put(ctx context.Context, principal, key string, rec record) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if err := r.st.PutLineage(ctx, principal, key, b, r.opt.Now().Add(r.opt.TTL)); err != nil {
		return err
	}
	r.cache.put(principal+"\x00"+key, rec, true)
	return nil
}

// batchPutter is a store that writes several lineage records in one
// transaction (every backend does; test stores may not).
type batchPutter interface {
	PutLineages(ctx context.Context, principal string, puts []backend.LineagePut) error
}

// writes collects the lineage records of one principal to store together.
type writes struct {
	r         *Resolver
	principal string
	keys      []string
	recs      []record
}

func (r *Resolver) batch(principal string) *writes { return &writes{r: r, principal: principal} }

// add queues rec under key unless this process stored the same value there
// within the last half of the records' lifetime.
func (w *writes) add(key string, rec record) {
	r := w.r
	if r.cache.stored(w.principal+"\x00"+key, rec, r.opt.Now().Add(-r.opt.TTL/2)) {
		return
	}
	w.keys, w.recs = append(w.keys, key), append(w.recs, rec)
}

// flush stores the queued records in one round trip and caches them.
func (w *writes) flush(ctx context.Context) error {
	r := w.r
	if len(w.keys) == 0 {
		return nil
	}
	bp, ok := r.st.(batchPutter)
	if !ok || len(w.keys) == 1 {
		for i, k := range w.keys {
			if err := r.put(ctx, w.principal, k, w.recs[i]); err != nil {
				return err
			}
		}
		return nil
	}
	exp := r.opt.Now().Add(r.opt.TTL)
	puts := make([]backend.LineagePut, len(w.keys))
	for i, k := range w.keys {
		b, err := json.Marshal(w.recs[i])
		if err != nil {
			return err
		}
		puts[i] = backend.LineagePut{Key: k, Value: b, Expires: exp}
	}
	if err := bp.PutLineages(ctx, w.principal, puts); err != nil {
		return err
	}
	for i, k := range w.keys {
		r.cache.put(w.principal+"\x00"+k, w.recs[i], true)
	}
	return nil
}

// Resolve finds the lineage of the request v sent by principal. It reads
// the store (one round trip for the candidates, a second one only when an
// A-leg head it needs is not known yet) and writes nothing: Commit records
// the request once the upstream answered.
func (r *Resolver) Resolve(ctx context.Context, principal string, v *dialect.View, h Hints) (Ref, error) {
	if err := checkArgs(principal, v); err != nil {
		return Ref{}, wrap("resolve", err)
	}
	msgs := v.Messages()
	ch := hintOf(v)
	ref := Ref{Principal: principal, Turn: len(msgs), compaction: h.Compaction && !h.OutOfBand, window: ch.window}
	hintKey := ""
	if ch.value != "" {
		hintKey = r.key(kindHint, principal, ch.value)
		ref.Hint = hintKey[len(kindHint)+1:]
	}
	var (
		res Ref
		err error
	)
	if h.OutOfBand {
		res, err = r.resolveOutOfBand(ctx, ref, msgs, hintKey)
	} else {
		hist := history(msgs)
		res, err = r.resolveTurn(ctx, ref, msgs, hist, h, ch, hintKey)
		res.hist = hist
	}
	if err != nil {
		return Ref{}, wrap("resolve", err)
	}
	res.Ordinal = Ordinal(res.Epoch, res.Turn)
	return res, nil
}

// lookup is the state of one resolution: the records known so far.
type lookup struct {
	r         *Resolver
	ctx       context.Context
	principal string
	got       map[string]record
}

func (l *lookup) rec(key string) (record, bool) {
	if rec, ok := l.got[key]; ok {
		return rec, true
	}
	return l.r.cached(l.principal, key)
}

// heads makes sure the A-leg head records of aLegs are known, fetching the
// ones this resolution has not read yet in one round trip.
func (l *lookup) heads(aLegs ...string) error {
	var miss []string
	for _, a := range aLegs {
		if a == "" {
			continue
		}
		k := l.r.alegKey(l.principal, a)
		if _, ok := l.got[k]; ok {
			continue
		}
		// Heads move: a cached one may be older than the store's when
		// another replica served the A-leg's last turns. Read it.
		miss = append(miss, k)
	}
	got, err := l.r.fetch(l.ctx, l.principal, miss)
	if err != nil {
		return err
	}
	for k, rec := range got {
		l.got[k] = rec
	}
	return nil
}

func (l *lookup) head(aLeg string) (record, bool) {
	if aLeg == "" {
		return record{}, false
	}
	rec, ok := l.got[l.r.alegKey(l.principal, aLeg)]
	return rec, ok && rec.ALeg == aLeg
}

func (r *Resolver) resolveTurn(ctx context.Context, ref Ref, msgs []dialect.Message, hist []entry, h Hints, ch clientHint, hintKey string) (Ref, error) {
	p := ref.Principal
	headKeys := make([]string, len(hist))
	for i := range hist {
		headKeys[i] = r.key(kindHead, p, string(hist[i].chain[:]))
	}
	l := &lookup{r: r, ctx: ctx, principal: p, got: map[string]record{}}

	// The longest prefix already cached; only longer prefixes can change
	// the answer, so only those go to the store.
	best := -1
	for i := len(hist) - 1; i >= 0; i-- {
		if _, ok := r.cached(p, headKeys[i]); ok {
			best = i
			break
		}
	}
	query := append([]string(nil), headKeys[best+1:]...)
	hot, hotKey := false, ""
	if best >= 0 {
		rec, _ := r.cached(p, headKeys[best])
		hotKey = r.alegKey(p, rec.ALeg)
		query = append(query, hotKey)
		if hr, ok := r.cached(p, hotKey); ok && hr.Head == headKeys[best] {
			hot = true // extends a known head: no epoch evidence needed
		}
	}
	if hintKey != "" {
		query = append(query, hintKey)
		// The hint's A-leg head is read too (as the store has it now), so
		// a reset or a hinted epoch needs no second round trip.
		if hr, ok := r.cached(p, hintKey); ok && hr.ALeg != "" {
			query = append(query, r.alegKey(p, hr.ALeg))
		}
	}
	tok, tokPos := "", -1
	var lines []lineKey
	evidence := func() []string {
		var keys []string
		tok, tokPos = tokenIn(msgs, hist)
		if tok != "" {
			keys = append(keys, kindALeg+":"+tok)
		}
		lines = r.scanLines(p, msgs, hist)
		for _, lk := range lines {
			keys = append(keys, lk.key)
		}
		return keys
	}
	if !hot {
		query = append(query, evidence()...)
	}
	got, err := r.fetch(ctx, p, query)
	if err != nil {
		return Ref{}, err
	}
	l.got = got
	if hr, ok := got[hotKey]; hot && (!ok || hr.Head != headKeys[best]) {
		// The cached head was stale: another replica (or a purge) moved
		// the A-leg since this process last saw it. Gather the epoch
		// evidence the hot path skipped, as a cold resolution would.
		more, err := r.fetch(ctx, p, evidence())
		if err != nil {
			return Ref{}, err
		}
		for k, rec := range more {
			l.got[k] = rec
		}
	}

	hintRec, hintOK := record{}, false
	if hintKey != "" {
		hintRec, hintOK = l.rec(hintKey)
	}
	// Longest matching prefix; a mapped hint confines matches to its session.
	m, mrec := -1, record{}
	for i := len(hist) - 1; i >= 0; i-- {
		rec, ok := l.rec(headKeys[i])
		if !ok || rec.ALeg == "" || (hintOK && rec.Session != hintRec.Session) {
			continue
		}
		m, mrec = i, rec
		break
	}

	// Epoch evidence, strongest first.
	evLeg, evEpoch, evPos := "", -1, math.MaxInt
	if tok != "" {
		if rec, ok := l.got[kindALeg+":"+tok]; ok && rec.ALeg != "" {
			evLeg, evEpoch, evPos = rec.ALeg, rec.Epoch, tokPos
		}
	}
	if evLeg == "" && len(lines) > 0 {
		evLeg, evEpoch, evPos = summaryEvidence(l, lines)
	}
	hintEvidence := false
	if evLeg == "" && hintOK && hintRec.ALeg != "" && (h.PostCompaction || (ch.window > 0 && hintRec.Window > 0 && ch.window > hintRec.Window)) {
		evLeg, hintEvidence = hintRec.ALeg, true
	}
	var need []string
	if m >= 0 {
		need = append(need, mrec.ALeg)
	}
	need = append(need, evLeg)
	if hintOK {
		need = append(need, hintRec.ALeg)
	}
	if err := l.heads(need...); err != nil {
		return Ref{}, err
	}

	chainN := ""
	if len(hist) > 0 {
		chainN = string(hist[len(hist)-1].chain[:])
	}
	// 1. Continuation of a known head — unless another client session
	// picks up the branch's history (Claude Code --fork-session, a copied
	// Codex thread): that is a fork, or the two would share one state.
	if m >= 0 {
		H, ok := l.head(mrec.ALeg)
		if !ok || H.Head == headKeys[m] {
			if ok && ref.Hint != "" && H.ClientHint != "" && H.ClientHint != ref.Hint && !ref.compaction && !(hintOK && hintRec.ALeg == mrec.ALeg) {
				return r.forkRef(ref, mrec, chainN), nil
			}
			return continueRef(ref, mrec, H, ok, m), nil
		}
	}
	// 2. First turn of a new epoch.
	if evLeg != "" {
		if H, ok := l.head(evLeg); ok && (!hintOK || H.Session == hintRec.Session) {
			if hintEvidence {
				evEpoch = H.Epoch
				if ch.window > 0 && hintRec.Window > 0 && ch.window > hintRec.Window {
					evPos = math.MaxInt
				} else if H.Epoch > 0 {
					evPos = -1 // marker seen before: only new if nothing of this epoch matches
				}
			}
			// The branch was compacted (H.C) and this turn, under the
			// branch's own client hint, carries the agent's post-compaction
			// marker, but its summary repeats an older epoch's text word for
			// word: it opens the next epoch all the same.
			if H.Compacted && h.PostCompaction && hintOK && hintRec.ALeg == evLeg && evEpoch < H.Epoch {
				evEpoch, evPos = H.Epoch, math.MaxInt
			}
			// A match inside the current epoch means no new epoch began —
			// unless a compaction summary was relayed since the head: then
			// a history that repeats this epoch's opening (the same summary
			// and the same first words) is the next epoch, not a fork.
			within := m >= 0 && mrec.ALeg == evLeg && mrec.Epoch == H.Epoch && m >= evPos && !H.Compacted
			if evEpoch >= H.Epoch && !within {
				ref.Session, ref.ALeg, ref.Epoch, ref.Event = H.Session, evLeg, max(H.Epoch, evEpoch)+1, EventEpoch
				return ref, nil
			}
		}
	}
	// An in-band compaction edits the last message of the live history: it
	// belongs to the branch whose head it repeats up to that message.
	if ref.compaction && len(hist) >= 2 {
		for _, a := range []string{mrec.ALeg, hintRec.ALeg} {
			if H, ok := l.head(a); ok && H.HeadParent == headKeys[len(hist)-2] && (!hintOK || H.Session == hintRec.Session) {
				ref.Session, ref.ALeg, ref.Epoch, ref.Event, ref.base = H.Session, a, H.Epoch, EventContinue, len(hist)-1
				return ref, nil
			}
		}
	}
	// 3. Divergence from a known branch.
	if m >= 0 {
		H, _ := l.head(mrec.ALeg)
		if ref.compaction {
			return continueRef(ref, mrec, H, true, m), nil
		}
		return r.forkRef(ref, mrec, chainN), nil
	}
	// 4. Nothing known. A short request that quotes a known branch's
	// conversation (<conversation> transcript, the branch's epoch token) is
	// a side request about that branch — a summarisation request no rule
	// recognised — not a new conversation: attribute it, move nothing, so it
	// neither resets the branch nor takes its client hint.
	if len(hist) <= 2 && quotesConversation(msgs) {
		oob, err := r.resolveOutOfBand(ctx, ref, msgs, hintKey)
		if err != nil {
			return Ref{}, err
		}
		if oob.Event == EventOutOfBand && (!hintOK || oob.ALeg == hintRec.ALeg) {
			oob.Side = true
			return oob, nil
		}
	}
	// Reset under a known hint, else a new session.
	if hintOK && hintRec.Session != "" {
		ref.Session, ref.Event = hintRec.Session, EventReset
		ref.ALeg = "a_" + r.mac("reset", ref.Principal, hintRec.Session, chainN)
		return ref, nil
	}
	if ch.value != "" {
		ref.Session = "s_" + r.mac("session-hint", ref.Principal, ch.value)
	} else {
		ref.Session = "s_" + r.mac("session", ref.Principal, chainN)
	}
	ref.ALeg = "a_" + r.mac("new", ref.Principal, ref.Session, chainN)
	ref.Event = EventNew
	return ref, nil
}

// quotesConversation reports whether a user message carries what
// resolveOutOfBand can attribute by: a <conversation> transcript or a
// capsule block (its epoch token). The first turn of an ordinary new
// conversation has neither and costs no extra store lookup.
func quotesConversation(msgs []dialect.Message) bool {
	for i := range msgs {
		if msgs[i].Role == "user" && (strings.Contains(msgs[i].Text, "<conversation>") || capsule.Contains(msgs[i].Text)) {
			return true
		}
	}
	return false
}

// forkRef starts a branch of mrec's A-leg at mrec, named by the history's
// last chain digest.
func (r *Resolver) forkRef(ref Ref, mrec record, chainN string) Ref {
	ref.Session, ref.Epoch, ref.Event = mrec.Session, mrec.Epoch, EventFork
	ref.ParentALeg, ref.ForkOrdinal = mrec.ALeg, Ordinal(mrec.Epoch, mrec.Turn)
	ref.ALeg = "a_" + r.mac("fork", ref.Principal, mrec.ALeg, chainN)
	return ref
}

func continueRef(ref Ref, mrec, H record, headOK bool, m int) Ref {
	ref.Session, ref.ALeg, ref.Epoch, ref.Event = mrec.Session, mrec.ALeg, mrec.Epoch, EventContinue
	if headOK && ref.compaction && H.Epoch > ref.Epoch {
		ref.Epoch = H.Epoch // compaction of an older point: count it in the current epoch
	}
	ref.base = m + 1
	return ref
}

// tokenIn returns the last epoch token carried by a non-system message and
// the normalised position of that message.
func tokenIn(msgs []dialect.Message, hist []entry) (string, int) {
	tok, pos := "", -1
	for i, e := range hist {
		if !e.texted {
			continue
		}
		if t := capsule.Ref(msgs[rawPos(msgs, e.raw)].Text); t != "" {
			tok, pos = t, i
		}
	}
	return tok, pos
}

// rawPos maps a dialect index back to the slice position (they are equal
// for every dialect; this guards against a future difference).
func rawPos(msgs []dialect.Message, idx int) int {
	if idx >= 0 && idx < len(msgs) && msgs[idx].Index == idx {
		return idx
	}
	for i := range msgs {
		if msgs[i].Index == idx {
			return i
		}
	}
	return 0
}

type lineKey struct {
	key string
	pos int // normalised message position
}

// scanLines returns the summary-line keys of the first messages of the
// history, where post-compaction summaries sit.
func (r *Resolver) scanLines(principal string, msgs []dialect.Message, hist []entry) []lineKey {
	var out []lineKey
	for i, e := range hist {
		if i == scanMessages || len(out) >= scanLinesMax {
			break
		}
		if !e.texted || (e.role != "user" && e.role != "assistant") {
			continue
		}
		for _, line := range summaryLines(msgs[rawPos(msgs, e.raw)].Text, scanLinesPerMsg) {
			out = append(out, lineKey{key: r.key(kindSumm, principal, line), pos: i})
			if len(out) >= scanLinesMax {
				break
			}
		}
	}
	return out
}

// summaryEvidence picks the A-leg most of the found summary lines point to
// (none on a tie), its newest recorded epoch, and the last position where
// one of its lines appears.
func summaryEvidence(l *lookup, lines []lineKey) (string, int, int) {
	count := map[string]int{}
	epoch := map[string]int{}
	pos := map[string]int{}
	for _, lk := range lines {
		rec, ok := l.got[lk.key]
		if !ok || rec.ALeg == "" {
			continue
		}
		count[rec.ALeg]++
		epoch[rec.ALeg] = max(epoch[rec.ALeg], rec.Epoch)
		pos[rec.ALeg] = max(pos[rec.ALeg], lk.pos)
	}
	best, n, tie := "", 0, false
	for a, c := range count {
		switch {
		case c > n:
			best, n, tie = a, c, false
		case c == n:
			tie = true
		}
	}
	if best == "" || tie {
		return "", -1, math.MaxInt
	}
	return best, epoch[best], pos[best]
}
