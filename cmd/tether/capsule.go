package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/tether-dev/tether/internal/capsule"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/store"
	"github.com/tether-dev/tether/internal/web"
)

const capsuleUsage = `Usage:
  tether capsule list [--principal ID] [--json]
  tether capsule show [--principal ID] [--json] <a-leg>
  tether capsule history [--principal ID] [--json] <a-leg>
  tether capsule purge --principal ID [<a-leg>]

These commands read the configured store (--config / TETHER_CONFIG / TETHER_STORE).
Capsule contents appear only here, on request, never in logs.
`

func runCapsule(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, capsuleUsage)
		return fmt.Errorf("%w: capsule needs a subcommand", errUsage)
	}
	sub := args[0]
	switch sub {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, capsuleUsage)
		return nil
	case "list", "show", "history", "purge":
	default:
		fmt.Fprint(stderr, capsuleUsage)
		return fmt.Errorf("%w: unknown capsule subcommand %q", errUsage, sub)
	}
	fs := flag.NewFlagSet("capsule "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgFile := fs.String("config", getenv(config.EnvConfig), "configuration file")
	principal := fs.String("principal", "", "principal id")
	asJSON := fs.Bool("json", false, "print JSON")
	maxArgs := 1
	if sub == "list" {
		maxArgs = 0
	}
	pos, err := parseArgs(fs, args[1:], maxArgs)
	if err != nil {
		return err
	}
	cfg, err := config.Load(*cfgFile, getenv)
	if err != nil {
		return err
	}
	url := cfg.Store
	if url == "" {
		url = store.DefaultSQLitePath()
	}
	st, err := store.Open(ctx, url)
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	defer st.Close()
	aLeg := ""
	if len(pos) > 0 {
		aLeg = pos[0]
	}
	switch sub {
	case "list":
		recs, err := st.ListCapsules(ctx, *principal)
		if err != nil {
			return err
		}
		if *asJSON {
			type row struct {
				Principal string    `json:"principal"`
				Session   string    `json:"session"`
				ALeg      string    `json:"a_leg"`
				Revision  int64     `json:"revision"`
				UpdatedAt time.Time `json:"updated_at"`
			}
			out := []row{}
			for _, r := range recs {
				out = append(out, row{r.Principal, r.Session, r.ALeg, r.Revision, r.UpdatedAt})
			}
			return json.NewEncoder(stdout).Encode(out)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "PRINCIPAL\tA-LEG\tREVISION\tUPDATED")
		for _, r := range recs {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", r.Principal, r.ALeg, r.Revision, r.UpdatedAt.Format(time.RFC3339))
		}
		return tw.Flush()
	case "show", "history":
		if aLeg == "" {
			return fmt.Errorf("%w: capsule %s needs <a-leg>", errUsage, sub)
		}
		if *principal == "" {
			// A-leg ids are unique across principals: find its owner.
			heads, err := st.ListCapsules(ctx, "")
			if err != nil {
				return err
			}
			for _, h := range heads {
				if h.ALeg == aLeg {
					*principal = h.Principal
				}
			}
			if *principal == "" {
				return fmt.Errorf("no capsule for a-leg %s", aLeg)
			}
		}
		if sub == "history" {
			revs, err := web.History(ctx, st, *principal, aLeg)
			if err != nil {
				return err
			}
			if len(revs) == 0 {
				return fmt.Errorf("no capsule for a-leg %s of principal %s", aLeg, *principal)
			}
			if *asJSON {
				// One JSON document, as list prints: the API's history body.
				return json.NewEncoder(stdout).Encode(map[string]any{"id": aLeg, "principal": *principal, "revisions": revs})
			}
			for _, r := range revs {
				fmt.Fprintf(stdout, "revision %d  updated %s\n", r.Revision, r.UpdatedAt.Format(time.RFC3339))
				if len(r.Changes) == 0 {
					fmt.Fprintln(stdout, "  (no visible change)")
				}
				for _, c := range r.Changes {
					line := "  " + c.Action + " " + c.Item
					if c.ID != "" {
						line += " " + c.ID
					}
					line += ": " + c.Text
					if c.Source != "" {
						line += " (" + c.Source + ")"
					}
					fmt.Fprintln(stdout, line)
				}
			}
			return nil
		}
		recs, err := st.CapsuleHistory(ctx, *principal, aLeg, 1)
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			return fmt.Errorf("no capsule for a-leg %s of principal %s", aLeg, *principal)
		}
		r := recs[0]
		c, err := capsule.Decode(r.Data)
		if err != nil {
			return fmt.Errorf("revision %d is unreadable: %w", r.Revision, err)
		}
		c.Revision = r.Revision
		if *asJSON {
			// The API's GET /v1/capsules/{id} body.
			return json.NewEncoder(stdout).Encode(web.Detail{
				Summary:  web.Summary{ID: r.ALeg, Principal: r.Principal, Session: r.Session, Revision: r.Revision, UpdatedAt: r.UpdatedAt},
				Rendered: capsule.Render(c), Capsule: c})
		}
		cs := c.Stats()
		fmt.Fprintf(stdout, "revision %d  updated %s  decisions %d  steps %d  tokens %d\n", r.Revision, r.UpdatedAt.Format(time.RFC3339), cs.ActiveDecisions, cs.Steps, cs.Tokens)
		fmt.Fprintln(stdout, capsule.Render(c))
		return nil
	case "purge":
		if *principal == "" {
			return fmt.Errorf("%w: capsule purge needs --principal", errUsage)
		}
		n, err := st.PurgeCapsules(ctx, *principal, aLeg)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "purged %d capsule(s)\n", n)
		return nil
	default:
		fmt.Fprint(stderr, capsuleUsage)
		return fmt.Errorf("%w: unknown capsule subcommand %q", errUsage, sub)
	}
}
