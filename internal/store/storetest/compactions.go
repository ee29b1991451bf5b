package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tether-dev/tether/internal/store/backend"
)

func compaction(principal, aLeg string, rev int64, at time.Time) backend.CompactionEvent {
	return backend.CompactionEvent{
		Principal: principal, Session: "sess-" + aLeg, ALeg: aLeg, RequestID: "req-" + aLeg,
		At: at, Agent: "claude-code", RuleID: "claude-code.compact", RuleVersion: 3, Kind: "in_band",
		Action: "augmented", Revision: rev, Tokens: 120, Decisions: 2, Constraints: 1, Rejected: 1, Questions: 0, Steps: 4,
	}
}

// testCompactions: events round-trip field for field, newest first, per
// A-leg and principal; the limit applies; invalid events are refused.
func testCompactions(t *testing.T, s backend.Store) {
	ctx := t.Context()
	first := compaction("alice", "a1", 3, base)
	second := compaction("alice", "a1", 5, base.Add(time.Minute))
	second.Action, second.Kind, second.Agent = "reinjected", "opaque", "codex"
	for _, ev := range []backend.CompactionEvent{first, second, compaction("alice", "a2", 1, base), compaction("bob", "a1", 9, base)} {
		if _, err := s.AppendCompaction(ctx, ev); err != nil {
			t.Fatalf("AppendCompaction: %v", err)
		}
	}
	got, err := s.Compactions(ctx, "alice", "a1", 0)
	if err != nil {
		t.Fatalf("Compactions: %v", err)
	}
	want := []backend.CompactionEvent{second, first}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(backend.CompactionEvent{}, "Seq")); diff != "" {
		t.Errorf("Compactions(alice, a1) (-want +got):\n%s", diff)
	}
	if len(got) == 2 && got[0].Seq <= got[1].Seq {
		t.Errorf("Seq does not order events: newest %d, older %d", got[0].Seq, got[1].Seq)
	}
	if got, _ := s.Compactions(ctx, "alice", "a1", 1); len(got) != 1 || got[0].Revision != 5 {
		t.Errorf("Compactions(limit 1) = %+v, want the newest (revision 5)", got)
	}
	if got, _ := s.Compactions(ctx, "carol", "a1", 0); len(got) != 0 {
		t.Errorf("another principal's events leaked: %+v", got)
	}
	zero := compaction("alice", "a3", 1, time.Time{})
	if _, err := s.AppendCompaction(ctx, zero); err != nil {
		t.Fatalf("AppendCompaction with a zero time: %v", err)
	}
	if got, _ := s.Compactions(ctx, "alice", "a3", 0); len(got) != 1 || got[0].At.IsZero() {
		t.Errorf("a zero At was not set to the current time: %+v", got)
	}
	for _, bad := range []backend.CompactionEvent{compaction("", "a1", 1, base), compaction("alice", "", 1, base)} {
		if _, err := s.AppendCompaction(ctx, bad); !errors.Is(err, backend.ErrInvalid) {
			t.Errorf("AppendCompaction(principal %q, a-leg %q): err = %v, want ErrInvalid", bad.Principal, bad.ALeg, err)
		}
	}
}

// testCompactionsPruned: an A-leg keeps its newest CompactionLimit events.
func testCompactionsPruned(t *testing.T, s backend.Store) {
	ctx := t.Context()
	n := backend.CompactionLimit + 5
	for i := 1; i <= n; i++ {
		if _, err := s.AppendCompaction(ctx, compaction("alice", "a1", int64(i), base.Add(time.Duration(i)*time.Second))); err != nil {
			t.Fatalf("AppendCompaction %d: %v", i, err)
		}
	}
	got, err := s.Compactions(ctx, "alice", "a1", 0)
	if err != nil {
		t.Fatalf("Compactions: %v", err)
	}
	if len(got) != backend.CompactionLimit {
		t.Fatalf("kept %d events, want %d", len(got), backend.CompactionLimit)
	}
	if got[0].Revision != int64(n) || got[len(got)-1].Revision != int64(n-backend.CompactionLimit+1) {
		t.Errorf("kept revisions %d..%d, want %d..%d", got[len(got)-1].Revision, got[0].Revision, n-backend.CompactionLimit+1, n)
	}
}

// testCompactionsGoWithCapsule: purging an A-leg or a principal removes its
// timeline; a TTL removes events older than it.
func testCompactionsGoWithCapsule(t *testing.T, s backend.Store) {
	ctx := t.Context()
	now := time.Now()
	mustPut(t, s, rec("alice", "a1", 1, `{}`))
	for _, ev := range []backend.CompactionEvent{
		compaction("alice", "a1", 1, now), compaction("alice", "a2", 1, now), compaction("alice", "old", 1, now.Add(-48*time.Hour)),
		compaction("bob", "a1", 1, now),
	} {
		if _, err := s.AppendCompaction(ctx, ev); err != nil {
			t.Fatalf("AppendCompaction: %v", err)
		}
	}
	count := func(p, a string) int {
		t.Helper()
		got, err := s.Compactions(ctx, p, a, 0)
		if err != nil {
			t.Fatalf("Compactions: %v", err)
		}
		return len(got)
	}
	if _, err := s.PurgeCapsules(ctx, "alice", "a1"); err != nil {
		t.Fatalf("PurgeCapsules: %v", err)
	}
	if count("alice", "a1") != 0 || count("alice", "a2") != 1 {
		t.Errorf("purging alice/a1: a1 has %d events (want 0), a2 has %d (want 1)", count("alice", "a1"), count("alice", "a2"))
	}
	if _, err := s.DeleteExpired(ctx, now, 24*time.Hour); err != nil {
		t.Fatalf("DeleteExpired: %v", err)
	}
	if count("alice", "old") != 0 || count("alice", "a2") != 1 {
		t.Errorf("24h TTL: old has %d events (want 0), a2 has %d (want 1)", count("alice", "old"), count("alice", "a2"))
	}
	if _, err := s.PurgeCapsules(ctx, "alice", ""); err != nil {
		t.Fatalf("PurgeCapsules: %v", err)
	}
	if count("alice", "a2") != 0 || count("bob", "a1") != 1 {
		t.Errorf("purging alice: a2 has %d events (want 0), bob/a1 has %d (want 1)", count("alice", "a2"), count("bob", "a1"))
	}
	dump, err := s.Dump(ctx)
	if err != nil {
		t.Fatalf("Dump: %v", err)
	}
	if rows, ok := dump[backend.TableCompactions]; !ok || len(rows) != 1 {
		t.Errorf("Dump table %q = %q, want bob's one event", backend.TableCompactions, rows)
	}
}
