package fakemodel

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"
)

// The dialect names recorded in Request.Dialect.
const (
	DialectChat      = "openai-chat"
	DialectResponses = "openai-responses"
	DialectMessages  = "anthropic-messages"
	DialectGemini    = "gemini"
)

// DefaultModel is the model id the fake reports when a request names none, and
// the only entry of its model list.
const DefaultModel = "fake-model"

// maxBodyBytes bounds what one request may upload; the fake is for tests and
// demos, not for arbitrary input.
const maxBodyBytes = 64 << 20

// Request is one recorded inbound request.
type Request struct {
	Seq     int // 1-based arrival order since Start or the last Reset
	Method  string
	Path    string // URL path without the query
	Query   string // raw query, e.g. "beta=true"
	Header  http.Header
	Body    []byte
	Dialect string // DialectChat | DialectResponses | DialectMessages | DialectGemini | "" (models, unknown paths)
}

// Stream reports whether the request asks for a streamed answer (Gemini:
// the streamGenerateContent method).
func (r *Request) Stream() bool {
	if r.Dialect == DialectGemini {
		_, method := geminiCall(r.Path)
		return method == "streamGenerateContent"
	}
	return gjson.GetBytes(r.Body, "stream").Bool()
}

// Model is the request's model (Gemini: from the path), or DefaultModel.
func (r *Request) Model() string {
	if r.Dialect == DialectGemini {
		if m, _ := geminiCall(r.Path); m != "" {
			return m
		}
	}
	if m := gjson.GetBytes(r.Body, "model").String(); m != "" {
		return m
	}
	return DefaultModel
}

// ToolCall is a tool invocation the model should emit.
type ToolCall struct {
	ID        string // empty: generated (call_… for OpenAI, toolu_… for Anthropic)
	Name      string
	Arguments string // JSON object text; empty means "{}"
}

// Reply says what to answer to one request.
type Reply struct {
	Text      string
	ToolCalls []ToolCall

	// Opaque (Responses only) answers with exactly one
	// {"type":"compaction","encrypted_content":…} output item, as Codex remote
	// compaction v2 expects. POST /v1/responses/compact always answers so.
	Opaque bool
	// EncryptedContent is the opaque item's payload; empty: random base64.
	EncryptedContent string

	// Compaction makes an ordinary answer carry a compaction the provider
	// made itself. Anthropic: a {"type":"compaction"} content block leads
	// the content (stream: content_block_start, compaction_delta,
	// content_block_stop); with Alone it is the whole answer and the stop
	// reason is "compaction" (on-demand compaction). Responses: a
	// {"type":"compaction","encrypted_content"} output item leads the
	// output (server-side compaction, context_management).
	Compaction *Compaction
	// AppliedEdits (Anthropic) are reported in context_management.
	// applied_edits of the answer (stream: of the message_delta event).
	AppliedEdits []AppliedEdit

	// Usage, reported as-is in the dialect's fields (OpenAI prompt_tokens /
	// input_tokens include cached tokens; Anthropic input_tokens excludes
	// them). Zero input or output counts are derived from the sizes of the
	// request and the answer.
	InputTokens, OutputTokens, CacheReadTokens int64

	// Status, when non-zero and not 200, is returned with the dialect's error
	// body carrying ErrorMessage.
	Status       int
	ErrorMessage string

	Delay         time.Duration // before the first byte; cut short when the client goes away
	ChunkDelay    time.Duration // between SSE events
	FailMidStream bool          // stream: send part of the answer, then abort the connection
	Hang          bool          // never answer; return when the client goes away or the server closes
	RawBody       string        // non-empty: written verbatim with Status (or 200)
}

// Compaction is a compaction block or item of an answer.
type Compaction struct {
	Content          string // Anthropic: the readable summary
	Signature        string // Anthropic: the block's signature (on-demand compaction signs it)
	EncryptedContent string // opaque payload; Responses: random when empty
	Alone            bool   // Anthropic: the answer is this block only (stop_reason "compaction")
}

// AppliedEdit is one entry of Anthropic's context_management.applied_edits.
type AppliedEdit struct {
	Type                 string `json:"type"` // clear_tool_uses_20250919 | clear_thinking_20251015
	ClearedInputTokens   int64  `json:"cleared_input_tokens"`
	ClearedToolUses      int64  `json:"cleared_tool_uses,omitempty"`
	ClearedThinkingTurns int64  `json:"cleared_thinking_turns,omitempty"`
}

// Responder decides the Reply to a request. It may be called concurrently.
type Responder func(req *Request) Reply

// Server is a running fake provider.
type Server struct {
	// URL is http://127.0.0.1:port, without a trailing slash. Empty for a
	// Server built by New (not listening).
	URL string

	mu        sync.Mutex
	responder Responder
	requests  []Request
	seq       int

	handlers sync.WaitGroup // in-flight handler calls
	closing  bool           // set under mu by Close; no handler starts after it
	closeCtx context.Context
	closeFn  context.CancelFunc

	srv       *http.Server
	serveDone chan struct{}
	closeOnce sync.Once
}

// New returns a Server that is not listening; serve its Handler behind any
// listener. A nil responder answers "ok".
func New(r Responder) *Server {
	s := &Server{}
	s.closeCtx, s.closeFn = context.WithCancel(context.Background())
	s.SetResponder(r)
	return s
}

// Start listens on 127.0.0.1 on a free port and serves the fake until Close.
// It panics when it cannot listen, like httptest.NewServer.
func Start(r Responder) *Server {
	s := New(r)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("fakemodel: listen on loopback: %v", err))
	}
	s.URL = "http://" + ln.Addr().String()
	s.srv = &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return s.closeCtx },
	}
	s.serveDone = make(chan struct{})
	go func() {
		defer close(s.serveDone)
		_ = s.srv.Serve(ln) // returns http.ErrServerClosed on Close
	}()
	return s
}

// Close stops the server: hanging and delayed answers are released, every
// connection is closed, and Close returns once all handlers have returned.
// It is idempotent.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closing = true
		s.mu.Unlock()
		s.closeFn()
		if s.srv != nil {
			_ = s.srv.Close()
			<-s.serveDone
		}
		s.handlers.Wait()
	})
}

// Handler serves the fake's endpoints.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

// Requests returns a copy of the recorded requests in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		r.Header = r.Header.Clone()
		r.Body = bytes.Clone(r.Body)
		out[i] = r
	}
	return out
}

// Reset forgets the recorded requests; the next request gets Seq 1.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = nil
	s.seq = 0
}

// SetResponder replaces the responder for requests that arrive from now on.
// A nil responder answers "ok".
func (s *Server) SetResponder(r Responder) {
	if r == nil {
		r = Static("ok")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.responder = r
}

func (s *Server) record(r *http.Request, body []byte, dialect string) (*Request, Responder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	req := Request{
		Seq:     s.seq,
		Method:  r.Method,
		Path:    r.URL.Path,
		Query:   r.URL.RawQuery,
		Header:  r.Header.Clone(),
		Body:    body,
		Dialect: dialect,
	}
	s.requests = append(s.requests, req)
	// The responder gets its own copy so it cannot alter the record.
	own := req
	own.Header = req.Header.Clone()
	own.Body = bytes.Clone(body)
	return &own, s.responder
}

func dialectOf(path string) string {
	switch path {
	case "/v1/chat/completions":
		return DialectChat
	case "/v1/responses", "/v1/responses/compact":
		return DialectResponses
	case "/v1/messages", "/v1/messages/count_tokens":
		return DialectMessages
	}
	if geminiPath(path) {
		return DialectGemini
	}
	return ""
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	// Add under mu, and never after Close began waiting: a WaitGroup's Add
	// must not race its Wait.
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		http.Error(w, "fake model is shutting down", http.StatusServiceUnavailable)
		return
	}
	s.handlers.Add(1)
	s.mu.Unlock()
	defer s.handlers.Done()

	body, err := readBody(r)
	path := r.URL.Path
	dialect := dialectOf(path)
	req, responder := s.record(r, body, dialect)
	if err != nil {
		writeError(w, errorDialect(req), http.StatusBadRequest, fmt.Sprintf("read request body: %v", err))
		return
	}
	ctx := r.Context()

	switch {
	case path == "/v1/responses" && r.Method == http.MethodGet:
		if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			writeError(w, DialectResponses, http.StatusUpgradeRequired, "websocket transport is not supported; use HTTP")
			return
		}
		writeError(w, DialectResponses, http.StatusMethodNotAllowed, "method not allowed")
		return
	case path == "/v1/models":
		if r.Method != http.MethodGet {
			writeError(w, errorDialect(req), http.StatusMethodNotAllowed, "method not allowed")
			return
		}
		writeModels(w, req)
		return
	case dialect == "":
		writeError(w, errorDialect(req), http.StatusNotFound, fmt.Sprintf("unknown path %s", path))
		return
	case r.Method != http.MethodPost:
		writeError(w, dialect, http.StatusMethodNotAllowed, "method not allowed")
		return
	case len(body) == 0 || !gjson.ValidBytes(body) || !gjson.ParseBytes(body).IsObject():
		writeError(w, dialect, http.StatusBadRequest, "request body must be a JSON object")
		return
	case path == "/v1/messages/count_tokens":
		writeJSON(w, http.StatusOK, map[string]any{"input_tokens": estimateTokens(len(body))})
		return
	case dialect == DialectGemini:
		switch _, method := geminiCall(path); method {
		case "generateContent", "streamGenerateContent":
		case "countTokens":
			writeJSON(w, http.StatusOK, map[string]any{"totalTokens": estimateTokens(len(body))})
			return
		default:
			writeError(w, dialect, http.StatusNotFound, fmt.Sprintf("unknown method %s", method))
			return
		}
	}

	reply := responder(req)
	// Whenever the client goes away or the server closes before the answer
	// is complete, the connection is aborted rather than ended cleanly, so
	// the client never mistakes a cut answer for a whole one.
	defer func() {
		if ctx.Err() != nil {
			panic(http.ErrAbortHandler)
		}
	}()
	if reply.Hang {
		<-ctx.Done()
		return
	}
	if !wait(ctx, reply.Delay) {
		return
	}
	if reply.RawBody != "" {
		writeRaw(w, reply)
		return
	}
	if reply.Status != 0 && reply.Status != http.StatusOK {
		msg := reply.ErrorMessage
		if msg == "" {
			msg = http.StatusText(reply.Status)
		}
		writeError(w, dialect, reply.Status, msg)
		return
	}

	a := newAnswer(req, reply)
	switch {
	case path == "/v1/responses/compact":
		writeJSON(w, http.StatusOK, a.compactBody())
	case dialect == DialectChat:
		a.chat(ctx, w)
	case dialect == DialectResponses:
		a.responses(ctx, w)
	case dialect == DialectMessages:
		a.messages(ctx, w)
	case dialect == DialectGemini:
		a.gemini(ctx, w)
	}
}

func readBody(r *http.Request) ([]byte, error) {
	var rd io.Reader = http.MaxBytesReader(nil, r.Body, maxBodyBytes)
	if strings.EqualFold(r.Header.Get("Content-Encoding"), "gzip") {
		zr, err := gzip.NewReader(rd)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		defer zr.Close()
		rd = io.LimitReader(zr, maxBodyBytes)
	}
	b, err := io.ReadAll(rd)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// errorDialect picks the error body format for paths outside a dialect.
func errorDialect(req *Request) string {
	if req.Dialect != "" {
		return req.Dialect
	}
	if req.Header.Get("anthropic-version") != "" {
		return DialectMessages
	}
	if req.Header.Get("x-goog-api-key") != "" {
		return DialectGemini
	}
	return DialectChat
}

// wait sleeps for d unless ctx ends first; it reports whether to go on.
func wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func writeRaw(w http.ResponseWriter, reply Reply) {
	status := cmpOr(reply.Status, http.StatusOK)
	ct := "application/json"
	trimmed := strings.TrimLeft(reply.RawBody, " \r\n")
	if strings.HasPrefix(trimmed, "data:") || strings.HasPrefix(trimmed, "event:") {
		ct = "text/event-stream"
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(status)
	_, _ = io.WriteString(w, reply.RawBody)
}

func cmpOr(v, def int) int {
	if v != 0 {
		return v
	}
	return def
}
