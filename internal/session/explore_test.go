package session

import (
	"context"
	"testing"
)

func TestExploreCaptures(t *testing.T) {
	for _, name := range []string{"codex", "claude", "opencode", "pi", "pi-anthropic-messages", "codex-openai-provider"} {
		caps := loadCaptures(t, name)
		r := newTestResolver(newMemStore())
		var last Ref
		for seq := 1; seq <= 10; seq++ {
			c, ok := caps[seq]
			if !ok {
				continue
			}
			h := Hints{Compaction: c.Kind == "compaction", OutOfBand: c.Kind == "compaction" && (name == "opencode" || name[:2] == "pi")}
			if c.Kind == "title" {
				continue
			}
			v := c.view(t)
			ref, err := r.Resolve(context.Background(), "p1", v, h)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s seq %d %s: %s aleg=%s epoch=%d turn=%d parent=%s", name, seq, c.Kind, ref.Event, ref.ALeg, ref.Epoch, ref.Turn, ref.ParentALeg)
			if err := r.Commit(context.Background(), ref, v); err != nil {
				t.Fatal(err)
			}
			if c.Kind == "compaction" && ref.ALeg != "" {
				if err := r.RecordSummary(context.Background(), ref, c.Reply.Text); err != nil {
					t.Fatal(err)
				}
			}
			last = ref
		}
		_ = last
	}
}
