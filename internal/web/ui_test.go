package web

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/ledger"
	"github.com/tether-dev/tether/internal/store/memstore"
)

// client is a browser-like client: it keeps cookies and follows redirects.
func client(t *testing.T) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Timeout: 10 * time.Second}
}

func page(t *testing.T, c *http.Client, method, u string, form url.Values) (int, string) {
	t.Helper()
	var resp *http.Response
	var err error
	if method == http.MethodPost {
		resp, err = c.PostForm(u, form)
	} else {
		resp, err = c.Get(u)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Signing in with a key sets an HttpOnly, SameSite=Strict cookie; the pages
// then show the principal's conversations and nobody else's; hostile
// capsule text is escaped.
func TestWebViewSignInAndIsolation(t *testing.T) {
	srv := uiServer(t)
	c := client(t)
	if _, body := page(t, c, "GET", srv.URL+"/ui/", nil); !strings.Contains(body, `name="key"`) {
		t.Fatalf("no login form before signing in:\n%s", body)
	}
	if st, _ := page(t, c, "POST", srv.URL+"/ui/login", url.Values{"key": {"wrong"}}); st != http.StatusUnauthorized {
		t.Errorf("bad key: status %d", st)
	}
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).
		PostForm(srv.URL+"/ui/login", url.Values{"key": {"key-alice"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	sc := resp.Header.Get("Set-Cookie")
	if !strings.Contains(sc, "HttpOnly") || !strings.Contains(sc, "SameSite=Strict") || !strings.Contains(sc, "Path=/ui/") {
		t.Errorf("cookie %q lacks HttpOnly / SameSite=Strict / Path=/ui/", sc)
	}
	st, body := page(t, c, "POST", srv.URL+"/ui/login", url.Values{"key": {"key-alice"}})
	if st != 200 || !strings.Contains(body, "/ui/c/A1") || strings.Contains(body, "B1") {
		t.Errorf("alice's list (status %d) must show A1 and not bob's B1:\n%s", st, body)
	}
	for _, want := range []string{"claude-code", "5d1c8a4e-alice", "2026-05-04 03:02 UTC"} {
		if !strings.Contains(body, want) {
			t.Errorf("alice's list lacks %q (agent, client session, last activity)", want)
		}
	}
	_, body = page(t, c, "GET", srv.URL+"/ui/c/A1", nil)
	for _, want := range []string{"Use PostgreSQL, not MongoDB", "superseded", "(from plan tool: update_plan)", "(from marked statement)", "(from model)",
		"&lt;continuity-capsule", "Compaction timeline", "claude-code-summary", "revision 2, ~180 tokens", "5d1c8a4e-alice", "agent claude-code"} {
		if !strings.Contains(body, want) {
			t.Errorf("capsule page lacks %q", want)
		}
	}
	if st, _ := page(t, c, "GET", srv.URL+"/ui/c/B1", nil); st != http.StatusNotFound {
		t.Errorf("alice opening bob's capsule: status %d, want 404", st)
	}
	bob := client(t)
	page(t, bob, "POST", srv.URL+"/ui/login", url.Values{"key": {"key-bob"}})
	_, body = page(t, bob, "GET", srv.URL+"/ui/c/B1", nil)
	if strings.Contains(body, "<script>") || !strings.Contains(body, "&lt;script&gt;") {
		t.Errorf("hostile capsule text is not escaped:\n%s", body)
	}
}

// The pages render in a real headless Chromium: a signed-in principal's
// list and conversation (the cookie a sign-in sets is added by the test
// server, as the browser would send it), hostile text escaped, and another
// principal's full conversation page (timeline, history with sources);
// screenshots go to the test's temporary directory, or
// TETHER_SCREENSHOT_DIR when set (docs/web-view.png is that directory's
// web-view.png).
func TestWebViewInChromium(t *testing.T) {
	bin := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is not installed (.ci/run installs the Debian package)")
		}
		t.Skip("chromium not installed (apt-get install chromium)")
	}
	dir := t.TempDir()
	if d := os.Getenv("TETHER_SCREENSHOT_DIR"); d != "" {
		dir = d
	}
	bob, alice := uiServerWithCookie(t, "key-bob"), uiServerWithCookie(t, "key-alice")
	for _, p := range []struct {
		srv                       *httptest.Server
		path, shot, want, notWant string
		height                    int
	}{
		{bob, "/ui/", "list.png", "/ui/c/B1", "A1", 800},
		{bob, "/ui/c/B1", "capsule.png", "&lt;script&gt;", "<script>", 800},
		{alice, "/ui/c/A1", "web-view.png", "Compaction timeline", "B1", 1500},
	} {
		shot := filepath.Join(dir, p.shot)
		dom := chromium(t, bin, dir, p.srv.URL+p.path, "--dump-dom")
		if !strings.Contains(dom, p.want) || strings.Contains(dom, p.notWant) {
			t.Errorf("%s as rendered by Chromium: want %q and not %q:\n%s", p.path, p.want, p.notWant, dom)
		}
		chromium(t, bin, dir, p.srv.URL+p.path, "--screenshot="+shot, fmt.Sprintf("--window-size=1100,%d", p.height))
		if fi, err := os.Stat(shot); err != nil || fi.Size() < 1000 {
			t.Errorf("no screenshot of %s: %v", p.path, err)
		}
	}
}

func chromium(t *testing.T, bin, dir, u string, args ...string) string {
	t.Helper()
	all := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
		"--user-data-dir=" + filepath.Join(dir, "profile")}, args...)
	cmd := exec.CommandContext(t.Context(), bin, append(all, u)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %v: %v", args, err)
	}
	return string(out)
}

// The signed-in principal sees its budgets: used, remaining, reset.
func TestWebViewShowsBudgets(t *testing.T) {
	opt := testOptions(t)
	led := ledger.New(ledger.Options{Store: memstore.New(memstore.Options{}),
		Budgets: []config.Budget{{Principal: "alice", Period: "day", MaxTokens: 1000}, {Principal: "bob", Period: "total", MaxTokens: 77}}})
	t.Cleanup(func() { _ = led.Close(context.Background()) })
	settle, err := led.Reserve(t.Context(), ledger.Charge{Principal: "alice", Kind: ledger.KindPrimary, EstimatedTokens: 10})
	if err != nil {
		t.Fatal(err)
	}
	settle(ledger.Result{Status: 200, Usage: dialect.Usage{InputTokens: 250, OutputTokens: 50}})
	opt.Budgets = led.Budgets
	mux := http.NewServeMux()
	UIRoutes(opt)(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c := client(t)
	_, body := page(t, c, "POST", srv.URL+"/ui/login", url.Values{"key": {"key-alice"}})
	for _, want := range []string{"principal alice", "300 tokens", "700 tokens", "1000 tokens"} {
		if !strings.Contains(body, want) {
			t.Errorf("budget table lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "bob") {
		t.Errorf("alice sees bob's budget")
	}
}

func TestCountSpellsNumber(t *testing.T) {
	for n, want := range map[int]string{0: "0 decisions", 1: "1 decision", 2: "2 decisions"} {
		if got := count(n, "decision"); got != want {
			t.Errorf("count(%d) = %q, want %q", n, got, want)
		}
	}
}
