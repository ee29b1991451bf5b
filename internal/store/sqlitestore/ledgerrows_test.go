package sqlitestore

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/store/backend"
)

// benchRow is call c's plain settlement as the ledger writes it for a
// call no budget applies to.
func benchRow(c int) backend.Settlement {
	id := backend.NewCallID(time.Now())
	return backend.Settlement{Entry: backend.LedgerEntry{
		ID: id, Time: time.Now(), Principal: "alice", Account: "alice", Session: fmt.Sprintf("se_%016x", c%64),
		ALeg: fmt.Sprintf("al_%016x", c%64), BLeg: id, Kind: "primary", Route: "anthropic", Provider: "anthropic",
		Model: "claude-sonnet-4-5", InputTokens: 51200, OutputTokens: 800, CacheReadTokens: 48000,
		CostMicros: 31_000, Status: 200, DurationMS: 4200,
	}}
}

// BenchmarkLedgerRows: one write transaction inserting n plain ledger
// rows, as the writer does with the journaled settlements that gathered
// while the previous transaction ran: tens at 64 clients).
//
//	go test -run '^$' -bench LedgerRows -count 5 ./internal/store/sqlitestore
func BenchmarkLedgerRows(b *testing.B) {
	for _, n := range []int{1, 8, 45, 100} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			s, err := Open(b.Context(), filepath.Join(b.TempDir(), "tether.db"), Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			sts := make([]backend.Settlement, n)
			var c int
			b.ReportAllocs()
			for b.Loop() {
				for i := range sts {
					c++
					sts[i] = benchRow(c)
				}
				if err := s.write(context.Background(), func(t *writeTx) error { return settleIn(t, sts) }); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
		})
	}
}

// ledgerRows returns the ledger's rows as "id/model" in insertion order
// (rowid): a row lost, written twice or moved shows.
func ledgerRows(t *testing.T, s *Store) []string {
	t.Helper()
	rows, err := s.r.QueryContext(t.Context(), `SELECT id, model FROM ledger ORDER BY rowid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, model string
		if err := rows.Scan(&id, &model); err != nil {
			t.Fatal(err)
		}
		out = append(out, id+"/"+model)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func row(id, model string) backend.LedgerEntry {
	return backend.LedgerEntry{ID: id, Time: time.Now(), Principal: "alice", Account: "alice", Kind: "primary", Model: model}
}

// Rows held back for a multi-row insert are inserted as if one by one:
// in order, the first of two with one id kept, every one of them (past
// the most a transaction holds, and in a remainder of every size), and
// before any later statement of the transaction runs, which sees them.
func TestHeldLedgerRowsAreInsertedInOrder(t *testing.T) {
	s := openTemp(t, filepath.Join(t.TempDir(), "tether.db"))
	defer s.Close()
	var want []string
	err := s.write(t.Context(), func(tx *writeTx) error {
		for i := range 150 {
			id := fmt.Sprintf("r%03d", i)
			if err := tx.addLedgerRow(row(id, "first")); err != nil {
				return err
			}
			want = append(want, id+"/first")
			if i%7 == 3 { // the same id again: kept out
				if err := tx.addLedgerRow(row(id, "again")); err != nil {
					return err
				}
			}
			if i%40 == 39 { // a statement between rows sees every row before it
				if _, err := tx.exec(`INSERT INTO budgets (key, used) VALUES (?, (SELECT count(*) FROM ledger))`, id); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := ledgerRows(t, s); !slices.Equal(got, want) {
		t.Fatalf("ledger rows in insertion order:\n%v\nwant\n%v", got, want)
	}
	for _, id := range []string{"r039", "r079", "r119"} {
		used, err := s.Used(t.Context(), id)
		if want := int64(id[1]-'0')*100 + int64(id[2]-'0')*10 + int64(id[3]-'0') + 1; err != nil || used != want {
			t.Errorf("the statement after %s counted %d rows (%v), want %d", id, used, err, want)
		}
	}
}

// Rows held by a transaction that fails are not inserted, by it or by the
// next transaction.
func TestHeldLedgerRowsOfAFailedTransaction(t *testing.T) {
	s := openTemp(t, filepath.Join(t.TempDir(), "tether.db"))
	defer s.Close()
	failed := fmt.Errorf("failed")
	err := s.write(t.Context(), func(tx *writeTx) error {
		for i := range 40 {
			if err := tx.addLedgerRow(row(fmt.Sprintf("lost%02d", i), "m")); err != nil {
				return err
			}
		}
		return failed
	})
	if err != failed {
		t.Fatalf("write = %v, want the part's error", err)
	}
	if err := s.write(t.Context(), func(tx *writeTx) error { return tx.addLedgerRow(row("kept", "m")) }); err != nil {
		t.Fatal(err)
	}
	if got := ledgerRows(t, s); !slices.Equal(got, []string{"kept/m"}) {
		t.Fatalf("ledger = %v, want only the second transaction's row", got)
	}
}

// Plain settlements from many callers, journaled and riding along with
// group transactions beside settlements that move counters, are each
// written once, and each caller's rows in the order it settled them.
func TestConcurrentSettlementsAreWrittenOnceInOrder(t *testing.T) {
	s := openTemp(t, filepath.Join(t.TempDir(), "tether.db"))
	defer s.Close()
	s.group.wait = time.Millisecond
	const callers, calls = 8, 120
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for c := range callers {
		wg.Go(func() {
			for i := range calls {
				st := backend.Settlement{Entry: row(fmt.Sprintf("c%d-%03d", c, i), "m")}
				if i%10 == 9 { // now and then a counter moves: a synchronous transaction
					st.Adjust = []backend.Hold{{Key: "principal:alice", Amount: 1}}
				}
				if err := s.SettleReservations(t.Context(), []backend.Settlement{st}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if _, err := s.LedgerEntries(t.Context(), "alice", 1); err != nil { // writes what is journaled
		t.Fatal(err)
	}
	next := make([]int, callers)
	for _, r := range ledgerRows(t, s) {
		var c, i int
		if _, err := fmt.Sscanf(r, "c%d-%d/m", &c, &i); err != nil || c >= callers {
			t.Fatalf("unexpected row %q", r)
		}
		if i != next[c] {
			t.Fatalf("caller %d's row %d follows its row %d: lost, repeated or moved", c, i, next[c]-1)
		}
		next[c]++
	}
	for c, n := range next {
		if n != calls {
			t.Errorf("caller %d: %d rows written, want %d", c, n, calls)
		}
	}
}

// A journal left by a killed process is replayed with the rows held back
// too: every row once, in the order it was appended, the first of two
// with one id kept.
func TestJournalReplayKeepsOrder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tether.db")
	if err := openTemp(t, path).Close(); err != nil {
		t.Fatal(err)
	}
	j, err := newJournal(path, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer j.close()
	var want []string
	for i := range 70 {
		batch := []backend.Settlement{{Entry: row(fmt.Sprintf("j%02d", i), "first")}}
		want = append(want, fmt.Sprintf("j%02d/first", i))
		if i%9 == 4 { // a batch of two, the second a row already journaled
			batch = append(batch, backend.Settlement{Entry: row(fmt.Sprintf("j%02d", i/2), "again")})
		}
		if _, err := j.append(batch); err != nil {
			t.Fatal(err)
		}
	}
	s := openTemp(t, path)
	defer s.Close()
	if got := ledgerRows(t, s); !slices.Equal(got, want) {
		t.Fatalf("ledger rows after the replay:\n%v\nwant\n%v", got, want)
	}
}
