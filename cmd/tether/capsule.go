package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tether-dev/tether/internal/app"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/session"
	"github.com/tether-dev/tether/internal/store"
	"github.com/tether-dev/tether/internal/web"
)

const capsuleUsage = `Usage:
  tether capsule list [--principal ID] [--json]
  tether capsule show [--principal ID] [--json] <a-leg | ref>
  tether capsule history [--principal ID] [--json] <a-leg | ref>
  tether capsule purge --principal ID [<a-leg | ref>]

<a-leg> is a conversation branch id as list prints it; <ref> is the token
of a capsule block's ref="…" attribute, as the model (and the agent's
summary) shows it (ref="…" itself is accepted too).

--json prints what the HTTP API answers: list an array of conversations
(GET /v1/capsules), show one conversation (GET /v1/capsules/{id}), history
an array of revisions, newest first (GET /v1/capsules/{id}/history).

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
	c := &capsuleCLI{st: st, out: stdout, json: *asJSON, secret: app.ReadSecret(cfg)}
	if c.secret != nil {
		c.resolver = session.NewResolver(st, session.Options{Secret: c.secret})
	}
	c.reader = web.NewReader(web.Options{Store: st, Conversations: c.describe})
	arg := ""
	if len(pos) > 0 {
		arg = pos[0]
	}
	switch sub {
	case "list":
		return c.list(ctx, *principal)
	case "purge":
		if *principal == "" {
			return fmt.Errorf("%w: capsule purge needs --principal", errUsage)
		}
		aLeg := ""
		if arg != "" {
			if aLeg, _, err = c.find(ctx, *principal, arg); err != nil {
				return err
			}
		}
		n, err := st.PurgeCapsules(ctx, *principal, aLeg)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "purged %d capsule(s)\n", n)
		return nil
	}
	if arg == "" {
		return fmt.Errorf("%w: capsule %s needs <a-leg> or <ref>", errUsage, sub)
	}
	aLeg, owner, err := c.find(ctx, *principal, arg)
	if err != nil {
		return err
	}
	if sub == "history" {
		return c.history(ctx, owner, aLeg)
	}
	return c.show(ctx, owner, aLeg)
}

type capsuleCLI struct {
	st       store.Store
	reader   *web.Reader
	resolver *session.Resolver // nil without a secret
	secret   []byte
	out      io.Writer
	json     bool
}

func (c *capsuleCLI) describe(ctx context.Context, principal string, aLegs []string) (map[string]web.Conversation, error) {
	if c.resolver == nil {
		return nil, nil
	}
	got, err := c.resolver.Describe(ctx, principal, aLegs)
	if err != nil {
		return nil, err
	}
	out := make(map[string]web.Conversation, len(got))
	for k, v := range got {
		out[k] = web.Conversation{Agent: v.Agent, ClientSession: v.ClientSession, ClientKind: v.ClientKind, LastActivity: v.LastActivity}
	}
	return out, nil
}

// refToken reads a block ref as printed (ref="tok", or the bare token).
func refToken(arg string) string {
	arg = strings.TrimSpace(arg)
	if v, ok := strings.CutPrefix(arg, "ref="); ok {
		arg = v
	}
	return strings.Trim(arg, `"'`)
}

// find resolves arg (an A-leg id, or a block's ref token) to the A-leg and
// its principal, among principal's conversations ("" for all).
func (c *capsuleCLI) find(ctx context.Context, principal, arg string) (aLeg, owner string, err error) {
	heads, err := c.st.ListCapsules(ctx, principal)
	if err != nil {
		return "", "", err
	}
	for _, h := range heads {
		if h.ALeg == arg {
			return h.ALeg, h.Principal, nil
		}
	}
	tok := refToken(arg)
	if c.resolver != nil && tok != "" {
		for _, h := range heads {
			if c.resolver.EpochToken(session.Ref{Principal: h.Principal, ALeg: h.ALeg}) == tok {
				return h.ALeg, h.Principal, nil
			}
		}
	}
	if c.resolver == nil && tok != arg {
		return "", "", fmt.Errorf("no capsule for %s: no secret is configured or stored, so block refs cannot be matched; use the a-leg id from 'tether capsule list'", arg)
	}
	return "", "", fmt.Errorf("no capsule for %s (neither an a-leg id nor a block ref of this store)", arg)
}

func (c *capsuleCLI) list(ctx context.Context, principal string) error {
	rows, err := c.reader.List(ctx, principal)
	if err != nil {
		return err
	}
	if c.json {
		return json.NewEncoder(c.out).Encode(rows)
	}
	tw := tabwriter.NewWriter(c.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PRINCIPAL\tA-LEG\tAGENT\tCLIENT SESSION\tREVISION\tLAST ACTIVITY")
	for _, r := range rows {
		last := r.UpdatedAt
		if r.LastActivity != nil {
			last = *r.LastActivity
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", r.Principal, r.ID, dash(r.Agent), dash(r.ClientSession), r.Revision, last.Format(time.RFC3339))
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (c *capsuleCLI) show(ctx context.Context, principal, aLeg string) error {
	d, err := c.reader.Detail(ctx, principal, aLeg)
	if err != nil {
		return err
	}
	if d.Capsule == nil {
		return fmt.Errorf("revision %d of %s is unreadable", d.Revision, aLeg)
	}
	if c.json {
		return json.NewEncoder(c.out).Encode(d)
	}
	cs := d.Capsule.Stats()
	fmt.Fprintf(c.out, "%s  principal %s  agent %s  client session %s\n", d.ID, d.Principal, dash(d.Agent), dash(d.ClientSession))
	fmt.Fprintf(c.out, "revision %d  updated %s  decisions %d  steps %d  tokens %d\n", d.Revision, d.UpdatedAt.Format(time.RFC3339), cs.ActiveDecisions, cs.Steps, cs.Tokens)
	fmt.Fprintln(c.out, d.Rendered)
	if len(d.Compactions) > 0 {
		fmt.Fprintf(c.out, "\ncompactions (newest first):\n")
		for _, e := range d.Compactions {
			fmt.Fprintf(c.out, "  %s  %s %s v%d (%s)  %s", e.At.Format(time.RFC3339), dash(e.Agent), e.Rule, e.RuleVersion, e.Kind, e.Action)
			if e.Revision > 0 {
				fmt.Fprintf(c.out, " revision %d, ~%d tokens: %d decisions, %d constraints, %d rejected, %d steps", e.Revision, e.Tokens, e.Decisions, e.Constraints, e.Rejected, e.Steps)
			}
			fmt.Fprintln(c.out)
		}
	}
	return nil
}

func (c *capsuleCLI) history(ctx context.Context, principal, aLeg string) error {
	revs, err := web.History(ctx, c.st, principal, aLeg)
	if err != nil {
		return err
	}
	if len(revs) == 0 {
		return errors.New("no capsule for a-leg " + aLeg)
	}
	if c.json {
		return json.NewEncoder(c.out).Encode(revs)
	}
	for _, r := range revs {
		var counts []string
		for _, k := range slices.Sorted(maps.Keys(r.Counts)) {
			counts = append(counts, fmt.Sprintf("%d %s", r.Counts[k], k))
		}
		summary := "no visible change"
		if len(counts) > 0 {
			summary = strings.Join(counts, ", ")
		}
		fmt.Fprintf(c.out, "revision %d  updated %s  %s\n", r.Revision, r.UpdatedAt.Format(time.RFC3339), summary)
		for _, ch := range r.Changes {
			line := "  " + ch.Action + " " + ch.Item
			if ch.ID != "" {
				line += " " + ch.ID
			}
			line += ": " + ch.Text
			if ch.Source != "" {
				line += "  (from " + web.SourceLabel(ch.Source)
				if ch.Tool != "" {
					line += ": " + ch.Tool
				}
				line += ")"
			}
			fmt.Fprintln(c.out, line)
		}
	}
	return nil
}
