// Package auth turns an inbound request's credentials into a principal: a
// configured proxy key in proxy-key mode, or a keyed fingerprint of the
// caller's own provider key in passthrough mode. The key itself is never
// kept, logged or returned.
package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"hash"
	"net/http"
	"strings"
	"sync"

	"github.com/tether-dev/tether/internal/config"
)

// ErrUnauthenticated means the request carries no acceptable credential.
var ErrUnauthenticated = errors.New("missing or invalid API key")

// Principal is the authenticated caller. It owns usage, budgets and every
// session it opens.
type Principal struct {
	ID          string
	Account     string
	Passthrough bool // authenticated by its own provider key, forwarded upstream
}

// Anonymous is the principal of every keyless caller in passthrough mode.
// Keyless callers cannot be told apart by anything a caller cannot forge, so
// continuity is off for it.
const Anonymous = "anonymous"

// Authenticator maps credentials to principals.
type Authenticator struct {
	secret []byte
	keys   map[string]config.Principal // proxy key → principal
	macs   sync.Pool                   // *fingerprinter under secret
}

// fingerprinter is an HMAC under the secret with a scratch buffer for its
// input: in passthrough mode every request is fingerprinted, and a new
// HMAC (its key schedule, two digests, the input's copy) was six
// allocations a request.
type fingerprinter struct {
	h   hash.Hash
	buf []byte
}

// New returns an Authenticator for cfg. secret keys passthrough fingerprints.
func New(cfg *config.Config, secret []byte) *Authenticator {
	a := &Authenticator{secret: secret, keys: map[string]config.Principal{}}
	for _, p := range cfg.Principals {
		for _, k := range p.Keys {
			a.keys[k] = p
		}
	}
	return a
}

// Credential returns the API key a request carries (Authorization: Bearer,
// x-api-key or Gemini's x-goog-api-key), or "".
func Credential(h http.Header) string {
	if k := strings.TrimSpace(h.Get("x-api-key")); k != "" {
		return k
	}
	if k := strings.TrimSpace(h.Get("x-goog-api-key")); k != "" {
		return k
	}
	v := strings.TrimSpace(h.Get("Authorization"))
	if len(v) > 7 && strings.EqualFold(v[:7], "bearer ") {
		return strings.TrimSpace(v[7:])
	}
	return ""
}

// Authenticate resolves the principal of a request.
func (a *Authenticator) Authenticate(h http.Header) (Principal, error) {
	key := Credential(h)
	if len(a.keys) == 0 {
		if key == "" {
			// Passthrough without a key: the upstream decides. All such
			// callers share one principal, so nothing may be kept for it
			// that one keyless caller could read back for another (no
			// continuity: see app's policies).
			return Principal{ID: Anonymous, Account: Anonymous, Passthrough: true}, nil
		}
		id := "pt-" + a.Fingerprint(key)
		return Principal{ID: id, Account: id, Passthrough: true}, nil
	}
	if key == "" {
		return Principal{}, ErrUnauthenticated
	}
	for k, p := range a.keys {
		if subtle.ConstantTimeCompare([]byte(k), []byte(key)) == 1 {
			return Principal{ID: p.ID, Account: cmpOr(p.Account, p.ID)}, nil
		}
	}
	return Principal{}, ErrUnauthenticated
}

// Fingerprint is a keyed, truncated digest of s (never reversible to s).
func (a *Authenticator) Fingerprint(s string) string {
	f, _ := a.macs.Get().(*fingerprinter)
	if f == nil {
		f = &fingerprinter{h: hmac.New(sha256.New, a.secret)}
	}
	f.h.Reset()
	f.buf = append(f.buf[:0], s...)
	f.h.Write(f.buf)
	var sum [sha256.Size]byte
	f.h.Sum(sum[:0])
	clear(f.buf) // the credential is not kept in the pool
	if cap(f.buf) > 4<<10 {
		f.buf = nil
	}
	a.macs.Put(f)
	return hex.EncodeToString(sum[:8])
}

// AdminOK reports whether h carries the configured admin key.
func AdminOK(h http.Header, adminKey string) bool {
	if adminKey == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(Credential(h)), []byte(adminKey)) == 1
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
