package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tether-dev/tether/internal/app"
	"github.com/tether-dev/tether/internal/capsule"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/fakemodel"
)

// Step is one scripted action: a user turn, or a compaction.
type Step struct {
	User    string
	Compact bool
}

// Script is the demo session: a plan, decisions (one later superseded), a
// constraint, a rejected alternative, and three compactions.
var Script = []Step{
	{User: "We're building an inventory service. Decision: use PostgreSQL, not MongoDB, because we need multi-row transactions. Please make a plan and track it with your todo list."},
	{User: "Yes, go ahead with that plan. Constraint: never change the public REST API."},
	{User: "Decision: use Memcached for the cache. Rejected: GORM — we write SQL by hand."},
	{Compact: true},
	{User: "Actually, use Redis instead of Memcached for the cache."},
	{User: "Step 1 is done, continue."},
	{Compact: true},
	{User: "Decision: expose service metrics in Prometheus format on /metrics."},
	{User: "Run the tests please."},
	{Compact: true},
	{User: "What's next?"},
}

// Expectation is what must survive all three compactions.
var Expectation = struct {
	Active, Rejected, Superseded, Plan []string
}{
	Active:     []string{"PostgreSQL", "never change the public REST API", "Redis", "Prometheus"},
	Rejected:   []string{"GORM"},
	Superseded: []string{"Memcached"},
	Plan:       PlanSteps,
}

// Report is the outcome of one run.
type Report struct {
	// Without and With hold, per compaction, the summary the agent kept and
	// showed the model afterwards.
	Without, With []string
	// FinalRequest is the last request the model received through Tether.
	FinalRequest []byte
	// Problems lists what the preserved state got wrong (empty: all good).
	Problems []string
}

// Options configure Run.
type Options struct {
	// StateDir holds the SQLite store; empty means a temporary directory.
	StateDir string
	// Config adjusts the proxy configuration before start (tests).
	Config func(*config.Config)
	// Logs receives the proxy's JSON logs (nil: discarded).
	Logs io.Writer
}

// Run plays Script twice against the scripted model: directly, and through
// Tether with continuity on and the model doubling as the extractor.
func Run(ctx context.Context, opt Options) (*Report, error) {
	fake := fakemodel.Start(Model())
	defer fake.Close()

	dir := opt.StateDir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "tether-demo-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	yaml := fmt.Sprintf(`
listen: 127.0.0.1:0
store: %s
providers:
  - {name: model, dialect: anthropic, base_url: %q}
  - {name: extractor, dialect: openai, base_url: %q}
routes:
  - {match: "*", provider: model}
  - {match: "*", provider: extractor}
prices:
  - {match: "claude-*", input_per_mtok: 3, output_per_mtok: 15}
  - {match: %q, input_per_mtok: 0.1, output_per_mtok: 0.4}
compaction_continuity:
  enabled: true
  barrier_timeout: 5s
  extractor:
    route: extractor/%s
    workers: 2
`, filepath.Join(dir, "tether.db"), fake.URL, fake.URL+"/v1", ExtractorModel, ExtractorModel)
	cfg, err := config.Parse([]byte(yaml), func(string) string { return "" })
	if err != nil {
		return nil, fmt.Errorf("demo config: %w", err)
	}
	if opt.Config != nil {
		opt.Config(cfg)
	}
	a, err := app.New(ctx, cfg, app.Options{LogOutput: opt.Logs})
	if err != nil {
		return nil, err
	}
	defer a.Close(context.Background())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- a.Serve(sctx, ln) }()
	defer func() { stop(); <-served }()

	rep := &Report{}
	client := &http.Client{Timeout: 30 * time.Second}
	direct := &Agent{BaseURL: fake.URL, APIKey: "demo-key", SessionID: "5d1c8a4e-0000-4000-8000-000000000001", Model: "claude-sonnet-4-5", HTTP: client}
	if rep.Without, err = play(ctx, direct); err != nil {
		return nil, fmt.Errorf("without Tether: %w", err)
	}
	proxied := &Agent{BaseURL: "http://" + ln.Addr().String(), APIKey: "demo-key", SessionID: "5d1c8a4e-0000-4000-8000-000000000002", Model: "claude-sonnet-4-5", HTTP: client}
	fake.Reset()
	if rep.With, err = play(ctx, proxied); err != nil {
		return nil, fmt.Errorf("with Tether: %w", err)
	}
	reqs := fake.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].Model() != ExtractorModel && reqs[i].Path == "/v1/messages" {
			rep.FinalRequest = reqs[i].Body
			break
		}
	}
	rep.Problems = Check(ModelView(rep.FinalRequest))
	return rep, nil
}

func play(ctx context.Context, ag *Agent) ([]string, error) {
	var shown []string
	for _, s := range Script {
		if s.Compact {
			if err := ag.Compact(ctx); err != nil {
				return nil, err
			}
			shown = append(shown, ag.Shown)
			continue
		}
		if _, err := ag.Say(ctx, s.User); err != nil {
			return nil, err
		}
	}
	return shown, nil
}

// ModelView returns the text a model reads in an Anthropic Messages request:
// the system prompt and every message's text, in order.
func ModelView(body []byte) string {
	v, err := dialect.Parse(dialect.AnthropicMessages, "/v1/messages", nil, body)
	if err != nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(v.System())
	for _, m := range v.Messages() {
		b.WriteString("\n")
		b.WriteString(m.Text)
	}
	return b.String()
}

// Check reports what the model's view (a request body or any text) gets
// wrong about the expected continuity state: each active item present in the
// block's active sections, each rejected or superseded one only among the
// things not to use, and every plan step present.
func Check(view string) []string {
	var problems []string
	block := capsule.Last(view)
	if block == "" {
		return []string{"the model was not shown any continuity block"}
	}
	block = strings.ReplaceAll(block, `\n`, "\n")
	active, notUse := sections(block)
	for _, s := range Expectation.Active {
		if !strings.Contains(strings.ToLower(active), strings.ToLower(s)) {
			problems = append(problems, fmt.Sprintf("active fact missing: %q", s))
		}
	}
	for _, s := range append(append([]string(nil), Expectation.Rejected...), Expectation.Superseded...) {
		if !strings.Contains(notUse, s) {
			problems = append(problems, fmt.Sprintf("%q is not listed as rejected or superseded", s))
		}
		if strings.Contains(activeDecisionLines(active), s) && !strings.Contains(activeDecisionLines(active), "instead of "+s) {
			problems = append(problems, fmt.Sprintf("%q is presented as an active decision", s))
		}
	}
	for _, s := range Expectation.Plan {
		if !strings.Contains(block, s) {
			problems = append(problems, fmt.Sprintf("plan step missing: %q", s))
		}
	}
	return problems
}

// sections splits a rendered block into the settled part and the part
// listing what must not be used.
func sections(block string) (active, notUse string) {
	k := strings.Index(block, "\nREJECTED")
	if k < 0 {
		return block, ""
	}
	rest := block[k:]
	end := len(rest)
	if q := strings.Index(rest, "\nOPEN QUESTIONS"); q >= 0 {
		end = q
	}
	return block[:k] + rest[end:], rest[:end]
}

func activeDecisionLines(active string) string {
	var b strings.Builder
	for _, l := range strings.Split(active, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "- D") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// Print writes the side-by-side comparison.
func Print(w io.Writer, rep *Report) {
	const col = 58
	fmt.Fprintf(w, "Tether demo: a scripted coding session (Claude Code wire format) through a lossy compactor.\n")
	fmt.Fprintf(w, "The user makes a plan, decides PostgreSQL over MongoDB, sets a constraint, rejects GORM,\n")
	fmt.Fprintf(w, "chooses Memcached and later replaces it with Redis. Three compactions happen on the way.\n\n")
	for i := range rep.With {
		fmt.Fprintf(w, "── after compaction %d: what the model is shown ──\n", i+1)
		left := wrap("WITHOUT TETHER:\n"+rep.Without[i], col)
		right := wrap("WITH TETHER:\n"+rep.With[i], col)
		for j := 0; j < max(len(left), len(right)); j++ {
			var l, r string
			if j < len(left) {
				l = left[j]
			}
			if j < len(right) {
				r = right[j]
			}
			fmt.Fprintf(w, "%-*s │ %s\n", col, l, r)
		}
		fmt.Fprintln(w)
	}
	if len(rep.Problems) == 0 {
		fmt.Fprintln(w, "OK: after three compactions the model still has the accepted plan, every active decision")
		fmt.Fprintln(w, "and constraint, Redis in place of the superseded Memcached, and GORM marked as rejected.")
		return
	}
	fmt.Fprintln(w, "FAILED: the preserved state is wrong:")
	for _, p := range rep.Problems {
		fmt.Fprintln(w, "  -", p)
	}
}

func wrap(s string, width int) []string {
	var out []string
	for _, para := range strings.Split(s, "\n") {
		line := ""
		for _, word := range strings.Fields(para) {
			for len([]rune(word)) > width {
				r := []rune(word)
				if line != "" {
					out = append(out, line)
					line = ""
				}
				out = append(out, string(r[:width]))
				word = string(r[width:])
			}
			if line == "" {
				line = word
			} else if len([]rune(line))+1+len([]rune(word)) <= width {
				line += " " + word
			} else {
				out = append(out, line)
				line = word
			}
		}
		out = append(out, line)
	}
	return out
}

// ErrDemoFailed is returned by the demo command when Check finds problems.
var ErrDemoFailed = errors.New("the preserved continuity state is wrong")
