// Package store is Tether's durable state: continuity capsules
// (compare-and-swap by revision, recent history per A-leg), lineage records,
// the usage ledger and budget counters. Capsules are opaque bytes here.
//
// The contract lives in package backend (re-exported below under the same
// names); the backends are memstore (tests), sqlitestore (embedded default)
// and pgstore (shared by replicas). Open picks one from a URL.
package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tether-dev/tether/internal/store/backend"
	"github.com/tether-dev/tether/internal/store/memstore"
	"github.com/tether-dev/tether/internal/store/pgstore"
	"github.com/tether-dev/tether/internal/store/sqlitestore"
)

// The contract, re-exported from package backend.
type (
	Store         = backend.Store
	CapsuleRecord = backend.CapsuleRecord
	LedgerEntry   = backend.LedgerEntry
	UsageRow      = backend.UsageRow
	OutboxEntry   = backend.OutboxEntry
	Reservation   = backend.Reservation
	Settlement    = backend.Settlement
	Hold          = backend.Hold
)

// Sentinel errors; test with errors.Is.
var (
	ErrNotFound = backend.ErrNotFound
	ErrConflict = backend.ErrConflict
	ErrInvalid  = backend.ErrInvalid
)

// HistoryLimit is the number of most recent revisions kept per A-leg.
const HistoryLimit = backend.HistoryLimit

// Kind is the backend a store URL names.
type Kind int

// Store kinds.
const (
	Memory Kind = iota + 1
	SQLite
	Postgres
)

// Location is a parsed store URL: its kind, and for SQLite the file path
// (with a leading ~/ expanded).
type Location struct {
	Kind Kind
	Path string
}

// ParseURL reads a store URL:
//
//	memory:                              in-memory, lost on Close
//	sqlite:///var/lib/tether/tether.db   SQLite file (sqlite:relative.db also works)
//	/path/to/tether.db                   SQLite file (any path ending in .db)
//	postgres://user@host:5432/db?…       PostgreSQL (postgresql:// too)
//
// Errors never repeat the URL, which may hold a password.
func ParseURL(url string) (Location, error) {
	var path string
	switch {
	case url == "memory:" || url == "memory://" || url == "memory":
		return Location{Kind: Memory}, nil
	case strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://"):
		return Location{Kind: Postgres}, nil
	case strings.HasPrefix(url, "sqlite:"):
		path = strings.TrimPrefix(strings.TrimPrefix(url, "sqlite:"), "//")
	case strings.HasSuffix(url, ".db") && !strings.Contains(url, "://"):
		path = url
	default:
		scheme, _, _ := strings.Cut(url, ":")
		return Location{}, fmt.Errorf("open store: unsupported store url (scheme %q); use memory:, sqlite:///path.db, a path ending in .db, or postgres://: %w", scheme, ErrInvalid)
	}
	if path == "" {
		return Location{}, fmt.Errorf("open store: sqlite url without a path: %w", ErrInvalid)
	}
	if strings.HasPrefix(path, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return Location{}, fmt.Errorf("open store: expand ~: %w", err)
		}
		path = filepath.Join(home, path[2:])
	}
	return Location{Kind: SQLite, Path: path}, nil
}

// Open opens the store named by url (see ParseURL).
func Open(ctx context.Context, url string) (Store, error) {
	loc, err := ParseURL(url)
	if err != nil {
		return nil, err
	}
	switch loc.Kind {
	case Memory:
		return memstore.New(memstore.Options{}), nil
	case Postgres:
		return pgstore.Open(ctx, url, pgstore.Options{})
	}
	return sqlitestore.Open(ctx, loc.Path, sqlitestore.Options{})
}

// DefaultSQLitePath is where the embedded store lives unless configured:
// $XDG_STATE_HOME/tether/tether.db, else ~/.local/state/tether/tether.db
// (relative to the working directory if no home directory is known).
func DefaultSQLitePath() string {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "tether", "tether.db")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return filepath.Join(".local", "state", "tether", "tether.db")
	}
	return filepath.Join(home, ".local", "state", "tether", "tether.db")
}
