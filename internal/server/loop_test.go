package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/fakemodel"
	"github.com/tether-dev/tether/internal/upstream"
)

// A provider whose base URL leads back to the proxy itself is a loop: the
// request is refused at once with 508 in the caller's dialect, the provider
// never sees it, and the proxy keeps serving. Before the guard the proxy
// forwarded the request to itself until it ran out of file descriptors.
func TestForwardingLoopIsRefused(t *testing.T) {
	fake := startFake(t, func(*fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Text: "ok"} })
	srv, self := listen(t)
	cfg := passthroughConfig(t, fake.URL, func(c *config.Config) {
		c.Providers = append(c.Providers,
			config.Provider{Name: "openai-self", Dialect: config.FamilyOpenAI, BaseURL: self + "/v1"},
			config.Provider{Name: "anthropic-self", Dialect: config.FamilyAnthropic, BaseURL: self},
		)
		c.Routes = []config.Route{
			{Match: "self-*", Provider: "openai-self"}, {Match: "self-*", Provider: "anthropic-self"},
			{Match: "fake-*", Provider: "openai"}, {Match: "fake-*", Provider: "anthropic"},
		}
	})
	p := startProxy(t, proxyOpts{cfg: cfg, srv: srv})
	p.client.Timeout = 20 * time.Second // a regression fails here instead of hanging
	for _, rt := range routes {
		t.Run(rt.name, func(t *testing.T) {
			fake.Reset()
			resp, data := p.do(t, http.MethodPost, rt.path, rt.header, []byte(rt.body("self-a")))
			if resp.StatusCode != http.StatusLoopDetected {
				t.Fatalf("status %d, want 508: %s", resp.StatusCode, data)
			}
			if msg := dialectError(t, rt.anthropic, data); !strings.Contains(msg, "loop") {
				t.Errorf("error message %q does not name the loop", msg)
			}
			if n := len(fake.Requests()); n != 0 {
				t.Errorf("the provider saw %d requests", n)
			}
			resp, data = p.do(t, http.MethodPost, rt.path, rt.header, []byte(rt.body("fake-a")))
			if resp.StatusCode != http.StatusOK {
				t.Errorf("after the loop, a good request got %d: %s", resp.StatusCode, data)
			}
		})
	}
	if line := p.metric(t, "tether_forwarding_loops_total"); line != "tether_forwarding_loops_total 3" {
		t.Errorf("loop counter: %q, want 3", line)
	}
}

// Two proxies in a row (a laptop's Tether in front of a team's) pass
// requests through; each adds its own hop token, so the provider sees two.
// Pointed at each other, they refuse the request the second time it reaches
// the first; and a request that names too many hops already is refused.
func TestChainedProxies(t *testing.T) {
	fake := startFake(t, func(*fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Text: "ok"} })
	vias := func() (out []string) {
		for _, r := range fake.Requests() {
			out = append(out, r.Header.Get(upstream.HeaderVia))
		}
		return out
	}
	srvA, urlA := listen(t)
	srvB, urlB := listen(t)
	routesTo := func(loop string) func(*config.Config) {
		return func(c *config.Config) {
			c.Providers = append(c.Providers, config.Provider{Name: "next", Dialect: config.FamilyOpenAI, BaseURL: loop + "/v1"})
			c.Routes = []config.Route{{Match: "loop-*", Provider: "next"}, {Match: "fake-*", Provider: "openai"}}
		}
	}
	// A sends everything to B; B sends fake-* to the provider, loop-* back to A.
	cfgA := passthroughConfig(t, fake.URL, func(c *config.Config) {
		c.Providers = append(c.Providers, config.Provider{Name: "b", Dialect: config.FamilyOpenAI, BaseURL: urlB + "/v1"})
		c.Routes = []config.Route{{Match: "*", Provider: "b"}}
	})
	a := startProxy(t, proxyOpts{cfg: cfgA, srv: srvA})
	startProxy(t, proxyOpts{cfg: passthroughConfig(t, fake.URL, routesTo(urlA)), srv: srvB})
	a.client.Timeout = 20 * time.Second
	chat := routes[0]

	resp, data := a.do(t, http.MethodPost, chat.path, chat.header, []byte(chat.body("fake-a")))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("through two proxies: status %d: %s", resp.StatusCode, data)
	}
	seen := vias()
	if len(seen) != 1 {
		t.Fatalf("the provider saw %d requests, want 1", len(seen))
	}
	tokens := strings.Split(seen[0], ", ")
	if len(tokens) != 2 || tokens[0] == tokens[1] || tokens[0] == "" || tokens[1] == "" {
		t.Fatalf("%s at the provider: %q, want two distinct hop tokens", upstream.HeaderVia, seen[0])
	}

	resp, data = a.do(t, http.MethodPost, chat.path, chat.header, []byte(chat.body("loop-a")))
	if resp.StatusCode != http.StatusLoopDetected {
		t.Errorf("A → B → A: status %d, want 508: %s", resp.StatusCode, data)
	}
	dialectError(t, false, data)

	// A caller's own header: three foreign hops pass (the provider sees them
	// and A's and B's), eight are too many; what is not a hop token is
	// neither counted nor passed on.
	h := chat.header.Clone()
	h.Set(upstream.HeaderVia, "00000000000000a1, 00000000000000a2, 00000000000000a3")
	if resp, data = a.do(t, http.MethodPost, chat.path, h, []byte(chat.body("fake-a"))); resp.StatusCode != http.StatusOK {
		t.Errorf("three foreign hops: status %d: %s", resp.StatusCode, data)
	} else if seen = vias(); len(seen) != 2 || seen[1] != "00000000000000a1, 00000000000000a2, 00000000000000a3, "+seen[0] {
		t.Errorf("three foreign hops reached the provider as %q", seen)
	}
	h.Set(upstream.HeaderVia, strings.Repeat("00000000000000b0, ", 7)+"not a token, 00000000000000b8")
	if resp, data = a.do(t, http.MethodPost, chat.path, h, []byte(chat.body("fake-a"))); resp.StatusCode != http.StatusLoopDetected {
		t.Errorf("eight hops: status %d, want 508: %s", resp.StatusCode, data)
	}
}
