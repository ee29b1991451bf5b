package sqlitestore

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/store/backend"
)

func plainSettlement(id string) []backend.Settlement {
	return []backend.Settlement{{Entry: backend.LedgerEntry{ID: id, Time: time.Now(), Principal: "alice", Account: "alice", Kind: "primary", Model: "m", InputTokens: 10}}}
}

func ledgerIDs(t *testing.T, s *Store) []string {
	t.Helper()
	es, err := s.LedgerEntries(t.Context(), "alice", 0)
	if err != nil {
		t.Fatalf("LedgerEntries: %v", err)
	}
	var ids []string
	for _, e := range es {
		ids = append(ids, e.ID)
	}
	slices.Sort(ids)
	return ids
}

// A call no budget applies to is settled with no transaction of its own:
// the row is journaled and rides along with the next one. Reading the
// ledger writes it first, so it is read once the settlement has returned.
func TestJournaledSettlementIsReadOnceReturned(t *testing.T) {
	s := openTemp(t, filepath.Join(t.TempDir(), "tether.db"))
	defer s.Close()
	s.group.wait = time.Hour // nothing else starts a transaction
	before := s.txns.Load()
	if err := s.SettleReservations(t.Context(), plainSettlement("call-1")); err != nil {
		t.Fatal(err)
	}
	if n := s.txns.Load() - before; n != 0 {
		t.Fatalf("a plain settlement waited for %d transactions, want none", n)
	}
	if ids := ledgerIDs(t, s); !slices.Equal(ids, []string{"call-1"}) {
		t.Fatalf("ledger after the settlement returned = %v, want [call-1]", ids)
	}
	// A settlement that moves a counter is written before it returns.
	before = s.txns.Load()
	st := plainSettlement("call-2")
	st[0].Adjust = []backend.Hold{{Key: "principal:alice", Amount: 5}}
	if err := s.SettleReservations(t.Context(), st); err != nil {
		t.Fatal(err)
	}
	if n := s.txns.Load() - before; n != 1 {
		t.Fatalf("a settlement moving a counter took %d transactions, want 1", n)
	}
}

const journalCrashEnv = "TETHER_SQLITE_JOURNAL_CRASH_DB"

// TestJournalHelperProcess is the child of TestJournalSurvivesAKill: it
// settles calls with no transaction ever started (the ride-along wait is
// an hour) and prints each id once SettleReservations has returned.
func TestJournalHelperProcess(t *testing.T) {
	path := os.Getenv(journalCrashEnv)
	if path == "" {
		return // not started as the child
	}
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(2)
	}
	s.group.wait = time.Hour
	for i := 1; ; i++ {
		id := fmt.Sprintf("call-%06d", i)
		if err := s.SettleReservations(t.Context(), plainSettlement(id)); err != nil {
			fmt.Fprintln(os.Stderr, "settle:", err)
			os.Exit(2)
		}
		if _, err := fmt.Println(id); err != nil {
			os.Exit(3)
		}
	}
}

// A process killed with SIGKILL after settling calls only into the journal
// loses none of them: the next Open writes them, and removes the journal.
func TestJournalSurvivesAKill(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	path := filepath.Join(t.TempDir(), "tether.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestJournalHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), journalCrashEnv+"="+path)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	const killAfter = 3000 // past a segment's size: the journal has rotated
	var reported []string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if len(sc.Text()) != len("call-000000") {
			continue // test framework chatter
		}
		reported = append(reported, sc.Text())
		if len(reported) == killAfter {
			if err := cmd.Process.Kill(); err != nil {
				t.Fatalf("kill child: %v", err)
			}
		}
	}
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.Exited() || len(reported) < killAfter {
		t.Fatalf("child reported %d settlements and ended with %v, want at least %d and a kill", len(reported), err, killAfter)
	}
	if ns, _ := segments(path); len(ns) < 2 {
		t.Fatalf("the killed process left %d journal segments, want the rotated ones", len(ns))
	}

	s := openTemp(t, path)
	defer s.Close()
	got := map[string]bool{}
	for _, id := range ledgerIDs(t, s) {
		got[id] = true
	}
	for _, id := range reported {
		if !got[id] {
			t.Fatalf("%s was settled before the kill and is not in the ledger after it (%d of %d present)", id, len(got), len(reported))
		}
	}
	if ns, _ := segments(path); len(ns) != 1 {
		t.Errorf("after the replay %d journal segments are left, want only the new one", len(ns))
	}
}

// The journal is replayed whatever it holds: a row already written (the
// process died before the segment was removed) once, and a frame torn by a
// power cut ends its segment.
func TestJournalReplay(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tether.db")
	s := openTemp(t, path)
	if err := s.AppendLedger(t.Context(), []backend.LedgerEntry{plainSettlement("written")[0].Entry}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	j, err := newJournal(path, 7)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"written", "journaled"} {
		if _, err := j.append(plainSettlement(id)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := j.append(plainSettlement("torn")); err != nil {
		t.Fatal(err)
	}
	if err := j.close(); err != nil { // keeps the segment, cut to its batches
		t.Fatal(err)
	}
	fi, err := os.Stat(segmentPath(path, 7))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(segmentPath(path, 7), fi.Size()-3); err != nil {
		t.Fatal(err)
	}

	s = openTemp(t, path)
	defer s.Close()
	if ids := ledgerIDs(t, s); !slices.Equal(ids, []string{"journaled", "written"}) {
		t.Fatalf("ledger after the replay = %v, want [journaled written]", ids)
	}
	if ns, _ := segments(path); !slices.Equal(ns, []uint64{8}) {
		t.Errorf("segments after the replay = %v, want the new one, 8", ns)
	}
}

// A second store on the same file (the capsule inspection command beside a
// running server) does not own the journal: it leaves the owner's
// segments alone and settles the synchronous way.
func TestJournalHasOneOwner(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tether.db")
	owner := openTemp(t, path)
	defer owner.Close()
	owner.group.wait = time.Hour
	if err := owner.SettleReservations(t.Context(), plainSettlement("owner-1")); err != nil {
		t.Fatal(err)
	}
	ns, _ := segments(path)

	other := openTemp(t, path)
	if other.jr != nil {
		t.Fatal("a second store on the file owns the journal too")
	}
	before := other.txns.Load()
	if err := other.SettleReservations(t.Context(), plainSettlement("other-1")); err != nil {
		t.Fatal(err)
	}
	if n := other.txns.Load() - before; n != 1 {
		t.Errorf("the second store's settlement took %d transactions, want 1", n)
	}
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	if after, _ := segments(path); !slices.Equal(after, ns) {
		t.Fatalf("the owner's segments %v became %v when a second store opened and closed", ns, after)
	}
	if ids := ledgerIDs(t, owner); !slices.Equal(ids, []string{"other-1", "owner-1"}) {
		t.Fatalf("ledger = %v, want both", ids)
	}
}

// Whatever a segment file holds (a torn write, another program's bytes),
// reading it never panics and yields only batches that are valid plain
// ledger rows: a crafted file cannot move a counter on replay.
func FuzzReadSegment(f *testing.F) {
	path := filepath.Join(f.TempDir(), "tether.db")
	j, err := newJournal(path, 1)
	if err != nil {
		f.Fatal(err)
	}
	for _, id := range []string{"a", "b"} {
		if _, err := j.append(plainSettlement(id)); err != nil {
			f.Fatal(err)
		}
	}
	_ = j.close()
	good, err := os.ReadFile(segmentPath(path, 1))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0})
	if n := len(parseSegment(good)); n != 2 {
		f.Fatalf("the journal's own segment reads as %d batches, want 2", n)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, b := range parseSegment(data) {
			if !journalable(b) || backend.CheckSettlements(b) != nil {
				t.Fatalf("a segment yielded a batch that is not plain valid ledger rows: %+v", b)
			}
		}
	})
}
