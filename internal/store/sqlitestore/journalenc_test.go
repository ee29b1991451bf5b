package sqlitestore

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/store/backend"
)

// The journal's encoder writes the bytes encoding/json writes for a
// batch, whatever its strings, numbers and time hold, so a segment reads
// back (readSegment uses encoding/json) as the batch appended.
func FuzzJournalEncoding(f *testing.F) {
	f.Add("call-1", "alice", "claude-sonnet-4", "anthropic/messages", int64(1_700_000_000_123_456_789), int64(1200), 200, false, true)
	f.Add("id<&>\"\\\n\u2028é\xff", "", "", "", int64(-1), int64(-5), -1, true, false)
	f.Add("y", "p", "m", "r", int64(300_000_000_000_000_000), int64(0), 0, false, false)
	f.Fuzz(func(t *testing.T, id, principal, model, route string, nanos, tokens int64, status int, emptyAdjust, local bool) {
		at := time.Unix(0, nanos).UTC()
		if local {
			at = at.In(time.FixedZone("x", 3600+7))
		}
		st := backend.Settlement{Entry: backend.LedgerEntry{
			ID: id, Time: at, Principal: principal, Account: route, Session: id + principal,
			ALeg: model, BLeg: id, Kind: "call", Route: route, Provider: principal, Model: model,
			InputTokens: tokens, OutputTokens: -tokens, CacheReadTokens: tokens / 3, CacheWriteTokens: tokens * 7,
			CostMicros: tokens ^ nanos, Status: status, DurationMS: nanos / 1e6,
		}}
		if emptyAdjust {
			st.Adjust = []backend.Hold{}
		}
		batch := []backend.Settlement{st, {Entry: backend.LedgerEntry{ID: model}}}
		want, wantErr := json.Marshal(batch)
		got, err := appendBatch(nil, batch)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("error %v, encoding/json's %v", err, wantErr)
		}
		if err == nil && !bytes.Equal(got, want) {
			t.Fatalf("encoded\n%s\nencoding/json writes\n%s", got, want)
		}
	})
}

// BenchmarkJournalAppend: one plain ledger row appended to the journal,
// as every call settled without a budget is.
func BenchmarkJournalAppend(b *testing.B) {
	j, err := newJournal(b.TempDir()+"/tether.db", 1)
	if err != nil {
		b.Fatal(err)
	}
	defer j.close()
	sts := plainSettlement("bench")
	sts[0].Entry.Time = time.Now().UTC()
	sts[0].Entry.Model, sts[0].Entry.Route = "claude-sonnet-4-5", "anthropic/messages"
	b.ReportAllocs()
	for b.Loop() {
		seg, err := j.append(sts)
		if err != nil {
			b.Fatal(err)
		}
		j.done(seg)
	}
}
