package pgstore

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/lib/pq"

	"github.com/tether-dev/tether/internal/store/backend"
)

const (
	insertLedgerColumns = `INSERT INTO ledger (id, ts, day, principal, account, session, a_leg, b_leg, kind, route, provider, model,
	input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_micros, status, duration_ms)`
	// A ledger entry is written once: an id already there is kept.
	ledgerConflict = `ON CONFLICT (id) DO NOTHING`
	insertLedger   = insertLedgerColumns + `
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19) ` + ledgerConflict
)

func ledgerArgs(e backend.LedgerEntry) []any {
	at := backend.NormalizeTime(e.Time)
	return []any{e.ID, at, backend.Day(at), e.Principal, e.Account, e.Session, e.ALeg, e.BLeg, e.Kind, e.Route, e.Provider,
		e.Model, e.InputTokens, e.OutputTokens, e.CacheReadTokens, e.CacheWriteTokens, e.CostMicros, e.Status, e.DurationMS}
}

// EnqueueOutbox implements backend.Outbox.
func (s *Store) EnqueueOutbox(ctx context.Context, e backend.OutboxEntry) (int64, error) {
	if err := backend.CheckOutbox(e); err != nil {
		return 0, err
	}
	if e.Payload == nil {
		e.Payload = []byte{}
	}
	var id int64
	err := s.db.QueryRowContext(ctx, `INSERT INTO outbox (principal, a_leg, payload, not_before, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
		e.Principal, e.ALeg, e.Payload, backend.NormalizeTime(e.NotBefore).UTC(), backend.NormalizeTime(s.now())).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("enqueue outbox: %w", err)
	}
	return id, nil
}

// ClaimOutbox implements backend.Outbox in one statement: the due rows are
// locked with FOR UPDATE SKIP LOCKED, so replicas claiming at the same time
// take disjoint entries, and an expired lease makes a row due again.
func (s *Store) ClaimOutbox(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]backend.OutboxEntry, error) {
	if limit <= 0 {
		return nil, nil
	}
	now = backend.NormalizeTime(now)
	rows, err := s.db.QueryContext(ctx, `UPDATE outbox SET owner = $1, lease_until = $2
		WHERE id IN (SELECT id FROM outbox WHERE not_before <= $3 AND (owner = '' OR lease_until <= $3)
		             ORDER BY id LIMIT $4 FOR UPDATE SKIP LOCKED)
		RETURNING id, principal, a_leg, payload, attempts, not_before, created_at`,
		owner, backend.NormalizeTime(now.Add(lease)), now, limit)
	out, err := collect(rows, err, func(row *sql.Rows) (backend.OutboxEntry, error) {
		var e backend.OutboxEntry
		err := row.Scan(&e.ID, &e.Principal, &e.ALeg, &e.Payload, &e.Attempts, &e.NotBefore, &e.CreatedAt)
		e.NotBefore, e.CreatedAt = utc(e.NotBefore), utc(e.CreatedAt)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("claim outbox: %w", err)
	}
	slices.SortFunc(out, func(a, b backend.OutboxEntry) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// CompleteOutbox implements backend.Outbox.
func (s *Store) CompleteOutbox(ctx context.Context, owner string, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	if _, err := s.db.ExecContext(ctx, `DELETE FROM outbox WHERE id = ANY($1) AND owner = $2`, pq.Array(ids), owner); err != nil {
		return fmt.Errorf("complete outbox: %w", err)
	}
	return nil
}

// ReleaseOutbox implements backend.Outbox.
func (s *Store) ReleaseOutbox(ctx context.Context, owner string, ids []int64, retryAt time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE outbox SET owner = '', lease_until = NULL, attempts = attempts + 1, not_before = $3
		WHERE id = ANY($1) AND owner = $2`, pq.Array(ids), owner, backend.NormalizeTime(retryAt)); err != nil {
		return fmt.Errorf("release outbox: %w", err)
	}
	return nil
}

// OutboxStats implements backend.Outbox.
func (s *Store) OutboxStats(ctx context.Context) (int, time.Time, error) {
	var n int
	var oldest *time.Time
	if err := s.db.QueryRowContext(ctx, `SELECT count(*), min(created_at) FROM outbox`).Scan(&n, &oldest); err != nil {
		return 0, time.Time{}, fmt.Errorf("outbox stats: %w", err)
	}
	if oldest == nil {
		return n, time.Time{}, nil
	}
	return n, oldest.UTC(), nil
}

// OutboxBusy implements backend.Outbox.
func (s *Store) OutboxBusy(ctx context.Context, principal, aLeg string, now time.Time) (bool, error) {
	now = backend.NormalizeTime(now)
	var busy bool
	err := s.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM outbox WHERE principal = $1 AND a_leg = $2
		AND ((owner <> '' AND lease_until > $3) OR (owner = '' AND attempts = 0 AND not_before > $3)))`,
		principal, aLeg, now).Scan(&busy)
	if err != nil {
		return false, fmt.Errorf("outbox busy: %w", err)
	}
	return busy, nil
}

var errRefused = errors.New("refused")

// PutReservation implements backend.Reservations in one transaction; each
// counter row is locked by its conditional upsert, so replicas reserving the
// same budget serialise on it.
func (s *Store) PutReservation(ctx context.Context, r backend.Reservation) (bool, error) {
	if err := backend.CheckReservation(r); err != nil {
		return false, err
	}
	data, err := backend.EncodeReservation(r)
	if err != nil {
		return false, err
	}
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		for _, h := range r.Holds {
			res, err := tx.ExecContext(ctx,
				`INSERT INTO budgets (key, used) SELECT $1::text, $2::bigint WHERE $2::bigint <= $3::bigint
				 ON CONFLICT (key) DO UPDATE SET used = budgets.used + EXCLUDED.used
				 WHERE budgets.used + EXCLUDED.used <= $3::bigint`, h.Key, h.Amount, h.Limit)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n != 1 {
				return errRefused
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO reservations (id, expires_at, data) VALUES ($1, $2, $3)`,
			r.ID, backend.NormalizeTime(r.Expires), data)
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

// SettleReservations implements backend.Reservations. A batch whose
// settlements adjust no budget (no budget applies to the calls, the
// ledger's usual case) is one statement, one round trip: the reservations'
// delete rides as a data-modifying WITH on the ledger rows' insert. A
// batch that adjusts budgets is one transaction of three statements plus
// one per adjustment, applied in the batch's order (each clamps at zero,
// so their order matters).
func (s *Store) SettleReservations(ctx context.Context, settle []backend.Settlement) error {
	if err := backend.CheckSettlements(settle); err != nil {
		return err
	}
	if len(settle) == 0 {
		return nil
	}
	ids := make([]string, 0, len(settle))
	rows := make([][]any, len(settle))
	adjusts := false
	for i, st := range settle {
		if st.ReservationID != "" {
			ids = append(ids, st.ReservationID)
		}
		rows[i] = ledgerArgs(st.Entry)
		adjusts = adjusts || len(st.Adjust) > 0
	}
	var err error
	if !adjusts && len(rows)*len(rows[0])+1 <= maxParams {
		q, args := valuesStatement(`WITH settled AS (DELETE FROM reservations WHERE id = ANY($1::text[])) `+insertLedgerColumns, ledgerConflict,
			rows, pq.Array(ids))
		_, err = s.db.ExecContext(ctx, q, args...)
	} else {
		err = s.inTx(ctx, func(tx *sql.Tx) error { return settleIn(ctx, tx, settle, ids, rows) })
	}
	if err != nil {
		return fmt.Errorf("settle reservations: %w", err)
	}
	return nil
}

// settleIn settles a batch that adjusts budgets inside tx: a settlement's
// adjustments apply only if it ended its reservation (the first of the
// batch to name it) or had none.
func settleIn(ctx context.Context, tx *sql.Tx, settle []backend.Settlement, ids []string, rows [][]any) error {
	gone, err := tx.QueryContext(ctx, `DELETE FROM reservations WHERE id = ANY($1::text[]) RETURNING id`, pq.Array(ids))
	ended, err := collect(gone, err, func(r *sql.Rows) (string, error) {
		var id string
		return id, r.Scan(&id)
	})
	if err != nil {
		return err
	}
	open := make(map[string]bool, len(ended))
	for _, id := range ended {
		open[id] = true
	}
	for _, st := range settle {
		if st.ReservationID != "" {
			if !open[st.ReservationID] {
				continue
			}
			open[st.ReservationID] = false
		}
		for _, h := range st.Adjust {
			if _, err := tx.ExecContext(ctx, `INSERT INTO budgets (key, used) VALUES ($1::text, GREATEST($2::bigint, 0))
				ON CONFLICT (key) DO UPDATE SET used = GREATEST(budgets.used + $2::bigint, 0)`, h.Key, h.Amount); err != nil {
				return err
			}
		}
	}
	for chunk := range slices.Chunk(rows, maxParams/len(rows[0])) {
		q, args := valuesStatement(insertLedgerColumns, ledgerConflict, chunk)
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return err
		}
	}
	return nil
}

// PendingReservations implements backend.Reservations.
func (s *Store) PendingReservations(ctx context.Context, expiredBy time.Time, limit int) ([]backend.Reservation, error) {
	q := `SELECT id, expires_at, data FROM reservations WHERE expires_at <= $1 ORDER BY expires_at, id`
	args := []any{backend.NormalizeTime(expiredBy)}
	if limit > 0 {
		q += ` LIMIT $2`
		args = append(args, limit)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	out, err := collect(rows, err, func(row *sql.Rows) (backend.Reservation, error) {
		var r backend.Reservation
		var data []byte
		if err := row.Scan(&r.ID, &r.Expires, &data); err != nil {
			return r, err
		}
		r.Expires = r.Expires.UTC()
		return r, backend.DecodeReservation(data, &r)
	})
	if err != nil {
		return nil, fmt.Errorf("pending reservations: %w", err)
	}
	return out, nil
}
