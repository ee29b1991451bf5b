package ledger

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/flow"
)

// Budget units.
const (
	unitTokens = "tokens"
	unitMicros = "usd_micros"
)

// limit is one enforced bound: a scope (principal or account), a period and
// a unit. A config.Budget with both max_usd and max_tokens yields two limits.
type limit struct {
	scope  string // "principal" | "account"
	id     string
	period string // day | month | total
	unit   string
	max    int64
}

// limits normalises the configured budgets. Duplicate bounds on the same
// counter keep the strictest, so one counter is never reserved twice.
func limits(budgets []config.Budget) []limit {
	byKey := map[string]limit{}
	add := func(l limit) {
		k := l.scope + "\x00" + l.id + "\x00" + l.period + "\x00" + l.unit
		if prev, ok := byKey[k]; ok && prev.max <= l.max {
			return
		}
		byKey[k] = l
	}
	for _, b := range budgets {
		scope, id := "principal", b.Principal
		if id == "" {
			scope, id = "account", b.Account
		}
		if id == "" {
			continue
		}
		period := cmp.Or(b.Period, "total")
		if b.MaxTokens > 0 {
			add(limit{scope: scope, id: id, period: period, unit: unitTokens, max: b.MaxTokens})
		}
		if b.MaxUSD > 0 {
			add(limit{scope: scope, id: id, period: period, unit: unitMicros, max: int64(math.Round(b.MaxUSD * 1e6))})
		}
	}
	out := make([]limit, 0, len(byKey))
	for _, l := range byKey {
		out = append(out, l)
	}
	// A fixed order keeps reservation order stable across calls.
	slices.SortFunc(out, func(a, b limit) int {
		return cmp.Or(cmp.Compare(a.scope, b.scope), cmp.Compare(a.id, b.id),
			cmp.Compare(a.period, b.period), cmp.Compare(a.unit, b.unit))
	})
	return out
}

// applies reports whether l bounds a call by principal/account.
func (l limit) applies(principal, account string) bool {
	switch l.scope {
	case "principal":
		return l.id == principal
	case "account":
		return l.id == account
	}
	return false
}

// Key returns the store counter key of the period containing now, e.g.
// "budget:principal:alice:day:2026-12-02:tokens".
func (l limit) key(now time.Time) string {
	now = now.UTC()
	var p string
	switch l.period {
	case "day":
		p = "day:" + now.Format(time.DateOnly)
	case "month":
		p = "month:" + now.Format("2006-01")
	default:
		p = "total"
	}
	return fmt.Sprintf("budget:%s:%s:%s:%s", l.scope, l.id, p, l.unit)
}

// String names the budget in errors, without amounts spent.
func (l limit) String() string {
	if l.unit == unitTokens {
		return fmt.Sprintf("%s %q %s budget of %d tokens", l.scope, l.id, l.period, l.max)
	}
	return fmt.Sprintf("%s %q %s budget of $%.2f", l.scope, l.id, l.period, float64(l.max)/1e6)
}

// resetAt is when the period containing now ends (UTC); zero for a total
// budget, which never resets by itself.
func (l limit) resetAt(now time.Time) time.Time {
	now = now.UTC()
	switch l.period {
	case "day":
		return time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
	case "month":
		return time.Date(now.Year(), now.Month()+1, 1, 0, 0, 0, 0, time.UTC)
	}
	return time.Time{}
}

// budgetError is a refusal by one budget: it wraps flow.ErrBudgetExceeded
// and tells the server how long until the budget's period resets.
type budgetError struct {
	msg   string
	retry time.Duration
}

func (e *budgetError) Error() string             { return e.msg }
func (e *budgetError) Unwrap() error             { return flow.ErrBudgetExceeded }
func (e *budgetError) RetryAfter() time.Duration { return e.retry }
