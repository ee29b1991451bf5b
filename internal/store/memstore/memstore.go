// Package memstore is the in-memory Tether store: one mutex over plain maps.
// It is meant for tests and throwaway runs; nothing survives Close.
package memstore

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/tether-dev/tether/internal/store/backend"
)

type capsuleKey struct{ principal, aLeg string }

type lineageKey struct{ principal, key string }

type lineageValue struct {
	value   []byte
	expires time.Time
}

// Store is an in-memory backend.Store.
type Store struct {
	now func() time.Time

	mu          sync.Mutex
	closed      bool
	history     map[capsuleKey][]backend.CapsuleRecord // oldest first; last element is the head
	lineage     map[lineageKey]lineageValue
	ledger      map[string]backend.LedgerEntry
	budgets     map[string]int64
	durable     // outbox and reservations
	compactions // compaction timeline
}

var _ backend.Store = (*Store)(nil)

// Options configures a Store. The zero value is usable.
type Options struct {
	// Now is the clock used for lineage expiry and default UpdatedAt;
	// time.Now if nil.
	Now func() time.Time
}

// New returns an empty store.
func New(opts Options) *Store {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &Store{
		now:     now,
		history: map[capsuleKey][]backend.CapsuleRecord{},
		lineage: map[lineageKey]lineageValue{},
		ledger:  map[string]backend.LedgerEntry{},
		budgets: map[string]int64{},
	}
}

func cloneRecord(r backend.CapsuleRecord) backend.CapsuleRecord {
	r.Data = bytes.Clone(r.Data)
	return r
}

// GetCapsule implements backend.Store.
func (s *Store) GetCapsule(ctx context.Context, principal, aLeg string) (backend.CapsuleRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.history[capsuleKey{principal, aLeg}]
	if len(h) == 0 {
		return backend.CapsuleRecord{}, fmt.Errorf("get capsule: %w", backend.ErrNotFound)
	}
	return cloneRecord(h[len(h)-1]), nil
}

// PutCapsule implements backend.Store.
func (s *Store) PutCapsule(ctx context.Context, rec backend.CapsuleRecord, expectRevision int64) error {
	if err := backend.CheckPut(rec, expectRevision); err != nil {
		return err
	}
	rec = cloneRecord(rec)
	rec.UpdatedAt = backend.NormalizeTime(rec.UpdatedAt)
	if rec.UpdatedAt.IsZero() {
		rec.UpdatedAt = backend.NormalizeTime(s.now())
	}
	k := capsuleKey{rec.Principal, rec.ALeg}
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.history[k]
	var cur int64
	if len(h) > 0 {
		cur = h[len(h)-1].Revision
	}
	if cur != expectRevision {
		return fmt.Errorf("put capsule: head is revision %d, expected %d: %w", cur, expectRevision, backend.ErrConflict)
	}
	h = append(h, rec)
	if over := len(h) - backend.HistoryLimit; over > 0 {
		h = slices.Clone(h[over:])
	}
	s.history[k] = h
	return nil
}

// CapsuleHistory implements backend.Store.
func (s *Store) CapsuleHistory(ctx context.Context, principal, aLeg string, limit int) ([]backend.CapsuleRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.history[capsuleKey{principal, aLeg}]
	out := make([]backend.CapsuleRecord, 0, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		if limit > 0 && len(out) == limit {
			break
		}
		out = append(out, cloneRecord(h[i]))
	}
	return out, nil
}

// ListCapsules implements backend.Store.
func (s *Store) ListCapsules(ctx context.Context, principal string) ([]backend.CapsuleRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []backend.CapsuleRecord
	for k, h := range s.history {
		if principal != "" && k.principal != principal {
			continue
		}
		out = append(out, cloneRecord(h[len(h)-1]))
	}
	slices.SortFunc(out, func(a, b backend.CapsuleRecord) int {
		return cmp.Or(cmp.Compare(a.Principal, b.Principal), cmp.Compare(a.ALeg, b.ALeg))
	})
	return out, nil
}

// PurgeCapsules implements backend.Store.
func (s *Store) PurgeCapsules(ctx context.Context, principal, aLeg string) (int, error) {
	if principal == "" {
		return 0, fmt.Errorf("purge capsules: empty principal: %w", backend.ErrInvalid)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, r := range s.outbox {
		if r.e.Principal == principal && (aLeg == "" || r.e.ALeg == aLeg) {
			delete(s.outbox, id)
		}
	}
	s.purgeCompactions(principal, aLeg)
	if aLeg != "" {
		k := capsuleKey{principal, aLeg}
		if _, ok := s.history[k]; !ok {
			return 0, nil
		}
		delete(s.history, k)
		return 1, nil
	}
	n := 0
	for k := range s.history {
		if k.principal == principal {
			delete(s.history, k)
			n++
		}
	}
	for k := range s.lineage {
		if k.principal == principal {
			delete(s.lineage, k)
		}
	}
	return n, nil
}

// PutLineage implements backend.Store.
func (s *Store) PutLineage(ctx context.Context, principal, key string, value []byte, expires time.Time) error {
	if principal == "" || key == "" {
		return fmt.Errorf("put lineage: empty principal or key: %w", backend.ErrInvalid)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lineage[lineageKey{principal, key}] = lineageValue{bytes.Clone(value), backend.NormalizeTime(expires)}
	return nil
}

// PutLineages implements backend.Store.
func (s *Store) PutLineages(ctx context.Context, principal string, puts []backend.LineagePut) error {
	if err := backend.CheckLineagePuts(principal, puts); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range puts {
		s.lineage[lineageKey{principal, p.Key}] = lineageValue{bytes.Clone(p.Value), backend.NormalizeTime(p.Expires)}
	}
	return nil
}

// GetLineage implements backend.Store.
func (s *Store) GetLineage(ctx context.Context, principal string, keys []string) (map[string][]byte, error) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string][]byte, len(keys))
	for _, k := range keys {
		v, ok := s.lineage[lineageKey{principal, k}]
		if !ok || (!v.expires.IsZero() && !v.expires.After(now)) {
			continue
		}
		out[k] = bytes.Clone(v.value)
	}
	return out, nil
}

// LineageKeys calls fn with the principal and key of every lineage record
// held (expired ones included), stopping at fn's first error.
func (s *Store) LineageKeys(ctx context.Context, fn func(principal, key string) error) error {
	s.mu.Lock()
	keys := make([]lineageKey, 0, len(s.lineage))
	for k := range s.lineage {
		keys = append(keys, k)
	}
	s.mu.Unlock()
	for _, k := range keys {
		if err := fn(k.principal, k.key); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// AppendLedger implements backend.Store.
func (s *Store) AppendLedger(ctx context.Context, entries []backend.LedgerEntry) error {
	if err := backend.CheckLedger(entries); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range entries {
		if _, ok := s.ledger[e.ID]; ok {
			continue
		}
		e.Time = backend.NormalizeTime(e.Time)
		s.ledger[e.ID] = e
	}
	return nil
}

// Usage implements backend.Store.
func (s *Store) Usage(ctx context.Context, principal string, since time.Time) ([]backend.UsageRow, error) {
	since = backend.NormalizeTime(since)
	type groupKey struct{ day, kind, model string }
	s.mu.Lock()
	groups := map[groupKey]*backend.UsageRow{}
	for _, e := range s.ledger {
		if (principal != "" && e.Principal != principal) || e.Time.Before(since) {
			continue
		}
		k := groupKey{backend.Day(e.Time), e.Kind, e.Model}
		r := groups[k]
		if r == nil {
			r = &backend.UsageRow{Day: k.day, Kind: k.kind, Model: k.model}
			groups[k] = r
		}
		r.Calls++
		r.InputTokens += e.InputTokens
		r.OutputTokens += e.OutputTokens
		r.CacheReadTokens += e.CacheReadTokens
		r.CacheWriteTokens += e.CacheWriteTokens
		r.CostMicros += e.CostMicros
	}
	s.mu.Unlock()
	out := make([]backend.UsageRow, 0, len(groups))
	for _, r := range groups {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b backend.UsageRow) int {
		return cmp.Or(cmp.Compare(a.Day, b.Day), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Model, b.Model))
	})
	return out, nil
}

// LedgerEntries implements backend.Store.
func (s *Store) LedgerEntries(ctx context.Context, principal string, limit int) ([]backend.LedgerEntry, error) {
	s.mu.Lock()
	var out []backend.LedgerEntry
	for _, e := range s.ledger {
		if principal == "" || e.Principal == principal {
			out = append(out, e)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b backend.LedgerEntry) int {
		return cmp.Or(b.Time.Compare(a.Time), cmp.Compare(b.ID, a.ID))
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Reserve implements backend.Store.
func (s *Store) Reserve(ctx context.Context, key string, amount, limit int64) (bool, error) {
	if err := backend.CheckReserve(key, amount); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.budgets[key]+amount > limit {
		return false, nil
	}
	s.budgets[key] += amount
	return true, nil
}

// Adjust implements backend.Store.
func (s *Store) Adjust(ctx context.Context, key string, delta int64) error {
	if key == "" {
		return fmt.Errorf("adjust: empty key: %w", backend.ErrInvalid)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.budgets[key] = max(s.budgets[key]+delta, 0)
	return nil
}

// Used implements backend.Store.
func (s *Store) Used(ctx context.Context, key string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.budgets[key], nil
}

// DeleteExpired implements backend.Store.
func (s *Store) DeleteExpired(ctx context.Context, now time.Time, capsuleTTL time.Duration) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	if capsuleTTL > 0 {
		cutoff := now.Add(-capsuleTTL)
		for k, h := range s.history {
			if h[len(h)-1].UpdatedAt.Before(cutoff) {
				delete(s.history, k)
				n++
			}
		}
		s.expireCompactions(cutoff)
	}
	for k, v := range s.lineage {
		if !v.expires.IsZero() && !v.expires.After(now) {
			delete(s.lineage, k)
			n++
		}
	}
	return n, nil
}

// Dump implements backend.Store.
func (s *Store) Dump(ctx context.Context) (map[string][]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]string{
		backend.TableCapsules:       {},
		backend.TableCapsuleHistory: {},
		backend.TableLineage:        {},
		backend.TableLedger:         {},
		backend.TableBudgets:        {},
	}
	for _, h := range s.history {
		head := h[len(h)-1]
		out[backend.TableCapsules] = append(out[backend.TableCapsules], fmt.Sprintf("%s|%s|%s|%d|%s|%s",
			head.Principal, head.ALeg, head.Session, head.Revision, head.Data, head.UpdatedAt.Format(time.RFC3339Nano)))
		for _, r := range h {
			out[backend.TableCapsuleHistory] = append(out[backend.TableCapsuleHistory], fmt.Sprintf("%s|%s|%s|%d|%s|%s",
				r.Principal, r.ALeg, r.Session, r.Revision, r.Data, r.UpdatedAt.Format(time.RFC3339Nano)))
		}
	}
	for k, v := range s.lineage {
		out[backend.TableLineage] = append(out[backend.TableLineage], fmt.Sprintf("%s|%s|%s|%s",
			k.principal, k.key, v.value, v.expires.Format(time.RFC3339Nano)))
	}
	for _, e := range s.ledger {
		out[backend.TableLedger] = append(out[backend.TableLedger], fmt.Sprintf("%+v", e))
	}
	for _, k := range slices.Sorted(maps.Keys(s.budgets)) {
		out[backend.TableBudgets] = append(out[backend.TableBudgets], fmt.Sprintf("%s|%d", k, s.budgets[k]))
	}
	s.dumpDurable(out)
	s.dumpCompactions(out)
	for _, rows := range out {
		slices.Sort(rows)
	}
	return out, nil
}

// Ping implements backend.Store.
func (s *Store) Ping(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("ping memory store: closed")
	}
	return nil
}

// Close implements backend.Store.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}
