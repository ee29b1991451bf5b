package session

import (
	"bytes"
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// agentCase describes one real agent capture: the seq of its compaction
// request and of the first turn after it.
type agentCase struct {
	name       string
	compaction int
	post       int
	outOfBand  bool
}

var agentCases = []agentCase{
	{name: "codex", compaction: 3, post: 4},
	{name: "claude", compaction: 3, post: 4},
	{name: "opencode", compaction: 4, post: 5, outOfBand: true},
	{name: "pi", compaction: 3, post: 4, outOfBand: true},
}

func (ac agentCase) hints(c capture) Hints {
	if c.Kind != "compaction" {
		return Hints{}
	}
	return Hints{Compaction: true, OutOfBand: ac.outOfBand}
}

// replay resolves and commits the agent's requests before seq (titles
// skipped); with summary it records the relayed compaction summary.
func replay(t *testing.T, r *Resolver, principal string, ac agentCase, caps map[int]capture, before int, summary bool, edit func(*capture)) (events []Event, compRef Ref) {
	t.Helper()
	ctx := context.Background()
	for seq := 1; seq < before; seq++ {
		c, ok := caps[seq]
		if !ok || c.Kind == "title" {
			continue
		}
		if edit != nil {
			edit(&c)
		}
		v := c.view(t)
		ref, err := r.Resolve(ctx, principal, v, ac.hints(c))
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, ref.Event)
		if err := r.Commit(ctx, ref, v); err != nil {
			t.Fatal(err)
		}
		if c.Kind == "compaction" {
			compRef = ref
			if summary {
				if err := r.RecordSummary(ctx, ref, c.Reply.Text); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return events, compRef
}

func TestCapturesReplay(t *testing.T) {
	want := map[string][]Event{
		"codex":                 {EventNew, EventContinue, EventContinue, EventEpoch, EventContinue},
		"codex-openai-provider": {EventNew, EventContinue, EventContinue, EventEpoch, EventContinue},
		"claude":                {EventNew, EventContinue, EventContinue, EventEpoch},
		"opencode":              {EventNew, EventContinue, EventOutOfBand, EventEpoch, EventContinue},
		"pi":                    {EventNew, EventContinue, EventOutOfBand, EventEpoch, EventOutOfBand, EventOutOfBand, EventEpoch},
		"pi-anthropic-messages": {EventNew, EventContinue, EventOutOfBand, EventEpoch, EventOutOfBand, EventOutOfBand, EventEpoch},
	}
	for name, events := range want {
		t.Run(name, func(t *testing.T) {
			ac := agentCase{name: name, outOfBand: name == "opencode" || name[:2] == "pi"}
			r := newTestResolver(newMemStore())
			caps := loadCaptures(t, name)
			ctx := context.Background()
			var got []Event
			legs := map[string]bool{}
			var refs []Ref
			for seq := 1; seq <= 10; seq++ {
				c, ok := caps[seq]
				if !ok || c.Kind == "title" {
					continue
				}
				v := c.view(t)
				ref, err := r.Resolve(ctx, "alice", v, ac.hints(c))
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, ref.Event)
				legs[ref.ALeg] = true
				refs = append(refs, ref)
				if err := r.Commit(ctx, ref, v); err != nil {
					t.Fatal(err)
				}
				if c.Kind == "compaction" {
					if err := r.RecordSummary(ctx, ref, c.Reply.Text); err != nil {
						t.Fatal(err)
					}
				}
			}
			if diff := cmp.Diff(events, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if len(legs) != 1 {
				t.Errorf("the whole capture is one conversation, got %d A-legs", len(legs))
			}
			// Ordinals never go back along the A-leg across epochs.
			var prev int64 = -1
			for _, ref := range refs {
				if ref.Event == EventOutOfBand {
					continue
				}
				if ref.Ordinal < prev && ref.Epoch == refs[len(refs)-1].Epoch {
					t.Errorf("ordinal went back: %d after %d", ref.Ordinal, prev)
				}
				prev = max(prev, ref.Ordinal)
			}
			if last := refs[len(refs)-1]; last.Epoch == 0 {
				t.Errorf("last turn is after a compaction, epoch = 0")
			}
		})
	}
}

// withToken inserts a capsule block carrying tok next to the summary text of
// a post-compaction request.
func withToken(c *capture, tok string) {
	block := []byte(`FAKE-COMPACTION-SUMMARY <continuity-capsule ref=\"` + tok + `\" revision=\"3\">D1 active</continuity-capsule>`)
	c.Body = bytes.Replace(c.Body, []byte("FAKE-COMPACTION-SUMMARY"), block, 1)
}

func dropWindow(c *capture) { delete(c.Headers, "x-codex-window-id") }

func TestEpochPerAgent(t *testing.T) {
	for _, ac := range agentCases {
		t.Run(ac.name, func(t *testing.T) {
			caps := loadCaptures(t, ac.name)
			post := caps[ac.post]
			dropWindow(&post)

			// Without any evidence the post-compaction turn is no
			// continuation (it shares no head): never an epoch.
			r := newTestResolver(newMemStore())
			_, comp := replay(t, r, "alice", ac, caps, ac.post, false, dropWindow)
			ref, err := r.Resolve(context.Background(), "alice", post.view(t), Hints{})
			if err != nil {
				t.Fatal(err)
			}
			if ref.Event == EventEpoch || ref.Event == EventContinue {
				t.Fatalf("no evidence: event %s, want a new branch", ref.Event)
			}

			// By the recorded summary.
			r = newTestResolver(newMemStore())
			_, comp = replay(t, r, "alice", ac, caps, ac.post, true, dropWindow)
			ref, err = r.Resolve(context.Background(), "alice", post.view(t), Hints{})
			if err != nil {
				t.Fatal(err)
			}
			if ref.Event != EventEpoch || ref.ALeg != comp.ALeg || ref.Epoch != 1 || ref.Session != comp.Session {
				t.Errorf("by summary: got %s on %s epoch %d, want epoch 1 on %s", ref.Event, ref.ALeg, ref.Epoch, comp.ALeg)
			}

			// By the epoch token in the capsule block of the summary.
			r = newTestResolver(newMemStore())
			_, comp = replay(t, r, "alice", ac, caps, ac.post, false, dropWindow)
			tokPost := caps[ac.post]
			dropWindow(&tokPost)
			withToken(&tokPost, r.EpochToken(comp))
			ref, err = r.Resolve(context.Background(), "alice", tokPost.view(t), Hints{})
			if err != nil {
				t.Fatal(err)
			}
			if ref.Event != EventEpoch || ref.ALeg != comp.ALeg || ref.Epoch != 1 {
				t.Errorf("by token: got %s on %s epoch %d, want epoch 1 on %s", ref.Event, ref.ALeg, ref.Epoch, comp.ALeg)
			}
			// A forged token names nothing.
			forged := caps[ac.post]
			dropWindow(&forged)
			withToken(&forged, "AAAAAAAAAAAAAAAAAAAAAA")
			ref, err = r.Resolve(context.Background(), "alice", forged.view(t), Hints{})
			if err != nil {
				t.Fatal(err)
			}
			if ref.Event == EventEpoch {
				t.Errorf("forged token crossed an epoch")
			}
			// The token of another principal proves nothing here.
			if got := r.EpochToken(Ref{Principal: "bob", ALeg: comp.ALeg}); got == r.EpochToken(comp) {
				t.Errorf("epoch token does not depend on the principal")
			}
		})
	}
}

func TestEpochByHint(t *testing.T) {
	t.Run("codex window", func(t *testing.T) {
		ac := agentCases[0]
		caps := loadCaptures(t, ac.name)
		r := newTestResolver(newMemStore())
		_, comp := replay(t, r, "alice", ac, caps, ac.post, false, nil)
		ref, err := r.Resolve(context.Background(), "alice", caps[ac.post].view(t), Hints{})
		if err != nil {
			t.Fatal(err)
		}
		if ref.Event != EventEpoch || ref.ALeg != comp.ALeg || ref.Epoch != 1 {
			t.Errorf("got %s on %s epoch %d, want epoch 1 on %s", ref.Event, ref.ALeg, ref.Epoch, comp.ALeg)
		}
	})
	t.Run("claude post-compaction marker", func(t *testing.T) {
		ac := agentCases[1]
		caps := loadCaptures(t, ac.name)
		r := newTestResolver(newMemStore())
		_, comp := replay(t, r, "alice", ac, caps, ac.post, false, nil)
		ref, err := r.Resolve(context.Background(), "alice", caps[ac.post].view(t), Hints{PostCompaction: true, Agent: "claude-code"})
		if err != nil {
			t.Fatal(err)
		}
		if ref.Event != EventEpoch || ref.ALeg != comp.ALeg || ref.Epoch != 1 {
			t.Errorf("got %s on %s epoch %d, want epoch 1 on %s", ref.Event, ref.ALeg, ref.Epoch, comp.ALeg)
		}
		// Committed, the next turn of the epoch continues, and the marker
		// (still in the history) does not open another epoch.
		if err := r.Commit(context.Background(), ref, caps[ac.post].view(t)); err != nil {
			t.Fatal(err)
		}
		again, err := r.Resolve(context.Background(), "alice", caps[ac.post].view(t), Hints{PostCompaction: true})
		if err != nil {
			t.Fatal(err)
		}
		if again.Event != EventContinue || again.Epoch != 1 {
			t.Errorf("retry after commit: %s epoch %d, want continue epoch 1", again.Event, again.Epoch)
		}
	})
}

func TestOutOfBandAttribution(t *testing.T) {
	for _, ac := range agentCases[2:] {
		t.Run(ac.name, func(t *testing.T) {
			caps := loadCaptures(t, ac.name)
			noHint := func(c *capture) {
				delete(c.Headers, "x-session-id")
				delete(c.Headers, "x-session-affinity")
			}
			r := newTestResolver(newMemStore())
			events, _ := replay(t, r, "alice", ac, caps, ac.compaction, false, noHint)
			if events[0] != EventNew {
				t.Fatalf("first event %s", events[0])
			}
			comp := caps[ac.compaction]
			noHint(&comp)
			first, _ := r.Resolve(context.Background(), "alice", caps[ac.compaction-1].view(t), Hints{})

			ref, err := r.Resolve(context.Background(), "alice", comp.view(t), Hints{Compaction: true, OutOfBand: true})
			if err != nil {
				t.Fatal(err)
			}
			if ref.Event != EventOutOfBand || ref.ALeg != first.ALeg {
				t.Fatalf("got %s on %q, want out_of_band on %s", ref.Event, ref.ALeg, first.ALeg)
			}
			// Another principal sending the same request learns nothing.
			other, err := r.Resolve(context.Background(), "mallory", comp.view(t), Hints{Compaction: true, OutOfBand: true})
			if err != nil {
				t.Fatal(err)
			}
			if other.Event != EventUnattributed || other.ALeg != "" || other.Session != "" {
				t.Errorf("other principal: got %s on %q", other.Event, other.ALeg)
			}
		})
	}
}

func TestOutOfBandAmbiguous(t *testing.T) {
	r := newTestResolver(newMemStore())
	shared := "Please run the whole integration suite against the staging database"
	turn(t, r, "alice", chatView(t, nil, u("First project: build a billing service in Go"), a("ok"), u(shared)), Hints{})
	turn(t, r, "alice", chatView(t, nil, u("Second project: port the CLI to Rust quickly"), a("ok"), u(shared)), Hints{})

	oob := func(quoted ...string) Ref {
		t.Helper()
		text := "<conversation>\n"
		for _, q := range quoted {
			text += "[User]: " + q + "\n\n[Assistant]: ok\n\n"
		}
		text += "</conversation>\n\nThe messages above are a conversation to summarize."
		ref, err := r.Resolve(context.Background(), "alice", chatView(t, nil, u(text)), Hints{Compaction: true, OutOfBand: true})
		if err != nil {
			t.Fatal(err)
		}
		return ref
	}
	if ref := oob(shared); ref.Event != EventUnattributed {
		t.Errorf("turn said in two A-legs: %s on %s, want unattributed", ref.Event, ref.ALeg)
	}
	if ref := oob("First project: build a billing service in Go", "Second project: port the CLI to Rust quickly"); ref.Event != EventUnattributed {
		t.Errorf("turns of two unrelated A-legs: %s, want unattributed", ref.Event)
	}
	if ref := oob("nothing anybody ever said before in here"); ref.Event != EventUnattributed {
		t.Errorf("unknown turns: %s, want unattributed", ref.Event)
	}
	if ref := oob("First project: build a billing service in Go", shared); ref.Event != EventOutOfBand {
		t.Errorf("shared turn plus a distinctive one: %s, want out_of_band", ref.Event)
	}
}
