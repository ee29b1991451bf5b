package compaction

import (
	"slices"
	"strings"
	"sync"

	"github.com/tidwall/gjson"

	"github.com/tether-dev/tether/internal/dialect"
)

// Result is the classification of one request. Compaction, PostCompaction
// and Title may hold together (a compaction request late in a conversation
// that was already compacted once carries a post-compaction marker too).
// Kind, Agent, RuleID, RuleVersion, Evidence and SummaryAnchor describe the
// winning rule of the strongest mark present: the compaction rule if
// Compaction, else the title rule if Title, else the post-compaction rule.
type Result struct {
	Compaction     bool
	PostCompaction bool
	Title          bool
	Kind           Kind
	Agent          string
	RuleID         string
	RuleVersion    int
	Evidence       Evidence
	// SummaryAnchor is the text before which the agent keeps the summary
	// answer (Claude Code keeps only what is inside <summary>…</summary>,
	// so its anchor is "</summary>"); "" when the whole answer is kept.
	SummaryAnchor string
	// Partial marks a compaction request that summarises only part of what
	// is being compacted (Pi's split-turn prefix): the agent joins its
	// answer to the main summary, which already carries the block.
	Partial bool
	// Older marks an in-band compaction request that carries only an older
	// part of the history (Gemini CLI keeps its newest turns out of it):
	// what it holds was offered to the extractor already, and its message
	// numbering is not the live history's.
	Older bool
	// Placement is where the request is given the capsule block.
	Placement Placement
	// PromptStart is how the agent's compaction instruction begins inside
	// the last user message (Claude Code's CRITICAL sentence); "" when the
	// instruction is a message of its own.
	PromptStart string
}

// Any reports whether any mark is set.
func (r Result) Any() bool { return r.Compaction || r.PostCompaction || r.Title }

func (r *Result) take(rule *Rule) {
	r.Kind, r.Agent, r.RuleID, r.RuleVersion = rule.Kind, rule.Agent, rule.ID, rule.Version
	r.Evidence, r.SummaryAnchor, r.Partial, r.Older = rule.Evidence, rule.SummaryAnchor, rule.Partial, rule.Older
	r.Placement, r.PromptStart = rule.Placement, ""
	for _, c := range rule.Match {
		if c.Where == "last_user_block" && c.How == "prefix" {
			r.PromptStart = c.Value
		}
	}
}

// Classify recognises compaction requests, post-compaction turns and title
// requests. For each mark the strongest evidence wins; ties go to the first
// rule in file order. It reads only what the rules need: headers, path, the
// system prompt, the last user message and a bounded tail of the history. It
// never modifies the view or its body.
func (rs *Ruleset) Classify(v *dialect.View) Result {
	var res Result
	if v == nil {
		return res
	}
	p := probe{v: v, name: v.Dialect()}
	var post, title *Rule
	for i := range rs.rules {
		r := &rs.rules[i]
		switch r.Marks {
		case MarkCompaction:
			if res.Compaction {
				continue
			}
		case MarkPostCompaction:
			if post != nil {
				continue
			}
		case MarkTitle:
			if title != nil {
				continue
			}
		}
		if len(r.Dialects) > 0 && !slices.Contains(r.Dialects, p.name) {
			continue
		}
		if !p.matchAll(r.Match) {
			continue
		}
		switch r.Marks {
		case MarkCompaction:
			res.Compaction = true
			res.take(r)
		case MarkPostCompaction:
			post = r
		case MarkTitle:
			title = r
		}
	}
	res.PostCompaction, res.Title = post != nil, title != nil
	if !res.Compaction {
		switch {
		case title != nil:
			res.take(title)
		case post != nil:
			res.take(post)
		}
	}
	return res
}

// item is one conversation item of the tail: its type and role are read
// at once, its text only when a rule asks for it.
type item struct {
	typ, role       string
	raw             []byte // the item, when its text is not read yet
	text, lastBlock string
}

// texts reads the item's text once: all its text parts, and the last one.
func (it *item) texts() (all, last string) {
	if it.raw != nil {
		it.text, it.lastBlock = textOf(gjson.GetBytes(it.raw, "content"))
		it.raw = nil
	}
	return it.text, it.lastBlock
}

// probe reads, once and lazily, the parts of one request that rules test.
type probe struct {
	v    *dialect.View
	name dialect.Name

	scanned  bool
	fallback bool   // the scanner could not read the body: use the View
	n        int    // conversation items in the index (View.Item)
	strInput string // Responses string input (one user message)
	isStr    bool
	sys      []byte // Anthropic system / Responses instructions
	hasSys   bool

	tail     []*item // tail[k] is item n-1-k
	sysDone  bool
	sysText  string
	lastDone bool
	lastUser *item
}

// scan takes what the rules read from the View's index (the one pass
// Parse made over the body): nothing here passes over the history again.
func (p *probe) scan() {
	if p.scanned {
		return
	}
	p.scanned = true
	if p.name == dialect.Gemini {
		// contents/parts/systemInstruction: read through the View.
		p.fallback = true
		return
	}
	arrKey, sysKey := "messages", "system"
	if p.name == dialect.OpenAIResponses {
		arrKey, sysKey = "input", "instructions"
	}
	p.n = p.v.NumItems()
	if raw, ok := p.v.Field(arrKey); ok && p.n == 0 && raw[0] == '"' && p.name == dialect.OpenAIResponses {
		p.isStr = true
		p.strInput = gjson.ParseBytes(raw).String()
	}
	p.sys, p.hasSys = p.v.Field(sysKey)
}

func (p *probe) count() int {
	if p.isStr {
		return 1
	}
	return p.n
}

// at decodes the item k positions from the end (0 = last).
func (p *probe) at(k int) *item {
	for len(p.tail) <= k {
		p.tail = append(p.tail, p.decode(p.count()-1-len(p.tail)))
	}
	return p.tail[k]
}

func (p *probe) decode(i int) *item {
	if p.isStr {
		return &item{typ: "message", role: "user", text: p.strInput, lastBlock: p.strInput}
	}
	raw := p.v.Item(i)
	role := gjson.GetBytes(raw, "role")
	it := &item{role: role.String()}
	if it.role == "function" {
		it.role = "tool"
	}
	if p.name == dialect.OpenAIResponses {
		it.typ = gjson.GetBytes(raw, "type").String()
		if it.typ == "" && role.Exists() {
			it.typ = "message"
		}
		if it.typ != "message" {
			it.role = ""
			return it
		}
	} else {
		it.typ = "message"
	}
	it.raw = raw
	return it
}

func nonEmpty(all, _ string) bool { return all != "" }

// textOf joins the text parts of a content value with "\n" and returns the
// last one separately.
func textOf(c gjson.Result) (all, last string) {
	if c.Type == gjson.String {
		s := c.String()
		return s, s
	}
	if !c.IsArray() {
		return "", ""
	}
	var b strings.Builder
	first := true
	c.ForEach(func(_, part gjson.Result) bool {
		var s string
		switch {
		case part.Type == gjson.String:
			s = part.String()
		default:
			switch part.Get("type").String() {
			case "text", "input_text", "output_text":
				s = part.Get("text").String()
			default:
				return true
			}
		}
		if !first {
			b.WriteByte('\n')
		}
		b.WriteString(s)
		first = false
		last = s
		return true
	})
	return b.String(), last
}

func (p *probe) system() string {
	if p.sysDone {
		return p.sysText
	}
	p.sysDone = true
	p.scan()
	if p.fallback {
		p.sysText = p.v.System()
		return p.sysText
	}
	var parts []string
	if p.hasSys {
		sv := gjson.ParseBytes(p.sys)
		var s string
		if p.name == dialect.AnthropicMessages {
			s, _ = textOf(sv)
		} else {
			s = sv.String()
		}
		if s != "" {
			parts = append(parts, s)
		}
	}
	if p.name != dialect.AnthropicMessages && !p.isStr {
		for i := range p.n {
			it := p.decodeHead(i)
			if it.role != "system" && it.role != "developer" {
				break
			}
			if t, _ := it.texts(); t != "" {
				parts = append(parts, t)
			}
		}
	}
	p.sysText = strings.Join(parts, "\n\n")
	return p.sysText
}

// decodeHead decodes item i from the start, sharing the tail cache when the
// item is also part of the tail.
func (p *probe) decodeHead(i int) *item {
	if k := p.count() - 1 - i; k < len(p.tail) {
		return p.tail[k]
	}
	return p.decode(i)
}

// lastUserItem is the last user message with non-empty text (tool-result
// only messages are skipped), the same message View.LastUserText reads.
func (p *probe) lastUserItem() *item {
	if p.lastDone {
		return p.lastUser
	}
	p.lastDone = true
	p.scan()
	if p.fallback {
		t := p.v.LastUserText()
		p.lastUser = &item{typ: "message", role: "user", text: t, lastBlock: t}
		return p.lastUser
	}
	p.lastUser = &item{}
	// An agent's tool loop puts many items after the user last spoke, and
	// the same items come back every turn: whether an item is a user message
	// with text is remembered by its key, and where the last one is by the
	// id of the history before it, so only new items are decoded.
	keys := p.keys()
	var ids []dialect.PrefixID
	if keys != nil {
		if ids = p.v.PrefixIDs(); len(ids) != len(keys) {
			ids = nil
		}
	}
	found := -1
	defer func() {
		if ids != nil && p.count() > 0 {
			lastUsers.put(ids[p.count()-1], found)
		}
	}()
	for k := 0; k < p.count(); k++ {
		i := p.count() - 1 - k
		if ids != nil && k > 0 {
			if j, ok := lastUsers.get(ids[i]); ok {
				if found = j; j >= 0 {
					p.lastUser = p.decodeHead(j)
				}
				break
			}
		}
		if keys != nil {
			if spoke, ok := userItems.get(keys[i]); ok && !spoke {
				continue
			}
		}
		it := p.decodeHead(i)
		spoke := it.role == "user" && nonEmpty(it.texts())
		if keys != nil {
			userItems.put(keys[i], spoke)
		}
		if spoke {
			p.lastUser, found = it, i
			break
		}
	}
	return p.lastUser
}

// lastUsers remembers, by the id of a history's items, the index of its
// last user message with text (-1: none).
var lastUsers = memo[dialect.PrefixID, int]{max: 1 << 16}

// memo remembers what the classifier found about conversation items: a
// cache of a pure function of the items' bytes (their key or prefix id)
// and, for condKey and windowKey, of the rule's condition. Bounded: it
// starts over when it holds max entries. A key that holds a condition's
// pointer keeps the condition alive, so no other condition can take its
// address while its entries are here.
type memo[K comparable, V any] struct {
	mu  sync.Mutex
	m   map[K]V
	max int
}

type condKey struct {
	c *Condition
	k dialect.ItemKey
}

var (
	userItems = memo[dialect.ItemKey, bool]{max: 1 << 17} // a user message with text (lastUserItem)
	condItems = memo[condKey, bool]{max: 1 << 17}         // a tail condition holds for the item (anyTail, anyBlock)
)

func (c *memo[K, V]) get(k K) (v V, ok bool) {
	c.mu.Lock()
	v, ok = c.m[k]
	c.mu.Unlock()
	return v, ok
}

func (c *memo[K, V]) put(k K, v V) {
	c.mu.Lock()
	if c.m == nil || len(c.m) >= c.max {
		c.m = make(map[K]V)
	}
	c.m[k] = v
	c.mu.Unlock()
}

// forget empties the memo.
func (c *memo[K, V]) forget() {
	c.mu.Lock()
	c.m = nil
	c.mu.Unlock()
}

// keys returns the items' keys (parallel to the View's items), or nil when the
// request's conversation is not read from the index.
func (p *probe) keys() []dialect.ItemKey {
	if p.isStr || p.fallback {
		return nil
	}
	if ks := p.v.ItemKeys(); len(ks) == p.n {
		return ks
	}
	return nil
}

// anyHolds reports whether condition c's test fn holds for any of items
// hi down to lo (newest first). An agent's next request slides the window
// by the items it adds: when the window ending a few items earlier, in
// this same history, was answered before (windows), only the new items
// are tested, and the earlier answer (the newest item it held for) covers
// the rest.
func (p *probe) anyHolds(c *Condition, lo, hi int, fn func(i int) bool) bool {
	keys := p.keys()
	if keys == nil {
		for i := hi; i >= lo; i-- {
			if fn(i) {
				return true
			}
		}
		return false
	}
	ids := p.v.PrefixIDs()
	if len(ids) != len(keys) || hi < lo {
		return p.newest(c, keys, lo, hi, fn) >= 0
	}
	if h, ok := windows.get(windowKey{c, ids[hi], lo}); ok {
		return h >= 0 // the same window again
	}
	got := -2
	for d := 1; d <= windowSlide && hi-d >= 0; d++ {
		// The window of the request d items shorter: lo-d…hi-d, or from
		// the first item.
		h, ok := windows.get(windowKey{c, ids[hi-d], max(lo-d, 0)})
		if !ok {
			continue
		}
		// It covers lo…hi-d: the newest of those it holds for is h, if
		// h ≥ lo. Only hi-d+1…hi are new.
		if got = p.newest(c, keys, max(hi-d+1, lo), hi, fn); got < 0 && h >= lo {
			got = h
		}
		break
	}
	if got == -2 {
		got = p.newest(c, keys, lo, hi, fn)
	}
	windows.put(windowKey{c, ids[hi], lo}, got)
	return got >= 0
}

// newest returns the newest of items lo…hi that c's test fn holds for, or
// -1. Item verdicts the memo has are read under one lock; only items it
// has none for are tested, and their verdicts kept.
func (p *probe) newest(c *Condition, keys []dialect.ItemKey, lo, hi int, fn func(i int) bool) int {
	var buf [64]int8
	known := buf[:0]
	condItems.mu.Lock()
	for i := hi; i >= lo; i-- {
		v, ok := condItems.m[condKey{c, keys[i]}]
		if !ok {
			known = append(known, -1)
			continue
		}
		if v {
			known = append(known, 1)
			break // newer items are false or untested
		}
		known = append(known, 0)
	}
	condItems.mu.Unlock()
	for j, v := range known {
		i := hi - j
		switch v {
		case 1:
			return i
		case -1:
			got := fn(i)
			condItems.put(condKey{c, keys[i]}, got)
			if got {
				return i
			}
		}
	}
	return -1
}

// windowKey is condition c over the items lo…hi of a history whose items
// 0…hi have the prefix id id.
type windowKey struct {
	c  *Condition
	id dialect.PrefixID
	lo int
}

// windows remembers, per condition and window, the newest item of the
// window the condition holds for (-1: none): a pure function of the
// window's items and the condition. Bounded: it starts over when full.
var windows = memo[windowKey, int]{max: 1 << 16}

// windowSlide is how many items a request may add to the one before it for
// that request's windows to be slid instead of read item by item.
const windowSlide = 16

func (p *probe) lastItemType() string {
	if p.name != dialect.OpenAIResponses {
		return ""
	}
	p.scan()
	if p.fallback {
		return p.v.LastItemType()
	}
	if p.count() == 0 {
		return ""
	}
	return p.at(0).typ
}

// tailItems calls fn on up to within trailing items, newest first, until fn
// returns true.
func (p *probe) anyTail(c *Condition, within int, fn func(*item) bool) bool {
	p.scan()
	if within <= 0 {
		within = DefaultWithin
	}
	if p.fallback {
		msgs := p.v.Messages()
		for i := len(msgs) - 1; i >= 0 && i >= len(msgs)-within; i-- {
			m := msgs[i]
			if fn(&item{typ: m.Type, role: m.Role, text: m.Text, lastBlock: m.Text}) {
				return true
			}
		}
		return false
	}
	n := p.count()
	return p.anyHolds(c, max(n-within, 0), n-1, func(i int) bool { return fn(p.decodeHead(i)) })
}

func (p *probe) matchAll(cs []Condition) bool {
	for i := range cs {
		if !p.match(&cs[i]) {
			return false
		}
	}
	return true
}

func (p *probe) match(c *Condition) bool {
	switch {
	case strings.HasPrefix(c.Where, "header:"):
		h := p.v.Header()
		if h == nil {
			return c.How == "absent"
		}
		vals := h.Values(strings.TrimPrefix(c.Where, "header:"))
		if len(vals) == 0 {
			return c.How == "absent"
		}
		s := vals[0]
		if c.JSONPath != "" {
			r := gjson.Get(s, c.JSONPath)
			if !r.Exists() {
				return c.How == "absent"
			}
			s = r.String()
		}
		return c.How != "absent" && test(c, s)
	case c.Where == "path":
		return test(c, p.v.Path())
	case c.Where == "system":
		return test(c, p.system())
	case c.Where == "last_user_text":
		t, _ := p.lastUserItem().texts()
		return test(c, t)
	case c.Where == "last_user_block":
		_, last := p.lastUserItem().texts()
		return test(c, last)
	case c.Where == "last_item_type":
		return test(c, p.lastItemType())
	case c.Where == "block_type":
		found := p.anyBlock(c, c.Within, func(typ string) bool { return c.How == "absent" || test(c, typ) })
		if c.How == "absent" {
			return !found
		}
		return found
	case c.Where == "item_type":
		found := p.anyTail(c, c.Within, func(it *item) bool { return it.typ != "" && (c.How == "absent" || test(c, it.typ)) })
		if c.How == "absent" {
			return !found
		}
		return found
	case strings.HasPrefix(c.Where, "message_text:"):
		role := strings.TrimPrefix(c.Where, "message_text:")
		found := p.anyTail(c, c.Within, func(it *item) bool {
			if it.role != role {
				return false
			}
			t, _ := it.texts()
			return t != "" && (c.How == "absent" || test(c, t))
		})
		if c.How == "absent" {
			return !found
		}
		return found
	}
	return p.matchBody(c)
}

// Test applies the condition's comparison (equals, prefix, contains,
// contains_all, absent) to s, ignoring where it looks.
func (c *Condition) Test(s string) bool { return test(c, s) }

// test applies a condition's comparison to s; absent means empty.
func test(c *Condition, s string) bool {
	switch c.How {
	case "equals":
		return s == c.Value
	case "prefix":
		return strings.HasPrefix(s, c.Value)
	case "contains":
		return strings.Contains(s, c.Value)
	case "contains_all":
		for _, v := range c.Values {
			if !strings.Contains(s, v) {
				return false
			}
		}
		return true
	case "absent":
		return s == ""
	case "present":
		return s != ""
	}
	return false
}

// anyBlock calls fn on the "type" of each content block (Anthropic content
// blocks, Chat and Responses content parts) of up to within trailing items,
// newest first, until fn returns true.
func (p *probe) anyBlock(c *Condition, within int, fn func(string) bool) bool {
	if within <= 0 {
		within = DefaultWithin
	}
	p.scan()
	n, raw := p.n, p.v.Item
	if p.fallback {
		var items [][]byte
		for _, it := range p.v.Get("messages").Array() {
			items = append(items, []byte(it.Raw))
		}
		n, raw = len(items), func(i int) []byte { return items[i] }
	}
	return p.anyHolds(c, max(n-within, 0), n-1, func(i int) bool {
		found := false
		gjson.GetBytes(raw(i), "content").ForEach(func(_, b gjson.Result) bool {
			if t := b.Get("type").String(); t != "" && fn(t) {
				found = true
			}
			return !found
		})
		return found
	})
}
