package server

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/tether-dev/tether/internal/auth"
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

	// Set by hooks, for logs and the ledger: ids only.
	Session, ALeg string
	Agent         string
	Compaction    bool

	responseHooks []ResponseHook
	values        map[any]any
}

// SetValue attaches a value for later hooks (e.g. the detection verdict);
// keys are unexported types of the package that owns the value.
func (x *Exchange) SetValue(key, value any) {
	if x.values == nil {
		x.values = map[any]any{}
	}
	x.values[key] = value
}

// Value returns a value attached with SetValue.
func (x *Exchange) Value(key any) any { return x.values[key] }

// AddResponseHook attaches h; response hooks run in reverse order of
// attachment (the last Before to run sees the response first).
func (x *Exchange) AddResponseHook(h ResponseHook) { x.responseHooks = append(x.responseHooks, h) }

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

// ErrBudgetExceeded is returned by an Admitter that refuses a request.
var ErrBudgetExceeded = errors.New("budget exceeded")

// NopResponseHook implements ResponseHook with no effect; embed it.
type NopResponseHook struct{}

func (NopResponseHook) Opened(*Exchange, int)                 {}
func (NopResponseHook) EditBody(_ *Exchange, b []byte) []byte { return b }
func (NopResponseHook) StreamEvent(_ *Exchange, ev dialect.Event) []dialect.Event {
	return []dialect.Event{ev}
}
func (NopResponseHook) Finish(*Exchange, Outcome) {}
