// Package storetest is the conformance suite every Tether store backend must
// pass. A backend's test calls Run with a function that opens a fresh, empty
// store for one subtest.
package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tether-dev/tether/internal/store/backend"
)

// Run runs the conformance suite. open must return a fresh, empty store and
// arrange for it to be closed (t.Cleanup).
func Run(t *testing.T, open func(t *testing.T) backend.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s backend.Store)
	}{
		{"CapsuleCAS", testCapsuleCAS},
		{"CapsuleInvalid", testCapsuleInvalid},
		{"CapsuleHistoryPruned", testCapsuleHistoryPruned},
		{"ListCapsules", testListCapsules},
		{"PurgeALeg", testPurgeALeg},
		{"PurgePrincipal", testPurgePrincipal},
		{"Lineage", testLineage},
		{"LineageExpiry", testLineageExpiry},
		{"LineageBatch", testLineageBatch},
		{"LineageKeys", testLineageKeys},
		{"LedgerIdempotent", testLedgerIdempotent},
		{"Usage", testUsage},
		{"ReserveAtLimit", testReserveAtLimit},
		{"DeleteExpired", testDeleteExpired},
		{"Dump", testDump},
		{"ConcurrentCAS", testConcurrentCAS},
		{"ConcurrentReserve", testConcurrentReserve},
		{"OutboxLease", testOutboxLease},
		{"OutboxPurged", testOutboxPurged},
		{"ConcurrentClaim", testConcurrentClaim},
		{"OutboxBusy", testOutboxBusy},
		{"Reservations", testReservations},
		{"ConcurrentReservations", testConcurrentReservations},
		{"SettlementBatches", testSettlementBatches},
		{"Compactions", testCompactions},
		{"CompactionsPruned", testCompactionsPruned},
		{"CompactionsGoWithCapsule", testCompactionsGoWithCapsule},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			if err := s.Ping(t.Context()); err != nil {
				t.Fatalf("Ping: %v", err)
			}
			tc.fn(t, s)
		})
	}
}

// base is a fixed instant with a non-zero microsecond part, so that a backend
// that drops sub-second precision fails.
var base = time.Date(2025, 3, 14, 9, 26, 53, 589793000, time.UTC)

func rec(principal, aLeg string, rev int64, data string) backend.CapsuleRecord {
	return backend.CapsuleRecord{
		Principal: principal,
		Session:   "sess-" + aLeg,
		ALeg:      aLeg,
		Revision:  rev,
		Data:      []byte(data),
		UpdatedAt: base.Add(time.Duration(rev) * time.Second),
	}
}

func mustPut(t *testing.T, s backend.Store, r backend.CapsuleRecord) {
	t.Helper()
	if err := s.PutCapsule(t.Context(), r, r.Revision-1); err != nil {
		t.Fatalf("PutCapsule(%s/%s rev %d): %v", r.Principal, r.ALeg, r.Revision, err)
	}
}

var cmpTime = cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })

func testCapsuleCAS(t *testing.T, s backend.Store) {
	ctx := t.Context()
	if _, err := s.GetCapsule(ctx, "alice", "a1"); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("GetCapsule on empty store: err = %v, want ErrNotFound", err)
	}

	r1 := rec("alice", "a1", 1, `{"plan":"one"}`)
	if err := s.PutCapsule(ctx, r1, 0); err != nil {
		t.Fatalf("first PutCapsule: %v", err)
	}
	// The caller's buffer may be reused; the store must have copied it.
	copy(r1.Data, "XXXXXXXX")
	if err := s.PutCapsule(ctx, rec("alice", "a1", 1, `{"plan":"racer"}`), 0); !errors.Is(err, backend.ErrConflict) {
		t.Fatalf("second create of the same A-leg: err = %v, want ErrConflict", err)
	}

	r2 := rec("alice", "a1", 2, `{"plan":"two"}`)
	if err := s.PutCapsule(ctx, r2, 1); err != nil {
		t.Fatalf("PutCapsule rev 2: %v", err)
	}
	if err := s.PutCapsule(ctx, rec("alice", "a1", 2, `{"plan":"stale"}`), 1); !errors.Is(err, backend.ErrConflict) {
		t.Fatalf("PutCapsule against a stale revision: err = %v, want ErrConflict", err)
	}
	if err := s.PutCapsule(ctx, rec("alice", "a1", 4, `{"plan":"ahead"}`), 3); !errors.Is(err, backend.ErrConflict) {
		t.Fatalf("PutCapsule against a future revision: err = %v, want ErrConflict", err)
	}

	got, err := s.GetCapsule(ctx, "alice", "a1")
	if err != nil {
		t.Fatalf("GetCapsule: %v", err)
	}
	if diff := cmp.Diff(r2, got, cmpTime); diff != "" {
		t.Errorf("GetCapsule after two updates (-want +got):\n%s", diff)
	}
	if _, err := s.GetCapsule(ctx, "bob", "a1"); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("another principal's GetCapsule on the same A-leg id: err = %v, want ErrNotFound", err)
	}

	// A zero UpdatedAt is stamped by the store.
	r3 := rec("alice", "a1", 3, `{"plan":"three"}`)
	r3.UpdatedAt = time.Time{}
	before := time.Now().Add(-time.Minute)
	if err := s.PutCapsule(ctx, r3, 2); err != nil {
		t.Fatalf("PutCapsule rev 3: %v", err)
	}
	got, err = s.GetCapsule(ctx, "alice", "a1")
	if err != nil {
		t.Fatalf("GetCapsule: %v", err)
	}
	if got.UpdatedAt.Before(before) || got.UpdatedAt.After(time.Now().Add(time.Minute)) {
		t.Errorf("UpdatedAt of a record stored with a zero time = %v, want about now", got.UpdatedAt)
	}
}

func testCapsuleInvalid(t *testing.T, s backend.Store) {
	ctx := t.Context()
	cases := []struct {
		name   string
		r      backend.CapsuleRecord
		expect int64
	}{
		{"revision skips ahead", rec("alice", "a1", 3, "{}"), 1},
		{"revision equals expected", rec("alice", "a1", 1, "{}"), 1},
		{"negative expected", rec("alice", "a1", 0, "{}"), -1},
		{"empty principal", rec("", "a1", 1, "{}"), 0},
		{"empty a-leg", rec("alice", "", 1, "{}"), 0},
	}
	for _, c := range cases {
		if err := s.PutCapsule(ctx, c.r, c.expect); !errors.Is(err, backend.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", c.name, err)
		}
	}
	if _, err := s.GetCapsule(ctx, "alice", "a1"); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("an invalid put left a capsule behind: err = %v", err)
	}
}

func testCapsuleHistoryPruned(t *testing.T, s backend.Store) {
	ctx := t.Context()
	const n = 40
	for rev := int64(1); rev <= n; rev++ {
		mustPut(t, s, rec("alice", "a1", rev, fmt.Sprintf(`{"rev":%d}`, rev)))
	}
	mustPut(t, s, rec("alice", "other", 1, `{"rev":1}`))

	all, err := s.CapsuleHistory(ctx, "alice", "a1", 0)
	if err != nil {
		t.Fatalf("CapsuleHistory: %v", err)
	}
	var want []backend.CapsuleRecord
	for rev := int64(n); rev > n-backend.HistoryLimit; rev-- {
		want = append(want, rec("alice", "a1", rev, fmt.Sprintf(`{"rev":%d}`, rev)))
	}
	if diff := cmp.Diff(want, all, cmpTime); diff != "" {
		t.Errorf("CapsuleHistory(limit 0) (-want +got):\n%s", diff)
	}

	five, err := s.CapsuleHistory(ctx, "alice", "a1", 5)
	if err != nil {
		t.Fatalf("CapsuleHistory(5): %v", err)
	}
	if diff := cmp.Diff(want[:5], five, cmpTime); diff != "" {
		t.Errorf("CapsuleHistory(limit 5) (-want +got):\n%s", diff)
	}

	none, err := s.CapsuleHistory(ctx, "bob", "a1", 0)
	if err != nil {
		t.Fatalf("CapsuleHistory of unknown A-leg: %v", err)
	}
	if len(none) != 0 {
		t.Errorf("CapsuleHistory of another principal's A-leg returned %d records", len(none))
	}
}

func testListCapsules(t *testing.T, s backend.Store) {
	ctx := t.Context()
	mustPut(t, s, rec("bob", "b1", 1, `{"b":1}`))
	mustPut(t, s, rec("alice", "a2", 1, `{"a2":1}`))
	mustPut(t, s, rec("alice", "a1", 1, `{"a1":1}`))
	mustPut(t, s, rec("alice", "a1", 2, `{"a1":2}`))

	got, err := s.ListCapsules(ctx, "alice")
	if err != nil {
		t.Fatalf("ListCapsules(alice): %v", err)
	}
	want := []backend.CapsuleRecord{rec("alice", "a1", 2, `{"a1":2}`), rec("alice", "a2", 1, `{"a2":1}`)}
	if diff := cmp.Diff(want, got, cmpTime); diff != "" {
		t.Errorf("ListCapsules(alice) (-want +got):\n%s", diff)
	}

	got, err = s.ListCapsules(ctx, "")
	if err != nil {
		t.Fatalf("ListCapsules(all): %v", err)
	}
	want = append(want, rec("bob", "b1", 1, `{"b":1}`))
	if diff := cmp.Diff(want, got, cmpTime); diff != "" {
		t.Errorf("ListCapsules(all) (-want +got):\n%s", diff)
	}

	got, err = s.ListCapsules(ctx, "carol")
	if err != nil {
		t.Fatalf("ListCapsules(carol): %v", err)
	}
	if len(got) != 0 {
		t.Errorf("ListCapsules of a principal without capsules returned %d", len(got))
	}
}

func testPurgeALeg(t *testing.T, s backend.Store) {
	ctx := t.Context()
	for rev := int64(1); rev <= 3; rev++ {
		mustPut(t, s, rec("alice", "a1", rev, `{"secret":"purge-me-a1"}`))
	}
	mustPut(t, s, rec("alice", "a2", 1, `{"keep":"a2"}`))
	mustPut(t, s, rec("bob", "a1", 1, `{"keep":"bob"}`))

	n, err := s.PurgeCapsules(ctx, "alice", "a1")
	if err != nil || n != 1 {
		t.Fatalf("PurgeCapsules(alice, a1) = %d, %v; want 1, nil", n, err)
	}
	if _, err := s.GetCapsule(ctx, "alice", "a1"); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("purged capsule still readable: err = %v", err)
	}
	if h, _ := s.CapsuleHistory(ctx, "alice", "a1", 0); len(h) != 0 {
		t.Errorf("purged capsule still has %d history records", len(h))
	}
	for _, k := range [][2]string{{"alice", "a2"}, {"bob", "a1"}} {
		if _, err := s.GetCapsule(ctx, k[0], k[1]); err != nil {
			t.Errorf("purging alice/a1 removed %s/%s: %v", k[0], k[1], err)
		}
	}
	assertAbsent(t, s, "purge-me-a1")

	n, err = s.PurgeCapsules(ctx, "alice", "a1")
	if err != nil || n != 0 {
		t.Errorf("second PurgeCapsules(alice, a1) = %d, %v; want 0, nil", n, err)
	}
	// The A-leg can start over after a purge.
	if err := s.PutCapsule(ctx, rec("alice", "a1", 1, `{"fresh":true}`), 0); err != nil {
		t.Errorf("PutCapsule revision 1 after purge: %v", err)
	}
}

func testPurgePrincipal(t *testing.T, s backend.Store) {
	ctx := t.Context()
	mustPut(t, s, rec("alice", "a1", 1, `{"secret":"alice-secret-1"}`))
	mustPut(t, s, rec("alice", "a1", 2, `{"secret":"alice-secret-2"}`))
	mustPut(t, s, rec("alice", "a2", 1, `{"secret":"alice-secret-3"}`))
	mustPut(t, s, rec("bob", "a1", 1, `{"keep":"bob"}`))
	if err := s.PutLineage(ctx, "alice", "fp1", []byte("alice-lineage-secret"), time.Time{}); err != nil {
		t.Fatalf("PutLineage: %v", err)
	}
	if err := s.PutLineage(ctx, "bob", "fp1", []byte("bob-lineage"), time.Time{}); err != nil {
		t.Fatalf("PutLineage: %v", err)
	}

	if _, err := s.PurgeCapsules(ctx, "", ""); !errors.Is(err, backend.ErrInvalid) {
		t.Errorf("PurgeCapsules with an empty principal: err = %v, want ErrInvalid", err)
	}
	n, err := s.PurgeCapsules(ctx, "alice", "")
	if err != nil || n != 2 {
		t.Fatalf("PurgeCapsules(alice, all) = %d, %v; want 2, nil", n, err)
	}
	if got, _ := s.ListCapsules(ctx, "alice"); len(got) != 0 {
		t.Errorf("alice still has %d capsules after purge", len(got))
	}
	lin, err := s.GetLineage(ctx, "alice", []string{"fp1"})
	if err != nil {
		t.Fatalf("GetLineage: %v", err)
	}
	if len(lin) != 0 {
		t.Errorf("alice's lineage survived the purge: %q", lin)
	}
	assertAbsent(t, s, "alice-secret", "alice-lineage-secret")

	if _, err := s.GetCapsule(ctx, "bob", "a1"); err != nil {
		t.Errorf("purging alice removed bob's capsule: %v", err)
	}
	lin, err = s.GetLineage(ctx, "bob", []string{"fp1"})
	if err != nil {
		t.Fatalf("GetLineage: %v", err)
	}
	if string(lin["fp1"]) != "bob-lineage" {
		t.Errorf("purging alice changed bob's lineage: %q", lin)
	}
}

// assertAbsent fails if any table row contains any of the markers.
func assertAbsent(t *testing.T, s backend.Store, markers ...string) {
	t.Helper()
	dump, err := s.Dump(t.Context())
	if err != nil {
		t.Fatalf("Dump: %v", err)
	}
	for table, rows := range dump {
		for _, row := range rows {
			for _, m := range markers {
				if strings.Contains(row, m) {
					t.Errorf("table %s still holds %q: %s", table, m, row)
				}
			}
		}
	}
}

func testLineage(t *testing.T, s backend.Store) {
	ctx := t.Context()
	put := func(principal, key, value string) {
		t.Helper()
		if err := s.PutLineage(ctx, principal, key, []byte(value), time.Time{}); err != nil {
			t.Fatalf("PutLineage(%s, %s): %v", principal, key, err)
		}
	}
	put("alice", "fp:1", "alice-1")
	put("alice", "fp:2", "alice-2")
	put("bob", "fp:1", "bob-1")
	put("alice", "fp:2", "alice-2b") // upsert

	got, err := s.GetLineage(ctx, "alice", []string{"fp:1", "fp:2", "fp:missing"})
	if err != nil {
		t.Fatalf("GetLineage: %v", err)
	}
	want := map[string][]byte{"fp:1": []byte("alice-1"), "fp:2": []byte("alice-2b")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GetLineage(alice) (-want +got):\n%s", diff)
	}
	got, err = s.GetLineage(ctx, "bob", []string{"fp:1", "fp:2"})
	if err != nil {
		t.Fatalf("GetLineage: %v", err)
	}
	if diff := cmp.Diff(map[string][]byte{"fp:1": []byte("bob-1")}, got); diff != "" {
		t.Errorf("GetLineage(bob) sees another principal's namespace (-want +got):\n%s", diff)
	}
	got, err = s.GetLineage(ctx, "carol", []string{"fp:1"})
	if err != nil {
		t.Fatalf("GetLineage: %v", err)
	}
	if len(got) != 0 {
		t.Errorf("GetLineage(carol) = %q, want empty", got)
	}
	got, err = s.GetLineage(ctx, "alice", nil)
	if err != nil {
		t.Fatalf("GetLineage with no keys: %v", err)
	}
	if len(got) != 0 {
		t.Errorf("GetLineage with no keys = %q, want empty", got)
	}

	// Many keys in one call.
	var keys []string
	for i := range 300 {
		k := fmt.Sprintf("bulk:%03d", i)
		keys = append(keys, k)
		if i%3 == 0 {
			put("alice", k, "v"+k)
		}
	}
	got, err = s.GetLineage(ctx, "alice", keys)
	if err != nil {
		t.Fatalf("GetLineage(300 keys): %v", err)
	}
	if len(got) != 100 || string(got["bulk:297"]) != "vbulk:297" {
		t.Errorf("GetLineage(300 keys) returned %d values (bulk:297=%q), want 100", len(got), got["bulk:297"])
	}
}

// PutLineages writes every record of the batch (upserting, with expiry)
// or, given an invalid one, none.
func testLineageBatch(t *testing.T, s backend.Store) {
	ctx := t.Context()
	if err := s.PutLineage(ctx, "alice", "k1", []byte("old"), time.Time{}); err != nil {
		t.Fatalf("PutLineage: %v", err)
	}
	now := time.Now()
	err := s.PutLineages(ctx, "alice", []backend.LineagePut{
		{Key: "k1", Value: []byte("new")},
		{Key: "k2", Value: []byte("two"), Expires: now.Add(time.Hour)},
		{Key: "k3", Value: []byte("gone"), Expires: now.Add(-time.Minute)},
	})
	if err != nil {
		t.Fatalf("PutLineages: %v", err)
	}
	got, err := s.GetLineage(ctx, "alice", []string{"k1", "k2", "k3"})
	if err != nil {
		t.Fatalf("GetLineage: %v", err)
	}
	want := map[string][]byte{"k1": []byte("new"), "k2": []byte("two")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after PutLineages (-want +got):\n%s", diff)
	}
	err = s.PutLineages(ctx, "alice", []backend.LineagePut{{Key: "k4", Value: []byte("x")}, {Key: "", Value: []byte("bad")}})
	if !errors.Is(err, backend.ErrInvalid) {
		t.Errorf("PutLineages with an empty key: err %v, want ErrInvalid", err)
	}
	if got, _ := s.GetLineage(ctx, "alice", []string{"k4"}); len(got) != 0 {
		t.Errorf("a refused batch wrote %v", got)
	}
	if err := s.PutLineages(ctx, "", []backend.LineagePut{{Key: "k"}}); !errors.Is(err, backend.ErrInvalid) {
		t.Errorf("PutLineages without a principal: err %v, want ErrInvalid", err)
	}
}

// testLineageKeys: a store that lists its lineage keys (the stores a single
// process owns: the resolver indexes them at start and then takes a key
// outside the list for absent) lists every key of every principal, with no
// value, expired ones included.
func testLineageKeys(t *testing.T, s backend.Store) {
	kl, ok := s.(interface {
		LineageKeys(ctx context.Context, fn func(principal, key string) error) error
	})
	if !ok {
		t.Skip("the store does not list lineage keys")
	}
	ctx := t.Context()
	now := time.Now()
	if err := s.PutLineages(ctx, "alice", []backend.LineagePut{
		{Key: "h:1", Value: []byte("v")}, {Key: "a:2", Value: []byte("v"), Expires: now.Add(-time.Minute)},
	}); err != nil {
		t.Fatalf("PutLineages: %v", err)
	}
	if err := s.PutLineage(ctx, "bob", "h:1", []byte("v"), now.Add(time.Hour)); err != nil {
		t.Fatalf("PutLineage: %v", err)
	}
	var got []string
	if err := kl.LineageKeys(ctx, func(principal, key string) error {
		got = append(got, principal+"/"+key)
		return nil
	}); err != nil {
		t.Fatalf("LineageKeys: %v", err)
	}
	slices.Sort(got)
	if want := []string{"alice/a:2", "alice/h:1", "bob/h:1"}; !slices.Equal(got, want) {
		t.Errorf("LineageKeys listed %v, want %v", got, want)
	}
	stop := errors.New("stop")
	n := 0
	err := kl.LineageKeys(ctx, func(string, string) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("LineageKeys after fn's error: err %v after %d calls, want fn's error after 1", err, n)
	}
}

func testLineageExpiry(t *testing.T, s backend.Store) {
	ctx := t.Context()
	now := time.Now()
	if err := s.PutLineage(ctx, "alice", "old", []byte("expired"), now.Add(-time.Minute)); err != nil {
		t.Fatalf("PutLineage: %v", err)
	}
	if err := s.PutLineage(ctx, "alice", "live", []byte("live"), now.Add(time.Hour)); err != nil {
		t.Fatalf("PutLineage: %v", err)
	}
	if err := s.PutLineage(ctx, "alice", "forever", []byte("forever"), time.Time{}); err != nil {
		t.Fatalf("PutLineage: %v", err)
	}
	got, err := s.GetLineage(ctx, "alice", []string{"old", "live", "forever"})
	if err != nil {
		t.Fatalf("GetLineage: %v", err)
	}
	want := map[string][]byte{"live": []byte("live"), "forever": []byte("forever")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GetLineage with an expired key (-want +got):\n%s", diff)
	}
	// Refreshing an expired key brings it back.
	if err := s.PutLineage(ctx, "alice", "old", []byte("renewed"), now.Add(time.Hour)); err != nil {
		t.Fatalf("PutLineage: %v", err)
	}
	got, err = s.GetLineage(ctx, "alice", []string{"old"})
	if err != nil {
		t.Fatalf("GetLineage: %v", err)
	}
	if string(got["old"]) != "renewed" {
		t.Errorf("renewed lineage key = %q, want renewed", got["old"])
	}
}

func entry(id, principal, kind, model string, at time.Time, in, out, cost int64) backend.LedgerEntry {
	return backend.LedgerEntry{
		ID: id, Time: at, Principal: principal, Account: "acct-" + principal,
		Session: "s1", ALeg: "a1", BLeg: "b-" + id, Kind: kind, Route: "default",
		Provider: "openai", Model: model, InputTokens: in, OutputTokens: out,
		CacheReadTokens: in / 2, CacheWriteTokens: in / 4, CostMicros: cost,
		Status: 200, DurationMS: 1234,
	}
}

func testLedgerIdempotent(t *testing.T, s backend.Store) {
	ctx := t.Context()
	e1 := entry("e1", "alice", "primary", "gpt-5", base, 100, 10, 500)
	e2 := entry("e2", "alice", "continuity_extraction", "gpt-5-mini", base.Add(time.Minute), 50, 5, 40)
	e3 := entry("e3", "bob", "primary", "gpt-5", base.Add(2*time.Minute), 1, 1, 1)
	if err := s.AppendLedger(ctx, []backend.LedgerEntry{e1, e2, e1}); err != nil {
		t.Fatalf("AppendLedger: %v", err)
	}
	// A retried append (same ID, even with different numbers) is ignored.
	dup := e2
	dup.InputTokens = 999999
	if err := s.AppendLedger(ctx, []backend.LedgerEntry{dup, e3}); err != nil {
		t.Fatalf("AppendLedger retry: %v", err)
	}
	if err := s.AppendLedger(ctx, nil); err != nil {
		t.Fatalf("AppendLedger(nil): %v", err)
	}
	if err := s.AppendLedger(ctx, []backend.LedgerEntry{{Principal: "alice"}}); !errors.Is(err, backend.ErrInvalid) {
		t.Errorf("AppendLedger with an empty ID: err = %v, want ErrInvalid", err)
	}

	got, err := s.LedgerEntries(ctx, "alice", 0)
	if err != nil {
		t.Fatalf("LedgerEntries: %v", err)
	}
	if diff := cmp.Diff([]backend.LedgerEntry{e2, e1}, got, cmpTime); diff != "" {
		t.Errorf("LedgerEntries(alice) (-want +got):\n%s", diff)
	}
	got, err = s.LedgerEntries(ctx, "", 2)
	if err != nil {
		t.Fatalf("LedgerEntries: %v", err)
	}
	if diff := cmp.Diff([]backend.LedgerEntry{e3, e2}, got, cmpTime); diff != "" {
		t.Errorf("LedgerEntries(all, 2) (-want +got):\n%s", diff)
	}
}

func testUsage(t *testing.T, s backend.Store) {
	ctx := t.Context()
	day1 := time.Date(2025, 6, 1, 23, 59, 59, 0, time.UTC)
	// 00:30 in UTC+2 is still 22:30 of the previous UTC day.
	day1Local := time.Date(2025, 6, 2, 0, 30, 0, 0, time.FixedZone("CEST", 2*3600))
	day2 := time.Date(2025, 6, 2, 0, 0, 1, 0, time.UTC)
	entries := []backend.LedgerEntry{
		entry("old", "alice", "primary", "gpt-5", day1.Add(-48*time.Hour), 1000, 1000, 1000),
		entry("p1", "alice", "primary", "gpt-5", day1, 100, 10, 500),
		entry("p2", "alice", "primary", "gpt-5", day1Local, 200, 20, 700),
		entry("x1", "alice", "continuity_extraction", "gpt-5-mini", day1, 50, 5, 30),
		entry("p3", "alice", "primary", "gpt-5", day2, 300, 30, 900),
		entry("p4", "alice", "primary", "claude-sonnet", day2, 400, 40, 1100),
		entry("bob", "bob", "primary", "gpt-5", day2, 7, 7, 7),
	}
	if err := s.AppendLedger(ctx, entries); err != nil {
		t.Fatalf("AppendLedger: %v", err)
	}
	got, err := s.Usage(ctx, "alice", day1.Add(-3*time.Hour))
	if err != nil {
		t.Fatalf("Usage: %v", err)
	}
	want := []backend.UsageRow{
		{Day: "2025-06-01", Kind: "continuity_extraction", Model: "gpt-5-mini", Calls: 1, InputTokens: 50, OutputTokens: 5, CacheReadTokens: 25, CacheWriteTokens: 12, CostMicros: 30},
		{Day: "2025-06-01", Kind: "primary", Model: "gpt-5", Calls: 2, InputTokens: 300, OutputTokens: 30, CacheReadTokens: 150, CacheWriteTokens: 75, CostMicros: 1200},
		{Day: "2025-06-02", Kind: "primary", Model: "claude-sonnet", Calls: 1, InputTokens: 400, OutputTokens: 40, CacheReadTokens: 200, CacheWriteTokens: 100, CostMicros: 1100},
		{Day: "2025-06-02", Kind: "primary", Model: "gpt-5", Calls: 1, InputTokens: 300, OutputTokens: 30, CacheReadTokens: 150, CacheWriteTokens: 75, CostMicros: 900},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Usage(alice) (-want +got):\n%s", diff)
	}

	all, err := s.Usage(ctx, "", day2)
	if err != nil {
		t.Fatalf("Usage(all): %v", err)
	}
	wantAll := []backend.UsageRow{
		want[2],
		{Day: "2025-06-02", Kind: "primary", Model: "gpt-5", Calls: 2, InputTokens: 307, OutputTokens: 37, CacheReadTokens: 153, CacheWriteTokens: 76, CostMicros: 907},
	}
	if diff := cmp.Diff(wantAll, all); diff != "" {
		t.Errorf("Usage(all principals since day 2) (-want +got):\n%s", diff)
	}
}

func testReserveAtLimit(t *testing.T, s backend.Store) {
	ctx := t.Context()
	reserve := func(key string, amount, limit int64, want bool) {
		t.Helper()
		ok, err := s.Reserve(ctx, key, amount, limit)
		if err != nil {
			t.Fatalf("Reserve(%s, %d, %d): %v", key, amount, limit, err)
		}
		if ok != want {
			t.Fatalf("Reserve(%s, %d, %d) = %v, want %v", key, amount, limit, ok, want)
		}
	}
	used := func(key string, want int64) {
		t.Helper()
		got, err := s.Used(ctx, key)
		if err != nil {
			t.Fatalf("Used(%s): %v", key, err)
		}
		if got != want {
			t.Fatalf("Used(%s) = %d, want %d", key, got, want)
		}
	}
	used("day:alice", 0)
	reserve("day:alice", 30, 100, true)
	reserve("day:alice", 70, 100, true) // exactly at the limit
	used("day:alice", 100)
	reserve("day:alice", 1, 100, false)
	used("day:alice", 100)
	if err := s.Adjust(ctx, "day:alice", -20); err != nil {
		t.Fatalf("Adjust: %v", err)
	}
	used("day:alice", 80)
	reserve("day:alice", 21, 100, false)
	reserve("day:alice", 20, 100, true)
	if err := s.Adjust(ctx, "day:alice", -1000); err != nil {
		t.Fatalf("Adjust: %v", err)
	}
	used("day:alice", 0)
	if err := s.Adjust(ctx, "day:alice", 15); err != nil {
		t.Fatalf("Adjust: %v", err)
	}
	used("day:alice", 15)

	reserve("day:bob", 101, 100, false) // too big for a fresh counter
	used("day:bob", 0)
	if err := s.Adjust(ctx, "day:carol", 42); err != nil { // settle without a reservation
		t.Fatalf("Adjust: %v", err)
	}
	used("day:carol", 42)
	used("day:alice", 15)

	if _, err := s.Reserve(ctx, "day:alice", -1, 100); !errors.Is(err, backend.ErrInvalid) {
		t.Errorf("Reserve with a negative amount: err = %v, want ErrInvalid", err)
	}
}

func testDeleteExpired(t *testing.T, s backend.Store) {
	ctx := t.Context()
	now := time.Now()
	old := rec("alice", "old", 1, `{"old":true}`)
	old.UpdatedAt = now.Add(-48 * time.Hour)
	mustPut(t, s, old)
	old2 := rec("alice", "old", 2, `{"old":2}`)
	old2.UpdatedAt = now.Add(-47 * time.Hour)
	mustPut(t, s, old2)
	fresh := rec("alice", "fresh", 1, `{"fresh":true}`)
	fresh.UpdatedAt = now.Add(-time.Hour)
	mustPut(t, s, fresh)
	if err := s.PutLineage(ctx, "alice", "gone", []byte("x"), now.Add(-time.Second)); err != nil {
		t.Fatalf("PutLineage: %v", err)
	}
	if err := s.PutLineage(ctx, "alice", "kept", []byte("y"), now.Add(time.Hour)); err != nil {
		t.Fatalf("PutLineage: %v", err)
	}

	n, err := s.DeleteExpired(ctx, now, 0)
	if err != nil || n != 1 {
		t.Fatalf("DeleteExpired(ttl 0) = %d, %v; want 1 (the expired lineage record), nil", n, err)
	}
	if _, err := s.GetCapsule(ctx, "alice", "old"); err != nil {
		t.Fatalf("DeleteExpired with no TTL removed a capsule: %v", err)
	}

	n, err = s.DeleteExpired(ctx, now, 24*time.Hour)
	if err != nil || n != 1 {
		t.Fatalf("DeleteExpired(ttl 24h) = %d, %v; want 1, nil", n, err)
	}
	if _, err := s.GetCapsule(ctx, "alice", "old"); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("capsule idle for 47h survived a 24h TTL: err = %v", err)
	}
	if h, _ := s.CapsuleHistory(ctx, "alice", "old", 0); len(h) != 0 {
		t.Errorf("expired capsule left %d history records", len(h))
	}
	if _, err := s.GetCapsule(ctx, "alice", "fresh"); err != nil {
		t.Errorf("capsule idle for 1h removed by a 24h TTL: %v", err)
	}
	lin, err := s.GetLineage(ctx, "alice", []string{"kept"})
	if err != nil || len(lin) != 1 {
		t.Errorf("live lineage record removed: %q, %v", lin, err)
	}
	assertAbsent(t, s, `{"old":`)
}

func testDump(t *testing.T, s backend.Store) {
	ctx := t.Context()
	mustPut(t, s, rec("alice", "a1", 1, `{"marker":"dump-capsule"}`))
	if err := s.PutLineage(ctx, "alice", "k", []byte("dump-lineage"), time.Time{}); err != nil {
		t.Fatalf("PutLineage: %v", err)
	}
	if err := s.AppendLedger(ctx, []backend.LedgerEntry{entry("dump-ledger-id", "alice", "primary", "dump-model", base, 1, 1, 1)}); err != nil {
		t.Fatalf("AppendLedger: %v", err)
	}
	if _, err := s.Reserve(ctx, "dump-budget", 5, 10); err != nil {
		t.Fatalf("Reserve: %v", err)
	}
	dump, err := s.Dump(ctx)
	if err != nil {
		t.Fatalf("Dump: %v", err)
	}
	for table, marker := range map[string]string{
		backend.TableCapsules:       "dump-capsule",
		backend.TableCapsuleHistory: "dump-capsule",
		backend.TableLineage:        "dump-lineage",
		backend.TableLedger:         "dump-ledger-id",
		backend.TableBudgets:        "dump-budget",
	} {
		rows, ok := dump[table]
		if !ok {
			t.Errorf("Dump has no table %q (tables: %v)", table, slices.Sorted(maps.Keys(dump)))
			continue
		}
		if !slices.ContainsFunc(rows, func(r string) bool { return strings.Contains(r, marker) }) {
			t.Errorf("Dump table %q = %q, want a row containing %q", table, rows, marker)
		}
	}
}

// testConcurrentCAS runs 1,000 read-modify-write merges from many goroutines
// against one A-leg; none may be lost.
func testConcurrentCAS(t *testing.T, s backend.Store) {
	const (
		workers   = 25
		perWorker = 40 // 1,000 merges
	)
	ctx := t.Context()
	var (
		successes atomic.Int64
		conflicts atomic.Int64
		wg        sync.WaitGroup
		errs      = make(chan error, workers)
	)
	merge := func(item string) error {
		for {
			// The blob is a JSON array of item ids; a merge appends one.
			// Plain byte edits keep 1,000 merges cheap under -race.
			data := []byte(`["` + item + `"]`)
			var expect int64
			cur, err := s.GetCapsule(ctx, "alice", "hot")
			switch {
			case errors.Is(err, backend.ErrNotFound):
			case err != nil:
				return fmt.Errorf("get: %w", err)
			default:
				if !bytes.HasSuffix(cur.Data, []byte("]")) {
					return fmt.Errorf("revision %d is not a JSON array: %q", cur.Revision, cur.Data)
				}
				data = append(bytes.Clone(cur.Data[:len(cur.Data)-1]), `,"`+item+`"]`...)
				expect = cur.Revision
			}
			err = s.PutCapsule(ctx, backend.CapsuleRecord{
				Principal: "alice", Session: "s", ALeg: "hot",
				Revision: expect + 1, Data: data, UpdatedAt: base,
			}, expect)
			if errors.Is(err, backend.ErrConflict) {
				conflicts.Add(1)
				continue
			}
			if err != nil {
				return fmt.Errorf("put revision %d: %w", expect+1, err)
			}
			successes.Add(1)
			return nil
		}
	}
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				if err := merge(fmt.Sprintf("w%02d-%02d", w, i)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("merge: %v", err)
	}

	final, err := s.GetCapsule(ctx, "alice", "hot")
	if err != nil {
		t.Fatalf("GetCapsule: %v", err)
	}
	if final.Revision != successes.Load() || final.Revision != workers*perWorker {
		t.Errorf("final revision = %d, successful updates = %d, want both %d", final.Revision, successes.Load(), workers*perWorker)
	}
	var items []string
	if err := json.Unmarshal(final.Data, &items); err != nil {
		t.Fatalf("decode final: %v", err)
	}
	var want []string
	for w := range workers {
		for i := range perWorker {
			want = append(want, fmt.Sprintf("w%02d-%02d", w, i))
		}
	}
	if diff := cmp.Diff(want, items, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("merged items lost or duplicated (-want +got):\n%s", diff)
	}
	hist, err := s.CapsuleHistory(ctx, "alice", "hot", 0)
	if err != nil {
		t.Fatalf("CapsuleHistory: %v", err)
	}
	if len(hist) != backend.HistoryLimit {
		t.Errorf("history holds %d revisions, want %d", len(hist), backend.HistoryLimit)
	}
	for i, h := range hist {
		if wantRev := final.Revision - int64(i); h.Revision != wantRev {
			t.Errorf("history[%d].Revision = %d, want %d (newest first, no gaps)", i, h.Revision, wantRev)
		}
		var d []string
		if err := json.Unmarshal(h.Data, &d); err != nil {
			t.Fatalf("decode revision %d: %v", h.Revision, err)
		}
		if int64(len(d)) != h.Revision || !slices.Equal(d, items[:len(d)]) {
			t.Errorf("revision %d holds %d items that are not a prefix of the final revision's", h.Revision, len(d))
		}
	}
	t.Logf("%d merges, %d conflicts retried", successes.Load(), conflicts.Load())
}

// testConcurrentReserve races 200 reservations against a limit that admits
// exactly 50.
func testConcurrentReserve(t *testing.T, s backend.Store) {
	const (
		callers = 200
		amount  = 3
		limit   = 50*amount + amount - 1 // room for 50, not 51
	)
	ctx := t.Context()
	var (
		granted atomic.Int64
		wg      sync.WaitGroup
		errs    = make(chan error, callers)
		start   = make(chan struct{})
	)
	for range callers {
		wg.Go(func() {
			<-start
			ok, err := s.Reserve(ctx, "budget:hot", amount, limit)
			if err != nil {
				errs <- err
				return
			}
			if ok {
				granted.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Reserve: %v", err)
	}
	if got := granted.Load(); got != 50 {
		t.Errorf("%d of %d reservations granted, want 50", got, callers)
	}
	used, err := s.Used(ctx, "budget:hot")
	if err != nil {
		t.Fatalf("Used: %v", err)
	}
	if used != 50*amount {
		t.Errorf("Used = %d, want %d", used, 50*amount)
	}
}
