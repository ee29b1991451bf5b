package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/store/backend"
)

func enqueue(t *testing.T, s backend.Store, principal, aLeg, payload string, notBefore time.Time) int64 {
	t.Helper()
	id, err := s.EnqueueOutbox(t.Context(), backend.OutboxEntry{Principal: principal, ALeg: aLeg, Payload: []byte(payload), NotBefore: notBefore})
	if err != nil {
		t.Fatalf("EnqueueOutbox: %v", err)
	}
	return id
}

func claim(t *testing.T, s backend.Store, owner string, now time.Time, lease time.Duration, limit int) []backend.OutboxEntry {
	t.Helper()
	got, err := s.ClaimOutbox(t.Context(), owner, now, lease, limit)
	if err != nil {
		t.Fatalf("ClaimOutbox(%s): %v", owner, err)
	}
	return got
}

func ids(es []backend.OutboxEntry) []int64 {
	out := make([]int64, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

// testOutboxLease: entries are claimed oldest first under a lease, never by
// two owners at once; a completed entry is gone, a released one comes back
// at its retry time with one more attempt, and an entry whose owner died is
// claimed again when its lease expires.
func testOutboxLease(t *testing.T, s backend.Store) {
	ctx := t.Context()
	if _, err := s.EnqueueOutbox(ctx, backend.OutboxEntry{Principal: "alice"}); err == nil {
		t.Fatal("EnqueueOutbox without an A-leg: want an error")
	}
	now := base
	a := enqueue(t, s, "alice", "a1", "first", time.Time{})
	b := enqueue(t, s, "alice", "a1", "second", time.Time{})
	c := enqueue(t, s, "bob", "b1", "later", now.Add(time.Minute))
	if n, oldest, err := s.OutboxStats(ctx); err != nil || n != 3 || oldest.IsZero() {
		t.Fatalf("OutboxStats = %d, %v, %v; want 3 entries", n, oldest, err)
	}

	got := claim(t, s, "w1", now, 30*time.Second, 10)
	if !slices.Equal(ids(got), []int64{a, b}) {
		t.Fatalf("w1 claimed %v, want %v (c is not due yet)", ids(got), []int64{a, b})
	}
	if string(got[0].Payload) != "first" || got[0].Principal != "alice" || got[0].ALeg != "a1" || got[0].Attempts != 0 {
		t.Fatalf("claimed entry = %+v", got[0])
	}
	if again := claim(t, s, "w2", now.Add(time.Second), 30*time.Second, 10); len(again) != 0 {
		t.Fatalf("w2 claimed %v while w1 holds the lease", ids(again))
	}

	// w1 completes a, releases b for a retry in 10s.
	if err := s.CompleteOutbox(ctx, "w1", []int64{a}); err != nil {
		t.Fatalf("CompleteOutbox: %v", err)
	}
	if err := s.ReleaseOutbox(ctx, "w1", []int64{b}, now.Add(10*time.Second)); err != nil {
		t.Fatalf("ReleaseOutbox: %v", err)
	}
	if got := claim(t, s, "w2", now.Add(5*time.Second), 30*time.Second, 10); len(got) != 0 {
		t.Fatalf("w2 claimed %v before the retry time", ids(got))
	}
	got = claim(t, s, "w2", now.Add(11*time.Second), 30*time.Second, 10)
	if !slices.Equal(ids(got), []int64{b}) || got[0].Attempts != 1 {
		t.Fatalf("w2 claimed %+v, want entry %d with 1 attempt", got, b)
	}
	// w2 dies; after its lease w3 takes b (and the now due c). w2's late
	// completion must not delete what w3 holds.
	got = claim(t, s, "w3", now.Add(2*time.Minute), 30*time.Second, 10)
	if !slices.Equal(ids(got), []int64{b, c}) {
		t.Fatalf("w3 claimed %v after w2's lease expired, want %v", ids(got), []int64{b, c})
	}
	if err := s.CompleteOutbox(ctx, "w2", []int64{b}); err != nil {
		t.Fatalf("CompleteOutbox by a stale owner: %v", err)
	}
	if n, _, _ := s.OutboxStats(ctx); n != 2 {
		t.Fatalf("after a stale owner's completion: %d entries, want 2", n)
	}
	if err := s.CompleteOutbox(ctx, "w3", []int64{b, c}); err != nil {
		t.Fatalf("CompleteOutbox: %v", err)
	}
	if n, oldest, err := s.OutboxStats(ctx); err != nil || n != 0 || !oldest.IsZero() {
		t.Fatalf("OutboxStats after completing all = %d, %v, %v", n, oldest, err)
	}
}

// testOutboxPurged: deleting a conversation deletes the work owed on it.
func testOutboxPurged(t *testing.T, s backend.Store) {
	ctx := t.Context()
	mustPut(t, s, rec("alice", "a1", 1, `{}`))
	mustPut(t, s, rec("alice", "a2", 1, `{}`))
	enqueue(t, s, "alice", "a1", "owed-a1", time.Time{})
	enqueue(t, s, "alice", "a2", "owed-a2", time.Time{})
	enqueue(t, s, "bob", "b1", "owed-b1", time.Time{})
	if _, err := s.PurgeCapsules(ctx, "alice", "a1"); err != nil {
		t.Fatalf("PurgeCapsules: %v", err)
	}
	assertAbsent(t, s, "owed-a1")
	if _, err := s.PurgeCapsules(ctx, "alice", ""); err != nil {
		t.Fatalf("PurgeCapsules: %v", err)
	}
	assertAbsent(t, s, "owed-a2")
	if n, _, _ := s.OutboxStats(ctx); n != 1 {
		t.Fatalf("bob's entry was purged with alice's: %d entries left, want 1", n)
	}
}

// testConcurrentClaim: many workers claiming at once get every entry
// exactly once.
func testConcurrentClaim(t *testing.T, s backend.Store) {
	const entries, workers = 200, 8
	for i := range entries {
		enqueue(t, s, "alice", fmt.Sprintf("a%d", i%17), "x", time.Time{})
	}
	var mu sync.Mutex
	seen := map[int64]string{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			owner := fmt.Sprintf("w%d", w)
			for {
				got, err := s.ClaimOutbox(t.Context(), owner, base, time.Minute, 7)
				if err != nil {
					t.Errorf("ClaimOutbox: %v", err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, e := range got {
					if prev, dup := seen[e.ID]; dup {
						t.Errorf("entry %d claimed by %s and %s", e.ID, prev, owner)
					}
					seen[e.ID] = owner
				}
				mu.Unlock()
				if err := s.CompleteOutbox(t.Context(), owner, ids(got)); err != nil {
					t.Errorf("CompleteOutbox: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if len(seen) != entries {
		t.Fatalf("claimed %d distinct entries, want %d", len(seen), entries)
	}
}

func reservation(id string, amount int64, holds ...string) backend.Reservation {
	r := backend.Reservation{ID: id, Expires: base.Add(time.Minute),
		Entry: entry(id, "alice", "primary", "m", base, amount-1, 1, amount)}
	for _, k := range holds {
		r.Holds = append(r.Holds, backend.Hold{Key: k, Amount: amount, Limit: 100})
	}
	return r
}

// testReservations: a reservation takes all its counters or none; settling
// corrects the counters and records the entry once; a reservation left by a
// dead process is listed after it expires and its settlement keeps counters
// and ledger equal.
func testReservations(t *testing.T, s backend.Store) {
	ctx := t.Context()
	used := func(key string, want int64) {
		t.Helper()
		if got, err := s.Used(ctx, key); err != nil || got != want {
			t.Fatalf("Used(%s) = %d, %v; want %d", key, got, err, want)
		}
	}
	put := func(r backend.Reservation, want bool) {
		t.Helper()
		ok, err := s.PutReservation(ctx, r)
		if err != nil || ok != want {
			t.Fatalf("PutReservation(%s) = %v, %v; want %v", r.ID, ok, err, want)
		}
	}
	if _, err := s.PutReservation(ctx, backend.Reservation{}); err == nil {
		t.Fatal("PutReservation without an id: want an error")
	}
	put(reservation("r1", 60, "tok", "usd"), true)
	used("tok", 60)
	used("usd", 60)
	// r2 fits "usd2" but not "tok": neither counter moves.
	r2 := reservation("r2", 50, "usd2", "tok")
	put(r2, false)
	used("tok", 60)
	used("usd2", 0)
	put(reservation("r3", 30, "tok"), true)
	used("tok", 90)

	// r1 used 20 (40 less than reserved); settling twice changes nothing more.
	st := backend.Settlement{ReservationID: "r1", Entry: entry("r1", "alice", "primary", "m", base, 19, 1, 20),
		Adjust: []backend.Hold{{Key: "tok", Amount: -40}, {Key: "usd", Amount: -40}}}
	for range 2 {
		if err := s.SettleReservations(ctx, []backend.Settlement{st}); err != nil {
			t.Fatalf("SettleReservations: %v", err)
		}
	}
	used("tok", 50)
	used("usd", 20)
	if es, err := s.LedgerEntries(ctx, "alice", 0); err != nil || len(es) != 1 || es[0].CostMicros != 20 {
		t.Fatalf("ledger after settling r1 = %+v, %v; want one entry of cost 20", es, err)
	}

	// r3's process died: r3 is pending once it expires.
	if got, err := s.PendingReservations(ctx, base, 0); err != nil || len(got) != 0 {
		t.Fatalf("PendingReservations before expiry = %+v, %v", got, err)
	}
	got, err := s.PendingReservations(ctx, base.Add(time.Hour), 0)
	if err != nil || len(got) != 1 || got[0].ID != "r3" {
		t.Fatalf("PendingReservations after expiry = %+v, %v; want r3", got, err)
	}
	if len(got[0].Holds) != 1 || got[0].Holds[0] != (backend.Hold{Key: "tok", Amount: 30, Limit: 100}) || got[0].Entry.CostMicros != 30 ||
		!got[0].Expires.Equal(base.Add(time.Minute)) {
		t.Fatalf("pending reservation = %+v", got[0])
	}
	if err := s.SettleReservations(ctx, []backend.Settlement{{ReservationID: "r3", Entry: got[0].Entry}}); err != nil {
		t.Fatalf("SettleReservations: %v", err)
	}
	used("tok", 50)
	if got, _ := s.PendingReservations(ctx, base.Add(time.Hour), 0); len(got) != 0 {
		t.Fatalf("r3 still pending after its settlement: %+v", got)
	}
	usage, err := s.Usage(ctx, "alice", time.Time{})
	if err != nil || len(usage) != 1 || usage[0].Calls != 2 || usage[0].CostMicros != 50 {
		t.Fatalf("usage = %+v, %v; want 2 calls costing 50 (= the tok counter)", usage, err)
	}
	// A call admitted while the store was down has no reservation: its
	// settlement moves the counters all the same.
	if err := s.SettleReservations(ctx, []backend.Settlement{{Entry: entry("r4", "alice", "primary", "m", base, 6, 1, 7),
		Adjust: []backend.Hold{{Key: "tok", Amount: 7}}}}); err != nil {
		t.Fatalf("SettleReservations without a reservation: %v", err)
	}
	used("tok", 57)
}

// testSettlementBatches: one batch of settlements ends every reservation
// it names and writes each entry once, whether or not it adjusts budgets;
// a reservation named twice in a batch adjusts its budgets once.
func testSettlementBatches(t *testing.T, s backend.Store) {
	ctx := t.Context()
	for _, id := range []string{"b1", "b2", "b3", "b4"} {
		if ok, err := s.PutReservation(ctx, reservation(id, 10, "pool")); err != nil || !ok {
			t.Fatalf("PutReservation(%s) = %v, %v", id, ok, err)
		}
	}
	pending := func() []string {
		t.Helper()
		got, err := s.PendingReservations(ctx, base.Add(time.Hour), 0)
		if err != nil {
			t.Fatalf("PendingReservations: %v", err)
		}
		var ids []string
		for _, r := range got {
			ids = append(ids, r.ID)
		}
		return ids
	}
	// No budget adjusted: b1 and b2 end, a call without a reservation and
	// a repeated entry are recorded once each.
	plain := []backend.Settlement{
		{ReservationID: "b1", Entry: entry("b1", "alice", "primary", "m", base, 1, 1, 2)},
		{Entry: entry("free", "alice", "primary", "m", base, 1, 1, 3)},
		{ReservationID: "b2", Entry: entry("b2", "alice", "primary", "m", base, 1, 1, 4)},
		{ReservationID: "b2", Entry: entry("b2", "alice", "primary", "m", base, 1, 1, 4)},
	}
	if err := s.SettleReservations(ctx, plain); err != nil {
		t.Fatalf("SettleReservations without adjustments: %v", err)
	}
	if got := pending(); !slices.Equal(got, []string{"b3", "b4"}) {
		t.Fatalf("pending after settling b1 and b2 = %v, want [b3 b4]", got)
	}
	if es, err := s.LedgerEntries(ctx, "alice", 0); err != nil || len(es) != 3 {
		t.Fatalf("ledger after the first batch = %d entries, %v; want 3", len(es), err)
	}
	if used, err := s.Used(ctx, "pool"); err != nil || used != 40 {
		t.Fatalf("Used(pool) = %d, %v; want the 40 still reserved", used, err)
	}
	// b3 named twice gives back its 10 once; b1, ended already, gives
	// back nothing; b4 gives back 7.
	adjusting := []backend.Settlement{
		{ReservationID: "b3", Entry: entry("b3", "alice", "primary", "m", base, 1, 1, 0), Adjust: []backend.Hold{{Key: "pool", Amount: -10}}},
		{ReservationID: "b1", Entry: entry("b1", "alice", "primary", "m", base, 1, 1, 2), Adjust: []backend.Hold{{Key: "pool", Amount: -8}}},
		{ReservationID: "b3", Entry: entry("b3", "alice", "primary", "m", base, 1, 1, 0), Adjust: []backend.Hold{{Key: "pool", Amount: -10}}},
		{ReservationID: "b4", Entry: entry("b4", "alice", "primary", "m", base, 1, 1, 3), Adjust: []backend.Hold{{Key: "pool", Amount: -7}}},
	}
	if err := s.SettleReservations(ctx, adjusting); err != nil {
		t.Fatalf("SettleReservations with adjustments: %v", err)
	}
	if got := pending(); len(got) != 0 {
		t.Fatalf("pending after settling every reservation = %v", got)
	}
	if used, err := s.Used(ctx, "pool"); err != nil || used != 23 {
		t.Fatalf("Used(pool) = %d, %v; want 23 (40 reserved, 10 and 7 given back once)", used, err)
	}
	if es, err := s.LedgerEntries(ctx, "alice", 0); err != nil || len(es) != 5 {
		t.Fatalf("ledger after both batches = %d entries, %v; want 5", len(es), err)
	}
}

// testConcurrentReservations: concurrent reservations on one budget never
// exceed it, and settling them all leaves counter = ledger sum.
func testConcurrentReservations(t *testing.T, s backend.Store) {
	const n = 100
	var wg sync.WaitGroup
	var mu sync.Mutex
	var won []string
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := reservation(fmt.Sprintf("c%03d", i), 3, "shared")
			r.Holds[0].Limit = 150
			ok, err := s.PutReservation(t.Context(), r)
			if err != nil {
				t.Errorf("PutReservation: %v", err)
				return
			}
			if ok {
				mu.Lock()
				won = append(won, r.ID)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(won) != 50 {
		t.Fatalf("%d reservations of 3 fit a budget of 150, want 50", len(won))
	}
	var settle []backend.Settlement
	for _, id := range won {
		settle = append(settle, backend.Settlement{ReservationID: id, Entry: entry(id, "alice", "primary", "m", base, 1, 1, 2),
			Adjust: []backend.Hold{{Key: "shared", Amount: -1}}})
	}
	if err := s.SettleReservations(t.Context(), settle); err != nil {
		t.Fatalf("SettleReservations: %v", err)
	}
	used, err := s.Used(t.Context(), "shared")
	if err != nil || used != 100 {
		t.Fatalf("Used(shared) = %d, %v; want 100 (50 calls × cost 2)", used, err)
	}
}

// testOutboxBusy: an A-leg is busy while an entry of it is held by the
// worker that wrote it or leased by one that claimed it, on any replica;
// not once it is completed, waiting for a retry, or its lease ran out.
func testOutboxBusy(t *testing.T, s backend.Store) {
	ctx := t.Context()
	busy := func(principal, aLeg string, now time.Time) bool {
		t.Helper()
		b, err := s.OutboxBusy(ctx, principal, aLeg, now)
		if err != nil {
			t.Fatalf("OutboxBusy: %v", err)
		}
		return b
	}
	now := base
	if busy("alice", "a1", now) {
		t.Fatal("an empty outbox is busy")
	}
	held := enqueue(t, s, "alice", "a1", "held", now.Add(time.Minute))
	if !busy("alice", "a1", now) {
		t.Fatal("an entry held by its writer is not busy")
	}
	if busy("bob", "a1", now) || busy("alice", "a2", now) {
		t.Fatal("busy leaks to another principal or A-leg")
	}
	if busy("alice", "a1", now.Add(2*time.Minute)) {
		t.Fatal("an entry whose hold ended (its writer died) is still busy before anyone claims it")
	}
	got := claim(t, s, "w2", now.Add(2*time.Minute), 30*time.Second, 10)
	if !slices.Equal(ids(got), []int64{held}) {
		t.Fatalf("claimed %v, want %d", ids(got), held)
	}
	if !busy("alice", "a1", now.Add(2*time.Minute+time.Second)) {
		t.Fatal("a leased entry is not busy")
	}
	if err := s.ReleaseOutbox(ctx, "w2", []int64{held}, now.Add(3*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if busy("alice", "a1", now.Add(2*time.Minute+time.Second)) {
		t.Fatal("an entry waiting for its retry is busy")
	}
	due := enqueue(t, s, "alice", "a3", "due", time.Time{})
	if busy("alice", "a3", now) {
		t.Fatal("a due, unclaimed entry is busy")
	}
	claim(t, s, "w3", now, 30*time.Second, 10)
	if err := s.CompleteOutbox(ctx, "w3", []int64{due}); err != nil {
		t.Fatal(err)
	}
	if busy("alice", "a3", now) {
		t.Fatal("a completed entry is busy")
	}
}
