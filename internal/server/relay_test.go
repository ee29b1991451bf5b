package server_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/fakemodel"
	"github.com/tether-dev/tether/internal/flow"
)

// rawUpstream is an SSE answer with the shapes real providers send: CRLF
// line ends, comments, id lines, named events and a usage chunk.
const rawUpstream = "event: keep\r\ndata: {\"a\":1}\r\n\r\n" +
	": OPENROUTER PROCESSING\n\n" +
	"id: 3\nevent: upper\ndata: \"abc\"\n\n" +
	"event: drop\ndata: {}\n\n" +
	"event: split\ndata: 1\n\n" +
	"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":7,\"total_tokens\":12}}\n\n" +
	"data: [DONE]\n\n"

const streamBody = `{"model":"fake-a","stream":true,"messages":[{"role":"user","content":"hi"}]}`

func TestStreamRelayedByteForByte(t *testing.T) {
	fake := startFake(t, fakemodel.Script(fakemodel.Reply{RawBody: rawUpstream}))
	p := startProxy(t, proxyOpts{cfg: passthroughConfig(t, fake.URL, nil)})
	resp, data := p.do(t, http.MethodPost, "/v1/chat/completions", routes[0].header, []byte(streamBody))
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if diff := cmp.Diff(rawUpstream, string(data)); diff != "" {
		t.Errorf("client stream differs from the upstream's (-upstream +client):\n%s", diff)
	}
}

// editingHook upper-cases "upper" events, drops "drop" events, splits
// "split" events and reports the outcome.
type editingHook struct {
	flow.NopResponseHook
	outcome chan flow.Outcome
}

func (editingHook) StreamEvent(_ *flow.Exchange, ev dialect.Event) []dialect.Event {
	switch ev.Name {
	case "upper":
		return []dialect.Event{{Name: ev.Name, Data: bytes.ToUpper(ev.Data)}}
	case "drop":
		return nil
	case "split":
		return []dialect.Event{ev, {Name: ev.Name, Data: []byte("2")}}
	}
	return []dialect.Event{ev}
}

func (h editingHook) Finish(_ *flow.Exchange, o flow.Outcome) { h.outcome <- o }

func TestStreamRelayWithEditingHook(t *testing.T) {
	fake := startFake(t, fakemodel.Script(fakemodel.Reply{RawBody: rawUpstream}))
	hook := editingHook{outcome: make(chan flow.Outcome, 1)}
	attach := hookFunc(func(_ context.Context, x *flow.Exchange) error {
		x.AddResponseHook(hook)
		return nil
	})
	p := startProxy(t, proxyOpts{cfg: passthroughConfig(t, fake.URL, nil), hooks: []flow.Hook{attach}})
	_, data := p.do(t, http.MethodPost, "/v1/chat/completions", routes[0].header, []byte(streamBody))

	// Events the hook left alone keep their exact bytes; the others are
	// re-encoded.
	want := "event: keep\r\ndata: {\"a\":1}\r\n\r\n" +
		": OPENROUTER PROCESSING\n\n" +
		"event: upper\ndata: \"ABC\"\n\n" +
		"event: split\ndata: 1\n\nevent: split\ndata: 2\n\n" +
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":7,\"total_tokens\":12}}\n\n" +
		"data: [DONE]\n\n"
	if diff := cmp.Diff(want, string(data)); diff != "" {
		t.Errorf("client stream (-want +got):\n%s", diff)
	}
	select {
	case o := <-hook.outcome:
		if !o.Stream || o.Status != 200 || o.Err != nil || o.Usage.InputTokens != 5 || o.Usage.OutputTokens != 7 {
			t.Errorf("outcome = %+v, want a clean stream with usage 5/7", o)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Finish was not called")
	}
}

// TestStreamEventsNotHeldBack: each event reaches the client while the
// upstream is still waiting to send the next one, large events included.
func TestStreamEventsNotHeldBack(t *testing.T) {
	events := []string{
		"data: {\"n\":1}\n\n",
		"event: big\ndata: \"" + strings.Repeat("z", 100<<10-2) + "\"\n\n",
		"data: [DONE]\n\n",
	}
	got := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for i, ev := range events {
			io.WriteString(w, ev)
			rc.Flush()
			if i == len(events)-1 {
				return
			}
			select { // the client must see ev before the next is sent
			case <-got:
			case <-r.Context().Done():
				return
			case <-time.After(5 * time.Second):
				return
			}
		}
	}))
	t.Cleanup(up.Close)
	p := startProxy(t, proxyOpts{cfg: passthroughConfig(t, up.URL, nil)})

	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, p.URL+"/v1/chat/completions", strings.NewReader(streamBody))
	req.Header = routes[0].header.Clone()
	resp, err := p.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rd := dialect.NewSSEReader(resp.Body)
	start := time.Now()
	for i := range events {
		ev, err := rd.Next()
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if i == 1 && len(ev.Data) != 100<<10 {
			t.Errorf("big event has %d bytes", len(ev.Data))
		}
		if i < len(events)-1 {
			select {
			case got <- struct{}{}:
			case <-time.After(5 * time.Second):
				t.Fatal("the upstream stopped waiting")
			}
		}
	}
	if took := time.Since(start); took > 4*time.Second {
		t.Errorf("events arrived only after %v: the proxy held them until the upstream sent more", took)
	}
}

// An upstream that ends its stream right after the last event, without the
// blank line that closes it, still gets that event to the client, closed so
// the client's parser takes it, with and without a response hook.
func TestStreamFinalEventWithoutBlankLine(t *testing.T) {
	first := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n"
	for _, tc := range []struct{ tail, want string }{
		{"data: [DONE]", "data: [DONE]\n\n"},
		{"data: [DONE]\n", "data: [DONE]\n\n"},
		{"event: end\r\ndata: [DONE]\r\n", "event: end\ndata: [DONE]\n\n"},
	} {
		for _, hooked := range []bool{false, true} {
			fake := startFake(t, fakemodel.Script(fakemodel.Reply{RawBody: first + tc.tail}))
			var hooks []flow.Hook
			if hooked {
				hooks = []flow.Hook{hookFunc(func(_ context.Context, x *flow.Exchange) error {
					x.AddResponseHook(flow.NopResponseHook{})
					return nil
				})}
			}
			p := startProxy(t, proxyOpts{cfg: passthroughConfig(t, fake.URL, nil), hooks: hooks})
			_, data := p.do(t, http.MethodPost, "/v1/chat/completions", routes[0].header, []byte(streamBody))
			if got := string(data); got != first+tc.want {
				t.Errorf("tail %q, hooked %v: client got %q, want %q", tc.tail, hooked, got, first+tc.want)
			}
		}
	}
}
