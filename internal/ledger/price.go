package ledger

import (
	"math"
	"path"

	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/dialect"
)

// picosPerMicro converts pico-USD to micro-USD.
const picosPerMicro = 1_000_000

// rate is one price-table row in integer pico-USD per token. A price of p USD
// per million tokens is p micro-USD per token, i.e. p·10⁶ pico-USD per token,
// so every configured price with up to six decimals is represented exactly
// and costs are summed without floating-point drift.
type rate struct {
	match                 string
	input, output, cr, cw int64
}

// PriceTable prices B-legs from the configured table: the first row whose
// pattern (path.Match syntax) matches the model wins.
type PriceTable struct {
	rates []rate
}

// NewPriceTable builds a table from the configuration. Rows whose pattern is
// malformed never match (config validation reports them).
func NewPriceTable(prices []config.Price) *PriceTable {
	t := &PriceTable{}
	for _, p := range prices {
		if _, err := path.Match(p.Match, ""); err != nil {
			continue
		}
		t.rates = append(t.rates, rate{
			match:  p.Match,
			input:  picos(p.InputPerMTok),
			output: picos(p.OutputPerMTok),
			cr:     picos(p.CacheReadPerM),
			cw:     picos(p.CacheWritePerM),
		})
	}
	return t
}

func picos(usdPerMTok float64) int64 {
	return int64(math.Round(max(usdPerMTok, 0) * 1e6))
}

func (t *PriceTable) lookup(model string) (rate, bool) {
	for _, r := range t.rates {
		if ok, _ := path.Match(r.match, model); ok {
			return r, true
		}
	}
	return rate{}, false
}

// Cost returns the cost of usage on model in integer micro-USD, rounded half
// up, and whether the model is priced at all (an unpriced model costs 0).
// InputTokens are the uncached input tokens; cache reads and cache writes
// are priced separately at their own rates.
func (t *PriceTable) Cost(model string, u dialect.Usage) (micros int64, priced bool) {
	r, ok := t.lookup(model)
	if !ok {
		return 0, false
	}
	p := max(u.InputTokens, 0)*r.input + max(u.OutputTokens, 0)*r.output +
		max(u.CacheReadTokens, 0)*r.cr + max(u.CacheWriteTokens, 0)*r.cw
	return (p + picosPerMicro/2) / picosPerMicro, true
}
