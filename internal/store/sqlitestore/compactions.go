package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/tether-dev/tether/internal/store/backend"
)

const compactionCols = `seq, principal, a_leg, session, request_id, at, agent, rule_id, rule_version, kind, action,
	revision, tokens, decisions, constraints, rejected, questions, steps`

// AppendCompaction implements backend.Compactions: insert and prune in one
// write transaction.
func (s *Store) AppendCompaction(ctx context.Context, ev backend.CompactionEvent) (int64, error) {
	if err := backend.CheckCompaction(ev); err != nil {
		return 0, err
	}
	at := backend.NormalizeTime(ev.At)
	if at.IsZero() {
		at = backend.NormalizeTime(s.now())
	}
	var seq int64
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx,
			`INSERT INTO compactions (principal, a_leg, session, request_id, at, agent, rule_id, rule_version, kind, action,
				revision, tokens, decisions, constraints, rejected, questions, steps)
			 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
			ev.Principal, ev.ALeg, ev.Session, ev.RequestID, at.UnixMicro(), ev.Agent, ev.RuleID, ev.RuleVersion, ev.Kind, ev.Action,
			ev.Revision, ev.Tokens, ev.Decisions, ev.Constraints, ev.Rejected, ev.Questions, ev.Steps).Scan(&seq)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx,
			`DELETE FROM compactions WHERE principal = ? AND a_leg = ? AND seq NOT IN
			 (SELECT seq FROM compactions WHERE principal = ? AND a_leg = ? ORDER BY seq DESC LIMIT ?)`,
			ev.Principal, ev.ALeg, ev.Principal, ev.ALeg, backend.CompactionLimit)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("append compaction: %w", err)
	}
	return seq, nil
}

// Compactions implements backend.Compactions.
func (s *Store) Compactions(ctx context.Context, principal, aLeg string, limit int) ([]backend.CompactionEvent, error) {
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+compactionCols+` FROM compactions
		WHERE principal = ? AND a_leg = ? ORDER BY seq DESC LIMIT ?`, principal, aLeg, limit)
	if err != nil {
		return nil, fmt.Errorf("compactions: %w", err)
	}
	defer rows.Close()
	out := []backend.CompactionEvent{}
	for rows.Next() {
		var e backend.CompactionEvent
		var at int64
		if err := rows.Scan(&e.Seq, &e.Principal, &e.ALeg, &e.Session, &e.RequestID, &at, &e.Agent, &e.RuleID, &e.RuleVersion,
			&e.Kind, &e.Action, &e.Revision, &e.Tokens, &e.Decisions, &e.Constraints, &e.Rejected, &e.Questions, &e.Steps); err != nil {
			return nil, fmt.Errorf("compactions: %w", err)
		}
		e.At = fromMicros(at)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("compactions: %w", err)
	}
	return out, nil
}
