package web

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// noRedirect is a client that shows each response as it is.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// signIn posts the key and returns the sign-in cookie the server set.
func signIn(t *testing.T, base, key string) *http.Cookie {
	t.Helper()
	resp, err := noRedirect.PostForm(base+"/ui/login", url.Values{"key": {key}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == cookieName {
			return c
		}
	}
	t.Fatalf("sign-in set no %s cookie (status %d)", cookieName, resp.StatusCode)
	return nil
}

// withCookie GETs path with only the given cookie value.
func withCookie(t *testing.T, u, value string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
	req.AddCookie(&http.Cookie{Name: cookieName, Value: value})
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, b.String()
}

// The sign-in cookie holds a sealed, expiring token, not the key: its value
// neither is nor contains the key (in clear or base64); a forged, altered,
// expired or signed-out token is refused; a token from another server
// secret is refused; a working token shows the principal's page.
func TestWebViewCookieIsNotTheKey(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	opt := testOptions(t)
	opt.Now = clock
	mux := http.NewServeMux()
	UIRoutes(opt)(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	const key = "key-alice"
	c := signIn(t, srv.URL, key)
	for _, leak := range []string{key, base64.StdEncoding.EncodeToString([]byte(key)), base64.RawURLEncoding.EncodeToString([]byte(key))} {
		if strings.Contains(c.Value, leak) {
			t.Errorf("cookie value %q contains the key (%q)", c.Value, leak)
		}
	}
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/ui/" {
		t.Errorf("cookie flags: HttpOnly %v, SameSite %v, Path %q", c.HttpOnly, c.SameSite, c.Path)
	}
	if st, body := withCookie(t, srv.URL+"/ui/", c.Value); st != 200 || !strings.Contains(body, "/ui/c/A1") {
		t.Fatalf("a fresh sign-in does not show alice's list: status %d", st)
	}
	if st, body := withCookie(t, srv.URL+"/ui/", key); st != http.StatusUnauthorized || strings.Contains(body, "/ui/c/A1") {
		t.Errorf("the raw key as cookie value: status %d, want 401 and no data", st)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(c.Value)
	raw[len(raw)-1] ^= 1
	other := newSessions([]byte("another server's secret"), clock, nil).mint(key)
	for name, forged := range map[string]string{
		"altered":        base64.RawURLEncoding.EncodeToString(raw),
		"garbage":        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
		"another secret": other,
	} {
		if st, body := withCookie(t, srv.URL+"/ui/c/A1", forged); st != http.StatusUnauthorized || strings.Contains(body, "PostgreSQL") {
			t.Errorf("%s token: status %d, want 401 and no data", name, st)
		}
	}

	// Signing out forgets the token even if it was copied.
	resp, err := noRedirect.Do(func() *http.Request {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/ui/logout", nil)
		req.AddCookie(c)
		return req
	}())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if cleared := resp.Cookies(); len(cleared) != 1 || cleared[0].MaxAge >= 0 {
		t.Errorf("sign-out did not clear the cookie: %+v", cleared)
	}
	if st, _ := withCookie(t, srv.URL+"/ui/", c.Value); st != http.StatusUnauthorized {
		t.Errorf("a signed-out token: status %d, want 401", st)
	}

	// A token past its lifetime is refused.
	c2 := signIn(t, srv.URL, key)
	mu.Lock()
	now = now.Add(SessionTTL + time.Minute)
	mu.Unlock()
	if st, body := withCookie(t, srv.URL+"/ui/c/A1", c2.Value); st != http.StatusUnauthorized || strings.Contains(body, "PostgreSQL") {
		t.Errorf("an expired token: status %d, want 401 and no data", st)
	}
}

// flakyStore is a shared store whose reads can fail.
type flakyStore struct {
	SignOuts
	fail bool
}

func (f *flakyStore) GetLineage(ctx context.Context, principal string, keys []string) (map[string][]byte, error) {
	if f.fail {
		return nil, errors.New("store down")
	}
	return f.SignOuts.GetLineage(ctx, principal, keys)
}

// Signing out on one replica signs the token out on every replica that
// shares the store, and in the next process: the sign-out is kept in the
// store (under no principal's namespace), not in one process's memory.
// When the store cannot say whether a token was signed out, the token is
// refused rather than trusted.
func TestSignOutHoldsOnEveryReplica(t *testing.T) {
	opt := testOptions(t)
	shared := &flakyStore{SignOuts: opt.Store.(SignOuts)}
	opt.SignOuts = shared
	opt.SessionSecret = []byte("one secret for every replica")
	serve := func() string {
		mux := http.NewServeMux()
		UIRoutes(opt)(mux)
		srv := httptest.NewServer(mux)
		t.Cleanup(srv.Close)
		return srv.URL
	}
	a, b := serve(), serve()
	c := signIn(t, a, "key-alice")
	if st, _ := withCookie(t, b+"/ui/", c.Value); st != http.StatusOK {
		t.Fatalf("replica B refuses replica A's sign-in: status %d", st)
	}
	shared.fail = true
	if st, body := withCookie(t, b+"/ui/c/A1", c.Value); st != http.StatusUnauthorized || strings.Contains(body, "PostgreSQL") {
		t.Errorf("with the store down: status %d, want 401 and no data", st)
	}
	shared.fail = false

	resp, err := noRedirect.Do(func() *http.Request {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, a+"/ui/logout", nil)
		req.AddCookie(c)
		return req
	}())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for name, url := range map[string]string{"replica A": a, "replica B": b, "a restarted process": serve()} {
		if st, body := withCookie(t, url+"/ui/c/A1", c.Value); st != http.StatusUnauthorized || strings.Contains(body, "PostgreSQL") {
			t.Errorf("%s after sign-out on A: status %d, want 401 and no data", name, st)
		}
	}
	// What the store holds names no principal and is not the token.
	tables, err := opt.Store.(interface {
		Dump(context.Context) (map[string][]string, error)
	}).Dump(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	dump := fmt.Sprint(tables)
	if strings.Contains(dump, c.Value) || !strings.Contains(dump, "web-signout:") {
		t.Errorf("the store should hold a digest of the signed-out token, not the token")
	}
	// Another sign-in of the same key is not affected.
	if st, _ := withCookie(t, b+"/ui/", signIn(t, a, "key-alice").Value); st != http.StatusOK {
		t.Errorf("a new sign-in after sign-out: status %d", st)
	}
}
