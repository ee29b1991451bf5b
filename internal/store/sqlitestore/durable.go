package sqlitestore

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/tether-dev/tether/internal/store/backend"
)

// EnqueueOutbox implements backend.Outbox.
func (s *Store) EnqueueOutbox(ctx context.Context, e backend.OutboxEntry) (int64, error) {
	if err := backend.CheckOutbox(e); err != nil {
		return 0, err
	}
	if e.Payload == nil {
		e.Payload = []byte{}
	}
	res, err := s.w.ExecContext(ctx, `INSERT INTO outbox (principal, a_leg, payload, not_before, created_at) VALUES (?, ?, ?, ?, ?)`,
		e.Principal, e.ALeg, e.Payload, micros(backend.NormalizeTime(e.NotBefore)), micros(backend.NormalizeTime(s.now())))
	if err != nil {
		return 0, fmt.Errorf("enqueue outbox: %w", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("enqueue outbox: %w", err)
	}
	return id, nil
}

// ClaimOutbox implements backend.Outbox. SQLite has one writer, so the
// claim is one UPDATE … RETURNING.
func (s *Store) ClaimOutbox(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]backend.OutboxEntry, error) {
	if limit <= 0 {
		return nil, nil
	}
	at := micros(backend.NormalizeTime(now))
	rows, err := s.w.QueryContext(ctx, `UPDATE outbox SET owner = ?, lease_until = ?
		WHERE id IN (SELECT id FROM outbox WHERE not_before <= ? AND (owner = '' OR lease_until <= ?) ORDER BY id LIMIT ?)
		RETURNING id, principal, a_leg, payload, attempts, not_before, created_at`,
		owner, micros(backend.NormalizeTime(now.Add(lease))), at, at, limit)
	if err != nil {
		return nil, fmt.Errorf("claim outbox: %w", err)
	}
	defer rows.Close()
	var out []backend.OutboxEntry
	for rows.Next() {
		var e backend.OutboxEntry
		var nb, created int64
		if err := rows.Scan(&e.ID, &e.Principal, &e.ALeg, &e.Payload, &e.Attempts, &nb, &created); err != nil {
			return nil, fmt.Errorf("claim outbox: %w", err)
		}
		if nb != 0 {
			e.NotBefore = fromMicros(nb)
		}
		e.CreatedAt = fromMicros(created)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("claim outbox: %w", err)
	}
	slices.SortFunc(out, func(a, b backend.OutboxEntry) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// CompleteOutbox implements backend.Outbox.
func (s *Store) CompleteOutbox(ctx context.Context, owner string, ids []int64) error {
	return s.eachOutbox(ctx, "complete outbox", ids, `DELETE FROM outbox WHERE id = ? AND owner = ?`,
		func(id int64) []any { return []any{id, owner} })
}

// ReleaseOutbox implements backend.Outbox.
func (s *Store) ReleaseOutbox(ctx context.Context, owner string, ids []int64, retryAt time.Time) error {
	at := micros(backend.NormalizeTime(retryAt))
	return s.eachOutbox(ctx, "release outbox", ids,
		`UPDATE outbox SET owner = '', lease_until = 0, attempts = attempts + 1, not_before = ? WHERE id = ? AND owner = ?`,
		func(id int64) []any { return []any{at, id, owner} })
}

// eachOutbox runs q with args(id) for every id in one transaction.
func (s *Store) eachOutbox(ctx context.Context, what string, ids []int64, q string, args func(int64) []any) error {
	if len(ids) == 0 {
		return nil
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, q)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, id := range ids {
			if _, err := stmt.ExecContext(ctx, args(id)...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// OutboxStats implements backend.Outbox.
func (s *Store) OutboxStats(ctx context.Context) (int, time.Time, error) {
	var n int
	var oldest sql.NullInt64
	if err := s.r.QueryRowContext(ctx, `SELECT count(*), min(created_at) FROM outbox`).Scan(&n, &oldest); err != nil {
		return 0, time.Time{}, fmt.Errorf("outbox stats: %w", err)
	}
	if !oldest.Valid {
		return n, time.Time{}, nil
	}
	return n, fromMicros(oldest.Int64), nil
}

// OutboxBusy implements backend.Outbox.
func (s *Store) OutboxBusy(ctx context.Context, principal, aLeg string, now time.Time) (bool, error) {
	at := micros(backend.NormalizeTime(now))
	var busy bool
	err := s.r.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM outbox WHERE principal = ? AND a_leg = ?
		AND ((owner <> '' AND lease_until > ?) OR (owner = '' AND attempts = 0 AND not_before > ?)))`,
		principal, aLeg, at, at).Scan(&busy)
	if err != nil {
		return false, fmt.Errorf("outbox busy: %w", err)
	}
	return busy, nil
}

var errRefused = errors.New("refused")

// PutReservation implements backend.Reservations in one write transaction.
func (s *Store) PutReservation(ctx context.Context, r backend.Reservation) (bool, error) {
	if err := backend.CheckReservation(r); err != nil {
		return false, err
	}
	data, err := backend.EncodeReservation(r)
	if err != nil {
		return false, err
	}
	err = s.write(ctx, func(t *writeTx) error {
		for _, h := range r.Holds {
			res, err := t.exec(reserveBudget, h.Key, h.Amount, h.Amount, h.Limit, h.Limit)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n != 1 {
				return errRefused
			}
		}
		_, err := t.exec(`INSERT INTO reservations (id, expires_at, data) VALUES (?, ?, ?)`,
			r.ID, micros(backend.NormalizeTime(r.Expires)), data)
		return err
	})
	if errors.Is(err, errRefused) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("put reservation: %w", err)
	}
	return true, nil
}

// GroupsSettlements implements backend.SettlementGrouper.
func (s *Store) GroupsSettlements() {}

var _ backend.SettlementGrouper = (*Store)(nil)

// SettleReservations implements backend.Reservations in one write
// transaction, the writer's next group transaction (see grouped): the
// settlements are applied together, in their order. A batch of plain
// ledger rows (no reservation, no counter) is journaled instead and rides
// along with the next transaction (see journal).
func (s *Store) SettleReservations(ctx context.Context, settle []backend.Settlement) error {
	if err := backend.CheckSettlements(settle); err != nil {
		return err
	}
	if len(settle) == 0 || s.settleJournaled(settle) {
		return nil
	}
	if err := s.grouped(ctx, func(t *writeTx) error { return settleIn(t, settle) }); err != nil {
		return fmt.Errorf("settle reservations: %w", err)
	}
	return nil
}

// settleIn writes settlements inside t. Their ledger rows are inserted
// together (addLedgerRow), before t's next statement.
func settleIn(t *writeTx, settle []backend.Settlement) error {
	for _, st := range settle {
		// An empty ReservationID has no row (PutReservation
		// refuses one): the counters move unconditionally.
		settled := st.ReservationID == ""
		if !settled {
			res, err := t.exec(`DELETE FROM reservations WHERE id = ?`, st.ReservationID)
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			settled = n == 1
		}
		if settled {
			for _, h := range st.Adjust {
				if _, err := t.exec(adjustBudget, h.Key, h.Amount, h.Amount); err != nil {
					return err
				}
			}
		}
		if err := t.addLedgerRow(st.Entry); err != nil {
			return err
		}
	}
	return nil
}

// PendingReservations implements backend.Reservations.
func (s *Store) PendingReservations(ctx context.Context, expiredBy time.Time, limit int) ([]backend.Reservation, error) {
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.r.QueryContext(ctx, `SELECT id, expires_at, data FROM reservations WHERE expires_at <= ? ORDER BY expires_at, id LIMIT ?`,
		micros(backend.NormalizeTime(expiredBy)), limit)
	if err != nil {
		return nil, fmt.Errorf("pending reservations: %w", err)
	}
	defer rows.Close()
	var out []backend.Reservation
	for rows.Next() {
		var r backend.Reservation
		var exp int64
		var data []byte
		if err := rows.Scan(&r.ID, &exp, &data); err != nil {
			return nil, fmt.Errorf("pending reservations: %w", err)
		}
		r.Expires = fromMicros(exp)
		if err := backend.DecodeReservation(data, &r); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pending reservations: %w", err)
	}
	return out, nil
}
