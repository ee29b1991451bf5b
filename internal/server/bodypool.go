package server

import (
	"math/bits"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/tether-dev/tether/internal/upstream"
)

// Agents resend their whole history on every turn (100 KB–2 MB), so a
// fresh buffer per request is a large allocation the runtime zeroes, and
// faults in, and the collector chases, on every request. Bodies whose
// length is declared are read into buffers lent by size class instead. A
// buffer goes back only when nothing can read it any more: the handler
// has returned, the B-leg's transport has closed the request body it
// was writing (it may still write after the answer arrived), and every
// hook that reads the request after its exchange (flow.Exchange.Hold)
// has let go. A buffer lent again is overwritten from the start; nothing
// reads past a body's length.

const (
	// minLentBody is the smallest body read into a lent buffer: below it
	// an allocation costs less than the bookkeeping.
	minLentBody = 32 << 10
	lentClasses = 8 // 32 KiB … 4 MiB (trustedBody)
)

var lentPools [lentClasses]sync.Pool

// lentBody is a request body's buffer and the holds on it.
type lentBody struct {
	buf   []byte // len 0, cap of its class
	class int
	holds atomic.Int32
}

// lendBody returns a buffer of at least n bytes with one hold (the
// handler's), or nil when n is outside the lent sizes.
func lendBody(n int) *lentBody {
	if n < minLentBody || n > trustedBody {
		return nil
	}
	class := bits.Len(uint(n-1)) - bits.Len(uint(minLentBody-1))
	if class < 0 {
		class = 0
	}
	if class >= lentClasses {
		return nil
	}
	l, _ := lentPools[class].Get().(*lentBody)
	if l == nil {
		l = &lentBody{buf: make([]byte, 0, minLentBody<<class), class: class}
	}
	l.holds.Store(1)
	return l
}

// hold adds a hold; the function it returns ends it (once, however often
// it is called).
func (l *lentBody) hold() (release func()) {
	if l == nil {
		return func() {}
	}
	l.holds.Add(1)
	var once sync.Once
	return func() { once.Do(l.release) }
}

// release ends one hold; the last returns the buffer to its class.
func (l *lentBody) release() {
	if l == nil {
		return
	}
	switch n := l.holds.Add(-1); {
	case n == 0:
		l.buf = l.buf[:0]
		lentPools[l.class].Put(l)
	case n < 0:
		panic("server: lent request body released more often than held")
	}
}

// holdOutbound makes req's body (and any body its GetBody makes for a
// retry or a redirect) hold l until the transport closes it.
func holdOutbound(req *http.Request, l *lentBody) {
	if l != nil {
		upstream.HoldBody(req, l.hold)
	}
}
