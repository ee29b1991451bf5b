package compaction

import (
	"encoding/binary"
	"hash/maphash"
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
	p := probe{v: v, name: v.Dialect(), rs: rs}
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
	rs   *Ruleset

	scanned  bool
	fallback bool   // the scanner could not read the body: use the View
	n        int    // conversation items in the index (View.Item)
	strInput string // Responses string input (one user message)
	isStr    bool
	sys      []byte // Anthropic system / Responses instructions
	hasSys   bool

	tail    []*item // tail[k] is item n-1-k
	sysDone bool
	sysText string

	sysKeyDone bool
	sysKey     systemID
	sysFound   *verdicts    // what the system conditions found in this prompt
	itemFound  [2]*verdicts // in the first item and in lastUser (itemFirst, itemLastUser)
	lastDone   bool
	lastUser   *item
	lastIdx    int // the item lastUser is, -1 when not read from the index
	winDone    bool
	win        *tailWindow
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

// systemHolds tests c on the system prompt. An agent resends the same
// system prompt every turn (Claude Code's is about 27 KB of text blocks,
// whose decoding and ten searches were most of a turn's classification),
// so what each condition found is remembered by a hash of the prompt's
// bytes: the prompt is decoded only when a condition meets it for the
// first time.
func (p *probe) systemHolds(c *Condition) bool {
	k, ok := p.systemKey()
	if !ok {
		return test(c, p.system())
	}
	if p.sysFound == nil {
		p.sysFound = systemTests.remember(k, newVerdicts)
	}
	return p.sysFound.remember(c, func() bool { return test(c, p.system()) })
}

// systemKey identifies the bytes system() reads: the system field and,
// outside Anthropic Messages, the leading system and developer items.
// Its hashes are seeded per process, so no caller can aim two prompts at
// one key.
func (p *probe) systemKey() (systemID, bool) {
	if p.sysKeyDone {
		return p.sysKey, !p.fallback
	}
	p.sysKeyDone = true
	p.scan()
	if p.fallback {
		return systemID{}, false
	}
	if p.name == dialect.AnthropicMessages && p.hasSys {
		// Claude Code sends its system prompt after the history, among
		// what it resends unchanged every turn: ParseFrom's TailID names
		// those bytes already, and the prompt's place among them.
		if id, ok := p.v.TailID(); ok {
			cut := len(p.v.Body()) - id.N
			if start, end, ok := p.v.FieldSpan("system"); ok && start >= cut {
				p.sysKey = systemID{tail: id, off: start - cut, n: end - start}
				return p.sysKey, true
			}
		}
	}
	var h1, h2 maphash.Hash
	h1.SetSeed(systemSeeds[0])
	h2.SetSeed(systemSeeds[1])
	n := 0
	write := func(b []byte) {
		var l [8]byte
		binary.LittleEndian.PutUint64(l[:], uint64(len(b)))
		for _, h := range []*maphash.Hash{&h1, &h2} {
			h.Write(l[:])
			h.Write(b)
		}
		n += len(b)
	}
	write([]byte(p.name))
	if p.hasSys {
		write(p.sys)
	} else {
		write(nil)
	}
	if p.name != dialect.AnthropicMessages && !p.isStr {
		for i := range p.n {
			if it := p.decodeHead(i); it.role != "system" && it.role != "developer" {
				break
			}
			write(p.v.Item(i))
		}
	}
	p.sysKey = systemID{n: n, h1: h1.Sum64(), h2: h2.Sum64()}
	return p.sysKey, true
}

// systemID identifies a system prompt's bytes (systemKey): by their place
// in what follows a request's conversation (tail, off, n), or by their
// length and two seeded hashes (tail zero).
type systemID struct {
	tail   dialect.TailID
	off, n int
	h1, h2 uint64
}

var (
	systemSeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}
	// systemTests remembers what the system conditions found in a prompt.
	systemTests = memo[systemID, *verdicts]{max: 1 << 12}
)

// verdicts is what conditions found in one text (a system prompt, an
// item), each by its pointer. A request looks its text's verdicts up once
// and then asks them for each condition, rather than looking each
// condition up in a process-wide memo by the text's key. It holds a bool
// for each condition of the rule sets in use, at most maxVerdicts.
type verdicts = memo[*Condition, bool]

const maxVerdicts = 1 << 10

func newVerdicts() *verdicts { return &verdicts{max: maxVerdicts} }

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
	p.lastIdx = -1
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
		if !p.isStr {
			p.lastIdx = found
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

// lastUserHolds tests c on the last user message's text (last_user_text)
// or its last text block (last_user_block). In an agent's tool loop that
// message stays the same for many turns (in a Claude Code session's first
// turns, its first message, kilobytes of system reminders), so what each
// condition found is remembered by the message's key.
func (p *probe) lastUserHolds(c *Condition) bool {
	it := p.lastUserItem()
	text := func() string {
		all, last := it.texts()
		if c.Where == "last_user_block" {
			return last
		}
		return all
	}
	keys := p.keys()
	if p.lastIdx < 0 || p.lastIdx >= len(keys) {
		return test(c, text())
	}
	return p.itemVerdicts(itemLastUser, keys[p.lastIdx]).remember(c, func() bool { return test(c, text()) })
}

// The items whose conditions' verdicts a request looks up (itemVerdicts).
const (
	itemFirst    = 0 // the conversation's first item
	itemLastUser = 1 // the last user message with text (lastUserItem)
)

// itemVerdicts is what conditions found in the item k, looked up once a
// request for each of the items the conditions read (itemFirst,
// itemLastUser).
func (p *probe) itemVerdicts(which int, k dialect.ItemKey) *verdicts {
	if p.itemFound[which] == nil {
		p.itemFound[which] = itemTests.remember(k, newVerdicts)
	}
	return p.itemFound[which]
}

// itemTests remembers what a condition that reads one item (the last user
// message, the first item's content types) found in it, by its key.
var itemTests = memo[dialect.ItemKey, *verdicts]{max: 1 << 14}

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

// userItems remembers whether an item is a user message with text
// (lastUserItem).
var userItems = memo[dialect.ItemKey, bool]{max: 1 << 17}

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

// remember returns what the memo holds for k, or computes it with f and
// keeps it.
func (c *memo[K, V]) remember(k K, f func() V) V {
	if v, ok := c.get(k); ok {
		return v
	}
	v := f()
	c.put(k, v)
	return v
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

// The tail conditions (block_type, item_type, message_text:<role>) each
// test the last few items of the history, and an agent's next request is
// its last one plus a few items. What they found is remembered for all of
// a rule set's tail conditions at once, so that a request costs a few
// lookups however many rules test its tail:
//
//   - itemVerdicts holds, per item (its key) and rule set, a bit per tail
//     condition: whether the condition's test holds for that item;
//   - windows holds, per history (the prefix id of its newest item) and
//     rule set, the newest item of each condition's window the condition
//     holds for.
//
// A request whose history is a few items longer than one classified
// before slides that one's windows: only its new items are looked at.
// Both are caches of pure functions of the items' bytes and the rule set,
// bounded (they start over when full); a key holds the rule set's pointer,
// which keeps it alive, so no other rule set can take its address while
// its entries are here.
type itemVerdictKey struct {
	rs *Ruleset
	k  dialect.ItemKey
}

type windowKey struct {
	rs *Ruleset
	id dialect.PrefixID // of items 0…hi, hi the newest
}

// tailWindow is, per tail slot, the newest item of the slot's window
// (its last `within` items) its condition holds for, -1 for none, or
// notRead for a condition whose rule does not apply to the dialect (a
// window is one history's, and a history one dialect's: its prefix ids
// begin with the dialect's name).
type tailWindow struct{ newest []int32 }

const notRead = -2

var (
	itemVerdicts = memo[itemVerdictKey, uint64]{max: 1 << 17}
	windows      = memo[windowKey, *tailWindow]{max: 1 << 16}
)

// windowSlide is how many items a request may add to the one before it for
// that request's windows to be slid instead of read item by item.
const windowSlide = 16

// maxTailSlots bounds the tail conditions whose verdicts share one word;
// a rule set with more tests its tails item by item, without the memos.
const maxTailSlots = 64

// tailHolds reports whether tail condition c's test holds for any of the
// last c.Within items (the condition is "found"; absent negates it in
// match).
func (p *probe) tailHolds(c *Condition) bool {
	p.scan()
	if slot := c.tail - 1; slot >= 0 && slot < len(p.rs.tail) && p.rs.tail[slot] == c {
		if w := p.window(); w != nil && w.newest[slot] != notRead {
			return w.newest[slot] >= 0
		}
	}
	if p.fallback {
		return p.fallbackHolds(c)
	}
	n := p.count()
	if c.Where == "block_type" {
		n = p.n // a Responses string input has no content blocks
	}
	for i := n - 1; i >= max(n-c.within(), 0); i-- {
		if p.itemHolds(c, i) {
			return true
		}
	}
	return false
}

// window is the request's tail window for every tail condition of the
// rule set that applies to its dialect, or nil when the memos cannot be
// used (no item keys: the fallback reader, a Responses string input).
func (p *probe) window() *tailWindow {
	if p.winDone {
		return p.win
	}
	p.winDone = true
	rs := p.rs
	keys := p.keys()
	if len(rs.tail) == 0 || keys == nil {
		return nil
	}
	n := p.n
	if n == 0 {
		p.win = &tailWindow{newest: slices.Repeat([]int32{-1}, len(rs.tail))}
		return p.win
	}
	ids := p.v.PrefixIDs()
	if len(ids) != len(keys) {
		return nil
	}
	hi := n - 1
	if w, ok := windows.get(windowKey{rs, ids[hi]}); ok {
		p.win = w
		return w // the same history again
	}
	// The window of a request d items shorter, in this same history,
	// covers all but the new items hi-d+1…hi.
	var prior *tailWindow
	from := 0
	for d := 1; d <= windowSlide && hi-d >= 0; d++ {
		if w, ok := windows.get(windowKey{rs, ids[hi-d]}); ok {
			prior, from = w, hi-d+1
			break
		}
	}
	mask := rs.tailMask(p.name)
	w := &tailWindow{newest: make([]int32, len(rs.tail))}
	lows := make([]int, len(rs.tail))
	pending, low := uint64(0), n
	for slot, c := range rs.tail {
		if mask&(1<<slot) == 0 {
			w.newest[slot] = notRead
			continue
		}
		w.newest[slot] = -1
		lows[slot] = max(n-c.within(), 0)
		pending |= 1 << slot
		low = min(low, lows[slot])
	}
	for i := hi; i >= max(low, from) && pending != 0; i-- {
		v := p.verdicts(i, keys[i], mask)
		for slot := range rs.tail {
			bit := uint64(1) << slot
			if pending&bit == 0 {
				continue
			}
			if i < lows[slot] {
				pending &^= bit
			} else if v&bit != 0 {
				w.newest[slot] = int32(i)
				pending &^= bit
			}
		}
	}
	if prior != nil {
		// It found the newest of lo'…hi-d (lo' ≤ lo): if that is in this
		// window, it is this window's newest among the shared items.
		for slot := range rs.tail {
			if pending&(1<<slot) != 0 && int(prior.newest[slot]) >= lows[slot] {
				w.newest[slot] = prior.newest[slot]
			}
		}
	}
	windows.put(windowKey{rs, ids[hi]}, w)
	p.win = w
	return w
}

// verdicts returns item i's bits of the tail conditions in mask: from the
// memo, or tested now (the item decoded once for all of them) and kept.
func (p *probe) verdicts(i int, k dialect.ItemKey, mask uint64) uint64 {
	key := itemVerdictKey{p.rs, k}
	if v, ok := itemVerdicts.get(key); ok {
		return v
	}
	var v uint64
	in := tailItem{p: p, i: i}
	for slot, c := range p.rs.tail {
		if mask&(1<<slot) != 0 && in.holds(c) {
			v |= 1 << slot
		}
	}
	itemVerdicts.put(key, v)
	return v
}

// itemHolds is tail condition c's test on item i: whether the item counts
// as found (for absent: whether it has what c says must be absent).
func (p *probe) itemHolds(c *Condition, i int) bool {
	in := tailItem{p: p, i: i}
	return in.holds(c)
}

// tailItem is one item under test by tail conditions: decoded, and its
// content blocks' types read, once for all of them.
type tailItem struct {
	p     *probe
	i     int
	it    *item
	types []string
	typed bool
}

func (t *tailItem) holds(c *Condition) bool {
	switch {
	case c.Where == "block_type":
		if !t.typed {
			t.typed = true
			gjson.GetBytes(t.p.v.Item(t.i), "content").ForEach(func(_, b gjson.Result) bool {
				if typ := b.Get("type").String(); typ != "" {
					t.types = append(t.types, typ)
				}
				return true
			})
		}
		for _, typ := range t.types {
			if c.How == "absent" || test(c, typ) {
				return true
			}
		}
		return false
	case c.Where == "item_type":
		it := t.item()
		return it.typ != "" && (c.How == "absent" || test(c, it.typ))
	default: // message_text:<role>
		it := t.item()
		if it.role != strings.TrimPrefix(c.Where, "message_text:") {
			return false
		}
		all, _ := it.texts()
		return all != "" && (c.How == "absent" || test(c, all))
	}
}

func (t *tailItem) item() *item {
	if t.it == nil {
		t.it = t.p.decodeHead(t.i)
	}
	return t.it
}

// fallbackHolds is tailHolds over what the View decodes, for bodies the
// index does not read (Gemini).
func (p *probe) fallbackHolds(c *Condition) bool {
	within := c.within()
	if c.Where == "block_type" {
		items := p.v.Get("messages").Array()
		for i := len(items) - 1; i >= max(len(items)-within, 0); i-- {
			found := false
			items[i].Get("content").ForEach(func(_, b gjson.Result) bool {
				if t := b.Get("type").String(); t != "" && (c.How == "absent" || test(c, t)) {
					found = true
				}
				return !found
			})
			if found {
				return true
			}
		}
		return false
	}
	msgs := p.v.Messages()
	role := strings.TrimPrefix(c.Where, "message_text:")
	for i := len(msgs) - 1; i >= 0 && i >= len(msgs)-within; i-- {
		m := msgs[i]
		switch {
		case c.Where == "item_type":
			if m.Type != "" && (c.How == "absent" || test(c, m.Type)) {
				return true
			}
		case m.Role == role && m.Text != "" && (c.How == "absent" || test(c, m.Text)):
			return true
		}
	}
	return false
}

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
		return p.systemHolds(c)
	case c.Where == "last_user_text", c.Where == "last_user_block":
		return p.lastUserHolds(c)
	case c.Where == "last_item_type":
		return test(c, p.lastItemType())
	case c.isTail():
		found := p.tailHolds(c)
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
