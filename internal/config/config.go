// Package config loads Tether's YAML configuration, expands ${ENV}
// references, fills defaults and validates the result once at start with
// errors that name the field and the fix.
package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/tether-dev/tether/internal/store"
)

// Config is the whole configuration. The zero value, after WithDefaults, is a
// working passthrough proxy on 127.0.0.1:8787.
type Config struct {
	Listen       string `yaml:"listen"`
	Store        string `yaml:"store"`          // memory: | sqlite path or sqlite:///path | postgres://…
	MaxBodyBytes int64  `yaml:"max_body_bytes"` // default 32 MiB
	// MaxResponseBytes bounds a non-streamed provider answer the proxy
	// reads; default 64 MiB. A larger answer is a 502 in the caller's dialect.
	MaxResponseBytes int64 `yaml:"max_response_bytes"`
	HTTP             HTTP  `yaml:"http"`
	// Secret keys every fingerprint and token the proxy derives (passthrough
	// principals, hint lookups, internal markers). Empty: generated once and
	// kept beside the SQLite store (or per process for memory:). Required
	// with a PostgreSQL store, which replicas share.
	Secret string `yaml:"secret"`
	// AllowGeneratedSecret lets a PostgreSQL store run with a per-process
	// secret (one throwaway process: its lineage and passthrough principals
	// do not survive a restart and no second replica can share them).
	AllowGeneratedSecret bool   `yaml:"allow_generated_secret"`
	AdminKey             string `yaml:"admin_key"`
	LogLevel             string `yaml:"log_level"` // debug|info|warn|error

	Providers  []Provider  `yaml:"providers"`
	Routes     []Route     `yaml:"routes"`
	Principals []Principal `yaml:"principals"`
	Prices     []Price     `yaml:"prices"`
	Budgets    []Budget    `yaml:"budgets"`
	// StoreOutage is the admission policy while the store is unreachable.
	StoreOutage StoreOutage `yaml:"store_outage"`

	Continuity Continuity `yaml:"compaction_continuity"`
	Transcript Transcript `yaml:"transcript"`

	// Warnings name the deprecated settings the file set (see
	// deprecatedSettings): paths and lines, never values. The caller
	// reports them; app.New logs them.
	Warnings []string `yaml:"-"`
}

// HTTP bounds what an inbound connection may hold: every field has a
// default, and 0 means the default.
type HTTP struct {
	ReadHeaderTimeout time.Duration `yaml:"read_header_timeout"` // default 30s
	BodyReadTimeout   time.Duration `yaml:"body_read_timeout"`   // whole request body; default 2m
	IdleTimeout       time.Duration `yaml:"idle_timeout"`        // keep-alive between requests; default 2m
	MaxConnections    int           `yaml:"max_connections"`     // open at once; default 4096
	// MaxConnectionsPerRemote bounds the connections of one remote IP
	// address; default 256.
	MaxConnectionsPerRemote int `yaml:"max_connections_per_remote"`
}

// Dialect families a provider can serve.
const (
	FamilyOpenAI    = "openai"    // Chat Completions and Responses
	FamilyAnthropic = "anthropic" // Messages
	FamilyGemini    = "gemini"    // Gemini generateContent / streamGenerateContent
)

// Provider is a named upstream.
type Provider struct {
	Name    string            `yaml:"name"`
	Dialect string            `yaml:"dialect"`  // openai | anthropic | gemini
	BaseURL string            `yaml:"base_url"` // OpenAI: ends in /v1; Anthropic and Gemini: without a version
	APIKey  string            `yaml:"api_key"`  // empty: forward the client's own key (passthrough)
	Headers map[string]string `yaml:"headers"`
	Timeout time.Duration     `yaml:"timeout"` // whole-call bound; default 10m
	// ServerCompaction says whether the provider honours the request fields
	// that ask it to manage the context itself (Anthropic and OpenAI
	// Responses context_management, Anthropic's on-demand compaction
	// parameter). Unset: yes for Messages and Responses, no for Chat
	// Completions, which has no such field. A request that asks a provider
	// without it gets a 400 in its own dialect instead of having the field
	// ignored by the provider.
	ServerCompaction *bool `yaml:"server_compaction"`
	// SystemMessageModels are the model patterns (as in routes[].match)
	// this provider accepts role "system" messages inside the Anthropic
	// messages array for. Empty: none. Continuity reinjects the capsule as
	// such a message there (after the prompt-cache prefix) and in the
	// system prompt elsewhere.
	SystemMessageModels []string `yaml:"system_message_models"`
}

// ServesServerCompaction reports whether the provider honours the
// provider-side context fields for a request of the Chat Completions API
// (chat) or of another API.
func (p Provider) ServesServerCompaction(chat bool) bool {
	if p.ServerCompaction != nil {
		return *p.ServerCompaction
	}
	return !chat
}

// Route maps a model name pattern ("*" any characters, "?" one) to a provider.
type Route struct {
	Match    string `yaml:"match"`
	Provider string `yaml:"provider"`
	// Model, when set, replaces the model name sent upstream.
	Model string `yaml:"model"`
}

// InternalPrincipal is the principal of Tether's internal requests (an
// extractor call routed back through the proxy) and the namespace of what
// belongs to no caller (the web view's signed-out tokens); no configured
// principal may take it.
const InternalPrincipal = "tether-internal"

// Principal is an authenticated caller in proxy-key mode.
type Principal struct {
	ID      string   `yaml:"id"`
	Account string   `yaml:"account"`
	Keys    []string `yaml:"keys"`
	// Continuity overrides the global feature settings for this principal
	// (trusted operator policy; never settable by a request).
	Continuity *ContinuityOverride `yaml:"compaction_continuity"`
}

// Price is the cost of a model, in USD per million tokens.
type Price struct {
	Match          string  `yaml:"match"`
	InputPerMTok   float64 `yaml:"input_per_mtok"`
	OutputPerMTok  float64 `yaml:"output_per_mtok"`
	CacheReadPerM  float64 `yaml:"cache_read_per_mtok"`
	CacheWritePerM float64 `yaml:"cache_write_per_mtok"`
}

// StoreOutage decides the admission of budget-bound calls while the store
// cannot record a reservation: fail_open (default) admits them within a
// per-process cap (MaxTokens, MaxUSD; defaults 2,000,000 tokens and $5)
// counted from the start of the outage; fail_closed refuses them (503).
// Calls no budget applies to are always admitted.
type StoreOutage struct {
	Admission string  `yaml:"admission"` // fail_open | fail_closed
	MaxTokens int64   `yaml:"max_tokens"`
	MaxUSD    float64 `yaml:"max_usd"`
}

// Budget bounds spend or tokens of a principal or an account per period.
type Budget struct {
	Principal string  `yaml:"principal"`
	Account   string  `yaml:"account"`
	Period    string  `yaml:"period"` // day | month | total
	MaxUSD    float64 `yaml:"max_usd"`
	MaxTokens int64   `yaml:"max_tokens"`
}

// Continuity is the feature's global configuration.
type Continuity struct {
	Enabled   bool      `yaml:"enabled"`
	Preserve  Preserve  `yaml:"preserve"`
	Extractor Extractor `yaml:"extractor"`
	// Deprecated: extraction is always billed to the originating user.
	Billing          Billing       `yaml:"billing,omitempty"`
	MaxCapsuleTokens int           `yaml:"max_capsule_tokens"`
	BarrierTimeout   time.Duration `yaml:"barrier_timeout"`
	// LineageWriteInterval is how long the lineage records of a turn that
	// continues its branch may wait to be written with a store this
	// process alone writes (SQLite): a newer turn of the branch meanwhile
	// takes their place (session.Options.Coalesce).
	LineageWriteInterval time.Duration `yaml:"lineage_write_interval"`
	Reinjection          string        `yaml:"reinjection"` // every_turn | first_turn
	CopyOnFork           bool          `yaml:"copy_on_fork"`
	SourcePolicy         string        `yaml:"source_policy"` // auto | structured_only
	// Deprecated: preservation always fails open.
	FailureMode string        `yaml:"failure_mode,omitempty"`
	CapsuleTTL  time.Duration `yaml:"capsule_ttl"`
}

// Preserve selects what the capsule keeps.
type Preserve struct {
	Plan                 *bool `yaml:"plan"`
	UserDecisions        *bool `yaml:"user_decisions"`
	Constraints          *bool `yaml:"constraints"`
	Rationale            *bool `yaml:"rationale"`
	RejectedAlternatives *bool `yaml:"rejected_alternatives"`
}

// Each switch reads as on when unset, the documented default, so a zero
// Preserve keeps everything.

func (p Preserve) PlanOn() bool                 { return on(p.Plan) }
func (p Preserve) UserDecisionsOn() bool        { return on(p.UserDecisions) }
func (p Preserve) ConstraintsOn() bool          { return on(p.Constraints) }
func (p Preserve) RationaleOn() bool            { return on(p.Rationale) }
func (p Preserve) RejectedAlternativesOn() bool { return on(p.RejectedAlternatives) }

func on(b *bool) bool { return b == nil || *b }

// Extractor configures the auxiliary semantic extractor. Its route is its
// own: it is never derived from the primary session's route.
type Extractor struct {
	// Route is "provider/model": a provider from Providers and the model to
	// ask; MarkersRoute (the default) for the built-in marker extractor;
	// NoExtractor for none (deterministic harvest only).
	Route           string        `yaml:"route"`
	Timeout         time.Duration `yaml:"timeout"`
	MaxInputTokens  int           `yaml:"max_input_tokens"`
	MaxOutputTokens int           `yaml:"max_output_tokens"`
	MaxPendingJobs  int           `yaml:"max_pending_jobs"`
	Workers         int           `yaml:"workers"`
}

// DefaultExtractor returns the extractor settings a configuration that sets
// none gets. The extraction pool and callers fall back to the same values
// when they are built without one; this is the one place they are written.
func DefaultExtractor() Extractor {
	return Extractor{
		Route:           MarkersRoute,
		Timeout:         8 * time.Second,
		MaxInputTokens:  12000,
		MaxOutputTokens: 2000,
		MaxPendingJobs:  64,
		Workers:         4,
	}
}

// DefaultMaxCapsuleTokens is max_capsule_tokens when unset.
const DefaultMaxCapsuleTokens = 2500

// Billing is a deprecated section: auxiliary inference is always billed to
// the principal whose session caused it.
type Billing struct {
	Attribution string `yaml:"attribution,omitempty"` // deprecated; only originating_user
}

// ContinuityOverride is a trusted per-principal override.
type ContinuityOverride struct {
	Enabled          *bool  `yaml:"enabled"`
	Extraction       *bool  `yaml:"extraction"`
	ExtractorRoute   string `yaml:"extractor_route"`
	MaxCapsuleTokens int    `yaml:"max_capsule_tokens"`
}

// Transcript states that durable transcript capture is off: this version has
// none, and enabled: true is refused.
type Transcript struct {
	Enabled bool `yaml:"enabled"`
	// Deprecated: there is no transcript capture to key or expire.
	Key string        `yaml:"key,omitempty"`
	TTL time.Duration `yaml:"ttl,omitempty"`
}

// deprecatedSettings have no effect: each names behaviour Tether always has
// (or a feature it does not have). A file may still set them, so files
// written for earlier versions and the original feature request's example
// load; Parse reports each one set in Config.Warnings, and Validate refuses
// a value that asks for anything else.
var deprecatedSettings = []struct{ path, why string }{
	{"compaction_continuity.failure_mode", "preservation always fails open"},
	{"compaction_continuity.billing.attribution", "extraction is always billed to the principal whose session caused it"},
	{"transcript.key", "there is no transcript capture"},
	{"transcript.ttl", "there is no transcript capture"},
}

// Environment variables that override or seed configuration.
const (
	EnvConfig           = "TETHER_CONFIG"
	EnvListen           = "TETHER_LISTEN"
	EnvStore            = "TETHER_STORE"
	EnvOpenAIBaseURL    = "TETHER_OPENAI_BASE_URL"
	EnvAnthropicBaseURL = "TETHER_ANTHROPIC_BASE_URL"
	EnvGeminiBaseURL    = "TETHER_GEMINI_BASE_URL"
)

// Default upstreams for passthrough mode.
const (
	DefaultOpenAIBaseURL    = "https://api.openai.com/v1"
	DefaultAnthropicBaseURL = "https://api.anthropic.com"
	DefaultGeminiBaseURL    = "https://generativelanguage.googleapis.com"
	DefaultListen           = "127.0.0.1:8787"
)

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// Parse decodes YAML (after ${ENV} expansion), rejecting unknown fields, and
// returns the validated configuration with defaults filled.
func Parse(data []byte, getenv func(string) string) (*Config, error) {
	var c Config
	var lines map[string]int
	if len(bytes.TrimSpace(data)) > 0 {
		var err error
		if lines, err = decodeStrict(data, &c); err != nil {
			return nil, err
		}
		if err := c.expandEnv(getenv); err != nil {
			return nil, withLines(err, lines)
		}
	}
	c.WithDefaults(getenv)
	if err := c.Validate(); err != nil {
		return nil, withLines(err, lines)
	}
	for _, d := range deprecatedSettings {
		if line, ok := lines[d.path]; ok {
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s (line %d) is deprecated and has no effect: %s; remove it", d.path, line, d.why))
		}
	}
	return &c, nil
}

// Load reads the file at path ("" = no file: all defaults).
func Load(file string, getenv func(string) string) (*Config, error) {
	if file == "" {
		return Parse(nil, getenv)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	c, err := Parse(data, getenv)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return c, nil
}

// WithDefaults fills every unset field.
func (c *Config) WithDefaults(getenv func(string) string) {
	c.Listen = cmp.Or(getenv(EnvListen), c.Listen, DefaultListen)
	c.Store = cmp.Or(getenv(EnvStore), c.Store)
	c.MaxBodyBytes = cmp.Or(c.MaxBodyBytes, 32<<20)
	c.MaxResponseBytes = cmp.Or(c.MaxResponseBytes, 64<<20)
	h := &c.HTTP
	h.ReadHeaderTimeout = cmp.Or(h.ReadHeaderTimeout, 30*time.Second)
	h.BodyReadTimeout = cmp.Or(h.BodyReadTimeout, 2*time.Minute)
	h.IdleTimeout = cmp.Or(h.IdleTimeout, 2*time.Minute)
	h.MaxConnections = cmp.Or(h.MaxConnections, 4096)
	h.MaxConnectionsPerRemote = cmp.Or(h.MaxConnectionsPerRemote, 256)
	c.LogLevel = cmp.Or(c.LogLevel, "info")
	if len(c.Providers) == 0 {
		c.Providers = []Provider{
			{Name: "openai", Dialect: FamilyOpenAI, BaseURL: cmp.Or(getenv(EnvOpenAIBaseURL), DefaultOpenAIBaseURL)},
			{Name: "anthropic", Dialect: FamilyAnthropic, BaseURL: cmp.Or(getenv(EnvAnthropicBaseURL), DefaultAnthropicBaseURL)},
			{Name: "gemini", Dialect: FamilyGemini, BaseURL: cmp.Or(getenv(EnvGeminiBaseURL), DefaultGeminiBaseURL)},
		}
	}
	for i := range c.Providers {
		p := &c.Providers[i]
		p.BaseURL = strings.TrimRight(p.BaseURL, "/")
		p.Timeout = cmp.Or(p.Timeout, 10*time.Minute)
	}
	if len(c.Routes) == 0 {
		// One catch-all route per dialect family: the first provider of each.
		seen := map[string]bool{}
		for _, p := range c.Providers {
			if !seen[p.Dialect] {
				seen[p.Dialect] = true
				c.Routes = append(c.Routes, Route{Match: "*", Provider: p.Name})
			}
		}
	}
	cc := &c.Continuity
	t := true
	for _, b := range []**bool{&cc.Preserve.Plan, &cc.Preserve.UserDecisions, &cc.Preserve.Constraints, &cc.Preserve.Rationale, &cc.Preserve.RejectedAlternatives} {
		if *b == nil {
			*b = &t
		}
	}
	cc.MaxCapsuleTokens = cmp.Or(cc.MaxCapsuleTokens, DefaultMaxCapsuleTokens)
	cc.BarrierTimeout = cmp.Or(cc.BarrierTimeout, 2*time.Second)
	cc.LineageWriteInterval = cmp.Or(cc.LineageWriteInterval, time.Second)
	cc.Reinjection = cmp.Or(cc.Reinjection, "every_turn")
	cc.SourcePolicy = cmp.Or(cc.SourcePolicy, "auto")
	cc.CapsuleTTL = cmp.Or(cc.CapsuleTTL, 30*24*time.Hour)
	ex, d := &cc.Extractor, DefaultExtractor()
	ex.Timeout = cmp.Or(ex.Timeout, d.Timeout)
	ex.MaxInputTokens = cmp.Or(ex.MaxInputTokens, d.MaxInputTokens)
	ex.MaxOutputTokens = cmp.Or(ex.MaxOutputTokens, d.MaxOutputTokens)
	ex.MaxPendingJobs = cmp.Or(ex.MaxPendingJobs, d.MaxPendingJobs)
	ex.Workers = cmp.Or(ex.Workers, d.Workers)
	ex.Route = cmp.Or(ex.Route, d.Route)
}

// Passthrough reports whether callers authenticate with their own provider
// key (no proxy keys configured).
func (c *Config) Passthrough() bool { return len(c.Principals) == 0 }

// Provider returns the named provider.
func (c *Config) Provider(name string) (Provider, bool) {
	for _, p := range c.Providers {
		if p.Name == name {
			return p, true
		}
	}
	return Provider{}, false
}

// Validate checks the configuration; its error names the field and the fix.
func (c *Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
	}
	if c.MaxBodyBytes < 1024 {
		bad("max_body_bytes", "must be at least 1024 (got %d)", c.MaxBodyBytes)
	}
	if c.MaxResponseBytes < 1024 {
		bad("max_response_bytes", "must be at least 1024 (got %d)", c.MaxResponseBytes)
	}
	for f, d := range map[string]time.Duration{"http.read_header_timeout": c.HTTP.ReadHeaderTimeout, "http.body_read_timeout": c.HTTP.BodyReadTimeout, "http.idle_timeout": c.HTTP.IdleTimeout} {
		if d < 0 {
			bad(f, "must be positive (got %s)", d)
		}
	}
	if c.HTTP.MaxConnections < 0 || c.HTTP.MaxConnectionsPerRemote < 0 || c.HTTP.MaxConnectionsPerRemote > c.HTTP.MaxConnections {
		bad("http.max_connections_per_remote", "must be between 1 and http.max_connections (got %d of %d)", c.HTTP.MaxConnectionsPerRemote, c.HTTP.MaxConnections)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		bad("log_level", "must be debug, info, warn or error (got %q)", c.LogLevel)
	}
	names := map[string]bool{}
	for i, p := range c.Providers {
		f := fmt.Sprintf("providers[%d]", i)
		if p.Name == "" {
			bad(f+".name", "is required")
		} else if names[p.Name] {
			bad(f+".name", "%q is used twice; provider names must be unique", p.Name)
		}
		names[p.Name] = true
		if p.Dialect != FamilyOpenAI && p.Dialect != FamilyAnthropic && p.Dialect != FamilyGemini {
			bad(f+".dialect", "must be %q, %q or %q (got %q)", FamilyOpenAI, FamilyAnthropic, FamilyGemini, p.Dialect)
		}
		if !strings.HasPrefix(p.BaseURL, "http://") && !strings.HasPrefix(p.BaseURL, "https://") {
			bad(f+".base_url", "must be an http:// or https:// URL (the value is not shown: a URL may carry credentials)")
		}
		for j, m := range p.SystemMessageModels {
			if m == "" {
				bad(fmt.Sprintf("%s.system_message_models[%d]", f, j), "is empty; use a model pattern like \"claude-*\"")
			}
		}
		if len(p.SystemMessageModels) > 0 && p.Dialect != FamilyAnthropic {
			bad(f+".system_message_models", "applies to anthropic providers only (got dialect %q)", p.Dialect)
		}
	}
	for i, r := range c.Routes {
		f := fmt.Sprintf("routes[%d]", i)
		if r.Match == "" {
			bad(f+".match", "must be a model name pattern like \"gpt-*\" or \"*\" (* matches any characters, / included)")
		}
		if !names[r.Provider] {
			bad(f+".provider", "names no provider (got %q); define it under providers", r.Provider)
		}
	}
	keys := map[string]string{}
	for i, p := range c.Principals {
		f := fmt.Sprintf("principals[%d]", i)
		if p.ID == "" {
			bad(f+".id", "is required")
		}
		if p.ID == InternalPrincipal {
			bad(f+".id", "%q is reserved for Tether's internal requests; choose another id", p.ID)
		}
		if len(p.Keys) == 0 {
			bad(f+".keys", "needs at least one proxy key (use ${ENV} to keep it out of the file)")
		}
		for j, k := range p.Keys {
			if len(k) < 16 {
				bad(fmt.Sprintf("%s.keys[%d]", f, j), "is empty or shorter than 16 characters (is its ${ENV} variable set?)")
			}
			if other, ok := keys[k]; ok && other != p.ID {
				bad(fmt.Sprintf("%s.keys[%d]", f, j), "is also a key of principal %q", other)
			}
			keys[k] = p.ID
		}
		if o := p.Continuity; o != nil && o.ExtractorRoute != "" {
			if err := c.checkExtractorRoute(o.ExtractorRoute); err != nil {
				bad(f+".compaction_continuity.extractor_route", "%v", err)
			}
		}
	}
	if len(c.Principals) > 0 {
		for i, p := range c.Providers {
			if p.APIKey == "" {
				bad(fmt.Sprintf("providers[%d].api_key", i), "is required when principals (proxy keys) are configured: callers' proxy keys are never forwarded upstream")
			}
		}
	}
	for i, b := range c.Budgets {
		f := fmt.Sprintf("budgets[%d]", i)
		if (b.Principal == "") == (b.Account == "") {
			bad(f, "set exactly one of principal or account")
		}
		switch b.Period {
		case "day", "month", "total":
		default:
			bad(f+".period", "must be day, month or total (got %q)", b.Period)
		}
		if b.MaxUSD <= 0 && b.MaxTokens <= 0 {
			bad(f, "set max_usd or max_tokens")
		}
	}
	if so := c.StoreOutage; so.Admission != "" && so.Admission != "fail_open" && so.Admission != "fail_closed" {
		bad("store_outage.admission", "must be fail_open or fail_closed (got %q)", so.Admission)
	}
	if so := c.StoreOutage; so.MaxTokens < 0 || so.MaxUSD < 0 {
		bad("store_outage", "max_tokens and max_usd must not be negative")
	}
	cc := c.Continuity
	if cc.Reinjection != "every_turn" && cc.Reinjection != "first_turn" {
		bad("compaction_continuity.reinjection", "must be every_turn or first_turn (got %q)", cc.Reinjection)
	}
	if cc.FailureMode != "" && cc.FailureMode != "fail_open" {
		bad("compaction_continuity.failure_mode", "is deprecated: preservation always fails open (got %q); remove it", cc.FailureMode)
	}
	if cc.SourcePolicy != "auto" && cc.SourcePolicy != "structured_only" {
		bad("compaction_continuity.source_policy", "must be auto or structured_only (got %q)", cc.SourcePolicy)
	}
	if a := cc.Billing.Attribution; a != "" && a != "originating_user" {
		bad("compaction_continuity.billing.attribution", "is deprecated: extraction is always billed to the originating user (got %q); remove it", a)
	}
	if cc.MaxCapsuleTokens < 200 || cc.MaxCapsuleTokens > 32000 {
		bad("compaction_continuity.max_capsule_tokens", "must be between 200 and 32000 (got %d)", cc.MaxCapsuleTokens)
	}
	if cc.LineageWriteInterval < 0 || cc.LineageWriteInterval > time.Minute {
		bad("compaction_continuity.lineage_write_interval", "must be between 0 and 1m (got %s)", cc.LineageWriteInterval)
	}
	if cc.BarrierTimeout < 0 || cc.BarrierTimeout > time.Minute {
		bad("compaction_continuity.barrier_timeout", "must be between 0 and 1m (got %s)", cc.BarrierTimeout)
	}
	ex := cc.Extractor
	if ex.Route != "" {
		if err := c.checkExtractorRoute(ex.Route); err != nil {
			bad("compaction_continuity.extractor.route", "%v", err)
		}
	}
	if ex.Workers < 1 || ex.Workers > 256 {
		bad("compaction_continuity.extractor.workers", "must be between 1 and 256 (got %d)", ex.Workers)
	}
	if ex.MaxPendingJobs < 1 || ex.MaxPendingJobs > 100000 {
		bad("compaction_continuity.extractor.max_pending_jobs", "must be between 1 and 100000 (got %d)", ex.MaxPendingJobs)
	}
	if ex.Timeout <= 0 {
		bad("compaction_continuity.extractor.timeout", "must be positive")
	}
	if loc, err := store.ParseURL(c.Store); err == nil && loc.Kind == store.Postgres && c.Secret == "" && !c.AllowGeneratedSecret {
		bad("secret", "is required with a PostgreSQL store: every replica sharing it must derive the same lineage keys, epoch tokens and "+
			"passthrough principals, and a per-process secret changes them on every start (set secret: ${TETHER_SECRET} on all replicas, "+
			"or allow_generated_secret: true for one throwaway process)")
	}
	if c.Transcript.Enabled {
		bad("transcript.enabled", "durable transcript capture is not available in this version; remove it (continuity never needs a transcript)")
	}
	return errors.Join(errs...)
}

// ExtractorRoute splits "provider/model".
func ExtractorRoute(route string) (provider, model string, ok bool) {
	provider, model, ok = strings.Cut(route, "/")
	return provider, model, ok && provider != "" && model != ""
}

// MarkersRoute is the extractor route of the built-in extractor: what the
// user plainly decided in everyday English (extract.MarkersCaller), no model
// call, no cost.
const MarkersRoute = "builtin/markers"

// NoExtractor is the extractor route that turns extraction off (plan state
// from structured tool calls only). MarkersRoute is the default.
const NoExtractor = "none"

// ExtractorOn reports whether route names an extractor.
func ExtractorOn(route string) bool { return route != "" && route != NoExtractor }

func (c *Config) checkExtractorRoute(route string) error {
	if route == MarkersRoute || route == NoExtractor {
		return nil
	}
	p, _, ok := ExtractorRoute(route)
	if !ok {
		return fmt.Errorf("must be \"provider/model\" (got %q)", route)
	}
	if _, found := c.Provider(p); !found {
		return fmt.Errorf("provider %q is not defined under providers", p)
	}
	return nil
}
