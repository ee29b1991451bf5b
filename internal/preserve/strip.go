package preserve

import (
	"github.com/tether-dev/tether/internal/capsule"
	"github.com/tether-dev/tether/internal/dialect"
)

// stripCarried removes the capsule blocks the request carries in its
// history — all of them, or all but the newest (keepLast) — so the model
// never reads two versions of the state side by side. Failures leave the
// body as it is.
func (t *turn) stripCarried(keepLast bool) {
	// Counting the opening tags is the whole cost on most turns.
	drop := capsule.CountOpen(t.x.Body)
	if drop > 0 {
		// Blocks inside a provider's signed compaction stay as they are.
		drop -= capsule.CountOpen(dialect.ProviderBytes(t.x.Body))
	}
	if keepLast {
		drop--
	}
	if drop <= 0 {
		return
	}
	seen := 0
	out, err := dialect.RewriteStrings(t.x.Body, capsule.Mentions, func(s string) string {
		n := capsule.CountOpenText(s)
		defer func() { seen += n }()
		if seen+n <= drop {
			r, _ := capsule.Strip(s)
			return r
		}
		// The string holding the block that stays: drop its earlier ones.
		k := capsule.IndexLast(s)
		if k < 0 {
			return s
		}
		head, _ := capsule.Strip(s[:k])
		return head + s[k:]
	})
	if err != nil {
		t.e.m.failures.WithLabelValues("strip").Inc()
		return
	}
	t.x.Body = out
	t.e.m.stripped.Add(float64(drop))
}

// carriedBlock returns the text of the newest capsule block in the history;
// with toolResults false, a block inside a tool result does not count (the
// provider clears old tool results before the model reads them).
func carriedBlock(msgs []dialect.Message, toolResults bool) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		txt := msgs[i].Text
		for _, r := range msgs[i].ToolResults {
			if toolResults && capsule.Contains(r.Text) {
				txt += "\n" + r.Text
			}
		}
		if blk := capsule.Last(txt); blk != "" {
			return blk
		}
	}
	return ""
}
