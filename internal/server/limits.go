package server

import (
	"net"
	"net/http"
	"sync"

	"github.com/tether-dev/tether/internal/config"
)

// NewHTTPServer returns the http.Server that serves h with the connection
// bounds of c: a header deadline, an idle keep-alive deadline (the body
// deadline is set per request by the proxy routes, so a long answer stream
// is never cut by it).
func NewHTTPServer(h http.Handler, c config.HTTP) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: c.ReadHeaderTimeout, IdleTimeout: c.IdleTimeout}
}

// LimitListener bounds the connections ln hands out: at most total open at
// once and at most perRemote from one remote IP address. A connection over
// either bound is closed as soon as it is accepted. 0 means no bound.
func LimitListener(ln net.Listener, total, perRemote int) net.Listener {
	return &limitListener{Listener: ln, total: total, perRemote: perRemote, byRemote: map[string]int{}}
}

type limitListener struct {
	net.Listener
	total, perRemote int

	mu       sync.Mutex
	open     int
	byRemote map[string]int
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		host, _, err := net.SplitHostPort(c.RemoteAddr().String())
		if err != nil {
			host = c.RemoteAddr().String()
		}
		l.mu.Lock()
		if (l.total > 0 && l.open >= l.total) || (l.perRemote > 0 && l.byRemote[host] >= l.perRemote) {
			l.mu.Unlock()
			c.Close()
			continue
		}
		l.open++
		l.byRemote[host]++
		l.mu.Unlock()
		return &limitConn{Conn: c, l: l, host: host}, nil
	}
}

func (l *limitListener) release(host string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if l.byRemote[host]--; l.byRemote[host] <= 0 {
		delete(l.byRemote, host)
	}
}

type limitConn struct {
	net.Conn
	l    *limitListener
	host string
	once sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.host) })
	return err
}
