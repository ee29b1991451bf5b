package sqlitestore_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/store/backend"
	"github.com/tether-dev/tether/internal/store/sqlitestore"
)

// The writes of one proxied turn with continuity on, as `tether serve`
// makes them on its default store (a fresh file, not :memory:): the
// lineage commit (the request's record and its A-leg head, two rows) and
// the ledger settlement (one ledger row; with budgets, two counters too).
//
//	go test -run '^$' -bench . -count 5 ./internal/store/sqlitestore

func benchStore(b *testing.B) *sqlitestore.Store {
	s, err := sqlitestore.Open(b.Context(), filepath.Join(b.TempDir(), "tether.db"), sqlitestore.Options{})
	if err != nil {
		b.Fatalf("Open: %v", err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s
}

// benchLineage is the lineage commit of turn n of conversation c: the
// request's record under a fresh key and the A-leg head, upserted. Keys
// are MACs in production (session.Resolver.key), so they land anywhere in
// the table's index: here too.
func benchLineage(c, n int64) []backend.LineagePut {
	exp := time.Now().Add(30 * 24 * time.Hour)
	head, prev := benchKey("r", c, n), benchKey("r", c, n-1)
	return []backend.LineagePut{
		{Key: head, Value: fmt.Appendf(nil, `{"a":"al_%016x","s":"se_%016x","n":%d,"t":%d}`, c, c, 2*n, 2*n), Expires: exp},
		{Key: benchKey("a", c, 0), Value: fmt.Appendf(nil,
			`{"a":"al_%016x","s":"se_%016x","n":%d,"t":%d,"h":%q,"b":%q,"k":"","ag":"claude-code","at":%d}`,
			c, c, 2*n, 2*n, head, prev, time.Now().Unix()), Expires: exp},
	}
}

// benchKey is a lineage key of the production shape: kind, then a MAC.
func benchKey(kind string, c, n int64) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s/%d/%d", kind, c, n))
	return kind + ":" + base64.RawURLEncoding.EncodeToString(sum[:16])
}

// benchSettlement is the settlement of call n as the ledger writes it: no
// reservation row; with budgets, the counters move by the whole amount.
func benchSettlement(c, n int64, budgets bool) []backend.Settlement {
	id := backend.NewCallID(time.Now())
	st := backend.Settlement{Entry: backend.LedgerEntry{
		ID: id, Time: time.Now(), Principal: "alice", Account: "alice", Session: fmt.Sprintf("se_%016x", c),
		ALeg: fmt.Sprintf("al_%016x", c), BLeg: id, Kind: "primary", Route: "anthropic", Provider: "anthropic",
		Model: "claude-sonnet-4-5", InputTokens: 51200, OutputTokens: 800, CacheReadTokens: 48000,
		CostMicros: 31_000, Status: 200, DurationMS: 4200,
	}}
	if budgets {
		st.Adjust = []backend.Hold{{Key: "principal:alice:2026-12-04", Amount: 52000}, {Key: "account:alice:2026-12", Amount: 31_000}}
	}
	return []backend.Settlement{st}
}

// reportCPU starts measuring the process's CPU time; the function it
// returns reports it per operation (cpu-ns/op): on a shared machine, and
// with callers waiting on each other, the cost that wall time hides.
func reportCPU(b *testing.B) func() {
	start := processCPU()
	return func() {
		if d := processCPU() - start; d > 0 && b.N > 0 {
			b.ReportMetric(float64(d.Nanoseconds())/float64(b.N), "cpu-ns/op")
		}
	}
}

// BenchmarkTurnWrites measures one turn's writes (lineage, settle, or both
// as a turn makes them), from one caller (seq) and from many at once
// (parallel: 4 callers per core, as concurrent clients).
func BenchmarkTurnWrites(b *testing.B) {
	type op func(ctx context.Context, s *sqlitestore.Store, c, n int64) error
	lineage := func(ctx context.Context, s *sqlitestore.Store, c, n int64) error {
		return s.PutLineages(ctx, "alice", benchLineage(c, n))
	}
	settle := func(budgets bool) op {
		return func(ctx context.Context, s *sqlitestore.Store, c, n int64) error {
			return s.SettleReservations(ctx, benchSettlement(c, n, budgets))
		}
	}
	turn := func(ctx context.Context, s *sqlitestore.Store, c, n int64) error {
		if err := lineage(ctx, s, c, n); err != nil {
			return err
		}
		return settle(false)(ctx, s, c, n)
	}
	// A continuation's lineage queued (CommitBehind) and its settlement
	// journaled: the turn waits for no transaction, both ride along with
	// the next one. ns/op is what the turn waits; cpu-ns/op counts the
	// transactions too (each run ends by writing what is queued).
	behind := func(ctx context.Context, s *sqlitestore.Store, c, n int64) error {
		s.EnqueueLineages("alice", benchLineage(c, n))
		return settle(false)(ctx, s, c, n)
	}
	// flush writes what is queued (reading the ledger does) before the
	// CPU is counted.
	flush := func(b *testing.B, s *sqlitestore.Store) {
		if _, err := s.LedgerEntries(b.Context(), "alice", 1); err != nil {
			b.Fatal(err)
		}
	}
	for _, bc := range []struct {
		name string
		op   op
	}{
		{"lineage", lineage},
		{"settle", settle(false)},
		{"settle-budgets", settle(true)},
		{"turn", turn},
		{"turn-behind", behind},
	} {
		b.Run(bc.name+"/seq", func(b *testing.B) {
			s := benchStore(b)
			b.ReportAllocs()
			defer reportCPU(b)()
			var n int64
			for b.Loop() {
				n++
				if err := bc.op(b.Context(), s, 1, n); err != nil {
					b.Fatal(err)
				}
			}
			flush(b, s)
		})
		b.Run(bc.name+"/parallel", func(b *testing.B) {
			s := benchStore(b)
			b.ReportAllocs()
			b.SetParallelism(4)
			defer reportCPU(b)()
			var conv atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				c := conv.Add(1)
				var n int64
				for pb.Next() {
					n++
					if err := bc.op(b.Context(), s, c, n); err != nil {
						b.Error(err)
						return
					}
				}
			})
			flush(b, s)
		})
	}
}

// BenchmarkCommitLatency is the latency of a turn's synchronous writes (a
// lineage commit, then a settlement that moves budget counters) from one
// caller who pauses 200 µs between turns, as at one client: the
// percentiles show the commits that also copied the log into the database
// file (the checkpoints).
//
//	go test -run '^$' -bench CommitLatency -benchtime 6000x ./internal/store/sqlitestore/
func BenchmarkCommitLatency(b *testing.B) {
	s := benchStore(b)
	var took []time.Duration
	var n int64
	for b.Loop() {
		n++
		start := time.Now()
		if err := s.PutLineages(b.Context(), "alice", benchLineage(1, n)); err != nil {
			b.Fatal(err)
		}
		if err := s.SettleReservations(b.Context(), benchSettlement(1, n, true)); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
		time.Sleep(200 * time.Microsecond)
	}
	slices.Sort(took)
	at := func(q float64) float64 { return float64(took[int(q*float64(len(took)-1))].Microseconds()) }
	b.ReportMetric(at(0.5), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
	b.ReportMetric(at(0.999), "p99.9-µs")
	b.ReportMetric(float64(took[len(took)-1].Microseconds()), "max-µs")
}
