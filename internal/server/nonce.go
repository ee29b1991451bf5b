package server

import (
	"sync"
	"time"
)

// maxNonces bounds the markers remembered at once. Markers live
// flow.AuxTTL, so this is far above what a bounded extractor pool issues in
// that time; when it is full, new markers are refused rather than the
// oldest forgotten (forgetting would let a replay in).
const maxNonces = 1 << 16

// nonceSet remembers the nonces of accepted internal-request markers until
// they expire, so each marker is accepted once.
type nonceSet struct {
	mu   sync.Mutex
	seen map[string]time.Time // nonce → expiry
}

// use records nonce and reports whether it was new.
func (n *nonceSet) use(nonce string, expiry, now time.Time) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.seen == nil {
		n.seen = make(map[string]time.Time)
	}
	if _, ok := n.seen[nonce]; ok {
		return false
	}
	if len(n.seen) >= maxNonces/2 {
		for k, exp := range n.seen {
			if !now.Before(exp) {
				delete(n.seen, k)
			}
		}
	}
	if len(n.seen) >= maxNonces {
		return false
	}
	n.seen[nonce] = expiry
	return true
}
