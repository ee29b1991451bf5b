package web

import (
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
// Signing out forgets the token on this replica until it expires.
type sessions struct {
	aead cipher.AEAD
	now  func() time.Time

	mu  sync.Mutex
	out map[[32]byte]time.Time // signed-out tokens (digest) → expiry
}

var errBadToken = errors.New("web session: invalid or expired token")

// newSessions derives the sealing key from secret (a random one when
// secret is empty: sign-ins then last as long as the process).
func newSessions(secret []byte, now func() time.Time) *sessions {
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
	return &sessions{aead: aead, now: now, out: map[[32]byte]time.Time{}}
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

// open returns the key a token holds, or errBadToken.
func (s *sessions) open(token string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(b) < s.aead.NonceSize() {
		return "", errBadToken
	}
	n := s.aead.NonceSize()
	plain, err := s.aead.Open(nil, b[:n], b[n:], sessionAD)
	if err != nil || len(plain) < 8 {
		return "", errBadToken
	}
	exp := time.Unix(int64(binary.BigEndian.Uint64(plain[:8])), 0)
	if !s.now().Before(exp) {
		return "", errBadToken
	}
	s.mu.Lock()
	_, gone := s.out[sha256.Sum256([]byte(token))]
	s.mu.Unlock()
	if gone {
		return "", errBadToken
	}
	return string(plain[8:]), nil
}

// signOut forgets token until it would have expired.
func (s *sessions) signOut(token string) {
	if _, err := s.open(token); err != nil {
		return
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
		s.out[sha256.Sum256([]byte(token))] = now.Add(SessionTTL)
	}
}
