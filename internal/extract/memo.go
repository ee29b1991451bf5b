package extract

import (
	"hash/maphash"
	"strings"
	"sync/atomic"
)

// A statement is asked the same question many times while its turn is read
// and resolved: foldOld, for one, runs its regexp on a decision about eight
// times (reading it, comparing subjects, choices, chosen words). A memo
// keeps a pure function's recent answers in a small table, one per slot;
// a slot's newer answer replaces an older one, so the table never grows.
// It is safe for the pool's workers at once: a slot is one atomic pointer.
type memo[V any] struct {
	seed  maphash.Seed
	slots [memoSlots]atomic.Pointer[memoEntry[V]]
	of    func(string) V
}

const (
	memoSlots = 512
	// memoMaxKey bounds what a memo keeps of a text: a longer one is
	// answered without it.
	memoMaxKey = 512
)

type memoEntry[V any] struct {
	key string
	val V
}

func newMemo[V any](of func(string) V) *memo[V] {
	return &memo[V]{seed: maphash.MakeSeed(), of: of}
}

// get returns of(s).
func (m *memo[V]) get(s string) V {
	if len(s) > memoMaxKey {
		return m.of(s)
	}
	slot := &m.slots[maphash.String(m.seed, s)%memoSlots]
	if e := slot.Load(); e != nil && e.key == s {
		return e.val
	}
	v := m.of(s)
	// The key is copied: s may be a slice of a long message the table
	// must not keep alive.
	slot.Store(&memoEntry[V]{key: strings.Clone(s), val: v})
	return v
}
