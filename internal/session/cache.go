package session

import (
	"container/list"
	"hash/maphash"
	"slices"
	"sync"
	"time"
)

// lru is a bounded, expiring cache of decoded lineage records in front of
// the store. Keys are principal-qualified.
type lru struct {
	mu    sync.Mutex
	size  int
	ttl   time.Duration
	now   func() time.Time
	ll    *list.List
	items map[string]*list.Element
	seq   uint64 // counts the writes this process stored (lruItem.wrote)
}

type lruItem struct {
	key     string
	rec     record
	expires time.Time
	written time.Time // when this process stored rec; zero when it was read
	wrote   uint64    // lru.seq when this process stored rec; 0 when it was read
	pending int       // writes of rec held (hold) and not yet ended (release)
}

func newLRU(size int, ttl time.Duration, now func() time.Time) *lru {
	return &lru{size: size, ttl: ttl, now: now, ll: list.New(), items: make(map[string]*list.Element)}
}

// get returns the record cached under key, which it does not keep.
func (c *lru) get(key []byte) (record, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[string(key)]
	if !ok {
		return record{}, false
	}
	it := el.Value.(*lruItem)
	if !c.now().Before(it.expires) {
		c.ll.Remove(el)
		delete(c.items, it.key)
		return record{}, false
	}
	c.ll.MoveToFront(el)
	return it.rec, true
}

// stored reports whether this process itself stored rec under key after
// since (so the store holds that value, with at least the expiry it was
// written with).
func (c *lru) stored(key string, rec record, since time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return false
	}
	it := el.Value.(*lruItem)
	return it.written.After(since) && it.rec.equal(rec)
}

// hold caches rec ahead of its write (CommitBehind): until release, what
// a read of the store brings back for key (older) does not replace it.
func (c *lru) hold(key string, rec record) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.set(key, rec, false)
	c.items[key].Value.(*lruItem).pending++
}

// release ends a hold of key: the write of rec ended, stored or not. A
// newer record held meanwhile stays as it is.
func (c *lru) release(key string, rec record, stored bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		it := el.Value.(*lruItem)
		if it.pending > 0 {
			it.pending--
		}
		if stored && it.rec.equal(rec) {
			it.written = c.now()
			c.seq++
			it.wrote = c.seq
		}
	}
}

// newerThan reports whether it is newer than what a store read that began
// at since (mark) returns: its write is held, or ended after since.
func (it *lruItem) newerThan(since uint64) bool {
	return it.pending > 0 || it.wrote > since
}

// mark returns the point a store read starts from: a record this process
// stores after it is newer than what that read returns.
func (c *lru) mark() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seq
}

// newer returns the record of key whose write is held (hold), or which
// this process stored after since (mark): the store may not have had it
// when a read that began at since looked.
func (c *lru) newer(key string, since uint64) (record, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		if it := el.Value.(*lruItem); it.newerThan(since) {
			return it.rec, true
		}
	}
	return record{}, false
}

// read caches rec as read from the store by a read that began at since
// (mark), unless a write of key is held or this process stored key after
// since: what the read returned is then older than what is cached.
func (c *lru) read(key string, rec record, since uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok && el.Value.(*lruItem).newerThan(since) {
		return
	}
	c.set(key, rec, false)
}

// put caches rec; written says this process has just stored it.
func (c *lru) put(key string, rec record, written bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.set(key, rec, written)
}

// set is put with c.mu held. Items with a write held are not evicted.
func (c *lru) set(key string, rec record, written bool) {
	now := c.now()
	exp := now.Add(c.ttl)
	var w time.Time
	var seq uint64
	if written {
		c.seq++
		w, seq = now, c.seq
	}
	if el, ok := c.items[key]; ok {
		it := el.Value.(*lruItem)
		if !written && it.rec.equal(rec) {
			w, seq = it.written, it.wrote // read back what this process stored
		}
		it.rec, it.expires, it.written, it.wrote = rec, exp, w, seq
		c.ll.MoveToFront(el)
		return
	}
	c.items[key] = c.ll.PushFront(&lruItem{key: key, rec: rec, expires: exp, written: w, wrote: seq})
	for spared := 0; c.ll.Len() > c.size && spared < c.ll.Len(); {
		old := c.ll.Back()
		if old.Value.(*lruItem).pending > 0 {
			c.ll.MoveToFront(old)
			spared++
			continue
		}
		c.ll.Remove(old)
		delete(c.items, old.Value.(*lruItem).key)
	}
}

// keyedMutex hands out one mutex per key, created on demand and dropped when
// its last holder or waiter leaves.
type keyedMutex struct {
	mu sync.Mutex
	m  map[string]*refMutex
}

type refMutex struct {
	sync.Mutex
	refs int
}

func newKeyedMutex() *keyedMutex { return &keyedMutex{m: make(map[string]*refMutex)} }

func (k *keyedMutex) lock(key string) func() {
	k.mu.Lock()
	rm := k.m[key]
	if rm == nil {
		rm = &refMutex{}
		k.m[key] = rm
	}
	rm.refs++
	k.mu.Unlock()
	rm.Lock()
	var once sync.Once
	return func() {
		once.Do(func() {
			rm.Unlock()
			k.mu.Lock()
			rm.refs--
			if rm.refs == 0 {
				delete(k.m, key)
			}
			k.mu.Unlock()
		})
	}
}

// stripes serialises short in-process read-modify-write sections per key.
type stripes struct {
	seed maphash.Seed
	once sync.Once
	mu   [64]sync.Mutex
}

// lock locks the stripes of the non-empty keys, each once, in stripe order.
func (s *stripes) lock(keys ...string) func() {
	s.once.Do(func() { s.seed = maphash.MakeSeed() })
	var idx [4]int
	held := idx[:0]
	for _, k := range keys {
		if k == "" {
			continue
		}
		i := int(maphash.String(s.seed, k) % uint64(len(s.mu)))
		if !slices.Contains(held, i) {
			held = append(held, i)
		}
	}
	slices.Sort(held)
	for _, i := range held {
		s.mu[i].Lock()
	}
	return func() {
		for _, i := range slices.Backward(held) {
			s.mu[i].Unlock()
		}
	}
}
