package session

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/tether-dev/tether/internal/store/backend"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestNewSessionAndContinuation(t *testing.T) {
	st := newMemStore()
	r := newTestResolver(st)
	hist := conversation("inventory", 60)
	first := turn(t, r, "alice", chatView(t, nil, hist[0]), Hints{})
	if first.Event != EventNew || first.Session == "" || first.ALeg == "" || first.Epoch != 0 {
		t.Fatalf("first turn: %+v", first)
	}
	for n := 3; n <= len(hist); n += 2 {
		ref := turn(t, r, "alice", chatView(t, nil, hist[:n]...), Hints{})
		if ref.Event != EventContinue || ref.ALeg != first.ALeg || ref.Session != first.Session {
			t.Fatalf("turn %d: %s on %s, want continue on %s", n, ref.Event, ref.ALeg, first.ALeg)
		}
		if ref.Turn != n+1 || ref.Ordinal != Ordinal(0, n+1) { // +1: the system prompt
			t.Fatalf("turn %d: Turn %d Ordinal %d", n, ref.Turn, ref.Ordinal)
		}
	}
	// An unrelated conversation of the same principal is a new session.
	other := turn(t, r, "alice", chatView(t, nil, u("Something else entirely: write a haiku")), Hints{})
	if other.Event != EventNew || other.Session == first.Session {
		t.Errorf("unrelated conversation: %s in %s", other.Event, other.Session)
	}
}

func TestSystemPromptAndVolatileFieldsIgnored(t *testing.T) {
	r := newTestResolver(newMemStore())
	hist := conversation("p", 3)
	ref := turn(t, r, "alice", chatView(t, nil, hist[:3]...), Hints{})
	// chatView's system prompt changes with every length; whitespace too.
	hist[2].text = "  " + hist[2].text + "\r\n"
	next, err := r.Resolve(context.Background(), "alice", chatView(t, nil, hist[:5]...), Hints{})
	if err != nil {
		t.Fatal(err)
	}
	if next.Event != EventContinue || next.ALeg != ref.ALeg {
		t.Errorf("got %s on %s, want continue on %s", next.Event, next.ALeg, ref.ALeg)
	}
}

func TestFork(t *testing.T) {
	r := newTestResolver(newMemStore())
	base := conversation("base", 3)
	root := turn(t, r, "alice", chatView(t, nil, base[:5]...), Hints{})
	left := append(append([]msg{}, base[:6]...), u("left: continue along the original plan"))
	l1 := turn(t, r, "alice", chatView(t, nil, left...), Hints{})
	if l1.Event != EventContinue || l1.ALeg != root.ALeg {
		t.Fatalf("left: %s on %s", l1.Event, l1.ALeg)
	}
	// Edit of turn 3 after the A-leg moved on: a fork from the shared
	// prefix (base[:5] was the committed request).
	right := append(append([]msg{}, base[:5]...), a("a different answer"), u("right: take the alternative"))
	r1 := turn(t, r, "alice", chatView(t, nil, right...), Hints{})
	if r1.Event != EventFork || r1.ALeg == root.ALeg || r1.ParentALeg != root.ALeg || r1.Session != root.Session {
		t.Fatalf("right: %+v", r1)
	}
	if r1.ForkOrdinal != Ordinal(0, 6) { // system + 5 shared messages
		t.Errorf("fork ordinal %d, want %d", r1.ForkOrdinal, Ordinal(0, 6))
	}
	// Both branches now continue on their own.
	l2 := turn(t, r, "alice", chatView(t, nil, append(left, a("ok"), u("left again please"))...), Hints{})
	r2 := turn(t, r, "alice", chatView(t, nil, append(right, a("ok"), u("right again please"))...), Hints{})
	if l2.Event != EventContinue || l2.ALeg != root.ALeg {
		t.Errorf("left continues: %s on %s", l2.Event, l2.ALeg)
	}
	if r2.Event != EventContinue || r2.ALeg != r1.ALeg {
		t.Errorf("right continues: %s on %s", r2.Event, r2.ALeg)
	}
}

// TestForkUnderNewClientSession: a client that copies a conversation into a
// new session of its own (Claude Code --fork-session: same history, new
// session id) forks the branch at its head; it does not take the original
// over, and both go on separately.
func TestForkUnderNewClientSession(t *testing.T) {
	r := newTestResolver(newMemStore())
	orig := map[string]string{"x-claude-code-session-id": "0b577838-aaaa"}
	copyHdr := map[string]string{"x-claude-code-session-id": "d7ace0b3-bbbb"}
	hist := conversation("fork", 3)
	root := turn(t, r, "alice", chatView(t, orig, hist[:5]...), Hints{})
	forked := append(append([]msg{}, hist[:6]...), u("in the copy: use Redis instead"))
	f := turn(t, r, "alice", chatView(t, copyHdr, forked...), Hints{})
	if f.Event != EventFork || f.ALeg == root.ALeg || f.ParentALeg != root.ALeg {
		t.Fatalf("copy under a new session id: %s on %s (parent %s), want a fork of %s", f.Event, f.ALeg, f.ParentALeg, root.ALeg)
	}
	if f.ForkOrdinal != Ordinal(0, 6) { // system + the 5 messages of the original's head
		t.Errorf("fork ordinal %d, want %d", f.ForkOrdinal, Ordinal(0, 6))
	}
	// The original goes on from its own head under its own id.
	o2 := turn(t, r, "alice", chatView(t, orig, append(append([]msg{}, hist[:6]...), u("in the original: add metrics"))...), Hints{})
	if o2.Event != EventContinue || o2.ALeg != root.ALeg {
		t.Errorf("original: %s on %s, want continue on %s", o2.Event, o2.ALeg, root.ALeg)
	}
	f2 := turn(t, r, "alice", chatView(t, copyHdr, append(forked, a("ok"), u("in the copy again"))...), Hints{})
	if f2.Event != EventContinue || f2.ALeg != f.ALeg {
		t.Errorf("copy: %s on %s, want continue on %s", f2.Event, f2.ALeg, f.ALeg)
	}
	// Without client ids (Pi) the same history is one branch, as before.
	r2 := newTestResolver(newMemStore())
	p1 := turn(t, r2, "alice", chatView(t, nil, hist[:5]...), Hints{})
	if p2 := turn(t, r2, "alice", chatView(t, nil, forked...), Hints{}); p2.Event != EventContinue || p2.ALeg != p1.ALeg {
		t.Errorf("no client id: %s on %s, want continue on %s", p2.Event, p2.ALeg, p1.ALeg)
	}
}

func TestReset(t *testing.T) {
	r := newTestResolver(newMemStore())
	hdr := map[string]string{"x-session-id": "ses_abc123"}
	first := turn(t, r, "alice", chatView(t, hdr, conversation("one", 2)...), Hints{})
	reset := turn(t, r, "alice", chatView(t, hdr, u("a completely different task: rename the package")), Hints{})
	if reset.Event != EventReset || reset.Session != first.Session || reset.ALeg == first.ALeg || reset.Hint == "" {
		t.Fatalf("reset: %+v (first %+v)", reset, first)
	}
	if strings.Contains(reset.Hint, "ses_abc123") {
		t.Errorf("Ref.Hint carries the raw hint")
	}
}

// TestResetReportsPreviousCount: a reset says how many messages the branch
// the client hint named had (a caller judges a silent compaction from it),
// and the same request resolved as a post-compaction turn opens that
// branch's next epoch instead.
func TestResetReportsPreviousCount(t *testing.T) {
	r := newTestResolver(newMemStore())
	hdr := map[string]string{"x-claude-code-session-id": "silent-1"}
	hist := conversation("silent", 5)
	first := turn(t, r, "alice", chatView(t, hdr, hist...), Hints{})
	shrunk := chatView(t, hdr, u("Summary of the session so far."), a("ok"), u("go on"))
	reset, err := r.Resolve(context.Background(), "alice", shrunk, Hints{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(shrunk.Messages()); reset.Event != EventReset || reset.PrevTurn != first.Turn || reset.Turn != n {
		t.Fatalf("reset: %s, previous %d turn %d; want reset, previous %d turn %d", reset.Event, reset.PrevTurn, reset.Turn, first.Turn, n)
	}
	epoch, err := r.Resolve(context.Background(), "alice", shrunk, Hints{PostCompaction: true})
	if err != nil {
		t.Fatal(err)
	}
	if epoch.Event != EventEpoch || epoch.ALeg != first.ALeg || epoch.Epoch != 1 {
		t.Errorf("as a post-compaction turn: %s on %s epoch %d, want epoch 1 on %s", epoch.Event, epoch.ALeg, epoch.Epoch, first.ALeg)
	}
}

func TestResumeAfterRestart(t *testing.T) {
	st := newMemStore()
	hist := conversation("durable", 4)
	r1 := newTestResolver(st)
	first := turn(t, r1, "alice", chatView(t, nil, hist[:5]...), Hints{})
	r2 := newTestResolver(st) // a restart, or a second replica
	next := turn(t, r2, "alice", chatView(t, nil, hist[:7]...), Hints{})
	if next.Event != EventContinue || next.ALeg != first.ALeg || next.Session != first.Session {
		t.Fatalf("after restart: %s on %s, want continue on %s", next.Event, next.ALeg, first.ALeg)
	}
	// The first replica sees the head the second one moved.
	fork := append(append([]msg{}, hist[:5]...), a("other"), u("diverging after the restart"))
	f := turn(t, r1, "alice", chatView(t, nil, fork...), Hints{})
	if f.Event != EventFork || f.ParentALeg != first.ALeg {
		t.Errorf("replica 1 after replica 2 moved the head: %s parent %s", f.Event, f.ParentALeg)
	}
	// A different secret is a different namespace.
	r3 := NewResolver(st, Options{Secret: []byte("another secret, another keyspace")})
	if ref := turn(t, r3, "alice", chatView(t, nil, hist[:7]...), Hints{}); ref.Event != EventNew {
		t.Errorf("other secret: %s", ref.Event)
	}
}

func TestSameHintTwoPrincipals(t *testing.T) {
	r := newTestResolver(newMemStore())
	hdr := map[string]string{"X-Claude-Code-Session-Id": "3f0d8b50-cf9b-4dc3-a40e-d141fb109f4f"}
	hist := conversation("same", 2)
	ra := turn(t, r, "alice", chatView(t, hdr, hist[:3]...), Hints{})
	rb := turn(t, r, "bob", chatView(t, hdr, hist[:3]...), Hints{})
	if ra.Session == rb.Session || ra.ALeg == rb.ALeg || ra.Hint == rb.Hint {
		t.Fatalf("same hint, two principals share lineage: %+v / %+v", ra, rb)
	}
	if rb.Event != EventNew {
		t.Errorf("bob's first turn: %s", rb.Event)
	}
	// Bob continuing sees his own A-leg, never Alice's.
	next := turn(t, r, "bob", chatView(t, hdr, hist...), Hints{})
	if next.ALeg != rb.ALeg || next.Event != EventContinue {
		t.Errorf("bob continues: %s on %s", next.Event, next.ALeg)
	}
}

func TestHintsNormalised(t *testing.T) {
	huge := strings.Repeat("x", 129)
	cases := []struct {
		name string
		hdr  map[string]string
		want bool // a hint is used
	}{
		{"opencode", map[string]string{"x-session-id": "ses_dc884e03bffepuzWGzr2btJ5gL"}, true},
		{"codex thread", map[string]string{"thread-id": "01a2377a-90b7-7f51-ac6e-7b8f9fa9b00a"}, true},
		{"huge", map[string]string{"x-session-id": huge}, false},
		{"spaces", map[string]string{"x-session-id": "two words"}, false},
		{"control", map[string]string{"x-session-id": "a\x01b"}, false},
		{"non-ascii", map[string]string{"x-session-id": "sés"}, false},
		{"empty", map[string]string{"x-session-id": "   "}, false},
		{"huge then good", map[string]string{"thread-id": huge, "x-session-id": "ses_ok"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newTestResolver(newMemStore())
			ref := turn(t, r, "alice", chatView(t, c.hdr, u("hello there, start the task now")), Hints{})
			if got := ref.Hint != ""; got != c.want {
				t.Errorf("hint used = %v, want %v", got, c.want)
			}
		})
	}
	// The same malformed hint on two unrelated conversations does not tie
	// them together.
	r := newTestResolver(newMemStore())
	hdr := map[string]string{"x-session-id": huge}
	a1 := turn(t, r, "alice", chatView(t, hdr, u("conversation one about databases")), Hints{})
	a2 := turn(t, r, "alice", chatView(t, hdr, u("conversation two about compilers")), Hints{})
	if a1.Session == a2.Session || a2.Event != EventNew {
		t.Errorf("ignored hint tied sessions: %s / %s (%s)", a1.Session, a2.Session, a2.Event)
	}
}

func TestClaudeUserIDForms(t *testing.T) {
	for _, uid := range []string{
		`{"device_id":"af6e","account_uuid":"","session_id":"3f0d8b50-cf9b-4dc3-a40e-d141fb109f4f"}`,
		`user_af6e_account_11111111-2222-3333-4444-555555555555_session_3f0d8b50-cf9b-4dc3-a40e-d141fb109f4f`,
	} {
		body := fmt.Sprintf(`{"model":"m","metadata":{"user_id":%q},"messages":[{"role":"user","content":"hi there, let us begin"}]}`, uid)
		v := mustParse(t, body)
		if got := hintOf(v).value; got != "claude:3f0d8b50-cf9b-4dc3-a40e-d141fb109f4f" {
			t.Errorf("user_id %q: hint %q", uid, got)
		}
	}
}

func TestNoMessageTextStored(t *testing.T) {
	st := newMemStore()
	r := newTestResolver(st)
	secret := "Zanzibar-PostgreSQL-decision-7731"
	hist := []msg{u("We decided: " + secret + " is final for the project"), a("Noted " + secret)}
	ref := turn(t, r, "alice", chatView(t, map[string]string{"x-session-id": "ses_private_hint"}, hist...), Hints{})
	if err := r.RecordSummary(context.Background(), ref, "Summary line mentioning "+secret+" in full"); err != nil {
		t.Fatal(err)
	}
	for k, v := range st.dump() {
		for _, s := range []string{"Zanzibar", "ses_private_hint", "decided"} {
			if strings.Contains(k, s) || strings.Contains(v, s) {
				t.Errorf("store holds %q in %q = %q", s, k, v)
			}
		}
	}
}

func TestCompactionDoesNotMoveHead(t *testing.T) {
	hist := conversation("c", 3)
	for _, tc := range []struct {
		name  string
		hdr   map[string]string
		start int // first committed prefix length
	}{
		{"single commit, hint", map[string]string{"X-Claude-Code-Session-Id": "7acbff2c-458d-4aa6-bdf3-db25bfa50dc9"}, 5},
		{"earlier commits, no hint", nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newTestResolver(newMemStore())
			var head Ref
			for n := tc.start; n <= 5; n += 2 {
				head = turn(t, r, "alice", chatView(t, tc.hdr, hist[:n]...), Hints{})
			}
			// In-band compaction: the last user message carries the instruction.
			comp := append(append([]msg{}, hist[:4]...), u(hist[4].text+"\nCRITICAL: Respond with TEXT ONLY."))
			cref := turn(t, r, "alice", chatView(t, tc.hdr, comp...), Hints{Compaction: true})
			if cref.Event != EventContinue || cref.ALeg != head.ALeg {
				t.Fatalf("compaction: %s on %s, want continue on %s", cref.Event, cref.ALeg, head.ALeg)
			}
			// The same edit outside a compaction is a branch.
			if ref, _ := r.Resolve(context.Background(), "alice", chatView(t, tc.hdr, comp...), Hints{}); ref.ALeg == head.ALeg {
				t.Errorf("edited last message resolved onto the head's A-leg as %s", ref.Event)
			}
			next := turn(t, r, "alice", chatView(t, tc.hdr, hist[:7]...), Hints{})
			if next.Event != EventContinue || next.ALeg != head.ALeg {
				t.Errorf("turn after an abandoned compaction: %s on %s", next.Event, next.ALeg)
			}
		})
	}
}

func TestConcurrentResolveCommit(t *testing.T) {
	st := newMemStore()
	r := newTestResolver(st)
	const convs, turns = 16, 12
	var wg sync.WaitGroup
	legs := make([][]string, convs)
	for c := range convs {
		wg.Go(func() {
			hist := conversation(fmt.Sprintf("conv-%d", c), turns)
			for n := 1; n <= len(hist); n += 2 {
				ref, err := r.Resolve(context.Background(), "alice", chatView(t, nil, hist[:n]...), Hints{})
				if err != nil {
					t.Error(err)
					return
				}
				unlock := r.Lock(ref)
				err = r.Commit(context.Background(), ref, chatView(t, nil, hist[:n]...))
				unlock()
				if err != nil {
					t.Error(err)
					return
				}
				legs[c] = append(legs[c], ref.ALeg)
			}
		})
	}
	wg.Wait()
	seen := map[string]int{}
	for c, l := range legs {
		for _, a := range l {
			if a != l[0] {
				t.Errorf("conversation %d changed A-leg mid-way", c)
			}
		}
		seen[l[0]]++
	}
	if len(seen) != convs {
		t.Errorf("%d A-legs for %d conversations", len(seen), convs)
	}
	if n := r.locks.len(); n != 0 {
		t.Errorf("%d lock entries left after all unlocked", n)
	}
}

func TestLockPerALeg(t *testing.T) {
	r := newTestResolver(newMemStore())
	a1 := Ref{Principal: "alice", ALeg: "a1"}
	a2 := Ref{Principal: "alice", ALeg: "a2"}
	unlock1 := r.Lock(a1)
	// Another A-leg does not wait.
	done := make(chan struct{})
	go func() {
		unlock := r.Lock(a2)
		unlock()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Lock on another A-leg blocked")
	}
	// The same A-leg waits for the holder.
	acquired := make(chan struct{})
	go func() {
		unlock := r.Lock(a1)
		close(acquired)
		unlock()
	}()
	select {
	case <-acquired:
		t.Fatal("second Lock of the same A-leg did not wait")
	default:
	}
	unlock1()
	unlock1() // idempotent
	<-acquired
}

func TestCacheBoundedAndHotPath(t *testing.T) {
	st := newMemStore()
	r := NewResolver(st, Options{Secret: testSecret, CacheSize: 50})
	hist := conversation("hot", 40)
	for n := 1; n <= len(hist); n += 2 {
		turn(t, r, "alice", chatView(t, nil, hist[:n]...), Hints{})
	}
	if n := r.cache.len(); n > 50 {
		t.Errorf("cache holds %d records, bound 50", n)
	}
	// A continuation costs one store round trip asking only for the new
	// prefixes and the A-leg head.
	before := st.roundTrips()
	ref, err := r.Resolve(context.Background(), "alice", chatView(t, nil, append(hist, u("one more turn"))...), Hints{})
	if err != nil {
		t.Fatal(err)
	}
	if ref.Event != EventContinue {
		t.Fatalf("event %s", ref.Event)
	}
	if got := st.roundTrips() - before; got != 1 {
		t.Errorf("%d store round trips for a hot continuation, want 1", got)
	}
}

// A turn of an agent's loop (a hinted continuation adding a tool call and
// its result, then a new user turn) costs one store read to resolve (the
// fingerprint records of new user turns included) and one write to commit; the same request again writes nothing, and a second
// resolver over the same store (another replica) resolves it alike.
func TestTurnStoreRoundTrips(t *testing.T) {
	st := newMemStore()
	r := newTestResolver(st)
	hdr := map[string]string{"X-Claude-Code-Session-Id": "loop-session"}
	hist := conversation("loop", 10)
	first := turn(t, r, "alice", chatView(t, hdr, hist...), Hints{})
	for i, next := range [][]msg{
		append(hist, a("calling the tool"), msg{"user", "tool said: fine"}),
		append(hist, a("calling the tool"), msg{"user", "tool said: fine"}, a("done"), u("now write the migration for the users table")),
	} {
		v := chatView(t, hdr, next...)
		gets, puts := st.roundTrips(), st.writes()
		ref, err := r.Resolve(t.Context(), "alice", v, Hints{})
		if err != nil {
			t.Fatal(err)
		}
		if ref.Event != EventContinue || ref.ALeg != first.ALeg {
			t.Fatalf("turn %d: %s on %s, want a continuation of %s", i, ref.Event, ref.ALeg, first.ALeg)
		}
		if err := r.Commit(t.Context(), ref, v); err != nil {
			t.Fatal(err)
		}
		// The new user turn's fingerprint record, which Commit extends,
		// is read in Resolve's one round trip.
		if reads := st.roundTrips() - gets; reads != 1 || st.writes()-puts != 1 {
			t.Errorf("turn %d: %d reads and %d writes, want 1 and 1", i, reads, st.writes()-puts)
		}
		puts = st.writes()
		again, err := r.Resolve(t.Context(), "alice", v, Hints{})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Commit(t.Context(), again, v); err != nil {
			t.Fatal(err)
		}
		if st.writes() != puts {
			t.Errorf("turn %d repeated: %d writes, want none", i, st.writes()-puts)
		}
		// Sole writer of its store, a resolver that has the records cached
		// reads nothing for the same request; sharing it, it reads once.
		for _, exclusive := range []bool{false, true} {
			sole := NewResolver(st, Options{Secret: testSecret, Exclusive: exclusive})
			warm, err := sole.Resolve(t.Context(), "alice", v, Hints{})
			if err != nil {
				t.Fatal(err)
			}
			if err := sole.Commit(t.Context(), warm, v); err != nil {
				t.Fatal(err)
			}
			gets := st.roundTrips()
			re, err := sole.Resolve(t.Context(), "alice", v, Hints{})
			if err != nil {
				t.Fatal(err)
			}
			want := map[bool]int{false: 1, true: 0}[exclusive]
			if got := st.roundTrips() - gets; got != want || re.ALeg != ref.ALeg || re.Ordinal != ref.Ordinal {
				t.Errorf("turn %d repeated, exclusive %v: %d reads, %s@%d; want %d reads, %s@%d", i, exclusive, got, re.ALeg, re.Ordinal, want, ref.ALeg, ref.Ordinal)
			}
		}
		other, err := newTestResolver(st).Resolve(t.Context(), "alice", v, Hints{})
		if err != nil {
			t.Fatal(err)
		}
		if other.ALeg != ref.ALeg || other.Event != EventContinue || other.Ordinal != ref.Ordinal {
			t.Errorf("turn %d: another replica resolves %s %s@%d, want %s %s@%d", i, other.Event, other.ALeg, other.Ordinal, ref.Event, ref.ALeg, ref.Ordinal)
		}
	}
}

// With the store's keys indexed at start (IndexKeys: a store this process
// alone writes), a turn that extends a known head reads nothing: its new
// prefixes and user turns are keys the store cannot hold. It writes once.
// A restarted process indexes what the first one wrote, so the
// conversation continues on its branch after the restart.
func TestIndexedTurnsReadNothing(t *testing.T) {
	st := newMemStore()
	start := func() *Resolver { return exclusiveResolver(t, st) }
	r := start()
	hdr := map[string]string{"X-Claude-Code-Session-Id": "indexed-session"}
	hist := conversation("indexed", 10)
	first := turn(t, r, "alice", chatView(t, hdr, hist...), Hints{})
	step := func(r *Resolver, i int, msgs []msg, reads int) {
		t.Helper()
		v := chatView(t, hdr, msgs...)
		gets, puts := st.roundTrips(), st.writes()
		ref, err := r.Resolve(t.Context(), "alice", v, Hints{})
		if err != nil {
			t.Fatal(err)
		}
		if ref.Event != EventContinue || ref.ALeg != first.ALeg {
			t.Fatalf("turn %d: %s on %s, want a continuation of %s", i, ref.Event, ref.ALeg, first.ALeg)
		}
		if err := r.Commit(t.Context(), ref, v); err != nil {
			t.Fatal(err)
		}
		if got, w := st.roundTrips()-gets, st.writes()-puts; got != reads || w != 1 {
			t.Errorf("turn %d: %d reads and %d writes, want %d and 1", i, got, w, reads)
		}
	}
	for i := range 4 {
		hist = append(hist, a(fmt.Sprintf("calling tool %d", i)), msg{"user", fmt.Sprintf("tool %d said: fine", i)})
		if i == 2 {
			hist = append(hist, a("done"), u("now write the migration for the users table"))
		}
		step(r, i, hist, 0)
	}
	// Restarted: the records are listed, not cached; the first turn reads
	// them as a cold resolver does (the prefixes, then the A-leg head they
	// name), the next reads nothing again.
	r = start()
	hist = append(hist, a("calling tool 4"), msg{"user", "tool 4 said: fine"})
	step(r, 4, hist, 2)
	hist = append(hist, a("calling tool 5"), msg{"user", "tool 5 said: fine"})
	step(r, 5, hist, 0)
}

func TestTTLExpiry(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	st := newMemStore()
	st.now = clock
	r := NewResolver(st, Options{Secret: testSecret, TTL: time.Hour, Now: clock})
	hist := conversation("ttl", 2)
	turn(t, r, "alice", chatView(t, nil, hist[:1]...), Hints{})
	now = now.Add(2 * time.Hour)
	if ref := turn(t, r, "alice", chatView(t, nil, hist[:3]...), Hints{}); ref.Event != EventNew {
		t.Errorf("after TTL: %s, want new", ref.Event)
	}
}

// TestAC21_ForkResetNewALegDeterministic: fork, reset and new-A-leg
// behaviour is deterministic, and no lineage record of one branch makes
// another branch resolve to it.
// ac21Step is one request of the AC21 flow: new, continue, forks and a reset.
type ac21Step struct {
	name string
	msgs []msg
}

var ac21Header = map[string]string{"x-session-id": "ses_ac21"}

func ac21Steps() []ac21Step {
	base := conversation("ac21", 3)
	branchA := append(append([]msg{}, base[:6]...), u("branch A: keep PostgreSQL as decided"))
	branchB := append(append([]msg{}, base[:5]...), a("alternative answer"), u("branch B: evaluate SQLite instead"))
	return []ac21Step{
		{"new", base[:1]},
		{"continue", base[:5]},
		{"extend A", branchA},
		{"fork B", branchB},
		{"A again", append(append([]msg{}, branchA...), a("ok"), u("branch A: next step"))},
		{"B again", append(append([]msg{}, branchB...), a("ok"), u("branch B: next step"))},
		{"reset", []msg{u("unrelated: write release notes for version two")}},
		{"fork B again", append(append([]msg{}, branchB...), a("yet another answer"), u("branch C off B"))},
	}
}

func TestAC21_ForkResetNewALegDeterministic(t *testing.T) {
	hdr, steps := ac21Header, ac21Steps()
	type outcome struct {
		Event   Event
		Leg     int // A-legs numbered in order of appearance
		Session int
		Parent  int // -1 none
	}
	run := func() []outcome {
		r := newTestResolver(newMemStore())
		legs, sessions := map[string]int{}, map[string]int{}
		num := func(m map[string]int, id string) int {
			if id == "" {
				return -1
			}
			if n, ok := m[id]; ok {
				return n
			}
			m[id] = len(m)
			return m[id]
		}
		var out []outcome
		for _, s := range steps {
			ref := turn(t, r, "alice", chatView(t, hdr, s.msgs...), Hints{})
			out = append(out, outcome{ref.Event, num(legs, ref.ALeg), num(sessions, ref.Session), num(legs, ref.ParentALeg)})
		}
		return out
	}
	first, second := run(), run()
	if diff := cmp.Diff(first, second); diff != "" {
		t.Fatalf("two runs differ (-first +second):\n%s", diff)
	}
	want := []outcome{
		{EventNew, 0, 0, -1},
		{EventContinue, 0, 0, -1},
		{EventContinue, 0, 0, -1},
		{EventFork, 1, 0, 0},
		{EventContinue, 0, 0, -1},
		{EventContinue, 1, 0, -1},
		{EventReset, 2, 0, -1},
		{EventFork, 3, 0, 1},
	}
	if diff := cmp.Diff(want, first); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
}

// Two replicas with one secret mint the same raw ids for the same requests:
// session, A-leg and parent A-leg ids depend on the conversation and the
// secret only, not on the clock or on which replica saw the request. Each
// replica has its own store here, so neither can read the other's ids.
func TestALegIDsAgreeAcrossReplicas(t *testing.T) {
	type ids struct{ Session, ALeg, Parent string }
	run := func(now time.Time) []ids {
		r := NewResolver(newMemStore(), Options{Secret: testSecret, Now: func() time.Time { return now }})
		var out []ids
		for _, s := range ac21Steps() {
			ref := turn(t, r, "alice", chatView(t, ac21Header, s.msgs...), Hints{})
			out = append(out, ids{ref.Session, ref.ALeg, ref.ParentALeg})
		}
		return out
	}
	t0 := time.Now() // the stores expire records by the wall clock
	first := run(t0)
	if first[3].Parent == "" || first[7].Parent == "" {
		t.Fatalf("the fork steps were not resolved as forks: %+v", first)
	}
	if diff := cmp.Diff(first, run(t0.Add(90*time.Minute+7*time.Nanosecond))); diff != "" {
		t.Fatalf("replicas minted different ids (-first +second):\n%s", diff)
	}
}

func TestErrors(t *testing.T) {
	r := newTestResolver(newMemStore())
	v := chatView(t, nil, u("hello"))
	if _, err := r.Resolve(context.Background(), "", v, Hints{}); err == nil {
		t.Error("Resolve without principal succeeded")
	}
	if _, err := r.Resolve(context.Background(), "alice", nil, Hints{}); err == nil {
		t.Error("Resolve without view succeeded")
	}
	if err := r.Commit(context.Background(), Ref{}, v); err == nil {
		t.Error("Commit without principal succeeded")
	}
	// Committing an unattributed request records nothing.
	if err := r.Commit(context.Background(), Ref{Principal: "alice", Event: EventUnattributed}, v); err != nil {
		t.Error(err)
	}
}

func BenchmarkResolve200(b *testing.B) {
	st := newMemStore()
	r := newTestResolver(st)
	hist := conversation("bench", 100)
	turn(b, r, "alice", chatView(b, nil, hist[:199]...), Hints{})
	v := chatView(b, nil, hist...)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		ref, err := r.Resolve(context.Background(), "alice", v, Hints{})
		if err != nil || ref.Event != EventContinue {
			b.Fatal(ref.Event, err)
		}
	}
}

// TestMissedCompactionUnderHint: when a compaction went by unrecognised (a
// new agent prompt), the turn after it still carries the agent's
// post-compaction marker and its session id. OpenCode opens every epoch
// with the same "What did we do so far?" message; sharing only that opener
// with the current epoch is not staying in it: it is the next epoch of the
// same branch, not a fork and not a new conversation.
func TestMissedCompactionUnderHint(t *testing.T) {
	r := newTestResolver(newMemStore())
	hdr := map[string]string{"x-session-id": "ses_missed01"}
	const opener, cont = "What did we do so far?", "Continue if you have next steps, or stop and ask for clarification if you are unsure how to proceed."
	first := turn(t, r, "alice", chatView(t, hdr, conversation("pre", 2)...), Hints{})
	post := Hints{PostCompaction: true, Agent: "opencode"}
	ep1 := []msg{u(opener), a("Summary one: building the inventory service."), u(cont)}
	e1 := turn(t, r, "alice", chatView(t, hdr, ep1...), post)
	if e1.Event != EventEpoch || e1.ALeg != first.ALeg || e1.Epoch != 1 {
		t.Fatalf("first missed compaction: %s on %s epoch %d, want epoch 1 of %s", e1.Event, e1.ALeg, e1.Epoch, first.ALeg)
	}
	more := append(append([]msg{}, ep1...), a("ok"), u("Decision: add metrics."))
	if c := turn(t, r, "alice", chatView(t, hdr, more...), post); c.Event != EventContinue || c.ALeg != first.ALeg {
		t.Fatalf("turn in epoch 1: %s on %s", c.Event, c.ALeg)
	}
	ep2 := []msg{u(opener), a("Summary two: metrics were added."), u(cont)}
	e2 := turn(t, r, "alice", chatView(t, hdr, ep2...), post)
	if e2.Event != EventEpoch || e2.ALeg != first.ALeg || e2.Epoch != 2 {
		t.Errorf("second missed compaction: %s on %s epoch %d, want epoch 2 of %s", e2.Event, e2.ALeg, e2.Epoch, first.ALeg)
	}
}

// TestUnrecognisedSummarisationIsSide: a short request under the branch's
// client hint that quotes its conversation in <conversation> form (a
// summarisation request no rule recognised) is attributed to the branch as
// a side request; it neither resets the branch nor remaps the hint.
func TestUnrecognisedSummarisationIsSide(t *testing.T) {
	r := newTestResolver(newMemStore())
	hdr := map[string]string{"x-session-id": "ses_side01"}
	hist := []msg{u("We are building an inventory service; use PostgreSQL for storage please"), a("ok"), u("Constraint: never change the public REST API of the service")}
	first := turn(t, r, "alice", chatView(t, hdr, hist...), Hints{})
	quote := "Here is the conversation so far:\n\n<conversation>\n[User]: " + hist[0].text + "\n\n[Assistant]: ok\n\n[User]: " + hist[2].text + "\n</conversation>\n\nSummarise it in a brand-new way."
	side, err := r.Resolve(context.Background(), "alice", chatView(t, hdr, u(quote)), Hints{})
	if err != nil {
		t.Fatal(err)
	}
	if side.Event != EventOutOfBand || !side.Side || side.ALeg != first.ALeg {
		t.Fatalf("quoting request: %s side=%v on %s, want a side request of %s", side.Event, side.Side, side.ALeg, first.ALeg)
	}
	if err := r.Commit(context.Background(), side, chatView(t, hdr, u(quote))); err != nil {
		t.Fatal(err)
	}
	next := turn(t, r, "alice", chatView(t, hdr, append(hist, a("done"), u("next step please, carry on with the work"))...), Hints{})
	if next.Event != EventContinue || next.ALeg != first.ALeg {
		t.Errorf("after the side request: %s on %s, want continue on %s", next.Event, next.ALeg, first.ALeg)
	}
	// A genuinely new conversation under the same client id is still a
	// reset, found in one store round trip (no side-request lookup).
	st := r.st.(*memStore)
	before := st.roundTrips()
	reset, err := r.Resolve(context.Background(), "alice", chatView(t, hdr, u("a completely different task: rename the package")), Hints{})
	if err != nil {
		t.Fatal(err)
	}
	if reset.Event != EventReset || reset.Side {
		t.Errorf("new conversation: %s side=%v, want reset", reset.Event, reset.Side)
	}
	if got := st.roundTrips() - before; got != 1 {
		t.Errorf("%d store round trips for a new conversation, want 1", got)
	}
}

// TestOutOfBandFollowsForkedClientSession: a client that forks a session
// into a new one of its own (OpenCode --fork) copies the summary, and with
// it the original branch's epoch token. The fork's own summarisation
// request carries that token, but the client's session id names the fork:
// it is the fork's compaction, not the original's.
func TestOutOfBandFollowsForkedClientSession(t *testing.T) {
	r := newTestResolver(newMemStore())
	orig := map[string]string{"x-session-id": "ses_orig0001"}
	copyHdr := map[string]string{"x-session-id": "ses_fork0002"}
	hist := conversation("tok", 3)
	root := turn(t, r, "alice", chatView(t, orig, hist[:5]...), Hints{})
	tok := r.EpochToken(root)
	forked := append(append([]msg{}, hist[:6]...), u("in the copy: use Redis instead of the cache we had"))
	f := turn(t, r, "alice", chatView(t, copyHdr, forked...), Hints{})
	if f.Event != EventFork {
		t.Fatalf("copy: %s, want fork", f.Event)
	}
	text := "<conversation>\n[User]: " + forked[len(forked)-1].text + "\n</conversation>\n\n<prior-summary>\nsummary\n<continuity-capsule ref=\"" + tok + "\" revision=\"2\" digest=\"x\">\n</continuity-capsule>\n</prior-summary>"
	for _, c := range []struct {
		name string
		hdr  map[string]string
		want string
	}{{"fork's", copyHdr, f.ALeg}, {"original's", orig, root.ALeg}} {
		ref, err := r.Resolve(context.Background(), "alice", chatView(t, c.hdr, u(text)), Hints{Compaction: true, OutOfBand: true})
		if err != nil {
			t.Fatal(err)
		}
		if ref.Event != EventOutOfBand || ref.ALeg != c.want {
			t.Errorf("%s summarisation request: %s on %s, want out_of_band on %s", c.name, ref.Event, ref.ALeg, c.want)
		}
	}
}

// Records the index answers for are the ones in the store: with a cache
// too small to hold a conversation's records, every turn still finds the
// ones its previous turns wrote (they were noted before being written).
func TestIndexedTurnsWithEvictedRecords(t *testing.T) {
	st := newMemStore()
	r := NewResolver(st, Options{Secret: testSecret, Exclusive: true, CacheSize: 1})
	if err := r.IndexKeys(t.Context()); err != nil {
		t.Fatal(err)
	}
	hdr := map[string]string{"X-Claude-Code-Session-Id": "evicted-session"}
	hist := conversation("evicted", 6)
	first := turn(t, r, "alice", chatView(t, hdr, hist...), Hints{})
	for i := range 4 {
		hist = append(hist, a(fmt.Sprintf("calling tool %d", i)), msg{"user", fmt.Sprintf("tool %d said: fine", i)})
		if got := turn(t, r, "alice", chatView(t, hdr, hist...), Hints{}); got.Event != EventContinue || got.ALeg != first.ALeg {
			t.Fatalf("turn %d: %s on %s, want a continuation of %s", i, got.Event, got.ALeg, first.ALeg)
		}
	}
}

// The index of keys is bounded: past its size it answers "may hold" for
// every key (a read each), never "absent" for one it dropped.
func TestKnownKeysBounded(t *testing.T) {
	k := newKnown(3)
	k.ready.Store(true)
	for i := range 3 {
		k.add("alice", fmt.Sprint(i))
	}
	if !k.absent("alice", "new") || k.absent("alice", "1") {
		t.Fatal("within its bound the index must tell absent and held keys apart")
	}
	k.add("alice", "3")
	for _, key := range []string{"0", "3", "new"} {
		if k.absent("alice", key) {
			t.Errorf("past its bound the index answered %q absent", key)
		}
	}
}

// prefetchStore is a memStore that also reads a capsule in the lineage
// round trip (backend.CapsulePrefetcher), as PostgreSQL does.
type prefetchStore struct {
	*memStore
	capsules map[string]backend.CapsuleRecord // by A-leg
	asked    []string                         // the A-legs asked for, in order
}

func (s *prefetchStore) GetLineageWithCapsule(ctx context.Context, principal string, keys []string, aLeg string) (map[string][]byte, backend.CapsuleRecord, bool, error) {
	got, err := s.GetLineage(ctx, principal, keys)
	s.asked = append(s.asked, aLeg)
	c, ok := s.capsules[aLeg]
	return got, c, ok, err
}

// TestCapsuleReadWithLineage: with a store that can, a turn that continues
// a known head and adds a user message (or is past a compaction) reads the
// A-leg's capsule in its lineage round trip, and the Ref hands it out for
// that A-leg only; a turn that adds no user message, a cold turn and a
// fork that leaves the head's A-leg get none.
func TestCapsuleReadWithLineage(t *testing.T) {
	st := &prefetchStore{memStore: newMemStore(), capsules: map[string]backend.CapsuleRecord{}}
	r := NewResolver(st, Options{Secret: testSecret}) // shared: every turn reads
	hdr := map[string]string{"X-Claude-Code-Session-Id": "prefetch-session"}
	hist := conversation("prefetch", 3)
	first := turn(t, r, "alice", chatView(t, hdr, hist...), Hints{})
	if _, _, ok := first.Capsule(); ok || len(st.asked) != 0 {
		t.Fatalf("a cold turn read a capsule (asked %q)", st.asked)
	}
	st.capsules[first.ALeg] = backend.CapsuleRecord{Principal: "alice", ALeg: first.ALeg, Revision: 7, Data: []byte(`{"v":1}`)}

	hist = append(hist, a("one more thought, no question"))
	quiet := turn(t, r, "alice", chatView(t, hdr, hist...), Hints{})
	if _, _, ok := quiet.Capsule(); ok || len(st.asked) != 0 {
		t.Fatalf("a turn without a user message read a capsule (asked %q)", st.asked)
	}

	gets := st.roundTrips()
	hist = append(hist, u("now add the reservation endpoint, with tests"))
	said := turn(t, r, "alice", chatView(t, hdr, hist...), Hints{})
	rec, found, ok := said.Capsule()
	if !ok || !found || rec.Revision != 7 || string(rec.Data) != `{"v":1}` || said.ALeg != first.ALeg {
		t.Fatalf("user turn: Capsule() = %+v, %v, %v on %s; want revision 7 of %s", rec, found, ok, said.ALeg, first.ALeg)
	}
	if n := st.roundTrips() - gets; n != 1 {
		t.Errorf("user turn: %d lineage round trips, want 1 (the capsule with it)", n)
	}

	// A fork from the quiet turn's history: the read named the A-leg of
	// that (cached) head, the turn resolves to a new one, so the Ref hands
	// nothing out.
	fork := append(slices.Clone(hist[:len(hist)-1]), u("start over: use SQLite instead"))
	st.asked = nil
	forked := turn(t, r, "alice", chatView(t, hdr, fork...), Hints{})
	if forked.ALeg == first.ALeg {
		t.Fatalf("the fork stayed on %s (%s)", forked.ALeg, forked.Event)
	}
	if len(st.asked) == 0 {
		t.Fatal("the fork's user message did not read the head A-leg's capsule with the lineage")
	}
	if _, _, ok := forked.Capsule(); ok {
		t.Errorf("the fork to %s was handed the capsule read for %s", forked.ALeg, st.asked[0])
	}
}

// gatedStore holds every lineage write until released (a write still on
// its way), or drops them (a process killed before they landed).
type gatedStore struct {
	*memStore
	gate chan struct{} // nil: writes go through
	drop bool
}

func (s *gatedStore) PutLineages(ctx context.Context, principal string, puts []backend.LineagePut) error {
	if s.drop {
		return nil
	}
	if s.gate != nil {
		<-s.gate
	}
	return s.memStore.PutLineages(ctx, principal, puts)
}

// queuingStore is a gatedStore that takes lineage without its caller
// waiting (backend.LineageEnqueuer), as SQLite does.
type queuingStore struct{ *gatedStore }

func (s queuingStore) EnqueueLineages(principal string, puts []backend.LineagePut) <-chan error {
	done := make(chan error, 1)
	go func() { done <- s.PutLineages(context.Background(), principal, puts) }()
	return done
}

// exclusiveResolver is a resolver of a store this process alone writes,
// its keys listed as at start.
func exclusiveResolver(t *testing.T, st Store) *Resolver {
	t.Helper()
	r := NewResolver(st, Options{Secret: testSecret, Exclusive: true})
	if err := r.IndexKeys(t.Context()); err != nil {
		t.Fatal(err)
	}
	return r
}

// A turn committed behind (CommitBehind: nobody waits for the write) is
// known to the resolver before its write runs, let alone lands: the next
// turn, arriving meanwhile, continues the branch and reads nothing; a
// read of the store meanwhile does not take it back. Whether the caller
// runs the write or the store queues it.
func TestCommitBehindKnownBeforeItLands(t *testing.T) {
	for _, tc := range []struct {
		name  string
		store func(*gatedStore) Store
	}{
		{"written by the caller", func(g *gatedStore) Store { return g }},
		{"queued in the store", func(g *gatedStore) Store { return queuingStore{g} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gated := &gatedStore{memStore: newMemStore()}
			st := gated.memStore
			r := exclusiveResolver(t, tc.store(gated))
			hdr := map[string]string{"X-Claude-Code-Session-Id": "ride-session"}
			hist := conversation("ride", 3)
			first := turn(t, r, "alice", chatView(t, hdr, hist...), Hints{})

			gated.gate = make(chan struct{})
			hist = append(hist, a("calling the linter"), u("linter said: fine"))
			v := chatView(t, hdr, hist...)
			ref, err := r.Resolve(t.Context(), "alice", v, Hints{})
			if err != nil {
				t.Fatal(err)
			}
			write, err := r.CommitBehind(t.Context(), ref, v)
			if err != nil || write == nil {
				t.Fatalf("CommitBehind = %v, %v", write != nil, err)
			}
			done := make(chan error, 1)
			go func() { done <- write() }() // held at the store
			gets := st.roundTrips()
			hist = append(hist, a("calling the tests"), u("tests said: ok"))
			next, err := r.Resolve(t.Context(), "alice", chatView(t, hdr, hist...), Hints{})
			if err != nil {
				t.Fatal(err)
			}
			if next.Event != EventContinue || next.ALeg != first.ALeg || st.roundTrips() != gets {
				t.Errorf("next turn while the write waits: %s on %s with %d reads; want a continuation of %s with none",
					next.Event, next.ALeg, st.roundTrips()-gets, first.ALeg)
			}
			// A read of the store meanwhile (a hinted request reads the
			// A-leg's head as the store has it) brings back the older
			// head: it must not replace the one held.
			ak := r.alegKey("alice", first.ALeg)
			held, _ := r.cached("alice", ak)
			if _, err := r.fetch(t.Context(), "alice", []string{ak}); err != nil {
				t.Fatal(err)
			}
			if got, _ := r.cached("alice", ak); got.Head != held.Head || held.Head == "" {
				t.Errorf("a store read while the write waits moved the cached head back (%q, held %q)", got.Head, held.Head)
			}
			close(gated.gate)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A continuation whose records never landed (the process was killed
// before its write did): after a restart the next turn finds the head
// before it and continues the same A-leg, whose records it writes.
func TestLostContinuationHeals(t *testing.T) {
	st := &gatedStore{memStore: newMemStore()}
	start := func() *Resolver { return exclusiveResolver(t, st) }
	r := start()
	hdr := map[string]string{"X-Claude-Code-Session-Id": "healing-session"}
	hist := conversation("healing", 3)
	first := turn(t, r, "alice", chatView(t, hdr, hist...), Hints{})
	hist = append(hist, a("calling the linter"), u("linter said: fine"))
	turn(t, r, "alice", chatView(t, hdr, hist...), Hints{})

	st.drop = true // killed before these land
	hist = append(hist, a("calling the tests"), u("tests said: ok"), a("both pass"), u("now add the migration for the users table"))
	lost := turn(t, r, "alice", chatView(t, hdr, hist...), Hints{})
	if lost.Event != EventContinue || lost.ALeg != first.ALeg {
		t.Fatalf("turn before the kill: %s on %s", lost.Event, lost.ALeg)
	}
	st.drop = false

	r = start()
	hist = append(hist, a("migration written"), u("run it"))
	healed := turn(t, r, "alice", chatView(t, hdr, hist...), Hints{})
	if healed.Event != EventContinue || healed.ALeg != first.ALeg || healed.Epoch != first.Epoch {
		t.Fatalf("after the restart: %s on %s (epoch %d); want a continuation of %s (epoch %d)",
			healed.Event, healed.ALeg, healed.Epoch, first.ALeg, first.Epoch)
	}
	// Its records landed: a second restart continues from it.
	r = start()
	hist = append(hist, a("it ran"), u("thanks"))
	if again := turn(t, r, "alice", chatView(t, hdr, hist...), Hints{}); again.Event != EventContinue || again.ALeg != first.ALeg {
		t.Errorf("after a second restart: %s on %s", again.Event, again.ALeg)
	}
}

// Writes left running by CommitBehind land in their turns' order, however
// they are run: the store ends with the newest head of the A-leg.
func TestCommitBehindWritesInOrder(t *testing.T) {
	st := newMemStore()
	r := exclusiveResolver(t, st)
	hdr := map[string]string{"X-Claude-Code-Session-Id": "order-session"}
	hist := conversation("order", 3)
	first := turn(t, r, "alice", chatView(t, hdr, hist...), Hints{})
	var writes []func() error
	var last Ref
	for i := range 2 {
		hist = append(hist, a(fmt.Sprintf("calling tool %d", i)), u(fmt.Sprintf("tool %d said: fine", i)))
		v := chatView(t, hdr, hist...)
		ref, err := r.Resolve(t.Context(), "alice", v, Hints{})
		if err != nil {
			t.Fatal(err)
		}
		w, err := r.CommitBehind(t.Context(), ref, v)
		if err != nil || w == nil {
			t.Fatalf("CommitBehind: %v", err)
		}
		writes, last = append(writes, w), ref
	}
	newest := r.key(kindHead, "alice", string(last.hist[len(last.hist)-1].chain[:]))
	headNow := func() string {
		rec, _ := r.cached("alice", r.alegKey("alice", first.ALeg))
		return rec.Head
	}
	if h := headNow(); h != newest {
		t.Fatalf("cached head %s before the writes, want the newest turn's %s", h, newest)
	}
	done := make(chan error, 1)
	go func() { done <- writes[1]() }() // the newer write is run first
	time.Sleep(20 * time.Millisecond)
	if err := writes[0](); err != nil {
		t.Fatal(err)
	}
	if h := headNow(); h != newest { // the older write's end must not bring its head back
		t.Errorf("cached head %s after the older write landed, want the newest turn's %s", h, newest)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	raw, err := st.GetLineage(t.Context(), "alice", []string{r.alegKey("alice", first.ALeg)})
	if err != nil {
		t.Fatal(err)
	}
	want := r.key(kindHead, "alice", string(last.hist[len(last.hist)-1].chain[:]))
	if !strings.Contains(string(raw[r.alegKey("alice", first.ALeg)]), want) {
		t.Errorf("the stored A-leg head is %s, want the newest turn's head %s", raw[r.alegKey("alice", first.ALeg)], want)
	}
}

// A store read cannot undo a turn committed behind: without the key index
// (IndexKeys failed, or a turn whose keys the store must be asked for),
// the next turn reads the A-leg head from the store while the write of
// the turn before is still under way, and the store's older head must not
// make the continuation look like a fork.
func TestHeldHeadOutranksTheStore(t *testing.T) {
	gate := make(chan struct{})
	st := &gatedStore{memStore: newMemStore()}
	r := NewResolver(queuingStore{st}, Options{Secret: testSecret, Exclusive: true}) // no IndexKeys
	hdr := map[string]string{"X-Claude-Code-Session-Id": "held-session"}
	hist := conversation("held", 3)
	first := turn(t, r, "alice", chatView(t, hdr, hist...), Hints{})
	st.gate = gate // the writes from here on wait
	var outcomes []func() error
	for i := range 3 {
		hist = append(hist, a(fmt.Sprintf("calling tool %d", i)), u(fmt.Sprintf("tool %d said: fine", i)))
		v := chatView(t, hdr, hist...)
		ref, err := r.Resolve(t.Context(), "alice", v, Hints{})
		if err != nil {
			t.Fatal(err)
		}
		if ref.Event != EventContinue || ref.ALeg != first.ALeg {
			t.Fatalf("turn %d while the writes before it wait: %s on %s, want a continuation of %s", i, ref.Event, ref.ALeg, first.ALeg)
		}
		w, err := r.CommitBehind(t.Context(), ref, v)
		if err != nil || w == nil {
			t.Fatalf("CommitBehind: %v", err)
		}
		outcomes = append(outcomes, w)
	}
	close(gate)
	for _, w := range outcomes {
		if err := w(); err != nil {
			t.Fatal(err)
		}
	}
}
