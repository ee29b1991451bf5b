package memstore

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/tether-dev/tether/internal/store/backend"
)

// durable is the outbox and the reservations; Store.mu guards it.
type durable struct {
	outboxSeq    int64
	outbox       map[int64]*outboxRow
	reservations map[string]backend.Reservation
}

type outboxRow struct {
	e     backend.OutboxEntry
	owner string
	until time.Time
}

// EnqueueOutbox implements backend.Outbox.
func (s *Store) EnqueueOutbox(ctx context.Context, e backend.OutboxEntry) (int64, error) {
	if err := backend.CheckOutbox(e); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, fmt.Errorf("enqueue outbox: memory store closed")
	}
	if s.outbox == nil {
		s.outbox = map[int64]*outboxRow{}
	}
	s.outboxSeq++
	e.ID, e.Attempts, e.Payload = s.outboxSeq, 0, bytes.Clone(e.Payload)
	e.CreatedAt = backend.NormalizeTime(s.now())
	e.NotBefore = backend.NormalizeTime(e.NotBefore)
	s.outbox[e.ID] = &outboxRow{e: e}
	return e.ID, nil
}

// ClaimOutbox implements backend.Outbox.
func (s *Store) ClaimOutbox(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]backend.OutboxEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []backend.OutboxEntry
	for _, id := range slices.Sorted(maps.Keys(s.outbox)) {
		if len(out) >= limit {
			break
		}
		r := s.outbox[id]
		if r.e.NotBefore.After(now) || (r.owner != "" && r.until.After(now)) {
			continue
		}
		r.owner, r.until = owner, now.Add(lease)
		e := r.e
		e.Payload = bytes.Clone(e.Payload)
		out = append(out, e)
	}
	return out, nil
}

// CompleteOutbox implements backend.Outbox.
func (s *Store) CompleteOutbox(ctx context.Context, owner string, ids []int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if r := s.outbox[id]; r != nil && r.owner == owner {
			delete(s.outbox, id)
		}
	}
	return nil
}

// ReleaseOutbox implements backend.Outbox.
func (s *Store) ReleaseOutbox(ctx context.Context, owner string, ids []int64, retryAt time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if r := s.outbox[id]; r != nil && r.owner == owner {
			r.owner, r.until = "", time.Time{}
			r.e.Attempts++
			r.e.NotBefore = backend.NormalizeTime(retryAt)
		}
	}
	return nil
}

// OutboxStats implements backend.Outbox.
func (s *Store) OutboxStats(ctx context.Context) (int, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var oldest time.Time
	for _, r := range s.outbox {
		if oldest.IsZero() || r.e.CreatedAt.Before(oldest) {
			oldest = r.e.CreatedAt
		}
	}
	return len(s.outbox), oldest, nil
}

// OutboxBusy implements backend.Outbox.
func (s *Store) OutboxBusy(ctx context.Context, principal, aLeg string, now time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.outbox {
		if r.e.Principal != principal || r.e.ALeg != aLeg {
			continue
		}
		if (r.owner != "" && r.until.After(now)) || (r.owner == "" && r.e.Attempts == 0 && r.e.NotBefore.After(now)) {
			return true, nil
		}
	}
	return false, nil
}

// PutReservation implements backend.Reservations.
func (s *Store) PutReservation(ctx context.Context, r backend.Reservation) (bool, error) {
	if err := backend.CheckReservation(r); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false, fmt.Errorf("put reservation: memory store closed")
	}
	for _, h := range r.Holds {
		if s.budgets[h.Key]+h.Amount > h.Limit {
			return false, nil
		}
	}
	for _, h := range r.Holds {
		s.budgets[h.Key] += h.Amount
	}
	if s.reservations == nil {
		s.reservations = map[string]backend.Reservation{}
	}
	r.Holds = slices.Clone(r.Holds)
	r.Expires = backend.NormalizeTime(r.Expires)
	r.Entry.Time = backend.NormalizeTime(r.Entry.Time)
	s.reservations[r.ID] = r
	return true, nil
}

// SettleReservations implements backend.Reservations.
func (s *Store) SettleReservations(ctx context.Context, settle []backend.Settlement) error {
	if err := backend.CheckSettlements(settle); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("settle reservations: memory store closed")
	}
	for _, st := range settle {
		if _, ok := s.reservations[st.ReservationID]; ok || st.ReservationID == "" {
			for _, h := range st.Adjust {
				s.budgets[h.Key] = max(s.budgets[h.Key]+h.Amount, 0)
			}
			delete(s.reservations, st.ReservationID)
		}
		if _, ok := s.ledger[st.Entry.ID]; !ok {
			e := st.Entry
			e.Time = backend.NormalizeTime(e.Time)
			s.ledger[e.ID] = e
		}
	}
	return nil
}

// PendingReservations implements backend.Reservations.
func (s *Store) PendingReservations(ctx context.Context, expiredBy time.Time, limit int) ([]backend.Reservation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []backend.Reservation
	for _, r := range s.reservations {
		if !r.Expires.After(expiredBy) {
			r.Holds = slices.Clone(r.Holds)
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b backend.Reservation) int {
		return cmp.Or(a.Expires.Compare(b.Expires), cmp.Compare(a.ID, b.ID))
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// dumpDurable adds the outbox and reservation rows; s.mu is held.
func (s *Store) dumpDurable(out map[string][]string) {
	out[backend.TableOutbox] = []string{}
	out[backend.TableReservations] = []string{}
	for _, r := range s.outbox {
		out[backend.TableOutbox] = append(out[backend.TableOutbox], fmt.Sprintf("%d|%s|%s|%s|%d|%s",
			r.e.ID, r.e.Principal, r.e.ALeg, r.e.Payload, r.e.Attempts, r.owner))
	}
	for _, r := range s.reservations {
		out[backend.TableReservations] = append(out[backend.TableReservations], fmt.Sprintf("%s|%+v|%+v", r.ID, r.Holds, r.Entry))
	}
}
