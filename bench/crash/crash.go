// Package crash is the kill -9 accounting test of issue 13: a Tether
// process (SQLite store, a token budget, continuity on) serves concurrent
// callers and is killed with SIGKILL again and again; after a last restart
// every request a caller was served has its ledger row and the budget
// counter equals the ledger's sum (no reservation of a killed call stays
// counted).
//
//	go test -count=1 ./bench/crash/                 # bounded: 3 kills
//	go run ./cmd/tether-bench kill -kills 20        # the full run
package crash

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tether-dev/tether/internal/app"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/demo"
	"github.com/tether-dev/tether/internal/fakemodel"
	"github.com/tether-dev/tether/internal/store/sqlitestore"
)

// Env names the configuration file of a child process.
const Env = "TETHER_CRASH_CONFIG"

const key = "crash-key-0123456789"

// Budget is alice's daily token budget: large enough never to refuse.
const Budget = 1_000_000_000

const configYAML = `
listen: 127.0.0.1:0
store: %s
secret: crash-secret-0123456789abcdef0123456789
providers:
  - {name: model, dialect: anthropic, base_url: "%s", api_key: upstream-key}
routes:
  - {match: "*", provider: model}
principals:
  - {id: alice, account: acme, keys: [` + key + `]}
prices:
  - {match: "claude-*", input_per_mtok: 3, output_per_mtok: 15}
budgets:
  - {principal: alice, period: day, max_tokens: %d}
compaction_continuity:
  enabled: true
`

// Child serves the configuration named by $TETHER_CRASH_CONFIG, printing
// "ready <url>" once it listens, until it is killed. It returns false when
// the variable is not set (not a child).
func Child() bool {
	path := os.Getenv(Env)
	if path == "" {
		return false
	}
	cfg, err := config.Load(path, func(string) string { return "" })
	if err != nil {
		fmt.Fprintln(os.Stderr, "config:", err)
		os.Exit(2)
	}
	a, err := app.New(context.Background(), cfg, app.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "app:", err)
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.Exit(2)
	}
	fmt.Printf("ready http://%s\n", ln.Addr())
	_ = a.Serve(context.Background(), ln)
	os.Exit(0)
	return true
}

// Options configures a run.
type Options struct {
	Kills       int           // default 3
	Concurrency int           // callers; default 16
	Uptime      time.Duration // mean time between start and kill; default 400ms
	Dir         string        // where the SQLite file lives
	// Command returns the command that runs Child in a new process.
	Command func() *exec.Cmd
}

// Report is what a run counted.
type Report struct {
	Kills, Served, Failed int
	Rows, Interrupted     int   // ledger rows; of them, status 0 (reconciled)
	Counter, LedgerSum    int64 // alice's budget counter and her ledger's tokens
	Pending               int   // reservations left after the last restart
}

// Run kills a serving child opt.Kills times under load and reads the store.
func Run(ctx context.Context, o Options) (Report, error) {
	if o.Kills <= 0 {
		o.Kills = 3
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 16
	}
	if o.Uptime <= 0 {
		o.Uptime = 400 * time.Millisecond
	}
	fake := fakemodel.Start(demo.Model())
	defer fake.Close()
	db := filepath.Join(o.Dir, "tether.db")
	cfgPath := filepath.Join(o.Dir, "tether.yaml")
	if err := os.WriteFile(cfgPath, fmt.Appendf(nil, configYAML, db, fake.URL, Budget), 0o600); err != nil {
		return Report{}, err
	}
	var rep Report
	var served, failed atomic.Int64
	for range o.Kills {
		fake.Reset()
		cmd := o.Command()
		cmd.Env = append(os.Environ(), Env+"="+cfgPath)
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			return rep, err
		}
		if err := cmd.Start(); err != nil {
			return rep, err
		}
		url, err := readyURL(out)
		if err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return rep, err
		}
		go func() { _, _ = io.Copy(io.Discard, out) }()
		stop := make(chan struct{})
		var wg sync.WaitGroup
		client := &http.Client{Timeout: 10 * time.Second}
		for range o.Concurrency {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					if call(ctx, client, url) {
						served.Add(1)
					} else {
						failed.Add(1)
					}
				}
			}()
		}
		time.Sleep(o.Uptime/2 + time.Duration(rand.Int64N(int64(o.Uptime))))
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		close(stop)
		wg.Wait()
		client.CloseIdleConnections()
		rep.Kills++
	}
	rep.Served, rep.Failed = int(served.Load()), int(failed.Load())

	// The last restart: the store is this process's alone, so every
	// reservation left is a killed call's.
	cfg, err := config.Load(cfgPath, func(string) string { return "" })
	if err != nil {
		return rep, err
	}
	a, err := app.New(ctx, cfg, app.Options{})
	if err != nil {
		return rep, err
	}
	if err := a.Close(ctx); err != nil {
		return rep, err
	}
	st, err := sqlitestore.Open(ctx, db, sqlitestore.Options{})
	if err != nil {
		return rep, err
	}
	defer st.Close()
	es, err := st.LedgerEntries(ctx, "alice", 0)
	if err != nil {
		return rep, err
	}
	days := map[string]bool{}
	for _, e := range es {
		rep.Rows++
		if e.Status == 0 {
			rep.Interrupted++
		}
		rep.LedgerSum += e.InputTokens + e.OutputTokens + e.CacheReadTokens + e.CacheWriteTokens
		days[e.Time.UTC().Format(time.DateOnly)] = true
	}
	for d := range days {
		n, err := st.Used(ctx, "budget:principal:alice:day:"+d+":tokens")
		if err != nil {
			return rep, err
		}
		rep.Counter += n
	}
	pending, err := st.PendingReservations(ctx, time.Now().Add(24*time.Hour), 0)
	if err != nil {
		return rep, err
	}
	rep.Pending = len(pending)
	return rep, nil
}

func readyURL(r io.Reader) (string, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "ready "); ok {
			return u, nil
		}
	}
	return "", errors.New("the child exited before it was ready")
}

// call sends one turn as alice and reports whether it was served in full.
func call(ctx context.Context, c *http.Client, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/messages",
		strings.NewReader(`{"model":"claude-sonnet-4-5","max_tokens":256,"messages":[{"role":"user","content":"Decision: use PostgreSQL. What next?"}]}`))
	if err != nil {
		return false
	}
	req.Header.Set("x-api-key", key)
	req.Header.Set("anthropic-version", "2023-06-01")
	req.Header.Set("content-type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return err == nil && resp.StatusCode == http.StatusOK && strings.Contains(string(body), `"usage"`)
}

// Check reports what is wrong with a run: a served request without a row,
// interrupted rows beyond the requests in flight at the kills, a counter
// that differs from the ledger, or a reservation left.
func (r Report) Check(concurrency int) []string {
	var bad []string
	if r.Served == 0 {
		bad = append(bad, "no request was served; the run proves nothing")
	}
	if r.Rows-r.Interrupted < r.Served {
		bad = append(bad, fmt.Sprintf("%d requests served but only %d settled ledger rows", r.Served, r.Rows-r.Interrupted))
	}
	if extra := r.Rows - r.Served; extra > r.Kills*concurrency {
		bad = append(bad, fmt.Sprintf("%d ledger rows beyond the %d served requests, more than the %d calls in flight at %d kills", extra, r.Served, r.Kills*concurrency, r.Kills))
	}
	if r.Counter != r.LedgerSum {
		bad = append(bad, fmt.Sprintf("budget counter %d != ledger sum %d", r.Counter, r.LedgerSum))
	}
	if r.Pending != 0 {
		bad = append(bad, fmt.Sprintf("%d reservations still held after the restart", r.Pending))
	}
	return bad
}

// Markdown renders the report for BENCHMARKS.md.
func (r Report) Markdown() string {
	return fmt.Sprintf("| kills | served | failed (killed mid-call) | ledger rows | of them interrupted (status 0) | budget counter | ledger sum | reservations left |\n"+
		"| --- | --- | --- | --- | --- | --- | --- | --- |\n| %d | %d | %d | %d | %d | %d | %d | %d |\n",
		r.Kills, r.Served, r.Failed, r.Rows, r.Interrupted, r.Counter, r.LedgerSum, r.Pending)
}
