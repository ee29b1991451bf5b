package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

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
