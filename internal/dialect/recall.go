package dialect

import (
	"hash/maphash"
	"net/http"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
)

// ParseFrom is Parse for a request sent by scope (the caller's principal):
// it remembers what it learnt of scope's recent requests and scans a new
// body only from where it stops repeating one of them. An agent's next
// request is its previous one resent byte for byte up to the end of some
// item, then new items, then the same fields after the conversation
// (system prompt, tools) as before. The bytes up to the end of the last
// shared item were checked when the earlier request was parsed; scanning
// them again would pass through the same states and record the same index,
// so the scan starts at that item's end with the earlier index's prefix.
// When what follows the conversation is what followed it in the earlier
// request, its fields are the earlier fields, shifted. The index and every
// error are the ones Parse gives for the same body; the item keys and
// prefix ids of the shared items are the earlier request's.
//
// What is remembered is small: the earlier request's index, keys and ids,
// and a seeded 64-bit hash of each 4 KiB block of its body up to its last
// item (bodies are compared block by block through them, as items are
// through ItemKeys), never the body. Requests are compared only with requests of the same
// scope, so how fast a request parses says nothing about other callers'.
func ParseFrom(scope string, name Name, path string, header http.Header, body []byte) (*View, error) {
	if len(body) < recallMin {
		return Parse(name, path, header, body)
	}
	if !known(name) {
		return nil, unknownDialect(name)
	}
	h := recalled.head(scope, name, body)
	sums := newBlockSums(recalled, body)
	from, shared := recalled.best(h, &sums)
	if from != nil {
		if shared = from.ended(body, from.extend(body, shared)); shared == 0 {
			from = nil
		}
	}
	var idx index
	var err error
	var tail *blockSum // of what follows the conversation, if resume made it
	if from != nil {
		idx, tail, err = resume(body, convKey(name), from, shared)
	} else {
		idx, err = scanBody(body, convKey(name))
	}
	if err != nil {
		return nil, parseError(name, err)
	}
	v := &View{name: name, path: path, header: header, body: body, idx: idx}
	if from != nil {
		if keys := from.keys.Load(); keys != nil {
			v.known = (*keys)[:min(shared, len(*keys))]
			v.from = from
			if ids := from.ids.Load(); ids != nil {
				v.knownIDs = (*ids)[:min(shared, len(*ids))]
			}
		}
	}
	if idx.conv >= 0 {
		v.scope = scope
		v.rec = newRecallRec(body, idx, sums.upTo(recalled.useful(len(body), idx.items)), tail)
		// A request that shares all of an earlier one's items but perhaps
		// the last (whose breakpoint moved) is the conversation's next
		// turn: it takes the earlier one's place.
		recalled.put(h, v.rec, from, from != nil && shared >= len(from.idx.items)-1)
	}
	return v, nil
}

// Bounds of the recall: bodies below recallMin are cheap to scan whole;
// recallHead bytes of a body's start select its candidates, recallWays of
// them per head: a conversation's forks share its head, and so do a
// caller's conversations that open alike (every Claude Code session's
// first message opens with the same kilobytes of system reminders, and a
// caller may run dozens at once); the recall's budget bounds the bytes the
// remembered requests hold (16 MiB: the records of about 300
// conversations of 200 KiB).
const (
	recallHead = 256
	recallWays = 128
)

// recallMin is a variable so that tests can recall small bodies.
var recallMin = 16 << 10

// recallRec is what the recall keeps of one request: never its body.
type recallRec struct {
	n     int        // body length
	sums  []blockSum // of the body's first useful blocks (recall.useful)
	idx   index      // shared with the request's View, never modified
	tailN int        // bytes after the conversation array
	tail  blockSum   // of those bytes
	size  int        // bytes held, for the budget
	// The sums of the conversation's last items (from item lastFrom on),
	// each with the separator before it: body[items[i-1].end:items[i].end].
	// The next request of an agent differs from this one inside or after
	// its last item, so whole blocks stop short of the items in the block
	// before the difference; these carry the comparison on item by item
	// (extend).
	lastFrom int
	lastSums []blockSum
	// The request's item keys and prefix ids, once its View made them.
	// Their arrays' room past their length is the one request's that
	// extends them first (extended): it appends in place (View.ItemKeys).
	keys     atomic.Pointer[[]ItemKey]
	ids      atomic.Pointer[[]PrefixID]
	extended atomic.Bool

	held bool // in the recall's map (recall.mu)
}

// grown is the capacity given to the keys or ids of n items, which the
// conversation's next requests may extend in place.
func grown(n int) int { return n + n/8 + 8 }

type blockSum uint64

// newRecallRec makes the record of a parsed body; tail, when known, is the
// sum of what follows its conversation.
func newRecallRec(body []byte, idx index, sums []blockSum, tail *blockSum) *recallRec {
	end := idx.fields[idx.conv].val.end
	r := &recallRec{n: len(body), sums: sums, idx: idx, tailN: len(body) - end}
	if tail != nil {
		r.tail = *tail
	} else {
		r.tail = recalled.sum(body[end:])
	}
	if items := idx.items; len(items) > 1 {
		// The items that end past the start of the block the last item
		// starts in (at most lastMax of them).
		lo := items[len(items)-1].start / recalled.block * recalled.block
		r.lastFrom = max(1, len(items)-lastMax, sort.Search(len(items), func(i int) bool { return items[i].end > lo }))
		r.lastSums = make([]blockSum, 0, len(items)-r.lastFrom)
		for i := r.lastFrom; i < len(items); i++ {
			r.lastSums = append(r.lastSums, recalled.sum(body[items[i-1].end:items[i].end]))
		}
	}
	// Keys and ids come later (40 and 16 bytes an item).
	r.size = 8*cap(sums) + 8*len(r.lastSums) + (16+40+16)*len(idx.items) + 48*len(idx.fields) + 128
	return r
}

// TailID identifies what follows a request's conversation (an agent's
// system prompt and tools, resent byte for byte every turn): the scope
// ParseFrom was given, the bytes' length and their seeded sum. Two
// requests of one scope with one TailID hold the same bytes there, but for
// the 2⁻⁶⁴ chance ParseFrom itself takes when it reuses an earlier
// request's trailing fields; requests of different scopes never share one.
type TailID struct {
	Scope string
	N     int
	Sum   uint64
}

// TailID returns the TailID of the request, when ParseFrom remembers it
// (bodies of recallMin bytes or more, with a conversation).
func (v *View) TailID() (TailID, bool) {
	if v.rec == nil {
		return TailID{}, false
	}
	return TailID{Scope: v.scope, N: v.rec.tailN, Sum: uint64(v.rec.tail)}, true
}

// lastMax bounds the items whose sums a record keeps (lastSums).
const lastMax = 64

// extend returns how many of r's items body shares, given that it shares
// the first shared of them (and every byte up to the end of the last of
// those): the following items are compared, with the separator before
// each, by their sums, as long as r kept them. The bytes up to an item's
// end being the same, the scan of body reaches the same states there as
// the scan of r's request did.
func (r *recallRec) extend(body []byte, shared int) int {
	items := r.idx.items
	for shared >= r.lastFrom && shared < len(items) {
		a, b := items[shared-1].end, items[shared].end
		if b > len(body) || recalled.sum(body[a:b]) != r.lastSums[shared-r.lastFrom] {
			break
		}
		shared++
	}
	return shared
}

// ended returns shared, less the last shared item when it is a number: a
// number ends where the byte after it is no digit, and that byte is the
// body's own (r's item 12 may go on as 123 in body); every other item
// ends at its own last byte.
func (r *recallRec) ended(body []byte, shared int) int {
	if shared == 0 {
		return 0
	}
	switch c := body[r.idx.items[shared-1].start]; {
	case c == '-' || c >= '0' && c <= '9':
		return shared - 1
	}
	return shared
}

// blockSums are a body's block hashes, made as far as they are asked for.
type blockSums struct {
	c    *recall
	body []byte
	s    []blockSum
}

// newBlockSums makes room for the sums of every whole block of body at
// once: they are asked for a block at a time, and the record keeps them.
func newBlockSums(c *recall, body []byte) blockSums {
	return blockSums{c: c, body: body, s: make([]blockSum, 0, len(body)/c.block)}
}

func (b *blockSums) at(i int) blockSum {
	for len(b.s) <= i {
		j := len(b.s) * b.c.block
		b.s = append(b.s, b.c.sum(b.body[j:min(j+b.c.block, len(b.body))]))
	}
	return b.s[i]
}

// upTo returns the sums of the first n blocks.
func (b *blockSums) upTo(n int) []blockSum {
	if n > 0 {
		b.at(n - 1)
	}
	return b.s[:n]
}

type recall struct {
	block  int             // bytes of a block
	budget int             // bytes the records may hold
	seeds  [2]maphash.Seed // head; block sums
	mu     sync.Mutex
	m      map[uint64][]cand // most recent first
	order  []recallEntry     // insertion order, oldest first (may be gone)
	size   int               // bytes the records in m hold
	held   int               // records in m
}

type recallEntry struct {
	head uint64
	r    *recallRec
}

var recalled = newRecall(4<<10, 16<<20)

func newRecall(block, budget int) *recall {
	return &recall{
		block:  block,
		budget: budget,
		seeds:  [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()},
		m:      make(map[uint64][]cand),
	}
}

// head keys a body by its scope, dialect and first recallHead bytes.
func (c *recall) head(scope string, name Name, body []byte) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seeds[0])
	h.WriteString(scope)
	h.WriteByte(0)
	h.WriteString(string(name))
	h.WriteByte(0)
	h.Write(body[:min(len(body), recallHead)])
	return h.Sum64()
}

// sum is a seeded hash of b. The seed is drawn per process and never
// shown, so a caller cannot aim two blocks at one sum; two different blocks
// share one by chance with probability 2⁻⁶⁴. Only one caller's (scope's)
// requests are ever compared, so such a chance would misread only that
// caller's own request. Item keys, which the item memo shares between
// callers, keep two independent hashes.
func (c *recall) sum(b []byte) blockSum {
	return blockSum(hashBytes(c.seeds[1], b))
}

// useful returns how many block sums the record of a body of n bytes whose
// conversation items are items keeps: its whole blocks up to the one that
// holds the byte after the last item. Sharing more blocks with a body
// shares no more of its items, so no comparison needs the blocks after
// (an agent's system prompt and tools, half its body), and they are not
// hashed for the record; the byte after the last item is kept because it
// decides where that item ends when it is a number.
func (c *recall) useful(n int, items []span) int {
	if len(items) == 0 {
		return 0
	}
	return min(n/c.block, items[len(items)-1].end/c.block+1)
}

// best returns the remembered request that shares the most whole
// conversation items with the body (compared a whole block at a time),
// and how many (nil when none shares one).
//
// The head's candidates are read under the lock from their own copies of
// their first sums and item counts, which settle most of them without
// touching their records (a caller's conversations that open alike part
// in their first blocks) and without copying the list: what is left to
// compare after the lock are the few candidates that share all their
// first blocks with the body, and those already known to share an item.
func (c *recall) best(h uint64, sums *blockSums) (*recallRec, int) {
	whole := len(sums.body) / c.block
	first := sums.upTo(min(whole, candSums))
	var buf [8]pick
	picks := buf[:0]
	c.mu.Lock()
	for i, cands := 0, c.m[h]; i < len(cands); i++ {
		if p, ok := cands[i].pick(first, whole); ok {
			picks = append(picks, p)
		}
	}
	c.mu.Unlock()
	var best *recallRec
	most, mostBlocks := 0, 0
	for _, p := range picks {
		if p.items < 0 {
			p.n = c.shared(p.r, sums, whole)
		}
		// The same bytes up to there hold the same items: a candidate
		// that shares no more blocks than the best so far shares no
		// more items.
		if p.n <= mostBlocks {
			continue
		}
		if p.items < 0 {
			items := p.r.idx.items
			p.items = sort.Search(len(items), func(i int) bool { return items[i].end > p.n*c.block })
		}
		if p.items > most {
			best, most, mostBlocks = p.r, p.items, p.n
		}
	}
	return best, most
}

// shared returns how many whole blocks of the body r's request shares,
// given that it shares its first candSums.
func (c *recall) shared(r *recallRec, sums *blockSums, whole int) int {
	full := min(whole, len(r.sums))
	n := candSums
	for n < full && sums.at(n) == r.sums[n] {
		n++
	}
	return n
}

// cand is one of a head's candidates: its record, with what best reads
// first copied beside it so as not to touch the record: how many block
// sums it has, the first of them, and how many of its items end within
// each of its first blocks.
type cand struct {
	r      *recallRec
	blocks int
	first  [candSums]blockSum
	items  [candSums]int32 // items[i]: those that end within blocks 0…i
}

const candSums = 4

func candOf(c *recall, r *recallRec) cand {
	cd := cand{r: r, blocks: len(r.sums)}
	copy(cd.first[:], r.sums)
	is := r.idx.items
	for i := range cd.items {
		cd.items[i] = int32(sort.Search(len(is), func(j int) bool { return is[j].end > (i+1)*c.block }))
	}
	return cd
}

// pick is a candidate as best compares it: how many whole blocks of the
// body it shares and how many of its items end in them, or items < 0 when
// it shares all the first blocks and the rest are still to compare.
type pick struct {
	r        *recallRec
	n, items int
}

// pick compares the candidate with the body (first: the sums of its first
// blocks; whole: how many whole blocks it has) as far as the candidate's
// own copies go. A candidate that shares no item is left out (ok false):
// it can never be best.
func (cd *cand) pick(first []blockSum, whole int) (p pick, ok bool) {
	full := min(whole, cd.blocks)
	n := 0
	for n < full && n < candSums && first[n] == cd.first[n] {
		n++
	}
	if n == candSums && full > candSums {
		return pick{r: cd.r, items: -1}, true
	}
	if n == 0 || cd.items[n-1] == 0 {
		return pick{}, false
	}
	return pick{r: cd.r, n: n, items: int(cd.items[n-1])}, true
}

// put remembers r under head h. A record r wholly extends (replaces)
// leaves the recall; the oldest go when the budget is spent.
func (c *recall) put(h uint64, r, replaces *recallRec, extends bool) {
	cd := candOf(c, r)
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.m[h]
	if i := slices.IndexFunc(b, func(cd cand) bool { return cd.r == replaces }); extends && i >= 0 {
		b = slices.Delete(b, i, i+1)
		c.drop(replaces)
	}
	b = slices.Insert(b, 0, cd)
	c.size += r.size
	c.held++
	r.held = true
	if len(b) > recallWays {
		for _, old := range b[recallWays:] {
			c.drop(old.r)
		}
		clear(b[recallWays:])
		b = b[:recallWays]
	}
	c.m[h] = b
	c.order = append(c.order, recallEntry{h, r})
	for c.size > c.budget && len(c.order) > 0 {
		e := c.order[0]
		c.order = c.order[1:]
		c.forget(e)
	}
	if len(c.order) > 2*c.held+64 {
		c.order = slices.DeleteFunc(c.order, func(e recallEntry) bool { return !e.r.held })
	}
}

// drop accounts for r leaving the map. c.mu is held.
func (c *recall) drop(r *recallRec) {
	c.size -= r.size
	c.held--
	r.held = false
}

func (c *recall) forget(e recallEntry) {
	b := c.m[e.head]
	i := slices.IndexFunc(b, func(cd cand) bool { return cd.r == e.r })
	if i < 0 {
		return
	}
	c.drop(e.r)
	if b = slices.Delete(b, i, i+1); len(b) == 0 {
		delete(c.m, e.head)
	} else {
		c.m[e.head] = b
	}
}

// resumeRoom is how many items past the earlier request's a resumed
// index has room for before its array grows: an agent's turn adds a few.
// The array is the View's and the record's, never appended to once the
// scan ends, so more room would be memory held for nothing.
const resumeRoom = 16

// resume scans body, whose first shared conversation items (and all bytes
// before the end of the last of them) are those of the earlier request
// from, from the end of those items, starting with from's index up to
// there.
// It also returns the sum of what follows the conversation when it made
// it (to compare it with the earlier request's).
func resume(body []byte, conv string, from *recallRec, shared int) (x index, tail *blockSum, err error) {
	ox := from.idx
	s := scanner{b: body, conv: conv, i: ox.items[shared-1].end}
	s.x.conv = ox.conv
	s.x.fields = append(make([]field, 0, len(ox.fields)), ox.fields[:ox.conv+1]...)
	s.x.items = append(make([]span, 0, len(ox.items)+resumeRoom), ox.items[:shared]...)
	// The rest of the conversation array (depth 2: in the body object, in
	// the array).
	end, err := s.next(']')
	if err == nil && !end {
		err = s.elements(2, &s.x.items)
	}
	if err != nil {
		return index{}, nil, err
	}
	s.x.fields[ox.conv].val.end = s.i
	// What follows the conversation, the earlier request's own?
	if len(body)-s.i == from.tailN {
		sum := recalled.sum(body[s.i:])
		tail = &sum
	}
	if tail != nil && *tail == from.tail {
		d := s.i - (from.n - from.tailN)
		for _, f := range ox.fields[ox.conv+1:] {
			f.val.start += d
			f.val.end += d
			s.x.fields = append(s.x.fields, f)
		}
		return s.x, tail, nil
	}
	end, err = s.next('}')
	if err == nil && !end {
		err = s.members(1, true)
	}
	if err != nil {
		return index{}, nil, err
	}
	s.space()
	if s.i != len(s.b) {
		return index{}, nil, ErrInvalidJSON
	}
	return s.x, tail, nil
}
