package pgstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/tether-dev/tether/internal/store/backend"
)

// AppendCompaction implements backend.Compactions: insert and prune in one
// statement.
func (s *Store) AppendCompaction(ctx context.Context, ev backend.CompactionEvent) (int64, error) {
	if err := backend.CheckCompaction(ev); err != nil {
		return 0, err
	}
	at := backend.NormalizeTime(ev.At)
	if at.IsZero() {
		at = backend.NormalizeTime(s.now())
	}
	var seq int64
	err := s.db.QueryRowContext(ctx,
		`WITH ins AS (
			INSERT INTO compactions (principal, a_leg, session, request_id, at, agent, rule_id, rule_version, kind, action,
				revision, tokens, decisions, constraints, rejected, questions, steps)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) RETURNING seq),
		 old AS (
			DELETE FROM compactions WHERE principal = $1 AND a_leg = $2 AND seq IN
			(SELECT seq FROM compactions WHERE principal = $1 AND a_leg = $2 ORDER BY seq DESC OFFSET $18))
		 SELECT seq FROM ins`,
		ev.Principal, ev.ALeg, ev.Session, ev.RequestID, at, ev.Agent, ev.RuleID, ev.RuleVersion, ev.Kind, ev.Action,
		ev.Revision, ev.Tokens, ev.Decisions, ev.Constraints, ev.Rejected, ev.Questions, ev.Steps, backend.CompactionLimit-1).Scan(&seq)
	if err != nil {
		return 0, fmt.Errorf("append compaction: %w", err)
	}
	return seq, nil
}

// Compactions implements backend.Compactions.
func (s *Store) Compactions(ctx context.Context, principal, aLeg string, limit int) ([]backend.CompactionEvent, error) {
	var lim *int
	if limit > 0 {
		lim = &limit
	}
	rows, err := s.db.QueryContext(ctx,
		`SELECT seq, principal, a_leg, session, request_id, at, agent, rule_id, rule_version, kind, action,
			revision, tokens, decisions, constraints, rejected, questions, steps
		 FROM compactions WHERE principal = $1 AND a_leg = $2 ORDER BY seq DESC LIMIT $3`, principal, aLeg, lim)
	out, err := collect(rows, err, func(row *sql.Rows) (backend.CompactionEvent, error) {
		var e backend.CompactionEvent
		var at time.Time
		err := row.Scan(&e.Seq, &e.Principal, &e.ALeg, &e.Session, &e.RequestID, &at, &e.Agent, &e.RuleID, &e.RuleVersion,
			&e.Kind, &e.Action, &e.Revision, &e.Tokens, &e.Decisions, &e.Constraints, &e.Rejected, &e.Questions, &e.Steps)
		e.At = at.UTC()
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("compactions: %w", err)
	}
	if out == nil {
		out = []backend.CompactionEvent{}
	}
	return out, nil
}
