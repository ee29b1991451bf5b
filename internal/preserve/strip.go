package preserve

import (
	"sync"

	"github.com/tether-dev/tether/internal/capsule"
	"github.com/tether-dev/tether/internal/dialect"
)

// countOpen is capsule.CountOpen(body) read only where body is new: when
// body is the bytes v indexed, the opening tags of its items are counted
// from the newest prefix of them counted before (openCounts, by PrefixID:
// a count of items' bytes alone), so an agent's next request scans its new
// items and what lies outside the conversation, not the whole history.
// A tag never spans two items (they are JSON values), so the sum is the
// count over the whole body.
func countOpen(v *dialect.View, body []byte) int {
	if v == nil || !sameBytes(v.Body(), body) {
		return capsule.CountOpen(body)
	}
	start, end, ok := v.ItemsSpan()
	ids := v.PrefixIDs()
	if !ok || len(ids) != v.NumItems() {
		return capsule.CountOpen(body)
	}
	n, from := openCounts.newest(ids)
	for i := from; i < len(ids); i++ {
		n += capsule.CountOpen(v.Item(i))
	}
	openCounts.put(ids[len(ids)-1], n)
	return n + capsule.CountOpen(body[:start]) + capsule.CountOpen(body[end:])
}

func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// prefixCounts remembers the opening tags counted in a conversation's
// items 0…i by the PrefixID of i. Bounded: it starts over when full.
type prefixCounts struct {
	mu sync.Mutex
	m  map[dialect.PrefixID]int
}

var openCounts = &prefixCounts{}

// countsMax bounds openCounts; countsBack is how many of the newest
// prefixes a request looks up before it counts all its items.
const (
	countsMax  = 1 << 16
	countsBack = 8
)

// newest returns the count of the newest prefix of ids it knows, within
// the last countsBack, and the index of the first item after it (0 and 0
// if none).
func (c *prefixCounts) newest(ids []dialect.PrefixID) (n, from int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(ids) - 1; i >= 0 && i >= len(ids)-countsBack; i-- {
		if n, ok := c.m[ids[i]]; ok {
			return n, i + 1
		}
	}
	return 0, 0
}

func (c *prefixCounts) put(id dialect.PrefixID, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= countsMax {
		c.m = make(map[dialect.PrefixID]int)
	}
	c.m[id] = n
}

// stripCarried removes the capsule blocks the request carries in its
// history — all of them, or all but the newest (keepLast) — so the model
// never reads two versions of the state side by side. Failures leave the
// body as it is.
func (t *turn) stripCarried(keepLast bool) {
	// Counting the opening tags is the whole cost on most turns.
	drop := countOpen(t.x.View, t.x.Body)
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
