package store_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/store"
	"github.com/tether-dev/tether/internal/store/memstore"
	"github.com/tether-dev/tether/internal/store/pgstore"
	"github.com/tether-dev/tether/internal/store/sqlitestore"
)

func TestOpenPicksBackend(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		url      string
		want     string
		fileMade string
	}{
		{url: "memory:", want: "memory"},
		{url: "sqlite://" + filepath.Join(dir, "a.db"), want: "sqlite", fileMade: filepath.Join(dir, "a.db")},
		{url: "sqlite:" + filepath.Join(dir, "b.db"), want: "sqlite", fileMade: filepath.Join(dir, "b.db")},
		{url: filepath.Join(dir, "nested", "c.db"), want: "sqlite", fileMade: filepath.Join(dir, "nested", "c.db")},
	}
	for _, c := range cases {
		s, err := store.Open(t.Context(), c.url)
		if err != nil {
			t.Errorf("Open(%q): %v", c.url, err)
			continue
		}
		var got string
		switch s.(type) {
		case *memstore.Store:
			got = "memory"
		case *sqlitestore.Store:
			got = "sqlite"
		case *pgstore.Store:
			got = "postgres"
		}
		if got != c.want {
			t.Errorf("Open(%q) = %T, want the %s backend", c.url, s, c.want)
		}
		if err := s.PutCapsule(t.Context(), store.CapsuleRecord{Principal: "p", ALeg: "a", Revision: 1, Data: []byte("{}")}, 0); err != nil {
			t.Errorf("Open(%q): PutCapsule: %v", c.url, err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("Open(%q): Close: %v", c.url, err)
		}
		if c.fileMade != "" {
			fi, err := os.Stat(c.fileMade)
			if err != nil {
				t.Errorf("Open(%q) made no file at %s: %v", c.url, c.fileMade, err)
				continue
			}
			if perm := fi.Mode().Perm(); perm&0o077 != 0 {
				t.Errorf("database file %s has mode %v, want it private to the user", c.fileMade, perm)
			}
		}
	}
}

func TestOpenRejectsUnknownURL(t *testing.T) {
	for _, url := range []string{"", "mysql://root:s3cret@db/tether", "redis://x", "sqlite:", "tether.sqlite"} {
		_, err := store.Open(t.Context(), url)
		if !errors.Is(err, store.ErrInvalid) {
			t.Errorf("Open(%q): err = %v, want ErrInvalid", url, err)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Open(%q) error leaks the URL's password: %v", url, err)
		}
	}
}

func TestDefaultSQLitePath(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/var/state")
	if got, want := store.DefaultSQLitePath(), "/var/state/tether/tether.db"; got != want {
		t.Errorf("with XDG_STATE_HOME: DefaultSQLitePath() = %q, want %q", got, want)
	}
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", "/home/ada")
	if got, want := store.DefaultSQLitePath(), "/home/ada/.local/state/tether/tether.db"; got != want {
		t.Errorf("without XDG_STATE_HOME: DefaultSQLitePath() = %q, want %q", got, want)
	}
	// The XDG spec says relative values are invalid and must be ignored.
	t.Setenv("XDG_STATE_HOME", "relative/state")
	if got, want := store.DefaultSQLitePath(), "/home/ada/.local/state/tether/tether.db"; got != want {
		t.Errorf("with a relative XDG_STATE_HOME: DefaultSQLitePath() = %q, want %q", got, want)
	}
}
