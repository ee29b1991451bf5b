package main

import (
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tether-dev/tether/bench/continuity"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/extract"
	"github.com/tether-dev/tether/prompts"
)

// runContinuity scores extractors over the public continuity corpus:
//
//	go run ./cmd/tether-bench continuity [-config tether.yaml] [-details]
//
// The built-in extractor is always scored. With -config naming a
// configuration whose compaction_continuity.extractor.route is a model
// route, that model is scored too, over the network, with the configured
// provider.
func runContinuity(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tether-bench continuity", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgFile := fs.String("config", "", "Tether configuration whose extractor route (a model) is scored too")
	details := fs.Bool("details", false, "list every miss and false positive")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	type run struct {
		name   string
		caller extract.Caller
	}
	runs := []run{{config.MarkersRoute, extract.MarkersCaller{}}}
	if *cfgFile != "" {
		cfg, err := config.Load(*cfgFile, os.Getenv)
		if err != nil {
			return err
		}
		route := cfg.Continuity.Extractor.Route
		if !config.ExtractorOn(route) || route == config.MarkersRoute {
			return fmt.Errorf("%s: the extractor route %q is not a model route", *cfgFile, route)
		}
		provName, model, _ := config.ExtractorRoute(route)
		prov, ok := cfg.Provider(provName)
		if !ok {
			return fmt.Errorf("%s: unknown provider %q", *cfgFile, provName)
		}
		secret := make([]byte, 32)
		_, _ = rand.Read(secret)
		maxOut := cfg.Continuity.Extractor.MaxOutputTokens
		var c extract.Caller = extract.NewOpenAICaller(prov, model, maxOut, nil, secret)
		if prov.Dialect == config.FamilyAnthropic {
			c = extract.NewAnthropicCaller(prov, model, maxOut, nil, secret)
		}
		runs = append(runs, run{route, c})
	}
	for _, set := range []string{continuity.SetCorpus, continuity.SetHeldOut} {
		cases, err := continuity.Load(set)
		if err != nil {
			return err
		}
		for _, r := range runs {
			rep, err := continuity.Run(ctx, cases, r.caller, prompts.Extract())
			if err != nil {
				return fmt.Errorf("%s: %w", r.name, err)
			}
			fmt.Fprintln(stdout, rep.Markdown(fmt.Sprintf("### %s, %s", r.name, set)))
			if *details && len(rep.Details) > 0 {
				fmt.Fprintln(stdout, "```\n"+strings.Join(rep.Details, "\n")+"\n```")
			}
		}
	}
	return nil
}
