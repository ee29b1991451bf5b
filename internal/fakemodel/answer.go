package fakemodel

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// answer is one Reply made concrete for one request: ids, usage and tool-call
// ids filled in.
type answer struct {
	req     *Request
	reply   Reply
	model   string
	created int64
	calls   []ToolCall

	inTokens, outTokens, cacheTokens int64
}

func newAnswer(req *Request, reply Reply) *answer {
	a := &answer{
		req:     req,
		reply:   reply,
		model:   req.Model(),
		created: time.Now().Unix(),
	}
	prefix := "call_"
	if req.Dialect == DialectMessages {
		prefix = "toolu_"
	}
	outBytes := len(reply.Text)
	for _, tc := range reply.ToolCalls {
		if tc.ID == "" {
			tc.ID = prefix + randomID()
		}
		if strings.TrimSpace(tc.Arguments) == "" {
			tc.Arguments = "{}"
		}
		outBytes += len(tc.Name) + len(tc.Arguments)
		a.calls = append(a.calls, tc)
	}
	a.inTokens = reply.InputTokens
	if a.inTokens == 0 {
		a.inTokens = estimateTokens(len(req.Body))
	}
	a.outTokens = reply.OutputTokens
	if a.outTokens == 0 {
		a.outTokens = estimateTokens(outBytes)
	}
	a.cacheTokens = reply.CacheReadTokens
	return a
}

// estimateTokens is the usual four-bytes-per-token rough count, at least 1.
func estimateTokens(n int) int64 { return max(1, int64(n)/4) }

// randomID is 24 hex digits from crypto/rand.
func randomID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func randomBase64(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// splitWords cuts text into chunks of a few words; joined, they give back
// text exactly.
func splitWords(text string) []string {
	if text == "" {
		return nil
	}
	words := strings.SplitAfter(text, " ")
	const perChunk = 3
	var out []string
	for i := 0; i < len(words); i += perChunk {
		out = append(out, strings.Join(words[i:min(i+perChunk, len(words))], ""))
	}
	return out
}

// splitRunes cuts s into pieces of about n bytes on rune boundaries.
func splitRunes(s string, n int) []string {
	var out []string
	for len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		if cut == 0 {
			_, cut = utf8.DecodeRuneInString(s)
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// sse writes server-sent events, flushing after each one.
type sse struct {
	ctx    context.Context
	w      http.ResponseWriter
	rc     *http.ResponseController
	delay  time.Duration
	fail   bool
	sent   int
	deltas int
}

func (a *answer) startSSE(ctx context.Context, w http.ResponseWriter) *sse {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	setRequestID(h, a.req.Dialect)
	w.WriteHeader(http.StatusOK)
	return &sse{ctx: ctx, w: w, rc: http.NewResponseController(w), delay: a.reply.ChunkDelay, fail: a.reply.FailMidStream}
}

// event writes one event (an empty name writes a bare data line). It reports
// false when the client is gone.
func (e *sse) event(name string, data any) bool {
	if e.sent > 0 && !wait(e.ctx, e.delay) {
		return false
	}
	if e.ctx.Err() != nil {
		return false
	}
	b, err := json.Marshal(data)
	if err != nil {
		panic(fmt.Sprintf("fakemodel: marshal %s event: %v", name, err))
	}
	return e.raw(name, b)
}

func (e *sse) raw(name string, data []byte) bool {
	var buf []byte
	if name != "" {
		buf = append(buf, "event: "...)
		buf = append(buf, name...)
		buf = append(buf, '\n')
	}
	buf = append(buf, "data: "...)
	buf = append(buf, data...)
	buf = append(buf, "\n\n"...)
	if _, err := e.w.Write(buf); err != nil {
		return false
	}
	if err := e.rc.Flush(); err != nil {
		return false
	}
	e.sent++
	return true
}

// delta writes a content delta; with FailMidStream the connection is aborted
// right after the first one.
func (e *sse) delta(name string, data any) bool {
	if !e.event(name, data) {
		return false
	}
	e.deltas++
	if e.fail {
		panic(http.ErrAbortHandler)
	}
	return true
}

// beforeEnd aborts a FailMidStream answer that had no delta to break.
func (e *sse) beforeEnd() {
	if e.fail {
		panic(http.ErrAbortHandler)
	}
}

func setRequestID(h http.Header, dialect string) {
	if dialect == DialectMessages {
		h.Set("request-id", "req_"+randomID())
		return
	}
	h.Set("x-request-id", "req_"+randomID())
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("fakemodel: marshal body: %v", err))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// writeError answers status with the dialect's own error body.
func writeError(w http.ResponseWriter, dialect string, status int, msg string) {
	setRequestID(w.Header(), dialect)
	if dialect == DialectGemini {
		writeJSON(w, status, map[string]any{
			"error": map[string]any{"code": status, "message": msg, "status": geminiStatus(status)},
		})
		return
	}
	if dialect == DialectMessages {
		writeJSON(w, status, map[string]any{
			"type":       "error",
			"error":      map[string]any{"type": anthropicErrorType(status), "message": msg},
			"request_id": "req_" + randomID(),
		})
		return
	}
	typ, code := openAIErrorType(status)
	writeJSON(w, status, map[string]any{
		"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": code},
	})
}

func anthropicErrorType(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusMethodNotAllowed, http.StatusUpgradeRequired:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusPaymentRequired:
		return "billing_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case http.StatusGatewayTimeout:
		return "timeout_error"
	case 529:
		return "overloaded_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

// openAIErrorType returns the error type and code (nil when OpenAI sends null).
func openAIErrorType(status int) (string, any) {
	switch status {
	case http.StatusUnauthorized:
		return "invalid_request_error", "invalid_api_key"
	case http.StatusForbidden:
		return "invalid_request_error", "unsupported_country_region_territory"
	case http.StatusNotFound:
		return "invalid_request_error", "model_not_found"
	case http.StatusTooManyRequests:
		return "requests", "rate_limit_exceeded"
	case http.StatusUpgradeRequired:
		return "invalid_request_error", "websocket_not_supported"
	}
	if status >= 500 {
		return "server_error", nil
	}
	return "invalid_request_error", nil
}

func writeModels(w http.ResponseWriter, req *Request) {
	if req.Header.Get("anthropic-version") != "" {
		writeJSON(w, http.StatusOK, map[string]any{
			"data": []any{map[string]any{
				"type": "model", "id": DefaultModel, "display_name": "Fake Model",
				"created_at": "2025-01-01T00:00:00Z",
			}},
			"has_more": false, "first_id": DefaultModel, "last_id": DefaultModel,
		})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list",
		"data": []any{map[string]any{
			"id": DefaultModel, "object": "model", "created": 1735689600, "owned_by": "fakemodel",
		}},
	})
}

func geminiStatus(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusMethodNotAllowed:
		return "INVALID_ARGUMENT"
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	}
	return "INTERNAL"
}
