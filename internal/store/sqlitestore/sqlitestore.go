// Package sqlitestore is the embedded Tether store: one SQLite file in WAL
// mode, through the pure-Go modernc.org/sqlite driver.
//
// Connections: one writer connection and a small pool of read-only
// connections. SQLite admits one writer at a time whatever the pool size, so
// several write connections would only trade Go's orderly queue for
// SQLite's sleep-and-retry busy handler, which under contention starves some
// writers past busy_timeout ("database is locked"). With a single writer the
// queue is database/sql's, no write ever waits on SQLITE_BUSY from this
// process, and WAL lets the readers run concurrently with it. Write
// transactions still start with BEGIN IMMEDIATE and busy_timeout is set, for
// other processes (the capsule inspection command) that open the same file.
package sqlitestore

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/tether-dev/tether/internal/store/backend"
)

//go:embed migrations/*.sql
var migrations embed.FS

const pragmas = "_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"

// Options configures a Store. The zero value is usable.
type Options struct {
	// Now is the clock used for lineage expiry and default UpdatedAt;
	// time.Now if nil.
	Now func() time.Time
	// ReadConns is the size of the read-only pool; default
	// max(4, GOMAXPROCS).
	ReadConns int
}

// Store is a backend.Store on one SQLite file.
type Store struct {
	now   func() time.Time
	w     *sql.DB  // one connection, BEGIN IMMEDIATE
	r     *sql.DB  // read-only pool
	stmts sync.Map // stmtKey → *sql.Stmt

	mu         sync.Mutex
	unprepared []string // write statements to prepare once the connection is free

	ws    writeStmts // the hot writes' statements (write)
	group writeGroup
	txns  atomic.Int64 // write transactions committed (tests)
	ckpt  checkpointer

	jr     *journal // ledger rows not yet in a transaction (see journal)
	closed atomic.Bool
}

var _ backend.Store = (*Store)(nil)

// Open opens (creating if needed, with its parent directory, mode 0600) the
// database file at path and applies pending migrations.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if path == "" || strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("open sqlite store: path %q must be a non-empty file path without '?' or '#': %w", path, backend.ErrInvalid)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("open sqlite store: create directory: %w", err)
	}
	// Create the file ourselves so that it (and the -wal/-shm files SQLite
	// derives from it) is private to the user.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open sqlite store: %w", err)
	}
	_ = f.Close()

	s := &Store{now: opts.Now}
	if s.now == nil {
		s.now = time.Now
	}
	// The writer never checkpoints: its commits would carry the copy of
	// the log into the database file and its fsyncs (see checkpointer).
	s.w, err = sql.Open("sqlite", path+"?"+pragmas+"&_txlock=immediate&_pragma=wal_autocheckpoint(0)")
	if err != nil {
		return nil, fmt.Errorf("open sqlite store: %w", err)
	}
	s.w.SetMaxOpenConns(1)
	s.w.SetMaxIdleConns(1)
	s.w.SetConnMaxLifetime(0)
	s.w.SetConnMaxIdleTime(0)
	if err := migrate(ctx, s.w); err != nil {
		_ = s.w.Close()
		return nil, err
	}
	if err := s.openJournal(ctx, path); err != nil {
		_ = s.w.Close()
		return nil, fmt.Errorf("open sqlite store: %w", err)
	}
	s.r, err = sql.Open("sqlite", path+"?"+pragmas+"&_pragma=query_only(1)")
	if err != nil {
		if s.jr != nil {
			_ = s.jr.close()
			_ = s.jr.unlock()
		}
		_ = s.w.Close()
		return nil, fmt.Errorf("open sqlite store: %w", err)
	}
	n := opts.ReadConns
	if n <= 0 {
		n = max(4, runtime.GOMAXPROCS(0))
	}
	s.r.SetMaxOpenConns(n)
	s.r.SetMaxIdleConns(n)
	if err := s.r.PingContext(ctx); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("open sqlite store: %w", err)
	}
	if err := s.ckpt.start(ctx, path, s.w); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("open sqlite store: %w", err)
	}
	return s, nil
}

// migrate applies the embedded migrations not yet recorded in
// schema_migrations, each in its own transaction.
func migrate(ctx context.Context, db *sql.DB) error {
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("migrate sqlite store: %w", err)
	}
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return fmt.Errorf("migrate sqlite store: %w", err)
	}
	slices.Sort(names)
	for _, name := range names {
		version := strings.TrimSuffix(filepath.Base(name), ".sql")
		body, err := migrations.ReadFile(name)
		if err != nil {
			return fmt.Errorf("migrate sqlite store: %w", err)
		}
		if err := applyMigration(ctx, db, version, string(body)); err != nil {
			return fmt.Errorf("migrate sqlite store to %s: %w", version, err)
		}
	}
	return nil
}

func applyMigration(ctx context.Context, db *sql.DB, version, body string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = ?`, version).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, body); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`, version, time.Now().UnixMicro()); err != nil {
		return err
	}
	return tx.Commit()
}

func micros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

func fromMicros(us int64) time.Time {
	return time.UnixMicro(us).UTC()
}

// inTx runs fn in a write transaction (BEGIN IMMEDIATE) on the writer.
// The queries of every turn, prepared once per connection (stmt).
const (
	getCapsule = `SELECT session, revision, data, updated_at FROM capsules WHERE principal = ? AND a_leg = ?`
	getLineage = `SELECT key, value FROM lineage
		 WHERE principal = ? AND key IN (SELECT value FROM json_each(?)) AND (expires_at = 0 OR expires_at > ?)`
)

type stmtKey struct {
	db *sql.DB
	q  string
}

// stmt returns db's prepared statement for q, prepared on first use and
// kept until Close: the statements of a turn are compiled once, not on
// every call (the driver keeps no cache of its own).
func (s *Store) stmt(ctx context.Context, db *sql.DB, q string) (*sql.Stmt, error) {
	k := stmtKey{db, q}
	if st, ok := s.stmts.Load(k); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := db.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	if prev, loaded := s.stmts.LoadOrStore(k, st); loaded {
		_ = st.Close()
		return prev.(*sql.Stmt), nil
	}
	return st, nil
}

// txStmt is the write connection's prepared statement for q, bound to tx.
// The write pool's one connection is tx's, so a statement not prepared yet
// is prepared in tx this time and on the connection once tx ends (inTx).
func (s *Store) txStmt(ctx context.Context, tx *sql.Tx, q string) (*sql.Stmt, error) {
	if st, ok := s.stmts.Load(stmtKey{s.w, q}); ok {
		return tx.StmtContext(ctx, st.(*sql.Stmt)), nil
	}
	s.mu.Lock()
	s.unprepared = append(s.unprepared, q)
	s.mu.Unlock()
	return tx.PrepareContext(ctx, q)
}

// txExec executes q in tx through its prepared statement.
func (s *Store) txExec(ctx context.Context, tx *sql.Tx, q string, args ...any) (sql.Result, error) {
	st, err := s.txStmt(ctx, tx, q)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

func (s *Store) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	defer s.prepareWrites(ctx)
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// prepareWrites prepares on the write connection the statements a
// transaction had to prepare for itself.
func (s *Store) prepareWrites(ctx context.Context) {
	s.mu.Lock()
	qs := s.unprepared
	s.unprepared = nil
	s.mu.Unlock()
	for _, q := range qs {
		_, _ = s.stmt(context.WithoutCancel(ctx), s.w, q)
	}
}

// GetCapsule implements backend.Store.
func (s *Store) GetCapsule(ctx context.Context, principal, aLeg string) (backend.CapsuleRecord, error) {
	r := backend.CapsuleRecord{Principal: principal, ALeg: aLeg}
	var ts int64
	st, err := s.stmt(ctx, s.r, getCapsule)
	if err != nil {
		return backend.CapsuleRecord{}, fmt.Errorf("get capsule: %w", err)
	}
	err = st.QueryRowContext(ctx, principal, aLeg).Scan(&r.Session, &r.Revision, &r.Data, &ts)
	if errors.Is(err, sql.ErrNoRows) {
		return backend.CapsuleRecord{}, fmt.Errorf("get capsule: %w", backend.ErrNotFound)
	}
	if err != nil {
		return backend.CapsuleRecord{}, fmt.Errorf("get capsule: %w", err)
	}
	r.UpdatedAt = fromMicros(ts)
	return r, nil
}

// PutCapsule implements backend.Store.
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
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var res sql.Result
		var err error
		if expectRevision == 0 {
			res, err = s.txExec(ctx, tx,
				`INSERT INTO capsules (principal, a_leg, session, revision, data, updated_at) VALUES (?, ?, ?, ?, ?, ?)
				 ON CONFLICT (principal, a_leg) DO NOTHING`,
				rec.Principal, rec.ALeg, rec.Session, rec.Revision, data, at.UnixMicro())
		} else {
			res, err = s.txExec(ctx, tx,
				`UPDATE capsules SET session = ?, revision = ?, data = ?, updated_at = ?
				 WHERE principal = ? AND a_leg = ? AND revision = ?`,
				rec.Session, rec.Revision, data, at.UnixMicro(), rec.Principal, rec.ALeg, expectRevision)
		}
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return backend.ErrConflict
		}
		if _, err := s.txExec(ctx, tx,
			`INSERT OR REPLACE INTO capsule_history (principal, a_leg, revision, session, data, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
			rec.Principal, rec.ALeg, rec.Revision, rec.Session, data, at.UnixMicro()); err != nil {
			return err
		}
		_, err = s.txExec(ctx, tx,
			`DELETE FROM capsule_history WHERE principal = ? AND a_leg = ? AND revision <= ?`,
			rec.Principal, rec.ALeg, rec.Revision-backend.HistoryLimit)
		return err
	})
	if err != nil {
		return fmt.Errorf("put capsule revision %d: %w", rec.Revision, err)
	}
	return nil
}

func scanCapsules(rows *sql.Rows) ([]backend.CapsuleRecord, error) {
	defer rows.Close()
	var out []backend.CapsuleRecord
	for rows.Next() {
		var r backend.CapsuleRecord
		var ts int64
		if err := rows.Scan(&r.Principal, &r.ALeg, &r.Session, &r.Revision, &r.Data, &ts); err != nil {
			return nil, err
		}
		r.UpdatedAt = fromMicros(ts)
		out = append(out, r)
	}
	return out, rows.Err()
}

// CapsuleHistory implements backend.Store.
func (s *Store) CapsuleHistory(ctx context.Context, principal, aLeg string, limit int) ([]backend.CapsuleRecord, error) {
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.r.QueryContext(ctx,
		`SELECT principal, a_leg, session, revision, data, updated_at FROM capsule_history
		 WHERE principal = ? AND a_leg = ? ORDER BY revision DESC LIMIT ?`, principal, aLeg, limit)
	if err != nil {
		return nil, fmt.Errorf("capsule history: %w", err)
	}
	out, err := scanCapsules(rows)
	if err != nil {
		return nil, fmt.Errorf("capsule history: %w", err)
	}
	return out, nil
}

// ListCapsules implements backend.Store.
func (s *Store) ListCapsules(ctx context.Context, principal string) ([]backend.CapsuleRecord, error) {
	q := `SELECT principal, a_leg, session, revision, data, updated_at FROM capsules`
	var args []any
	if principal != "" {
		q += ` WHERE principal = ?`
		args = append(args, principal)
	}
	rows, err := s.r.QueryContext(ctx, q+` ORDER BY principal, a_leg`, args...)
	if err != nil {
		return nil, fmt.Errorf("list capsules: %w", err)
	}
	out, err := scanCapsules(rows)
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
		where, args := `principal = ?`, []any{principal}
		if aLeg != "" {
			where, args = `principal = ? AND a_leg = ?`, []any{principal, aLeg}
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM capsules WHERE `+where, args...)
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM capsule_history WHERE `+where, args...); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM outbox WHERE `+where, args...); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM compactions WHERE `+where, args...); err != nil {
			return err
		}
		if aLeg == "" {
			if _, err := tx.ExecContext(ctx, `DELETE FROM lineage WHERE principal = ?`, principal); err != nil {
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
	return s.putLineages(ctx, principal, []backend.LineagePut{{Key: key, Value: value, Expires: expires}})
}

// PutLineages implements backend.Store: one write transaction.
func (s *Store) PutLineages(ctx context.Context, principal string, puts []backend.LineagePut) error {
	if err := backend.CheckLineagePuts(principal, puts); err != nil {
		return err
	}
	if len(puts) == 0 {
		return nil
	}
	return s.putLineages(ctx, principal, puts)
}

// EnqueueLineages implements backend.LineageEnqueuer: the puts join the
// write group now, riding along with the next transaction (at most
// rideAlongWait later they are written on their own).
func (s *Store) EnqueueLineages(principal string, puts []backend.LineagePut) <-chan error {
	if err := backend.CheckLineagePuts(principal, puts); err != nil || len(puts) == 0 {
		done := make(chan error, 1)
		done <- err
		return done
	}
	return s.enqueue(func(t *writeTx) error { return upsertLineages(t, principal, puts) })
}

// upsertLineages writes puts, in their order, inside t.
func upsertLineages(t *writeTx, principal string, puts []backend.LineagePut) error {
	for _, p := range puts {
		v := p.Value
		if v == nil {
			v = []byte{}
		}
		if _, err := t.exec(upsertLineage, principal, p.Key, v, micros(backend.NormalizeTime(p.Expires))); err != nil {
			return err
		}
	}
	return nil
}

// putLineages upserts puts, in their order, in the writer's next group
// transaction. The caller's cancellation does not end its wait: the
// batch carries other callers' writes, and a call returns once its
// records are stored or the transaction failed.
func (s *Store) putLineages(ctx context.Context, principal string, puts []backend.LineagePut) error {
	err := s.grouped(context.WithoutCancel(ctx), func(t *writeTx) error { return upsertLineages(t, principal, puts) })
	if err != nil {
		return fmt.Errorf("put lineage: %w", err)
	}
	return nil
}

const upsertLineage = `INSERT INTO lineage (principal, key, value, expires_at) VALUES (?, ?, ?, ?)
	ON CONFLICT (principal, key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at`

// GetLineage implements backend.Store. The keys travel as one JSON array
// parameter, so any number of them costs one query.
func (s *Store) GetLineage(ctx context.Context, principal string, keys []string) (map[string][]byte, error) {
	out := make(map[string][]byte, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	list, err := json.Marshal(keys)
	if err != nil {
		return nil, fmt.Errorf("get lineage: %w", err)
	}
	st, err := s.stmt(ctx, s.r, getLineage)
	if err != nil {
		return nil, fmt.Errorf("get lineage: %w", err)
	}
	rows, err := st.QueryContext(ctx, principal, string(list), s.now().UnixMicro())
	if err != nil {
		return nil, fmt.Errorf("get lineage: %w", err)
	}
	defer rows.Close()
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

// LineageKeys calls fn with the principal and key of every lineage record
// held (expired ones included), stopping at fn's first error. It reads the
// keys in one query, without their values.
func (s *Store) LineageKeys(ctx context.Context, fn func(principal, key string) error) error {
	rows, err := s.r.QueryContext(ctx, `SELECT principal, key FROM lineage`)
	if err != nil {
		return fmt.Errorf("lineage keys: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var p, k string
		if err := rows.Scan(&p, &k); err != nil {
			return fmt.Errorf("lineage keys: %w", err)
		}
		if err := fn(p, k); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("lineage keys: %w", err)
	}
	return nil
}

// AppendLedger implements backend.Store.
func (s *Store) AppendLedger(ctx context.Context, entries []backend.LedgerEntry) error {
	if err := backend.CheckLedger(entries); err != nil {
		return err
	}
	if len(entries) == 0 {
		return nil
	}
	err := s.write(ctx, func(t *writeTx) error {
		for _, e := range entries {
			if err := t.addLedgerRow(e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("append ledger: %w", err)
	}
	return nil
}

// Usage implements backend.Store.
func (s *Store) Usage(ctx context.Context, principal string, since time.Time) ([]backend.UsageRow, error) {
	s.awaitJournal(ctx)
	q := `SELECT day, kind, model, count(*), sum(input_tokens), sum(output_tokens), sum(cache_read_tokens),
		sum(cache_write_tokens), sum(cost_micros) FROM ledger WHERE ts >= ?`
	args := []any{micros(backend.NormalizeTime(since))}
	if principal != "" {
		q += ` AND principal = ?`
		args = append(args, principal)
	}
	rows, err := s.r.QueryContext(ctx, q+` GROUP BY day, kind, model ORDER BY day, kind, model`, args...)
	if err != nil {
		return nil, fmt.Errorf("usage: %w", err)
	}
	defer rows.Close()
	var out []backend.UsageRow
	for rows.Next() {
		var u backend.UsageRow
		if err := rows.Scan(&u.Day, &u.Kind, &u.Model, &u.Calls, &u.InputTokens, &u.OutputTokens,
			&u.CacheReadTokens, &u.CacheWriteTokens, &u.CostMicros); err != nil {
			return nil, fmt.Errorf("usage: %w", err)
		}
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("usage: %w", err)
	}
	return out, nil
}

// LedgerEntries implements backend.Store.
func (s *Store) LedgerEntries(ctx context.Context, principal string, limit int) ([]backend.LedgerEntry, error) {
	s.awaitJournal(ctx)
	if limit <= 0 {
		limit = -1
	}
	q := `SELECT id, ts, principal, account, session, a_leg, b_leg, kind, route, provider, model, input_tokens, output_tokens,
		cache_read_tokens, cache_write_tokens, cost_micros, status, duration_ms FROM ledger`
	var args []any
	if principal != "" {
		q += ` WHERE principal = ?`
		args = append(args, principal)
	}
	args = append(args, limit)
	rows, err := s.r.QueryContext(ctx, q+` ORDER BY ts DESC, id DESC LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("ledger entries: %w", err)
	}
	defer rows.Close()
	var out []backend.LedgerEntry
	for rows.Next() {
		var e backend.LedgerEntry
		var ts int64
		if err := rows.Scan(&e.ID, &ts, &e.Principal, &e.Account, &e.Session, &e.ALeg, &e.BLeg, &e.Kind, &e.Route,
			&e.Provider, &e.Model, &e.InputTokens, &e.OutputTokens, &e.CacheReadTokens, &e.CacheWriteTokens,
			&e.CostMicros, &e.Status, &e.DurationMS); err != nil {
			return nil, fmt.Errorf("ledger entries: %w", err)
		}
		if ts != 0 {
			e.Time = fromMicros(ts)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("ledger entries: %w", err)
	}
	return out, nil
}

// reserveBudget adds an amount (arguments: key, amount, amount, limit,
// limit) to a counter if the sum stays within the limit; adjustBudget
// moves a counter (key, delta, delta), never below zero.
const (
	reserveBudget = `INSERT INTO budgets (key, used) SELECT ?, ? WHERE ? <= ?
		 ON CONFLICT (key) DO UPDATE SET used = budgets.used + excluded.used WHERE budgets.used + excluded.used <= ?`
	adjustBudget = `INSERT INTO budgets (key, used) VALUES (?, max(?, 0))
		 ON CONFLICT (key) DO UPDATE SET used = max(budgets.used + ?, 0)`
)

// Reserve implements backend.Store in one statement: the upsert only
// happens when the result stays within the limit.
func (s *Store) Reserve(ctx context.Context, key string, amount, limit int64) (bool, error) {
	if err := backend.CheckReserve(key, amount); err != nil {
		return false, err
	}
	res, err := s.w.ExecContext(ctx, reserveBudget, key, amount, amount, limit, limit)
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
	_, err := s.w.ExecContext(ctx, adjustBudget, key, delta, delta)
	if err != nil {
		return fmt.Errorf("adjust: %w", err)
	}
	return nil
}

// Used implements backend.Store.
func (s *Store) Used(ctx context.Context, key string) (int64, error) {
	var used int64
	err := s.r.QueryRowContext(ctx, `SELECT used FROM budgets WHERE key = ?`, key).Scan(&used)
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
			cutoff := now.Add(-capsuleTTL).UnixMicro()
			if _, err := tx.ExecContext(ctx,
				`DELETE FROM capsule_history WHERE (principal, a_leg) IN (SELECT principal, a_leg FROM capsules WHERE updated_at < ?)`,
				cutoff); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM compactions WHERE at < ?`, cutoff); err != nil {
				return err
			}
			res, err := tx.ExecContext(ctx, `DELETE FROM capsules WHERE updated_at < ?`, cutoff)
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			total += n
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM lineage WHERE expires_at > 0 AND expires_at <= ?`, now.UnixMicro())
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

// Dump implements backend.Store: every table, every row, columns joined by
// '|', blobs as text.
func (s *Store) Dump(ctx context.Context) (map[string][]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("dump: %w", err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return nil, fmt.Errorf("dump: %w", err)
		}
		tables = append(tables, name)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("dump: %w", err)
	}
	out := make(map[string][]string, len(tables))
	for _, table := range tables {
		lines, err := dumpTable(ctx, s.r, table)
		if err != nil {
			return nil, fmt.Errorf("dump %s: %w", table, err)
		}
		out[table] = lines
	}
	return out, nil
}

func dumpTable(ctx context.Context, db *sql.DB, table string) ([]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT * FROM "`+strings.ReplaceAll(table, `"`, `""`)+`"`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	lines := []string{}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		lines = append(lines, backend.DumpLine(vals))
	}
	return lines, rows.Err()
}

// Ping implements backend.Store.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.w.PingContext(ctx); err != nil {
		return fmt.Errorf("ping sqlite store: %w", err)
	}
	if err := s.r.PingContext(ctx); err != nil {
		return fmt.Errorf("ping sqlite store: %w", err)
	}
	return nil
}

// Close implements backend.Store.
func (s *Store) Close() error {
	s.closed.Store(true)
	s.settleGroup()
	errs := []error{s.ckpt.stop(), s.closeWriteStmts()}
	if s.jr != nil {
		errs = append(errs, s.jr.close(), s.jr.unlock())
	}
	s.stmts.Range(func(_, st any) bool {
		errs = append(errs, st.(*sql.Stmt).Close())
		return true
	})
	if s.r != nil {
		errs = append(errs, s.r.Close())
	}
	errs = append(errs, s.w.Close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close sqlite store: %w", err)
	}
	return nil
}
