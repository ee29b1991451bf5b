package ledger

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/tether-dev/tether/internal/flow"
	"github.com/tether-dev/tether/internal/tokens"
)

var _ flow.Admitter = (*Ledger)(nil)

// maxOutputEstimate bounds a request's own output cap so that an absurd
// max_tokens cannot overflow a reservation (it is still refused by any
// token budget).
const maxOutputEstimate = 1 << 40

// estimateCall estimates a primary call before it opens, from the body sent
// upstream: input = tokens.EstimateSize of the body (JSON punctuation and
// field names make this an overestimate for ordinary text, which is the safe
// side for a budget), output = the request's own cap (max_tokens,
// max_completion_tokens or max_output_tokens, read through field, or from
// the body when field is nil), else defaultOutput. It
// returns the total and the output part. Settle corrects the reservation to
// the actual usage, so the estimate only decides admission near a limit.
func estimateCall(body []byte, defaultOutput int64, field func(string) gjson.Result) (total, output int64) {
	if field == nil {
		field = func(f string) gjson.Result { return gjson.GetBytes(body, f) }
	}
	input := tokens.EstimateSize(int64(len(body)))
	output = defaultOutput
	for _, f := range []string{"max_tokens", "max_completion_tokens", "max_output_tokens"} {
		if v := field(f); v.Type == gjson.Number && v.Int() > 0 {
			output = min(v.Int(), maxOutputEstimate)
			break
		}
	}
	return input + output, output
}

// Admit implements flow.Admitter for the primary B-leg of an exchange: the
// charge is the exchange's principal, account, session, A-leg and target,
// and a refusal wraps flow.ErrBudgetExceeded so the server answers 429 in
// the caller's dialect.
func (l *Ledger) Admit(ctx context.Context, x *flow.Exchange) (func(flow.Outcome), error) {
	if x.Internal {
		// Tether's own extractor call routed back through the proxy (its
		// marker was verified): the extraction pool has already reserved
		// it against the originating principal and records it when it
		// ends. Charging it here too would bill it twice, the second time
		// to whatever principal the extractor provider's key maps to.
		return func(flow.Outcome) {}, nil
	}
	if strings.HasSuffix(x.Method+" "+pathOnly(x.Path), "POST /v1/messages/count_tokens") {
		// Counting tokens generates nothing and providers do not bill it:
		// it is neither reserved against a budget nor charged.
		return func(flow.Outcome) {}, nil
	}
	kind := Kind(x.Kind)
	if kind == "" {
		kind = KindPrimary
	}
	// The caps are read from the request as the caller sent it (hooks
	// never change them) through its one-pass index, not by a pass over
	// the body.
	var field func(string) gjson.Result
	if x.View != nil {
		field = x.View.Get
	}
	total, out := estimateCall(x.Body, l.outTokens, field)
	c := Charge{
		Principal:             x.Principal.ID,
		Account:               x.Principal.Account,
		Session:               x.Session,
		ALeg:                  x.ALeg,
		ParentRequestID:       x.ID,
		Kind:                  kind,
		Route:                 x.Target.Route(),
		Provider:              x.Target.Provider.Name,
		Model:                 x.Target.Model,
		Family:                x.Target.Provider.Dialect,
		EstimatedTokens:       total,
		EstimatedOutputTokens: out,
	}
	if c.Model == "" && x.View != nil {
		c.Model = x.View.Model()
	}
	settle, err := l.Reserve(ctx, c)
	if err != nil {
		if errors.Is(err, flow.ErrBudgetExceeded) {
			return nil, err
		}
		return nil, fmt.Errorf("admit exchange %s: %w", x.ID, err)
	}
	return func(o flow.Outcome) {
		settle(Result{Usage: o.Usage, Status: o.Status, Err: o.Err, Duration: o.Duration})
	}, nil
}

func pathOnly(p string) string {
	p, _, _ = strings.Cut(p, "?")
	return p
}
