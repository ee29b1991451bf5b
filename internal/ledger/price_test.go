package ledger

import (
	"testing"

	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/dialect"
)

func TestPriceTable_Cost(t *testing.T) {
	table := NewPriceTable([]config.Price{
		{Match: "gpt-5-mini*", InputPerMTok: 0.25, OutputPerMTok: 2, CacheReadPerM: 0.025},
		{Match: "gpt-5*", InputPerMTok: 1.25, OutputPerMTok: 10, CacheReadPerM: 0.125},
		{Match: "claude-sonnet-*", InputPerMTok: 3, OutputPerMTok: 15, CacheReadPerM: 0.3, CacheWritePerM: 3.75},
		{Match: "[", InputPerMTok: 1000}, // malformed: never matches
		{Match: "*", InputPerMTok: 0.075},
	})
	tests := []struct {
		name       string
		model      string
		usage      dialect.Usage
		wantMicros int64
		wantPriced bool
	}{
		{"first match wins over a later broader pattern", "gpt-5-mini-2025", dialect.Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000}, 2_250_000, true},
		{"broader pattern", "gpt-5", dialect.Usage{InputTokens: 1000, OutputTokens: 100}, 1250 + 1000, true},
		{"cache read priced separately", "gpt-5", dialect.Usage{InputTokens: 200, CacheReadTokens: 800, OutputTokens: 34}, 250 + 100 + 340, true},
		{"anthropic cache write", "claude-sonnet-4-5", dialect.Usage{InputTokens: 10, CacheReadTokens: 1000, CacheWriteTokens: 2000, OutputTokens: 100}, 30 + 300 + 7500 + 1500, true},
		{"sub-micro prices round half up", "other", dialect.Usage{InputTokens: 7}, 1, true}, // 0.525 µ$
		{"sub-micro prices round down", "other", dialect.Usage{InputTokens: 6}, 0, true},    // 0.45 µ$
		{"negative counts are ignored", "gpt-5", dialect.Usage{InputTokens: -5, OutputTokens: 1}, 10, true},
		{"zero usage", "gpt-5", dialect.Usage{}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, priced := table.Cost(tt.model, tt.usage)
			if got != tt.wantMicros || priced != tt.wantPriced {
				t.Errorf("Cost(%q, %+v) = %d, %v; want %d, %v", tt.model, tt.usage, got, priced, tt.wantMicros, tt.wantPriced)
			}
		})
	}
}

func TestPriceTable_UnknownModelCostsZero(t *testing.T) {
	table := NewPriceTable([]config.Price{{Match: "gpt-*", InputPerMTok: 1}})
	got, priced := table.Cost("llama-3", dialect.Usage{InputTokens: 1_000_000})
	if got != 0 || priced {
		t.Errorf("Cost(unknown) = %d, %v; want 0, false", got, priced)
	}
}

func TestPriceTable_ExactForLargeVolumes(t *testing.T) {
	// 0.1 is not exact in binary floating point; the table must still price
	// a billion tokens to the micro-dollar.
	table := NewPriceTable([]config.Price{{Match: "*", InputPerMTok: 0.1, OutputPerMTok: 0.3}})
	got, _ := table.Cost("m", dialect.Usage{InputTokens: 1_000_000_000, OutputTokens: 3_000_000_000})
	if want := int64(100_000_000 + 900_000_000); got != want {
		t.Errorf("Cost = %d µ$, want %d", got, want)
	}
}
