// Package flow holds the types a proxied request carries through Tether:
// the Exchange the hooks see, the Hook and ResponseHook interfaces, the
// Detector whose verdict every hook reads, the Admitter that checks budgets,
// and the marker that proves a request comes from Tether's own extractor.
//
// The HTTP front (internal/server) drives an Exchange through these
// interfaces; detection, preservation, the ledger and the extractor
// implement or use them without importing the HTTP front.
package flow

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tether-dev/tether/internal/auth"
	"github.com/tether-dev/tether/internal/compaction"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/upstream"
)

// Exchange is one proxied request as the hooks see it. Hooks may replace Body
// (the bytes sent upstream) and attach ResponseHooks; everything else is
// read-only for them.
type Exchange struct {
	ID        string
	Start     time.Time
	Principal auth.Principal
	Dialect   dialect.Name
	Method    string
	Path      string // request URI as received (path and query)
	Header    http.Header
	View      *dialect.View // the request as the client sent it
	Body      []byte        // what goes upstream
	Target    upstream.Target
	Kind      string // ledger kind: "primary" here; extraction B-legs are recorded by the extractor
	// Internal marks a request from Tether's own extractor (verified marker):
	// the preservation path is off for it.
	Internal bool

	// Verdict is the Detector's classification of the request. The server
	// records it before any Hook runs; it is the zero Result when no
	// Detector is configured or detection failed.
	Verdict compaction.Result

	// Set by hooks, for logs and the ledger: ids only.
	Session, ALeg string
	Agent         string
	Compaction    bool

	responseHooks []ResponseHook
	hold          func() (release func())
}

// Hold keeps the request as received (View, and Body where it still
// shares the bytes read) valid after the exchange ends, for work that
// outlives it; release ends the hold. The server may reuse a request's
// buffer once the exchange has ended and every hold is released: a hook
// whose goroutine reads View or Body after its request's answer must
// hold it.
func (x *Exchange) Hold() (release func()) {
	if x.hold == nil {
		return func() {}
	}
	return x.hold()
}

// SetHold is how the server that read the request body says how it is
// held (Hold).
func (x *Exchange) SetHold(hold func() (release func())) { x.hold = hold }

// AddResponseHook attaches h; response hooks run in reverse order of
// attachment (the last Before to run sees the response first).
func (x *Exchange) AddResponseHook(h ResponseHook) { x.responseHooks = append(x.responseHooks, h) }

// HasResponseHooks reports whether any response hook is attached (the relay
// copies stream events for hooks only when one is).
func (x *Exchange) HasResponseHooks() bool { return len(x.responseHooks) > 0 }

// Outcome is how a B-leg ended.
type Outcome struct {
	Status   int // upstream status; 0 when no response was received
	Usage    dialect.Usage
	Stream   bool
	Err      error // transport error or mid-stream failure
	Duration time.Duration
	TTFB     time.Duration
	// Text is the assistant text the client received (when a response hook
	// asked for it by returning true from WantsText).
	Text string
}

// Detector classifies a request before any Hook runs. The server records the
// returned verdict as Exchange.Verdict, so a hook that needs it cannot run
// before it. A panic leaves the zero verdict.
type Detector interface {
	Detect(ctx context.Context, x *Exchange) compaction.Result
}

// Hook runs before the upstream call. It may replace x.Body and attach
// response hooks. A returned error or a panic is counted and the exchange
// continues with the original request (fail-open).
type Hook interface {
	Before(ctx context.Context, x *Exchange) error
}

// ResponseHook sees the response of one exchange. Implementations must not
// block; a panic is recovered and the event or body passes unchanged.
type ResponseHook interface {
	// Opened is called once the upstream answered with status.
	Opened(x *Exchange, status int)
	// EditBody may rewrite a successful non-stream body.
	EditBody(x *Exchange, body []byte) []byte
	// StreamEvent returns the events to send in place of ev.
	StreamEvent(x *Exchange, ev dialect.Event) []dialect.Event
	// Finish is called once at the end, whatever happened.
	Finish(x *Exchange, o Outcome)
}

// Admitter checks a B-leg against budgets before it opens and settles it
// after. Admit returns ErrBudgetExceeded (wrapped) to refuse.
type Admitter interface {
	Admit(ctx context.Context, x *Exchange) (settle func(Outcome), err error)
}

// ErrBudgetExceeded is returned (wrapped) when a budget refuses a call: by an
// Admitter for a primary B-leg and by the ledger for an extraction.
var ErrBudgetExceeded = errors.New("budget exceeded")

// RetryAfter returns how long until the budget that refused err starts a
// new period, or 0 when err says nothing of it (a total budget never
// resets by itself).
func RetryAfter(err error) time.Duration {
	var r interface{ RetryAfter() time.Duration }
	if errors.As(err, &r) {
		return r.RetryAfter()
	}
	return 0
}

// NopResponseHook implements ResponseHook with no effect; embed it.
type NopResponseHook struct{}

func (NopResponseHook) Opened(*Exchange, int)                 {}
func (NopResponseHook) EditBody(_ *Exchange, b []byte) []byte { return b }
func (NopResponseHook) StreamEvent(_ *Exchange, ev dialect.Event) []dialect.Event {
	return []dialect.Event{ev}
}
func (NopResponseHook) Finish(*Exchange, Outcome) {}

// InternalPrincipal names the caller of internal requests (verified
// extractor calls); the ledger never bills it.
const InternalPrincipal = config.InternalPrincipal

// AuxTTL is how long an extractor call's marker is accepted after it was
// made: long enough for a loopback hop, too short to be worth stealing.
const AuxTTL = 30 * time.Second

// ErrAuxMarker is returned by VerifyAux for a marker that does not prove an
// extractor call of this process's secret for this body and depth.
var ErrAuxMarker = errors.New("invalid internal request marker")

// auxVersion prefixes every marker so a later format can be told apart.
const auxVersion = "v1"

// SignAux returns the value of upstream.HeaderAux for one extractor call:
// "v1.<nonce>.<expiry unix seconds>.<mac>", the MAC an HMAC-SHA-256 under
// secret over the depth, the nonce, the expiry and the SHA-256 of body. A
// marker therefore proves this call only: another body, another depth or a
// late replay fails VerifyAux, and the server accepts each nonce once.
func SignAux(secret []byte, depth int, body []byte, now time.Time) string {
	var n [16]byte
	if _, err := rand.Read(n[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	nonce := hex.EncodeToString(n[:])
	exp := strconv.FormatInt(now.Add(AuxTTL).Unix(), 10)
	return auxVersion + "." + nonce + "." + exp + "." + auxMAC(secret, depth, nonce, exp, body)
}

func auxMAC(secret []byte, depth int, nonce, exp string, body []byte) string {
	d := sha256.Sum256(body)
	m := hmac.New(sha256.New, secret)
	fmt.Fprintf(m, "tether-aux|%s|%d|%s|%s|%x", auxVersion, depth, nonce, exp, d)
	return hex.EncodeToString(m.Sum(nil))
}

// ParseAux checks a marker's shape and expiry without the body, so a
// request carrying a malformed or expired marker is refused before its body
// is read. It returns the nonce and the expiry.
func ParseAux(marker string, now time.Time) (nonce string, expiry time.Time, err error) {
	parts := strings.Split(marker, ".")
	if len(parts) != 4 || parts[0] != auxVersion || len(parts[1]) != 32 || len(parts[3]) != 64 {
		return "", time.Time{}, ErrAuxMarker
	}
	if _, err := hex.DecodeString(parts[1]); err != nil {
		return "", time.Time{}, ErrAuxMarker
	}
	sec, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil {
		return "", time.Time{}, ErrAuxMarker
	}
	expiry = time.Unix(sec, 0)
	if !now.Before(expiry) || expiry.After(now.Add(AuxTTL+time.Minute)) {
		return "", time.Time{}, ErrAuxMarker
	}
	return parts[1], expiry, nil
}

// VerifyAux reports whether marker was made by SignAux under secret for
// exactly this depth and body and has not expired. It returns the nonce and
// expiry, which the caller must accept only once.
func VerifyAux(secret []byte, marker string, depth int, body []byte, now time.Time) (nonce string, expiry time.Time, err error) {
	nonce, expiry, err = ParseAux(marker, now)
	if err != nil {
		return "", time.Time{}, err
	}
	parts := strings.Split(marker, ".")
	want := auxMAC(secret, depth, parts[1], parts[2], body)
	if !hmac.Equal([]byte(parts[3]), []byte(want)) {
		return "", time.Time{}, ErrAuxMarker
	}
	return nonce, expiry, nil
}
