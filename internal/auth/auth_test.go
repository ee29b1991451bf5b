package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/tether-dev/tether/internal/config"
)

func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

func TestPassthroughPrincipalIsKeyedFingerprint(t *testing.T) {
	a := New(&config.Config{}, []byte("secret-one"))
	p1, err := a.Authenticate(hdr("Authorization", "Bearer sk-proj-abc123"))
	if err != nil {
		t.Fatal(err)
	}
	p2, _ := a.Authenticate(hdr("x-api-key", "sk-proj-abc123"))
	p3, _ := a.Authenticate(hdr("x-api-key", "sk-ant-other"))
	if p1.ID != p2.ID {
		t.Errorf("same key via two headers gave %q and %q", p1.ID, p2.ID)
	}
	if p1.ID == p3.ID {
		t.Errorf("different keys share principal %q", p1.ID)
	}
	if strings.Contains(p1.ID, "abc123") || !p1.Passthrough {
		t.Errorf("principal %+v leaks the key or is not passthrough", p1)
	}
	other, _ := New(&config.Config{}, []byte("secret-two")).Authenticate(hdr("x-api-key", "sk-proj-abc123"))
	if other.ID == p1.ID {
		t.Errorf("fingerprint does not depend on the secret")
	}
}

func TestProxyKeyMode(t *testing.T) {
	cfg := &config.Config{Principals: []config.Principal{{ID: "alice", Account: "team", Keys: []string{"alice-key-0123456789"}}}}
	a := New(cfg, []byte("s"))
	p, err := a.Authenticate(hdr("Authorization", "Bearer alice-key-0123456789"))
	if err != nil || p.ID != "alice" || p.Account != "team" || p.Passthrough {
		t.Fatalf("got %+v, %v", p, err)
	}
	for _, h := range []http.Header{hdr(), hdr("x-api-key", "sk-someone-elses-provider-key"), hdr("Authorization", "Basic abc")} {
		if _, err := a.Authenticate(h); !errors.Is(err, ErrUnauthenticated) {
			t.Errorf("headers %v: err %v, want ErrUnauthenticated", h, err)
		}
	}
	if !AdminOK(hdr("x-api-key", "admin-key-0123456789"), "admin-key-0123456789") || AdminOK(hdr("x-api-key", "x"), "admin-key-0123456789") || AdminOK(hdr(), "") {
		t.Errorf("AdminOK wrong")
	}
}

// Provider keys share long vendor prefixes ("sk-proj-", "sk-ant-api03-"):
// two keys that differ only at their end are two principals, whatever the
// length of the shared part.
func TestPassthroughKeysSharingAPrefixAreDistinct(t *testing.T) {
	a := New(&config.Config{}, []byte("secret-one"))
	body := strings.Repeat("A1b2C3d4", 12)
	seen := map[string]string{}
	for _, prefix := range []string{"sk-proj-", "sk-ant-api03-"} {
		for _, last := range []string{"x", "y"} {
			key := prefix + body + last
			p, err := a.Authenticate(hdr("Authorization", "Bearer "+key))
			if err != nil {
				t.Fatal(err)
			}
			if other, dup := seen[p.ID]; dup {
				t.Errorf("keys %q… and %q… share principal %q", other[:20], key[:20], p.ID)
			}
			seen[p.ID] = key
		}
	}
}

// TestFingerprintReusesNoState: fingerprints made one after another on the
// reused HMACs (short and long credentials, from several goroutines) are
// each the keyed digest of their own credential alone.
func TestFingerprintReusesNoState(t *testing.T) {
	secret := []byte("secret-one")
	a := New(&config.Config{}, secret)
	want := func(s string) string {
		m := hmac.New(sha256.New, secret)
		m.Write([]byte(s))
		return hex.EncodeToString(m.Sum(nil)[:8])
	}
	creds := []string{"sk-proj-abc123", strings.Repeat("k", 5000), "sk-ant-api03-x", "", "sk-proj-abc1234"}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				s := creds[(g+i)%len(creds)]
				if got := a.Fingerprint(s); got != want(s) {
					t.Errorf("Fingerprint(%.20q) = %s, want %s", s, got, want(s))
					return
				}
			}
		})
	}
	wg.Wait()
}
