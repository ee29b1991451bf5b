package server_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/tether-dev/tether/internal/compaction"
	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/fakemodel"
	"github.com/tether-dev/tether/internal/flow"
)

type hookFunc func(ctx context.Context, x *flow.Exchange) error

func (f hookFunc) Before(ctx context.Context, x *flow.Exchange) error { return f(ctx, x) }

// spoil rewrites the body the way a buggy hook would before failing.
func spoil(x *flow.Exchange) {
	x.Body = append(bytes.Clone(x.Body[:len(x.Body)-1]), []byte(`,"spoiled":true}`)...)
}

var (
	panicking = hookFunc(func(_ context.Context, x *flow.Exchange) error {
		spoil(x)
		panic("hook bug")
	})
	failing = hookFunc(func(_ context.Context, x *flow.Exchange) error {
		spoil(x)
		return errors.New("hook failed")
	})
	marking = hookFunc(func(_ context.Context, x *flow.Exchange) error {
		spoil(x)
		return nil
	})
)

func TestFailingHooksAreFailOpen(t *testing.T) {
	fake := startFake(t, fakemodel.Static("ok"))
	p := startProxy(t, proxyOpts{cfg: passthroughConfig(t, fake.URL, nil), hooks: []flow.Hook{panicking, failing}})

	if line := p.metric(t, "tether_hook_failures_total"); line != "tether_hook_failures_total 0" {
		t.Errorf("before any request: %q, want tether_hook_failures_total 0", line)
	}
	for i, rt := range routes {
		fake.Reset()
		body := []byte(rt.body("fake-a"))
		resp, data := p.do(t, http.MethodPost, rt.path, rt.header, body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d: %s", rt.name, resp.StatusCode, data)
		}
		if got := fake.Requests()[0].Body; !bytes.Equal(got, body) {
			t.Errorf("%s: upstream body %s, want the client's %s", rt.name, got, body)
		}
		want := "tether_hook_failures_total " + string(rune('0'+2*(i+1)))
		if line := p.metric(t, "tether_hook_failures_total"); line != want {
			t.Errorf("after %s: %q, want %q", rt.name, line, want)
		}
	}
}

type detectorFunc func(ctx context.Context, x *flow.Exchange) compaction.Result

func (f detectorFunc) Detect(ctx context.Context, x *flow.Exchange) compaction.Result {
	return f(ctx, x)
}

func TestHooksSeeTheDetectorsVerdict(t *testing.T) {
	// The verdict is recorded by the server before any hook runs, whatever
	// the hook list: a hook cannot be ordered before detection.
	fake := startFake(t, fakemodel.Static("ok"))
	verdict := compaction.Result{Compaction: true, Agent: "codex"}
	var seen []compaction.Result
	record := hookFunc(func(_ context.Context, x *flow.Exchange) error {
		seen = append(seen, x.Verdict)
		return nil
	})
	panicking := detectorFunc(func(context.Context, *flow.Exchange) compaction.Result { panic("detector") })
	for _, tc := range []struct {
		name string
		det  flow.Detector
		want compaction.Result
	}{
		{"detector", detectorFunc(func(context.Context, *flow.Exchange) compaction.Result { return verdict }), verdict},
		{"panicking detector", panicking, compaction.Result{}},
	} {
		seen = nil
		p := startProxy(t, proxyOpts{cfg: passthroughConfig(t, fake.URL, nil), detector: tc.det, hooks: []flow.Hook{record, record}})
		rt := routes[0]
		resp, _ := p.do(t, http.MethodPost, rt.path, rt.header, []byte(rt.body("fake-a")))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d", tc.name, resp.StatusCode)
		}
		if len(seen) != 2 || seen[0] != tc.want || seen[1] != tc.want {
			t.Errorf("%s: hooks saw %+v, want %+v twice", tc.name, seen, tc.want)
		}
	}
}

func TestSucceedingHookChangesBody(t *testing.T) {
	// The counterpart of the fail-open test: a hook that returns nil does
	// get its body upstream, so the byte-identity above is not vacuous.
	fake := startFake(t, fakemodel.Static("ok"))
	p := startProxy(t, proxyOpts{cfg: passthroughConfig(t, fake.URL, nil), hooks: []flow.Hook{marking, failing}})
	rt := routes[0]
	resp, _ := p.do(t, http.MethodPost, rt.path, rt.header, []byte(rt.body("fake-a")))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if got := fake.Requests()[0].Body; !bytes.HasSuffix(got, []byte(`,"spoiled":true}`)) || bytes.Count(got, []byte("spoiled")) != 1 {
		t.Errorf("upstream body %s: want the first hook's edit only", got)
	}
	if line := p.metric(t, "tether_hook_failures_total"); line != "tether_hook_failures_total 1" {
		t.Errorf("%q, want 1 failure", line)
	}
}

// brokenResponseHook panics in every callback.
type brokenResponseHook struct{}

func (brokenResponseHook) Opened(*flow.Exchange, int)             { panic("opened") }
func (brokenResponseHook) EditBody(*flow.Exchange, []byte) []byte { panic("edit") }
func (brokenResponseHook) Finish(*flow.Exchange, flow.Outcome)    { panic("finish") }
func (brokenResponseHook) StreamEvent(*flow.Exchange, dialect.Event) []dialect.Event {
	panic("event")
}

func TestPanickingResponseHookPassesAnswerUnchanged(t *testing.T) {
	fake := startFake(t, fakemodel.Script(scripted))
	attach := hookFunc(func(_ context.Context, x *flow.Exchange) error {
		x.AddResponseHook(brokenResponseHook{})
		return nil
	})
	p := startProxy(t, proxyOpts{cfg: passthroughConfig(t, fake.URL, nil), hooks: []flow.Hook{attach}})

	resp, err := p.openai("sk-caller").Chat.Completions.New(t.Context(), chatParams())
	if err != nil || resp.Choices[0].Message.Content != scripted.Text {
		t.Fatalf("non-stream: %v %+v", err, resp)
	}
	params := chatParams()
	stream := p.openai("sk-caller").Chat.Completions.NewStreaming(t.Context(), params)
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil || acc.Choices[0].Message.Content != scripted.Text {
		t.Errorf("stream: err %v content %q, want %q", err, acc.Choices[0].Message.Content, scripted.Text)
	}
}

func TestOperationalEndpoints(t *testing.T) {
	fake := startFake(t, fakemodel.Static("ok"))
	var storeDown atomic.Bool
	p := startProxy(t, proxyOpts{
		cfg: passthroughConfig(t, fake.URL, nil),
		ready: func(context.Context) error {
			if storeDown.Load() {
				return errors.New("store down")
			}
			return nil
		},
	})

	resp, data := p.do(t, http.MethodGet, "/healthz", nil, nil)
	if resp.StatusCode != http.StatusOK || string(data) != "ok\n" {
		t.Errorf("/healthz: %d %q", resp.StatusCode, data)
	}
	resp, data = p.do(t, http.MethodGet, "/readyz", nil, nil)
	if resp.StatusCode != http.StatusOK || string(data) != "ready\n" {
		t.Errorf("/readyz: %d %q", resp.StatusCode, data)
	}
	storeDown.Store(true)
	if resp, _ = p.do(t, http.MethodGet, "/readyz", nil, nil); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("/readyz with the store down: %d, want 503", resp.StatusCode)
	}

	rt := routes[2]
	if resp, _ := p.do(t, http.MethodPost, rt.path, rt.header, []byte(rt.body("fake-a"))); resp.StatusCode != http.StatusOK {
		t.Fatalf("proxied request: %d", resp.StatusCode)
	}
	resp, data = p.do(t, http.MethodGet, "/metrics", nil, nil)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("/metrics Content-Type %q, want Prometheus text", ct)
	}
	for _, want := range []string{
		"# TYPE tether_requests_total counter",
		`tether_requests_total{code="200",dialect="anthropic-messages"} 1`,
		"# TYPE tether_request_duration_seconds histogram",
		`tether_request_duration_seconds_count{dialect="anthropic-messages"} 1`,
		"# TYPE tether_hook_failures_total counter",
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	// Nothing the caller sent appears in the metrics.
	for _, secret := range []string{"sk-ant-caller", "fake-a", `"hi"`} {
		if strings.Contains(string(data), secret) {
			t.Errorf("/metrics exposes request content %q", secret)
		}
	}
}
