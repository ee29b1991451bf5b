package server_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/metrics"
	"github.com/tether-dev/tether/internal/server"
	"github.com/tether-dev/tether/internal/upstream"
)

// earlyAnswer is a provider reached over a transport that answers before
// the request body is sent, as an HTTP/2 provider may: the body of the
// request marked "first" is read only after the test says so, once the
// handler has long returned; every byte is checked.
type earlyAnswer struct {
	want  []byte
	read  chan struct{} // closed: read the first body now
	check chan error
}

func (e *earlyAnswer) RoundTrip(req *http.Request) (*http.Response, error) {
	answer := func() *http.Response {
		reply := `{"id":"c","object":"chat.completion","model":"gpt-test","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`
		return &http.Response{StatusCode: http.StatusOK, Proto: "HTTP/2.0", ProtoMajor: 2,
			Header: http.Header{"Content-Type": {"application/json"}}, ContentLength: int64(len(reply)),
			Body: io.NopCloser(strings.NewReader(reply)), Request: req}
	}
	if req.Header.Get("X-Order") != "first" {
		_, _ = io.Copy(io.Discard, req.Body)
		req.Body.Close()
		return answer(), nil
	}
	go func() {
		defer req.Body.Close()
		<-e.read
		body, err := io.ReadAll(req.Body)
		switch {
		case err != nil:
			e.check <- err
		case !bytes.Equal(body, e.want):
			i := 0
			for i < len(body) && i < len(e.want) && body[i] == e.want[i] {
				i++
			}
			e.check <- fmt.Errorf("the first body reached the provider changed from byte %d on (%d bytes, want %d)", i, len(body), len(e.want))
		default:
			e.check <- nil
		}
	}()
	return answer(), nil
}

// A provider may answer before the whole request body is sent, and the
// transport goes on sending it after the handler returned. The buffer the
// body was read into must not be lent to the next request meanwhile: the
// provider would receive the next caller's bytes inside this one's.
func TestBodyStillBeingSentIsNotReused(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // one P: a buffer put back is the next one taken

	// Two bodies of one size class (512 KiB–1 MiB).
	body := func(fill byte, size int) []byte {
		b := bytes.Repeat([]byte{fill}, size)
		copy(b, `{"model":"gpt-test","messages":[{"role":"user","content":"`)
		copy(b[size-4:], `"}]}`)
		return b
	}
	first, second := body('a', 1<<20-100), body('b', 600<<10)
	e := &earlyAnswer{want: first, read: make(chan struct{}), check: make(chan error, 1)}

	b := &upstream.Client{HTTP: &http.Client{Transport: e}}
	h := server.New(server.Options{Config: passthroughConfig(t, "http://provider.invalid", nil),
		Secret: []byte("test-secret-test-secret"), Registry: metrics.NewRegistry(), Client: b})
	srv := httptest.NewServer(h)
	defer srv.Close()
	p := &proxy{URL: srv.URL, srv: srv, b: b, client: &http.Client{Transport: &http.Transport{}}}
	defer p.client.CloseIdleConnections()

	for _, r := range []struct {
		order string
		body  []byte
	}{{"first", first}, {"second", second}} {
		resp, data := p.do(t, http.MethodPost, "/v1/chat/completions", http.Header{
			"Content-Type": {"application/json"}, "X-Order": {r.order}}, r.body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s request: %d %s", r.order, resp.StatusCode, data)
		}
	}
	close(e.read)
	select {
	case err := <-e.check:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the first body was never read")
	}
}
