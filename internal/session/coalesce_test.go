package session

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/store/backend"
)

// queueRecorder is a fifoStore that notes the keys of every batch queued.
type queueRecorder struct {
	*fifoStore
	mu      sync.Mutex
	batches [][]string
}

func (s *queueRecorder) EnqueueLineages(principal string, puts []backend.LineagePut) <-chan error {
	keys := make([]string, len(puts))
	for i, p := range puts {
		keys[i] = p.Key
	}
	s.mu.Lock()
	s.batches = append(s.batches, keys)
	s.mu.Unlock()
	return s.fifoStore.EnqueueLineages(principal, puts)
}

// TestCoalescedTurnsWriteEachKeyOnce: the continuations of a tool loop
// committed behind within the coalescing interval reach the store as one
// batch that writes each key once (the A-leg's head, the newest turn's
// head record, the user turns' fingerprints), not once per turn that
// carried it.
func TestCoalescedTurnsWriteEachKeyOnce(t *testing.T) {
	st := &queueRecorder{fifoStore: newFIFOStore()}
	defer st.close()
	r := NewResolver(st, Options{Secret: testSecret, Exclusive: true, Coalesce: time.Hour})
	hist := conversation("once", 2)
	turn(t, r, "alice", chatView(t, nil, hist...), Hints{})
	st.mu.Lock()
	st.batches = nil
	st.mu.Unlock()
	var writes []func() error
	for i := range 6 {
		hist = append(hist, a(fmt.Sprintf("step %d", i)), u(fmt.Sprintf("Step %d done; keep the tests green and the reservation endpoint idempotent.", i)))
		v := chatView(t, nil, hist...)
		ref, err := r.Resolve(t.Context(), "alice", v, Hints{})
		if err != nil || ref.Event != EventContinue {
			t.Fatalf("turn %d: %s, %v", i, ref.Event, err)
		}
		write, err := r.CommitBehind(t.Context(), ref, v)
		if err != nil || write == nil {
			t.Fatalf("turn %d: CommitBehind %v", i, err)
		}
		writes = append(writes, write)
	}
	r.Flush()
	for _, w := range writes {
		if err := w(); err != nil {
			t.Fatal(err)
		}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.batches) != 1 {
		t.Fatalf("%d batches queued, want the six turns in one", len(st.batches))
	}
	keys := st.batches[0]
	times := map[string]int{}
	for _, k := range keys {
		times[k]++
	}
	for k, n := range times {
		if n > 1 {
			t.Errorf("key %s written %d times in one batch", k, n)
		}
	}
	if len(keys) < 3 {
		t.Errorf("batch of %d keys, want at least the head record, the A-leg and the fingerprints", len(keys))
	}
}
