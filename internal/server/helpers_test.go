package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/fakemodel"
	"github.com/tether-dev/tether/internal/flow"
	"github.com/tether-dev/tether/internal/metrics"
	"github.com/tether-dev/tether/internal/server"
	"github.com/tether-dev/tether/internal/upstream"
)

func noEnv(string) string { return "" }

// passthroughConfig is a passthrough proxy with one OpenAI and one Anthropic
// provider, both at the fake's URL, and a catch-all route for each.
func passthroughConfig(t *testing.T, fakeURL string, edit func(*config.Config)) *config.Config {
	t.Helper()
	cfg := &config.Config{
		Providers: []config.Provider{
			{Name: "openai", Dialect: config.FamilyOpenAI, BaseURL: fakeURL + "/v1"},
			{Name: "anthropic", Dialect: config.FamilyAnthropic, BaseURL: fakeURL},
		},
	}
	if edit != nil {
		edit(cfg)
	}
	cfg.WithDefaults(noEnv)
	if err := cfg.Validate(); err != nil {
		t.Fatalf("test config: %v", err)
	}
	return cfg
}

// proxy is a running Tether in front of a fake provider.
type proxy struct {
	URL      string
	srv      *httptest.Server
	registry *metrics.Registry
	b        *upstream.Client // the B-leg client, to drop idle connections
	client   *http.Client     // the client side, to drop idle connections
}

type proxyOpts struct {
	cfg      *config.Config
	detector flow.Detector
	hooks    []flow.Hook
	ready    func(context.Context) error
	admitter flow.Admitter
	srv      *httptest.Server // unstarted, listening: serve here (see listen)
}

// listen returns a loopback server that listens but does not serve yet, and
// its URL: for a config that names the proxy's own address.
func listen(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	t.Cleanup(srv.Close)
	return srv, "http://" + srv.Listener.Addr().String()
}

// startProxy serves server.New over real HTTP on loopback. Everything it
// starts is closed in t.Cleanup, idle connections included.
func startProxy(t *testing.T, o proxyOpts) *proxy {
	t.Helper()
	reg := metrics.NewRegistry()
	b := upstream.NewClient()
	h := server.New(server.Options{
		Config:   o.cfg,
		Secret:   []byte("test-secret-test-secret"),
		Registry: reg,
		Client:   b,
		Detector: o.detector,
		Hooks:    o.hooks,
		Ready:    o.ready,
		Admitter: o.admitter,
	})
	srv := o.srv
	if srv == nil {
		srv = httptest.NewServer(h)
	} else {
		srv.Config.Handler = h
		srv.Start()
	}
	p := &proxy{URL: srv.URL, srv: srv, registry: reg, b: b, client: &http.Client{Transport: &http.Transport{}}}
	t.Cleanup(p.Close)
	return p
}

// Close stops the proxy and drops every idle connection it and its clients
// hold. It is idempotent.
func (p *proxy) Close() {
	p.client.CloseIdleConnections()
	p.srv.Close()
	p.b.HTTP.CloseIdleConnections()
}

func startFake(t *testing.T, r fakemodel.Responder) *fakemodel.Server {
	t.Helper()
	s := fakemodel.Start(r)
	t.Cleanup(s.Close)
	return s
}

// do sends one request through the proxy's own client.
func (p *proxy) do(t *testing.T, method, path string, header http.Header, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, p.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, vv := range header {
		req.Header[k] = vv
	}
	resp, err := p.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return resp, data
}

func (p *proxy) openai(key string) *openai.Client {
	c := openai.NewClient(
		option.WithBaseURL(p.URL+"/v1"),
		option.WithAPIKey(key),
		option.WithMaxRetries(0),
		option.WithHTTPClient(p.client),
		option.WithRequestTimeout(30*time.Second),
	)
	return &c
}

func (p *proxy) anthropic(key string) *anthropic.Client {
	c := anthropic.NewClient(
		aoption.WithBaseURL(p.URL),
		aoption.WithAPIKey(key),
		aoption.WithMaxRetries(0),
		aoption.WithHTTPClient(p.client),
		aoption.WithRequestTimeout(30*time.Second),
	)
	return &c
}

// dialectError checks that data is the error body of its dialect: the
// Anthropic envelope for /v1/messages routes, the OpenAI error object
// otherwise. It returns the error's message.
func dialectError(t *testing.T, anthropicShape bool, data []byte) string {
	t.Helper()
	if anthropicShape {
		var e struct {
			Type  string `json:"type"`
			Error *struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(data, &e); err != nil || e.Type != "error" || e.Error == nil || e.Error.Type == "" || e.Error.Message == "" {
			t.Errorf("body %s is not an Anthropic error envelope {type:error, error:{type,message}} (%v)", data, err)
			return ""
		}
		return e.Error.Message
	}
	var e struct {
		Type  *string `json:"type"`
		Error *struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Param   any    `json:"param"`
			Code    any    `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &e); err != nil || e.Error == nil || e.Error.Type == "" || e.Error.Message == "" || e.Type != nil {
		t.Errorf("body %s is not an OpenAI error object {error:{message,type,…}} (%v)", data, err)
		return ""
	}
	return e.Error.Message
}

// metric returns the text line of a sample on /metrics, or "".
func (p *proxy) metric(t *testing.T, name string) string {
	t.Helper()
	resp, data := p.do(t, http.MethodGet, "/metrics", nil, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: status %d", resp.StatusCode)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if strings.HasPrefix(line, name+" ") || strings.HasPrefix(line, name+"{") {
			return line
		}
	}
	return ""
}
