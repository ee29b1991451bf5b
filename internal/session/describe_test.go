package session

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// Describe tells the principal which agent and client session an A-leg
// belongs to and when it was last active; the store holds the client's id
// sealed only, another principal learns nothing, and a repeated request
// still writes nothing.
func TestDescribeConversation(t *testing.T) {
	st := newMemStore()
	r := newTestResolver(st)
	now := time.Now().UTC().Truncate(time.Second)
	r.opt.Now = func() time.Time { return now }
	hdr := map[string]string{"x-session-id": "ses_visible_to_owner"}
	hist := []msg{u("start the inventory task now please"), a("ok")}
	ref := turn(t, r, "alice", chatView(t, hdr, hist...), Hints{})
	noHint := turn(t, r, "alice", chatView(t, nil, u("an unrelated conversation about compilers")), Hints{Agent: "pi"})

	got, err := r.Describe(context.Background(), "alice", []string{ref.ALeg, noHint.ALeg, "a_unknown"})
	if err != nil {
		t.Fatal(err)
	}
	want := Conversation{Agent: "opencode", ClientKind: "opencode", ClientSession: "ses_visible_to_owner", LastActivity: now}
	if got[ref.ALeg] != want {
		t.Errorf("Describe(%s) = %+v, want %+v", ref.ALeg, got[ref.ALeg], want)
	}
	if c := got[noHint.ALeg]; c.Agent != "pi" || c.ClientSession != "" {
		t.Errorf("Describe(no hint) = %+v, want agent pi from the rule and no client session", c)
	}
	if _, ok := got["a_unknown"]; ok || len(got) != 2 {
		t.Errorf("Describe returned %d conversations: %+v", len(got), got)
	}
	if other, _ := r.Describe(context.Background(), "bob", []string{ref.ALeg}); len(other) != 0 {
		t.Errorf("bob learns of alice's A-leg: %+v", other)
	}
	for k, v := range st.dump() {
		if strings.Contains(k+v, "ses_visible_to_owner") {
			t.Errorf("the client's session id is stored in clear: %s = %s", k, v)
		}
	}

	// The same request a minute later (a client retry) writes nothing.
	puts := st.puts
	now = now.Add(time.Minute)
	turn(t, r, "alice", chatView(t, hdr, hist...), Hints{})
	if st.puts != puts {
		t.Errorf("a repeated request wrote %d records", st.puts-puts)
	}
	// The next turn moves the head and its time.
	now = now.Add(time.Minute)
	turn(t, r, "alice", chatView(t, hdr, append(hist, u("next step please, carry on"))...), Hints{})
	got, _ = r.Describe(context.Background(), "alice", []string{ref.ALeg})
	if !got[ref.ALeg].LastActivity.Equal(now) {
		t.Errorf("last activity %v, want %v", got[ref.ALeg].LastActivity, now)
	}
}

// The AEAD that seals client ids is made once and shared: sealed on many
// goroutines at once (as concurrent turns seal their heads), every id opens
// to itself, seals as it did alone, and opens under no other A-leg. Run
// with -race, a shared cipher that kept state would show here.
func TestClientSealSharedAcrossGoroutines(t *testing.T) {
	r := newTestResolver(newMemStore())
	alone := r.sealClient("alice", "a_1", "ses_0")
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				client := fmt.Sprintf("ses_%d_%d", g, i)
				sealed := r.sealClient("alice", "a_1", client)
				if got := r.openClient("alice", "a_1", sealed); got != client {
					errs <- fmt.Sprintf("%q opens to %q", client, got)
					return
				}
				if got := r.openClient("alice", "a_2", sealed); got != "" {
					errs <- fmt.Sprintf("%q opens under another A-leg to %q", client, got)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if again := r.sealClient("alice", "a_1", "ses_0"); again != alone {
		t.Errorf("the same id seals differently after concurrent use: %q, then %q", alone, again)
	}
}
