package memstore

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/tether-dev/tether/internal/store/backend"
)

// compactions is the compaction timeline; Store.mu guards it.
type compactions struct {
	compactionSeq int64
	timeline      map[capsuleKey][]backend.CompactionEvent // oldest first
}

// AppendCompaction implements backend.Compactions.
func (s *Store) AppendCompaction(ctx context.Context, ev backend.CompactionEvent) (int64, error) {
	if err := backend.CheckCompaction(ev); err != nil {
		return 0, err
	}
	ev.At = backend.NormalizeTime(ev.At)
	if ev.At.IsZero() {
		ev.At = backend.NormalizeTime(s.now())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, fmt.Errorf("append compaction: memory store closed")
	}
	if s.timeline == nil {
		s.timeline = map[capsuleKey][]backend.CompactionEvent{}
	}
	s.compactionSeq++
	ev.Seq = s.compactionSeq
	k := capsuleKey{ev.Principal, ev.ALeg}
	tl := append(s.timeline[k], ev)
	if over := len(tl) - backend.CompactionLimit; over > 0 {
		tl = slices.Clone(tl[over:])
	}
	s.timeline[k] = tl
	return ev.Seq, nil
}

// Compactions implements backend.Compactions.
func (s *Store) Compactions(ctx context.Context, principal, aLeg string, limit int) ([]backend.CompactionEvent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tl := s.timeline[capsuleKey{principal, aLeg}]
	out := make([]backend.CompactionEvent, 0, len(tl))
	for i := len(tl) - 1; i >= 0 && (limit <= 0 || len(out) < limit); i-- {
		out = append(out, tl[i])
	}
	return out, nil
}

// purgeCompactions drops the timeline of one A-leg, or of every A-leg of
// the principal (aLeg ""); s.mu is held.
func (s *Store) purgeCompactions(principal, aLeg string) {
	for k := range s.timeline {
		if k.principal == principal && (aLeg == "" || k.aLeg == aLeg) {
			delete(s.timeline, k)
		}
	}
}

// expireCompactions drops events recorded before cutoff; s.mu is held.
func (s *Store) expireCompactions(cutoff time.Time) {
	for k, tl := range s.timeline {
		tl = slices.DeleteFunc(tl, func(e backend.CompactionEvent) bool { return e.At.Before(cutoff) })
		if len(tl) == 0 {
			delete(s.timeline, k)
		} else {
			s.timeline[k] = tl
		}
	}
}

func (s *Store) dumpCompactions(out map[string][]string) {
	out[backend.TableCompactions] = []string{}
	for _, tl := range s.timeline {
		for _, e := range tl {
			out[backend.TableCompactions] = append(out[backend.TableCompactions], fmt.Sprintf("%+v", e))
		}
	}
}
