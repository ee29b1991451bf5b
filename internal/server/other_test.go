package server_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/ledger"
	"github.com/tether-dev/tether/internal/store/memstore"
)

type seen struct{ method, path, auth, body string }

// Common SDK calls Tether has no dialect route for — retrieving a model or a
// stored response, embeddings, legacy completions — are relayed to the
// provider with the operator's key (proxy-key mode), authenticated and
// accounted, instead of 404. The organisation admin API is not relayed.
func TestUnknownProviderEndpointsAreRelayed(t *testing.T) {
	var mu sync.Mutex
	var got []seen
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, seen{r.Method, r.URL.Path, r.Header.Get("Authorization"), string(b)})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/v1/embeddings":
			io.WriteString(w, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,0.2]}],"model":"text-embedding-3-small","usage":{"prompt_tokens":7,"total_tokens":7}}`)
		case strings.HasPrefix(r.URL.Path, "/v1/models/"):
			io.WriteString(w, `{"id":"gpt-test","object":"model","created":1,"owned_by":"x"}`)
		case strings.HasPrefix(r.URL.Path, "/v1/responses/"):
			io.WriteString(w, `{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"gpt-test","output":[]}`)
		default:
			w.WriteHeader(404)
			io.WriteString(w, `{"error":{"message":"nope"}}`)
		}
	}))
	t.Cleanup(up.Close)
	cfg := passthroughConfig(t, up.URL, func(c *config.Config) {
		c.Principals = []config.Principal{{ID: "alice", Keys: []string{budgetKey}}}
		for i := range c.Providers {
			c.Providers[i].APIKey = "upstream-key"
		}
	})
	led := ledger.New(ledger.Options{Store: memstore.New(memstore.Options{}), Now: time.Now})
	p := startProxy(t, proxyOpts{cfg: cfg, admitter: led})
	oc := openai.NewClient(option.WithBaseURL(p.URL+"/v1"), option.WithAPIKey(budgetKey), option.WithMaxRetries(0))
	ctx := t.Context()

	if m, err := oc.Models.Get(ctx, "gpt-test"); err != nil || m.ID != "gpt-test" {
		t.Errorf("GET /v1/models/{id}: %v %+v", err, m)
	}
	if r, err := oc.Responses.Get(ctx, "resp_1", responses.ResponseGetParams{}); err != nil || r.ID != "resp_1" {
		t.Errorf("GET /v1/responses/{id}: %v", err)
	}
	e, err := oc.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: "text-embedding-3-small",
		Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("hello")}})
	if err != nil || len(e.Data) != 1 {
		t.Fatalf("POST /v1/embeddings: %v", err)
	}
	mu.Lock()
	for _, s := range got {
		if s.auth != "Bearer upstream-key" {
			t.Errorf("%s %s reached the provider with %q, want the operator's key", s.method, s.path, s.auth)
		}
	}
	if len(got) != 3 {
		t.Errorf("provider saw %d requests, want 3: %+v", len(got), got)
	}
	mu.Unlock()

	// Without a valid proxy key nothing is relayed; the admin API never is.
	for _, c := range []struct {
		path, key string
		status    int
	}{{"/v1/embeddings", "wrong-key-0123456789", 401}, {"/v1/organization/users", budgetKey, 404}} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.URL+c.path, nil)
		req.Header.Set("Authorization", "Bearer "+c.key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s: status %d, want %d", c.path, resp.StatusCode, c.status)
		}
	}
	mu.Lock()
	if len(got) != 3 {
		t.Errorf("refused requests reached the provider: %+v", got[3:])
	}
	mu.Unlock()

	// The embeddings call is in alice's ledger with its usage.
	rep, err := led.Report(ctx, "alice", "", time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Totals.Calls != 1 || rep.Totals.InputTokens != 7 {
		t.Errorf("ledger: %d calls, %d input tokens; want the embeddings call with 7", rep.Totals.Calls, rep.Totals.InputTokens)
	}
}
