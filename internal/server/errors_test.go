package server_test

import (
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/fakemodel"
)

// route is one dialect endpoint with a body builder for a model.
type route struct {
	name      string
	path      string
	anthropic bool
	body      func(model string) string
	header    http.Header
}

var routes = []route{
	{
		name: "chat", path: "/v1/chat/completions",
		body: func(m string) string {
			return `{"model":"` + m + `","messages":[{"role":"user","content":"hi"}]}`
		},
		header: http.Header{"Authorization": {"Bearer sk-caller-openai"}, "Content-Type": {"application/json"}},
	},
	{
		name: "responses", path: "/v1/responses",
		body:   func(m string) string { return `{"model":"` + m + `","input":"hi"}` },
		header: http.Header{"Authorization": {"Bearer sk-caller-openai"}, "Content-Type": {"application/json"}},
	},
	{
		name: "messages", path: "/v1/messages", anthropic: true,
		body: func(m string) string {
			return `{"model":"` + m + `","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`
		},
		header: http.Header{"X-Api-Key": {"sk-ant-caller"}, "Anthropic-Version": {"2023-06-01"}, "Content-Type": {"application/json"}},
	},
}

// closedURL is the URL of a loopback port where the connection ends before
// any answer: the port is held for the test and every connection closed
// as it is accepted. (A port listened on and closed again could be handed
// to the proxy's own listener next; the "down" provider was then the proxy
// itself, each request forwarded to itself until the process ran out of
// file descriptors.)
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // a reset, as a refused connection is
			}
			c.Close()
		}
	}()
	return "http://" + ln.Addr().String()
}

// errorsSetup is a passthrough proxy whose routes reach a working fake
// ("fake-*"), a closed port ("down-*") and a fake that answers after the
// provider timeout ("slow-*"); other models have no route.
func errorsSetup(t *testing.T) (*fakemodel.Server, *proxy) {
	t.Helper()
	fake := startFake(t, func(r *fakemodel.Request) fakemodel.Reply {
		if strings.HasPrefix(r.Model(), "slow-") {
			return fakemodel.Reply{Text: "late", Delay: 2 * time.Second}
		}
		return fakemodel.Reply{Text: "ok"}
	})
	down := closedURL(t)
	cfg := passthroughConfig(t, fake.URL, func(c *config.Config) {
		c.MaxBodyBytes = 2048
		c.Providers = append(c.Providers,
			config.Provider{Name: "openai-down", Dialect: config.FamilyOpenAI, BaseURL: down + "/v1"},
			config.Provider{Name: "anthropic-down", Dialect: config.FamilyAnthropic, BaseURL: down},
			config.Provider{Name: "openai-slow", Dialect: config.FamilyOpenAI, BaseURL: fake.URL + "/v1", Timeout: 200 * time.Millisecond},
			config.Provider{Name: "anthropic-slow", Dialect: config.FamilyAnthropic, BaseURL: fake.URL, Timeout: 200 * time.Millisecond},
		)
		c.Routes = []config.Route{
			{Match: "down-*", Provider: "openai-down"}, {Match: "down-*", Provider: "anthropic-down"},
			{Match: "slow-*", Provider: "openai-slow"}, {Match: "slow-*", Provider: "anthropic-slow"},
			{Match: "fake-*", Provider: "openai"}, {Match: "fake-*", Provider: "anthropic"},
		}
	})
	return fake, startProxy(t, proxyOpts{cfg: cfg})
}

func TestBadInputAnswersInDialect(t *testing.T) {
	cases := []struct {
		name     string
		path     string // "" = the route's own
		body     func(r route) string
		status   int
		reaches  bool // the fake sees a request
		maxDelay time.Duration
	}{
		{name: "invalid JSON", body: func(route) string { return `{"model":"fake-a","messages":[` }, status: 400},
		{name: "JSON array", body: func(route) string { return `[1,2]` }, status: 400},
		{name: "no model", body: func(route) string { return `{"messages":[]}` }, status: 400},
		{name: "body over max_body_bytes", body: func(r route) string {
			return `{"pad":"` + strings.Repeat("x", 4096) + `",` + r.body("fake-a")[1:]
		}, status: 413},
		// An endpoint without a dialect route is relayed to the provider,
		// whose own 404 comes back.
		{name: "unknown path", path: "/batches", body: func(r route) string { return r.body("fake-a") }, status: 404, reaches: true},
		{name: "no route for model", body: func(r route) string { return r.body("llama-3") }, status: 404},
		{name: "upstream unreachable", body: func(r route) string { return r.body("down-a") }, status: 502},
		{name: "upstream timeout", body: func(r route) string { return r.body("slow-a") }, status: 504, reaches: true, maxDelay: 1500 * time.Millisecond},
	}
	for _, rt := range routes {
		t.Run(rt.name, func(t *testing.T) {
			fake, p := errorsSetup(t)
			for _, tc := range cases {
				fake.Reset()
				path := rt.path
				if tc.path != "" {
					path += tc.path
				}
				start := time.Now()
				resp, data := p.do(t, http.MethodPost, path, rt.header, []byte(tc.body(rt)))
				took := time.Since(start)
				if resp.StatusCode != tc.status {
					t.Errorf("%s: status %d, want %d: %s", tc.name, resp.StatusCode, tc.status, data)
				}
				if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("%s: Content-Type %q, want application/json", tc.name, ct)
				}
				dialectError(t, rt.anthropic, data)
				if got := len(fake.Requests()); (got > 0) != tc.reaches {
					t.Errorf("%s: fake received %d requests, want reached=%v", tc.name, got, tc.reaches)
				}
				if tc.maxDelay > 0 && took > tc.maxDelay {
					t.Errorf("%s: answered after %v; the 200ms provider timeout did not apply", tc.name, took)
				}

				// The proxy keeps serving after each failure.
				resp, data = p.do(t, http.MethodPost, rt.path, rt.header, []byte(rt.body("fake-a")))
				if resp.StatusCode != http.StatusOK {
					t.Errorf("after %s: good request got %d: %s", tc.name, resp.StatusCode, data)
				}
			}
		})
	}
}

func TestUnknownEndpointDialect(t *testing.T) {
	_, p := errorsSetup(t)
	for _, tc := range []struct {
		method, path string
		header       http.Header
		anthropic    bool
	}{
		{"POST", "/v1/embeddings", http.Header{"Authorization": {"Bearer k"}}, false},
		{"GET", "/v2/chat", nil, false},
		{"POST", "/v1/messages/batches", nil, true},
		{"POST", "/v1/complete", http.Header{"Anthropic-Version": {"2023-06-01"}}, true},
	} {
		resp, data := p.do(t, tc.method, tc.path, tc.header, []byte(`{}`))
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s %s: status %d, want 404", tc.method, tc.path, resp.StatusCode)
		}
		dialectError(t, tc.anthropic, data)
	}
}

const (
	proxyKey    = "tk-proxy-key-0123456789"
	openaiKey   = "sk-provider-openai-key"
	anthropicKy = "sk-ant-provider-key"
)

func TestCredentials(t *testing.T) {
	t.Run("passthrough forwards the caller's key", func(t *testing.T) {
		fake, p := errorsSetup(t)
		for _, rt := range routes {
			fake.Reset()
			resp, data := p.do(t, http.MethodPost, rt.path, rt.header, []byte(rt.body("fake-a")))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s: status %d: %s", rt.name, resp.StatusCode, data)
			}
			got := fake.Requests()[0].Header
			for k := range rt.header {
				if got.Get(k) != rt.header.Get(k) {
					t.Errorf("%s: upstream %s = %q, want the caller's %q", rt.name, k, got.Get(k), rt.header.Get(k))
				}
			}
		}
	})

	t.Run("proxy-key mode", func(t *testing.T) {
		fake := startFake(t, fakemodel.Static("ok"))
		cfg := passthroughConfig(t, fake.URL, func(c *config.Config) {
			c.Providers[0].APIKey = openaiKey
			c.Providers[1].APIKey = anthropicKy
			c.Principals = []config.Principal{{ID: "alice", Keys: []string{proxyKey}}}
		})
		p := startProxy(t, proxyOpts{cfg: cfg})
		for _, rt := range routes {
			for _, bad := range []string{"", "tk-not-a-configured-key"} {
				fake.Reset()
				h := rt.header.Clone()
				h.Del("Authorization")
				h.Del("X-Api-Key")
				switch {
				case bad == "":
				case rt.anthropic:
					h.Set("X-Api-Key", bad)
				default:
					h.Set("Authorization", "Bearer "+bad)
				}
				resp, data := p.do(t, http.MethodPost, rt.path, h, []byte(rt.body("fake-a")))
				if resp.StatusCode != http.StatusUnauthorized {
					t.Errorf("%s key %q: status %d, want 401", rt.name, bad, resp.StatusCode)
				}
				dialectError(t, rt.anthropic, data)
				if n := len(fake.Requests()); n != 0 {
					t.Errorf("%s key %q: unauthenticated request reached the provider", rt.name, bad)
				}
			}
			// Either header style carries the proxy key; the provider sees
			// only its own key.
			for _, style := range []http.Header{{"Authorization": {"Bearer " + proxyKey}}, {"X-Api-Key": {proxyKey}}} {
				fake.Reset()
				h := rt.header.Clone()
				h.Del("Authorization")
				h.Del("X-Api-Key")
				for k, v := range style {
					h[k] = v
				}
				resp, data := p.do(t, http.MethodPost, rt.path, h, []byte(rt.body("fake-a")))
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("%s with proxy key: status %d: %s", rt.name, resp.StatusCode, data)
				}
				up := fake.Requests()[0].Header
				for k, vv := range up {
					for _, v := range vv {
						if strings.Contains(v, proxyKey) {
							t.Errorf("%s: proxy key forwarded upstream in %s", rt.name, k)
						}
					}
				}
				if rt.anthropic {
					if up.Get("X-Api-Key") != anthropicKy || up.Get("Authorization") != "" {
						t.Errorf("%s: upstream x-api-key %q authorization %q, want the provider key only", rt.name, up.Get("X-Api-Key"), up.Get("Authorization"))
					}
				} else if up.Get("Authorization") != "Bearer "+openaiKey || up.Get("X-Api-Key") != "" {
					t.Errorf("%s: upstream authorization %q x-api-key %q, want the provider key only", rt.name, up.Get("Authorization"), up.Get("X-Api-Key"))
				}
			}
		}
	})
}
