package app

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/store"
)

// loadSecret returns the configured secret, or one generated once and kept
// beside the SQLite store (mode 0600) so fingerprints and tokens survive a
// restart. With a memory store it lives as long as the process.
func loadSecret(cfg *config.Config) ([]byte, error) {
	if cfg.Secret != "" {
		return []byte(cfg.Secret), nil
	}
	url := cfg.Store
	if url == "" {
		url = store.DefaultSQLitePath()
	}
	if strings.HasPrefix(url, "memory:") || strings.HasPrefix(url, "postgres") {
		// Replicas sharing PostgreSQL must share a configured secret; a
		// per-process one still isolates principals correctly.
		return randomSecret(), nil
	}
	path := strings.TrimPrefix(strings.TrimPrefix(url, "sqlite://"), "sqlite:")
	file := filepath.Join(filepath.Dir(path), "secret")
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
