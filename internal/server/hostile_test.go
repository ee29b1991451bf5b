package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/fakemodel"
)

// hostileSetup is a passthrough proxy with default limits in front of a
// fake that answers every model.
func hostileSetup(t *testing.T) (*fakemodel.Server, *proxy) {
	t.Helper()
	fake := startFake(t, func(*fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Text: "ok"} })
	return fake, startProxy(t, proxyOpts{cfg: passthroughConfig(t, fake.URL, nil)})
}

// hostileRoutes are the dialect routes plus Gemini's generateContent.
var hostileRoutes = append(append([]route(nil), routes...), route{
	name: "gemini", path: "/v1beta/models/m:generateContent",
	body:   func(string) string { return `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}` },
	header: http.Header{"X-Goog-Api-Key": {"caller-gemini-key"}, "Content-Type": {"application/json"}},
})

// errorIn checks that data is an error body in rt's dialect and returns its
// message.
func errorIn(t *testing.T, rt route, data []byte) string {
	t.Helper()
	if rt.name != "gemini" {
		return dialectError(t, rt.anthropic, data)
	}
	var e struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Status  string `json:"status"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &e); err != nil || e.Error == nil || e.Error.Code == 0 || e.Error.Status == "" || e.Error.Message == "" {
		t.Errorf("body %s is not a Gemini error {error:{code,message,status}} (%v)", data, err)
		return ""
	}
	return e.Error.Message
}

// A body of ~6 MiB of nested "[" used to overflow the stack of the JSON
// validator and kill the process. It is refused with a 400 in the caller's
// dialect before any recursive parse, and the provider never sees it.
func TestDeepNestingRefusedInDialect(t *testing.T) {
	fake, p := hostileSetup(t)
	deep := strings.Repeat("[", 6<<20)
	for _, rt := range hostileRoutes {
		body := rt.body("m")
		i := strings.LastIndex(body, "}")
		body = body[:i] + `,"x":` + deep + body[i:]
		resp, data := p.do(t, http.MethodPost, rt.path, rt.header, []byte(body))
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("%s: status %d, want 400: %.200s", rt.name, resp.StatusCode, data)
		}
		if msg := errorIn(t, rt, data); !strings.Contains(msg, "nests deeper than 512") {
			t.Errorf("%s: message %q does not name the nesting limit", rt.name, msg)
		}
	}
	// Nesting at the limit is still a request.
	ok := `{"model":"m","messages":[{"role":"user","content":"hi"}],"x":` + strings.Repeat("[", 510) + strings.Repeat("]", 510) + `}`
	resp, data := p.do(t, http.MethodPost, "/v1/chat/completions", routes[0].header, []byte(ok))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("510 levels: status %d: %s", resp.StatusCode, data)
	}
	if n := len(fake.Requests()); n != 1 {
		t.Errorf("the provider saw %d requests, want only the one within the limit", n)
	}
}

// The proxy routes and prices by the first "model" while a provider may read
// the last: a body that names a top-level field twice is refused.
func TestDuplicateTopLevelKeyRefused(t *testing.T) {
	fake, p := hostileSetup(t)
	for _, rt := range hostileRoutes {
		body := rt.body("cheap-model")
		first := body[2 : strings.Index(body[2:], `"`)+2] // "model", or Gemini's "contents"
		for _, dup := range []string{
			`"` + first + `":"expensive-model",`,
			`"` + first[:3] + `\u00` + fmt.Sprintf("%x", first[3]) + first[4:] + `":"expensive-model",`, // the same name, escaped
		} {
			b := "{" + dup + body[1:]
			resp, data := p.do(t, http.MethodPost, rt.path, rt.header, []byte(b))
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("%s %s: status %d, want 400: %s", rt.name, dup, resp.StatusCode, data)
			}
			if msg := errorIn(t, rt, data); !strings.Contains(msg, "twice") {
				t.Errorf("%s: message %q does not say a field is named twice", rt.name, msg)
			}
		}
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("the provider saw %d requests with duplicate fields", n)
	}
}

// faultyUpstream answers every call with the fault its caller names in the
// Fault header, and counts the calls it gets.
func faultyUpstream(t *testing.T) (url string, calls *atomic.Int64) {
	t.Helper()
	calls = new(atomic.Int64)
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("a redirect was followed: %s %s reached another host (key %q)", r.Method, r.URL, r.Header.Get("Authorization")+r.Header.Get("X-Api-Key"))
	}))
	t.Cleanup(elsewhere.Close)
	good := `data: {"type":"ping","choices":[]}` + "\n\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		sse := func(status int, body string) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(status)
			io.WriteString(w, body)
		}
		switch r.Header.Get("Fault") {
		case "garbage lines":
			sse(200, good+"this is not SSE\n\n")
		case "binary":
			sse(200, good+"\x00\xff\xfe\x01\x9c\n\n")
		case "binary data":
			sse(200, good+"data: \x00\xff\xfe\x01\x9c\n\n")
		case "no terminal event":
			sse(200, good)
		case "500 event stream":
			sse(500, `data: {"type":"error"`+"\n\n")
		case "200 HTML":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html><body>Bad gateway</body></html>")
		case "502 HTML":
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(502)
			io.WriteString(w, "<html><body>Bad gateway</body></html>")
		case "307 redirect", "302 redirect":
			code, _ := strconv.Atoi(r.Header.Get("Fault")[:3])
			http.Redirect(w, r, elsewhere.URL+r.URL.Path, code)
		case "too large":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"pad":"`+strings.Repeat("x", 8<<10)+`"}`)
		default:
			t.Errorf("unknown fault %q", r.Header.Get("Fault"))
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, calls
}

// Every protocol fault of a provider ends, in every dialect, streamed or
// not, in a well-formed error of the caller's dialect: a JSON error body
// with an error status, or a stream whose last event is the dialect's error
// event. Each is logged and counted.
func TestUpstreamFaultsAnswerInDialect(t *testing.T) {
	url, _ := faultyUpstream(t)
	cfg := passthroughConfig(t, url, func(c *config.Config) {
		c.MaxResponseBytes = 4 << 10
		c.Providers = append(c.Providers, config.Provider{Name: "gemini", Dialect: config.FamilyGemini, BaseURL: url})
	})
	p := startProxy(t, proxyOpts{cfg: cfg})
	faults := []string{"garbage lines", "binary", "binary data", "no terminal event", "500 event stream", "200 HTML", "502 HTML", "307 redirect", "302 redirect", "too large"}
	for _, rt := range hostileRoutes {
		for _, stream := range []bool{false, true} {
			for _, fault := range faults {
				path, body := rt.path, rt.body("m")
				if stream {
					body = strings.Replace(body, "{", `{"stream":true,`, 1)
					path = strings.Replace(path, ":generateContent", ":streamGenerateContent?alt=sse", 1)
				}
				h := rt.header.Clone()
				h.Set("Fault", fault)
				resp, data := p.do(t, http.MethodPost, path, h, []byte(body))
				name := fmt.Sprintf("%s stream=%v %s", rt.name, stream, fault)
				if resp.StatusCode != http.StatusOK {
					if resp.StatusCode < 400 {
						t.Errorf("%s: status %d relayed", name, resp.StatusCode)
					}
					errorIn(t, rt, data)
					continue
				}
				rd := dialect.NewSSEReader(bytes.NewReader(data))
				var last dialect.Event
				for {
					ev, err := rd.Next()
					if err != nil {
						break
					}
					if !json.Valid(ev.Data) {
						t.Errorf("%s: the client got an event with data %q", name, ev.Data)
					}
					last = ev
				}
				if !bytes.Contains(last.Data, []byte(`"error"`)) {
					t.Errorf("%s: the stream does not end with the dialect's error event: %q", name, data)
				}
			}
		}
	}
	got := p.metric(t, "tether_upstream_faults_total")
	if got == "" {
		t.Errorf("no tether_upstream_faults_total on /metrics")
	}
}

// A client's X-Tether-* headers, and the headers its Connection header names,
// never reach the provider. The one X-Tether-* header the provider sees is
// the proxy's own hop token (upstream.HeaderVia), which no caller's header
// replaces.
func TestForgedAndHopByHopHeadersNotForwarded(t *testing.T) {
	fake, p := hostileSetup(t)
	h := routes[0].header.Clone()
	h.Set("X-Tether-Principal", "admin")
	h.Set("x-tether-aux-depth", "0")
	h.Set("X-Private-Hop", "secret")
	h.Add("Connection", "X-Private-Hop")
	h.Set("X-Kept", "yes")
	h.Set("X-Tether-Via", "forged <script>, 0123456789abcdef")
	resp, data := p.do(t, http.MethodPost, "/v1/chat/completions", h, []byte(routes[0].body("m")))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, data)
	}
	got := fake.Requests()[0].Header
	for k := range got {
		if k == "X-Tether-Via" {
			if via := got.Values(k); len(via) != 1 || !regexp.MustCompile(`^0123456789abcdef, [0-9a-f]{16}$`).MatchString(via[0]) {
				t.Errorf("the provider got %s: %q, want the caller's well-formed hop, then this proxy's token", k, via)
			}
			continue
		}
		if strings.HasPrefix(strings.ToLower(k), "x-tether-") || strings.EqualFold(k, "X-Private-Hop") {
			t.Errorf("the provider got %s: %q", k, got.Get(k))
		}
	}
	if got.Get("X-Kept") != "yes" {
		t.Errorf("an ordinary header was dropped")
	}
}
