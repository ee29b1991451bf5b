package upstream

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/config"
)

// countedConn counts the writes a connection is asked to make.
type countedConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countedConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// A request body reaches the provider intact whatever its size, and a
// large one is written to the connection in one call after the headers,
// not 32 KiB at a time (64 writes for a 2 MiB history).
func TestHeldBodyWrittenWhole(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		n, _ := io.Copy(h, r.Body)
		fmt.Fprintf(w, "%d %x", n, h.Sum(nil))
	}))
	defer up.Close()

	var writes atomic.Int64
	c := NewClient()
	tr := c.HTTP.Transport.(*http.Transport)
	var d net.Dialer
	tr.DialContext = dialWhole(func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countedConn{Conn: conn, writes: &writes}, nil
	})
	defer tr.CloseIdleConnections()
	target := Target{Provider: config.Provider{Name: "p", Dialect: config.FamilyOpenAI, BaseURL: up.URL + "/v1"}, Model: "m"}

	for _, size := range []int{0, 1, 3000, 4096, 32 << 10, 200 << 10, 2 << 20} {
		body := bytes.Repeat([]byte("0123456789abcdef"), size/16+1)[:size]
		req, err := Outbound(context.Background(), target, http.MethodPost, "/v1/chat/completions", http.Header{"Content-Type": {"application/json"}}, body)
		if err != nil {
			t.Fatal(err)
		}
		before := writes.Load()
		res, err := c.Do(req)
		if err != nil {
			t.Fatalf("%d bytes: %v", size, err)
		}
		got, _ := io.ReadAll(res.Body)
		res.Body.Close()
		sum := sha256.Sum256(body)
		if want := fmt.Sprintf("%d %s", size, hex.EncodeToString(sum[:])); string(got) != want {
			t.Errorf("%d bytes: provider read %q, want %q", size, got, want)
		}
		if n := writes.Load() - before; n > 2 {
			t.Errorf("%d bytes: written in %d calls, want the headers and the body in at most 2", size, n)
		}
	}
}

// A held body ends its hold once the transport has sent it, so the
// caller's buffer goes back to be lent again; a body the transport makes
// again for a retry takes a hold of its own.
func TestHoldBodyReleasedWhenSent(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	defer up.Close()
	c := NewClient()
	defer c.HTTP.Transport.(*http.Transport).CloseIdleConnections()
	target := Target{Provider: config.Provider{Name: "p", Dialect: config.FamilyOpenAI, BaseURL: up.URL + "/v1"}, Model: "m"}

	var holds, releases atomic.Int64
	hold := func() func() {
		holds.Add(1)
		var once atomic.Bool
		return func() {
			if once.CompareAndSwap(false, true) {
				releases.Add(1)
			}
		}
	}
	req, err := Outbound(context.Background(), target, http.MethodPost, "/v1/chat/completions", nil, bytes.Repeat([]byte("x"), 200<<10))
	if err != nil {
		t.Fatal(err)
	}
	HoldBody(req, hold)
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	for deadline := time.Now().Add(10 * time.Second); releases.Load() < holds.Load() && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if h, r := holds.Load(), releases.Load(); h != 1 || r != 1 {
		t.Errorf("one request took %d holds and ended %d, want 1 and 1", h, r)
	}

	again, err := req.GetBody()
	if err != nil {
		t.Fatal(err)
	}
	if holds.Load() != 2 {
		t.Errorf("a body made again for a retry took no hold of its own")
	}
	again.Close()
	if releases.Load() != 2 {
		t.Errorf("closing the body made again did not end its hold")
	}
}
