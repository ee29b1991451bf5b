package flow

import (
	"strings"
	"testing"
	"time"
)

// A marker proves one call: its secret, depth and body, until it expires.
func TestAuxMarkerBoundToOneCall(t *testing.T) {
	secret := []byte("aux-test-secret-0123456789abcdef")
	body := []byte(`{"model":"m","messages":[]}`)
	now := time.Unix(1_800_000_000, 0)
	mk := SignAux(secret, 1, body, now)
	if _, _, err := VerifyAux(secret, mk, 1, body, now.Add(time.Second)); err != nil {
		t.Fatalf("fresh marker refused: %v", err)
	}
	if mk2 := SignAux(secret, 1, body, now); mk2 == mk {
		t.Errorf("two calls with one body got the same marker (no nonce)")
	}
	for name, check := range map[string]func() error{
		"other body":   func() error { _, _, err := VerifyAux(secret, mk, 1, []byte(`{}`), now); return err },
		"other depth":  func() error { _, _, err := VerifyAux(secret, mk, 2, body, now); return err },
		"other secret": func() error { _, _, err := VerifyAux([]byte("another-secret"), mk, 1, body, now); return err },
		"expired":      func() error { _, _, err := VerifyAux(secret, mk, 1, body, now.Add(AuxTTL)); return err },
		"truncated":    func() error { _, _, err := VerifyAux(secret, mk[:len(mk)-2], 1, body, now); return err },
		"far future": func() error {
			_, _, err := ParseAux(strings.Replace(mk, ".1800000030.", ".1900000000.", 1), now)
			return err
		},
	} {
		if check() == nil {
			t.Errorf("%s: marker accepted", name)
		}
	}
}
