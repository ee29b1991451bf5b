package sqlitestore

import (
	"database/sql/driver"
	"strings"

	"github.com/tether-dev/tether/internal/store/backend"
)

// Every proxied call ends in one ledger row, and under load a group
// transaction carries tens of them (the journaled settlements that
// gathered while the previous one ran). Running a statement through the
// driver costs about as much again as binding its row (a step started,
// the statement reset, its bindings cleared, a result made), so a
// transaction holds its ledger rows back and inserts them with a few
// multi-row statements: addLedgerRow holds a row, and the transaction's
// next statement, or its COMMIT, first inserts what is held, in order.
// No statement runs while a row added before it is held, so what the
// transaction does is what inserting each row where it was added did:
// the same rows, the same order, the first of two with one id kept (ON
// CONFLICT (id) DO NOTHING holds row by row inside one statement too).

const (
	insertLedgerHead = `INSERT INTO ledger (id, ts, day, principal, account, session, a_leg, b_leg, kind, route, provider, model,
	input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_micros, status, duration_ms) VALUES `
	ledgerRowParams  = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	insertLedgerTail = ` ON CONFLICT (id) DO NOTHING`
)

// ledgerInsert is the statement that inserts rows ledger rows at once.
type ledgerInsert struct {
	rows int
	q    string
}

// ledgerInserts are the multi-row inserts, largest first: the rows held
// go in with as many of the largest as they fill, then of the next. The
// largest is the most rows a transaction holds. (Every power of two down
// to 1, which leaves no more than one single-row insert, measured no
// better: a statement's own cost is about half a row's.)
var ledgerInserts = []ledgerInsert{newLedgerInsert(32), newLedgerInsert(8), newLedgerInsert(1)}

func newLedgerInsert(rows int) ledgerInsert {
	values := strings.Repeat(ledgerRowParams+", ", rows-1) + ledgerRowParams
	return ledgerInsert{rows: rows, q: insertLedgerHead + values + insertLedgerTail}
}

// addLedgerRow holds e to be inserted before t's next statement.
func (t *writeTx) addLedgerRow(e backend.LedgerEntry) error {
	t.ws.held = append(t.ws.held, e)
	if len(t.ws.held) < ledgerInserts[0].rows {
		return nil
	}
	return t.insertHeld()
}

// insertHeld inserts the rows held, in order.
func (t *writeTx) insertHeld() error {
	held := t.ws.held
	t.ws.held = held[:0]
	for len(held) > 0 {
		ins := ledgerInserts[len(ledgerInserts)-1]
		for _, c := range ledgerInserts {
			if c.rows <= len(held) {
				ins = c
				break
			}
		}
		args := t.ws.args[:0]
		for i := range held[:ins.rows] {
			args = appendLedgerArgs(args, &held[i])
		}
		t.ws.args = args
		if _, err := t.run(ins.q, args); err != nil {
			return err
		}
		held = held[ins.rows:]
	}
	return nil
}

// appendLedgerArgs appends the parameters of e's row (ledgerRowParams)
// to dst, numbered on from dst's last, as driver values: nothing to
// convert.
func appendLedgerArgs(dst []driver.NamedValue, e *backend.LedgerEntry) []driver.NamedValue {
	at := backend.NormalizeTime(e.Time)
	n := len(dst)
	for i, v := range [...]driver.Value{e.ID, micros(at), backend.Day(at), e.Principal, e.Account, e.Session, e.ALeg, e.BLeg,
		e.Kind, e.Route, e.Provider, e.Model, e.InputTokens, e.OutputTokens, e.CacheReadTokens, e.CacheWriteTokens,
		e.CostMicros, int64(e.Status), e.DurationMS} {
		dst = append(dst, driver.NamedValue{Ordinal: n + i + 1, Value: v})
	}
	return dst
}
