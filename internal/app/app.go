// Package app assembles Tether from its configuration: store, detection,
// lineage, preservation, extraction workers, ledger and the HTTP server.
// `tether serve`, `tether demo` and the end-to-end tests all build it here.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/tether-dev/tether/internal/auth"
	"github.com/tether-dev/tether/internal/compaction"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/detect"
	"github.com/tether-dev/tether/internal/extract"
	"github.com/tether-dev/tether/internal/flow"
	"github.com/tether-dev/tether/internal/ledger"
	"github.com/tether-dev/tether/internal/metrics"
	"github.com/tether-dev/tether/internal/preserve"
	"github.com/tether-dev/tether/internal/server"
	"github.com/tether-dev/tether/internal/session"
	"github.com/tether-dev/tether/internal/store"
	"github.com/tether-dev/tether/internal/web"
	"github.com/tether-dev/tether/prompts"
)

// Options are the process-level inputs that are not configuration.
type Options struct {
	// LogOutput receives JSON logs (ids, counts and durations only).
	LogOutput io.Writer
	// Store, when set, is used instead of opening cfg.Store (tests).
	Store store.Store
	// Observers receive metadata-only compaction events besides the
	// Prometheus counters.
	Observers []compaction.Observer
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
	// Rules replaces the embedded compaction rules (tests); nil means
	// compaction.Default().
	Rules *compaction.Ruleset
}

// App is an assembled proxy.
type App struct {
	Config   *config.Config
	Store    store.Store
	Registry *metrics.Registry
	Engine   *preserve.Engine
	Ledger   *ledger.Ledger
	Resolver *session.Resolver
	Logger   *slog.Logger

	handler   *server.Server
	pools     []*extract.Pool
	ownsStore bool
	stop      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// New builds the proxy. Close releases it.
func New(ctx context.Context, cfg *config.Config, opt Options) (*App, error) {
	if opt.LogOutput == nil {
		opt.LogOutput = io.Discard
	}
	level := map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}[cfg.LogLevel]
	logger := slog.New(slog.NewJSONHandler(opt.LogOutput, &slog.HandlerOptions{Level: level}))
	for _, w := range cfg.Warnings {
		logger.Warn("deprecated configuration setting", slog.String("detail", w))
	}

	a := &App{Config: cfg, Logger: logger, stop: make(chan struct{})}
	st := opt.Store
	if st == nil {
		url := cfg.Store
		if url == "" {
			url = store.DefaultSQLitePath()
		}
		var err error
		if st, err = store.Open(ctx, url); err != nil {
			return nil, fmt.Errorf("open store: %w", err)
		}
		a.ownsStore = true
	}
	a.Store = st
	secret, err := loadSecret(cfg)
	if err != nil {
		a.closeStore()
		return nil, err
	}
	if cfg.Secret != "" && shared(cfg, st) {
		if err := checkSharedSecret(ctx, st, secret); err != nil {
			a.closeStore()
			return nil, err
		}
	}

	reg := metrics.NewRegistry()
	reg.MustRegister(metrics.NewGoCollector(), metrics.NewProcessCollector())
	a.Registry = reg

	rules := opt.Rules
	if rules == nil {
		rules = compaction.Default()
	}
	hub := compaction.NewHub(append([]compaction.Observer{compaction.NewMetrics(reg)}, opt.Observers...)...)
	a.Resolver = session.NewResolver(st, session.Options{Secret: secret, Now: opt.Now, Exclusive: !shared(cfg, st),
		Coalesce: cfg.Continuity.LineageWriteInterval})
	if err := a.Resolver.IndexKeys(ctx); err != nil {
		logger.Warn("indexing lineage keys failed; every lineage lookup asks the store")
	}
	a.Ledger = ledger.New(ledger.Options{Store: st, Prices: cfg.Prices, Budgets: cfg.Budgets, Registerer: reg, Logger: logger, Now: opt.Now,
		Outage: ledger.Outage{Policy: cfg.StoreOutage.Admission, MaxTokens: cfg.StoreOutage.MaxTokens, MaxMicros: int64(math.Round(cfg.StoreOutage.MaxUSD * 1e6))}})
	// Calls a killed process left unsettled: with a store this process has
	// to itself (SQLite, memory) every reservation at start is one; on a
	// shared store only expired ones are (the accounting loop keeps at it).
	until := time.Now()
	if !shared(cfg, st) {
		until = until.Add(100 * 365 * 24 * time.Hour)
	}
	if _, err := a.Ledger.Reconcile(ctx, until); err != nil {
		logger.Warn("reconciling interrupted calls failed; retried every minute")
	}

	byID := map[string]config.Principal{}
	for _, p := range cfg.Principals {
		byID[p.ID] = p
	}
	pol := &policies{cfg: cfg, byID: byID, extractors: map[string]preserve.Extractor{}}
	a.Engine = preserve.New(preserve.Options{
		Rules: rules, Resolver: a.Resolver, Store: st, Policy: pol.For,
		Metrics: preserve.NewMetrics(reg), Logger: logger, Timeline: st,
	})

	// One worker pool per extractor route in use (the global one and any
	// per-principal override), all sharing one set of collectors labelled
	// by route. Model extraction is owed in the store's outbox until done.
	routes := map[string]bool{}
	if r := cfg.Continuity.Extractor.Route; config.ExtractorOn(r) {
		routes[r] = true
	}
	for _, p := range cfg.Principals {
		if p.Continuity != nil && config.ExtractorOn(p.Continuity.ExtractorRoute) {
			routes[p.Continuity.ExtractorRoute] = true
		}
	}
	for route := range routes {
		provName, model, _ := config.ExtractorRoute(route)
		prov, _ := cfg.Provider(provName)
		ex := cfg.Continuity.Extractor
		var caller, fallback extract.Caller = nil, extract.MarkersCaller{}
		var admission extract.Admission = a.Ledger
		inline := false
		switch {
		case route == config.MarkersRoute:
			// In process, no upstream call: nothing to reserve or bill, and
			// microseconds of work for a turn's new messages, done in the
			// request path (a long first-seen history goes to a worker).
			caller, fallback, admission, prov.Name, inline = extract.MarkersCaller{}, nil, nil, provName, true
		case prov.Dialect == config.FamilyAnthropic:
			caller = extract.NewAnthropicCaller(prov, model, ex.MaxOutputTokens, nil, secret)
		default:
			caller = extract.NewOpenAICaller(prov, model, ex.MaxOutputTokens, nil, secret)
		}
		pool := extract.NewPool(extract.PoolOptions{
			Workers: ex.Workers, MaxPending: ex.MaxPendingJobs, Timeout: ex.Timeout, MaxInputTokens: ex.MaxInputTokens,
			Caller: caller, Fallback: fallback, Route: route, Provider: prov.Name, Model: model, Family: prov.Dialect, Apply: a.Engine.ApplyOps, Load: a.Engine.LoadForJob,
			MaxOutputTokens: ex.MaxOutputTokens,
			Admission:       admission, Registerer: reg, Logger: logger, Now: opt.Now,
			Inline: inline, Outbox: st,
		})
		a.pools = append(a.pools, pool)
		pol.extractors[route] = pool
		if !inline && shared(cfg, st) {
			// Replicas: a barrier also joins the jobs in flight on the
			// others (owed in the shared outbox).
			pol.extractors[route] = preserve.NewSharedExtractor(pool, st, preserve.SharedOptions{Registerer: reg, Now: opt.Now})
		}
	}
	_ = prompts.ExtractVersion

	authn := auth.New(cfg, secret)
	a.handler = server.New(server.Options{
		Config: cfg, Secret: secret, Logger: logger, Registry: reg,
		Detector: detect.New(rules, hub),
		Hooks:    []flow.Hook{a.Engine},
		Admitter: a.Ledger,
		Ready:    a.ready,
		Mount: func(m *http.ServeMux) {
			a.Ledger.Routes(authn.Authenticate, cfg.AdminKey)(m)
			wo := web.Options{Store: st, SignOuts: st, Authn: authn.Authenticate, AdminKey: cfg.AdminKey, Logger: logger, Budgets: a.Ledger.Budgets,
				Conversations: a.describe, SessionSecret: secret, Now: opt.Now}
			web.Routes(wo)(m)
			web.UIRoutes(wo)(m)
		},
	})

	a.wg.Add(1)
	go a.retention(cfg.Continuity.CapsuleTTL)
	a.wg.Add(1)
	go a.reconcile()
	return a, nil
}

// Handler is the proxy's HTTP handler.
func (a *App) Handler() http.Handler { return a.handler }

// Serve serves on ln until ctx is done, then shuts down gracefully.
func (a *App) Serve(ctx context.Context, ln net.Listener) error {
	srv := server.NewHTTPServer(a.handler, a.Config.HTTP)
	ln = server.LimitListener(ln, a.Config.HTTP.MaxConnections, a.Config.HTTP.MaxConnectionsPerRemote)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	// ln is bound: connections queue until Serve accepts them.
	cfg := a.Config
	a.Logger.Info("tether ready", slog.String("listen", ln.Addr().String()), slog.String("store", StoreKind(cfg.Store)),
		slog.String("upstreams", Upstreams(cfg)), slog.Bool("continuity", cfg.Continuity.Enabled),
		slog.String("extractor", cfg.Continuity.Extractor.Route), slog.Bool("passthrough", cfg.Passthrough()),
		slog.Int("principals", len(cfg.Principals)))
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	err := srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = srv.Close()
	}
	<-errc
	return err
}

// ready is /readyz: the store must answer and take a write (a read-only or
// full SQLite file still answers a ping).
func (a *App) ready(ctx context.Context) error {
	if err := a.Store.Ping(ctx); err != nil {
		return err
	}
	if err := a.Store.Adjust(ctx, readyProbeKey, 0); err != nil {
		return fmt.Errorf("store does not accept writes: %w", err)
	}
	return nil
}

// readyProbeKey is the counter /readyz writes (always 0).
const readyProbeKey = "tether:ready-probe"

// reconcile releases, every minute, reservations of calls whose process died
// (on a shared store, those past their TTL) and retries settlements the
// store refused.
func (a *App) reconcile() {
	defer a.wg.Done()
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-a.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			if _, err := a.Ledger.Reconcile(ctx, time.Now()); err != nil {
				a.Logger.Warn("reconciling interrupted calls failed")
			}
			cancel()
		}
	}
}

// retention deletes expired capsules and lineage records hourly.
func (a *App) retention(ttl time.Duration) {
	defer a.wg.Done()
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		select {
		case <-a.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			n, err := a.Store.DeleteExpired(ctx, time.Now(), ttl)
			cancel()
			if err != nil {
				a.Logger.Warn("retention sweep failed")
			} else if n > 0 {
				a.Logger.Info("retention sweep", slog.Int("removed", n))
			}
		}
	}
}

// Close drains extraction workers, waits for the lineage writes no answer
// waited for, flushes the ledger and closes the store.
// It is idempotent.
func (a *App) Close(ctx context.Context) error {
	a.closeOnce.Do(func() {
		close(a.stop)
		var errs []error
		for _, p := range a.pools {
			if err := p.Stop(ctx); err != nil {
				errs = append(errs, fmt.Errorf("stop extractor: %w", err))
				_ = p.StopAndCancel(context.Background())
			}
		}
		if a.Engine != nil {
			if err := a.Engine.Wait(ctx); err != nil {
				errs = append(errs, fmt.Errorf("lineage writes: %w", err))
			}
		}
		if err := a.Ledger.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("flush ledger: %w", err))
		}
		a.wg.Wait()
		if err := a.closeStore(); err != nil {
			errs = append(errs, err)
		}
		a.closeErr = errors.Join(errs...)
	})
	return a.closeErr
}

func (a *App) closeStore() error {
	if a.ownsStore && a.Store != nil {
		return a.Store.Close()
	}
	return nil
}

// StoreKind describes a store URL without its credentials: "memory",
// "sqlite <path>" or "postgres <host>/<database>".
func StoreKind(storeURL string) string {
	switch {
	case storeURL == "":
		return "sqlite " + store.DefaultSQLitePath()
	case strings.HasPrefix(storeURL, "memory"):
		return "memory"
	case strings.HasPrefix(storeURL, "postgres://") || strings.HasPrefix(storeURL, "postgresql://"):
		u, err := url.Parse(storeURL)
		if err != nil {
			return "postgres"
		}
		return "postgres " + u.Host + u.Path
	}
	return "sqlite " + strings.TrimPrefix(strings.TrimPrefix(storeURL, "sqlite:"), "//")
}

// Upstreams lists the configured providers as name=dialect:base_url (any
// credentials in a URL redacted).
func Upstreams(cfg *config.Config) string {
	parts := make([]string, 0, len(cfg.Providers))
	for _, p := range cfg.Providers {
		base := p.BaseURL
		if u, err := url.Parse(base); err == nil {
			base = u.Redacted()
		}
		parts = append(parts, p.Name+"="+p.Dialect+":"+base)
	}
	return strings.Join(parts, " ")
}

// describe is what the web view shows of a principal's conversations from
// lineage (agent, client session id, last activity).
func (a *App) describe(ctx context.Context, principal string, aLegs []string) (map[string]web.Conversation, error) {
	got, err := a.Resolver.Describe(ctx, principal, aLegs)
	if err != nil {
		return nil, err
	}
	out := make(map[string]web.Conversation, len(got))
	for k, c := range got {
		out[k] = web.Conversation{Agent: c.Agent, ClientSession: c.ClientSession, ClientKind: c.ClientKind, LastActivity: c.LastActivity}
	}
	return out, nil
}
