package sessions

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestNoDecisionLostUnderLoad is the bounded load test: 200 concurrent
// Claude Code sessions, two compactions each, on the default SQLite store.
// Before the fix, 44 % of compacted sessions lost a marked decision at
// this concurrency (the extraction queue overflowed and the delta was never
// offered again). Every decision must be in every post-compaction block.
func TestNoDecisionLostUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	o := Options{Sessions: 200, Cycles: 2, Decisions: 2, PadBytes: 4000, Dir: t.TempDir()}
	if raceEnabled {
		// Two decisions still: the second must not replace the first.
		o.Cycles, o.Decisions, o.PadBytes = 1, 2, 0
	}
	want := o.Sessions * o.Decisions * o.Cycles * (o.Cycles + 1) / 2
	logPath := filepath.Join(t.TempDir(), "tether.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	o.Log = logf
	rep, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s(took %s)", rep.Markdown(), rep.Took.Round(time.Millisecond))
	if rep.Decisions != want {
		t.Fatalf("%d decisions checked, want %d", rep.Decisions, want)
	}
	if rep.Lost != 0 {
		t.Errorf("%d of %d decisions missing from post-compaction blocks (%d sessions affected):\n%s", rep.Lost, rep.Decisions, rep.LostSessions, strings.Join(rep.Missing, "\n\n"))
		logs, _ := os.ReadFile(logPath)
		for _, l := range strings.Split(string(logs), "\n") {
			if strings.Contains(l, `"level":"WARN"`) || strings.Contains(l, `"level":"ERROR"`) {
				t.Log(l)
			}
		}
	}
}
