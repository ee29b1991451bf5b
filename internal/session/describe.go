package session

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"sync"
	"time"
)

// Conversation is what lineage knows of an A-leg for the principal who owns
// it: the coding agent, the client's own session id, and when its head last
// moved. Each is empty (zero) when unknown.
type Conversation struct {
	Agent         string
	ClientSession string // the id the client sent (Claude Code session, Codex thread, …)
	ClientKind    string // where it came from: codex, claude, opencode, cache (prompt_cache_key)
	LastActivity  time.Time
}

// Describe returns what lineage knows of the principal's A-legs, in one
// store round trip. A-legs with no live head record are absent.
func (r *Resolver) Describe(ctx context.Context, principal string, aLegs []string) (map[string]Conversation, error) {
	out := make(map[string]Conversation, len(aLegs))
	if principal == "" || len(aLegs) == 0 {
		return out, nil
	}
	keys := make([]string, len(aLegs))
	for i, a := range aLegs {
		keys[i] = r.alegKey(principal, a)
	}
	raw, err := r.st.GetLineage(ctx, principal, keys)
	if err != nil {
		return nil, wrap("describe", err)
	}
	for i, a := range aLegs {
		b, ok := raw[keys[i]]
		if !ok {
			continue
		}
		var rec record
		if json.Unmarshal(b, &rec) != nil || rec.ALeg != a {
			continue
		}
		c := Conversation{Agent: rec.Agent}
		c.ClientKind, c.ClientSession, _ = strings.Cut(r.openClient(principal, a, rec.Client), ":")
		if rec.Seen > 0 {
			c.LastActivity = time.Unix(rec.Seen, 0).UTC()
		}
		out[a] = c
	}
	return out, nil
}

// sealClient encrypts a client's session id for the A-leg head record, so
// the store never holds it in clear (AES-256-GCM under a key derived from
// the secret; the nonce is derived from the plaintext, so the same id seals
// the same and an unchanged head is not written again).
func (r *Resolver) sealClient(principal, aLeg, client string) string {
	if client == "" {
		return ""
	}
	aead, ad := r.clientAEAD(principal, aLeg)
	sum := r.macFields("client-nonce", string(ad), client)
	nonce := sum[:aead.NonceSize()]
	return base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, []byte(client), ad))
}

// openClient reverses sealClient; "" when it cannot (another secret).
func (r *Resolver) openClient(principal, aLeg, sealed string) string {
	b, err := base64.RawURLEncoding.DecodeString(sealed)
	if err != nil || sealed == "" {
		return ""
	}
	aead, ad := r.clientAEAD(principal, aLeg)
	if len(b) < aead.NonceSize() {
		return ""
	}
	plain, err := aead.Open(nil, b[:aead.NonceSize()], b[aead.NonceSize():], ad)
	if err != nil {
		return ""
	}
	return string(plain)
}

func (r *Resolver) clientAEAD(principal, aLeg string) (cipher.AEAD, []byte) {
	r.seal.once.Do(func() {
		m := hmac.New(sha256.New, r.opt.Secret)
		writeField(m, []byte("client-seal"))
		block, _ := aes.NewCipher(m.Sum(nil)) // a 32-byte key: never fails
		r.seal.aead, _ = cipher.NewGCM(block)
	})
	return r.seal.aead, []byte(principal + "\x00" + aLeg)
}

// sealKey is the AEAD of client descriptions, made once from the secret
// (it depends on nothing else): making it took an HMAC, an AES key
// schedule and the GCM tables on every turn. An AES-GCM AEAD holds only
// its key schedule and tables after it is made, so goroutines share it.
type sealKey struct {
	once sync.Once
	aead cipher.AEAD
}
