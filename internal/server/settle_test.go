package server_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/fakemodel"
	"github.com/tether-dev/tether/internal/flow"
)

// blockingAdmitter admits every call; its settlements wait until released,
// as a ledger write to a store that has stalled would.
type blockingAdmitter struct{ release chan struct{} }

func (a blockingAdmitter) Admit(context.Context, *flow.Exchange) (func(flow.Outcome), error) {
	return func(flow.Outcome) { <-a.release }, nil
}

// The caller has the whole JSON answer before the call is settled:
// bookkeeping after the answer (the ledger's settlement, the request log)
// never holds it. (A streamed answer's events are flushed as they are
// relayed; only the end of its chunked body waits for the handler.)
func TestAnswerArrivesBeforeSettlement(t *testing.T) {
	fake := startFake(t, func(*fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Text: "ok"} })
	adm := blockingAdmitter{release: make(chan struct{})}
	defer close(adm.release)
	p := startProxy(t, proxyOpts{cfg: passthroughConfig(t, fake.URL, nil), admitter: adm})
	p.client.Timeout = 10 * time.Second // a regression fails here instead of hanging
	// Every settlement stays blocked: each call needs a connection of its
	// own (one connection serves its next request once the handler ends).
	p.client.Transport = &http.Transport{DisableKeepAlives: true}
	for _, rt := range routes {
		resp, data := p.do(t, http.MethodPost, rt.path, rt.header, []byte(rt.body("fake-a")))
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: status %d: %s", rt.name, resp.StatusCode, data)
		}
	}
}
