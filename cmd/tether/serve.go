package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/tether-dev/tether/internal/app"
	"github.com/tether-dev/tether/internal/config"
)

func runServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgFile := fs.String("config", getenv(config.EnvConfig), "configuration file (YAML); default: none, passthrough on 127.0.0.1:8787")
	listen := fs.String("listen", "", "listen address (overrides the file and TETHER_LISTEN)")
	if _, err := parseArgs(fs, args, 0); err != nil {
		return err
	}
	cfg, err := config.Load(*cfgFile, getenv)
	if err != nil {
		return err
	}
	if *listen != "" {
		cfg.Listen = *listen
	}
	a, err := app.New(ctx, cfg, app.Options{LogOutput: stderr})
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		_ = a.Close(cctx)
	}()
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	fmt.Fprintf(stdout, "tether %s ready on http://%s (store %s; upstreams %s; continuity %s)\n",
		versionString(), ln.Addr(), app.StoreKind(cfg.Store), app.Upstreams(cfg), continuityState(cfg))
	return a.Serve(ctx, ln)
}

func continuityState(cfg *config.Config) string {
	if !cfg.Continuity.Enabled {
		return "off"
	}
	return "on, extractor " + cfg.Continuity.Extractor.Route
}
