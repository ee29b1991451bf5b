package storetest

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/tether-dev/tether/internal/store/backend"
)

// Alternate returns a Store that sends each call to the next of stores in
// turn. Run against it, the suite checks that several processes sharing one
// database (proxy replicas) see one consistent state: CAS, reservations and
// reads must hold across them. Close closes nothing; close the stores
// themselves.
func Alternate(stores ...backend.Store) backend.Store {
	return &alternate{stores: stores}
}

type alternate struct {
	stores []backend.Store
	next   atomic.Uint64
}

func (a *alternate) pick() backend.Store {
	return a.stores[(a.next.Add(1)-1)%uint64(len(a.stores))]
}

func (a *alternate) GetCapsule(ctx context.Context, principal, aLeg string) (backend.CapsuleRecord, error) {
	return a.pick().GetCapsule(ctx, principal, aLeg)
}

func (a *alternate) PutCapsule(ctx context.Context, rec backend.CapsuleRecord, expectRevision int64) error {
	return a.pick().PutCapsule(ctx, rec, expectRevision)
}

func (a *alternate) CapsuleHistory(ctx context.Context, principal, aLeg string, limit int) ([]backend.CapsuleRecord, error) {
	return a.pick().CapsuleHistory(ctx, principal, aLeg, limit)
}

func (a *alternate) ListCapsules(ctx context.Context, principal string) ([]backend.CapsuleRecord, error) {
	return a.pick().ListCapsules(ctx, principal)
}

func (a *alternate) PurgeCapsules(ctx context.Context, principal, aLeg string) (int, error) {
	return a.pick().PurgeCapsules(ctx, principal, aLeg)
}

func (a *alternate) PutLineage(ctx context.Context, principal, key string, value []byte, expires time.Time) error {
	return a.pick().PutLineage(ctx, principal, key, value, expires)
}

func (a *alternate) PutLineages(ctx context.Context, principal string, puts []backend.LineagePut) error {
	return a.pick().PutLineages(ctx, principal, puts)
}

func (a *alternate) GetLineage(ctx context.Context, principal string, keys []string) (map[string][]byte, error) {
	return a.pick().GetLineage(ctx, principal, keys)
}

func (a *alternate) AppendLedger(ctx context.Context, entries []backend.LedgerEntry) error {
	return a.pick().AppendLedger(ctx, entries)
}

func (a *alternate) Usage(ctx context.Context, principal string, since time.Time) ([]backend.UsageRow, error) {
	return a.pick().Usage(ctx, principal, since)
}

func (a *alternate) LedgerEntries(ctx context.Context, principal string, limit int) ([]backend.LedgerEntry, error) {
	return a.pick().LedgerEntries(ctx, principal, limit)
}

func (a *alternate) Reserve(ctx context.Context, key string, amount, limit int64) (bool, error) {
	return a.pick().Reserve(ctx, key, amount, limit)
}

func (a *alternate) Adjust(ctx context.Context, key string, delta int64) error {
	return a.pick().Adjust(ctx, key, delta)
}

func (a *alternate) Used(ctx context.Context, key string) (int64, error) {
	return a.pick().Used(ctx, key)
}

func (a *alternate) DeleteExpired(ctx context.Context, now time.Time, capsuleTTL time.Duration) (int, error) {
	return a.pick().DeleteExpired(ctx, now, capsuleTTL)
}

func (a *alternate) Dump(ctx context.Context) (map[string][]string, error) {
	return a.pick().Dump(ctx)
}

func (a *alternate) Ping(ctx context.Context) error {
	for _, s := range a.stores {
		if err := s.Ping(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (a *alternate) Close() error { return nil }

func (a *alternate) EnqueueOutbox(ctx context.Context, e backend.OutboxEntry) (int64, error) {
	return a.pick().EnqueueOutbox(ctx, e)
}

func (a *alternate) ClaimOutbox(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]backend.OutboxEntry, error) {
	return a.pick().ClaimOutbox(ctx, owner, now, lease, limit)
}

func (a *alternate) CompleteOutbox(ctx context.Context, owner string, ids []int64) error {
	return a.pick().CompleteOutbox(ctx, owner, ids)
}

func (a *alternate) ReleaseOutbox(ctx context.Context, owner string, ids []int64, retryAt time.Time) error {
	return a.pick().ReleaseOutbox(ctx, owner, ids, retryAt)
}

func (a *alternate) OutboxBusy(ctx context.Context, principal, aLeg string, now time.Time) (bool, error) {
	return a.pick().OutboxBusy(ctx, principal, aLeg, now)
}

func (a *alternate) OutboxStats(ctx context.Context) (int, time.Time, error) {
	return a.pick().OutboxStats(ctx)
}

func (a *alternate) PutReservation(ctx context.Context, r backend.Reservation) (bool, error) {
	return a.pick().PutReservation(ctx, r)
}

func (a *alternate) SettleReservations(ctx context.Context, s []backend.Settlement) error {
	return a.pick().SettleReservations(ctx, s)
}

func (a *alternate) PendingReservations(ctx context.Context, expiredBy time.Time, limit int) ([]backend.Reservation, error) {
	return a.pick().PendingReservations(ctx, expiredBy, limit)
}

func (a *alternate) AppendCompaction(ctx context.Context, ev backend.CompactionEvent) (int64, error) {
	return a.pick().AppendCompaction(ctx, ev)
}

func (a *alternate) Compactions(ctx context.Context, principal, aLeg string, limit int) ([]backend.CompactionEvent, error) {
	return a.pick().Compactions(ctx, principal, aLeg, limit)
}
