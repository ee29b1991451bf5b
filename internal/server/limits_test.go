package server_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/metrics"
	"github.com/tether-dev/tether/internal/server"
	"github.com/tether-dev/tether/internal/upstream"
)

// servedWithLimits serves a passthrough proxy the way tether serve does
// (server.NewHTTPServer over server.LimitListener) with short bounds.
func servedWithLimits(t *testing.T, fakeURL string) string {
	t.Helper()
	cfg := passthroughConfig(t, fakeURL, func(c *config.Config) {
		c.HTTP = config.HTTP{ReadHeaderTimeout: 300 * time.Millisecond, BodyReadTimeout: 300 * time.Millisecond,
			IdleTimeout: 300 * time.Millisecond, MaxConnections: 3, MaxConnectionsPerRemote: 2}
	})
	h := server.New(server.Options{Config: cfg, Secret: []byte("limits"), Registry: metrics.NewRegistry(), Client: upstream.NewClient()})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := server.NewHTTPServer(h, cfg.HTTP)
	go srv.Serve(server.LimitListener(ln, cfg.HTTP.MaxConnections, cfg.HTTP.MaxConnectionsPerRemote))
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// closedWithin reports whether the server ends c (EOF or reset) within d;
// what it reads before that is returned.
func closedWithin(c net.Conn, d time.Duration) (string, bool) {
	c.SetReadDeadline(time.Now().Add(d))
	data, err := io.ReadAll(c)
	var ne net.Error
	return string(data), !(errors.As(err, &ne) && ne.Timeout())
}

// A caller that sends half a body, or idles on keep-alive, no longer holds
// a connection: the first gets a 408 and the connection closes, the second
// is closed after http.idle_timeout.
func TestSlowAndIdleConnectionsClosed(t *testing.T) {
	fake, _ := hostileSetup(t)
	addr := servedWithLimits(t, fake.URL)

	half, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer half.Close()
	io.WriteString(half, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sk-a\r\nContent-Length: 1000\r\n\r\n{\"model\":")
	got, closed := closedWithin(half, 5*time.Second)
	if !closed || !strings.HasPrefix(got, "HTTP/1.1 408") {
		t.Errorf("half a body: closed=%v after %q, want a 408 and the connection closed", closed, got)
	}

	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	io.WriteString(idle, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(idle), nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz: %v", err)
	}
	resp.Body.Close()
	if _, closed := closedWithin(idle, 5*time.Second); !closed {
		t.Errorf("an idle keep-alive connection was still open after 5s (idle_timeout 300ms)")
	}
}

// One remote cannot hold more than http.max_connections_per_remote
// connections: the next is closed at once.
func TestConnectionsPerRemoteCapped(t *testing.T) {
	fake, _ := hostileSetup(t)
	addr := servedWithLimits(t, fake.URL)
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil || resp.StatusCode != 200 {
			t.Fatalf("connection within the cap: %v", err)
		}
		held = append(held, c)
	}
	extra, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	io.WriteString(extra, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	if got, closed := closedWithin(extra, 250*time.Millisecond); !closed || got != "" {
		t.Errorf("a third connection from one remote was served (%q); cap is 2", got)
	}
	held[0].Close()
}

// HTTPS_PROXY / HTTP_PROXY / NO_PROXY route the B-leg through an operator's
// proxy. Go reads them once per process, so the check runs in a child.
func TestEgressHonoursProxyEnvironment(t *testing.T) {
	if os.Getenv("TETHER_PROXY_CHILD") != "" {
		c := upstream.NewClient()
		resp, err := c.HTTP.Get("http://provider.example/v1/models")
		if err != nil {
			t.Fatalf("through the proxy: %v", err)
		}
		resp.Body.Close()
		if resp.Header.Get("Via-Test-Proxy") != "yes" {
			t.Fatalf("the request did not go through HTTP_PROXY")
		}
		if _, err := c.HTTP.Get("http://direct.example/"); err == nil {
			t.Fatalf("NO_PROXY host went through the proxy")
		}
		return
	}
	seen := make(chan string, 4)
	px := newProxyServer(t, seen)
	cmd := exec.Command(os.Args[0], "-test.run=^TestEgressHonoursProxyEnvironment$", "-test.count=1")
	cmd.Env = append(os.Environ(), "TETHER_PROXY_CHILD=1", "HTTP_PROXY="+px, "HTTPS_PROXY="+px, "NO_PROXY=direct.example")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if got := <-seen; got != "http://provider.example/v1/models" {
		t.Errorf("the proxy saw %q", got)
	}
}

// newProxyServer is a forward HTTP proxy stand-in: it records the absolute
// URL of each request and answers it itself.
func newProxyServer(t *testing.T, seen chan<- string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case seen <- r.URL.String():
		default:
		}
		w.Header().Set("Via-Test-Proxy", "yes")
		w.Write([]byte(`{"data":[]}`))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}
