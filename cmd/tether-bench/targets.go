package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"

	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/metrics"
	"github.com/tether-dev/tether/internal/server"
	"github.com/tether-dev/tether/internal/upstream"
)

// target is one thing the load generator drives.
type target struct {
	name string
	url  string // base URL; requests go to url+"/v1/chat/completions"
	stop func()
}

// serve runs h on a loopback port until the returned stop is called.
func serve(h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("listen on loopback: %w", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			_ = srv.Close()
		}
		<-done
	}
	return "http://" + ln.Addr().String(), stop, nil
}

// bareProxy is the reference hop: httputil.ReverseProxy flushing every
// write, with the same tuned transport Tether's B-leg uses.
func bareProxy(upURL string) (http.Handler, func(), error) {
	u, err := url.Parse(upURL)
	if err != nil {
		return nil, nil, fmt.Errorf("parse upstream URL: %w", err)
	}
	c := upstream.NewClient()
	rp := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(u) },
		FlushInterval: -1,
		Transport:     c.HTTP.Transport,
		ErrorLog:      nil,
	}
	return rp, c.HTTP.CloseIdleConnections, nil
}

// passthroughConfig is Tether's configuration for the run: passthrough, one
// OpenAI and one Anthropic provider at the fake upstream, the default
// catch-all routes.
func passthroughConfig(upURL string) (*config.Config, error) {
	cfg := &config.Config{
		Store: "memory:",
		Providers: []config.Provider{
			{Name: "bench", Dialect: config.FamilyOpenAI, BaseURL: upURL + "/v1"},
			{Name: "bench-anthropic", Dialect: config.FamilyAnthropic, BaseURL: upURL},
		},
	}
	cfg.WithDefaults(func(string) string { return "" })
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("bench config: %w", err)
	}
	return cfg, nil
}

// tetherCore is server.New with no hooks: the proxy core alone. It logs at
// info level in JSON, as `tether serve` does, to io.Discard.
func tetherCore(upURL string) (http.Handler, func(), error) {
	cfg, err := passthroughConfig(upURL)
	if err != nil {
		return nil, nil, err
	}
	c := upstream.NewClient()
	h := server.New(server.Options{
		Config:   cfg,
		Secret:   []byte("tether-bench-secret"),
		Logger:   slog.New(slog.NewJSONHandler(io.Discard, nil)),
		Registry: metrics.NewRegistry(),
		Client:   c,
	})
	return h, c.HTTP.CloseIdleConnections, nil
}
