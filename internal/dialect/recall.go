package dialect

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"net/http"
	"slices"
	"sort"
	"sync"
)

// ParseFrom is Parse for a request sent by scope (the caller's principal):
// it remembers the Views of scope's recent requests and scans a new body
// only from where it stops repeating one of them. An agent's next request
// is its previous one resent byte for byte up to the end of some item,
// then new items, then the same fields after the conversation (system
// prompt, tools) as before. The bytes up to the end of the last shared
// item were checked when the earlier request was parsed; scanning them
// again would pass through the same states and record the same index, so
// the scan starts at that item's end with the earlier index's prefix. When
// what follows the conversation is byte-identical to what followed it in
// the earlier request, its fields are the earlier fields, shifted. The
// index and every error are the ones Parse gives for the same body.
//
// The body is kept (until a later request of the conversation replaces
// it, or the memory bound evicts it): it must not be modified after
// ParseFrom returns. Bodies are compared only with bodies of the same
// scope, so how fast a request parses says nothing about other callers'.
func ParseFrom(scope string, name Name, path string, header http.Header, body []byte) (*View, error) {
	if len(body) < recallMin || len(body) > recallBudget/8 {
		return Parse(name, path, header, body)
	}
	if !known(name) {
		return nil, unknownDialect(name)
	}
	h := recalled.head(scope, name, body)
	from, shared := recalled.best(h, body)
	var idx index
	var err error
	if from != nil {
		idx, err = resume(body, convKey(name), from, shared)
	} else {
		idx, err = scanBody(body, convKey(name))
	}
	if err != nil {
		return nil, parseError(name, err)
	}
	v := &View{name: name, path: path, header: header, body: body, idx: idx}
	if from != nil {
		if keys := from.readyKeys(); keys != nil {
			v.known = keys[:min(shared, len(keys))]
			if ids := from.readyIDs(); ids != nil {
				v.knownIDs = ids[:min(shared, len(ids))]
			}
		}
	}
	recalled.put(h, v, from, from != nil && shared == len(from.idx.items))
	return v, nil
}

// Bounds of the recall: bodies below recallMin are cheap to scan whole;
// recallHead bytes of a body's start select its candidates, recallWays of
// them per head (a conversation's forks share its head); recallBudget
// bounds the bytes of the bodies kept.
const (
	recallHead   = 256
	recallWays   = 4
	recallBudget = 64 << 20
)

// recallMin is a variable so that tests can recall small bodies.
var recallMin = 16 << 10

type recall struct {
	seed  maphash.Seed
	mu    sync.Mutex
	m     map[uint64][]*View // most recent first
	order []recallEntry      // insertion order, oldest first (may be gone)
	size  int                // body bytes of the Views in m
}

type recallEntry struct {
	head uint64
	v    *View
}

var recalled = &recall{seed: maphash.MakeSeed(), m: make(map[uint64][]*View)}

// head keys a body by its scope, dialect and first recallHead bytes.
func (c *recall) head(scope string, name Name, body []byte) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	h.WriteString(scope)
	h.WriteByte(0)
	h.WriteString(string(name))
	h.WriteByte(0)
	h.Write(body[:min(len(body), recallHead)])
	return h.Sum64()
}

// best returns the remembered View that shares the most whole
// conversation items with body, and how many (nil when none shares one).
func (c *recall) best(h uint64, body []byte) (*View, int) {
	c.mu.Lock()
	cands := slices.Clone(c.m[h])
	c.mu.Unlock()
	var best *View
	most := 0
	for _, ov := range cands {
		if ov.idx.conv < 0 {
			continue
		}
		n := commonPrefix(body, ov.body)
		items := ov.idx.items
		k := sort.Search(len(items), func(i int) bool { return items[i].end > n })
		if k > most {
			best, most = ov, k
		}
	}
	return best, most
}

// put remembers v under head h. A View v wholly extends (replaces) leaves
// the recall; the oldest go when the budget is spent.
func (c *recall) put(h uint64, v, replaces *View, extends bool) {
	if v.idx.conv < 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.m[h]
	if i := slices.Index(b, replaces); extends && i >= 0 {
		b = slices.Delete(b, i, i+1)
		c.size -= len(replaces.body)
	}
	b = slices.Insert(b, 0, v)
	c.size += len(v.body)
	if len(b) > recallWays {
		for _, old := range b[recallWays:] {
			c.size -= len(old.body)
		}
		clear(b[recallWays:])
		b = b[:recallWays]
	}
	c.m[h] = b
	c.order = append(c.order, recallEntry{h, v})
	for c.size > recallBudget && len(c.order) > 0 {
		e := c.order[0]
		c.order = c.order[1:]
		c.forget(e)
	}
	if len(c.order) > 4*recallWays*len(c.m)+64 {
		c.order = slices.DeleteFunc(c.order, func(e recallEntry) bool { return !slices.Contains(c.m[e.head], e.v) })
	}
}

func (c *recall) forget(e recallEntry) {
	b := c.m[e.head]
	i := slices.Index(b, e.v)
	if i < 0 {
		return
	}
	c.size -= len(e.v.body)
	if b = slices.Delete(b, i, i+1); len(b) == 0 {
		delete(c.m, e.head)
	} else {
		c.m[e.head] = b
	}
}

// resume scans body, whose first shared conversation items (and all bytes
// before the end of the last of them) are those of the earlier View from,
// from the end of those items, starting with from's index up to there.
func resume(body []byte, conv string, from *View, shared int) (index, error) {
	ox := from.idx
	s := scanner{b: body, conv: conv, i: ox.items[shared-1].end}
	s.x.conv = ox.conv
	s.x.fields = append(make([]field, 0, len(ox.fields)), ox.fields[:ox.conv+1]...)
	s.x.items = append(make([]span, 0, len(ox.items)+len(ox.items)/8+8), ox.items[:shared]...)
	// The rest of the conversation array (depth 2: in the body object, in
	// the array).
	end, err := s.next(']')
	if err == nil && !end {
		err = s.elements(2, &s.x.items)
	}
	if err != nil {
		return index{}, err
	}
	s.x.fields[ox.conv].val.end = s.i
	// What follows the conversation, the earlier request's own?
	if q := ox.fields[ox.conv].val.end; len(body)-s.i == len(from.body)-q && bytes.Equal(body[s.i:], from.body[q:]) {
		d := s.i - q
		for _, f := range ox.fields[ox.conv+1:] {
			f.val.start += d
			f.val.end += d
			s.x.fields = append(s.x.fields, f)
		}
		return s.x, nil
	}
	end, err = s.next('}')
	if err == nil && !end {
		err = s.members(1, true)
	}
	if err != nil {
		return index{}, err
	}
	s.space()
	if s.i != len(s.b) {
		return index{}, ErrInvalidJSON
	}
	return s.x, nil
}

// commonPrefix returns the length of the longest common prefix of a and b.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	const block = 4 << 10
	for i+block <= n && bytes.Equal(a[i:i+block], b[i:i+block]) {
		i += block
	}
	for i+8 <= n && binary.LittleEndian.Uint64(a[i:]) == binary.LittleEndian.Uint64(b[i:]) {
		i += 8
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}
