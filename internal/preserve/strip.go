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
	n, from := newest(ids)
	for i := from; i < len(ids); i++ {
		n += capsule.CountOpen(v.Item(i))
	}
	openCounts.put(ids[len(ids)-1], n)
	return n + capsule.CountOpen(body[:start]) + tailOpen(v, body, end)
}

// tailOpen counts the opening tags of body after its last item (end),
// where an agent resends its system prompt and tools unchanged every turn
// (Claude Code's are 106 KiB): what follows the conversation is counted
// once per TailID, for all of a caller's turns.
func tailOpen(v *dialect.View, body []byte, end int) int {
	id, ok := v.TailID()
	if !ok || id.N > len(body)-end {
		return capsule.CountOpen(body[end:])
	}
	cut := len(body) - id.N // the conversation's end: only "]" and space before it
	n, ok := tailCounts.get(id)
	if !ok {
		n = capsule.CountOpen(body[cut:])
		tailCounts.put(id, n)
	}
	return capsule.CountOpen(body[end:cut]) + n
}

// tailCounts remembers tailOpen's counts.
var tailCounts = &countMemo[dialect.TailID]{max: 1 << 12}

func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// openCounts remembers the opening tags counted in a conversation's items
// 0…i by the PrefixID of i.
var openCounts = &countMemo[dialect.PrefixID]{max: 1 << 16}

// countsBack is how many of the newest prefixes a request looks up before
// it counts all its items.
const countsBack = 8

// countMemo is a bounded memo of counts: it starts over when it holds max.
type countMemo[K comparable] struct {
	mu  sync.Mutex
	m   map[K]int
	max int
}

func (c *countMemo[K]) get(k K) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, ok := c.m[k]
	return n, ok
}

func (c *countMemo[K]) put(k K, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= c.max {
		c.m = make(map[K]int)
	}
	c.m[k] = n
}

// newest returns the count of the newest prefix of ids openCounts knows,
// within the last countsBack, and the index of the first item after it (0
// and 0 if none).
func newest(ids []dialect.PrefixID) (n, from int) {
	for i := len(ids) - 1; i >= 0 && i >= len(ids)-countsBack; i-- {
		if n, ok := openCounts.get(ids[i]); ok {
			return n, i + 1
		}
	}
	return 0, 0
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
