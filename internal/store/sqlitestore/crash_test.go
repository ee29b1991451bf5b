package sqlitestore_test

import (
	"bufio"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/store/backend"
	"github.com/tether-dev/tether/internal/store/sqlitestore"
)

const crashEnv = "TETHER_SQLITE_CRASH_DB"

func crashData(rev int64) []byte {
	// Padding makes the WAL grow past its auto-checkpoint size, so a kill can
	// land during a checkpoint too.
	return fmt.Appendf(nil, `{"rev":%d,"pad":%q}`, rev, strings.Repeat("x", 3000))
}

// TestHelperProcess is the child of TestCrashKeepsCommittedRevisions: it
// commits revisions in a loop and prints each one after its commit returns.
func TestHelperProcess(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		return // not started as the child
	}
	s, err := sqlitestore.Open(t.Context(), path, sqlitestore.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(2)
	}
	for rev := int64(1); rev <= 1_000_000; rev++ {
		rec := backend.CapsuleRecord{Principal: "alice", Session: "s", ALeg: "a1", Revision: rev, Data: crashData(rev)}
		if err := s.PutCapsule(t.Context(), rec, rev-1); err != nil {
			fmt.Fprintln(os.Stderr, "put:", err)
			os.Exit(2)
		}
		if err := s.AppendLedger(t.Context(), []backend.LedgerEntry{{ID: "call-" + strconv.FormatInt(rev, 10), Principal: "alice", Kind: "primary"}}); err != nil {
			fmt.Fprintln(os.Stderr, "ledger:", err)
			os.Exit(2)
		}
		if _, err := fmt.Println(rev); err != nil {
			os.Exit(3) // the parent went away
		}
	}
	os.Exit(0)
}

// TestCrashKeepsCommittedRevisions kills a writer process with SIGKILL in the
// middle of its work and checks that every revision it reported committed is
// still there and that the database opens cleanly.
func TestCrashKeepsCommittedRevisions(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	path := filepath.Join(t.TempDir(), "crash.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnv+"="+path)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	const killAfter = 300
	var reported []int64
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		rev, err := strconv.ParseInt(sc.Text(), 10, 64)
		if err != nil {
			continue // test framework chatter
		}
		reported = append(reported, rev)
		if len(reported) == killAfter {
			if err := cmd.Process.Kill(); err != nil {
				t.Fatalf("kill child: %v", err)
			}
		}
	}
	err = cmd.Wait()
	if len(reported) < killAfter {
		t.Fatalf("child reported %d revisions before exiting (%v), want at least %d", len(reported), err, killAfter)
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.Exited() {
		t.Fatalf("child was not killed by a signal: %v", err)
	}
	last := reported[len(reported)-1]

	s, err := sqlitestore.Open(t.Context(), path, sqlitestore.Options{})
	if err != nil {
		t.Fatalf("reopen after crash: %v", err)
	}
	defer s.Close()
	head, err := s.GetCapsule(t.Context(), "alice", "a1")
	if err != nil {
		t.Fatalf("GetCapsule after crash: %v", err)
	}
	// The child may have committed one more revision than it printed.
	if head.Revision != last && head.Revision != last+1 {
		t.Fatalf("head revision after crash = %d, child reported %d committed", head.Revision, last)
	}
	if string(head.Data) != string(crashData(head.Revision)) {
		t.Errorf("head revision %d holds the wrong data", head.Revision)
	}
	hist, err := s.CapsuleHistory(t.Context(), "alice", "a1", 0)
	if err != nil {
		t.Fatalf("CapsuleHistory: %v", err)
	}
	present := map[int64]string{}
	for _, h := range hist {
		present[h.Revision] = string(h.Data)
	}
	for _, rev := range reported {
		if rev <= head.Revision-backend.HistoryLimit {
			continue // pruned by design
		}
		if data, ok := present[rev]; !ok || data != string(crashData(rev)) {
			t.Errorf("revision %d was reported committed but is missing or wrong after the crash", rev)
		}
	}
	entries, err := s.LedgerEntries(t.Context(), "alice", 0)
	if err != nil {
		t.Fatalf("LedgerEntries: %v", err)
	}
	if int64(len(entries)) < last {
		t.Errorf("ledger holds %d entries after the crash, child reported %d committed", len(entries), last)
	}
	// The store keeps working.
	if err := s.PutCapsule(t.Context(), backend.CapsuleRecord{Principal: "alice", ALeg: "a1", Revision: head.Revision + 1, Data: []byte("{}")}, head.Revision); err != nil {
		t.Errorf("PutCapsule after crash: %v", err)
	}

	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var check string
	if err := db.QueryRowContext(t.Context(), "PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check after crash = %q, %v; want ok", check, err)
	}
	t.Logf("child killed after reporting revision %d; head revision %d", last, head.Revision)
}
