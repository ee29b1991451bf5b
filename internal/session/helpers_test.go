package session

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/store/backend"
)

// memStore is an in-memory Store that counts round trips.
type memStore struct {
	mu   sync.Mutex
	recs map[string]memRec
	gets int
	puts int
	now  func() time.Time
}

type memRec struct {
	val     []byte
	expires time.Time
}

var _ Store = (*memStore)(nil)

func newMemStore() *memStore { return &memStore{recs: map[string]memRec{}, now: time.Now} }

func (s *memStore) PutLineage(_ context.Context, principal, key string, value []byte, expires time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.puts++
	s.recs[principal+"\x00"+key] = memRec{val: bytes.Clone(value), expires: expires}
	return nil
}

func (s *memStore) GetLineage(_ context.Context, principal string, keys []string) (map[string][]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gets++
	out := map[string][]byte{}
	for _, k := range keys {
		if r, ok := s.recs[principal+"\x00"+k]; ok && s.now().Before(r.expires) {
			out[k] = bytes.Clone(r.val)
		}
	}
	return out, nil
}

// PutLineages stores a batch in one round trip.
func (s *memStore) PutLineages(_ context.Context, principal string, puts []backend.LineagePut) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.puts++
	for _, p := range puts {
		s.recs[principal+"\x00"+p.Key] = memRec{val: bytes.Clone(p.Value), expires: p.Expires}
	}
	return nil
}

// LineageKeys lists every key (the start-up listing of IndexKeys).
func (s *memStore) LineageKeys(_ context.Context, fn func(principal, key string) error) error {
	s.mu.Lock()
	keys := make([]string, 0, len(s.recs))
	for k := range s.recs {
		keys = append(keys, k)
	}
	s.mu.Unlock()
	for _, k := range keys {
		p, key, _ := strings.Cut(k, "\x00")
		if err := fn(p, key); err != nil {
			return err
		}
	}
	return nil
}

// writes returns the number of write round trips so far.
func (s *memStore) writes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.puts
}

// dump returns every stored key and value (for privacy checks).
func (s *memStore) dump() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	for k, r := range s.recs {
		out[k] = string(r.val)
	}
	return out
}

func (s *memStore) roundTrips() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gets
}

var testSecret = []byte("test-secret-0123456789abcdef0123")

func newTestResolver(st Store) *Resolver {
	return NewResolver(st, Options{Secret: testSecret})
}

// capture is one recorded request of a real agent.
type capture struct {
	Seq     int               `json:"seq"`
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Kind    string            `json:"kind"`
	Headers map[string]string `json:"headers"`
	Body    json.RawMessage   `json:"body"`
	Reply   struct {
		Text string `json:"text"`
	} `json:"reply"`
}

func (c capture) view(t testing.TB) *dialect.View {
	t.Helper()
	name := dialect.OpenAIChat
	switch {
	case strings.HasPrefix(c.Path, "/v1/responses"):
		name = dialect.OpenAIResponses
	case strings.HasPrefix(c.Path, "/v1/messages"):
		name = dialect.AnthropicMessages
	}
	h := http.Header{}
	for k, v := range c.Headers {
		h.Set(k, v)
	}
	v, err := dialect.Parse(name, c.Path, h, c.Body)
	if err != nil {
		t.Fatalf("parse capture %d: %v", c.Seq, err)
	}
	return v
}

// loadCaptures reads the POST requests of testdata/<name>.jsonl by seq.
func loadCaptures(t testing.TB, name string) map[int]capture {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[int]capture{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		var c capture
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		if c.Method == "POST" {
			out[c.Seq] = c
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// --- synthetic histories (OpenAI Chat Completions) ---

type msg struct{ role, text string }

func u(s string) msg { return msg{"user", s} }
func a(s string) msg { return msg{"assistant", s} }

func chatView(t testing.TB, hdr map[string]string, msgs ...msg) *dialect.View {
	t.Helper()
	type m struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	body := struct {
		Model    string `json:"model"`
		Messages []m    `json:"messages"`
	}{Model: "m", Messages: []m{{"system", fmt.Sprintf("system prompt %d", len(msgs))}}}
	for _, x := range msgs {
		body.Messages = append(body.Messages, m{x.role, x.text})
	}
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	for k, v := range hdr {
		h.Set(k, v)
	}
	v, err := dialect.Parse(dialect.OpenAIChat, "/v1/chat/completions", h, b)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// turn resolves v and, unless it is a compaction, commits it.
func turn(t testing.TB, r *Resolver, principal string, v *dialect.View, h Hints) Ref {
	t.Helper()
	ctx := context.Background()
	ref, err := r.Resolve(ctx, principal, v, h)
	if err != nil {
		t.Fatalf("resolve: %v", err)
	}
	if err := r.Commit(ctx, ref, v); err != nil {
		t.Fatalf("commit: %v", err)
	}
	return ref
}

// conversation builds histories turn by turn.
func conversation(prefix string, turns int) []msg {
	var out []msg
	for i := range turns {
		out = append(out, u(fmt.Sprintf("%s: user request number %d, please proceed", prefix, i)), a(fmt.Sprintf("%s: done with step %d", prefix, i)))
	}
	return out
}

func mustParse(t testing.TB, body string) *dialect.View {
	t.Helper()
	v, err := dialect.Parse(dialect.AnthropicMessages, "/v1/messages", nil, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// len is the number of cached entries.
func (c *lru) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}

// len is the number of keys with a holder or a waiter.
func (k *keyedMutex) len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.m)
}
