package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/metrics"
	"github.com/tether-dev/tether/internal/server"
	"github.com/tether-dev/tether/internal/upstream"
)

// recordingTransport is an in-memory provider: it keeps the last request
// body and answers a fixed JSON body.
type recordingTransport struct {
	mu    sync.Mutex
	calls int
	body  []byte
}

func (rt *recordingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	rt.mu.Lock()
	rt.calls++
	rt.body = b
	rt.mu.Unlock()
	return &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": {"application/json"}},
		Body:       io.NopCloser(strings.NewReader(`{"id":"x","usage":{"prompt_tokens":1,"completion_tokens":1}}`)),
		Request:    r,
	}, nil
}

func (rt *recordingTransport) take() (int, []byte) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	n, b := rt.calls, rt.body
	rt.calls, rt.body = 0, nil
	return n, b
}

// FuzzProxyBody sends arbitrary bytes as the body of every dialect route:
// the proxy never panics, and it either forwards the exact bytes upstream
// with the provider's answer or answers a dialect error (400, 404 for a
// model no route matches, 413) without calling the provider.
func FuzzProxyBody(f *testing.F) {
	for _, lines := range loadCaptures(f) {
		for _, c := range lines {
			if c.Body == nil {
				continue
			}
			b, err := json.Marshal(c.Body)
			if err != nil {
				f.Fatal(err)
			}
			if len(b) < 8<<10 { // small bodies keep the fuzzer fast
				f.Add(b)
			}
		}
	}
	for _, r := range routes {
		f.Add([]byte(r.body("m")))
	}
	// The deep-nesting crash (shortened: the limit trips long before) and a
	// duplicate field.
	f.Add([]byte(`{"model":"m","messages":` + strings.Repeat("[", 64<<10)))
	f.Add([]byte(`{"model":"m","messages":[],"model":"n"}`))
	for _, s := range []string{"", "null", "[]", "{}", `{"model":5}`, `{"model":""}`, `{"model":"a\u0000b"}`, "{\"model\":\"x\"", "\xff\xfe", `{"model":"x","stream":true}`} {
		f.Add([]byte(s))
	}

	tr := &recordingTransport{}
	cfg := &config.Config{MaxBodyBytes: 1 << 20}
	cfg.Providers = []config.Provider{
		{Name: "openai", Dialect: config.FamilyOpenAI, BaseURL: "http://provider.invalid/v1"},
		{Name: "anthropic", Dialect: config.FamilyAnthropic, BaseURL: "http://provider.invalid"},
	}
	cfg.WithDefaults(noEnv)
	if err := cfg.Validate(); err != nil {
		f.Fatal(err)
	}
	h := server.New(server.Options{
		Config:   cfg,
		Secret:   []byte("fuzz"),
		Registry: metrics.NewRegistry(),
		Client:   &upstream.Client{HTTP: &http.Client{Transport: tr}},
	})
	paths := []struct {
		path      string
		anthropic bool
	}{
		{"/v1/chat/completions", false}, {"/v1/responses", false}, {"/v1/responses/compact", false},
		{"/v1/messages", true}, {"/v1/messages/count_tokens", true},
	}

	f.Fuzz(func(t *testing.T, body []byte) {
		for _, p := range paths {
			req := httptest.NewRequest(http.MethodPost, p.path, bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer sk-fuzz")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			calls, sent := tr.take()
			switch {
			case w.Code == http.StatusOK:
				if calls != 1 || !bytes.Equal(sent, body) {
					t.Fatalf("%s: 200 but the provider got %d calls, body %q", p.path, calls, sent)
				}
			case w.Code == http.StatusBadRequest || w.Code == http.StatusRequestEntityTooLarge ||
				w.Code == http.StatusNotFound: // a model name no route matches, e.g. one holding "/"

				if calls != 0 {
					t.Fatalf("%s: %d yet the provider was called", p.path, w.Code)
				}
				dialectError(t, p.anthropic, w.Body.Bytes())
			default:
				t.Fatalf("%s: unexpected status %d: %s", p.path, w.Code, w.Body.Bytes())
			}
		}
	})
}
