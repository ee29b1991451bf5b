package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
)

// checkpointer copies the write-ahead log into the database file beside
// the writer. SQLite's default has the writer do it: the commit that takes
// the log past 1000 frames copies them all and fsyncs, so every hundredth
// turn or so waited milliseconds for work that was not its own.
//
// Each round has two steps. The bulk of the copy is a PASSIVE checkpoint
// on a connection of the checkpointer's own, which waits for no lock the
// writer or the readers hold: they go on meanwhile. The log restarts from
// its beginning only at a write that finds it wholly copied, which under a
// steady stream of writes it never is (each commit appends while the copy
// runs), so the round ends on the writer's connection, holding it: what
// was committed during the bulk copy is copied too, and the next write
// restarts the log. Writes wait only for that tail (a few frames and the
// two fsyncs). The writer's own connection has wal_autocheckpoint(0).
type checkpointer struct {
	db   *sql.DB // nil until start, and for a store that failed to open
	w    *sql.DB // the writer's pool (one connection)
	wake chan struct{}
	quit chan struct{}
	done chan struct{}
	once sync.Once
}

// checkpointEvery is how many write transactions a round is asked for
// after. A turn's transaction writes 8–10 frames, so at one caller the log
// reaches about twice the default's 1000 before a round; a round then holds
// the writer for about two fsyncs once in 256 commits instead of copying
// 1000 frames once in 100 (a commit's latency at the 99th percentile
// halved, at the 99.9th a third: see BENCHMARKS.md).
const checkpointEvery = 256

// start opens the checkpointer's connection to path and starts it.
func (c *checkpointer) start(ctx context.Context, path string, w *sql.DB) error {
	db, err := sql.Open("sqlite", path+"?"+pragmas)
	if err != nil {
		return err
	}
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return err
	}
	c.db, c.w = db, w
	c.wake = make(chan struct{}, 1)
	c.quit = make(chan struct{})
	c.done = make(chan struct{})
	go c.run()
	return nil
}

// committed counts write transaction n and asks for a checkpoint every
// checkpointEvery of them; it never waits.
func (c *checkpointer) committed(n int64) {
	if c.wake == nil || n%checkpointEvery != 0 {
		return
	}
	select {
	case c.wake <- struct{}{}:
	default: // one is pending already
	}
}

func (c *checkpointer) run() {
	defer close(c.done)
	for {
		select {
		case <-c.quit:
			return
		case <-c.wake:
		}
		_ = c.round(context.Background())
	}
}

// round copies the log: the bulk beside the writer, the tail holding it.
// An error (a full disk, say) leaves the log to grow until the next round:
// commits never depend on a checkpoint.
func (c *checkpointer) round(ctx context.Context) error {
	if _, err := c.db.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`); err != nil {
		return err
	}
	conn, err := c.w.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	_, err = conn.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`)
	return err
}

// stop ends the checkpointer and closes its connection. The last
// connection's close checkpoints what is left (SQLite's own rule).
func (c *checkpointer) stop() error {
	var err error
	c.once.Do(func() {
		if c.db == nil {
			return
		}
		close(c.quit)
		<-c.done
		err = c.db.Close()
	})
	if err != nil {
		return fmt.Errorf("close checkpointer: %w", err)
	}
	return nil
}
