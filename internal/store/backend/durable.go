package backend

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// OutboxEntry is one unit of owed work for an A-leg: an extraction delta
// that could not run when it was offered. The store keeps it until a worker
// completes it; a worker holds it under a lease, so a worker (or replica)
// that dies mid-job loses nothing: the lease expires and another claims it.
type OutboxEntry struct {
	ID        int64 // assigned by EnqueueOutbox
	Principal string
	ALeg      string
	Payload   []byte // opaque to the store
	Attempts  int    // times a worker released it for retry
	NotBefore time.Time
	CreatedAt time.Time
}

// Outbox is the durable queue of owed work, shared by every replica on one
// store. Workers claim due entries under a lease (PostgreSQL: FOR UPDATE
// SKIP LOCKED, so two replicas never claim the same entry), then complete or
// release them; an entry whose lease expired is due again.
type Outbox interface {
	// EnqueueOutbox records e (ID, Attempts and CreatedAt are set by the
	// store; a zero NotBefore is due at once) and returns its id.
	EnqueueOutbox(ctx context.Context, e OutboxEntry) (int64, error)
	// ClaimOutbox leases to owner, until now+lease, up to limit entries
	// that are due at now (NotBefore <= now) and not leased (or whose lease
	// expired), oldest first.
	ClaimOutbox(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]OutboxEntry, error)
	// CompleteOutbox deletes the entries that owner still holds; ids it no
	// longer holds (lease expired and claimed by another) are left alone.
	CompleteOutbox(ctx context.Context, owner string, ids []int64) error
	// ReleaseOutbox ends owner's lease on the entries it still holds,
	// counts an attempt and makes them due again at retryAt.
	ReleaseOutbox(ctx context.Context, owner string, ids []int64, retryAt time.Time) error
	// OutboxStats returns the number of entries and the creation time of
	// the oldest (zero when empty).
	OutboxStats(ctx context.Context) (n int, oldest time.Time, err error)
	// OutboxBusy reports whether some worker, on any replica, is on an
	// entry of the A-leg at now: one held by the worker that wrote it
	// (never released, NotBefore still ahead) or claimed under a lease
	// that has not expired. Entries waiting for a retry or for a claim are
	// not busy. The preservation barrier polls it across replicas.
	OutboxBusy(ctx context.Context, principal, aLeg string, now time.Time) (bool, error)
}

// Hold is an amount on one budget counter. In a Reservation, Limit bounds
// the counter after the reservation; in a Settlement, Amount is the
// (possibly negative) correction and Limit is unused.
type Hold struct {
	Key    string
	Amount int64
	Limit  int64
}

// Reservation is a durable budget reservation for one upstream call, written
// before the call is forwarded. Entry is what the ledger records if the call
// is never settled (the process died): the reserved estimate, so counters
// and ledger agree.
type Reservation struct {
	ID      string
	Holds   []Hold
	Entry   LedgerEntry
	Expires time.Time
}

// Settlement ends a reservation with the call's real usage.
type Settlement struct {
	ReservationID string
	Entry         LedgerEntry
	Adjust        []Hold // counter corrections (actual - reserved)
}

// Reservations makes accounting crash-safe: a reservation is stored, with
// its counters, in one transaction before the call is forwarded, and its
// settlement moves the counters and appends the ledger entry in one
// transaction, so after a crash every call is either settled or still
// reserved (and reconciled from the store).
type Reservations interface {
	// PutReservation adds every hold's Amount to its counter if each result
	// stays within its Limit, and records r, atomically. If any hold is
	// refused nothing changes and it returns false.
	PutReservation(ctx context.Context, r Reservation) (bool, error)
	// SettleReservations applies the settlements in one transaction: for
	// each whose reservation is still recorded, the counters move by Adjust
	// and the reservation is deleted; every entry is appended (an id
	// already recorded is ignored). A settlement with an empty
	// ReservationID (a call admitted while the store was unreachable) moves
	// the counters unconditionally. Counters never go below zero. A store
	// may instead journal a batch that moves no counter (entries only) and
	// apply it later, if the journal survives the process and the ledger's
	// reads see the entries once SettleReservations has returned.
	SettleReservations(ctx context.Context, s []Settlement) error
	// PendingReservations returns up to limit recorded reservations that
	// expire at or before expiredBy, soonest first.
	PendingReservations(ctx context.Context, expiredBy time.Time, limit int) ([]Reservation, error)
}

// SettlementGrouper is a Store whose SettleReservations already shares its
// transactions between concurrent callers (SQLite's write group): the
// ledger calls it on the settling caller's goroutine rather than batching
// settlements on one of its own, a hand-off each way.
type SettlementGrouper interface {
	GroupsSettlements()
}

// Table names of the durable work.
const (
	TableOutbox       = "outbox"
	TableReservations = "reservations"
)

// CheckReservation validates the arguments of PutReservation.
func CheckReservation(r Reservation) error {
	if r.ID == "" {
		return fmt.Errorf("put reservation: empty id: %w", ErrInvalid)
	}
	for _, h := range r.Holds {
		if err := CheckReserve(h.Key, h.Amount); err != nil {
			return err
		}
	}
	return nil
}

// CheckOutbox validates the arguments of EnqueueOutbox.
func CheckOutbox(e OutboxEntry) error {
	if e.Principal == "" || e.ALeg == "" {
		return fmt.Errorf("enqueue outbox: empty principal or a-leg: %w", ErrInvalid)
	}
	return nil
}

// reservationData is the stored form of a reservation's holds and entry.
type reservationData struct {
	Holds []Hold      `json:"holds"`
	Entry LedgerEntry `json:"entry"`
}

// EncodeReservation returns the stored form of r's holds and entry (ids,
// counters and amounts only).
func EncodeReservation(r Reservation) ([]byte, error) {
	r.Entry.Time = NormalizeTime(r.Entry.Time)
	return json.Marshal(reservationData{Holds: r.Holds, Entry: r.Entry})
}

// DecodeReservation reads what EncodeReservation wrote into r.
func DecodeReservation(data []byte, r *Reservation) error {
	var d reservationData
	if err := json.Unmarshal(data, &d); err != nil {
		return fmt.Errorf("decode reservation %s: %w", r.ID, err)
	}
	r.Holds, r.Entry = d.Holds, d.Entry
	return nil
}

// NewCallID returns a new call (B-leg) id, the ledger row's key: "bl_",
// the time t in milliseconds since the epoch (12 hex digits), then 64
// random bits. Ids made later sort later, so a store's unique index of
// them grows at its end: a random id touched a random page of that index
// for every row written. The random part keeps the ids made in one
// millisecond, here or on another replica, apart.
func NewCallID(t time.Time) string {
	var b [14]byte
	ms := uint64(t.UnixMilli())
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	_, _ = rand.Read(b[6:])
	return "bl_" + hex.EncodeToString(b[:])
}
