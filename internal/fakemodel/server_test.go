package fakemodel_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tidwall/gjson"
	"go.uber.org/goleak"

	"github.com/tether-dev/tether/internal/fakemodel"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// do sends one request and returns status, headers and body.
func do(t *testing.T, method, url string, header http.Header, body string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", url, err)
	}
	return resp.StatusCode, resp.Header, b
}

type sseEvent struct {
	Name string
	Data string
}

func parseSSE(t *testing.T, b []byte) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.Data != "" {
				out = append(out, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.Name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.Data = strings.TrimPrefix(line, "data: ")
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	return out
}

func TestEndpoints(t *testing.T) {
	s := start(t, fakemodel.Static("hi"))
	anth := http.Header{"Anthropic-Version": {"2023-06-01"}}

	tests := []struct {
		name, method, path string
		header             http.Header
		body               string
		wantStatus         int
		check              func(t *testing.T, body []byte)
	}{
		{
			name: "count tokens", method: "POST", path: "/v1/messages/count_tokens?beta=true", header: anth,
			body: `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("word ", 100) + `"}]}`, wantStatus: 200,
			check: func(t *testing.T, b []byte) {
				if n := gjson.GetBytes(b, "input_tokens").Int(); n < 100 || n > 200 {
					t.Errorf("input_tokens = %d for a ~560-byte body", n)
				}
			},
		},
		{
			name: "openai models", method: "GET", path: "/v1/models", wantStatus: 200,
			check: func(t *testing.T, b []byte) {
				if gjson.GetBytes(b, "object").String() != "list" || gjson.GetBytes(b, "data.0.object").String() != "model" {
					t.Errorf("body %s, want an OpenAI model list", b)
				}
			},
		},
		{
			name: "anthropic models", method: "GET", path: "/v1/models", header: anth, wantStatus: 200,
			check: func(t *testing.T, b []byte) {
				if gjson.GetBytes(b, "data.0.type").String() != "model" || !gjson.GetBytes(b, "has_more").Exists() {
					t.Errorf("body %s, want an Anthropic model list", b)
				}
			},
		},
		{
			name: "websocket refused", method: "GET", path: "/v1/responses",
			header: http.Header{"Upgrade": {"websocket"}, "Connection": {"Upgrade"}}, wantStatus: 426,
			check: func(t *testing.T, b []byte) {
				if gjson.GetBytes(b, "error.message").String() == "" {
					t.Errorf("body %s, want an OpenAI error", b)
				}
			},
		},
		{
			name: "unknown path", method: "POST", path: "/v2/whatever", body: `{}`, wantStatus: 404,
			check: func(t *testing.T, b []byte) {
				if !gjson.GetBytes(b, "error.message").Exists() {
					t.Errorf("body %s, want JSON error", b)
				}
			},
		},
		{
			name: "invalid json", method: "POST", path: "/v1/messages", header: anth, body: `{"model":`, wantStatus: 400,
			check: func(t *testing.T, b []byte) {
				if gjson.GetBytes(b, "type").String() != "error" || gjson.GetBytes(b, "error.type").String() != "invalid_request_error" {
					t.Errorf("body %s, want an Anthropic invalid_request_error", b)
				}
			},
		},
		{
			name: "messages beta query", method: "POST", path: "/v1/messages?beta=true", header: anth,
			body: `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"x"}]}`, wantStatus: 200,
			check: func(t *testing.T, b []byte) {
				if gjson.GetBytes(b, "content.0.text").String() != "hi" {
					t.Errorf("body %s, want the scripted text", b)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, h, body := do(t, tt.method, s.URL+tt.path, tt.header, tt.body)
			if status != tt.wantStatus {
				t.Fatalf("status = %d, want %d; body %s", status, tt.wantStatus, body)
			}
			if ct := h.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("content-type = %q", ct)
			}
			tt.check(t, body)
		})
	}
}

func TestRequestsRecording(t *testing.T) {
	s := start(t, nil)
	var seenBeforeAnswer []int
	s.SetResponder(func(req *fakemodel.Request) fakemodel.Reply {
		// The request is already recorded when the responder runs.
		for _, r := range s.Requests() {
			seenBeforeAnswer = append(seenBeforeAnswer, r.Seq)
		}
		req.Body[0] = 'X' // must not alter the record
		return fakemodel.Reply{Text: "ok"}
	})

	chatBody := `{"model":"m","messages":[{"role":"user","content":"a"}]}`
	do(t, "POST", s.URL+"/v1/chat/completions", http.Header{"X-Session-Id": {"ses_1"}}, chatBody)
	do(t, "POST", s.URL+"/v1/messages/count_tokens", nil, `{"messages":[]}`)
	do(t, "GET", s.URL+"/v1/models", nil, "")
	do(t, "POST", s.URL+"/v1/responses", nil, `{"model":"m","input":"b"}`)

	type rec struct {
		Seq                   int
		Method, Path, Dialect string
		Session               string
		Body                  string
	}
	var got []rec
	for _, r := range s.Requests() {
		got = append(got, rec{r.Seq, r.Method, r.Path, r.Dialect, r.Header.Get("X-Session-Id"), string(r.Body)})
	}
	want := []rec{
		{1, "POST", "/v1/chat/completions", fakemodel.DialectChat, "ses_1", chatBody},
		{2, "POST", "/v1/messages/count_tokens", fakemodel.DialectMessages, "", `{"messages":[]}`},
		{3, "GET", "/v1/models", "", "", ""},
		{4, "POST", "/v1/responses", fakemodel.DialectResponses, "", `{"model":"m","input":"b"}`},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	// Only generation calls reach the responder; each saw its own record.
	if diff := cmp.Diff([]int{1, 1, 2, 3, 4}, seenBeforeAnswer); diff != "" {
		t.Errorf("records visible to the responder (-want +got):\n%s", diff)
	}

	s.Reset()
	if n := len(s.Requests()); n != 0 {
		t.Fatalf("after Reset: %d requests", n)
	}
	do(t, "GET", s.URL+"/v1/models", nil, "")
	if r := s.Requests(); len(r) != 1 || r[0].Seq != 1 {
		t.Errorf("after Reset the next request = %+v, want Seq 1", r)
	}
}

func TestScriptOrderThenRepeatsLast(t *testing.T) {
	s := start(t, fakemodel.Script(fakemodel.Reply{Text: "one"}, fakemodel.Reply{Text: "two"}))
	var got []string
	for range 4 {
		_, _, b := do(t, "POST", s.URL+"/v1/chat/completions", nil, `{"model":"m","messages":[]}`)
		got = append(got, gjson.GetBytes(b, "choices.0.message.content").String())
	}
	if diff := cmp.Diff([]string{"one", "two", "two", "two"}, got); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
}

func TestChatStreamWireFormat(t *testing.T) {
	s := start(t, fakemodel.Static("alpha beta gamma delta epsilon"))
	for _, includeUsage := range []bool{false, true} {
		body := `{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`
		if includeUsage {
			body = `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[]}`
		}
		_, h, b := do(t, "POST", s.URL+"/v1/chat/completions", nil, body)
		if ct := h.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
			t.Errorf("content-type = %q", ct)
		}
		evs := parseSSE(t, b)
		if last := evs[len(evs)-1]; last.Data != "[DONE]" || last.Name != "" {
			t.Fatalf("last event = %+v, want data: [DONE]", last)
		}
		if gjson.Get(evs[0].Data, "choices.0.delta.role").String() != "assistant" {
			t.Errorf("first chunk %s has no role", evs[0].Data)
		}
		usageChunk := evs[len(evs)-2].Data
		hasUsage := gjson.Get(usageChunk, "usage.total_tokens").Int() > 0 && len(gjson.Get(usageChunk, "choices").Array()) == 0
		if hasUsage != includeUsage {
			t.Errorf("include_usage=%v: chunk before [DONE] = %s", includeUsage, usageChunk)
		}
		for _, ev := range evs[:len(evs)-1] {
			if gjson.Get(ev.Data, "object").String() != "chat.completion.chunk" {
				t.Errorf("chunk %s is not a chat.completion.chunk", ev.Data)
			}
		}
	}
}

func TestResponsesAndMessagesStreamNameEvents(t *testing.T) {
	s := start(t, fakemodel.Static("alpha beta gamma delta"))
	for _, tc := range []struct{ path, body string }{
		{"/v1/responses", `{"model":"m","stream":true,"input":"x"}`},
		{"/v1/messages", `{"model":"m","stream":true,"max_tokens":5,"messages":[]}`},
	} {
		_, _, b := do(t, "POST", s.URL+tc.path, nil, tc.body)
		evs := parseSSE(t, b)
		if len(evs) < 5 {
			t.Fatalf("%s: %d events", tc.path, len(evs))
		}
		seq := int64(-1)
		for _, ev := range evs {
			if typ := gjson.Get(ev.Data, "type").String(); ev.Name != typ {
				t.Errorf("%s: event name %q carries type %q", tc.path, ev.Name, typ)
			}
			if tc.path == "/v1/responses" {
				n := gjson.Get(ev.Data, "sequence_number").Int()
				if n <= seq {
					t.Errorf("sequence_number %d after %d", n, seq)
				}
				seq = n
			}
		}
		if tc.path == "/v1/messages" {
			var names []string
			for _, ev := range evs {
				names = append(names, ev.Name)
			}
			want := []string{"message_start", "ping", "content_block_start", "content_block_delta", "content_block_delta",
				"content_block_stop", "message_delta", "message_stop"}
			if diff := cmp.Diff(want, names); diff != "" {
				t.Errorf("anthropic events (-want +got):\n%s", diff)
			}
			if n := gjson.Get(evs[0].Data, "message.usage.output_tokens").Int(); n != 1 {
				t.Errorf("message_start output_tokens = %d, want 1", n)
			}
		}
	}
}

func TestRawBody(t *testing.T) {
	s := start(t, fakemodel.Script(fakemodel.Reply{RawBody: `{"choices":[`, Status: 502}))
	status, _, b := do(t, "POST", s.URL+"/v1/chat/completions", nil, `{"model":"m","messages":[]}`)
	if status != 502 || string(b) != `{"choices":[` {
		t.Errorf("got %d %q, want 502 and the raw body", status, b)
	}
	s.SetResponder(fakemodel.Script(fakemodel.Reply{RawBody: "data: {not json\n\n"}))
	status, h, b := do(t, "POST", s.URL+"/v1/chat/completions", nil, `{"model":"m","stream":true,"messages":[]}`)
	if status != 200 || string(b) != "data: {not json\n\n" || !strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") {
		t.Errorf("got %d %q %q", status, b, h.Get("Content-Type"))
	}
}

// waitFor returns when ch closes, failing the test after a generous bound.
func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func TestClientCancelReleasesHangAndDelay(t *testing.T) {
	for _, reply := range []fakemodel.Reply{{Hang: true}, {Delay: time.Hour, Text: "late"}} {
		s := fakemodel.Start(nil)
		entered := make(chan struct{})
		s.SetResponder(func(*fakemodel.Request) fakemodel.Reply {
			close(entered)
			return reply
		})
		ctx, cancel := context.WithCancel(t.Context())
		req, _ := http.NewRequestWithContext(ctx, "POST", s.URL+"/v1/messages", strings.NewReader(`{"stream":true}`))
		client := &http.Client{Transport: &http.Transport{}}
		done := make(chan struct{})
		var err error
		go func() {
			defer close(done)
			var resp *http.Response
			resp, err = client.Do(req)
			if err == nil {
				resp.Body.Close()
			}
		}()
		waitFor(t, entered, "the request to reach the responder")
		cancel()
		waitFor(t, done, "the client to return after cancel")
		if !errors.Is(err, context.Canceled) {
			t.Errorf("client error = %v, want context.Canceled", err)
		}
		closed := make(chan struct{})
		go func() { s.Close(); close(closed) }()
		waitFor(t, closed, "Close")
		client.CloseIdleConnections()
	}
	goleak.VerifyNone(t, goleak.IgnoreCurrent())
}

func TestCloseReleasesHangingRequest(t *testing.T) {
	s := fakemodel.Start(nil)
	entered := make(chan struct{})
	s.SetResponder(func(*fakemodel.Request) fakemodel.Reply {
		close(entered)
		return fakemodel.Reply{Hang: true}
	})
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	done := make(chan error, 1)
	go func() {
		resp, err := client.Post(s.URL+"/v1/responses", "application/json", strings.NewReader(`{}`))
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	waitFor(t, entered, "the request to reach the responder")
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	waitFor(t, closed, "Close with a hanging request")
	if err := <-done; err == nil {
		t.Error("hanging request got an answer after Close, want a connection error")
	}
}

func TestHandlerEmbeds(t *testing.T) {
	s := fakemodel.New(fakemodel.Static("embedded"))
	defer s.Close()
	mux := http.NewServeMux()
	mux.Handle("/", s.Handler())
	rec := httptest.NewRecorder()
	req, _ := http.NewRequest("POST", "/v1/chat/completions", strings.NewReader(`{"model":"m","messages":[]}`))
	mux.ServeHTTP(rec, req)
	var body struct {
		Choices []struct {
			Message struct{ Content string }
		}
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || len(body.Choices) != 1 || body.Choices[0].Message.Content != "embedded" {
		t.Errorf("embedded answer %q (%v)", rec.Body.String(), err)
	}
	if len(s.Requests()) != 1 {
		t.Errorf("embedded server recorded %d requests, want 1", len(s.Requests()))
	}
}

// FuzzHandler feeds arbitrary bodies to every endpoint: the fake must always
// answer with a status, never crash.
func FuzzHandler(f *testing.F) {
	for _, lines := range loadCaptures(f) {
		for _, c := range lines {
			f.Add(c.Path, []byte(c.Body))
		}
	}
	f.Add("/v1/chat/completions", []byte(`{"stream":true,"stream_options":{"include_usage":true}}`))
	f.Add("/v1/responses/compact", []byte(`{"input":"x"}`))
	s := fakemodel.New(fakemodel.Static("fuzz answer"))
	defer s.Close()
	h := s.Handler()
	f.Fuzz(func(t *testing.T, path string, body []byte) {
		req, err := http.NewRequest("POST", "http://fake"+path, bytes.NewReader(body))
		if err != nil || req.URL.Path != path {
			t.Skip()
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code < 200 || rec.Code > 599 {
			t.Fatalf("status %d", rec.Code)
		}
		s.Reset()
	})
}
