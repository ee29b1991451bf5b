package session

import (
	"context"
	"errors"
	"hash/maphash"
	"sync"
	"sync/atomic"
)

// keyLister is a store that can list every lineage key it holds (the
// SQLite and memory stores). With a store this process alone writes
// (Options.Exclusive), the list read once at start plus every key written
// since is every key the store can hold: a key outside that set is absent,
// and asking the store for it is a round trip that can only say so. A
// normal turn's new prefixes are such keys.
type keyLister interface {
	LineageKeys(ctx context.Context, fn func(principal, key string) error) error
}

// knownMax bounds the set (8 bytes a key plus the map's overhead); a store
// with more keys is not indexed and every absent key is asked for.
const knownMax = 4 << 20

// known is the set of lineage keys the store may hold, as 64-bit keyed
// hashes of principal and key (a collision only costs a read). Keys are
// added before they are written, so a write in flight is never "absent".
// Until the start-up listing has finished, every key may be held.
type known struct {
	seed  maphash.Seed
	ready atomic.Bool
	mu    sync.RWMutex
	set   map[uint64]struct{}
	max   int  // knownMax; smaller in tests
	off   bool // the set overflowed: never answer "absent"
}

func newKnown(max int) *known {
	return &known{seed: maphash.MakeSeed(), set: make(map[uint64]struct{}), max: max}
}

func (k *known) hash(principal, key string) uint64 {
	var h maphash.Hash
	h.SetSeed(k.seed)
	h.WriteString(principal)
	h.WriteByte(0)
	h.WriteString(key)
	return h.Sum64()
}

// errTooMany stops a listing that would not fit the set.
var errTooMany = errors.New("too many lineage keys to index")

// load lists the store's keys into the set and marks it ready; a store
// with more than knownMax keys leaves it off (every key may be held).
func (k *known) load(ctx context.Context, st keyLister) error {
	err := st.LineageKeys(ctx, func(principal, key string) error {
		k.add(principal, key)
		if k.isOff() {
			return errTooMany
		}
		return nil
	})
	if errors.Is(err, errTooMany) {
		return nil
	}
	if err != nil {
		return err
	}
	k.ready.Store(true)
	return nil
}

// add records that the store may now hold key. The set never forgets (a
// key the store expired or purged stays "may hold", which costs a read):
// past knownMax keys it turns off, so a long-running process or a caller
// sending turn after turn cannot grow it without bound.
func (k *known) add(principal, key string) {
	h := k.hash(principal, key)
	k.mu.Lock()
	if !k.off {
		k.set[h] = struct{}{}
		if len(k.set) > k.max {
			k.off, k.set = true, nil
		}
	}
	k.mu.Unlock()
}

func (k *known) isOff() bool {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.off
}

// absent reports whether the store certainly does not hold key.
func (k *known) absent(principal, key string) bool {
	if k == nil || !k.ready.Load() {
		return false
	}
	h := k.hash(principal, key)
	k.mu.RLock()
	defer k.mu.RUnlock()
	if k.off {
		return false
	}
	_, ok := k.set[h]
	return !ok
}
