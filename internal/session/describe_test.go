package session

import (
	"context"
	"strings"
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
