// Package sessions is the loopback load test of issue 13: many concurrent
// Claude-Code-shaped sessions (streaming turns, the TodoWrite plan tool,
// in-band compaction) state marked decisions and compact, through Tether
// on its default store (SQLite) with continuity on, and through a bare
// httputil.ReverseProxy hop to the same scripted model in the same run.
// Every decision a session stated must be in the continuity block of the
// summary it keeps after each compaction; Run counts the ones that are not
// and compares per-turn latency with the bare hop.
//
//	go test -count=1 ./bench/sessions/                 # bounded: 200 sessions
//	go run ./cmd/tether-bench sessions -sessions 220 -pad 100000
package sessions

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tether-dev/tether/internal/app"
	"github.com/tether-dev/tether/internal/capsule"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/demo"
	"github.com/tether-dev/tether/internal/fakemodel"
)

// Options configures a run. Zero values take the defaults.
type Options struct {
	Sessions  int // concurrent sessions; default 200
	Cycles    int // compactions per session; default 2
	Decisions int // marked decisions stated before each compaction; default 2
	// PadBytes is the size of a file the user pastes in the first turn, so
	// that every request of the session carries it (agent-sized bodies).
	PadBytes int
	// Dir holds the SQLite file; "" uses a temporary directory.
	Dir string
	// Extra is appended to Tether's configuration (YAML).
	Extra string
	// Baseline also runs the sessions through the bare hop, for the
	// latency comparison.
	Baseline bool
	// Log receives Tether's JSON log (nil: discarded).
	Log io.Writer
}

// Report is what a run measured.
type Report struct {
	Sessions, Compactions   int
	Decisions               int      // checked after compactions (a decision counts once per compaction it must survive)
	Lost                    int      // of those, missing from the post-compaction block
	LostSessions            int      // sessions that lost at least one
	Missing                 []string // the first lost decisions (session, token) and the block that lacked them
	Turns                   int      // timed client turns per target
	P50Bare, P99Bare        time.Duration
	P50Tether, P99Tether    time.Duration
	BodyBytes               int // size of the largest request a session sent
	Took                    time.Duration
	ExtractDropped, Pending float64
}

// P99Added is the p99 per-turn latency Tether adds over the bare hop.
func (r Report) P99Added() time.Duration { return r.P99Tether - r.P99Bare }

func (o Options) withDefaults() Options {
	if o.Sessions <= 0 {
		o.Sessions = 200
	}
	if o.Cycles <= 0 {
		o.Cycles = 2
	}
	if o.Decisions <= 0 {
		o.Decisions = 2
	}
	return o
}

const tetherYAML = `
providers:
  - {name: model, dialect: anthropic, base_url: "%s"}
routes:
  - {match: "*", provider: model}
store: %s
compaction_continuity:
  enabled: true
`

// Run runs the sessions through the bare hop, then through Tether.
func Run(ctx context.Context, o Options) (Report, error) {
	o = o.withDefaults()
	start := time.Now()
	fake := fakemodel.Start(distinctSummaries(demo.Model()))
	defer fake.Close()
	stopReset := make(chan struct{})
	defer close(stopReset)
	go func() { // the scripted model keeps every request; forget them
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stopReset:
				return
			case <-t.C:
				fake.Reset()
			}
		}
	}()

	dir := o.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "tether-sessions-")
		if err != nil {
			return Report{}, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	up, _ := url.Parse(fake.URL)
	bare := httputil.NewSingleHostReverseProxy(up)
	bareURL, stopBare, err := serve(bare)
	if err != nil {
		return Report{}, err
	}
	defer stopBare()

	cfg, err := config.Parse([]byte(fmt.Sprintf(tetherYAML, fake.URL, filepath.Join(dir, "tether.db"))+o.Extra), func(string) string { return "" })
	if err != nil {
		return Report{}, fmt.Errorf("config: %w", err)
	}
	a, err := app.New(ctx, cfg, app.Options{LogOutput: o.Log})
	if err != nil {
		return Report{}, err
	}
	tetherURL, stopTether, err := serve(a.Handler())
	if err != nil {
		_ = a.Close(ctx)
		return Report{}, err
	}

	rep := Report{Sessions: o.Sessions, Compactions: o.Sessions * o.Cycles}
	var bareLat []time.Duration
	if o.Baseline {
		if bareLat, _, err = runAll(ctx, bareURL, o, false); err != nil {
			stopTether()
			_ = a.Close(ctx)
			return rep, fmt.Errorf("bare hop: %w", err)
		}
	}
	tLat, res, err := runAll(ctx, tetherURL, o, true)
	stopTether()
	if cerr := a.Close(ctx); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return rep, fmt.Errorf("tether: %w", err)
	}
	for _, r := range res {
		rep.Decisions += r.checked
		rep.Lost += r.lost
		if r.lost > 0 {
			rep.LostSessions++
			if len(rep.Missing) < 5 {
				rep.Missing = append(rep.Missing, r.missing)
			}
		}
		rep.BodyBytes = max(rep.BodyBytes, r.bodyBytes)
	}
	rep.Turns = len(tLat)
	rep.P50Bare, rep.P99Bare = quantile(bareLat, 0.5), quantile(bareLat, 0.99)
	rep.P50Tether, rep.P99Tether = quantile(tLat, 0.5), quantile(tLat, 0.99)
	rep.Took = time.Since(start)
	return rep, nil
}

type result struct {
	checked, lost, bodyBytes int
	missing                  string
}

// runAll runs every session at once against baseURL and returns the turn
// latencies and, when check is set, what each session's blocks held.
func runAll(ctx context.Context, baseURL string, o Options, check bool) ([]time.Duration, []result, error) {
	var mu sync.Mutex
	var lat []time.Duration
	res := make([]result, o.Sessions)
	errs := make([]error, o.Sessions)
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: o.Sessions, MaxConnsPerHost: 0}}
	defer client.CloseIdleConnections()
	for i := range o.Sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, r, err := session(ctx, client, baseURL, i, o, check)
			mu.Lock()
			lat = append(lat, l...)
			mu.Unlock()
			res[i], errs[i] = r, err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, nil, err
		}
	}
	return lat, res, nil
}

// session plays one Claude Code session: a pasted file and a plan, then per
// cycle some marked decisions and a compaction, and a turn after it.
func session(ctx context.Context, c *http.Client, baseURL string, i int, o Options, check bool) ([]time.Duration, result, error) {
	ag := &demo.Agent{BaseURL: baseURL, APIKey: "load-key-0123456789", SessionID: fmt.Sprintf("load-%04d", i),
		Model: "claude-sonnet-4-5", HTTP: c}
	var lat []time.Duration
	var r result
	say := func(text string) error {
		t0 := time.Now()
		if _, err := ag.Say(ctx, text); err != nil {
			return fmt.Errorf("session %d: %w", i, err)
		}
		lat = append(lat, time.Since(t0))
		return nil
	}
	first := fmt.Sprintf("Session %d. Please make a plan and track it with your todo list.", i)
	if o.PadBytes > 0 {
		first += "\n\nHere is the file we are working on:\n" + pad(o.PadBytes, i)
	}
	r.bodyBytes = len(first)
	if err := say(first); err != nil {
		return lat, r, err
	}
	var stated []string
	for cyc := range o.Cycles {
		for k := range o.Decisions {
			tok := fmt.Sprintf("ds-%d-%d-%d", i, cyc, k)
			stated = append(stated, tok)
			// One subject per decision, so none replaces another.
			if err := say(fmt.Sprintf("Decision: use %s for component c%s.", tok, tok[2:])); err != nil {
				return lat, r, err
			}
		}
		t0 := time.Now()
		if err := ag.Compact(ctx); err != nil {
			return lat, r, fmt.Errorf("session %d: compact: %w", i, err)
		}
		lat = append(lat, time.Since(t0))
		if check {
			// A decision is kept when the block lists it among the active
			// ones: listed under REJECTED it is lost, and worse.
			block := strings.ToLower(capsule.Last(ag.Shown))
			active, _, _ := strings.Cut(block, "\nrejected")
			for _, tok := range stated {
				r.checked++
				if !strings.Contains(active, tok) {
					r.lost++
					if r.missing == "" {
						r.missing = fmt.Sprintf("session %d, compaction %d: %s missing from:\n%s", i, cyc+1, tok, block)
					}
				}
			}
		}
		if err := say("Continue."); err != nil {
			return lat, r, err
		}
	}
	return lat, r, nil
}

// sessionNo finds the session a compaction request belongs to.
var sessionNo = regexp.MustCompile(`Session (\d+)[.:]`)

// distinctSummaries makes each session's compaction summary its own (the
// scripted model answers every session with the same text, which real
// sessions never do): it starts with the session's number.
func distinctSummaries(base fakemodel.Responder) fakemodel.Responder {
	return func(req *fakemodel.Request) fakemodel.Reply {
		r := base(req)
		if fakemodel.Classify(req) == fakemodel.KindCompaction {
			if m := sessionNo.FindSubmatch(req.Body); m != nil {
				r.Text = strings.Replace(r.Text, "<summary>", "<summary>Session "+string(m[1])+": ", 1)
			}
		}
		return r
	}
}

// pad is n bytes of source-like text, different per session.
func pad(n, seed int) string {
	var b strings.Builder
	for line := 0; b.Len() < n; line++ {
		fmt.Fprintf(&b, "func handler%d_%d(w http.ResponseWriter, r *http.Request) { log.Printf(\"request %%s\", r.URL.Path) }\n", seed, line)
	}
	return b.String()[:n]
}

func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(int(q*float64(len(s))), len(s)-1)]
}

// serve serves h on a loopback port.
func serve(h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}

// Markdown renders the report as a BENCHMARKS.md table row set.
func (r Report) Markdown() string {
	return fmt.Sprintf("| sessions | compactions | decisions checked | lost | sessions with a loss | largest first turn | turns timed | p50 bare / Tether | p99 bare / Tether | p99 added |\n"+
		"| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"+
		"| %d | %d | %d | %d | %d | %d KB | %d | %s / %s | %s / %s | %s |\n",
		r.Sessions, r.Compactions, r.Decisions, r.Lost, r.LostSessions, r.BodyBytes/1000, r.Turns,
		ms(r.P50Bare), ms(r.P50Tether), ms(r.P99Bare), ms(r.P99Tether), ms(r.P99Added()))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
