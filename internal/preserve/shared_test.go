package preserve

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/extract"
	"github.com/tether-dev/tether/internal/metrics"
)

type idleExtractor struct{}

func (idleExtractor) Enqueue(extract.Job) error { return nil }
func (idleExtractor) Wait(context.Context, string, int64, time.Duration) (bool, error) {
	return false, nil
}
func (idleExtractor) ObserveGate(extract.Signal) {}

type unreadableOutbox struct{}

func (unreadableOutbox) OutboxBusy(context.Context, string, string, time.Time) (bool, error) {
	return false, errors.New("store unreachable")
}

// Replicas with several model extractor routes build one shared extractor
// per route on one registry: each one's remote waits are exported, in one
// family.
func TestSharedExtractorsOfEveryRouteExportRemoteWaits(t *testing.T) {
	reg := metrics.NewRegistry()
	for range 3 {
		s := NewSharedExtractor(idleExtractor{}, unreadableOutbox{}, SharedOptions{Registerer: reg})
		if _, err := s.WaitAcross(t.Context(), "alice", "a-leg", 1, time.Second); err != nil {
			t.Fatal(err)
		}
	}
	var got float64
	for _, f := range reg.Gather() {
		if f.Name != "tether_barrier_remote_waits_total" {
			continue
		}
		for _, s := range f.Series {
			if len(s.Labels) == 1 && s.Labels[0].Value == "error" {
				got = s.Value
			}
		}
	}
	if got != 3 {
		t.Errorf("tether_barrier_remote_waits_total{outcome=\"error\"} = %v, want 3 (one per route)", got)
	}
}
