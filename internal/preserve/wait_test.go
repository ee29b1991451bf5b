package preserve

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/flow"
	"github.com/tether-dev/tether/internal/session"
	"github.com/tether-dev/tether/internal/store/sqlitestore"
)

// At shutdown, Engine.Wait queues the lineage of continuations still
// waiting for their interval (session.Options.Coalesce) instead of waiting
// the interval out: a process stopping right after a fast tool loop closes
// at once, with the loop's newest head stored.
func TestWaitQueuesWaitingLineage(t *testing.T) {
	ctx := t.Context()
	st, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "tether.db"), sqlitestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r := session.NewResolver(st, session.Options{Secret: []byte("wait-test-secret-0123456789abcdef"), Exclusive: true, Coalesce: time.Hour})
	if err := r.IndexKeys(ctx); err != nil {
		t.Fatal(err)
	}
	e := New(Options{Resolver: r})
	view := func(turns int) *dialect.View {
		var msgs []string
		for i := range turns {
			msgs = append(msgs, fmt.Sprintf(`{"role":"user","content":"step %d of the migration, please go on"}`, i),
				fmt.Sprintf(`{"role":"assistant","content":"done with step %d"}`, i))
		}
		v, err := dialect.Parse(dialect.OpenAIChat, "/v1/chat/completions", nil,
			[]byte(`{"model":"m","messages":[`+strings.Join(msgs, ",")+`]}`))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	first, err := r.Resolve(ctx, "alice", view(2), session.Hints{})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Commit(ctx, first, view(2)); err != nil {
		t.Fatal(err)
	}
	for turns := 3; turns <= 5; turns++ {
		v := view(turns)
		ref, err := r.Resolve(ctx, "alice", v, session.Hints{})
		if err != nil || ref.Event != session.EventContinue {
			t.Fatalf("turn %d: %v %v", turns, ref.Event, err)
		}
		(&commitHook{e: e, ref: ref, behind: true}).commitBehind(&flow.Exchange{View: v})
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := e.Wait(wctx); err != nil {
		t.Fatalf("Wait: %v; the lineage waiting its interval was not queued", err)
	}
}
