package server

import (
	"testing"
	"time"
)

func TestNonceSetAcceptsEachNonceOnce(t *testing.T) {
	var n nonceSet
	now := time.Unix(1_800_000_000, 0)
	if !n.use("a", now.Add(time.Second), now) {
		t.Fatal("a new nonce was refused")
	}
	if n.use("a", now.Add(time.Second), now) {
		t.Error("a nonce was accepted twice")
	}
	if !n.use("b", now.Add(time.Second), now) {
		t.Error("a second new nonce was refused")
	}
}
