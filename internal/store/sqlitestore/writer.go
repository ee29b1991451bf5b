package sqlitestore

import (
	"cmp"
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/tether-dev/tether/internal/store/backend"
)

// The writes every turn makes (lineage, reservation, settlement) run
// below database/sql, on the writer's driver connection: a database/sql
// transaction starts a goroutine to watch its context, and the driver
// starts another for every statement run under a context that can end,
// and prepares BEGIN and COMMIT anew each time. For a transaction of two
// or three small rows that was as much CPU as SQLite's own work. Here
// every statement, BEGIN IMMEDIATE and COMMIT included, is prepared once
// on the connection and run with no cancellation: the context bounds the
// wait for the connection, and once a transaction has begun it runs to its
// COMMIT (busy_timeout bounds a wait for another process's lock). A write
// returns only after its COMMIT returned, as before.

const (
	beginImmediate = `BEGIN IMMEDIATE`
	commitTx       = `COMMIT`
	rollbackTx     = `ROLLBACK`
)

// writeStmts are the statements prepared on the writer's driver
// connection. The writer pool has one connection and write holds it, so
// only one write uses them at a time. If database/sql discards the
// connection (a broken one), its statements are dropped unclosed: the
// driver has closed their connection, and closing them would touch it.
type writeStmts struct {
	conn  driver.Conn // the connection they belong to
	stmts map[string]driver.Stmt
	// held are the ledger rows the running transaction holds back
	// (addLedgerRow); args is the statements' parameters, reused.
	held []backend.LedgerEntry
	args []driver.NamedValue
}

// writeTx is one write transaction on the writer's driver connection.
type writeTx struct {
	ctx context.Context // never done: statements are not interrupted
	ws  *writeStmts
}

// write runs fn in one write transaction (BEGIN IMMEDIATE … COMMIT) on the
// writer connection. ctx bounds the wait for the connection; the
// transaction, once begun, runs to its end. If fn fails the transaction
// is rolled back and fn's error returned.
func (s *Store) write(ctx context.Context, fn func(t *writeTx) error) error {
	c, err := s.w.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Raw(func(dc any) error {
		t := &writeTx{ctx: context.WithoutCancel(ctx), ws: s.writeStmts(dc.(driver.Conn))}
		if _, err := t.exec(beginImmediate); err != nil {
			return err
		}
		if err := fn(t); err != nil {
			return t.rollback(err)
		}
		if _, err := t.exec(commitTx); err != nil {
			// A failed COMMIT can leave the transaction open.
			return t.rollback(err)
		}
		s.ckpt.committed(s.txns.Add(1))
		return nil
	})
}

// rollback ends the transaction that failed with err. A connection that
// cannot roll back is discarded (driver.ErrBadConn) rather than reused
// perhaps inside a transaction.
func (t *writeTx) rollback(err error) error {
	t.ws.held = t.ws.held[:0] // fn's, not to be inserted by the ROLLBACK's exec
	if _, rerr := t.exec(rollbackTx); rerr != nil {
		return errors.Join(err, fmt.Errorf("roll back: %w (%w)", rerr, driver.ErrBadConn))
	}
	return err
}

// writeStmts returns the statement cache of the driver connection dc,
// emptied if dc is not the connection it was filled on (database/sql
// replaced a broken one; its statements went with it).
func (s *Store) writeStmts(dc driver.Conn) *writeStmts {
	if s.ws.conn != dc {
		s.ws = writeStmts{conn: dc, stmts: map[string]driver.Stmt{}}
	}
	return &s.ws
}

// stmt returns q prepared on the transaction's connection.
func (t *writeTx) stmt(q string) (driver.Stmt, error) {
	if st, ok := t.ws.stmts[q]; ok {
		return st, nil
	}
	p, ok := t.ws.conn.(driver.ConnPrepareContext)
	if !ok {
		return nil, errors.New("sqlite driver connection cannot prepare with a context")
	}
	st, err := p.PrepareContext(t.ctx, q)
	if err != nil {
		return nil, err
	}
	if _, ok := st.(driver.StmtExecContext); !ok {
		_ = st.Close()
		return nil, errors.New("sqlite driver statement cannot execute with a context")
	}
	t.ws.stmts[q] = st
	return st, nil
}

// exec runs q with args (int, int64, string, []byte, bool, float64 or
// time.Time values) through its prepared statement, after inserting the
// ledger rows held (addLedgerRow).
func (t *writeTx) exec(q string, args ...any) (driver.Result, error) {
	if len(t.ws.held) > 0 {
		if err := t.insertHeld(); err != nil {
			return nil, err
		}
	}
	named := t.ws.args[:0]
	for i, a := range args {
		v, err := driver.DefaultParameterConverter.ConvertValue(a)
		if err != nil {
			return nil, fmt.Errorf("argument %d: %w", i+1, err)
		}
		named = append(named, driver.NamedValue{Ordinal: i + 1, Value: v})
	}
	t.ws.args = named
	return t.run(q, named)
}

// run runs q with args through its prepared statement.
func (t *writeTx) run(q string, args []driver.NamedValue) (driver.Result, error) {
	st, err := t.stmt(q)
	if err != nil {
		return nil, err
	}
	return st.(driver.StmtExecContext).ExecContext(t.ctx, args)
}

// closeWriteStmts closes the statements prepared on the writer connection.
func (s *Store) closeWriteStmts() error {
	if len(s.ws.stmts) == 0 {
		return nil
	}
	c, err := s.w.Conn(context.Background())
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Raw(func(dc any) error {
		ws := s.writeStmts(dc.(driver.Conn))
		var errs []error
		for q, st := range ws.stmts {
			errs = append(errs, st.Close())
			delete(ws.stmts, q)
		}
		return errors.Join(errs...)
	})
}

// writeGroup commits the writes of every turn (lineage puts, settlements)
// together: the writes that arrive while a transaction runs go in the
// next one, lineage and settlements alike, so under load one SQLite
// transaction (its WAL locks, its COMMIT) carries many turns' rows instead
// of one each. A caller arriving when none runs writes at once, alone, on
// its own goroutine; the others wait, and the first of them runs the
// transaction of those that gathered. A write queued with no caller
// waiting (enqueue: a turn's lineage) rides along: it waits up to
// rideAlongWait for another write to start a transaction and take it, and
// is then written on its own.
type writeGroup struct {
	mu     sync.Mutex
	busy   bool // a leader is writing
	queue  []*groupJob
	linger *time.Timer   // armed while only queued parts wait
	wait   time.Duration // how long they wait (rideAlongWait; tests)
}

// groupJob is one caller's part of a group transaction.
type groupJob struct {
	fn   func(t *writeTx) error
	done chan error // the transaction's outcome, or errLead
	// queued: nobody waits on done to take the lead (enqueue); the part
	// rides along, and is never handed it.
	queued bool
	// then, if set, is told the transaction's outcome instead of done.
	then func(error)
}

// errLead hands the next group transaction to a waiting caller.
var errLead = errors.New("lead the next group transaction")

const (
	// maxGroup bounds the callers' parts in one transaction.
	maxGroup = 256
	// groupTimeout bounds a group transaction's wait for the writer
	// connection (held by another write of this process).
	groupTimeout = 30 * time.Second
	// rideAlongWait bounds how long a write that rides along waits for
	// another to start a transaction. What rides along is already safe
	// elsewhere or may be late: a journaled settlement (in the journal
	// file), a lineage head the resolver holds in memory, which only
	// the next process would read. Under load a longer wait puts more
	// turns in one COMMIT (20 ms against 2 ms: about 7 % more requests
	// a second at 64 clients, 200 KiB histories); a kill loses at most
	// this long of heads, whose turns the next process resolves from the
	// head before them.
	rideAlongWait = 20 * time.Millisecond
)

// grouped runs fn in a group transaction, after the parts queued before
// it, and returns the transaction's outcome: nil once it committed. A done
// ctx fails the call before it is queued; once queued the call waits for
// the transaction, whose parts belong to other callers too (a failed one
// fails every part).
func (s *Store) grouped(ctx context.Context, fn func(t *writeTx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	j := &groupJob{fn: fn, done: make(chan error, 1)}
	g := &s.group
	g.mu.Lock()
	g.queue = append(g.queue, j)
	if g.busy {
		g.mu.Unlock()
		if err := <-j.done; err != errLead {
			return err
		}
		g.mu.Lock()
	}
	return s.lead(j)
}

// enqueue queues fn as a part that rides along (its caller does not wait
// here): it is written with the next group transaction, or on its own
// after the ride-along wait. done receives the outcome.
func (s *Store) enqueue(fn func(t *writeTx) error) (done <-chan error) {
	j := &groupJob{fn: fn, done: make(chan error, 1), queued: true}
	s.queue(j)
	return j.done
}

// enqueueThen is enqueue with the outcome handed to then, on the
// goroutine that ran the transaction.
func (s *Store) enqueueThen(fn func(t *writeTx) error, then func(error)) {
	s.queue(&groupJob{fn: fn, queued: true, then: then})
}

// queue adds a part that rides along.
func (s *Store) queue(j *groupJob) {
	g := &s.group
	g.mu.Lock()
	g.queue = append(g.queue, j)
	if !g.busy {
		s.armLinger()
	}
	g.mu.Unlock()
}

// armLinger starts the ride-along wait unless it runs. g.mu is held.
func (s *Store) armLinger() {
	g := &s.group
	if g.linger == nil {
		g.linger = time.AfterFunc(cmp.Or(g.wait, rideAlongWait), s.leadLingering)
	}
}

// leadLingering starts the transaction of parts that rode along and found
// no other write to join.
func (s *Store) leadLingering() {
	g := &s.group
	g.mu.Lock()
	if g.busy || len(g.queue) == 0 {
		g.mu.Unlock() // a leader took them, or will
		return
	}
	_ = s.lead(nil)
}

// lead runs, as the group's leader, the transaction of the queued parts
// (self's among them; nil for none of a caller's own) and hands the
// lead to the first part queued meanwhile. g.mu is held on entry.
func (s *Store) lead(self *groupJob) error {
	g := &s.group
	if g.linger != nil {
		g.linger.Stop()
		g.linger = nil
	}
	g.busy = true
	n := min(len(g.queue), maxGroup)
	if self != nil {
		// A leader's own part is in its batch, however many parts that
		// ride along were queued before it.
		n = max(n, slices.Index(g.queue, self)+1)
	}
	batch := g.queue[:n:n]
	g.queue = g.queue[n:]
	g.mu.Unlock()

	wctx, cancel := context.WithTimeout(context.Background(), groupTimeout)
	err := s.write(wctx, func(t *writeTx) error {
		for _, b := range batch {
			if err := b.fn(t); err != nil {
				return err
			}
		}
		return nil
	})
	cancel()
	for _, b := range batch {
		switch {
		case b == self:
		case b.then != nil:
			b.then(err)
		default:
			b.done <- err
		}
	}
	g.mu.Lock()
	// The first part queued meanwhile whose caller waits leads next (its
	// batch starts at the queue's front, so order is kept); parts nobody
	// waits on ride along with whatever comes.
	if i := slices.IndexFunc(g.queue, func(j *groupJob) bool { return !j.queued }); i >= 0 {
		g.queue[i].done <- errLead
	} else {
		g.busy = false
		if len(g.queue) > 0 {
			s.armLinger()
		} else {
			g.queue = nil
		}
	}
	g.mu.Unlock()
	return err
}

// settleGroup writes every part still queued (riding along) and waits
// until no group transaction runs: Close calls it first.
func (s *Store) settleGroup() {
	g := &s.group
	deadline := time.Now().Add(groupTimeout)
	for time.Now().Before(deadline) {
		g.mu.Lock()
		switch {
		case !g.busy && len(g.queue) == 0:
			g.mu.Unlock()
			return
		case !g.busy:
			_ = s.lead(nil)
		default:
			g.mu.Unlock()
			time.Sleep(time.Millisecond)
		}
	}
}
