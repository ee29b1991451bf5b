package upstream

import (
	"context"
	"net/http"
	"testing"

	"github.com/tether-dev/tether/internal/config"
)

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, model string
		want           bool
	}{
		{"*", "gpt-5", true},
		{"*", "org/model", true},
		{"*", "", true},
		{"gpt-*", "gpt-5-mini", true},
		{"gpt-*", "claude-sonnet", false},
		{"claude-*-4-5", "claude-sonnet-4-5", true},
		{"claude-?", "claude-3", true},
		{"claude-?", "claude-35", false},
		{"org/*", "org/llama-70b", true},
		{"exact", "exact", true},
		{"exact", "exactly", false},
	} {
		if got := Match(tc.pattern, tc.model); got != tc.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.pattern, tc.model, got, tc.want)
		}
	}
}

func TestRouteByDialectAndPattern(t *testing.T) {
	cfg, err := config.Parse([]byte(`
providers:
  - {name: oa, dialect: openai, base_url: "http://127.0.0.1:1/v1"}
  - {name: an, dialect: anthropic, base_url: "http://127.0.0.1:2"}
  - {name: local, dialect: openai, base_url: "http://127.0.0.1:3/v1"}
routes:
  - {match: "llama-*", provider: local, model: "meta/llama"}
  - {match: "*", provider: oa}
  - {match: "*", provider: an}
`), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	r := NewRouter(cfg)
	for _, tc := range []struct{ family, model, provider, upstreamModel string }{
		{config.FamilyOpenAI, "gpt-5", "oa", "gpt-5"},
		{config.FamilyOpenAI, "llama-3", "local", "meta/llama"},
		{config.FamilyAnthropic, "claude-x", "an", "claude-x"},
		{config.FamilyOpenAI, "org/model", "oa", "org/model"},
	} {
		got, err := r.Route(tc.family, tc.model)
		if err != nil || got.Provider.Name != tc.provider || got.Model != tc.upstreamModel {
			t.Errorf("Route(%s, %s) = %s/%s, %v; want %s/%s", tc.family, tc.model, got.Provider.Name, got.Model, err, tc.provider, tc.upstreamModel)
		}
	}
}

func TestOutboundReplacesProxyKeyWithProviderKey(t *testing.T) {
	in := http.Header{"Authorization": {"Bearer proxy-key-0123456789"}, "Connection": {"keep-alive"}, "X-Tether-Aux": {"forged"}, "Anthropic-Beta": {"x"}}
	req, err := Outbound(context.Background(), Target{Provider: config.Provider{Dialect: config.FamilyAnthropic, BaseURL: "http://h", APIKey: "sk-ant-op"}}, "POST", "/v1/messages?beta=true", in, []byte("{}"))
	if err != nil {
		t.Fatal(err)
	}
	if req.Header.Get("Authorization") != "" || req.Header.Get("x-api-key") != "sk-ant-op" {
		t.Errorf("credentials: %v", req.Header)
	}
	if req.Header.Get("Connection") != "" || req.Header.Get("X-Tether-Aux") != "" || req.Header.Get("Anthropic-Beta") != "x" {
		t.Errorf("headers: %v", req.Header)
	}
	if req.URL.String() != "http://h/v1/messages?beta=true" {
		t.Errorf("url %s", req.URL)
	}
	oa, _ := Outbound(context.Background(), Target{Provider: config.Provider{Dialect: config.FamilyOpenAI, BaseURL: "http://h/v1"}}, "POST", "/v1/responses", in, nil)
	if oa.URL.String() != "http://h/v1/responses" || oa.Header.Get("Authorization") != "Bearer proxy-key-0123456789" {
		t.Errorf("passthrough openai: %s %v", oa.URL, oa.Header)
	}
}
