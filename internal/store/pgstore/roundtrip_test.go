package pgstore

import (
	"context"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/store/backend"
	"github.com/tether-dev/tether/internal/store/storetest"
)

// exchanges counts the request/response exchanges on the connections it
// dials: a write that follows a read (or opens the connection) starts one.
type exchanges struct {
	mu sync.Mutex
	n  int
}

func (e *exchanges) get() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.n
}

func (e *exchanges) Dial(network, address string) (net.Conn, error) {
	return e.DialContext(context.Background(), network, address)
}

func (e *exchanges) DialTimeout(network, address string, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return e.DialContext(ctx, network, address)
}

func (e *exchanges) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	return &exchangeConn{Conn: c, e: e}, nil
}

type exchangeConn struct {
	net.Conn
	e       *exchanges
	writing bool
}

func (c *exchangeConn) Write(b []byte) (int, error) {
	if !c.writing {
		c.writing = true
		c.e.mu.Lock()
		c.e.n++
		c.e.mu.Unlock()
	}
	return c.Conn.Write(b)
}

func (c *exchangeConn) Read(b []byte) (int, error) {
	c.writing = false
	return c.Conn.Read(b)
}

// TestRoundTripsCountedOncePerExchange: what OnRoundTrip reports is what
// crosses the network, one call per request/response exchange, and the
// multi-row writes (PutLineages, AppendLedger) are one exchange each.
func TestRoundTripsCountedOncePerExchange(t *testing.T) {
	url := storetest.PostgresURL(t)
	schema := storetest.FreshSchema(t, url, "tether_test")
	net := &exchanges{}
	var mu sync.Mutex
	var reported []string
	s, err := Open(t.Context(), url, Options{Schema: schema, MaxConns: 1, dialer: net, OnRoundTrip: func(sql string) {
		mu.Lock()
		reported = append(reported, sql)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer func() { _ = s.Close() }()
	ctx := t.Context()
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

	step := func(name string, want int, op func() error) {
		t.Helper()
		mu.Lock()
		before, netBefore := len(reported), net.get()
		mu.Unlock()
		if err := op(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		mu.Lock()
		got, gotNet := len(reported)-before, net.get()-netBefore
		mu.Unlock()
		if got != gotNet {
			t.Errorf("%s: OnRoundTrip reported %d round trips, the network saw %d exchanges", name, got, gotNet)
		}
		if want > 0 && gotNet != want {
			t.Errorf("%s: %d round trips, want %d", name, gotNet, want)
		}
	}
	step("PutCapsule", 1, func() error {
		return s.PutCapsule(ctx, backend.CapsuleRecord{Principal: "alice", ALeg: "a1", Revision: 1, Data: []byte(`{}`)}, 0)
	})
	step("GetCapsule", 1, func() error { _, err := s.GetCapsule(ctx, "alice", "a1"); return err })
	step("PutLineages", 1, func() error {
		return s.PutLineages(ctx, "alice", []backend.LineagePut{
			{Key: "k1", Value: []byte("v1")}, {Key: "k2", Value: []byte("v2"), Expires: at.Add(time.Hour)}, {Key: "k1", Value: []byte("v1b")},
		})
	})
	step("GetLineage", 1, func() error { _, err := s.GetLineage(ctx, "alice", []string{"k1", "k2"}); return err })
	head, err := s.GetCapsule(ctx, "alice", "a1")
	if err != nil {
		t.Fatal(err)
	}
	step("GetLineageWithCapsule", 1, func() error {
		got, c, found, err := s.GetLineageWithCapsule(ctx, "alice", []string{"k1", "k2", "k3"}, "a1")
		// k2 expired (an hour after at), k3 was never written.
		if err == nil && (len(got) != 1 || string(got["k1"]) != "v1b" || !found ||
			c.Principal != head.Principal || c.ALeg != head.ALeg || c.Session != head.Session || c.Revision != head.Revision ||
			string(c.Data) != string(head.Data) || !c.UpdatedAt.Equal(head.UpdatedAt)) {
			t.Errorf("GetLineageWithCapsule = %q, %+v, %v; want k1 and the head GetCapsule reads, %+v", got, c, found, head)
		}
		return err
	})
	step("GetLineageWithCapsule of no capsule", 1, func() error {
		got, _, found, err := s.GetLineageWithCapsule(ctx, "bob", []string{"k1"}, "a1")
		if err == nil && (len(got) != 0 || found) {
			t.Errorf("another principal's GetLineageWithCapsule = %q, found %v; want nothing", got, found)
		}
		return err
	})
	var entries []backend.LedgerEntry
	for _, id := range []string{"e1", "e2", "e3", "e1"} {
		entries = append(entries, backend.LedgerEntry{ID: id, Time: at, Principal: "alice", Kind: "primary", Model: "m", InputTokens: 1})
	}
	step("AppendLedger", 1, func() error { return s.AppendLedger(ctx, entries) })
	step("Reserve", 1, func() error { _, err := s.Reserve(ctx, "budget", 5, 10); return err })
	// BEGIN, two holds, the reservation row, COMMIT.
	step("PutReservation", 5, func() error {
		_, err := s.PutReservation(ctx, backend.Reservation{ID: "r1", Expires: at.Add(time.Minute),
			Holds: []backend.Hold{{Key: "b1", Amount: 1, Limit: 10}, {Key: "b2", Amount: 1, Limit: 10}}})
		return err
	})
	// BEGIN, the refused hold, ROLLBACK.
	step("PutReservation refused", 3, func() error {
		ok, err := s.PutReservation(ctx, backend.Reservation{ID: "r2", Expires: at.Add(time.Minute),
			Holds: []backend.Hold{{Key: "b1", Amount: 100, Limit: 10}}})
		if ok {
			t.Errorf("PutReservation over the limit was accepted")
		}
		return err
	})
	// No budget adjusted (the ledger's usual batch): one statement.
	step("SettleReservations", 1, func() error {
		return s.SettleReservations(ctx, []backend.Settlement{
			{ReservationID: "r1", Entry: backend.LedgerEntry{ID: "s1", Time: at, Principal: "alice", Kind: "primary", Model: "m"}},
			{Entry: backend.LedgerEntry{ID: "s2", Time: at, Principal: "alice", Kind: "primary", Model: "m"}},
			{ReservationID: "r9", Entry: backend.LedgerEntry{ID: "s3", Time: at, Principal: "alice", Kind: "primary", Model: "m"}},
		})
	})
	if left, err := s.PendingReservations(ctx, at.Add(time.Hour), 0); err != nil || len(left) != 0 {
		t.Errorf("reservations left after settling r1 = %+v, %v", left, err)
	}
	if _, err := s.PutReservation(ctx, backend.Reservation{ID: "r3", Expires: at.Add(time.Minute), Holds: []backend.Hold{{Key: "b1", Amount: 1, Limit: 10}}}); err != nil {
		t.Fatal(err)
	}
	// BEGIN, the reservations' delete, two adjustments, the ledger rows, COMMIT.
	step("SettleReservations adjusting budgets", 6, func() error {
		return s.SettleReservations(ctx, []backend.Settlement{
			{ReservationID: "r3", Entry: backend.LedgerEntry{ID: "s4", Time: at, Principal: "alice", Kind: "primary", Model: "m"},
				Adjust: []backend.Hold{{Key: "b1", Amount: -1}, {Key: "b2", Amount: 1}}},
			{Entry: backend.LedgerEntry{ID: "s5", Time: at, Principal: "alice", Kind: "primary", Model: "m"}},
		})
	})
	step("PurgeCapsules", 0, func() error { _, err := s.PurgeCapsules(ctx, "alice", ""); return err })
	step("Ping", 1, func() error { return s.Ping(ctx) })
	if len(reported) == 0 {
		t.Fatal("OnRoundTrip was never called")
	}
}

// TestPutLineagesBeyondOneStatement: more puts than one statement can bind
// are written in one transaction of several statements, all of them kept.
func TestPutLineagesBeyondOneStatement(t *testing.T) {
	url := storetest.PostgresURL(t)
	schema := storetest.FreshSchema(t, url, "tether_test")
	var mu sync.Mutex
	var reported []string
	s, err := Open(t.Context(), url, Options{Schema: schema, OnRoundTrip: func(sql string) {
		mu.Lock()
		reported = append(reported, sql)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer func() { _ = s.Close() }()
	n := maxParams/4 + 1
	puts := make([]backend.LineagePut, n)
	for i := range puts {
		puts[i] = backend.LineagePut{Key: "k" + strconv.Itoa(i), Value: []byte("v" + strconv.Itoa(i))}
	}
	mu.Lock()
	reported = nil
	mu.Unlock()
	if err := s.PutLineages(t.Context(), "alice", puts); err != nil {
		t.Fatalf("PutLineages of %d: %v", n, err)
	}
	mu.Lock()
	if len(reported) != 4 || reported[0] != "BEGIN" || reported[3] != "COMMIT" {
		t.Errorf("PutLineages of %d made %d round trips, want BEGIN, two statements, COMMIT", n, len(reported))
	}
	mu.Unlock()
	got, err := s.GetLineage(t.Context(), "alice", []string{"k0", "k" + strconv.Itoa(n-1)})
	if err != nil || string(got["k0"]) != "v0" || string(got["k"+strconv.Itoa(n-1)]) != "v"+strconv.Itoa(n-1) {
		t.Errorf("GetLineage after the split write = %q, %v", got, err)
	}
}
