package session

import (
	"fmt"
	"testing"

	"github.com/tether-dev/tether/internal/dialect"
)

// Two sessions of one principal with the same history, turn for turn (the
// same script run in two terminals against a deterministic model): the
// prefix records both commit name whichever committed last, but each
// session keeps its own A-leg through its turns and its compactions, and
// neither forks from the other. A third session opening with the same
// message later is a conversation of its own.
func TestTwinSessionsKeepTheirOwnALegs(t *testing.T) {
	r := exclusiveResolver(t, newMemStore())
	hdr := []map[string]string{
		{"X-Claude-Code-Session-Id": "11111111-cf9b-4dc3-a40e-d141fb109f4f"},
		{"X-Claude-Code-Session-Id": "22222222-cf9b-4dc3-a40e-d141fb109f4f"},
	}
	hist := conversation("twin", 4)
	var aleg [2]string
	for n := 1; n <= len(hist); n += 2 {
		for s := range 2 {
			ref := turn(t, r, "alice", chatView(t, hdr[s], hist[:n]...), Hints{})
			want := EventContinue
			if n == 1 {
				want, aleg[s] = EventNew, ref.ALeg
			}
			if ref.Event != want || ref.ALeg != aleg[s] {
				t.Fatalf("session %d, %d messages: %s on %s, want %s on %s", s, n, ref.Event, ref.ALeg, want, aleg[s])
			}
		}
	}
	if aleg[0] == aleg[1] {
		t.Fatalf("both sessions on %s", aleg[0])
	}
	// A third session opening with the same message after the others
	// moved on: a new conversation, not a fork of either.
	late := turn(t, r, "alice", chatView(t, map[string]string{"X-Claude-Code-Session-Id": "33333333-cf9b-4dc3-a40e-d141fb109f4f"}, hist[:1]...), Hints{})
	if late.Event != EventNew || late.ALeg == aleg[0] || late.ALeg == aleg[1] {
		t.Errorf("a late third session's first message: %s on %s (the twins are on %s, %s)", late.Event, late.ALeg, aleg[0], aleg[1])
	}
	// Both compact with the same summary and open the next epoch with the
	// same words.
	opening := []msg{u(continued + compactionSummary), u("Continue.")}
	for s := range 2 {
		comp := append(append([]msg{}, hist...), u("Your task is to create a detailed summary of the conversation so far."))
		cref := turn(t, r, "alice", chatView(t, hdr[s], comp...), Hints{Compaction: true})
		if cref.ALeg != aleg[s] {
			t.Fatalf("session %d: compaction on %s, want %s", s, cref.ALeg, aleg[s])
		}
		if err := r.RecordSummary(t.Context(), cref, compactionSummary); err != nil {
			t.Fatal(err)
		}
	}
	for s := range 2 {
		ref := turn(t, r, "alice", chatView(t, hdr[s], opening...), Hints{PostCompaction: true})
		if ref.Event != EventEpoch || ref.ALeg != aleg[s] || ref.Epoch != 1 {
			t.Errorf("session %d after its compaction: %s on %s epoch %d, want epoch 1 of %s", s, ref.Event, ref.ALeg, ref.Epoch, aleg[s])
		}
	}
	for s := range 2 {
		ref := turn(t, r, "alice", chatView(t, hdr[s], append(opening, a("Continuing."), u("Next: the migration."))...), Hints{})
		if ref.Event != EventContinue || ref.ALeg != aleg[s] || ref.Epoch != 1 {
			t.Errorf("session %d, next turn: %s on %s epoch %d, want epoch 1 of %s", s, ref.Event, ref.ALeg, ref.Epoch, aleg[s])
		}
	}
}

// A fingerprint record is read once per turn and updated by the turn's
// commit: two conversations saying the same line, resolved before either
// commits, each extend the record as they read it, and neither changes
// the record the other committed (the cache hands both the same list, and
// the commit that encodes one must not see the other's A-leg written into
// it).
func TestFingerprintCommitsDoNotShareTheirLists(t *testing.T) {
	r := exclusiveResolver(t, newMemStore()) // records read from the cache
	ctx := t.Context()
	line := "please keep the public REST API exactly as it is today"
	key := r.key(kindFinger, "alice", normUser(line))
	conv := func(i int) []msg {
		return []msg{u(fmt.Sprintf("conversation %d: build the inventory service", i)), a("On it."), u(line)}
	}
	for i := range 3 {
		turn(t, r, "alice", chatView(t, nil, conv(i)...), Hints{})
	}
	var refs []Ref
	var views []*dialect.View
	for i := 3; i < 5; i++ {
		v := chatView(t, nil, conv(i)...)
		ref, err := r.Resolve(ctx, "alice", v, Hints{})
		if err != nil {
			t.Fatal(err)
		}
		refs, views = append(refs, ref), append(views, v)
	}
	if err := r.Commit(ctx, refs[0], views[0]); err != nil {
		t.Fatal(err)
	}
	first, _ := r.cached("alice", key)
	if n := len(first.Legs); n == 0 || first.Legs[n-1] != refs[0].ALeg {
		t.Fatalf("after the first commit the line's A-legs are %v, want %s last", first.Legs, refs[0].ALeg)
	}
	if err := r.Commit(ctx, refs[1], views[1]); err != nil {
		t.Fatal(err)
	}
	if n := len(first.Legs); first.Legs[n-1] != refs[0].ALeg {
		t.Errorf("the second commit rewrote the first one's list: %v, want %s last", first.Legs, refs[0].ALeg)
	}
}
