package sqlitestore

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/store/backend"
)

// writeTurns commits n transactions of two lineage rows each, as turns do.
func writeTurns(t *testing.T, s *Store, n int) {
	t.Helper()
	exp := time.Now().Add(time.Hour)
	for i := range n {
		err := s.PutLineages(t.Context(), "alice", []backend.LineagePut{
			{Key: fmt.Sprintf("r:%08d", i), Value: []byte(`{"a":"al_1","n":1}`), Expires: exp},
			{Key: "a:al_1", Value: fmt.Appendf(nil, `{"a":"al_1","n":%d}`, i), Expires: exp},
		})
		if err != nil {
			t.Fatalf("PutLineages: %v", err)
		}
	}
}

func walSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatalf("stat log: %v", err)
	}
	return fi.Size()
}

// The log is copied into the database file by the checkpointer, not by
// the commits: with it stopped the log only grows, well past the 1000
// frames at which a committing writer would have copied it and started
// over by SQLite's default, and with it running the log keeps restarting.
func TestCheckpointsLeaveTheWriter(t *testing.T) {
	const turns = 1600 // 3–4 frames each
	const frame = 4096 + 24

	path := filepath.Join(t.TempDir(), "tether.db")
	s := openTemp(t, path)
	defer s.Close()
	if err := s.ckpt.stop(); err != nil {
		t.Fatal(err)
	}
	writeTurns(t, s, turns)
	grown := walSize(t, path)
	if grown < 2000*frame {
		t.Fatalf("with no checkpointer the log reached %d frames in %d commits: the writer checkpointed it", grown/frame, turns)
	}

	path2 := filepath.Join(t.TempDir(), "tether.db")
	s2 := openTemp(t, path2)
	defer s2.Close()
	writeTurns(t, s2, turns)
	if got := walSize(t, path2); got > grown/2 {
		t.Errorf("with the checkpointer the log reached %d frames in %d commits, without it %d: it did not restart", got/frame, turns, grown/frame)
	}
}
