package dialect

import (
	"hash/maphash"
	"slices"
	"sync"
)

// itemMemo remembers parsed conversation items by their raw bytes. Agents
// resend the whole history every turn, byte for byte, so all but the newest
// items of a request were parsed before: they are found by a keyed hash of
// their bytes and not decoded again. It is only a cache of a pure function
// (same bytes, same Message), process-local and bounded; nothing depends on
// what it holds.
type itemMemo struct {
	seeds [2]maphash.Seed
	mu    sync.Mutex
	m     map[ItemKey]Message
	size  int // bytes of the raw items the entries stand for
}

// ItemKey identifies a conversation item within this process: its dialect,
// length and two independently seeded 64-bit hashes of its bytes (the seeds
// are drawn per process, so nobody can craft two items that share a key).
// Two items with one key have the same bytes but for their content blocks'
// cache breakpoints, which nothing reads (breakpoint.go), so anything
// computed from what an item says may be memoised by its key
// (View.ItemKeys). It holds
// no pointer: a request's keys are one array per history item that the
// garbage collector never scans, and copying them is a plain copy.
type ItemKey struct {
	N      int
	H1, H2 uint64
	D      uint8 // the dialect (code)
}

// memoBudget bounds the memo by the raw bytes its entries stand for; the
// entries hold the decoded text (at most that much) plus small headers.
const memoBudget = 64 << 20

var memo = &itemMemo{seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}}

func (c *itemMemo) key(name Name, raw []byte) ItemKey {
	if hasBreakpoints(name) {
		if norm, ok := withoutBreakpoints(nil, raw); ok {
			raw = norm // see breakpoint.go
		}
	}
	return ItemKey{N: len(raw), H1: hashBytes(c.seeds[0], raw), H2: hashBytes(c.seeds[1], raw), D: code(name)}
}

func (c *itemMemo) get(k ItemKey) (Message, bool) {
	c.mu.Lock()
	m, ok := c.m[k]
	c.mu.Unlock()
	return m, ok
}

// put remembers m (its strings copied, so the entry does not keep the
// request body alive) and returns the copy. When the budget is spent the
// memo starts over.
func (c *itemMemo) put(k ItemKey, m Message) Message {
	m = detach(m)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || c.size+k.N > memoBudget {
		c.m, c.size = make(map[ItemKey]Message), 0
	}
	if _, ok := c.m[k]; !ok {
		c.m[k] = m
		c.size += k.N
	}
	return m
}

// detach returns m with its own copies of every string and byte slice.
func detach(m Message) Message {
	m.Role, m.Type, m.Text = cloneString(m.Role), cloneString(m.Type), cloneString(m.Text)
	if m.ToolCalls != nil {
		tcs := make([]ToolCall, len(m.ToolCalls))
		for i, tc := range m.ToolCalls {
			tcs[i] = ToolCall{ID: cloneString(tc.ID), Name: cloneString(tc.Name)}
			if tc.Arguments != nil {
				tcs[i].Arguments = make([]byte, len(tc.Arguments))
				copy(tcs[i].Arguments, tc.Arguments)
			}
		}
		m.ToolCalls = tcs
	}
	if m.ToolResults != nil {
		trs := make([]ToolResult, len(m.ToolResults))
		for i, tr := range m.ToolResults {
			trs[i] = ToolResult{CallID: cloneString(tr.CallID), Text: cloneString(tr.Text), IsError: tr.IsError}
		}
		m.ToolResults = trs
	}
	return m
}

// cloneString copies s unless it is one of the short role and type names,
// which are interned.
func cloneString(s string) string {
	switch s {
	case "", "user", "assistant", "system", "developer", "tool", "message":
		return s
	}
	b := make([]byte, len(s))
	copy(b, s)
	return string(b)
}

// listMemo remembers the parsed item lists of recent requests by the
// PrefixID of their last item (which stands for every item before it: two
// conversations that end in the same item, a "yes" or an identical tool
// result, are two lists). An agent's next request is its previous one plus
// a few items: its keys up to the previous last item equal the previous
// list's, so those messages are copied from it instead of being looked up
// one by one. Like itemMemo, it caches a pure function of the items' bytes.
type listMemo struct {
	mu    sync.Mutex
	m     map[PrefixID]*itemList
	order []PrefixID // insertion order, oldest first (entries may be gone)
	size  int        // raw bytes of the items the lists stand for
}

type itemList struct {
	keys []ItemKey
	// msgs are detached (as itemMemo's) and shared with the Views that
	// parsed them: never modified below len. The one request that extends
	// the list first may append in place (claimed), past every reader's end.
	msgs    []Message
	size    int
	claimed bool
}

// listBudget bounds the lists by the raw bytes their items stand for, and
// listLook by how many items at a request's end may be new.
const (
	listBudget = 64 << 20
	listLook   = 16
)

var lists = &listMemo{m: make(map[PrefixID]*itemList)}

// prefix returns the messages of the longest remembered list that keys
// (their prefix ids ids) extends (at most listLook items short of it), or
// nil, and the raw bytes of their items. own reports that the caller, the
// first to extend that list, may append to it in place.
func (c *listMemo) prefix(keys []ItemKey, ids []PrefixID) (msgs []Message, size int, own bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for j := len(keys) - 1; j >= 0 && j >= len(keys)-listLook; j-- {
		l := c.m[ids[j]]
		if l != nil && len(l.keys) == j+1 && sameKeys(l.keys, keys[:j+1]) {
			if j+1 < len(keys) && !l.claimed {
				l.claimed, own = true, true
			}
			return l.msgs, l.size, own
		}
	}
	return nil, 0, false
}

// sameKeys reports whether a and b (of one length) hold the same keys. The
// keys of a request that extended its predecessor's in place (ItemKeys)
// share their array with the list of that predecessor, and the keys below
// a list's length are never written again: those are not compared one by
// one (hundreds of them, every turn).
func sameKeys(a, b []ItemKey) bool {
	return len(a) > 0 && &a[0] == &b[0] || slices.Equal(a, b)
}

// put remembers a parsed list, whose items stand for size raw bytes; a
// list it extends is dropped (the conversation moved on), and the oldest
// go when the budget is spent.
func (c *listMemo) put(keys []ItemKey, ids []PrefixID, msgs []Message, extends, size int) {
	if len(keys) == 0 {
		return
	}
	if size > listBudget/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	last := ids[len(ids)-1]
	if _, ok := c.m[last]; ok {
		return
	}
	if extends > 0 && extends < len(keys) {
		c.drop(ids[extends-1])
	}
	for c.size+size > listBudget && len(c.order) > 0 {
		c.drop(c.order[0])
		c.order = c.order[1:]
	}
	if len(c.order) > 4*len(c.m)+64 {
		c.order = slices.DeleteFunc(c.order, func(k PrefixID) bool { return c.m[k] == nil })
	}
	c.m[last] = &itemList{keys: keys, msgs: msgs, size: size}
	c.order = append(c.order, last)
	c.size += size
}

func (c *listMemo) drop(k PrefixID) {
	if l := c.m[k]; l != nil {
		c.size -= l.size
		delete(c.m, k)
	}
}
