package e2e

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/app"
	"github.com/tether-dev/tether/internal/demo"
	"github.com/tether-dev/tether/internal/fakemodel"
	"github.com/tether-dev/tether/internal/store"
)

// env is one Tether instance in front of a scripted model, over real HTTP.
type env struct {
	t     testing.TB
	fake  *fakemodel.Server
	app   *app.App
	url   string
	store store.Store
	logs  *syncBuffer
}

type envOptions struct {
	// yaml is appended to the base configuration (providers "model" and
	// "extractor" point at the fake).
	yaml      string
	responder fakemodel.Responder
	store     store.Store
}

const baseYAML = `
providers:
  - {name: model, dialect: anthropic, base_url: "%[1]s"}
  - {name: openai, dialect: openai, base_url: "%[1]s/v1"}
  - {name: extractor, dialect: openai, base_url: "%[1]s/v1"}
routes:
  - {match: "*", provider: model}
  - {match: "*", provider: openai}
`

// continuityYAML turns the feature on with the scripted model as extractor.
const continuityYAML = `
compaction_continuity:
  enabled: true
  barrier_timeout: 5s
  extractor:
    route: extractor/` + demo.ExtractorModel + `
    workers: 2
`

func newEnv(t testing.TB, o envOptions) *env {
	t.Helper()
	if o.responder == nil {
		o.responder = demo.Model()
	}
	fake := fakemodel.Start(o.responder)
	t.Cleanup(fake.Close)
	return accountingServe(t, fake, baseYAML+o.yaml, o.store)
}

// waitCapsule waits until some stored capsule mentions want.
func (e *env) waitCapsule(t testing.TB, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		recs, err := e.store.ListCapsules(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if bytes.Contains(r.Data, []byte(want)) {
				return
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no capsule mentions %q after 10s", want)
}

// agent returns a scripted Claude Code client through the proxy.
func (e *env) agent(session string) *demo.Agent {
	return &demo.Agent{BaseURL: e.url, APIKey: "test-key-0123456789", SessionID: session, Model: "claude-sonnet-4-5",
		HTTP: &http.Client{Timeout: 30 * time.Second}}
}

// say sends user turns, failing the test on error.
func say(t *testing.T, a *demo.Agent, turns ...string) {
	t.Helper()
	for _, s := range turns {
		if _, err := a.Say(context.Background(), s); err != nil {
			t.Fatalf("turn %q: %v", s, err)
		}
	}
}

func compact(t *testing.T, a *demo.Agent) {
	t.Helper()
	if err := a.Compact(context.Background()); err != nil {
		t.Fatalf("compact: %v", err)
	}
}

// primary returns the requests the model received for the coding session
// (not the extractor's).
func (e *env) primary() []fakemodel.Request {
	var out []fakemodel.Request
	for _, r := range e.fake.Requests() {
		if r.Model() != demo.ExtractorModel && r.Path == "/v1/messages" {
			out = append(out, r)
		}
	}
	return out
}

// extractorCalls returns the requests the extractor made.
func (e *env) extractorCalls() []fakemodel.Request {
	var out []fakemodel.Request
	for _, r := range e.fake.Requests() {
		if r.Model() == demo.ExtractorModel {
			out = append(out, r)
		}
	}
	return out
}

// lastPrimary is the body of the newest coding-session request the model got.
func (e *env) lastPrimary() string {
	p := e.primary()
	if len(p) == 0 {
		e.t.Fatal("the model received no request")
	}
	return string(p[len(p)-1].Body)
}

// lastPrimaryOf returns the body of the last coding-session request the
// model received from the client of session id.
func (e *env) lastPrimaryOf(id string) string {
	p := e.primary()
	for i := len(p) - 1; i >= 0; i-- {
		if p[i].Header.Get("X-Claude-Code-Session-Id") == id {
			return string(p[i].Body)
		}
	}
	e.t.Fatalf("the model received no request of session %s", id)
	return ""
}

// block returns the last continuity block in s (JSON escapes undone), or "".
func block(s string) string {
	s = strings.ReplaceAll(s, `\n`, "\n")
	s = strings.ReplaceAll(s, `\"`, `"`)
	i := strings.LastIndex(s, "<continuity-capsule")
	if i < 0 {
		return ""
	}
	b := s[i:]
	if j := strings.Index(b, "</continuity-capsule>"); j >= 0 {
		b = b[:j+len("</continuity-capsule>")]
	}
	return b
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
