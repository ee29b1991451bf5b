// Package server is Tether's HTTP front: one route per dialect endpoint,
// authentication, size limits, errors in each dialect's own format, and the
// streaming pass-through to the upstream B-leg with hooks around it.
package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/tether-dev/tether/internal/auth"
	"github.com/tether-dev/tether/internal/compaction"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/flow"
	"github.com/tether-dev/tether/internal/metrics"
	"github.com/tether-dev/tether/internal/upstream"
)

// Options wires a Server.
type Options struct {
	Config   *config.Config
	Secret   []byte
	Logger   *slog.Logger
	Registry *metrics.Registry // metrics are registered here and served on /metrics
	Client   *upstream.Client
	Detector flow.Detector // runs first on every request; its verdict is Exchange.Verdict
	Hooks    []flow.Hook   // run in order before the B-leg, after the Detector
	Admitter flow.Admitter // nil: admit everything
	// Ready reports readiness (store reachable, …); nil: always ready.
	Ready func(ctx context.Context) error
	// Extra routes (usage API, admin) mounted on the same mux.
	Mount func(mux *http.ServeMux)
}

// Server is the proxy's http.Handler.
type Server struct {
	opt     Options
	cfg     *config.Config
	auth    *auth.Authenticator
	router  *upstream.Router
	client  *upstream.Client
	log     *slog.Logger
	mux     *http.ServeMux
	metrics *httpMetrics
	relays  sync.Pool // *relayBuffers, reused across streamed answers

	auxNonces nonceSet // extractor-call markers already accepted

	hop     string       // this process's token in upstream.HeaderVia
	handler http.Handler // the routes behind the loop guard
}

// New returns a Server.
func New(opt Options) *Server {
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
	}
	if opt.Registry == nil {
		opt.Registry = metrics.NewRegistry()
	}
	if opt.Client == nil {
		opt.Client = upstream.NewClient()
	}
	s := &Server{
		opt:     opt,
		cfg:     opt.Config,
		auth:    auth.New(opt.Config, opt.Secret),
		router:  upstream.NewRouter(opt.Config),
		client:  opt.Client,
		log:     opt.Logger,
		mux:     http.NewServeMux(),
		metrics: newHTTPMetrics(opt.Registry),
		hop:     newHopToken(),
	}
	s.handler = s.guardLoops(s.mux)
	m := s.mux
	m.HandleFunc("POST /v1/chat/completions", s.proxy(dialect.OpenAIChat, config.FamilyOpenAI))
	m.HandleFunc("POST /v1/responses", s.proxy(dialect.OpenAIResponses, config.FamilyOpenAI))
	m.HandleFunc("POST /v1/responses/compact", s.proxy(dialect.OpenAIResponses, config.FamilyOpenAI))
	m.HandleFunc("POST /v1/messages", s.proxy(dialect.AnthropicMessages, config.FamilyAnthropic))
	m.HandleFunc("POST /v1/messages/count_tokens", s.proxy(dialect.AnthropicMessages, config.FamilyAnthropic))
	for _, v := range []string{"v1beta", "v1", "v1alpha"} {
		m.HandleFunc("POST /"+v+"/models/{call}", s.proxy(dialect.Gemini, config.FamilyGemini))
	}
	m.HandleFunc("GET /v1beta/models", s.models)
	m.HandleFunc("GET /v1/responses", s.websocketRefused)
	m.HandleFunc("GET /v1/models", s.models)
	m.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	m.HandleFunc("GET /readyz", s.readyz)
	m.Handle("GET /metrics", opt.Registry.Handler())
	if opt.Mount != nil {
		opt.Mount(m)
	}
	m.HandleFunc("/v1/", s.relayOther)
	m.HandleFunc("/v1beta/", s.relayOther)
	m.HandleFunc("/", s.notFound)
	return s
}

// Authenticate exposes the server's principal resolution to mounted routes.
func (s *Server) Authenticate(h http.Header) (auth.Principal, error) { return s.auth.Authenticate(h) }

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, dialectForPath(r.URL.Path, r.Header), http.StatusNotFound, fmt.Sprintf("no such endpoint: %s %s", r.Method, r.URL.Path))
}

func (s *Server) websocketRefused(w http.ResponseWriter, r *http.Request) {
	// Codex tries a WebSocket first; 426 makes it fall back to HTTP+SSE.
	w.Header().Set("Upgrade", "websocket")
	writeError(w, dialect.OpenAIResponses, http.StatusUpgradeRequired, "WebSocket transport is not supported by this proxy; use HTTP streaming")
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if s.opt.Ready != nil {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := s.opt.Ready(ctx); err != nil {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
	}
	io.WriteString(w, "ready\n")
}

// dialectForPath picks the error dialect for requests that never reached a
// dialect route.
func dialectForPath(p string, h http.Header) dialect.Name {
	if strings.HasPrefix(p, "/v1beta/") || strings.HasPrefix(p, "/v1alpha/") || dialect.GeminiMethod(p) != "" || h.Get("x-goog-api-key") != "" {
		return dialect.Gemini
	}
	if strings.HasPrefix(p, "/v1/messages") || h.Get("anthropic-version") != "" || h.Get("x-api-key") != "" {
		return dialect.AnthropicMessages
	}
	return dialect.OpenAIChat
}

func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// models passes GET /v1/models through to the provider the caller's dialect
// implies (Anthropic when anthropic-version or x-api-key is present).
func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	d := dialectForPath(r.URL.Path, r.Header)
	if _, err := s.auth.Authenticate(r.Header); err != nil {
		writeError(w, d, http.StatusUnauthorized, "missing or invalid API key: send your Tether key as a Bearer token or x-api-key")
		return
	}
	t, err := s.defaultTarget(familyOf(d))
	if err != nil {
		writeError(w, d, http.StatusNotFound, err.Error())
		return
	}
	req, err := outbound(r.Context(), t, http.MethodGet, r.URL.RequestURI(), r.Header, nil)
	if err != nil {
		writeError(w, d, http.StatusBadGateway, "upstream request could not be built")
		return
	}
	resp, err := s.client.Do(req)
	if err != nil {
		_ = s.upstreamError(w, d, err)
		return
	}
	defer resp.Body.Close()
	copyResponseHeader(w.Header(), resp.Header)
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// upstreamError answers a failed B-leg in the caller's dialect and returns
// the status it sent.
func (s *Server) upstreamError(w http.ResponseWriter, d dialect.Name, err error) int {
	status := upstream.ErrorStatus(err)
	msg := "the upstream provider could not be reached"
	if status == http.StatusGatewayTimeout {
		msg = "the upstream provider did not answer in time"
	}
	writeError(w, d, status, msg)
	return status
}

func (s *Server) proxy(d dialect.Name, family string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		x := &flow.Exchange{ID: newID(), Start: time.Now(), Dialect: d, Method: r.Method, Path: r.URL.RequestURI(), Header: r.Header, Kind: "primary"}
		status, bytesIn, bytesOut := 0, 0, int64(0)
		defer func() {
			s.metrics.observe(d, status, time.Since(x.Start))
			s.log.LogAttrs(r.Context(), slog.LevelInfo, "request",
				slog.String("id", x.ID), slog.String("dialect", string(d)), slog.String("principal", x.Principal.ID),
				slog.String("route", routeLabel(x.Target)), slog.String("session", x.Session), slog.String("a_leg", x.ALeg),
				slog.String("agent", x.Agent), slog.Bool("compaction", x.Compaction), slog.Int("status", status),
				slog.Int("bytes_in", bytesIn), slog.Int64("bytes_out", bytesOut),
				slog.Int64("duration_us", time.Since(x.Start).Microseconds()))
		}()
		fail := func(code int, msg string) {
			status = code
			writeError(w, d, code, msg)
		}

		// Extractor loop protection: a marker signed for this very call
		// (flow.SignAux: its body, its depth, a nonce used once, an expiry
		// of seconds) makes this an internal request; depth above 1 is
		// refused. The marker's shape and expiry are checked now, its MAC
		// once the body is in.
		marker, markerDepth := r.Header.Get(upstream.HeaderAux), 0
		if marker != "" {
			markerDepth, _ = strconv.Atoi(r.Header.Get(upstream.HeaderAuxDepth))
			if _, _, err := flow.ParseAux(marker, time.Now()); err != nil || markerDepth < 1 {
				s.metrics.auxRefused.Inc()
				fail(http.StatusForbidden, "invalid internal request marker")
				return
			}
			x.Internal = true
		}
		// Nothing past this point reads a caller's X-Tether-* header, and
		// none goes upstream.
		upstream.DropTetherHeaders(r.Header)

		// An internal request (the extractor routed back through this proxy)
		// is proven by its marker, not by a proxy key: it carries the
		// provider's key, and its usage is already recorded by the
		// extractor against the originating principal.
		p := auth.Principal{ID: flow.InternalPrincipal, Account: flow.InternalPrincipal}
		if !x.Internal {
			var err error
			if p, err = s.auth.Authenticate(r.Header); err != nil {
				fail(http.StatusUnauthorized, "missing or invalid API key: send your Tether key as a Bearer token or x-api-key")
				return
			}
		}
		x.Principal = p

		// The body has a deadline of its own: a caller that sends half a
		// body cannot hold the connection. It is lifted once the body is
		// in, so it never cuts the answer.
		rc := http.NewResponseController(w)
		if t := s.cfg.HTTP.BodyReadTimeout; t > 0 {
			_ = rc.SetReadDeadline(time.Now().Add(t))
		}
		body, lent, err := readBody(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes), r.ContentLength, s.cfg.MaxBodyBytes)
		defer lent.release() // the handler's hold
		x.SetHold(lent.hold)
		bytesIn = len(body)
		if err == nil {
			_ = rc.SetReadDeadline(time.Time{})
		} else {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				fail(http.StatusRequestEntityTooLarge, fmt.Sprintf("request body exceeds the %d-byte limit", s.cfg.MaxBodyBytes))
				return
			}
			if upstream.IsTimeout(err) {
				w.Header().Set("Connection", "close")
				fail(http.StatusRequestTimeout, "request body was not received within http.body_read_timeout")
				return
			}
			fail(http.StatusBadRequest, "request body could not be read")
			return
		}
		if x.Internal {
			nonce, exp, err := flow.VerifyAux(s.opt.Secret, marker, markerDepth, body, time.Now())
			if err != nil || !s.auxNonces.use(nonce, exp, time.Now()) {
				s.metrics.auxRefused.Inc()
				fail(http.StatusForbidden, "invalid internal request marker")
				return
			}
			if markerDepth > 1 {
				fail(http.StatusLoopDetected, "auxiliary request depth exceeded")
				return
			}
		}
		// What the principal's recent requests were is remembered: an
		// agent's next one is scanned only where it differs.
		v, err := dialect.ParseFrom(p.ID, d, x.Path, r.Header, body)
		if err != nil {
			fail(http.StatusBadRequest, parseErrorMessage(err))
			return
		}
		x.View, x.Body = v, body
		model := v.Model()
		if model == "" {
			if d == dialect.Gemini {
				fail(http.StatusNotFound, "the path names no model: use /v1beta/models/{model}:generateContent")
				return
			}
			fail(http.StatusBadRequest, "request has no \"model\" field")
			return
		}
		x.Target, err = s.router.Route(family, model)
		if err != nil {
			fail(http.StatusNotFound, err.Error())
			return
		}
		if f := dialect.ProviderContextField(v); f != "" && !x.Target.Provider.ServesServerCompaction(d == dialect.OpenAIChat) {
			fail(http.StatusBadRequest, fmt.Sprintf("the provider this model is routed to (%q) does not support server-side context management; "+
				"remove %q from the request or route the model to a provider that supports it (providers[].server_compaction)", x.Target.Provider.Name, f))
			return
		}
		if x.Target.Model != model && d == dialect.Gemini {
			x.Path = dialect.GeminiSetModel(x.Path, x.Target.Model)
		} else if x.Target.Model != model {
			if nb, err := sjson.SetBytes(x.Body, "model", x.Target.Model); err == nil {
				x.Body = nb
			}
		}

		if s.opt.Detector != nil {
			s.detect(r.Context(), x)
		}
		hooksStart, bodyIn := time.Now(), len(x.Body)
		for _, h := range s.opt.Hooks {
			s.runHook(r.Context(), h, x)
		}
		s.debugPrepared(r.Context(), x, model, time.Since(hooksStart), bodyIn)

		settle := func(flow.Outcome) {}
		if s.opt.Admitter != nil {
			st, err := s.opt.Admitter.Admit(r.Context(), x)
			if err != nil {
				// A budget refusal is not a rate limit: retrying now cannot
				// succeed, so the SDKs are told not to.
				status = s.admissionRefused(w, d, err)
				x.Finish(flow.Outcome{Err: err})
				return
			}
			settle = st
		}

		out := s.forward(w, r, x, lent)
		status = out.Status
		if status == 0 {
			status = out.errStatus
		}
		bytesOut = out.bytesOut
		settle(out.Outcome)
		x.Finish(out.Outcome)
	}
}

// readBody reads a request body whole. The declared Content-Length is the
// caller's claim, and the reader decides where the body ends:
//
//   - A claim up to trustedBody (agents' histories, 100 KB–2 MB) is
//     allocated at once, the body read into it with no copy, while the
//     bytes so allocated by reads still under way stay within trustBudget
//     for the whole process: callers declaring bodies they never send hold
//     at most that much. A claim of minLentBody or more is read into a
//     lent buffer (bodypool.go), returned as lent with the caller's hold:
//     release it once nothing reads the body.
//   - Otherwise the buffer starts at 64 KiB and grows fourfold towards the
//     claim, never to more than four times what has arrived: a caller that
//     declares 32 MiB and sends nothing holds 64 KiB.
func readBody(r io.Reader, declared, limit int64) (body []byte, lent *lentBody, err error) {
	if declared <= 0 || declared > limit {
		body, err = io.ReadAll(r)
		return body, nil, err
	}
	want := int(declared) + 1 // +1: room to see the end
	var buf []byte
	if want <= trustedBody {
		if trusted.Add(int64(want)) <= trustBudget {
			defer trusted.Add(-int64(want))
			if lent = lendBody(want); lent != nil {
				buf = lent.buf
			} else {
				buf = make([]byte, 0, want)
			}
		} else {
			trusted.Add(-int64(want))
		}
	}
	if buf == nil {
		buf = make([]byte, 0, min(want, firstBodyChunk))
	}
	for {
		if len(buf) == cap(buf) {
			if c := min(4*cap(buf), want); c > cap(buf) {
				buf = append(make([]byte, 0, c), buf...)
			} else {
				buf = append(buf, 0)[:len(buf)] // longer than declared
			}
			if lent != nil {
				lent.release() // copied: nothing reads the lent buffer
				lent = nil
			}
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, lent, nil
		}
		if err != nil {
			return buf, lent, err
		}
	}
}

const (
	// firstBodyChunk is readBody's first buffer for a claim it does not
	// allocate at once.
	firstBodyChunk = 64 << 10
	// trustedBody is the largest claim readBody allocates before the body
	// arrives, and trustBudget what all reads under way may so allocate.
	trustedBody = 4 << 20
	trustBudget = 64 << 20
)

// trusted is the bytes readBody has allocated for claims whose bodies are
// still arriving.
var trusted atomic.Int64

func routeLabel(t upstream.Target) string {
	if t.Provider.Name == "" {
		return ""
	}
	return t.Route()
}

// detect records the Detector's verdict on x; a panic leaves the zero
// verdict and the request continues.
func (s *Server) detect(ctx context.Context, x *flow.Exchange) {
	defer func() {
		if rec := recover(); rec != nil {
			x.Verdict = compaction.Result{}
			s.metrics.hookFailures.Inc()
			s.log.Error("detector panicked; request continues unclassified", slog.String("id", x.ID))
		}
	}()
	x.Verdict = s.opt.Detector.Detect(ctx, x)
}

// debugPrepared logs, at debug level, what classification and preservation
// decided for x before it is forwarded: ids, rule, lineage, sizes and the
// time the hooks took, never content.
func (s *Server) debugPrepared(ctx context.Context, x *flow.Exchange, model string, hooks time.Duration, bodyIn int) {
	if !s.log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	v := x.Verdict
	s.log.LogAttrs(ctx, slog.LevelDebug, "request classified", slog.String("id", x.ID), slog.String("dialect", string(x.Dialect)),
		slog.String("model", model), slog.String("route", routeLabel(x.Target)),
		slog.Bool("compaction", v.Compaction), slog.Bool("post_compaction", v.PostCompaction), slog.Bool("title", v.Title),
		slog.String("kind", string(v.Kind)), slog.String("agent", v.Agent), slog.String("rule", v.RuleID), slog.Int("rule_version", v.RuleVersion),
		slog.Bool("internal", x.Internal))
	s.log.LogAttrs(ctx, slog.LevelDebug, "request prepared", slog.String("id", x.ID), slog.String("session", x.Session), slog.String("a_leg", x.ALeg),
		slog.Int("body_bytes_in", bodyIn), slog.Int("body_bytes_out", len(x.Body)), slog.Int64("hooks_us", hooks.Microseconds()))
}

func (s *Server) runHook(ctx context.Context, h flow.Hook, x *flow.Exchange) {
	orig := x.Body
	defer func() {
		if rec := recover(); rec != nil {
			x.Body = orig
			s.metrics.hookFailures.Inc()
			s.log.Error("hook panicked; request continues unchanged", slog.String("id", x.ID))
		}
	}()
	if err := h.Before(ctx, x); err != nil {
		x.Body = orig
		s.metrics.hookFailures.Inc()
		s.log.Warn("hook failed; request continues unchanged", slog.String("id", x.ID), slog.String("error_kind", fmt.Sprintf("%T", err)))
	}
}

type forwardResult struct {
	flow.Outcome
	errStatus int
	bytesOut  int64
}

// forward opens the B-leg and relays the answer.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, x *flow.Exchange, lent *lentBody) forwardResult {
	var res forwardResult
	ctx, cancel := context.WithTimeout(r.Context(), x.Target.Provider.Timeout)
	defer cancel()
	req, err := outbound(ctx, x.Target, x.Method, x.Path, x.Header, x.Body)
	if err != nil {
		res.Err, res.errStatus = err, http.StatusBadGateway
		writeError(w, x.Dialect, http.StatusBadGateway, "upstream request could not be built")
		return res
	}
	// The transport may still be writing the body when the answer has
	// come and the handler returned: the body holds its buffer until the
	// transport closes it (x.Body may be a hook's copy; holding costs
	// nothing then).
	holdOutbound(req, lent)
	resp, err := s.client.Do(req)
	if err != nil {
		res.Err = err
		res.Duration = time.Since(x.Start)
		if r.Context().Err() != nil {
			res.errStatus = 499 // client went away
			return res
		}
		res.errStatus = s.upstreamError(w, x.Dialect, err)
		return res
	}
	defer resp.Body.Close()
	res.Status = resp.StatusCode
	res.TTFB = time.Since(x.Start)
	x.Opened(resp.StatusCode)
	s.log.LogAttrs(ctx, slog.LevelDebug, "upstream answered", slog.String("id", x.ID), slog.String("provider", x.Target.Provider.Name),
		slog.String("route", routeLabel(x.Target)), slog.Int("status", resp.StatusCode),
		slog.Bool("stream", strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")),
		slog.Int64("ttfb_us", res.TTFB.Microseconds()))

	// A provider's redirect is never followed (it would carry the body and
	// the key to a host nobody configured) nor relayed (a client would
	// follow it with its own key).
	if upstream.IsRedirect(resp.StatusCode) {
		return s.upstreamFault(w, x, res, faultRedirect, http.StatusBadGateway,
			fmt.Sprintf("the upstream provider answered with a redirect (HTTP %d), which Tether does not follow; check the provider's base_url", resp.StatusCode))
	}
	ct := resp.Header.Get("Content-Type")
	if resp.StatusCode == http.StatusOK && strings.HasPrefix(ct, "text/event-stream") {
		res.Stream = true
		s.relayStream(ctx, w, resp, x, &res)
		res.Duration = time.Since(x.Start)
		return res
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, s.cfg.MaxResponseBytes+1))
	if err == nil && int64(len(data)) > s.cfg.MaxResponseBytes {
		return s.upstreamFault(w, x, res, faultTooLarge, http.StatusBadGateway,
			fmt.Sprintf("the upstream answer exceeds the %d-byte limit (max_response_bytes)", s.cfg.MaxResponseBytes))
	}
	if err == nil && (!dialect.Valid(data) || !gjson.ParseBytes(data).IsObject()) {
		// An HTML page, a stream where an object was due, binary: never
		// relayed as if it were an answer or the provider's own error.
		status, msg := http.StatusBadGateway, fmt.Sprintf("the upstream provider sent a malformed answer (HTTP %d, not a JSON object)", resp.StatusCode)
		if resp.StatusCode >= 400 {
			status = resp.StatusCode
			msg = fmt.Sprintf("the upstream provider failed (HTTP %d) without a JSON error body", resp.StatusCode)
		}
		return s.upstreamFault(w, x, res, faultMalformed, status, msg)
	}
	if err != nil {
		res.Err = err
		res.Duration = time.Since(x.Start)
		if r.Context().Err() != nil {
			return res
		}
		res.Status = 0
		res.errStatus = s.upstreamError(w, x.Dialect, err)
		return res
	}
	if resp.StatusCode == http.StatusOK {
		res.Usage = dialect.ParseUsage(x.Dialect, data)
		data = x.EditBody(data)
	}
	copyResponseHeader(w.Header(), resp.Header)
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(resp.StatusCode)
	n, _ := w.Write(data)
	res.bytesOut = int64(n)
	res.Duration = time.Since(x.Start)
	return res
}

// Kinds of upstream protocol fault (the label of tether_upstream_faults_total).
const (
	faultRedirect  = "redirect"
	faultTooLarge  = "too_large"
	faultMalformed = "malformed_body"
	faultStream    = "malformed_stream"
	faultTruncated = "no_terminal_event"
)

// upstreamFault answers a provider's protocol fault with an error in the
// caller's dialect, logs it (no content) and counts it.
func (s *Server) upstreamFault(w http.ResponseWriter, x *flow.Exchange, res forwardResult, kind string, status int, msg string) forwardResult {
	s.noteFault(x, kind, res.Status)
	res.Err = fmt.Errorf("upstream protocol fault: %s", kind)
	res.Status, res.errStatus = 0, status
	res.Duration = time.Since(x.Start)
	writeError(w, x.Dialect, status, msg)
	return res
}

func (s *Server) noteFault(x *flow.Exchange, kind string, upstreamStatus int) {
	s.metrics.faults.WithLabelValues(kind).Inc()
	s.log.Warn("upstream protocol fault", slog.String("id", x.ID), slog.String("kind", kind),
		slog.String("route", routeLabel(x.Target)), slog.Int("upstream_status", upstreamStatus))
}

var skipResponseHeaders = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Transfer-Encoding": true, "Content-Length": true,
	"Content-Encoding": true, "Trailer": true, "Upgrade": true, "Proxy-Connection": true,
}

func copyResponseHeader(dst, src http.Header) {
	hop := upstream.ConnectionHeaders(src)
	for k, vv := range src {
		if skipResponseHeaders[http.CanonicalHeaderKey(k)] || hop[http.CanonicalHeaderKey(k)] {
			continue
		}
		dst[k] = vv
	}
}
