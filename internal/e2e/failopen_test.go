package e2e

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/store"
	"github.com/tether-dev/tether/internal/store/memstore"
)

// downStore is a store whose capsule and lineage operations fail, as when
// the database is unreachable; ledger calls still work.
type downStore struct {
	store.Store
	down bool
}

var errDown = errors.New("store unavailable")

func (d *downStore) GetCapsule(ctx context.Context, p, a string) (store.CapsuleRecord, error) {
	if d.down {
		return store.CapsuleRecord{}, errDown
	}
	return d.Store.GetCapsule(ctx, p, a)
}

func (d *downStore) GetLineage(ctx context.Context, p string, keys []string) (map[string][]byte, error) {
	if d.down {
		return nil, errDown
	}
	return d.Store.GetLineage(ctx, p, keys)
}

// Preservation failures never break primary traffic: with the store down,
// every turn and the compaction still reach the model unchanged and the
// client gets its answers; the failure is counted.
func TestFailOpen_StoreDownLeavesTrafficUnchanged(t *testing.T) {
	st := &downStore{Store: memstore.New(memstore.Options{}), down: true}
	e := newEnv(t, envOptions{yaml: continuityYAML, store: st})
	a := e.agent("failopen-session")
	say(t, a, "Please make a plan and track it with your todo list.", "Decision: use PostgreSQL, not MongoDB.")
	compact(t, a)
	say(t, a, "Continue.")
	for _, r := range e.primary() {
		if strings.Contains(string(r.Body), "<continuity-capsule") {
			t.Fatalf("a block was added although the store is down")
		}
	}
	if len(e.primary()) != 5 {
		t.Errorf("the model received %d requests, want 5 (3 turns with a tool round, compaction, 1 turn)", len(e.primary()))
	}
	resp, err := http.Get(e.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(body), `tether_preserve_failures_total{step="resolve"}`) {
		t.Errorf("the failure is not counted on /metrics")
	}
}
