package session

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/store/backend"
)

// fifoStore writes lineage one batch at a time, in the order the batches
// came, whether their caller waits (PutLineage, PutLineages) or not
// (EnqueueLineages), as SQLite's write group does; a closed gate holds
// them all.
type fifoStore struct {
	*memStore
	mu    sync.Mutex
	gate  chan struct{} // nil: open
	queue chan func()
	start sync.Once
}

func newFIFOStore() *fifoStore {
	return &fifoStore{memStore: newMemStore(), queue: make(chan func(), 64)}
}

func (s *fifoStore) run(fn func()) <-chan struct{} {
	s.start.Do(func() {
		go func() {
			for fn := range s.queue {
				s.mu.Lock()
				g := s.gate
				s.mu.Unlock()
				if g != nil {
					<-g
				}
				fn()
			}
		}()
	})
	done := make(chan struct{})
	s.queue <- func() { fn(); close(done) }
	return done
}

func (s *fifoStore) close() { close(s.queue) }

func (s *fifoStore) hold() {
	s.mu.Lock()
	s.gate = make(chan struct{})
	s.mu.Unlock()
}

func (s *fifoStore) open() {
	s.mu.Lock()
	if s.gate != nil {
		close(s.gate)
		s.gate = nil
	}
	s.mu.Unlock()
}

func (s *fifoStore) PutLineages(ctx context.Context, principal string, puts []backend.LineagePut) error {
	var err error
	<-s.run(func() { err = s.memStore.PutLineages(ctx, principal, puts) })
	return err
}

func (s *fifoStore) PutLineage(ctx context.Context, principal, key string, value []byte, expires time.Time) error {
	return s.PutLineages(ctx, principal, []backend.LineagePut{{Key: key, Value: value, Expires: expires}})
}

func (s *fifoStore) EnqueueLineages(principal string, puts []backend.LineagePut) <-chan error {
	out := make(chan error, 1)
	s.run(func() { out <- s.memStore.PutLineages(context.Background(), principal, puts) })
	return out
}

const continued = "This session is being continued from a previous conversation that ran out of context. " +
	"The summary below covers the earlier portion of the conversation.\n\nSummary:\n"

// compactionSummary is what a deterministic model answers to every
// compaction of the conversation below: the same text each time.
const compactionSummary = "1. Primary Request and Intent: build the job service for the billing team\n" +
	"2. Key Technical Concepts: a job queue, a worker pool, retries with backoff\n" +
	"3. Pending Tasks: wire the worker pool to the queue and add the retry tests"

// An epoch's opening that repeats the one before it word for word (a
// deterministic model writes the same summary, the agent opens with the
// same words) is the next epoch, also when the compaction came while the
// write of the turn before it had not landed yet: the summary must mark
// the head this process knows, not the older one the store still returns.
// Otherwise the next turn continues the old epoch, and the decisions of
// its first turn are taken as already seen. Whether the caller runs the
// write (the memory store, PostgreSQL) or the store queues it (SQLite).
func TestSummaryMarksTheHeadHeldInMemory(t *testing.T) {
	type gate struct {
		st      Store
		mem     *memStore
		hold    func()
		open    func()
		waiting func() bool // the summary's write waits for the turn's
	}
	for _, tc := range []struct {
		name string
		make func() gate
	}{
		{"written by the caller", func() gate {
			g := &gatedStore{memStore: newMemStore()}
			var gets int
			return gate{st: g, mem: g.memStore,
				hold:    func() { g.gate, gets = make(chan struct{}), g.roundTrips() },
				open:    func() { close(g.gate) },
				waiting: func() bool { return g.roundTrips() > gets }}
		}},
		{"queued in the store", func() gate {
			f := newFIFOStore()
			t.Cleanup(f.close)
			return gate{st: f, mem: f.memStore, hold: f.hold, open: f.open,
				waiting: func() bool { return len(f.queue) > 0 }}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := tc.make()
			r := exclusiveResolver(t, g.st)
			ctx := t.Context()
			hdr := map[string]string{"X-Claude-Code-Session-Id": "3f0d8b50-cf9b-4dc3-a40e-d141fb109f4f"}
			opening := []msg{u(continued + compactionSummary), u("Continue.")}

			hist := conversation("jobs", 2)
			first := turn(t, r, "alice", chatView(t, hdr, hist[:1]...), Hints{})
			turn(t, r, "alice", chatView(t, hdr, hist[:3]...), Hints{})
			compactAndOpen := func(hist []msg, held bool) Ref {
				t.Helper()
				comp := append(append([]msg{}, hist...), u("Your task is to create a detailed summary of the conversation so far."))
				cref := turn(t, r, "alice", chatView(t, hdr, comp...), Hints{Compaction: true})
				if held {
					// The turn before the compaction was committed behind
					// and its write has not landed when the summary is
					// recorded.
					recorded := make(chan error, 1)
					go func() { recorded <- r.RecordSummary(ctx, cref, compactionSummary) }()
					deadline := time.Now().Add(5 * time.Second)
					for !g.waiting() && time.Now().Before(deadline) {
						time.Sleep(time.Millisecond)
					}
					g.open()
					if err := <-recorded; err != nil {
						t.Fatal(err)
					}
				} else if err := r.RecordSummary(ctx, cref, compactionSummary); err != nil {
					t.Fatal(err)
				}
				return turn(t, r, "alice", chatView(t, hdr, opening...), Hints{PostCompaction: true})
			}

			ep1 := compactAndOpen(hist[:3], false)
			if ep1.Event != EventEpoch || ep1.ALeg != first.ALeg || ep1.Epoch != 1 {
				t.Fatalf("first compaction: %s on %s epoch %d, want the next epoch of %s", ep1.Event, ep1.ALeg, ep1.Epoch, first.ALeg)
			}

			// A turn of epoch 1, committed behind; its write is held.
			hist = append(append([]msg{}, opening...), a("Continuing with the worker pool."), u("Use NATS instead of RabbitMQ for the job queue."))
			v := chatView(t, hdr, hist...)
			ref, err := r.Resolve(ctx, "alice", v, Hints{})
			if err != nil || ref.Event != EventContinue || ref.Epoch != 1 {
				t.Fatalf("turn of epoch 1: %s epoch %d, %v", ref.Event, ref.Epoch, err)
			}
			g.hold()
			write, err := r.CommitBehind(ctx, ref, v)
			if err != nil || write == nil {
				t.Fatalf("CommitBehind = %v, %v", write != nil, err)
			}
			wrote := make(chan error, 1)
			go func() { wrote <- write() }()

			ep2 := compactAndOpen(append(hist, a("Switched the queue to NATS.")), true)
			if err := <-wrote; err != nil {
				t.Fatal(err)
			}
			if ep2.Event != EventEpoch || ep2.ALeg != first.ALeg || ep2.Epoch != 2 {
				t.Errorf("second compaction: %s on %s epoch %d, want epoch 2 of %s", ep2.Event, ep2.ALeg, ep2.Epoch, first.ALeg)
			}
		})
	}
}

// Two compactions in a row with nothing between them: the next epoch's
// opening repeats the head's whole history, and is still the next epoch
// (not a retry of the head's turn).
func TestCompactionRightAfterTheOpening(t *testing.T) {
	r := exclusiveResolver(t, newMemStore())
	ctx := t.Context()
	hdr := map[string]string{"X-Claude-Code-Session-Id": "7acbff2c-458d-4aa6-bdf3-db25bfa50dc9"}
	opening := []msg{u(continued + compactionSummary), u("Continue.")}
	hist := conversation("jobs", 2)
	first := turn(t, r, "alice", chatView(t, hdr, hist[:3]...), Hints{})
	head := hist[:3]
	for epoch := 1; epoch <= 3; epoch++ {
		comp := append(append([]msg{}, head...), a("Done."), u("Your task is to create a detailed summary of the conversation so far."))
		cref := turn(t, r, "alice", chatView(t, hdr, comp...), Hints{Compaction: true})
		if err := r.RecordSummary(ctx, cref, compactionSummary); err != nil {
			t.Fatal(err)
		}
		ref := turn(t, r, "alice", chatView(t, hdr, opening...), Hints{PostCompaction: true})
		if ref.Event != EventEpoch || ref.ALeg != first.ALeg || ref.Epoch != epoch {
			t.Fatalf("opening after compaction %d: %s on %s epoch %d, want epoch %d of %s", epoch, ref.Event, ref.ALeg, ref.Epoch, epoch, first.ALeg)
		}
		head = opening
	}
}
