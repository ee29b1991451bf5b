package server

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/flow"
	"github.com/tether-dev/tether/internal/upstream"
)

// relayUsageBytes bounds how much of a relayed answer is kept to read its
// usage from.
const relayUsageBytes = 1 << 20

// relayable reports whether path is part of a provider API Tether relays
// without a dialect route of its own (GET /v1/models/{id},
// GET /v1/responses/{id}, /v1/embeddings, /v1/completions, …). The
// provider's organisation administration API is not relayed: in proxy-key
// mode it would run with the operator's key.
func relayable(path string) bool {
	if !strings.HasPrefix(path, "/v1/") && !strings.HasPrefix(path, "/v1beta/") {
		return false
	}
	return !strings.HasPrefix(path, "/v1/organization") && !strings.HasPrefix(path, "/v1/admin") &&
		!strings.Contains(path, "/../") && !strings.HasSuffix(path, "/..")
}

func familyOf(d dialect.Name) string {
	switch d {
	case dialect.AnthropicMessages:
		return config.FamilyAnthropic
	case dialect.Gemini:
		return config.FamilyGemini
	}
	return config.FamilyOpenAI
}

// defaultTarget is the provider a family's catch-all route names, else the
// family's first provider.
func (s *Server) defaultTarget(family string) (upstream.Target, error) {
	t, err := s.router.Route(family, "*")
	if err == nil {
		return t, nil
	}
	for _, pr := range s.cfg.Providers {
		if pr.Dialect == family {
			return upstream.Target{Provider: pr}, nil
		}
	}
	return upstream.Target{}, err
}

// relayOther forwards a request for an endpoint of a provider's API that has no
// dialect route: authenticated like every call, with the caller's
// credentials replaced by the provider's key in proxy-key mode, reserved
// against budgets and recorded in the ledger when it sends a body (usage
// read from a JSON answer's usage object), and without continuity. The
// provider is the one the caller's dialect implies (Anthropic when
// anthropic-version or x-api-key is present).
func (s *Server) relayOther(w http.ResponseWriter, r *http.Request) {
	if !relayable(r.URL.Path) {
		s.notFound(w, r)
		return
	}
	start := time.Now()
	d := dialectForPath(r.URL.Path, r.Header)
	p, err := s.auth.Authenticate(r.Header)
	if err != nil {
		writeError(w, d, http.StatusUnauthorized, "missing or invalid API key: send your Tether key as a Bearer token or x-api-key")
		return
	}
	t, err := s.defaultTarget(familyOf(d))
	if err != nil {
		writeError(w, d, http.StatusNotFound, err.Error())
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, s.cfg.MaxBodyBytes+1))
	if err != nil {
		writeError(w, d, http.StatusBadRequest, "request body could not be read")
		return
	}
	if int64(len(body)) > s.cfg.MaxBodyBytes {
		writeError(w, d, http.StatusRequestEntityTooLarge, "request body exceeds max_body_bytes")
		return
	}
	settle := func(flow.Outcome) {}
	if s.opt.Admitter != nil && len(body) > 0 {
		if m := gjson.GetBytes(body, "model"); m.Type == gjson.String {
			t.Model = m.String()
		}
		x := &flow.Exchange{ID: newID(), Start: start, Principal: p, Dialect: d, Method: r.Method, Path: r.URL.RequestURI(),
			Header: r.Header, Body: body, Target: t, Kind: "primary"}
		st, err := s.opt.Admitter.Admit(r.Context(), x)
		if err != nil {
			s.admissionRefused(w, d, err)
			return
		}
		settle = st
	}
	req, err := outbound(r.Context(), t, r.Method, r.URL.RequestURI(), r.Header, body)
	if err != nil {
		settle(flow.Outcome{Err: err, Duration: time.Since(start)})
		writeError(w, d, http.StatusBadGateway, "upstream request could not be built")
		return
	}
	resp, err := s.client.Do(req)
	if err != nil {
		settle(flow.Outcome{Err: err, Duration: time.Since(start)})
		s.upstreamError(w, d, err)
		return
	}
	defer resp.Body.Close()
	copyResponseHeader(w.Header(), resp.Header)
	w.WriteHeader(resp.StatusCode)
	var kept bytes.Buffer
	_, copyErr := io.Copy(flushWriter{w}, io.TeeReader(resp.Body, &limitedBuffer{&kept, relayUsageBytes}))
	var u dialect.Usage
	if gjson.ValidBytes(kept.Bytes()) {
		u = relayUsage(d, kept.Bytes())
	}
	settle(flow.Outcome{Status: resp.StatusCode, Usage: u, Err: copyErr, Duration: time.Since(start)})
}

// relayUsage reads the usage object of a relayed JSON answer: Chat-style
// prompt/completion tokens (embeddings, completions), Responses-style
// input/output tokens, or the Anthropic fields.
func relayUsage(d dialect.Name, body []byte) dialect.Usage {
	if d == dialect.AnthropicMessages {
		return dialect.ParseUsage(dialect.AnthropicMessages, body)
	}
	if gjson.GetBytes(body, "usage.input_tokens").Exists() {
		return dialect.ParseUsage(dialect.OpenAIResponses, body)
	}
	return dialect.ParseUsage(dialect.OpenAIChat, body)
}

// admissionRefused answers a refused admission: 429 for a budget (final for
// the period: x-should-retry false, Retry-After until it resets), else 503.
func (s *Server) admissionRefused(w http.ResponseWriter, d dialect.Name, err error) int {
	if errors.Is(err, flow.ErrBudgetExceeded) {
		w.Header().Set("X-Should-Retry", "false")
		if ra := flow.RetryAfter(err); ra > 0 {
			w.Header().Set("Retry-After", strconv.FormatInt(int64((ra+time.Second-1)/time.Second), 10))
		}
		writeError(w, d, http.StatusTooManyRequests, "budget exceeded for this principal or account; see GET /v1/usage")
		return http.StatusTooManyRequests
	}
	writeError(w, d, http.StatusServiceUnavailable, "usage admission is unavailable")
	return http.StatusServiceUnavailable
}

type flushWriter struct{ w http.ResponseWriter }

func (f flushWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if fl, ok := f.w.(http.Flusher); ok {
		fl.Flush()
	}
	return n, err
}

// limitedBuffer keeps the first max bytes written to it and drops the rest.
type limitedBuffer struct {
	b   *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.b.Len(); room > 0 {
		l.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
