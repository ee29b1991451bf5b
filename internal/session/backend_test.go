package session

import (
	"context"
	"path/filepath"
	"testing"

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
