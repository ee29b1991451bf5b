package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"strings"

	"github.com/tether-dev/tether/internal/upstream"
)

// Forwarding loops. A provider whose base URL leads back to this process
// (an operator's typo, or two proxies pointed at each other) would
// otherwise forward each request to itself again and again until the
// process runs out of connections. Every request Tether forwards carries
// upstream.HeaderVia: the hop tokens of the Tether processes it has passed
// through, this one's last. A request that already names this process's
// token, or that has passed through maxHops Tether processes, is answered
// 508 Loop Detected in the caller's dialect and goes nowhere.
//
// A token is 16 random hex digits per process and says nothing about the
// host or the caller. A caller can send the header too, which can only get
// its own request refused: what is not a token's shape is neither counted
// nor passed on.
const maxHops = 8

// hopKey is the context key of the HeaderVia value a request's B-leg sends.
type hopKey struct{}

func newHopToken() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// hops reads the tokens of h's HeaderVia (one or more lines, comma
// separated) and reports whether they name token or reach maxHops.
func hops(h http.Header, token string) (via []string, loop bool) {
	for _, line := range h.Values(upstream.HeaderVia) {
		for t := range strings.SplitSeq(line, ",") {
			t = strings.TrimSpace(t)
			if !isHopToken(t) {
				continue
			}
			if t == token || len(via) >= maxHops-1 {
				return via, true
			}
			via = append(via, t)
		}
	}
	return via, false
}

func isHopToken(t string) bool {
	if len(t) != 16 {
		return false
	}
	for i := range len(t) {
		if c := t[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// guardLoops answers a request that has come round to this process again
// (or passed through too many) with 508, and otherwise hands on the
// HeaderVia value its B-leg will carry.
func (s *Server) guardLoops(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		via, loop := hops(r.Header, s.hop)
		if loop {
			s.metrics.loops.Inc()
			s.log.LogAttrs(r.Context(), slog.LevelWarn, "forwarding loop refused", slog.Int("hops", len(via)+1))
			writeError(w, dialectForPath(r.URL.Path, r.Header), http.StatusLoopDetected,
				"forwarding loop: this request has already passed through this proxy (a provider base_url leads back to it)")
			return
		}
		out := s.hop // a caller's request: this proxy is the first hop
		if len(via) > 0 {
			out = strings.Join(append(via, s.hop), ", ")
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), hopKey{}, out)))
	})
}

// outbound is upstream.Outbound with the request's HeaderVia.
func outbound(ctx context.Context, t upstream.Target, method, requestURI string, in http.Header, body []byte) (*http.Request, error) {
	req, err := upstream.Outbound(ctx, t, method, requestURI, in, body)
	if err != nil {
		return nil, err
	}
	if via, _ := ctx.Value(hopKey{}).(string); via != "" {
		req.Header.Set(upstream.HeaderVia, via)
	}
	return req, nil
}
