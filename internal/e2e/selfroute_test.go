package e2e

import (
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/demo"
)

// In proxy-key mode an extractor route that points back at Tether works:
// the internal call is proven by its marker (it carries the provider's key,
// not a proxy key) and its usage is billed once, to the originating user.
func TestSelfRouteInProxyKeyMode(t *testing.T) {
	cfg := `
secret: selfroute-secret-0123456789
providers:
  - {name: model, dialect: anthropic, base_url: "%[1]s", api_key: provider-key-0123456789}
  - {name: openai, dialect: openai, base_url: "%[1]s/v1", api_key: provider-key-0123456789}
  - {name: self, dialect: openai, base_url: "%[2]s/v1", api_key: provider-key-0123456789}
routes:
  - {match: "*", provider: model}
  - {match: "*", provider: openai}
principals:
  - {id: alice, account: acme, keys: [alice-key-0123456789]}
compaction_continuity:
  enabled: true
  barrier_timeout: 5s
  extractor:
    route: self/` + demo.ExtractorModel + `
`
	e := accountingStart(t, cfg, nil, nil)
	a := e.agent("selfroute-session")
	a.APIKey = "alice-key-0123456789"
	say(t, a, "Decision: use PostgreSQL, not MongoDB.")
	compact(t, a)
	say(t, a, "Continue.")
	if b := block(e.lastPrimary()); !strings.Contains(b, "use PostgreSQL, not MongoDB") {
		t.Fatalf("extraction routed through the proxy failed in proxy-key mode:\n%s", b)
	}
	for _, r := range e.fake.Requests() {
		if k := r.Header.Get("x-api-key") + r.Header.Get("Authorization"); strings.Contains(k, "alice-key") {
			t.Errorf("a proxy key reached the provider on %s", r.Path)
		}
	}
	// The internal hop itself is not billed: only alice's entries exist.
	for _, en := range accountingEntries(t, e) {
		if en.Principal != "alice" {
			t.Errorf("ledger entry for %q (kind %s): the internal hop was billed", en.Principal, en.Kind)
		}
	}
}
