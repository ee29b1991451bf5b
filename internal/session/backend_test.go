package session

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/store/memstore"
	"github.com/tether-dev/tether/internal/store/sqlitestore"
)

// TestResumeOnSQLite replays a real capture across a process restart on the
// embedded store: the reopened database resolves the rest of the
// conversation, epoch included, onto the same A-leg.
func TestResumeOnSQLite(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "tether.db")
	ac := agentCases[1] // claude
	caps := loadCaptures(t, ac.name)

	st, err := sqlitestore.Open(ctx, path, sqlitestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, comp := replay(t, newTestResolver(st), "alice", ac, caps, ac.post, true, nil)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st, err = sqlitestore.Open(ctx, path, sqlitestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ref, err := newTestResolver(st).Resolve(ctx, "alice", caps[ac.post].view(t), Hints{})
	if err != nil {
		t.Fatal(err)
	}
	if ref.Event != EventEpoch || ref.ALeg != comp.ALeg || ref.Epoch != 1 {
		t.Errorf("after reopen: %s on %s epoch %d, want epoch 1 on %s", ref.Event, ref.ALeg, ref.Epoch, comp.ALeg)
	}
}

func TestMemstoreBackend(t *testing.T) {
	st := memstore.New(memstore.Options{})
	hist := conversation("mem", 3)
	first := turn(t, newTestResolver(st), "alice", chatView(t, nil, hist[:3]...), Hints{})
	next := turn(t, newTestResolver(st), "alice", chatView(t, nil, hist[:5]...), Hints{})
	if next.Event != EventContinue || next.ALeg != first.ALeg {
		t.Errorf("%s on %s, want continue on %s", next.Event, next.ALeg, first.ALeg)
	}
}

// On the embedded store, continuations of one A-leg that come faster than
// Options.Coalesce write the newest head only: the turns passed over leave
// no head record, each turn's caller learns its outcome, a write of the
// A-leg that is not a continuation (the summary of a compaction) lands
// after what waited, and a restart continues from the newest head, or,
// when a kill lost what waited, from the newest head written.
func TestCoalescedContinuationsOnSQLite(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "tether.db")
	secret := []byte("coalesce-test-secret-0123456789ab")
	open := func() (*sqlitestore.Store, *Resolver) {
		st, err := sqlitestore.Open(ctx, path, sqlitestore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		return st, NewResolver(st, Options{Secret: secret, Exclusive: true, Coalesce: time.Hour})
	}
	st, r := open()
	hdr := map[string]string{"X-Claude-Code-Session-Id": "coalesce-session"}
	hist := conversation("coalesce", 3)
	first := turn(t, r, "alice", chatView(t, hdr, hist...), Hints{}) // a new branch: written at once

	headKey := func(ref Ref) string { return r.key(kindHead, "alice", string(ref.hist[len(ref.hist)-1].chain[:])) }
	stored := func(keys ...string) map[string][]byte {
		got, err := st.GetLineage(ctx, "alice", keys)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	// behind commits n continuations behind and returns their refs and the
	// outcomes of their writes, run as the preserve engine runs them.
	behind := func(n int) ([]Ref, chan error) {
		var refs []Ref
		outcomes := make(chan error, n)
		for i := range n {
			hist = append(hist, a(fmt.Sprintf("calling tool %d", len(hist))), u(fmt.Sprintf("tool %d said: fine", i)))
			v := chatView(t, hdr, hist...)
			ref, err := r.Resolve(ctx, "alice", v, Hints{})
			if err != nil {
				t.Fatal(err)
			}
			if ref.Event != EventContinue || ref.ALeg != first.ALeg {
				t.Fatalf("turn %d: %s on %s, want a continuation of %s", i, ref.Event, ref.ALeg, first.ALeg)
			}
			write, err := r.CommitBehind(ctx, ref, v)
			if err != nil || write == nil {
				t.Fatalf("CommitBehind: %v", err)
			}
			go func() { outcomes <- write() }()
			refs = append(refs, ref)
		}
		return refs, outcomes
	}

	// ended waits for n outcomes; a write nobody queues fails the test
	// instead of hanging it.
	ended := func(outcomes chan error, n int) {
		t.Helper()
		for range n {
			select {
			case err := <-outcomes:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("a continuation's write never ended")
			}
		}
	}

	refs, outcomes := behind(10)
	if got := stored(headKey(refs[9])); len(got) != 0 {
		t.Fatalf("the newest head was written before its interval ended")
	}
	// A compaction's summary of the newest turn is written at once, after
	// the continuation waiting: the store's A-leg head is the newest turn,
	// marked compacted (the other order would leave it unmarked).
	if err := r.RecordSummary(ctx, refs[9], "Summary of the work so far: the users table has a migration now."); err != nil {
		t.Fatal(err)
	}
	ended(outcomes, 10)
	var keys []string
	for _, ref := range refs {
		keys = append(keys, headKey(ref))
	}
	got := stored(keys...)
	if len(got) != 1 || got[headKey(refs[9])] == nil {
		t.Errorf("%d of the 10 turns' head records were written, want the newest one only", len(got))
	}
	var head record
	if err := json.Unmarshal(stored(r.alegKey("alice", first.ALeg))[r.alegKey("alice", first.ALeg)], &head); err != nil {
		t.Fatal(err)
	}
	if head.Head != headKey(refs[9]) || !head.Compacted {
		t.Errorf("stored A-leg head: turn %d, compacted %v; want the newest turn (%d), compacted", head.Turn, head.Compacted, refs[9].Turn)
	}

	// Continuations after the summary, flushed, then more that a kill loses.
	hist = append(hist, a("resuming"), u("carry on with the endpoint"))
	st.Close()
	st, r = open()
	refs, outcomes = behind(3)
	r.Flush()
	ended(outcomes, 3)
	written := refs[2]
	_, lost := behind(4) // never queued: the process is killed
	st.Close()
	killed := r
	st, r = open()
	hist = append(hist, a("after the restart"), u("where were we"))
	v := chatView(t, hdr, hist...)
	healed, err := r.Resolve(ctx, "alice", v, Hints{})
	if err != nil {
		t.Fatal(err)
	}
	if healed.ALeg != written.ALeg || healed.Epoch != written.Epoch || healed.Event == EventFork || healed.Event == EventNew {
		t.Errorf("after the kill: %s on %s (epoch %d); want the branch %s (epoch %d) to go on", healed.Event, healed.ALeg, healed.Epoch, written.ALeg, written.Epoch)
	}
	killed.Flush() // its store is closed: the writes fail, their waiters end
	for range 4 {
		<-lost
	}
}
