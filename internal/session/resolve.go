package session

import (
	"context"
	"encoding/json"
	"math"
	"slices"

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
	Head       string `json:"h,omitempty"`  // key of the head request's record
	HeadParent string `json:"b,omitempty"`  // key of the head's history without its last message
	Parent     string `json:"p,omitempty"`  // parent A-leg
	Compacted  bool   `json:"c,omitempty"`  // a compaction summary was relayed after the head's last commit
	ClientHint string `json:"k,omitempty"`  // the client hint of the request that moved the head
	Client     string `json:"cs,omitempty"` // the client's own session id (Ref.Client), sealed (sealClient)
	Agent      string `json:"ag,omitempty"` // the coding agent (Ref.Agent)
	Seen       int64  `json:"at,omitempty"` // unix seconds of the commit that moved the head

	Window int `json:"w,omitempty"` // client hint: Codex window number + 1

	// Fingerprint only.
	Legs    []string `json:"l,omitempty"` // A-legs whose user turn this is
	Crowded bool     `json:"x,omitempty"` // shared by too many A-legs to discriminate
}

// equal reports whether two records hold the same values. It compares
// field by field (a record is compared on every cached lookup and write,
// and reflect.DeepEqual boxed both); TestRecordEqualSeesEveryField fails
// when a field is added here without being compared.
func (a record) equal(b record) bool {
	return a.ALeg == b.ALeg && a.Session == b.Session && a.Epoch == b.Epoch && a.Norm == b.Norm && a.Turn == b.Turn &&
		a.Head == b.Head && a.HeadParent == b.HeadParent && a.Parent == b.Parent && a.Compacted == b.Compacted &&
		a.ClientHint == b.ClientHint && a.Client == b.Client && a.Agent == b.Agent && a.Seen == b.Seen &&
		a.Window == b.Window && slices.Equal(a.Legs, b.Legs) && (a.Legs == nil) == (b.Legs == nil) && a.Crowded == b.Crowded
}

func (r *Resolver) cached(principal, key string) (record, bool) {
	// The joined key is only looked up: laid out on the stack (a turn
	// makes a dozen lookups, and joining the two strings allocated each).
	var buf [128]byte
	return r.cache.get(append(append(append(buf[:0], principal...), 0), key...))
}

func (r *Resolver) remember(principal, key string, rec record, since uint64) {
	r.cache.read(principal+"\x00"+key, rec, since)
}

// allCached returns the records of keys from the cache alone, when this
// process is the store's only writer (Options.Exclusive) and every key is
// cached: then the store could tell nothing the cache does not (a key it
// lacks is never cached) or is known to lack (IndexKeys): a request that
// changes nothing (a client's retry) costs no round trip, nor does one
// that only extends a known head. With a shared store the A-leg head
// is always read, since another replica may have moved it. cached looks a
// key up in the cache (the resolution's peek).
func (r *Resolver) allCached(principal string, keys []string, cached func(key string) (record, bool)) (map[string]record, bool) {
	if !r.opt.Exclusive {
		return nil, false
	}
	got := make(map[string]record, len(keys))
	for _, k := range keys {
		rec, ok := cached(k)
		if ok {
			got[k] = rec
			continue
		}
		if !r.known.absent(principal, k) {
			return nil, false
		}
	}
	return got, true
}

// fetch reads keys from the store in one round trip, decodes and caches the
// records found. Undecodable records are treated as absent.
func (r *Resolver) fetch(ctx context.Context, principal string, keys []string) (map[string]record, error) {
	return r.fetchWith(ctx, principal, keys, "", nil)
}

// fetchWith is fetch that also reads the capsule of aLeg into pre, in the
// same round trip, when the store can (backend.CapsulePrefetcher) and
// aLeg is not "". Without lineage to read it reads nothing.
func (r *Resolver) fetchWith(ctx context.Context, principal string, keys []string, aLeg string, pre *prefetched) (map[string]record, error) {
	out := make(map[string]record, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	seen := make(map[string]bool, len(keys))
	uniq := keys[:0:0]
	for _, k := range keys {
		if !seen[k] && !r.known.absent(principal, k) {
			seen[k] = true
			uniq = append(uniq, k)
		}
	}
	if len(uniq) == 0 {
		return out, nil
	}
	var raw map[string][]byte
	var err error
	since := r.cache.mark()
	if pf, ok := r.st.(backend.CapsulePrefetcher); ok && aLeg != "" && pre != nil {
		var c backend.CapsuleRecord
		var found bool
		if raw, c, found, err = pf.GetLineageWithCapsule(ctx, principal, uniq, aLeg); err == nil {
			*pre = prefetched{aLeg: aLeg, rec: c, found: found, read: true}
		}
	} else {
		raw, err = r.st.GetLineage(ctx, principal, uniq)
	}
	if err != nil {
		return nil, err
	}
	for k, b := range raw {
		var rec record
		if json.Unmarshal(b, &rec) != nil {
			continue
		}
		out[k] = rec
		r.remember(principal, k, rec, since)
	}
	// A record whose write this process holds (CommitBehind) is newer than
	// what the store returned, or returned nothing for: the store has not
	// got it yet. So is one whose write ended while the read ran: the read
	// may have looked before the write landed.
	for _, k := range uniq {
		if rec, ok := r.cache.newer(principal+"\x00"+k, since); ok {
			out[k] = rec
		}
	}
	return out, nil
}

func (r *Resolver) put(ctx context.Context, principal, key string, rec record) error {
	if err := r.store(ctx, principal, key, rec); err != nil {
		return err
	}
	r.cache.put(principal+"\x00"+key, rec, true)
	return nil
}

// store writes one record, leaving the cache alone.
func (r *Resolver) store(ctx context.Context, principal, key string, rec record) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	r.mayHold(principal, key)
	return r.st.PutLineage(ctx, principal, key, b, r.opt.Now().Add(r.opt.TTL))
}

// mayHold notes, before it is written, that the store may hold key.
func (r *Resolver) mayHold(principal, key string) {
	if r.known != nil {
		r.known.add(principal, key)
	}
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
	held      bool // cached by hold: flush leaves the cache to release
}

func (r *Resolver) batch(principal string) *writes {
	// A turn writes up to four records: its head, the A-leg's, the hint's
	// and a fingerprint; more grow the slices.
	return &writes{r: r, principal: principal, keys: make([]string, 0, 4), recs: make([]record, 0, 4)}
}

// add queues rec under key unless this process stored the same value there
// within the last half of the records' lifetime.
func (w *writes) add(key string, rec record) {
	r := w.r
	if r.cache.stored(w.principal+"\x00"+key, rec, r.opt.Now().Add(-r.opt.TTL/2)) {
		return
	}
	w.keys, w.recs = append(w.keys, key), append(w.recs, rec)
}

// hold caches the queued records before flush writes them (CommitBehind),
// so that a next turn arriving meanwhile finds them, and what a read of
// the store brings back in the meantime (older) does not replace them
// until release.
func (w *writes) hold() {
	w.held = true
	for i, k := range w.keys {
		w.r.mayHold(w.principal, k)
		w.r.cache.hold(w.principal+"\x00"+k, w.recs[i])
	}
}

// release ends hold: the write ended, stored or not (err).
func (w *writes) release(err error) {
	for i, k := range w.keys {
		w.r.cache.release(w.principal+"\x00"+k, w.recs[i], err == nil)
	}
}

// puts encodes the queued records for the store, noting first that it may
// hold them.
func (w *writes) puts() ([]backend.LineagePut, error) {
	exp := w.r.opt.Now().Add(w.r.opt.TTL)
	puts := make([]backend.LineagePut, len(w.keys))
	for i, k := range w.keys {
		b, err := json.Marshal(w.recs[i])
		if err != nil {
			return nil, err
		}
		puts[i] = backend.LineagePut{Key: k, Value: b, Expires: exp}
		w.r.mayHold(w.principal, k)
	}
	return puts, nil
}

// flush stores the queued records in one round trip and caches them
// (held ones are cached already: release ends their hold).
func (w *writes) flush(ctx context.Context) error {
	r := w.r
	if len(w.keys) == 0 {
		return nil
	}
	bp, ok := r.st.(batchPutter)
	if !ok || len(w.keys) == 1 {
		put := r.put
		if w.held {
			put = r.store
		}
		for i, k := range w.keys {
			if err := put(ctx, w.principal, k, w.recs[i]); err != nil {
				return err
			}
		}
		return nil
	}
	puts, err := w.puts()
	if err != nil {
		return err
	}
	if err := bp.PutLineages(ctx, w.principal, puts); err != nil {
		return err
	}
	if !w.held {
		for i, k := range w.keys {
			r.cache.put(w.principal+"\x00"+k, w.recs[i], true)
		}
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
		hintKey = r.hintKey(principal, ch.value)
		ref.Hint = hintKey[len(kindHint)+1:]
	}
	var (
		res Ref
		err error
	)
	if h.OutOfBand {
		res, err = r.resolveOutOfBand(ctx, ref, msgs, hintKey)
	} else {
		hist := history(msgs, v.ItemKeys(), v.PrefixIDs())
		res, err = r.resolveTurn(ctx, ref, msgs, hist, h, ch, hintKey)
		res.hist = hist
	}
	if err != nil {
		return Ref{}, wrap("resolve", err)
	}
	res.Ordinal = Ordinal(res.Epoch, res.Turn)
	res.Client, res.Agent = ch.value, agentOf(h.Agent, ch.value)
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

// turnFacts is what the resolution of one turn knows: the request's
// history and hints, and the lineage records read for it.
type turnFacts struct {
	r        *Resolver
	ref      Ref
	msgs     []dialect.Message
	hist     []entry
	hints    Hints
	client   clientHint
	hintKey  string
	headKeys madeKeys  // head-record keys of prefixes of hist, once made (headKey)
	peeked   [8]peeked // the cache lookups made (peek)
	npeeked  int
	last     string // chain digest of the whole history ("" when empty)
	look     *lookup
	fingers  map[string]fingerRead // fingerprint records read with the candidates, for Commit
	capsule  prefetched            // the capsule read with the candidates, for the caller

	hint   record // the client hint's mapping
	hinted bool   // the client hint is mapped

	match   int    // longest prefix with a head record in the hint's session, -1 if none
	matched record // that head record

	evidence epochEvidence
}

// headKey is the head-record key of the prefix of hist ending at i.
// Head keys (an HMAC each) are made on demand and once: a turn that
// extends a known head needs those of its newest prefixes only.
func (t *turnFacts) headKey(i int) string {
	if k, ok := t.headKeys.get(i); ok {
		return k
	}
	k := t.r.key(kindHead, t.ref.Principal, string(t.hist[i].chain[:]))
	t.headKeys.put(i, k)
	return k
}

// peek is the cache's record of key as this resolution first saw it: the
// lookups for the newest prefixes, the head and the hint are made before
// the candidates are gathered (allCached), which asked again.
func (t *turnFacts) peek(key string) (record, bool) {
	for i := range t.npeeked {
		if p := &t.peeked[i]; p.key == key {
			return p.rec, p.ok
		}
	}
	rec, ok := t.r.cached(t.ref.Principal, key)
	if t.npeeked < len(t.peeked) {
		t.peeked[t.npeeked] = peeked{key, rec, ok}
		t.npeeked++
	}
	return rec, ok
}

// peeked is one cache lookup of a resolution.
type peeked struct {
	key string
	rec record
	ok  bool
}

// madeKeys maps prefix indexes to the keys made for them: the first few
// inline (all a turn extending a known head makes), the rest in a map.
type madeKeys struct {
	idx  [6]int
	key  [6]string
	n    int
	more map[int]string
}

func (m *madeKeys) get(i int) (string, bool) {
	for j := range m.n {
		if m.idx[j] == i {
			return m.key[j], true
		}
	}
	k, ok := m.more[i]
	return k, ok
}

func (m *madeKeys) put(i int, k string) {
	if m.n < len(m.idx) {
		m.idx[m.n], m.key[m.n] = i, k
		m.n++
		return
	}
	if m.more == nil {
		m.more = make(map[int]string)
	}
	m.more[i] = k
}

// epochEvidence names the A-leg a history says it continues after a
// compaction: its epoch token, the summary lines it quotes, or (weakest)
// its client hint with the agent's post-compaction marker or a newer Codex
// window.
type epochEvidence struct {
	aLeg     string // "" when there is none
	epoch    int    // the epoch the evidence was recorded in
	pos      int    // normalised position of the newest evidence
	fromHint bool
}

// resolveTurn resolves a request that is not out of band: its history
// either continues a known head, opens a new epoch of a compacted A-leg,
// is an in-band compaction of a head, diverges from a known branch, quotes
// a branch as a side request, or is new (a reset under a known hint, or a
// new session). The cases are tried in that order.
func (r *Resolver) resolveTurn(ctx context.Context, ref Ref, msgs []dialect.Message, hist []entry, h Hints, ch clientHint, hintKey string) (res Ref, err error) {
	t := &turnFacts{ref: ref, msgs: msgs, hist: hist, hints: h, client: ch, hintKey: hintKey}
	if err := r.gather(ctx, t); err != nil {
		return Ref{}, err
	}
	defer func() {
		res.fingers, res.capsule = t.fingers, t.capsule
		// The keys Commit writes under, when the resolution made them.
		if n := len(hist); n > 0 {
			res.heads[0], _ = t.headKeys.get(n - 1)
			if n > 1 {
				res.heads[1], _ = t.headKeys.get(n - 2)
			}
		}
	}()
	if t.repeatsCompactedHead() {
		// Not the head's turn again: the next epoch opening with the
		// same summary and the same first words.
		if res, ok := t.newEpoch(); ok {
			return res, nil
		}
	}
	if res, ok := r.continuation(t); ok {
		return res, nil
	}
	if res, ok := t.newEpoch(); ok {
		return res, nil
	}
	if res, ok := t.compactionOfHead(); ok {
		return res, nil
	}
	if res, ok := r.divergence(t); ok {
		return res, nil
	}
	res, ok, err := r.sideRequest(ctx, t)
	if err != nil {
		return Ref{}, err
	}
	if ok {
		return res, nil
	}
	return r.fresh(t), nil
}

// capsuleWanted is the A-leg whose capsule the caller will likely read
// after this turn resolves, "" for none: the one the longest cached prefix
// (best, its head record rec) names, when it is past a compaction (every
// turn then carries the capsule) or the request adds a user message after
// it (the extraction gate reads the capsule).
func capsuleWanted(best int, hist []entry, rec record) string {
	if best < 0 || rec.ALeg == "" {
		return ""
	}
	if rec.Epoch > 0 {
		return rec.ALeg
	}
	for _, e := range hist[best+1:] {
		if e.user != "" {
			return rec.ALeg
		}
	}
	return ""
}

// gather reads what the cases need in one store round trip (a second one
// only for A-leg heads not read yet, or when a cached head proved stale).
func (r *Resolver) gather(ctx context.Context, t *turnFacts) error {
	p, hist := t.ref.Principal, t.hist
	t.r = r
	if len(hist) > 0 {
		t.last = string(hist[len(hist)-1].chain[:])
	}
	t.look = &lookup{r: r, ctx: ctx, principal: p, got: map[string]record{}}

	// The longest prefix already cached; only longer prefixes can change
	// the answer, so only those go to the store.
	best := -1
	for i := len(hist) - 1; i >= 0; i-- {
		if _, ok := t.peek(t.headKey(i)); ok {
			best = i
			break
		}
	}
	query := make([]string, 0, len(hist)-best+4)
	for i := best + 1; i < len(hist); i++ {
		query = append(query, t.headKey(i))
	}
	hot, hotKey, hotRec := false, "", record{}
	if best >= 0 {
		rec, _ := t.peek(t.headKey(best))
		hotKey, hotRec = r.alegKey(p, rec.ALeg), rec
		query = append(query, hotKey)
		if hr, ok := t.peek(hotKey); ok && hr.Head == t.headKey(best) {
			hot = true // extends a known head: no epoch evidence needed
		}
	}
	if t.hintKey != "" {
		query = append(query, t.hintKey)
		// The hint's A-leg head is read too (as the store has it now), so
		// a reset or a hinted epoch needs no second round trip.
		if hr, ok := t.peek(t.hintKey); ok && hr.ALeg != "" {
			query = append(query, r.alegKey(p, hr.ALeg))
		}
	}
	tok, tokPos := "", -1
	var lines []lineKey
	evidence := func() []string {
		var keys []string
		tok, tokPos = tokenIn(t.msgs, hist)
		if tok != "" {
			keys = append(keys, kindALeg+":"+tok)
		}
		lines = r.scanLines(p, t.msgs, hist)
		for _, lk := range lines {
			keys = append(keys, lk.key)
		}
		return keys
	}
	if !hot {
		query = append(query, evidence()...)
	}
	// The fingerprint records of the user's new messages are read in the
	// same round trip: Commit updates them, and would otherwise read them
	// on its own.
	var fkeys []string
	for i := len(hist) - 1; i > best && len(fkeys) < fingerprintsMax; i-- {
		if u := hist[i].user; len(u) >= minFingerprint && len(u) <= maxFingerprint {
			fkeys = append(fkeys, r.key(kindFinger, p, u))
		}
	}
	query = append(query, fkeys...)
	got, ok := r.allCached(p, query, t.peek)
	if !ok {
		var err error
		if got, err = r.fetchWith(ctx, p, query, capsuleWanted(best, hist, hotRec), &t.capsule); err != nil {
			return err
		}
	}
	if len(fkeys) > 0 {
		t.fingers = make(map[string]fingerRead, len(fkeys))
		for _, k := range fkeys {
			rec, ok := got[k]
			t.fingers[k] = fingerRead{rec, ok}
		}
	}
	t.look.got = got
	fresh, freshOK := got[hotKey]
	stale := hot && (!freshOK || fresh.Head != t.headKey(best))

	if t.hintKey != "" {
		t.hint, t.hinted = t.look.rec(t.hintKey)
	}
	// Longest matching prefix; a mapped hint confines matches to its session.
	t.match = -1
	for i := len(hist) - 1; i >= 0; i-- {
		rec, ok := t.look.rec(t.headKey(i))
		if !ok || rec.ALeg == "" || (t.hinted && rec.Session != t.hint.Session) {
			continue
		}
		t.match, t.matched = i, rec
		break
	}
	if stale && !(freshOK && t.match >= 0 && t.matched.ALeg == fresh.ALeg && fresh.Head == t.headKey(t.match)) {
		// The cached head was stale: another replica (or a purge) moved
		// the A-leg since this process last saw it, and the request does
		// not simply extend the head the store has now. Gather the epoch
		// evidence the hot path skipped, as a cold resolution would.
		more, err := r.fetch(ctx, p, evidence())
		if err != nil {
			return err
		}
		for k, rec := range more {
			t.look.got[k] = rec
		}
	}

	// Epoch evidence, strongest first.
	ev := epochEvidence{epoch: -1, pos: math.MaxInt}
	if tok != "" {
		if rec, ok := t.look.got[kindALeg+":"+tok]; ok && rec.ALeg != "" {
			ev = epochEvidence{aLeg: rec.ALeg, epoch: rec.Epoch, pos: tokPos}
		}
	}
	if ev.aLeg == "" && len(lines) > 0 {
		ev.aLeg, ev.epoch, ev.pos = summaryEvidence(t.look, lines)
	}
	if ev.aLeg == "" && t.hinted && t.hint.ALeg != "" && (t.hints.PostCompaction || t.newerWindow()) {
		ev.aLeg, ev.fromHint = t.hint.ALeg, true
	}
	t.evidence = ev

	var need []string
	if t.match >= 0 {
		need = append(need, t.matched.ALeg)
	}
	need = append(need, ev.aLeg)
	if t.hinted {
		need = append(need, t.hint.ALeg)
	}
	if err := t.look.heads(need...); err != nil {
		return err
	}
	t.preferHintedHead()
	t.preferHintedEvidence()
	return nil
}

// preferHintedEvidence makes the client hint's own A-leg the epoch
// evidence when the summary the request carries names another session's
// A-leg while its own A-leg was compacted: summary records are shared by
// the principal's sessions, and two sessions given the same summary (a
// deterministic model) name whichever recorded it last.
func (t *turnFacts) preferHintedEvidence() {
	ev := &t.evidence
	if !t.hinted || t.hint.ALeg == "" || ev.aLeg == "" || ev.aLeg == t.hint.ALeg || ev.fromHint {
		return
	}
	if other, ok := t.look.head(ev.aLeg); ok && t.inHintSession(other) {
		return
	}
	own, ok := t.look.head(t.hint.ALeg)
	if !ok || !own.Compacted || !t.inHintSession(own) {
		return
	}
	ev.aLeg, ev.epoch = t.hint.ALeg, own.Epoch
}

// preferHintedHead makes the client hint's own A-leg the match when this
// history extends that A-leg's head at least as far as the prefix records
// matched: the records are shared by the principal's sessions, and
// another session with the same history (the same script run twice, a
// deterministic model) may have committed these prefixes since, naming
// its own A-leg. Without it, such twins fork from each other on every
// turn.
func (t *turnFacts) preferHintedHead() {
	if !t.hinted || t.hint.ALeg == "" || t.match >= 0 && t.matched.ALeg == t.hint.ALeg {
		return
	}
	head, ok := t.look.head(t.hint.ALeg)
	j := head.Norm - 1
	if !ok || head.Head == "" || j < 0 || j >= len(t.hist) || j < t.match || head.Session != t.hint.Session || t.headKey(j) != head.Head {
		return
	}
	t.match = j
	t.matched = record{ALeg: head.ALeg, Session: head.Session, Epoch: head.Epoch, Norm: head.Norm, Turn: head.Turn}
}

// newerWindow reports whether the request comes from a later Codex window
// than the one the client hint was last seen with.
func (t *turnFacts) newerWindow() bool {
	return t.client.window > 0 && t.hint.Window > 0 && t.client.window > t.hint.Window
}

// inHintSession reports whether an A-leg head belongs to the session the
// client hint is mapped to (any session when the hint is not mapped).
func (t *turnFacts) inHintSession(head record) bool {
	return !t.hinted || head.Session == t.hint.Session
}

// loneOpening reports whether the request is a client's first message
// alone, under a client id not seen before, that another conversation of
// the principal opened with too: nothing was answered yet to fork from,
// so it is a new conversation, not a fork of that one.
func (t *turnFacts) loneOpening() bool {
	return !t.hinted && t.client.value != "" && len(t.hist) == 1
}

// repeatsCompactedHead reports whether the request's whole history is the
// head of a branch a compaction summary was relayed for since: a
// deterministic model can write the same summary twice, and the agent
// open both epochs with the same words.
func (t *turnFacts) repeatsCompactedHead() bool {
	if t.match < 0 || t.match != len(t.hist)-1 || t.ref.compaction {
		return false
	}
	head, ok := t.look.head(t.matched.ALeg)
	return ok && head.Compacted && head.Head == t.headKey(t.match)
}

// continuation: the history extends the head of a known A-leg — unless
// another client session picks up the branch's history (Claude Code
// --fork-session, a copied Codex thread): that is a fork, or the two would
// share one state.
func (r *Resolver) continuation(t *turnFacts) (Ref, bool) {
	if t.match < 0 {
		return Ref{}, false
	}
	head, ok := t.look.head(t.matched.ALeg)
	if ok && head.Head != t.headKey(t.match) {
		return Ref{}, false
	}
	ref := t.ref
	otherClient := ref.Hint != "" && head.ClientHint != "" && head.ClientHint != ref.Hint
	if ok && otherClient && !ref.compaction && !(t.hinted && t.hint.ALeg == t.matched.ALeg) {
		if t.loneOpening() {
			return r.fresh(t), true
		}
		return r.forkRef(ref, t.matched, t.last), true
	}
	return continueRef(ref, t.matched, head, ok, t.match), true
}

// newEpoch: the first turn after a compaction of the A-leg the evidence
// names. A request quoting the conversation as a transcript is a
// summarisation request (one no rule knows), never the turn the summary
// opens, even though it quotes that summary.
func (t *turnFacts) newEpoch() (Ref, bool) {
	ev := t.evidence
	if ev.aLeg == "" || quotesTranscript(t.msgs) {
		return Ref{}, false
	}
	head, ok := t.look.head(ev.aLeg)
	if !ok || !t.inHintSession(head) {
		return Ref{}, false
	}
	if ev.fromHint {
		ev.epoch = head.Epoch
		if t.newerWindow() {
			ev.pos = math.MaxInt
		} else if head.Epoch > 0 {
			ev.pos = -1 // marker seen before: only new if nothing of this epoch matches
		}
	}
	// The branch was compacted and this turn, under the branch's own
	// client hint, carries the agent's post-compaction marker, but its
	// summary repeats an older epoch's text word for word: it opens the
	// next epoch all the same.
	if head.Compacted && t.hints.PostCompaction && t.hinted && t.hint.ALeg == ev.aLeg && ev.epoch < head.Epoch {
		ev.epoch, ev.pos = head.Epoch, math.MaxInt
	}
	// A match inside the current epoch means no new epoch began — unless a
	// compaction summary was relayed since the head: then a history that
	// repeats this epoch's opening (the same summary and the same first
	// words) is the next epoch, not a fork.
	within := t.match >= 0 && t.matched.ALeg == ev.aLeg && t.matched.Epoch == head.Epoch && t.match >= ev.pos && !head.Compacted
	// A history that goes on from a point of an earlier epoch of the
	// branch, with no compaction since the head, went back to that point
	// (a rewind, a session resumed from an older copy): a fork there, not
	// the next epoch. The epoch token it carries names the branch, never
	// the epoch the block was given in.
	earlier := t.match >= 0 && t.matched.ALeg == ev.aLeg && t.matched.Epoch < head.Epoch && !head.Compacted && !ev.fromHint
	if ev.epoch < head.Epoch || within || earlier {
		return Ref{}, false
	}
	ref := t.ref
	ref.Session, ref.ALeg, ref.Epoch, ref.Event = head.Session, ev.aLeg, max(head.Epoch, ev.epoch)+1, EventEpoch
	return ref, true
}

// compactionOfHead: an in-band compaction edits the last message of the
// live history; it belongs to the branch whose head it repeats up to that
// message.
func (t *turnFacts) compactionOfHead() (Ref, bool) {
	n := len(t.hist)
	if !t.ref.compaction || n < 2 {
		return Ref{}, false
	}
	for _, a := range []string{t.matched.ALeg, t.hint.ALeg} {
		if head, ok := t.look.head(a); ok && head.HeadParent == t.headKey(n-2) && t.inHintSession(head) {
			ref := t.ref
			ref.Session, ref.ALeg, ref.Epoch, ref.Event, ref.base = head.Session, a, head.Epoch, EventContinue, n-1
			return ref, true
		}
	}
	return Ref{}, false
}

// divergence: the history leaves a known branch before its head — a fork,
// or for a compaction request the compaction of an older point of the
// branch.
func (r *Resolver) divergence(t *turnFacts) (Ref, bool) {
	if t.match < 0 {
		return Ref{}, false
	}
	if t.ref.compaction {
		head, _ := t.look.head(t.matched.ALeg)
		return continueRef(t.ref, t.matched, head, true, t.match), true
	}
	if t.loneOpening() {
		return r.fresh(t), true
	}
	return r.forkRef(t.ref, t.matched, t.last), true
}

// sideRequest: nothing of the history is known, but a short request quotes
// a known branch's conversation (<conversation> transcript, the branch's
// epoch token). It is a side request about that branch — a summarisation
// request no rule recognised — not a new conversation: attribute it, move
// nothing, so it neither resets the branch nor takes its client hint.
func (r *Resolver) sideRequest(ctx context.Context, t *turnFacts) (Ref, bool, error) {
	if len(t.hist) > 2 || !quotesConversation(t.msgs) {
		return Ref{}, false, nil
	}
	oob, err := r.resolveOutOfBand(ctx, t.ref, t.msgs, t.hintKey)
	if err != nil {
		return Ref{}, false, err
	}
	if oob.Event != EventOutOfBand || (t.hinted && oob.ALeg != t.hint.ALeg) {
		return Ref{}, false, nil
	}
	oob.Side = true
	return oob, true, nil
}

// fresh: nothing known. A reset under a known client hint (its session, a
// new A-leg), else a new session.
func (r *Resolver) fresh(t *turnFacts) Ref {
	ref := t.ref
	if t.hinted && t.hint.Session != "" {
		ref.Session, ref.Event = t.hint.Session, EventReset
		if head, ok := t.look.head(t.hint.ALeg); ok {
			ref.PrevTurn = head.Turn
		}
		ref.ALeg = "a_" + r.mac("reset", ref.Principal, t.hint.Session, t.last)
		return ref
	}
	if t.client.value != "" {
		ref.Session = "s_" + r.mac("session-hint", ref.Principal, t.client.value)
	} else {
		ref.Session = "s_" + r.mac("session", ref.Principal, t.last)
	}
	ref.ALeg = "a_" + r.mac("new", ref.Principal, ref.Session, t.last)
	ref.Event = EventNew
	return ref
}

// quotesConversation reports whether a user message carries what
// resolveOutOfBand can attribute by: a <conversation> transcript or a
// capsule block (its epoch token). The first turn of an ordinary new
// conversation has neither and costs no extra store lookup.
func quotesConversation(msgs []dialect.Message) bool {
	for i := range msgs {
		if msgs[i].Role == "user" && (indexTag(msgs[i].Text, quoted.open) >= 0 || capsule.Contains(msgs[i].Text)) {
			return true
		}
	}
	return false
}

// quotesTranscript reports whether a user message quotes the conversation
// as a <conversation> transcript, as summarisation requests do.
func quotesTranscript(msgs []dialect.Message) bool {
	for i := range msgs {
		if msgs[i].Role == "user" && indexTag(msgs[i].Text, quoted.open) >= 0 {
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

// continueRef continues matched's A-leg after its prefix of length
// match+1, whose A-leg head (if known) is head.
func continueRef(ref Ref, matched, head record, headKnown bool, match int) Ref {
	ref.Session, ref.ALeg, ref.Epoch, ref.Event = matched.Session, matched.ALeg, matched.Epoch, EventContinue
	if headKnown && ref.compaction && head.Epoch > ref.Epoch {
		ref.Epoch = head.Epoch // compaction of an older point: count it in the current epoch
	}
	ref.base = match + 1
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
