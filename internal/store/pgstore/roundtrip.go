package pgstore

import (
	"context"
	"database/sql/driver"
	"errors"
)

// countingConnector reports every driver call that is one round trip to the
// server: a statement (its parameters travel with it), BEGIN, COMMIT,
// ROLLBACK and a ping. Opening a connection is not counted.
type countingConnector struct {
	driver.Connector
	onRoundTrip func(sql string)
}

// pqConn is what the pq driver's connections implement and the pool uses.
type pqConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.NamedValueChecker
	driver.SessionResetter
	driver.Validator
}

func (c countingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	pc, ok := conn.(pqConn)
	if !ok {
		_ = conn.Close()
		return nil, errors.New("postgres driver connection lacks a method the round-trip count needs")
	}
	return &countingConn{pqConn: pc, onRoundTrip: c.onRoundTrip}, nil
}

type countingConn struct {
	pqConn
	onRoundTrip func(sql string)
}

// Prepare is not used by the store; a prepared statement's executions would
// go uncounted, so it is refused.
func (c *countingConn) Prepare(string) (driver.Stmt, error) {
	return nil, errors.New("pgstore: prepared statements are not counted")
}

func (c *countingConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *countingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	c.onRoundTrip("BEGIN")
	tx, err := c.pqConn.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return countingTx{tx: tx, onRoundTrip: c.onRoundTrip}, nil
}

func (c *countingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	c.onRoundTrip(query)
	return c.pqConn.ExecContext(ctx, query, args)
}

func (c *countingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	c.onRoundTrip(query)
	return c.pqConn.QueryContext(ctx, query, args)
}

func (c *countingConn) Ping(ctx context.Context) error {
	c.onRoundTrip(";")
	return c.pqConn.Ping(ctx)
}

type countingTx struct {
	tx          driver.Tx
	onRoundTrip func(sql string)
}

func (t countingTx) Commit() error {
	t.onRoundTrip("COMMIT")
	return t.tx.Commit()
}

func (t countingTx) Rollback() error {
	t.onRoundTrip("ROLLBACK")
	return t.tx.Rollback()
}
