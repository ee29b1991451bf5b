package upstream

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
)

// A request body is held whole in memory (agents resend 100 KB–2 MB of
// history each turn), yet net/http copies a body of known length through a
// fresh 32 KiB buffer, one write per 32 KiB: it wraps the body in an
// io.LimitedReader, which hides the body's WriteTo. A connection to a
// provider therefore writes such a body itself, in one call, from the
// memory that holds it.

// memoryBody is the body Outbound sends. release, when set (HoldBody),
// ends the caller's hold on the memory it reads once the transport closes
// it; the caller's release must bear being called more than once.
type memoryBody struct {
	bytes.Reader
	release func()
}

func newMemoryBody(b []byte) *memoryBody {
	m := &memoryBody{}
	m.Reset(b)
	return m
}

func (b *memoryBody) Close() error {
	if b.release != nil {
		b.release()
	}
	return nil
}

// HoldBody makes the body of req, as Outbound built it, and any body its
// GetBody makes for a retry, take a hold (hold) on the memory they read,
// ended when the transport closes them: the transport may still be
// writing a body after the answer came and the caller moved on.
func HoldBody(req *http.Request, hold func() (release func())) {
	b, ok := req.Body.(*memoryBody)
	if !ok {
		return
	}
	b.release = hold()
	if get := req.GetBody; get != nil {
		req.GetBody = func() (io.ReadCloser, error) {
			rc, err := get()
			if mb, ok := rc.(*memoryBody); ok && err == nil {
				mb.release = hold()
			}
			return rc, err
		}
	}
}

// wholeWrites is a plain connection to a provider (a TLS connection wraps
// it and writes records of its own).
type wholeWrites struct{ net.Conn }

// ReadFrom writes a held body in one call when the transport's limit
// covers all of it; anything else is copied as the connection would.
func (c *wholeWrites) ReadFrom(r io.Reader) (int64, error) {
	if lr, ok := r.(*io.LimitedReader); ok {
		if b, ok := lr.R.(*memoryBody); ok && int64(b.Len()) <= lr.N {
			m, err := b.WriteTo(c.Conn)
			lr.N -= m
			return m, err
		}
	}
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}

// dialWhole dials as dial does and returns connections that write held
// bodies whole.
func dialWhole(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &wholeWrites{Conn: c}, nil
	}
}
