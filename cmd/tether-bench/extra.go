package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/tether-dev/tether/internal/app"
)

// extraTargets are the proxy variants measured beside the core: Tether as
// `tether serve` assembles it, with the production hook set (compaction
// detection, continuity preservation, usage admission and ledger) on
// the store `tether serve` defaults to (a fresh SQLite file) or the
// in-memory one, continuity enabled, no extractor route; and, when
// -targets names it (keyAppOff), the same with continuity off, which
// tells the continuity's share of the hooks' cost from the rest's.
func extraTargets(ctx context.Context, store string) []builder {
	return []builder{appTarget(ctx, store, true), appTarget(ctx, store, false)}
}

// keyAppOff names the production hooks with continuity off.
const keyAppOff = "app-nocontinuity"

// appTarget is Tether as `tether serve` assembles it, with continuity on
// or off (detection, usage admission and the ledger only).
func appTarget(ctx context.Context, store string, continuity bool) builder {
	key, name := "app", "Tether (production hooks)"
	if !continuity {
		key, name = keyAppOff, "Tether (production hooks, continuity off)"
	}
	return builder{key, name, func(upURL string) (http.Handler, func(), error) {
		cfg, err := passthroughConfig(upURL)
		if err != nil {
			return nil, nil, err
		}
		cfg.Continuity.Enabled = continuity
		dir := ""
		if store == "sqlite" {
			if dir, err = os.MkdirTemp("", "tether-bench-"); err != nil {
				return nil, nil, fmt.Errorf("store directory: %w", err)
			}
			cfg.Store = "sqlite://" + filepath.Join(dir, "tether.db")
		}
		a, err := app.New(ctx, cfg, app.Options{LogOutput: io.Discard})
		if err != nil {
			return nil, nil, fmt.Errorf("assemble app: %w", err)
		}
		stop := func() {
			cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = a.Close(cctx)
			if dir != "" {
				_ = os.RemoveAll(dir)
			}
		}
		return a.Handler(), stop, nil
	}}
}
