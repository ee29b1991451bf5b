// Package upstream routes a request to a provider and opens the B-leg: one
// HTTP call to the provider, with the caller's or the operator's key.
package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/tether-dev/tether/internal/config"
)

// ErrNoRoute means no configured route serves the model in that dialect.
var ErrNoRoute = errors.New("no route")

// Target is where one request goes.
type Target struct {
	Provider config.Provider
	Model    string // model name sent upstream
}

// Route returns a normalised "provider/model" identifier (safe for labels
// only after normalisation by the caller).
func (t Target) Route() string { return t.Provider.Name + "/" + t.Model }

// Router maps (dialect family, model) to a provider.
type Router struct {
	cfg *config.Config
}

// NewRouter returns a router over cfg's providers and routes.
func NewRouter(cfg *config.Config) *Router { return &Router{cfg: cfg} }

// Route picks the first route whose pattern matches model and whose provider
// speaks family.
func (r *Router) Route(family, model string) (Target, error) {
	for _, rt := range r.cfg.Routes {
		p, ok := r.cfg.Provider(rt.Provider)
		if !ok || p.Dialect != family {
			continue
		}
		if Match(rt.Match, model) {
			up := model
			if rt.Model != "" {
				up = rt.Model
			}
			return Target{Provider: p, Model: up}, nil
		}
	}
	return Target{}, fmt.Errorf("%w for model %q in the %s dialect; add a route whose match covers it", ErrNoRoute, model, family)
}

// Match reports whether model matches pattern, where "*" matches any run of
// characters (model names may contain "/", as in "org/model") and "?" any
// one character; other characters match themselves.
func Match(pattern, model string) bool {
	p, m := []rune(pattern), []rune(model)
	// Iterative glob with backtracking to the last star.
	pi, mi, star, mark := 0, 0, -1, 0
	for mi < len(m) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == m[mi]):
			pi++
			mi++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, mi
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			mi = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// Client performs B-legs.
type Client struct {
	HTTP *http.Client
}

// NewClient returns a client with a transport tuned for many concurrent
// streams to few hosts.
func NewClient() *Client {
	tr := &http.Transport{
		// HTTPS_PROXY, HTTP_PROXY and NO_PROXY, read once per process.
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialWhole((&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext),
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		ResponseHeaderTimeout: 0,
	}
	return &Client{HTTP: &http.Client{Transport: tr, CheckRedirect: refuseRedirect}}
}

// refuseRedirect never follows a provider's redirect: following one would
// re-send the body and the operator's key to a host nobody configured. The
// caller gets the 3xx itself as the response (see IsRedirect).
func refuseRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// IsRedirect reports whether a provider answered with a redirect, which
// Tether never follows nor relays.
func IsRedirect(status int) bool {
	return status >= 300 && status < 400 && status != http.StatusNotModified
}

// hop-by-hop and proxy-owned headers never forwarded upstream.
var dropHeaders = []string{
	"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate", "Proxy-Authorization",
	"Te", "Trailer", "Transfer-Encoding", "Upgrade", "Host", "Content-Length", "Accept-Encoding",
}

// Internal headers Tether itself uses; never forwarded upstream.
const (
	HeaderAux      = "X-Tether-Aux"
	HeaderAuxDepth = "X-Tether-Aux-Depth"
	// HeaderVia lists the Tether processes a forwarded request passed
	// through (their random hop tokens), so that a proxy sees a request
	// come back to it. Only Tether sets it, on the B-leg.
	HeaderVia = "X-Tether-Via"
)

// ConnectionHeaders returns the (canonical) names h's Connection header
// lists: hop-by-hop headers of that one connection, never relayed.
func ConnectionHeaders(h http.Header) map[string]bool {
	var hop map[string]bool
	for _, v := range h.Values("Connection") {
		for f := range strings.SplitSeq(v, ",") {
			if f = strings.TrimSpace(f); f != "" {
				if hop == nil {
					hop = map[string]bool{}
				}
				hop[http.CanonicalHeaderKey(f)] = true
			}
		}
	}
	return hop
}

// DropTetherHeaders removes every X-Tether-* header from h: only Tether
// itself may set them.
func DropTetherHeaders(h http.Header) {
	for k := range h {
		if isTetherHeader(k) {
			delete(h, k)
		}
	}
}

// isTetherHeader reports whether k is in Tether's own X-Tether- namespace.
func isTetherHeader(k string) bool {
	return len(k) >= len("X-Tether-") && strings.EqualFold(k[:len("X-Tether-")], "X-Tether-")
}

// URL joins a provider base URL and an inbound path. OpenAI base URLs end in
// /v1 (the SDK convention) and inbound paths start with /v1.
func URL(p config.Provider, requestURI string) string {
	if p.Dialect == config.FamilyOpenAI {
		requestURI = strings.TrimPrefix(requestURI, "/v1")
	}
	return p.BaseURL + requestURI
}

// Outbound builds the upstream request. With an operator key configured on
// the provider the caller's credentials are replaced; otherwise they are
// forwarded unchanged (passthrough).
func Outbound(ctx context.Context, t Target, method, requestURI string, in http.Header, body []byte) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, URL(t.Provider, requestURI), nil)
	if err != nil {
		return nil, fmt.Errorf("build upstream request: %w", err)
	}
	if len(body) > 0 {
		req.Body = newMemoryBody(body)
		req.GetBody = func() (io.ReadCloser, error) { return newMemoryBody(body), nil }
	}
	// Headers the caller names in Connection are hop-by-hop (RFC 9110
	// 7.6.1), as is every X-Tether-* header: only Tether sets those.
	hop := ConnectionHeaders(in)
	for k, vv := range in {
		if hop[http.CanonicalHeaderKey(k)] || isTetherHeader(k) {
			continue
		}
		req.Header[k] = vv
	}
	for _, k := range dropHeaders {
		req.Header.Del(k)
	}
	if t.Provider.APIKey != "" {
		req.Header.Del("Authorization")
		req.Header.Del("x-api-key")
		req.Header.Del("x-goog-api-key")
		switch t.Provider.Dialect {
		case config.FamilyAnthropic:
			req.Header.Set("x-api-key", t.Provider.APIKey)
		case config.FamilyGemini:
			req.Header.Set("x-goog-api-key", t.Provider.APIKey)
		default:
			req.Header.Set("Authorization", "Bearer "+t.Provider.APIKey)
		}
	}
	for k, v := range t.Provider.Headers {
		req.Header.Set(k, v)
	}
	if t.Provider.Dialect == config.FamilyAnthropic && req.Header.Get("anthropic-version") == "" {
		req.Header.Set("anthropic-version", "2023-06-01")
	}
	req.ContentLength = int64(len(body))
	return req, nil
}

// Do opens the B-leg.
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	return c.HTTP.Do(req)
}

// ErrorStatus is the status a client gets when the B-leg failed with err:
// 504 when the provider did not answer in time, else 502.
func ErrorStatus(err error) int {
	if IsTimeout(err) {
		return http.StatusGatewayTimeout
	}
	return http.StatusBadGateway
}

// IsTimeout reports whether err is a deadline or network timeout.
func IsTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
