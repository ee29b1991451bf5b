package dialect

import (
	"hash/maphash"
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
// Two items with one key have the same bytes, so anything computed from an
// item's bytes alone may be memoised by its key (View.ItemKeys).
type ItemKey struct {
	Name   Name
	N      int
	H1, H2 uint64
}

// memoBudget bounds the memo by the raw bytes its entries stand for; the
// entries hold the decoded text (at most that much) plus small headers.
const memoBudget = 64 << 20

var memo = &itemMemo{seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}}

func (c *itemMemo) key(name Name, raw []byte) ItemKey {
	return ItemKey{Name: name, N: len(raw), H1: maphash.Bytes(c.seeds[0], raw), H2: maphash.Bytes(c.seeds[1], raw)}
}

func (c *itemMemo) get(k ItemKey) (Message, bool) {
	c.mu.Lock()
	m, ok := c.m[k]
	c.mu.Unlock()
	return m, ok
}

// put remembers m (its strings copied, so the entry does not keep the
// request body alive). When the budget is spent the memo starts over.
func (c *itemMemo) put(k ItemKey, m Message) {
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
