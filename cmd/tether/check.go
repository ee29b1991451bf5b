package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/tether-dev/tether/internal/app"
	"github.com/tether-dev/tether/internal/config"
)

const checkUsage = `Usage: tether check [--config FILE]

Validates the configuration (the file, ${ENV} references and TETHER_*
overrides) as 'tether serve' would and prints the effective settings,
defaults filled in, with every secret masked. Exit status 0: valid.
`

func runCheck(_ context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(fs.Output(), checkUsage); fs.PrintDefaults() }
	cfgFile := fs.String("config", getenv(config.EnvConfig), "configuration file (YAML)")
	if _, err := parseArgs(fs, args, 0); err != nil {
		return err
	}
	cfg, err := config.Load(*cfgFile, getenv)
	if err != nil {
		return err
	}
	out, err := yaml.MarshalWithOptions(masked(cfg), yaml.IndentSequence(true))
	if err != nil {
		return fmt.Errorf("print configuration: %w", err)
	}
	src := *cfgFile
	if src == "" {
		src = "no file (defaults)"
	}
	fmt.Fprintf(stdout, "# configuration OK: %s\n# store %s; continuity %s\n", src, app.StoreKind(cfg.Store), continuityState(cfg))
	for _, w := range cfg.Warnings {
		fmt.Fprintf(stdout, "# warning: %s\n", w)
	}
	_, err = stdout.Write(out)
	return err
}

// masked returns a copy of cfg with every secret replaced by a mask that
// says only whether it is set and how long it is.
func masked(cfg *config.Config) *config.Config {
	c := *cfg
	c.Secret = mask(c.Secret)
	c.AdminKey = mask(c.AdminKey)
	c.Transcript = config.Transcript{Enabled: cfg.Transcript.Enabled} // the deprecated key and ttl have no effect; never print them
	c.Store = maskStoreURL(c.Store)
	c.Providers = append([]config.Provider(nil), cfg.Providers...)
	for i := range c.Providers {
		p := &c.Providers[i]
		p.APIKey = mask(p.APIKey)
		if p.Headers != nil {
			p.Headers = maps.Clone(p.Headers)
			for k, v := range p.Headers {
				if sensitiveHeader(k) {
					p.Headers[k] = mask(v)
				}
			}
		}
	}
	c.Principals = append([]config.Principal(nil), cfg.Principals...)
	for i := range c.Principals {
		p := &c.Principals[i]
		keys := make([]string, len(p.Keys))
		for j, k := range p.Keys {
			keys[j] = mask(k)
		}
		p.Keys = keys
	}
	return &c
}

func mask(s string) string {
	if s == "" {
		return ""
	}
	return fmt.Sprintf("<set, %d characters>", len(s))
}

// maskStoreURL hides a password in a postgres:// URL.
func maskStoreURL(s string) string {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return s
	}
	userinfo, host, ok := strings.Cut(rest, "@")
	if !ok {
		return s
	}
	if user, _, hasPass := strings.Cut(userinfo, ":"); hasPass {
		return scheme + "://" + user + ":<masked>@" + host
	}
	return s
}

func sensitiveHeader(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"auth", "key", "token", "secret", "cookie", "password"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}
