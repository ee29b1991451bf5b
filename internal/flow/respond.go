package flow

import "github.com/tether-dev/tether/internal/dialect"

// The response side of an exchange: the server calls these as the upstream
// answer arrives. Each runs the attached response hooks, newest first, with
// panic isolation: a failing hook leaves the body or event unchanged.

// Opened tells the response hooks the upstream answered with status.
func (x *Exchange) Opened(status int) {
	for i := len(x.responseHooks) - 1; i >= 0; i-- {
		h := x.responseHooks[i]
		func() {
			defer func() { _ = recover() }()
			h.Opened(x, status)
		}()
	}
}

// EditBody passes a successful non-stream body through the response hooks.
func (x *Exchange) EditBody(body []byte) []byte {
	for i := len(x.responseHooks) - 1; i >= 0; i-- {
		h := x.responseHooks[i]
		func() {
			orig := body
			defer func() {
				if recover() != nil {
					body = orig
				}
			}()
			body = h.EditBody(x, body)
		}()
	}
	return body
}

// StreamEvent passes one stream event through the response hooks and
// returns the events to send in its place.
func (x *Exchange) StreamEvent(ev dialect.Event) []dialect.Event {
	evs := []dialect.Event{ev}
	for i := len(x.responseHooks) - 1; i >= 0; i-- {
		h := x.responseHooks[i]
		var next []dialect.Event
		for _, e := range evs {
			func() {
				defer func() {
					if recover() != nil {
						next = append(next, e)
					}
				}()
				next = append(next, h.StreamEvent(x, e)...)
			}()
		}
		evs = next
	}
	return evs
}

// Finish tells the response hooks how the exchange ended; it is called once.
func (x *Exchange) Finish(o Outcome) {
	for i := len(x.responseHooks) - 1; i >= 0; i-- {
		h := x.responseHooks[i]
		func() {
			defer func() { _ = recover() }()
			h.Finish(x, o)
		}()
	}
}
