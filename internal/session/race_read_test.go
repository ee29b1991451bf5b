package session

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// readGatedStore holds a lineage read, after it has read the store, until the
// test lets it go: the read returns what the store held when it looked.
type readGatedStore struct {
	*memStore
	armed  atomic.Bool
	looked chan struct{}
	gate   chan struct{}
}

func (s *readGatedStore) GetLineage(ctx context.Context, principal string, keys []string) (map[string][]byte, error) {
	out, err := s.memStore.GetLineage(ctx, principal, keys)
	if s.armed.CompareAndSwap(true, false) {
		s.looked <- struct{}{}
		<-s.gate
	}
	return out, err
}

// A continuation committed behind whose write lands while the next turn's
// store read is under way: the read saw the head before it, but the write
// ended (and was no longer held) by the time the read returned. The next
// turn still continues the A-leg; it took the stale head for the A-leg's
// and resolved as a fork before (one turn in a few thousand of a tool loop
// without the key index).
func TestReadRacingABehindWrite(t *testing.T) {
	ctx := context.Background()
	st := &readGatedStore{memStore: newMemStore(), looked: make(chan struct{}), gate: make(chan struct{})}
	r := NewResolver(st, Options{Secret: testSecret, Exclusive: true})
	hist := conversation("race", 4)

	first := turn(t, r, "alice", chatView(t, nil, hist[:3]...), Hints{})

	v2 := chatView(t, nil, hist[:5]...)
	second, err := r.Resolve(ctx, "alice", v2, Hints{})
	if err != nil || second.Event != EventContinue {
		t.Fatalf("second turn: %s %v", second.Event, err)
	}
	write, err := r.CommitBehind(ctx, second, v2)
	if err != nil || write == nil {
		t.Fatalf("commit behind: %v (write %v)", err, write != nil)
	}

	// The third turn's read looks at the store before the second turn's
	// write lands, and returns after it ended.
	st.armed.Store(true)
	done := make(chan Ref, 1)
	go func() {
		ref, err := r.Resolve(ctx, "alice", chatView(t, nil, hist[:7]...), Hints{})
		if err != nil {
			t.Error(err)
		}
		done <- ref
	}()
	select {
	case <-st.looked:
	case <-time.After(10 * time.Second):
		t.Fatal("the third turn never read the store")
	}
	if err := write(); err != nil {
		t.Fatal(err)
	}
	close(st.gate)
	var third Ref
	select {
	case third = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the third turn never resolved")
	}
	if third.Event != EventContinue || third.ALeg != first.ALeg {
		t.Fatalf("third turn: %s on %s, want a continuation of %s", third.Event, third.ALeg, first.ALeg)
	}
}
