package capsule

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tether-dev/tether/internal/tokens"
)

// benchMaxTokens is the default max_capsule_tokens.
const benchMaxTokens = 2500

// bigCapsule grows a capsule until its block is about benchMaxTokens.
func bigCapsule(tb testing.TB) *Capsule {
	tb.Helper()
	c := New("s", "a")
	turn := 0
	for i := 0; tokens.Estimate(Render(c)) < benchMaxTokens-100; i++ {
		d := delta(turn, turn+1, turn)
		ops := []Op{
			{Op: OpAddDecision, Statement: fmt.Sprintf("decision %d: keep module %d behind its interface", i, i), Rationale: "keeps the blast radius small", Turn: turn},
			{Op: OpAddConstraint, Text: fmt.Sprintf("constraint %d: no allocations on hot path %d", i, i), Turn: turn},
		}
		if i%3 == 0 {
			ops = append(ops, Op{Op: OpRejectAlternative, Text: fmt.Sprintf("alternative %d", i), Reason: "rejected in review", Turn: turn})
		}
		if i%4 == 0 {
			ops = append(ops, Op{Op: OpSupersedeDecision, ID: fmt.Sprintf("D%d", i/2+1), Statement: fmt.Sprintf("revised decision %d", i), Turn: turn})
		}
		var err error
		if c, err = Apply(c, ops, d, fmt.Sprintf("tx-%d", i)); err != nil {
			tb.Fatal(err)
		}
		turn += 2
	}
	return c
}

func BenchmarkApplyRender(b *testing.B) {
	c := bigCapsule(b)
	b.Logf("capsule: %d tokens, %d decisions", tokens.Estimate(Render(c)), len(c.Decisions))
	turn := c.Watermark.Turn + 1000
	d := delta(turn, turn+1, turn)
	ops := []Op{
		{Op: OpAddDecision, Statement: "benchmark decision", Turn: turn},
		{Op: OpSupersedeDecision, ID: c.ActiveDecisions()[0].ID, Statement: "benchmark replacement", Turn: turn},
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		next, err := Apply(c, ops, d, fmt.Sprint("bench-", i))
		if err != nil {
			b.Fatal(err)
		}
		_ = Render(next)
	}
}

func BenchmarkBound(b *testing.B) {
	c := bigCapsule(b)
	b.ReportAllocs()
	for b.Loop() {
		Bound(c, benchMaxTokens/2)
	}
}

// BenchmarkCountOpen counts carried blocks in 2 MiB of real agent requests
// (the compaction captures), as preservation does on every turn: the
// case-insensitive count against the case-sensitive bytes.Count it
// replaced.
//
//	go test -run '^$' -bench CountOpen -benchtime 200x ./internal/capsule/
func BenchmarkCountOpen(b *testing.B) {
	files, _ := filepath.Glob("../compaction/testdata/*.jsonl")
	var body []byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		body = append(body, data...)
	}
	if len(body) < 2<<20 {
		b.Skipf("captures hold %d bytes, want 2 MiB", len(body))
	}
	body = body[:2<<20]
	b.Run("CountOpen", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			CountOpen(body)
		}
	})
	b.Run("bytes.Count", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			bytes.Count(body, []byte(openMark))
		}
	})
}
