package config

import (
	"strings"
	"testing"
	"time"
)

func noEnv(string) string { return "" }

func TestZeroConfigIsPassthroughOnLoopback(t *testing.T) {
	c, err := Parse(nil, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.1:8787" || !c.Passthrough() || c.Continuity.Enabled {
		t.Fatalf("zero config: listen %q passthrough %v continuity %v", c.Listen, c.Passthrough(), c.Continuity.Enabled)
	}
	if p, _ := c.Provider("openai"); p.BaseURL != DefaultOpenAIBaseURL {
		t.Errorf("openai base URL %q", p.BaseURL)
	}
	if p, _ := c.Provider("anthropic"); p.BaseURL != DefaultAnthropicBaseURL {
		t.Errorf("anthropic base URL %q", p.BaseURL)
	}
	if c.Continuity.BarrierTimeout != 2*time.Second || c.Continuity.MaxCapsuleTokens != 2500 || c.Continuity.Reinjection != "every_turn" {
		t.Errorf("continuity defaults: %+v", c.Continuity)
	}
}

func TestEnvironmentOverridesAndExpansion(t *testing.T) {
	env := map[string]string{EnvListen: "127.0.0.1:9999", EnvOpenAIBaseURL: "http://127.0.0.1:1/v1/", "ALICE": "alice-key-0123456789", "OKEY": "sk-op"}
	getenv := func(k string) string { return env[k] }
	c, err := Parse([]byte(`
providers:
  - {name: o, dialect: openai, base_url: "${BASE:-http://127.0.0.1:2/v1}", api_key: "${OKEY}"}
principals:
  - {id: alice, keys: ["${ALICE}"]}
`), getenv)
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.1:9999" {
		t.Errorf("TETHER_LISTEN ignored: %q", c.Listen)
	}
	if c.Providers[0].BaseURL != "http://127.0.0.1:2/v1" || c.Providers[0].APIKey != "sk-op" {
		t.Errorf("expansion: %+v", c.Providers[0])
	}
	if c.Principals[0].Keys[0] != "alice-key-0123456789" {
		t.Errorf("key expansion: %q", c.Principals[0].Keys[0])
	}
	d, err := Parse(nil, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := d.Provider("openai"); p.BaseURL != "http://127.0.0.1:1/v1" {
		t.Errorf("TETHER_OPENAI_BASE_URL not applied: %q", p.BaseURL)
	}
}

func TestValidationNamesFieldAndFix(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"listen: x\nunknown_field: 1\n", "unknown_field"},
		{"providers: [{name: a, dialect: grpc, base_url: http://x}]\n", "providers[0].dialect"},
		{"providers: [{name: a, dialect: openai, base_url: ftp://x}]\n", "providers[0].base_url"},
		{"routes: [{match: '*', provider: nope}]\n", "routes[0].provider"},
		{"principals: [{id: a, keys: [short]}]\n", "principals[0].keys[0]"},
		{"principals: [{id: tether-internal, keys: [0123456789abcdef]}]\n", "principals[0].id"},
		{"principals: [{id: a, keys: [0123456789abcdef]}]\n", "providers[0].api_key"},
		{"compaction_continuity: {reinjection: sometimes}\n", "compaction_continuity.reinjection"},
		{"compaction_continuity: {extractor: {route: nowhere}}\n", "compaction_continuity.extractor.route"},
		{"compaction_continuity: {extractor: {route: ghost/model}}\n", "provider \"ghost\" is not defined"},
		{"compaction_continuity: {max_capsule_tokens: 5}\n", "compaction_continuity.max_capsule_tokens"},
		{"budgets: [{principal: a, account: b, period: day, max_usd: 1}]\n", "budgets[0]"},
		{"transcript: {enabled: true}\n", "transcript.enabled"},
		{"compaction_continuity: {failure_mode: fail_closed}\n", "compaction_continuity.failure_mode"},
		{"compaction_continuity: {billing: {attribution: system}}\n", "compaction_continuity.billing.attribution"},
	} {
		_, err := Parse([]byte(tc.yaml), noEnv)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want it to name %q", tc.yaml, err, tc.want)
		}
	}
}

// Settings that have no effect still load, with a warning naming each one
// (path and line, never the value); a file that sets none gets no warning.
func TestDeprecatedSettingsWarn(t *testing.T) {
	c, err := Parse([]byte("compaction_continuity:\n  billing:\n    attribution: originating_user\n  failure_mode: fail_open\n"+
		"transcript:\n  enabled: false\n  key: 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n  ttl: 24h\n"), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"compaction_continuity.failure_mode (line 4) is deprecated",
		"compaction_continuity.billing.attribution (line 3) is deprecated",
		"transcript.key (line 7) is deprecated",
		"transcript.ttl (line 8) is deprecated",
	}
	if len(c.Warnings) != len(want) {
		t.Fatalf("warnings %q, want %d", c.Warnings, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(c.Warnings[i], w) {
			t.Errorf("warning %d = %q, want it to start %q", i, c.Warnings[i], w)
		}
		if strings.Contains(c.Warnings[i], "0011223344") {
			t.Errorf("warning %d repeats a value: %q", i, c.Warnings[i])
		}
	}
	c, err = Parse([]byte("transcript: {enabled: false}\n"), noEnv)
	if err != nil || len(c.Warnings) != 0 {
		t.Errorf("transcript.enabled: false: %v, warnings %q", err, c.Warnings)
	}
}

// Replicas sharing PostgreSQL must share the secret: a per-process one gives
// each replica its own lineage keys, epoch tokens and passthrough principals.
func TestPostgresStoreNeedsASharedSecret(t *testing.T) {
	pg := "store: postgres://tether@db:5432/tether\n"
	_, err := Parse([]byte(pg), noEnv)
	if err == nil || !strings.Contains(err.Error(), "secret: is required with a PostgreSQL store") {
		t.Fatalf("postgres without secret: %v", err)
	}
	env := map[string]string{EnvStore: "postgresql://tether@db/tether"}
	if _, err := Parse(nil, func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "secret:") {
		t.Fatalf("postgres from %s without secret: %v", EnvStore, err)
	}
	for _, ok := range []string{
		pg + "secret: a-shared-secret-of-the-deployment\n",
		pg + "allow_generated_secret: true\n",
		"store: /var/lib/tether/tether.db\n",
		"store: \"memory:\"\n",
	} {
		if _, err := Parse([]byte(ok), noEnv); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}

// A mistyped setting is reported as the file names it — YAML path and line —
// never as a Go type or struct field.
func TestDecodeErrorsNameYAMLPathAndLine(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"compaction_continuity:\n  enabled: true\n  barrier_timeout: 2 seconds\n",
			`line 3: compaction_continuity.barrier_timeout: must be a duration like 30s, 2m or 1h30m (got "2 seconds")`},
		{"compaction_continuity:\n  enabled: yes please\n", `line 2: compaction_continuity.enabled: must be true or false (got "yes please")`},
		{"listen: 127.0.0.1:1\nmax_body_bytes: lots\n", `line 2: max_body_bytes: must be a whole number (got "lots")`},
		{"providers:\n  - name: x\n    dialect: openai\n    base_url: http://a/v1\n    timeout: soon\n", `line 5: providers[0].timeout: must be a duration`},
		{"compaction_continuity:\n  barier_timeout: 2s\n", `line 2: compaction_continuity.barier_timeout: unknown setting`},
		{"compaction_continuity:\n  max_capsule_tokens: [1]\n", `line 2: compaction_continuity.max_capsule_tokens: must be a whole number (got a list)`},
		{"compaction_continuity:\n  enabled: true\n  max_capsule_tokens: 5\n", `line 3: compaction_continuity.max_capsule_tokens: must be between 200 and 32000`},
		{"compaction_continuity:\n  enabled: true\n  lineage_write_interval: 5m\n", `line 3: compaction_continuity.lineage_write_interval: must be between 0 and 1m (got 5m0s)`},
	} {
		_, err := Parse([]byte(tc.yaml), noEnv)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q:\nerror %v\nwant  %s", tc.yaml, err, tc.want)
		}
		if err != nil && (strings.Contains(err.Error(), "Go struct") || strings.Contains(err.Error(), "Config.") || strings.Contains(err.Error(), "time:")) {
			t.Errorf("%q: error names Go internals: %v", tc.yaml, err)
		}
	}
}

// ${VAR} is expanded inside decoded string values only: a value holding
// ": " or " #" stays whole, an unset variable without a default stops the
// start with the field named, and no value ever appears in an error.
func TestEnvExpandedInsideValuesOnly(t *testing.T) {
	env := map[string]string{
		"ADMIN":  "adm-key-0123456789 #not-a-comment",
		"KEY":    "sk-secret: with colon 0123456789",
		"BADURL": "sk-leaked-secret",
	}
	getenv := func(k string) string { return env[k] }
	c, err := Parse([]byte(`
admin_key: ${ADMIN}
providers:
  - {name: oa, dialect: openai, base_url: "http://127.0.0.1:1/v1", api_key: "${KEY}"}
principals:
  - {id: p, keys: ["${MISSING:-proxy-key-0123456789}"]}
`), getenv)
	if err != nil {
		t.Fatal(err)
	}
	if c.AdminKey != env["ADMIN"] || c.Providers[0].APIKey != env["KEY"] || c.Principals[0].Keys[0] != "proxy-key-0123456789" {
		t.Errorf("values changed by expansion: admin %q key %q proxy key %q", c.AdminKey, c.Providers[0].APIKey, c.Principals[0].Keys[0])
	}

	_, err = Parse([]byte("providers:\n  - {name: oa, dialect: openai, base_url: \"http://x/v1\", api_key: \"${OPENAI_KEY}\"}\n"), getenv)
	if err == nil || !strings.Contains(err.Error(), "providers[0].api_key") || !strings.Contains(err.Error(), "OPENAI_KEY") {
		t.Errorf("an unset variable: error %v, want one naming providers[0].api_key and OPENAI_KEY", err)
	}

	_, err = Parse([]byte("providers:\n  - {name: oa, dialect: openai, base_url: \"${BADURL}\"}\n"), getenv)
	if err == nil || strings.Contains(err.Error(), env["BADURL"]) {
		t.Errorf("error %v carries the variable's value", err)
	}
}
