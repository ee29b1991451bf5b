package web

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"sync"
	"time"

	"github.com/tether-dev/tether/internal/flow"
)

// SessionTTL is how long a web view sign-in lasts.
const SessionTTL = 12 * time.Hour

// maxSignedOut bounds the signed-out tokens remembered until they expire.
const maxSignedOut = 10_000

// sessions mints and reads the web view's sign-in tokens. A token is the
// caller's key and an expiry sealed with AES-256-GCM under a key derived
// from the server's secret: the cookie never holds the key in clear, a
// forged or altered token does not open, an expired one is refused, and
// every replica sharing the secret reads it. The key inside is checked
// again on every request, so a revoked key signs its sessions out at once.
// Signing out forgets the token until it expires: in the shared store when
// there is one (SignOuts), so that every replica, and the next process,
// refuses it too; else on this process only.
type sessions struct {
	aead cipher.AEAD
	now  func() time.Time
	kept SignOuts // nil: this process only

	mu  sync.Mutex
	out map[[32]byte]time.Time // signed-out tokens (digest) → expiry
}

// SignOuts is where the web view keeps signed-out tokens (a digest of each,
// never the token) until they expire: the store's lineage records, in the
// namespace of no principal (SignOutNamespace).
type SignOuts interface {
	PutLineage(ctx context.Context, principal, key string, value []byte, expires time.Time) error
	GetLineage(ctx context.Context, principal string, keys []string) (map[string][]byte, error)
}

// SignOutNamespace is the lineage namespace of signed-out tokens: the
// internal requests' principal, which no caller authenticates as and
// whose requests keep no lineage (config refuses it as a principal id).
const SignOutNamespace = flow.InternalPrincipal

// signOutKey is a signed-out token's record key: a digest of the token.
func signOutKey(digest [32]byte) string {
	return "web-signout:" + base64.RawURLEncoding.EncodeToString(digest[:])
}

var errBadToken = errors.New("web session: invalid or expired token")

// newSessions derives the sealing key from secret (a random one when
// secret is empty: sign-ins then last as long as the process).
func newSessions(secret []byte, now func() time.Time, kept SignOuts) *sessions {
	if len(secret) == 0 {
		secret = make([]byte, 32)
		_, _ = rand.Read(secret)
	}
	if now == nil {
		now = time.Now
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("tether web session v1"))
	block, _ := aes.NewCipher(m.Sum(nil)) // 32 bytes: never fails
	aead, _ := cipher.NewGCM(block)
	return &sessions{aead: aead, now: now, kept: kept, out: map[[32]byte]time.Time{}}
}

var sessionAD = []byte("tether-web-session")

// mint returns a token for key, valid for SessionTTL.
func (s *sessions) mint(key string) string {
	plain := make([]byte, 8, 8+len(key))
	binary.BigEndian.PutUint64(plain, uint64(s.now().Add(SessionTTL).Unix()))
	plain = append(plain, key...)
	nonce := make([]byte, s.aead.NonceSize())
	_, _ = rand.Read(nonce)
	return base64.RawURLEncoding.EncodeToString(s.aead.Seal(nonce, nonce, plain, sessionAD))
}

// open returns the key a token holds, or errBadToken (also when the store
// that keeps signed-out tokens cannot say: a sign-in is refused rather
// than trusted).
func (s *sessions) open(ctx context.Context, token string) (string, error) {
	key, _, err := s.unseal(token)
	if err != nil {
		return "", err
	}
	digest := sha256.Sum256([]byte(token))
	s.mu.Lock()
	_, gone := s.out[digest]
	s.mu.Unlock()
	if gone {
		return "", errBadToken
	}
	if s.kept != nil {
		got, err := s.kept.GetLineage(ctx, SignOutNamespace, []string{signOutKey(digest)})
		if err != nil || len(got) > 0 {
			return "", errBadToken
		}
	}
	return key, nil
}

// unseal opens a token: the key it holds and its expiry, or errBadToken
// when it is forged, altered or expired.
func (s *sessions) unseal(token string) (string, time.Time, error) {
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(b) < s.aead.NonceSize() {
		return "", time.Time{}, errBadToken
	}
	n := s.aead.NonceSize()
	plain, err := s.aead.Open(nil, b[:n], b[n:], sessionAD)
	if err != nil || len(plain) < 8 {
		return "", time.Time{}, errBadToken
	}
	exp := time.Unix(int64(binary.BigEndian.Uint64(plain[:8])), 0)
	if !s.now().Before(exp) {
		return "", time.Time{}, errBadToken
	}
	return string(plain[8:]), exp, nil
}

// signOut forgets token until it would have expired: in the store, when
// one keeps sign-outs, and on this process. It reports a store failure
// (the token is then refused here only).
func (s *sessions) signOut(ctx context.Context, token string) error {
	_, exp, err := s.unseal(token)
	if err != nil {
		return nil // nothing to sign out
	}
	digest := sha256.Sum256([]byte(token))
	var stored error
	if s.kept != nil {
		stored = s.kept.PutLineage(ctx, SignOutNamespace, signOutKey(digest), []byte{1}, exp)
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.out) >= maxSignedOut {
		for k, exp := range s.out {
			if !now.Before(exp) {
				delete(s.out, k)
			}
		}
	}
	if len(s.out) < maxSignedOut {
		s.out[digest] = exp
	}
	return stored
}
