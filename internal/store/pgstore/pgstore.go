// Package pgstore is the shared Tether store on PostgreSQL (database/sql with
// the lib/pq driver), for several proxy replicas behind one load balancer.
// Every compare-and-swap and every budget reservation is a single statement,
// so they hold across replicas without application-level locks.
package pgstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lib/pq"

	"github.com/tether-dev/tether/internal/store/backend"
)

//go:embed migrations/*.sql
var migrations embed.FS

// migrateLockKey serialises migrations of replicas starting together.
const migrateLockKey = 0x7e7e_0001

// Options configures a Store. The zero value is usable.
type Options struct {
	// Now is the clock used for lineage expiry and default UpdatedAt;
	// time.Now if nil.
	Now func() time.Time
	// Schema, if set, is created if missing and used as the search_path of
	// every connection.
	Schema string
	// MaxConns bounds the pool; if zero, the URL's pool_max_conns, else the
	// larger of 4 and the number of CPUs.
	MaxConns int32
	// OnRoundTrip, if set, is called with the SQL of every round trip the
	// store makes to the server once connected: each statement, and BEGIN,
	// COMMIT and ROLLBACK (benchmarks count round trips with it).
	OnRoundTrip func(sql string)

	// dialer, if set, opens the network connections (a test counts the
	// request/response exchanges on them).
	dialer pq.Dialer
}

// Store is a backend.Store on PostgreSQL.
type Store struct {
	now func() time.Time
	db  *sql.DB
}

var _ backend.Store = (*Store)(nil)

// Open connects to the database at url (postgres://…), creates the schema if
// Options.Schema asks for one, and applies pending migrations.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	cfg, err := parseURL(url)
	if err != nil {
		return nil, err
	}
	if opts.Schema != "" {
		cfg.conn.Runtime["search_path"] = pq.QuoteIdentifier(opts.Schema)
	}
	if opts.MaxConns > 0 {
		cfg.maxConns = int(opts.MaxConns)
	}
	connector, err := pq.NewConnectorConfig(cfg.conn)
	if err != nil {
		return nil, fmt.Errorf("open postgres store: %w", err)
	}
	if opts.dialer != nil {
		connector.Dialer(opts.dialer)
	}
	var c driver.Connector = connector
	if opts.OnRoundTrip != nil {
		c = countingConnector{Connector: connector, onRoundTrip: opts.OnRoundTrip}
	}
	db := sql.OpenDB(c)
	cfg.size(db)
	s := &Store{now: opts.Now, db: db}
	if s.now == nil {
		s.now = time.Now
	}
	if opts.Schema != "" {
		if _, err := db.ExecContext(ctx, `CREATE SCHEMA IF NOT EXISTS `+pq.QuoteIdentifier(opts.Schema)); err != nil {
			_ = db.Close()
			return nil, fmt.Errorf("open postgres store: create schema: %w", err)
		}
	}
	if err := s.migrate(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

// inTx runs fn in a transaction, committed if fn returns nil and rolled back
// if it returns an error or panics.
func (s *Store) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	committed := false
	defer func() {
		if !committed {
			_ = tx.Rollback()
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	committed = true
	return tx.Commit()
}

// collect scans every row of a query with scan. Without rows it returns an
// empty, non-nil slice.
func collect[T any](rows *sql.Rows, err error, scan func(*sql.Rows) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// migrate applies the embedded migrations in one transaction, under an
// advisory lock so that replicas starting together do not race.
func (s *Store) migrate(ctx context.Context) error {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return fmt.Errorf("migrate postgres store: %w", err)
	}
	slices.Sort(names)
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrateLockKey)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
			return err
		}
		for _, name := range names {
			version := strings.TrimSuffix(path.Base(name), ".sql")
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = $1`, version).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				continue
			}
			body, err := migrations.ReadFile(name)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, string(body)); err != nil {
				return fmt.Errorf("%s: %w", version, err)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version) VALUES ($1)`, version); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("migrate postgres store: %w", err)
	}
	return nil
}

func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}

// GetCapsule implements backend.Store.
func (s *Store) GetCapsule(ctx context.Context, principal, aLeg string) (backend.CapsuleRecord, error) {
	r := backend.CapsuleRecord{Principal: principal, ALeg: aLeg}
	err := s.db.QueryRowContext(ctx,
		`SELECT session, revision, data, updated_at FROM capsules WHERE principal = $1 AND a_leg = $2`,
		principal, aLeg).Scan(&r.Session, &r.Revision, &r.Data, &r.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return backend.CapsuleRecord{}, fmt.Errorf("get capsule: %w", backend.ErrNotFound)
	}
	if err != nil {
		return backend.CapsuleRecord{}, fmt.Errorf("get capsule: %w", err)
	}
	r.UpdatedAt = utc(r.UpdatedAt)
	return r, nil
}

// casTail records the new head in the history and prunes it, in the same
// statement as the head's insert or update (CTE "head").
const casTail = `,
hist AS (
	INSERT INTO capsule_history (principal, a_leg, revision, session, data, updated_at)
	SELECT principal, a_leg, revision, session, data, updated_at FROM head
	ON CONFLICT (principal, a_leg, revision)
	DO UPDATE SET session = EXCLUDED.session, data = EXCLUDED.data, updated_at = EXCLUDED.updated_at
),
pruned AS (
	DELETE FROM capsule_history h USING head
	WHERE h.principal = head.principal AND h.a_leg = head.a_leg AND h.revision <= head.revision - $8
)
SELECT count(*) FROM head`

const casInsert = `WITH head AS (
	INSERT INTO capsules (principal, a_leg, session, revision, data, updated_at)
	SELECT $1::text, $2::text, $3::text, $4::bigint, $5::bytea, $6::timestamptz WHERE $7::bigint = 0
	ON CONFLICT (principal, a_leg) DO NOTHING
	RETURNING principal, a_leg, revision, session, data, updated_at
)` + casTail

const casUpdate = `WITH head AS (
	UPDATE capsules SET session = $3, revision = $4, data = $5, updated_at = $6
	WHERE principal = $1 AND a_leg = $2 AND revision = $7
	RETURNING principal, a_leg, revision, session, data, updated_at
)` + casTail

// PutCapsule implements backend.Store: the compare-and-swap, the history
// insert and the pruning are one statement.
func (s *Store) PutCapsule(ctx context.Context, rec backend.CapsuleRecord, expectRevision int64) error {
	if err := backend.CheckPut(rec, expectRevision); err != nil {
		return err
	}
	at := backend.NormalizeTime(rec.UpdatedAt)
	if at.IsZero() {
		at = backend.NormalizeTime(s.now())
	}
	data := rec.Data
	if data == nil {
		data = []byte{}
	}
	q := casUpdate
	if expectRevision == 0 {
		q = casInsert
	}
	var n int64
	err := s.db.QueryRowContext(ctx, q, rec.Principal, rec.ALeg, rec.Session, rec.Revision, data, at,
		expectRevision, int64(backend.HistoryLimit)).Scan(&n)
	if err != nil {
		return fmt.Errorf("put capsule revision %d: %w", rec.Revision, err)
	}
	if n == 0 {
		return fmt.Errorf("put capsule revision %d: %w", rec.Revision, backend.ErrConflict)
	}
	return nil
}

func scanCapsules(rows *sql.Rows, err error) ([]backend.CapsuleRecord, error) {
	out, err := collect(rows, err, func(row *sql.Rows) (backend.CapsuleRecord, error) {
		var r backend.CapsuleRecord
		err := row.Scan(&r.Principal, &r.ALeg, &r.Session, &r.Revision, &r.Data, &r.UpdatedAt)
		r.UpdatedAt = utc(r.UpdatedAt)
		return r, err
	})
	if len(out) == 0 {
		out = nil
	}
	return out, err
}

// CapsuleHistory implements backend.Store.
func (s *Store) CapsuleHistory(ctx context.Context, principal, aLeg string, limit int) ([]backend.CapsuleRecord, error) {
	var lim *int64
	if limit > 0 {
		l := int64(limit)
		lim = &l
	}
	out, err := scanCapsules(s.db.QueryContext(ctx,
		`SELECT principal, a_leg, session, revision, data, updated_at FROM capsule_history
		 WHERE principal = $1 AND a_leg = $2 ORDER BY revision DESC LIMIT $3`, principal, aLeg, lim))
	if err != nil {
		return nil, fmt.Errorf("capsule history: %w", err)
	}
	return out, nil
}

// ListCapsules implements backend.Store.
func (s *Store) ListCapsules(ctx context.Context, principal string) ([]backend.CapsuleRecord, error) {
	out, err := scanCapsules(s.db.QueryContext(ctx,
		`SELECT principal, a_leg, session, revision, data, updated_at FROM capsules
		 WHERE $1 = '' OR principal = $1 ORDER BY principal COLLATE "C", a_leg COLLATE "C"`, principal))
	if err != nil {
		return nil, fmt.Errorf("list capsules: %w", err)
	}
	return out, nil
}

// PurgeCapsules implements backend.Store.
func (s *Store) PurgeCapsules(ctx context.Context, principal, aLeg string) (int, error) {
	if principal == "" {
		return 0, fmt.Errorf("purge capsules: empty principal: %w", backend.ErrInvalid)
	}
	var n int64
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM capsules WHERE principal = $1 AND ($2 = '' OR a_leg = $2)`, principal, aLeg)
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM capsule_history WHERE principal = $1 AND ($2 = '' OR a_leg = $2)`, principal, aLeg); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM outbox WHERE principal = $1 AND ($2 = '' OR a_leg = $2)`, principal, aLeg); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM compactions WHERE principal = $1 AND ($2 = '' OR a_leg = $2)`, principal, aLeg); err != nil {
			return err
		}
		if aLeg == "" {
			if _, err := tx.ExecContext(ctx, `DELETE FROM lineage WHERE principal = $1`, principal); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("purge capsules: %w", err)
	}
	return int(n), nil
}

// PutLineage implements backend.Store.
func (s *Store) PutLineage(ctx context.Context, principal, key string, value []byte, expires time.Time) error {
	if principal == "" || key == "" {
		return fmt.Errorf("put lineage: empty principal or key: %w", backend.ErrInvalid)
	}
	if value == nil {
		value = []byte{}
	}
	var exp *time.Time
	if !expires.IsZero() {
		e := backend.NormalizeTime(expires)
		exp = &e
	}
	_, err := s.db.ExecContext(ctx,
		`INSERT INTO lineage (principal, key, value, expires_at) VALUES ($1, $2, $3, $4)
		 ON CONFLICT (principal, key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at`,
		principal, key, value, exp)
	if err != nil {
		return fmt.Errorf("put lineage: %w", err)
	}
	return nil
}

// PutLineages implements backend.Store in one statement, one round trip. A
// key given twice keeps its last value, as one upsert after another would
// (one statement cannot update a row twice).
func (s *Store) PutLineages(ctx context.Context, principal string, puts []backend.LineagePut) error {
	if err := backend.CheckLineagePuts(principal, puts); err != nil {
		return err
	}
	if len(puts) == 0 {
		return nil
	}
	last := make(map[string]int, len(puts))
	for i, p := range puts {
		last[p.Key] = i
	}
	rows := make([][]any, 0, len(last))
	for i, p := range puts {
		if last[p.Key] != i {
			continue
		}
		v := p.Value
		if v == nil {
			v = []byte{}
		}
		var exp *time.Time
		if !p.Expires.IsZero() {
			e := backend.NormalizeTime(p.Expires)
			exp = &e
		}
		rows = append(rows, []any{principal, p.Key, v, exp})
	}
	err := s.insertRows(ctx, `INSERT INTO lineage (principal, key, value, expires_at)`,
		`ON CONFLICT (principal, key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at`, rows)
	if err != nil {
		return fmt.Errorf("put lineage: %w", err)
	}
	return nil
}

// maxParams is the most parameters one statement can bind.
const maxParams = 65535

// insertRows runs head VALUES (…), (…) tail with one parenthesised list per
// row of values: one statement, one round trip, unless the rows need more
// than maxParams parameters, in which case the statements that hold them run
// in one transaction.
func (s *Store) insertRows(ctx context.Context, head, tail string, rows [][]any) error {
	per := maxParams / len(rows[0])
	if len(rows) <= per {
		q, args := valuesStatement(head, tail, rows)
		_, err := s.db.ExecContext(ctx, q, args...)
		return err
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		for chunk := range slices.Chunk(rows, per) {
			q, args := valuesStatement(head, tail, chunk)
			if _, err := tx.ExecContext(ctx, q, args...); err != nil {
				return err
			}
		}
		return nil
	})
}

// valuesStatement returns head VALUES ($n, …), (…) tail and its
// arguments: first the arguments head binds itself ($1 … $len(pre)), then
// the rows'.
func valuesStatement(head, tail string, rows [][]any, pre ...any) (string, []any) {
	var b strings.Builder
	args := make([]any, 0, len(pre)+len(rows)*len(rows[0]))
	args = append(args, pre...)
	b.WriteString(head)
	b.WriteString(" VALUES ")
	for i, row := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for j, v := range row {
			if j > 0 {
				b.WriteString(", ")
			}
			args = append(args, v)
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(len(args)))
		}
		b.WriteByte(')')
	}
	b.WriteByte(' ')
	b.WriteString(tail)
	return b.String(), args
}

// GetLineageWithCapsule implements backend.CapsulePrefetcher: one
// statement, the capsule's row (key NULL) after the lineage rows.
func (s *Store) GetLineageWithCapsule(ctx context.Context, principal string, keys []string, aLeg string) (map[string][]byte, backend.CapsuleRecord, bool, error) {
	out := make(map[string][]byte, len(keys))
	c := backend.CapsuleRecord{Principal: principal, ALeg: aLeg}
	found := false
	rows, err := s.db.QueryContext(ctx,
		`SELECT key, value, NULL::text, NULL::bigint, NULL::timestamptz FROM lineage
		 WHERE principal = $1 AND key = ANY($2::text[]) AND (expires_at IS NULL OR expires_at > $3)
		 UNION ALL
		 SELECT NULL, data, session, revision, updated_at FROM capsules WHERE principal = $1 AND a_leg = $4`,
		principal, pq.Array(keys), s.now(), aLeg)
	if err != nil {
		return nil, c, false, fmt.Errorf("get lineage with capsule: %w", err)
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var k, session sql.NullString
		var rev sql.NullInt64
		var at sql.NullTime
		var v []byte
		if err := rows.Scan(&k, &v, &session, &rev, &at); err != nil {
			return nil, c, false, fmt.Errorf("get lineage with capsule: %w", err)
		}
		if k.Valid {
			out[k.String] = v
			continue
		}
		c.Data, c.Session, c.Revision, c.UpdatedAt, found = v, session.String, rev.Int64, utc(at.Time), true
	}
	if err := rows.Err(); err != nil {
		return nil, c, false, fmt.Errorf("get lineage with capsule: %w", err)
	}
	if !found {
		c = backend.CapsuleRecord{}
	}
	return out, c, found, nil
}

// GetLineage implements backend.Store.
func (s *Store) GetLineage(ctx context.Context, principal string, keys []string) (map[string][]byte, error) {
	out := make(map[string][]byte, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	rows, err := s.db.QueryContext(ctx,
		`SELECT key, value FROM lineage
		 WHERE principal = $1 AND key = ANY($2::text[]) AND (expires_at IS NULL OR expires_at > $3)`,
		principal, pq.Array(keys), s.now())
	if err != nil {
		return nil, fmt.Errorf("get lineage: %w", err)
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var k string
		var v []byte
		if err := rows.Scan(&k, &v); err != nil {
			return nil, fmt.Errorf("get lineage: %w", err)
		}
		out[k] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("get lineage: %w", err)
	}
	return out, nil
}

// AppendLedger implements backend.Store in one statement, one round trip.
func (s *Store) AppendLedger(ctx context.Context, entries []backend.LedgerEntry) error {
	if err := backend.CheckLedger(entries); err != nil {
		return err
	}
	if len(entries) == 0 {
		return nil
	}
	rows := make([][]any, len(entries))
	for i, e := range entries {
		rows[i] = ledgerArgs(e)
	}
	if err := s.insertRows(ctx, insertLedgerColumns, ledgerConflict, rows); err != nil {
		return fmt.Errorf("append ledger: %w", err)
	}
	return nil
}

// Usage implements backend.Store.
func (s *Store) Usage(ctx context.Context, principal string, since time.Time) ([]backend.UsageRow, error) {
	rows, err := s.db.QueryContext(ctx,
		`SELECT day, kind, model, count(*), sum(input_tokens)::bigint, sum(output_tokens)::bigint,
			sum(cache_read_tokens)::bigint, sum(cache_write_tokens)::bigint, sum(cost_micros)::bigint
		 FROM ledger WHERE ts >= $1 AND ($2 = '' OR principal = $2)
		 GROUP BY day, kind, model ORDER BY day COLLATE "C", kind COLLATE "C", model COLLATE "C"`,
		backend.NormalizeTime(since), principal)
	out, err := collect(rows, err, func(row *sql.Rows) (backend.UsageRow, error) {
		var u backend.UsageRow
		err := row.Scan(&u.Day, &u.Kind, &u.Model, &u.Calls, &u.InputTokens, &u.OutputTokens,
			&u.CacheReadTokens, &u.CacheWriteTokens, &u.CostMicros)
		return u, err
	})
	if err != nil {
		return nil, fmt.Errorf("usage: %w", err)
	}
	if len(out) == 0 {
		out = nil
	}
	return out, nil
}

// LedgerEntries implements backend.Store.
func (s *Store) LedgerEntries(ctx context.Context, principal string, limit int) ([]backend.LedgerEntry, error) {
	var lim *int64
	if limit > 0 {
		l := int64(limit)
		lim = &l
	}
	rows, err := s.db.QueryContext(ctx,
		`SELECT id, ts, principal, account, session, a_leg, b_leg, kind, route, provider, model, input_tokens, output_tokens,
			cache_read_tokens, cache_write_tokens, cost_micros, status, duration_ms
		 FROM ledger WHERE $1 = '' OR principal = $1 ORDER BY ts DESC, id COLLATE "C" DESC LIMIT $2`, principal, lim)
	out, err := collect(rows, err, func(row *sql.Rows) (backend.LedgerEntry, error) {
		var e backend.LedgerEntry
		err := row.Scan(&e.ID, &e.Time, &e.Principal, &e.Account, &e.Session, &e.ALeg, &e.BLeg, &e.Kind, &e.Route,
			&e.Provider, &e.Model, &e.InputTokens, &e.OutputTokens, &e.CacheReadTokens, &e.CacheWriteTokens,
			&e.CostMicros, &e.Status, &e.DurationMS)
		e.Time = utc(e.Time)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("ledger entries: %w", err)
	}
	if len(out) == 0 {
		out = nil
	}
	return out, nil
}

// Reserve implements backend.Store in one statement. Concurrent callers on
// the same key serialise on the row lock and ON CONFLICT re-checks the limit
// against the latest committed value.
func (s *Store) Reserve(ctx context.Context, key string, amount, limit int64) (bool, error) {
	if err := backend.CheckReserve(key, amount); err != nil {
		return false, err
	}
	res, err := s.db.ExecContext(ctx,
		`INSERT INTO budgets (key, used) SELECT $1::text, $2::bigint WHERE $2::bigint <= $3::bigint
		 ON CONFLICT (key) DO UPDATE SET used = budgets.used + EXCLUDED.used
		 WHERE budgets.used + EXCLUDED.used <= $3::bigint`, key, amount, limit)
	if err != nil {
		return false, fmt.Errorf("reserve: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("reserve: %w", err)
	}
	return n == 1, nil
}

// Adjust implements backend.Store.
func (s *Store) Adjust(ctx context.Context, key string, delta int64) error {
	if key == "" {
		return fmt.Errorf("adjust: empty key: %w", backend.ErrInvalid)
	}
	_, err := s.db.ExecContext(ctx,
		`INSERT INTO budgets (key, used) VALUES ($1::text, GREATEST($2::bigint, 0))
		 ON CONFLICT (key) DO UPDATE SET used = GREATEST(budgets.used + $2::bigint, 0)`, key, delta)
	if err != nil {
		return fmt.Errorf("adjust: %w", err)
	}
	return nil
}

// Used implements backend.Store.
func (s *Store) Used(ctx context.Context, key string) (int64, error) {
	var used int64
	err := s.db.QueryRowContext(ctx, `SELECT used FROM budgets WHERE key = $1`, key).Scan(&used)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("used: %w", err)
	}
	return used, nil
}

// DeleteExpired implements backend.Store.
func (s *Store) DeleteExpired(ctx context.Context, now time.Time, capsuleTTL time.Duration) (int, error) {
	var total int64
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if capsuleTTL > 0 {
			var n int64
			err := tx.QueryRowContext(ctx,
				`WITH gone AS (DELETE FROM capsules WHERE updated_at < $1 RETURNING principal, a_leg),
				 hist AS (DELETE FROM capsule_history h USING gone WHERE h.principal = gone.principal AND h.a_leg = gone.a_leg)
				 SELECT count(*) FROM gone`, now.Add(-capsuleTTL)).Scan(&n)
			if err != nil {
				return err
			}
			total += n
			if _, err := tx.ExecContext(ctx, `DELETE FROM compactions WHERE at < $1`, now.Add(-capsuleTTL)); err != nil {
				return err
			}
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM lineage WHERE expires_at <= $1`, now)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		total += n
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("delete expired: %w", err)
	}
	return int(total), nil
}

// Dump implements backend.Store: every table of the current schema, every
// row, columns joined by '|', bytea as text.
func (s *Store) Dump(ctx context.Context) (map[string][]string, error) {
	rows, err := s.db.QueryContext(ctx,
		`SELECT table_name FROM information_schema.tables
		 WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`)
	tables, err := collect(rows, err, func(row *sql.Rows) (string, error) {
		var t string
		return t, row.Scan(&t)
	})
	if err != nil {
		return nil, fmt.Errorf("dump: %w", err)
	}
	out := make(map[string][]string, len(tables))
	for _, table := range tables {
		lines, err := s.dumpTable(ctx, table)
		if err != nil {
			return nil, fmt.Errorf("dump %s: %w", table, err)
		}
		out[table] = lines
	}
	return out, nil
}

// dumpTable returns every row of table, columns joined by '|'.
func (s *Store) dumpTable(ctx context.Context, table string) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT * FROM `+pq.QuoteIdentifier(table))
	if err != nil {
		return nil, err
	}
	cols, err := rows.Columns()
	if err != nil {
		_ = rows.Close()
		return nil, err
	}
	return collect(rows, nil, func(row *sql.Rows) (string, error) {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := row.Scan(ptrs...); err != nil {
			return "", err
		}
		return backend.DumpLine(vals), nil
	})
}

// Ping implements backend.Store.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.db.PingContext(ctx); err != nil {
		return fmt.Errorf("ping postgres store: %w", err)
	}
	return nil
}

// Close implements backend.Store.
func (s *Store) Close() error {
	return s.db.Close()
}
