package server_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"
	"github.com/tidwall/gjson"
	"go.uber.org/goleak"

	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/fakemodel"
)

// TestClientDisconnectCancelsUpstream: a client that goes away mid-stream
// cancels the B-leg promptly, and nothing is left running afterwards.
func TestClientDisconnectCancelsUpstream(t *testing.T) {
	leaks := goleak.IgnoreCurrent()

	// An upstream that sends two chunks and then holds the stream open until
	// its request context ends.
	cancelled := make(chan struct{})
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, s := range []string{"Hel", "lo"} {
			io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"`+s+`"},"finish_reason":null}]}`+"\n\n")
		}
		http.NewResponseController(w).Flush()
		select {
		case <-r.Context().Done():
			close(cancelled)
		case <-release:
		}
	}))
	p := startProxy(t, proxyOpts{cfg: passthroughConfig(t, up.URL, nil)})

	ctx, cancel := context.WithCancel(t.Context())
	stream := p.openai("sk-caller").Chat.Completions.NewStreaming(ctx, chatParams())
	if !stream.Next() {
		t.Fatalf("no first chunk: %v", stream.Err())
	}
	if got := stream.Current().Choices[0].Delta.Content; got != "Hel" {
		t.Errorf("first chunk %q, want Hel", got)
	}
	cancel()
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		close(release)
		t.Fatal("upstream request was not cancelled within 5s of the client going away")
	}
	for stream.Next() {
	}
	if err := stream.Err(); !errors.Is(err, context.Canceled) {
		t.Errorf("client stream error = %v, want context.Canceled", err)
	}
	stream.Close()

	p.Close()
	up.Close()
	goleak.VerifyNone(t, leaks)
}

// rawStream posts body to path and returns the whole response body; it fails
// the test when the stream does not end cleanly within 10s.
func rawStream(t *testing.T, p *proxy, path string, header http.Header, body string) (*http.Response, []dialect.Event) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.URL+path, strings.NewReader(body))
	req.Header = header.Clone()
	resp, err := p.client.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: the client stream did not end cleanly: %v", path, err)
	}
	var evs []dialect.Event
	rd := dialect.NewSSEReader(bytes.NewReader(data))
	for {
		ev, err := rd.Next()
		if err != nil {
			break
		}
		evs = append(evs, ev)
	}
	return resp, evs
}

// TestMidStreamUpstreamFailure: when the provider cuts the stream, the client
// gets its dialect's error event and a cleanly ended stream, and the SDKs
// report the failure instead of hanging or claiming success.
func TestMidStreamUpstreamFailure(t *testing.T) {
	fake := startFake(t, fakemodel.Script(fakemodel.Reply{Text: scripted.Text, FailMidStream: true}))
	p := startProxy(t, proxyOpts{cfg: passthroughConfig(t, fake.URL, nil)})

	t.Run("raw", func(t *testing.T) {
		for _, rt := range routes {
			body := strings.Replace(rt.body("fake-a"), `{`, `{"stream":true,`, 1)
			resp, evs := rawStream(t, p, rt.path, rt.header, body)
			if resp.StatusCode != http.StatusOK || len(evs) < 2 {
				t.Fatalf("%s: status %d, %d events", rt.name, resp.StatusCode, len(evs))
			}
			last := evs[len(evs)-1]
			switch rt.name {
			case "chat":
				if m := gjson.GetBytes(last.Data, "error.message").String(); m == "" {
					t.Errorf("chat: last event %s is not an error chunk", last.Data)
				}
			case "responses":
				if last.Name != "error" || gjson.GetBytes(last.Data, "type").String() != "error" {
					t.Errorf("responses: last event %q %s is not an error event", last.Name, last.Data)
				}
			case "messages":
				if last.Name != "error" || gjson.GetBytes(last.Data, "error.type").String() != "api_error" {
					t.Errorf("messages: last event %q %s is not an error event", last.Name, last.Data)
				}
			}
			for _, ev := range evs {
				if dialect.IsTerminal(dialectOf(rt), ev) {
					t.Errorf("%s: a cut stream carried the terminal event %s", rt.name, ev.Data)
				}
			}
		}
	})

	t.Run("chat SDK", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		stream := p.openai("sk-caller").Chat.Completions.NewStreaming(ctx, chatParams())
		var acc openai.ChatCompletionAccumulator
		for stream.Next() {
			acc.AddChunk(stream.Current())
		}
		if err := stream.Err(); err == nil || ctx.Err() != nil {
			t.Errorf("chat stream error = %v (deadline: %v), want the proxy's stream error", err, ctx.Err())
		}
		if len(acc.Choices) == 0 || acc.Choices[0].Message.Content == scripted.Text {
			t.Errorf("want part of the text before the error, got %+v", acc.Choices)
		}
	})

	t.Run("responses SDK", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		stream := p.openai("sk-caller").Responses.NewStreaming(ctx, responsesParams())
		var lastType string
		completed := false
		for stream.Next() {
			lastType = stream.Current().Type
			completed = completed || lastType == "response.completed"
		}
		// Responses reports in-stream errors as an "error" event.
		if lastType != "error" || completed || ctx.Err() != nil {
			t.Errorf("last event %q completed %v err %v deadline %v, want an error event", lastType, completed, stream.Err(), ctx.Err())
		}
	})

	t.Run("messages SDK", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		stream := p.anthropic("sk-ant-caller").Messages.NewStreaming(ctx, messageParams())
		var msg anthropic.Message
		for stream.Next() {
			_ = msg.Accumulate(stream.Current())
		}
		var aerr *anthropic.Error
		if err := stream.Err(); !errors.As(err, &aerr) || ctx.Err() != nil {
			t.Errorf("messages stream error = %v, want an *anthropic.Error from the error event", err)
		}
		if msg.StopReason != "" {
			t.Errorf("a cut stream reported stop_reason %q", msg.StopReason)
		}
	})
}

func dialectOf(r route) dialect.Name {
	switch r.name {
	case "chat":
		return dialect.OpenAIChat
	case "responses":
		return dialect.OpenAIResponses
	}
	return dialect.AnthropicMessages
}
