package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/store"
	"github.com/tether-dev/tether/internal/store/backend"
	"github.com/tether-dev/tether/internal/store/memstore"
	"github.com/tether-dev/tether/internal/store/sqlitestore"
)

// countingStore counts the store round trips of the preservation path.
type countingStore struct {
	store.Store
	mu                                       sync.Mutex
	capsuleReads, lineageReads, lineageWrite int
}

func (s *countingStore) count(n *int) {
	s.mu.Lock()
	*n++
	s.mu.Unlock()
}

func (s *countingStore) counts() (capsules, reads, writes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.capsuleReads, s.lineageReads, s.lineageWrite
}

func (s *countingStore) GetCapsule(ctx context.Context, principal, aLeg string) (backend.CapsuleRecord, error) {
	s.count(&s.capsuleReads)
	return s.Store.GetCapsule(ctx, principal, aLeg)
}

func (s *countingStore) GetLineage(ctx context.Context, principal string, keys []string) (map[string][]byte, error) {
	s.count(&s.lineageReads)
	return s.Store.GetLineage(ctx, principal, keys)
}

// LineageKeys forwards the start-up listing (not a turn's round trip).
func (s *countingStore) LineageKeys(ctx context.Context, fn func(principal, key string) error) error {
	return s.Store.(interface {
		LineageKeys(context.Context, func(string, string) error) error
	}).LineageKeys(ctx, fn)
}

func (s *countingStore) PutLineage(ctx context.Context, principal, key string, value []byte, expires time.Time) error {
	s.count(&s.lineageWrite)
	return s.Store.PutLineage(ctx, principal, key, value, expires)
}

func (s *countingStore) PutLineages(ctx context.Context, principal string, puts []backend.LineagePut) error {
	s.count(&s.lineageWrite)
	return s.Store.PutLineages(ctx, principal, puts)
}

// An ordinary turn of an agent's tool loop costs one round trip: the write
// that commits it. It reads no lineage (this process is the store's only
// writer and listed the store's keys at start, so the turn's new prefixes
// are known to be absent and the head it extends is cached) and no capsule
// (its new messages, a tool call and its result, can hold nothing to
// extract, whatever the capsule holds). A turn where the user speaks also
// reads the capsule, for the extraction gate (the built-in extractor is on
// by default). The same request sent again (a client retry) costs no round
// trip at all. With a shared store a turn reads the A-leg head once:
// internal/session's TestTurnStoreRoundTrips.
func TestTurnStoreRoundTrips(t *testing.T) {
	st := &countingStore{Store: memstore.New(memstore.Options{})}
	e := newEnv(t, envOptions{yaml: "\ncompaction_continuity:\n  enabled: true\n", store: st})
	history := `{"role":"user","content":"Plan the inventory service. Keep PostgreSQL as the store."},` +
		`{"role":"assistant","content":[{"type":"text","text":"Looking."},{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"main.go"}]}`
	next := `,{"role":"assistant","content":[{"type":"tool_use","id":"toolu_2","name":"Read","input":{"file_path":"main.go"}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_2","content":"package main"}]}`
	said := `,{"role":"assistant","content":[{"type":"text","text":"Done."}]},` +
		`{"role":"user","content":"Thanks. How long will the build take?"}`
	send := func(msgs string) {
		t.Helper()
		body := `{"model":"claude-sonnet-4-5","max_tokens":256,"messages":[` + msgs + `]}`
		req, err := http.NewRequest(http.MethodPost, e.url+"/v1/messages", bytes.NewReader([]byte(body)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("x-api-key", "test-key-0123456789")
		req.Header.Set("anthropic-version", "2023-06-01")
		req.Header.Set("X-Claude-Code-Session-Id", "roundtrips-session")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	send(history) // the session's first turn
	for _, tc := range []struct {
		name                              string
		msgs                              string
		capsules, lineageReads, lineageWr int
	}{
		{"tool-loop turn", history + next, 0, 0, 1},
		{"the same request again", history + next, 0, 0, 0},
		{"the user speaks", history + next + said, 1, 0, 1},
	} {
		c0, r0, w0 := st.counts()
		send(tc.msgs)
		// A continuation's lineage write rides along after the answer.
		if err := e.app.Engine.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
		c1, r1, w1 := st.counts()
		if c1-c0 != tc.capsules || r1-r0 != tc.lineageReads || w1-w0 != tc.lineageWr {
			t.Errorf("%s: %d capsule reads, %d lineage reads, %d lineage writes; want %d, %d, %d",
				tc.name, c1-c0, r1-r0, w1-w0, tc.capsules, tc.lineageReads, tc.lineageWr)
		}
	}
}

// gatedStore holds lineage writes while gated.
type gatedStore struct {
	store.Store
	mu      sync.Mutex
	gate    chan struct{} // nil: writes go through
	waiting int
}

func (s *gatedStore) hold() {
	s.mu.Lock()
	s.gate = make(chan struct{})
	s.mu.Unlock()
}

func (s *gatedStore) release() {
	s.mu.Lock()
	if s.gate != nil {
		close(s.gate)
		s.gate = nil
	}
	s.mu.Unlock()
}

func (s *gatedStore) held() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.waiting
}

func (s *gatedStore) PutLineages(ctx context.Context, principal string, puts []backend.LineagePut) error {
	s.mu.Lock()
	g := s.gate
	if g != nil {
		s.waiting++
	}
	s.mu.Unlock()
	if g != nil {
		<-g
		s.mu.Lock()
		s.waiting--
		s.mu.Unlock()
	}
	return s.Store.PutLineages(ctx, principal, puts)
}

// LineageKeys forwards the start-up listing: the store stays exclusive.
func (s *gatedStore) LineageKeys(ctx context.Context, fn func(principal, key string) error) error {
	return s.Store.(interface {
		LineageKeys(context.Context, func(string, string) error) error
	}).LineageKeys(ctx, fn)
}

// On a store this process alone writes, the answer to a turn that
// continues its branch does not wait for the turn's lineage write; the
// first turn of a conversation, whose records name the A-leg its decisions
// are kept under, still does; and the process waits for every such write
// before it closes the store (Engine.Wait).
func TestContinuationAnswerDoesNotWaitForItsLineage(t *testing.T) {
	st := &gatedStore{Store: memstore.New(memstore.Options{})}
	e := newEnv(t, envOptions{yaml: "\ncompaction_continuity:\n  enabled: true\n", store: st})
	t.Cleanup(st.release) // before the harness closes the app
	ag := e.agent("gated-session")
	ag.HTTP.Timeout = 5 * time.Second
	say(t, ag, "Plan the inventory service. Keep PostgreSQL as the store.")

	st.hold()
	say(t, ag, "Go on with the reservation endpoint.") // answered while its write is held
	// The write is submitted when the exchange ends, which may come just
	// after the client has read the answer; it can never pass the gate.
	for deadline := time.Now().Add(2 * time.Second); st.held() == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if st.held() != 1 {
		t.Fatalf("%d lineage writes held after the continuation's answer, want its own", st.held())
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	err := e.app.Engine.Wait(ctx)
	cancel()
	if err == nil {
		t.Fatal("Engine.Wait returned while a lineage write was held")
	}

	other := e.agent("other-session")
	answered := make(chan error, 1)
	go func() {
		_, err := other.Say(context.Background(), "A new conversation: design the billing service.")
		answered <- err
	}()
	select {
	case err := <-answered:
		t.Fatalf("a conversation's first turn was answered (%v) before its lineage landed", err)
	case <-time.After(300 * time.Millisecond):
	}
	st.release()
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
	if err := e.app.Engine.Wait(t.Context()); err != nil {
		t.Fatalf("Engine.Wait after the release: %v", err)
	}
}

// An agent's tool loop through the default store (SQLite) stays one
// branch however fast its turns come: each turn's lineage, answered
// before its write lands, is where the next turn finds it.
func TestToolLoopStaysOneBranch(t *testing.T) {
	st, err := sqlitestore.Open(t.Context(), filepath.Join(t.TempDir(), "tether.db"), sqlitestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, envOptions{yaml: "\ncompaction_continuity:\n  enabled: true\n", store: st})
	msgs := `{"role":"user","content":"Plan the inventory service. Keep PostgreSQL as the store."}`
	for i := range 40 {
		if i > 0 {
			msgs += fmt.Sprintf(`,{"role":"assistant","content":[{"type":"tool_use","id":"toolu_%d","name":"Read","input":{"file_path":"f%d.go"}}]}`, i, i) +
				fmt.Sprintf(`,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%d","content":"package f%d"}]}`, i, i)
		}
		body := `{"model":"claude-sonnet-4-5","max_tokens":256,"messages":[` + msgs + `]}`
		req, err := http.NewRequest(http.MethodPost, e.url+"/v1/messages", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("x-api-key", "test-key-0123456789")
		req.Header.Set("anthropic-version", "2023-06-01")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("turn %d: status %d", i, resp.StatusCode)
		}
	}
	events := map[string]float64{}
	for _, f := range e.app.Registry.Gather() {
		if f.Name != "tether_lineage_events_total" {
			continue
		}
		for _, s := range f.Series {
			for _, l := range s.Labels {
				if l.Name == "event" {
					events[l.Value] += s.Value
				}
			}
		}
	}
	if events["new"] != 1 || events["continue"] != 39 || len(events) != 2 {
		t.Errorf("lineage events %v; want one new branch and 39 continuations", events)
	}
}
