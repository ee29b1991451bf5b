// Package backend defines the contract every Tether store backend implements:
// the record types, the sentinel errors and the Store interface. It exists so
// that the backends (memstore, sqlitestore, pgstore) and the package store,
// which picks one of them from a URL, can share one definition without an
// import cycle. Callers use the aliases in package store.
package backend

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sentinel errors. Backends wrap them with context; test with errors.Is.
var (
	// ErrNotFound: the capsule (or other record) does not exist.
	ErrNotFound = errors.New("not found")
	// ErrConflict: a compare-and-swap lost; re-read and retry.
	ErrConflict = errors.New("revision conflict")
	// ErrInvalid: the arguments can never succeed (empty ids, a revision that
	// is not expectRevision+1, a negative amount, ...).
	ErrInvalid = errors.New("invalid argument")
)

// HistoryLimit is the number of most recent revisions kept per A-leg; older
// revisions are pruned when a new one is written.
const HistoryLimit = 16

// CapsuleRecord is one stored revision of an A-leg's capsule. Data is opaque
// to the store.
type CapsuleRecord struct {
	Principal string
	Session   string
	ALeg      string
	Revision  int64
	Data      []byte
	UpdatedAt time.Time
}

// LedgerEntry is one accounted upstream call (B-leg).
type LedgerEntry struct {
	ID               string
	Time             time.Time
	Principal        string
	Account          string
	Session          string
	ALeg             string
	BLeg             string
	Kind             string
	Route            string
	Provider         string
	Model            string
	InputTokens      int64
	OutputTokens     int64
	CacheReadTokens  int64
	CacheWriteTokens int64
	CostMicros       int64
	Status           int
	DurationMS       int64
}

// UsageRow aggregates ledger entries of one UTC day, kind and model.
type UsageRow struct {
	Day              string // YYYY-MM-DD, UTC
	Kind             string
	Model            string
	Calls            int64
	InputTokens      int64
	OutputTokens     int64
	CacheReadTokens  int64
	CacheWriteTokens int64
	CostMicros       int64
}

// Store is Tether's durable state. All times are stored in UTC with
// microsecond precision.
type Store interface {
	// GetCapsule returns the head revision of an A-leg's capsule, or
	// ErrNotFound.
	GetCapsule(ctx context.Context, principal, aLeg string) (CapsuleRecord, error)
	// PutCapsule writes rec as the new head if the current head revision is
	// expectRevision (0: the capsule must not exist). rec.Revision must be
	// expectRevision+1 (else ErrInvalid); a lost race returns ErrConflict.
	// A zero rec.UpdatedAt is set to the current time. Every revision is also
	// kept in the history, of which the last HistoryLimit are retained.
	PutCapsule(ctx context.Context, rec CapsuleRecord, expectRevision int64) error
	// CapsuleHistory returns retained revisions, newest first; limit <= 0
	// returns all of them.
	CapsuleHistory(ctx context.Context, principal, aLeg string, limit int) ([]CapsuleRecord, error)
	// ListCapsules returns head revisions ordered by principal then A-leg;
	// principal "" lists every principal's.
	ListCapsules(ctx context.Context, principal string) ([]CapsuleRecord, error)
	// PurgeCapsules removes one A-leg (head, history and compaction
	// timeline) or, with aLeg "", every capsule, history, compaction event
	// and lineage record of the principal. It returns
	// the number of capsule heads removed.
	PurgeCapsules(ctx context.Context, principal, aLeg string) (int, error)

	// PutLineage upserts a small opaque record in the principal's namespace.
	// A zero expires never expires.
	PutLineage(ctx context.Context, principal, key string, value []byte, expires time.Time) error
	// PutLineages upserts several records of one principal in one
	// transaction (one round trip where the backend allows): all or none.
	PutLineages(ctx context.Context, principal string, puts []LineagePut) error
	// GetLineage returns the values of the keys that exist and have not
	// expired, in one round trip.
	GetLineage(ctx context.Context, principal string, keys []string) (map[string][]byte, error)

	// AppendLedger records entries; an entry whose ID is already recorded is
	// ignored.
	AppendLedger(ctx context.Context, entries []LedgerEntry) error
	// Usage sums the principal's entries since the given time ("" = all
	// principals), grouped by UTC day, kind and model, in that order.
	Usage(ctx context.Context, principal string, since time.Time) ([]UsageRow, error)
	// LedgerEntries returns the newest entries first ("" = all principals);
	// limit <= 0 returns all.
	LedgerEntries(ctx context.Context, principal string, limit int) ([]LedgerEntry, error)
	// Reserve atomically adds amount to the counter key if the result stays
	// within limit, and reports whether it did.
	Reserve(ctx context.Context, key string, amount, limit int64) (bool, error)
	// Adjust adds delta (possibly negative) to the counter key; the counter
	// never goes below zero.
	Adjust(ctx context.Context, key string, delta int64) error
	// Used returns the counter key (0 if it was never touched).
	Used(ctx context.Context, key string) (int64, error)

	// DeleteExpired removes capsules (head and history) not updated since
	// now-capsuleTTL and compaction events recorded before it (capsuleTTL <=
	// 0 keeps them), and lineage records expired at now. It returns the number of capsule heads plus lineage records
	// removed.
	DeleteExpired(ctx context.Context, now time.Time, capsuleTTL time.Duration) (int, error)

	Outbox
	Reservations
	Compactions

	// Dump lists every table and its rows as text, for privacy scans in
	// tests.
	Dump(ctx context.Context) (map[string][]string, error)
	Ping(ctx context.Context) error
	Close() error
}

// Table names, shared by every backend's Dump.
const (
	TableCapsules       = "capsules"
	TableCapsuleHistory = "capsule_history"
	TableLineage        = "lineage"
	TableLedger         = "ledger"
	TableBudgets        = "budgets"
)

// NormalizeTime returns t in UTC truncated to microseconds, the precision
// every backend stores.
func NormalizeTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC().Truncate(time.Microsecond)
}

// Day returns the UTC calendar day of t as YYYY-MM-DD.
func Day(t time.Time) string {
	return t.UTC().Format(time.DateOnly)
}

// CheckPut validates the arguments of PutCapsule.
func CheckPut(rec CapsuleRecord, expectRevision int64) error {
	switch {
	case rec.Principal == "":
		return fmt.Errorf("put capsule: empty principal: %w", ErrInvalid)
	case rec.ALeg == "":
		return fmt.Errorf("put capsule: empty a-leg: %w", ErrInvalid)
	case expectRevision < 0:
		return fmt.Errorf("put capsule: negative expected revision %d: %w", expectRevision, ErrInvalid)
	case rec.Revision != expectRevision+1:
		return fmt.Errorf("put capsule: revision %d does not follow expected revision %d: %w", rec.Revision, expectRevision, ErrInvalid)
	}
	return nil
}

// CheckLedger validates entries for AppendLedger.
func CheckLedger(entries []LedgerEntry) error {
	return checkEntryIDs(len(entries), func(i int) string { return entries[i].ID })
}

// CheckSettlements validates the ledger entries of SettleReservations as
// CheckLedger does.
func CheckSettlements(settle []Settlement) error {
	return checkEntryIDs(len(settle), func(i int) string { return settle[i].Entry.ID })
}

// checkEntryIDs refuses a ledger entry without an id.
func checkEntryIDs(n int, id func(i int) string) error {
	for i := range n {
		if id(i) == "" {
			return fmt.Errorf("append ledger: entry %d has an empty id: %w", i, ErrInvalid)
		}
	}
	return nil
}

// CheckReserve validates the arguments of Reserve.
func CheckReserve(key string, amount int64) error {
	if key == "" {
		return fmt.Errorf("reserve: empty key: %w", ErrInvalid)
	}
	if amount < 0 {
		return fmt.Errorf("reserve: negative amount %d: %w", amount, ErrInvalid)
	}
	return nil
}

// LineageEnqueuer is a Store that can take lineage puts without their
// caller waiting on the write (SQLite): they ride along with the next
// transaction another write starts (a few milliseconds at most later they
// are written on their own), in the order they were enqueued; done receives the
// outcome once they are stored.
type LineageEnqueuer interface {
	EnqueueLineages(principal string, puts []LineagePut) (done <-chan error)
}

// CapsulePrefetcher is a Store that reads an A-leg's capsule in the round
// trip of a lineage read (PostgreSQL): a turn that resolves its lineage
// and then reads the capsule of the A-leg it continues costs one round
// trip before forwarding instead of two.
type CapsulePrefetcher interface {
	// GetLineageWithCapsule is GetLineage and GetCapsule(principal, aLeg)
	// in one round trip; found reports whether the capsule exists.
	GetLineageWithCapsule(ctx context.Context, principal string, keys []string, aLeg string) (lineage map[string][]byte, c CapsuleRecord, found bool, err error)
}

// LineagePut is one record of PutLineages. A zero Expires never expires.
type LineagePut struct {
	Key     string
	Value   []byte
	Expires time.Time
}

// CheckLineagePuts validates a PutLineages call.
func CheckLineagePuts(principal string, puts []LineagePut) error {
	if principal == "" {
		return fmt.Errorf("put lineage: empty principal: %w", ErrInvalid)
	}
	for _, p := range puts {
		if p.Key == "" {
			return fmt.Errorf("put lineage: empty key: %w", ErrInvalid)
		}
	}
	return nil
}

// DumpLine is one row of Dump: the columns' values joined with "|", bytes
// as text.
func DumpLine(vals []any) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		if b, ok := v.([]byte); ok {
			parts[i] = string(b)
		} else {
			parts[i] = fmt.Sprint(v)
		}
	}
	return strings.Join(parts, "|")
}
