package preserve

import (
	"context"
	"encoding/json"
	"hash/maphash"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tether-dev/tether/internal/extract"
)

// MarkerStore is the shared key-value store that carries in-flight markers
// between replicas (the lineage table: small records with an expiry).
type MarkerStore interface {
	PutLineage(ctx context.Context, principal, key string, value []byte, expires time.Time) error
	GetLineage(ctx context.Context, principal string, keys []string) (map[string][]byte, error)
}

// SharedOptions configures a SharedExtractor.
type SharedOptions struct {
	// Owner names this replica in the markers (random per process).
	Owner string
	// TTL bounds how long a marker outlives a replica that died with its
	// job (default 1 minute); Poll is the barrier's re-read interval
	// (default 20 ms).
	TTL, Poll  time.Duration
	Registerer prometheus.Registerer
}

// SharedExtractor makes the preservation barrier hold across replicas that
// share one store. Each replica runs the extraction jobs its own requests
// enqueue; while it has any for an A-leg, a marker in the store says so
// (owner, first ordinal, expiry). A barrier on another replica — the
// compaction request or the first turn after it, served elsewhere — finds
// the marker and polls it, bounded by the barrier timeout, until the owner's
// jobs are done and their revision is in the store. The request path pays
// one store write when an A-leg's first job is queued and one read per
// barrier; ordinary turns pay nothing.
type SharedExtractor struct {
	Extractor // this replica's pool
	st        MarkerStore
	opt       SharedOptions
	remote    *prometheus.CounterVec

	wg    sync.WaitGroup // watchers
	mu    sync.Mutex
	legs  map[string]*watch // A-legs with local jobs
	seed  maphash.Seed
	write [64]sync.Mutex // orders each A-leg's marker writes
}

type watch struct {
	gen   int // bumped by every Enqueue
	first int // smallest first ordinal of the local jobs
}

// markerPrincipal is the namespace of the markers: A-leg ids are already
// unique across principals.
const markerPrincipal = "$tether"

// marker is the stored value: the owners with local jobs for the A-leg.
type marker struct {
	Owners []markerOwner `json:"o"`
}

type markerOwner struct {
	Owner string `json:"n"`
	First int    `json:"f"`
	Until int64  `json:"u"` // unix ms
}

// NewSharedExtractor wraps a replica's pool.
func NewSharedExtractor(local Extractor, st MarkerStore, opt SharedOptions) *SharedExtractor {
	if opt.TTL <= 0 {
		opt.TTL = time.Minute
	}
	if opt.Poll <= 0 {
		opt.Poll = 20 * time.Millisecond
	}
	s := &SharedExtractor{Extractor: local, st: st, opt: opt, legs: map[string]*watch{}, seed: maphash.MakeSeed(),
		remote: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tether_barrier_remote_waits_total",
			Help: "Preservation barriers that found extraction in flight on another replica: joined, timeout, or error (store unreadable; not waited)."},
			[]string{"outcome"})}
	if opt.Registerer != nil {
		opt.Registerer.MustRegister(s.remote)
	}
	return s
}

func markerKey(aLeg string) string { return "x:" + aLeg }

func (s *SharedExtractor) lockLeg(aLeg string) func() {
	m := &s.write[maphash.String(s.seed, aLeg)%uint64(len(s.write))]
	m.Lock()
	return m.Unlock
}

// Enqueue queues job on the local pool and, when it is the A-leg's first
// local job, records the marker before returning (the next request of the
// conversation may reach another replica).
func (s *SharedExtractor) Enqueue(job extract.Job) error {
	if err := s.Extractor.Enqueue(job); err != nil {
		return err
	}
	unlock := s.lockLeg(job.ALeg)
	defer unlock()
	s.mu.Lock()
	w := s.legs[job.ALeg]
	start := w == nil
	if start {
		w = &watch{first: job.FirstTurn}
		s.legs[job.ALeg] = w
	}
	w.gen++
	lower := job.FirstTurn < w.first
	w.first = min(w.first, job.FirstTurn)
	first := w.first
	s.mu.Unlock()
	if start || lower {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		s.update(ctx, job.ALeg, &markerOwner{Owner: s.opt.Owner, First: first, Until: time.Now().Add(s.opt.TTL).UnixMilli()})
		cancel()
	}
	if start {
		s.wg.Add(1)
		go s.watch(job.ALeg)
	}
	return nil
}

// Drain waits until every watcher has removed its marker (call it after
// the local pool stopped, before the store closes), or ctx ends.
func (s *SharedExtractor) Drain(ctx context.Context) error {
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// watch waits for the A-leg's local jobs and removes this replica from the
// marker once none is left.
func (s *SharedExtractor) watch(aLeg string) {
	defer s.wg.Done()
	for {
		s.mu.Lock()
		gen := s.legs[aLeg].gen
		s.mu.Unlock()
		_, err := s.Extractor.Wait(context.Background(), aLeg, 1<<62, s.opt.TTL)
		unlock := s.lockLeg(aLeg)
		s.mu.Lock()
		if s.legs[aLeg].gen != gen || err != nil { // more work queued, or still running
			s.mu.Unlock()
			unlock()
			continue
		}
		delete(s.legs, aLeg)
		s.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		s.update(ctx, aLeg, nil)
		cancel()
		unlock()
		return
	}
}

// update rewrites the A-leg's marker with this replica's entry set to own
// (nil: removed), dropping expired entries. Failures are ignored: a marker
// only lets other replicas wait, bounded, for a better capsule.
func (s *SharedExtractor) update(ctx context.Context, aLeg string, own *markerOwner) {
	key := markerKey(aLeg)
	m, _ := s.read(ctx, aLeg)
	now := time.Now().UnixMilli()
	m.Owners = slices.DeleteFunc(m.Owners, func(o markerOwner) bool { return o.Owner == s.opt.Owner || o.Until <= now })
	if own != nil {
		m.Owners = append(m.Owners, *own)
	}
	var until int64
	for _, o := range m.Owners {
		until = max(until, o.Until)
	}
	if len(m.Owners) == 0 {
		until = now - 1 // expired: GetLineage no longer returns it
	}
	b, _ := json.Marshal(m)
	_ = s.st.PutLineage(ctx, markerPrincipal, key, b, time.UnixMilli(until))
}

func (s *SharedExtractor) read(ctx context.Context, aLeg string) (marker, error) {
	var m marker
	got, err := s.st.GetLineage(ctx, markerPrincipal, []string{markerKey(aLeg)})
	if err != nil {
		return m, err
	}
	if b, ok := got[markerKey(aLeg)]; ok {
		_ = json.Unmarshal(b, &m)
	}
	return m, nil
}

// remoteBusy reports whether another replica has a live job for aLeg whose
// delta starts at or before ordinal.
func (m marker) remoteBusy(self string, ordinal int64, now int64) bool {
	for _, o := range m.Owners {
		if o.Owner != self && o.Until > now && int64(o.First) <= ordinal {
			return true
		}
	}
	return false
}

// Wait is the barrier: this replica's jobs first, then, within what is
// left of timeout, other replicas' jobs, by polling their marker.
func (s *SharedExtractor) Wait(ctx context.Context, aLeg string, ordinal int64, timeout time.Duration) (bool, error) {
	start := time.Now()
	waited, err := s.Extractor.Wait(ctx, aLeg, ordinal, timeout)
	if err != nil {
		return waited, err
	}
	m, err := s.read(ctx, aLeg)
	if err != nil {
		s.remote.WithLabelValues("error").Inc()
		return waited, nil
	}
	if !m.remoteBusy(s.opt.Owner, ordinal, time.Now().UnixMilli()) {
		return waited, nil
	}
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(max(timeout-time.Since(start), 0))
		defer t.Stop()
		deadline = t.C
	}
	tick := time.NewTicker(s.opt.Poll)
	defer tick.Stop()
	for {
		select {
		case <-deadline:
			s.remote.WithLabelValues("timeout").Inc()
			return true, extract.ErrBarrierTimeout
		case <-ctx.Done():
			s.remote.WithLabelValues("timeout").Inc()
			return true, ctx.Err()
		case <-tick.C:
		}
		m, err := s.read(ctx, aLeg)
		if err == nil && !m.remoteBusy(s.opt.Owner, ordinal, time.Now().UnixMilli()) {
			s.remote.WithLabelValues("joined").Inc()
			return true, nil
		}
	}
}
