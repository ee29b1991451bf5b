package app

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/store"
	"github.com/tether-dev/tether/internal/store/pgstore"
)

// loadSecret returns the configured secret, or one generated once and kept
// beside the SQLite store (mode 0600) so fingerprints and tokens survive a
// restart. With a memory store it lives as long as the process.
// ReadSecret returns the secret a server with cfg uses, without creating
// one: nil when none is configured or stored yet (the operator CLI then
// cannot match capsule block refs).
func ReadSecret(cfg *config.Config) []byte {
	if cfg.Secret != "" {
		return []byte(cfg.Secret)
	}
	url := cmp.Or(cfg.Store, store.DefaultSQLitePath())
	loc, err := store.ParseURL(url)
	if err != nil || loc.Kind != store.SQLite {
		return nil
	}
	if data, err := os.ReadFile(filepath.Join(filepath.Dir(loc.Path), "secret")); err == nil && len(data) >= 32 {
		return data
	}
	return nil
}

func loadSecret(cfg *config.Config) ([]byte, error) {
	if cfg.Secret != "" {
		return []byte(cfg.Secret), nil
	}
	url := cfg.Store
	if url == "" {
		url = store.DefaultSQLitePath()
	}
	loc, err := store.ParseURL(url)
	if err != nil {
		return nil, err
	}
	if loc.Kind != store.SQLite {
		// A memory store lives as long as the process; PostgreSQL gets
		// here only with allow_generated_secret (config validation): one
		// throwaway process; principals stay isolated.
		return randomSecret(), nil
	}
	file := filepath.Join(filepath.Dir(loc.Path), "secret")
	if data, err := os.ReadFile(file); err == nil && len(data) >= 32 {
		return data, nil
	}
	s := []byte(hex.EncodeToString(randomSecret()))
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return nil, fmt.Errorf("create state directory: %w", err)
	}
	if err := os.WriteFile(file, s, 0o600); err != nil {
		return nil, fmt.Errorf("write secret: %w", err)
	}
	return s, nil
}

func randomSecret() []byte {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return b
}

// secretCheckKey is the store counter holding a fingerprint of the secret
// the replicas of a shared store use.
const secretCheckKey = "tether:secret-fingerprint"

// errSecretMismatch: this replica's secret is not the one the others use.
var errSecretMismatch = errors.New("secret: differs from the secret the other replicas on this PostgreSQL store use; " +
	"every replica must run with the same secret (lineage keys, epoch tokens and passthrough principals derive from it)")

// checkSharedSecret refuses a replica whose configured secret differs from
// the one already recorded in the shared store: the first replica records a
// fingerprint (an HMAC under the secret, not the secret), later ones
// compare. The record is an atomic insert-if-absent, so replicas starting
// together with different secrets cannot both succeed.
func checkSharedSecret(ctx context.Context, st store.Store, secret []byte) error {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("tether shared secret check"))
	fp := int64(binary.BigEndian.Uint64(m.Sum(nil))>>2) + 1 // positive
	recorded, err := st.Reserve(ctx, secretCheckKey, fp, fp)
	if err != nil {
		return fmt.Errorf("check shared secret: %w", err)
	}
	if recorded {
		return nil
	}
	used, err := st.Used(ctx, secretCheckKey)
	if err != nil {
		return fmt.Errorf("check shared secret: %w", err)
	}
	if used != fp {
		return errSecretMismatch
	}
	return nil
}

// shared reports whether the store is one several replicas may share.
func shared(cfg *config.Config, st store.Store) bool {
	_, pg := st.(*pgstore.Store)
	loc, err := store.ParseURL(cfg.Store)
	return pg || err == nil && loc.Kind == store.Postgres
}
