package server_test

import (
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

// A body of ~6 MiB of nested "[" used to overflow the stack of the JSON
// validator and kill the process. It is refused with a 400 in the caller's
// dialect before any recursive parse, and the provider never sees it.
func TestDeepNestingRefusedInDialect(t *testing.T) {
	fake, p := hostileSetup(t)
	deep := strings.Repeat("[", 6<<20)
	for _, rt := range routes {
		body := rt.body("m")
		i := strings.LastIndex(body, "}")
		body = body[:i] + `,"x":` + deep + body[i:]
		resp, data := p.do(t, http.MethodPost, rt.path, rt.header, []byte(body))
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("%s: status %d, want 400: %.200s", rt.name, resp.StatusCode, data)
		}
		if msg := dialectError(t, rt.anthropic, data); !strings.Contains(msg, "nests deeper than 512") {
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
	for _, rt := range routes {
		body := rt.body("cheap-model")
		for _, dup := range []string{`"model":"expensive-model",`, `"mod\u0065l":"expensive-model",`, `"stream":false,"stream":true,`} {
			b := "{" + dup + body[1:]
			resp, data := p.do(t, http.MethodPost, rt.path, rt.header, []byte(b))
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("%s %s: status %d, want 400: %s", rt.name, dup, resp.StatusCode, data)
			}
			if msg := dialectError(t, rt.anthropic, data); !strings.Contains(msg, "twice") {
				t.Errorf("%s: message %q does not say a field is named twice", rt.name, msg)
			}
		}
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("the provider saw %d requests with duplicate fields", n)
	}
}
