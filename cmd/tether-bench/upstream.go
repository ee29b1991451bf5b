package main

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"sync"
)

// The fake upstream is purpose-built to cost as little as possible so that
// the proxies, not it, are measured: a fixed Chat Completions body, or a
// fixed SSE answer of streamChunks events flushed one by one like a real
// provider's.

const streamChunks = 20

// chatJSON is the non-streamed answer.
var chatJSON = []byte(`{"id":"chatcmpl-bench","object":"chat.completion","created":1700000000,"model":"bench-model",` +
	`"choices":[{"index":0,"message":{"role":"assistant","content":"We will use PostgreSQL, not MongoDB. The plan is recorded."},"finish_reason":"stop"}],` +
	`"usage":{"prompt_tokens":42,"completion_tokens":14,"total_tokens":56}}`)

// sseEvents is the streamed answer: content deltas, a finish chunk, a usage
// chunk and [DONE]; streamChunks events in all.
var sseEvents = func() [][]byte {
	words := []string{"We", " will", " use", " PostgreSQL", ",", " not", " MongoDB", ".", " The", " plan", " is", " recorded", " in", " the", " capsule", " now", "."}
	head := `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"bench-model","choices":[{"index":0,"delta":`
	var evs [][]byte
	for _, w := range words[:streamChunks-3] {
		evs = append(evs, []byte(head+`{"content":`+strconv.Quote(w)+`},"finish_reason":null}]}`+"\n\n"))
	}
	evs = append(evs,
		[]byte(head+`{},"finish_reason":"stop"}]}`+"\n\n"),
		[]byte(`data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"bench-model","choices":[],"usage":{"prompt_tokens":42,"completion_tokens":17,"total_tokens":59}}`+"\n\n"),
		[]byte("data: [DONE]\n\n"),
	)
	return evs
}()

func eventsLen(evs [][]byte) int {
	n := 0
	for _, e := range evs {
		n += len(e)
	}
	return n
}

var streamFlag = []byte(`"stream":true`)

// streams reports whether a request asks for an event stream. The agent
// workloads write the flag among their last fields, and every proxy under
// test keeps the field order, so only the body's end is searched: a search
// of the whole body cost the fake model more CPU than the proxies did (a
// JSON body is full of quotes, the pattern's first byte), on the CPUs the
// proxies share with it. A proxy that moved the flag would get the wrong
// answer, which the client counts as an error (answerLen).
func streams(body []byte) bool {
	if len(body) > 4<<10 {
		body = body[len(body)-64:]
	}
	return bytes.Contains(body, streamFlag)
}

// upstreamHandler answers POST /v1/chat/completions.
// bodyBufs are the fake model's request buffers.
var bodyBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func upstreamHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		anthropic := r.URL.Path == "/v1/messages"
		if r.Method != http.MethodPost || (r.URL.Path != "/v1/chat/completions" && !anthropic) {
			http.Error(w, fmt.Sprintf("bench upstream: no %s %s", r.Method, r.URL.Path), http.StatusNotFound)
			return
		}
		// The body is read into a buffer the fake model reuses: a
		// provider's memory is not the proxy's, and a fresh 200 KB–2 MB
		// buffer per request (half of what this process allocated) made
		// the garbage collector run for the proxies under test.
		buf := bodyBufs.Get().(*bytes.Buffer)
		defer bodyBufs.Put(buf)
		buf.Reset()
		if _, err := buf.ReadFrom(r.Body); err != nil {
			http.Error(w, "bench upstream: read body", http.StatusBadRequest)
			return
		}
		body := buf.Bytes()
		answer, events := chatJSON, sseEvents
		if anthropic {
			answer, events = messageJSON, messageEvents
		}
		if !streams(body) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", strconv.Itoa(len(answer)))
			_, _ = w.Write(answer)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		rc := http.NewResponseController(w)
		for _, ev := range events {
			if _, err := w.Write(ev); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
		}
	})
}

// requestBody is the client's request: a small, realistic Chat Completions
// call.
func requestBody(stream bool) []byte {
	s := ""
	if stream {
		s = `"stream":true,"stream_options":{"include_usage":true},`
	}
	return []byte(`{"model":"bench-model",` + s + `"messages":[` +
		`{"role":"system","content":"You are a coding agent. Follow the accepted plan."},` +
		`{"role":"user","content":"Use PostgreSQL, not MongoDB. Make a plan and record it."}],` +
		`"temperature":0.2,"max_tokens":256}`)
}

// answerLen is the byte length a client must receive.
func answerLen(w *workload, stream bool) int {
	switch {
	case w.agent() && stream:
		return eventsLen(messageEvents)
	case w.agent():
		return len(messageJSON)
	case stream:
		return eventsLen(sseEvents)
	}
	return len(chatJSON)
}
