package session

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"hash"
	"strings"
	"sync"

	"github.com/tether-dev/tether/internal/capsule"
	"github.com/tether-dev/tether/internal/dialect"
)

// Key kinds in the lineage namespace. Every key is kind + ":" + HMAC.
const (
	kindHead   = "h" // full-history digest of a committed request → its position
	kindALeg   = "a" // A-leg head, keyed by the A-leg's epoch token
	kindHint   = "n" // client hint → session, latest A-leg
	kindSumm   = "s" // summary line digest → A-leg, epoch
	kindFinger = "u" // user text digest → A-legs
)

// mac returns a 128-bit HMAC of the parts under the secret, base64url.
func (r *Resolver) mac(domain string, parts ...string) string {
	return r.prefixedMAC("", domain, parts...)
}

// prefixedMAC is prefix followed by mac(domain, parts...), made as one
// string: a turn makes a dozen keys, and joining the prefix afterwards
// cost each a second allocation.
func (r *Resolver) prefixedMAC(prefix, domain string, parts ...string) string {
	sum := r.macFields(domain, parts...)
	var buf [48]byte
	return string(base64.RawURLEncoding.AppendEncode(append(buf[:0], prefix...), sum[:16]))
}

// macFields returns the HMAC under the secret of domain and parts, each
// written with its length, on a hash of the pool. The fields are laid
// out in the hash's own scratch buffer and written in one call: a turn
// makes a dozen of these, and writing each field through the hash.Hash
// interface cost two allocations a field.
func (r *Resolver) macFields(domain string, parts ...string) (sum [sha256.Size]byte) {
	m, _ := r.macs.Get().(*macHash)
	if m == nil {
		m = &macHash{h: hmac.New(sha256.New, r.opt.Secret)}
	}
	m.h.Reset()
	m.buf = appendField(m.buf[:0], domain)
	for _, p := range parts {
		m.buf = appendField(m.buf, p)
	}
	m.h.Write(m.buf)
	// Summed into the pooled hash's own array: a caller's would escape.
	copy(sum[:], m.h.Sum(m.sum[:0]))
	if cap(m.buf) > 4<<10 {
		m.buf = nil // a long part is not kept for every later MAC
	}
	r.macs.Put(m)
	return sum
}

// macHash is an HMAC under the secret with the scratch buffer its input
// is laid out in.
type macHash struct {
	h   hash.Hash
	buf []byte
	sum [sha256.Size]byte
}

// appendField appends s with its length, as writeField writes it.
func appendField[S string | []byte](b []byte, s S) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(len(s)))
	return append(b, s...)
}

func (r *Resolver) key(kind, principal, data string) string {
	return r.prefixedMAC(kind+":", kind, principal, data)
}

// EpochToken returns the short, unguessable token of ref's A-leg. The proxy
// embeds it as ref="…" in the capsule block it adds to summaries; Resolve
// recognises it in later histories as proof of lineage.
func (r *Resolver) EpochToken(ref Ref) string {
	if ref.ALeg == "" {
		return ""
	}
	return r.alegKey(ref.Principal, ref.ALeg)[len(kindALeg)+1:]
}

// alegKey is the lineage key of an A-leg's head: kindALeg, ":" and the
// A-leg's epoch token (a MAC). A turn asks for it several times (lookup,
// commit, the block's ref), and a process serves few A-legs at a time, so
// the keys made are remembered whole, the token being the key's tail.
func (r *Resolver) alegKey(principal, aLeg string) string {
	return r.tokens.remember(principal, aLeg, func() string { return r.prefixedMAC(kindALeg+":", "token", principal, aLeg) })
}

// hintKey is the lineage key of a client hint. An agent sends the same
// hint on every turn of a session, so the keys made are remembered as the
// A-leg tokens are.
func (r *Resolver) hintKey(principal, hint string) string {
	return r.hints.remember(principal, hint, func() string { return r.key(kindHint, principal, hint) })
}

// tokenMemo remembers A-leg keys and hint keys, by principal and A-leg
// or hint; it starts over past tokenMemoMax.
type tokenMemo struct {
	mu sync.Mutex
	m  map[[2]string]string
}

const tokenMemoMax = 1 << 14

// remember returns what the memo holds for (a, b), or makes it with f
// and keeps it. f runs outside the lock.
func (c *tokenMemo) remember(a, b string, f func() string) string {
	k := [2]string{a, b}
	c.mu.Lock()
	t, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return t
	}
	t = f()
	c.mu.Lock()
	if c.m == nil || len(c.m) >= tokenMemoMax {
		c.m = make(map[[2]string]string)
	}
	c.m[k] = t
	c.mu.Unlock()
	return t
}

func writeField(h hash.Hash, b []byte) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(b)))
	h.Write(n[:])
	h.Write(b)
}

// entry is one normalised conversation message.
type entry struct {
	raw    int      // index in View.Messages()
	role   string   // normalised role
	chain  [32]byte // rolling digest of the history up to and including this entry
	user   string   // normalised user text, "" unless a plain user message
	texted bool     // has text worth scanning (tokens, summary lines)
}

// history normalises the conversation: system and developer items and
// reasoning items are skipped; each remaining message contributes its role,
// item type, text, tool calls (name and compact arguments) and tool results
// to a rolling digest. Ids and cache controls never enter it.
//
// keys, when not nil, holds each message's dialect.ItemKey: a link of the
// chain is a pure function of the previous link and the item's bytes, so
// links this process computed before (the resent history of an agent) are
// taken from a memo instead of hashing the whole history every turn.
//
// Whole prefixes are memoised too: the entries of a history are kept by a
// digest of its item keys, and a request that extends a history this
// process digested starts from that history's entries (an agent resends
// the previous request's items and adds a few).
func history(msgs []dialect.Message, keys []dialect.ItemKey, ids []dialect.PrefixID) []entry {
	if len(keys) != len(msgs) || len(ids) != len(keys) {
		keys, ids = nil, nil
	}
	start := 0
	var out []entry
	if keys != nil {
		if k, known, own, ok := prefixes.longest(ids); ok {
			start = k + 1
			if start == len(msgs) {
				// The same history again (a retry): its entries as they are,
				// read-only like every caller's.
				return known[:len(known):len(known)]
			}
			if own && cap(known)-len(known) >= len(msgs)-start {
				out = known // past every other reader's end
			} else {
				// Room for the next few turns, which may then append in place.
				out = make([]entry, len(known), len(known)+len(msgs)-start+len(msgs)/8+8)
				copy(out, known)
			}
		}
	}
	if out == nil {
		out = make([]entry, 0, len(msgs)+len(msgs)/8+8)
	}
	var prev [32]byte
	if len(out) > 0 {
		prev = out[len(out)-1].chain
	}
	h := sha256.New()
	var buf bytes.Buffer
	link := make([]byte, 0, 1024) // one link's hashed fields
	defer func() {
		if ids != nil && len(msgs) > 0 {
			prefixes.put(ids[len(ids)-1], out)
		}
	}()
	for i := start; i < len(msgs); i++ {
		m := &msgs[i]
		if m.Role == "system" || m.Role == "developer" || m.Type == "reasoning" {
			continue
		}
		e := entry{raw: m.Index, role: m.Role, texted: strings.TrimSpace(m.Text) != ""}
		if m.Role == "user" && len(m.ToolResults) == 0 {
			e.user = normUser(m.Text)
		}
		var ck chainKey
		if keys != nil {
			ck = chainKey{prev: prev, item: keys[i]}
			if c, ok := chains.get(ck); ok {
				e.chain, prev = c, c
				out = append(out, e)
				continue
			}
		}
		// The link's fields are laid out in one buffer and hashed in one
		// write: writing each string through the hash cost a copy of it.
		link = append(link[:0], prev[:]...)
		link = appendField(link, m.Role)
		link = appendField(link, itemType(m.Type))
		link = appendField(link, normText(m.Text))
		for _, tc := range m.ToolCalls {
			link = appendField(link, "call")
			link = appendField(link, tc.Name)
			buf.Reset()
			args := bytes.TrimSpace(tc.Arguments)
			if json.Compact(&buf, tc.Arguments) == nil {
				args = buf.Bytes()
			}
			link = appendField(link, args)
		}
		for _, tr := range m.ToolResults {
			link = appendField(link, "result")
			link = appendField(link, normText(tr.Text))
		}
		if m.HasImage {
			link = appendField(link, "image")
		}
		h.Reset()
		h.Write(link)
		h.Sum(e.chain[:0])
		prev = e.chain
		if keys != nil {
			chains.put(ck, e.chain)
		}
		out = append(out, e)
	}
	return out
}

// prefixMemo keeps the entries of recent histories by the id of their
// items, a bounded number of them (oldest dropped first).
type prefixMemo struct {
	mu    sync.Mutex
	m     map[dialect.PrefixID]*prefixEntries
	order []dialect.PrefixID
}

// prefixEntries are a history's entries. They are shared with every caller
// that read them and never modified below len; the one request that
// extends them first (claimed) may append in place, past every reader's
// end, instead of copying them.
type prefixEntries struct {
	entries []entry
	claimed bool
}

const prefixMemoMax = 512 // histories

// longestLookback bounds how far back from the end a known prefix is
// looked for: a request adds a few items to the one before it.
const longestLookback = 64

var prefixes = &prefixMemo{}

// longest returns the longest prefix of ids (within the lookback) whose
// entries are known: its last index and its entries (shared: do not modify
// them below their length). own reports that the caller, the first to
// extend them, may append to them in place.
func (c *prefixMemo) longest(ids []dialect.PrefixID) (k int, known []entry, own, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(ids) - 1; i >= 0 && i >= len(ids)-longestLookback; i-- {
		if e := c.m[ids[i]]; e != nil {
			if i < len(ids)-1 && !e.claimed {
				e.claimed, own = true, true
			}
			return i, e.entries, own, true
		}
	}
	return 0, nil, false, false
}

func (c *prefixMemo) put(id dialect.PrefixID, entries []entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[dialect.PrefixID]*prefixEntries, prefixMemoMax)
	}
	if _, ok := c.m[id]; ok {
		return
	}
	if len(c.order) >= prefixMemoMax {
		delete(c.m, c.order[0])
		c.order = c.order[1:]
	}
	c.m[id] = &prefixEntries{entries: entries}
	c.order = append(c.order, id)
}

// chainKey is one link of a history digest: the link before it and the
// item's key.
type chainKey struct {
	prev [32]byte
	item dialect.ItemKey
}

// chainMemo remembers links of history digests, process-local and bounded
// (it starts over when full); only a cache of a pure function.
type chainMemo struct {
	mu sync.Mutex
	m  map[chainKey][32]byte
}

const chainMemoMax = 1 << 17 // links; about 13 MB at most

var chains = &chainMemo{}

func (c *chainMemo) get(k chainKey) ([32]byte, bool) {
	c.mu.Lock()
	v, ok := c.m[k]
	c.mu.Unlock()
	return v, ok
}

func (c *chainMemo) put(k chainKey, v [32]byte) {
	c.mu.Lock()
	if c.m == nil || len(c.m) >= chainMemoMax {
		c.m = make(map[chainKey][32]byte, 1024)
	}
	c.m[k] = v
	c.mu.Unlock()
}

// itemType folds the dialects' message item type so the same conversation
// digests alike whichever way an item is tagged.
func itemType(t string) string {
	if t == "" {
		return "message"
	}
	return t
}

func normText(s string) string {
	if strings.IndexByte(s, '\r') >= 0 {
		s = strings.ReplaceAll(s, "\r\n", "\n")
	}
	return strings.TrimSpace(s)
}

// normUser normalises a user message's text for fingerprints: trimmed, and
// unquoted when the whole text is one JSON string (OpenCode quotes it).
func normUser(s string) string {
	s = normText(s)
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		var u string
		if json.Unmarshal([]byte(s), &u) == nil {
			s = normText(u)
		}
	}
	return s
}

// Fingerprint and summary line bounds.
const (
	minFingerprint   = 16 // shorter user texts ("yes", "go on") are not distinctive
	maxFingerprint   = 1 << 16
	fingerprintsMax  = 32 // per commit
	minSummaryLine   = 20
	summaryLinesMax  = 8  // recorded per summary
	scanMessages     = 16 // messages scanned for summary lines on a non-continuation
	scanLinesPerMsg  = 24
	scanLinesMax     = 96
	maxLegsPerFinger = 4
)

// summaryLines returns the normalised, distinctive lines of text: markup
// tags at either end and capsule blocks removed, whitespace collapsed.
func summaryLines(text string, limit int) []string {
	text, _ = capsule.Strip(text)
	var out []string
	seen := map[string]bool{}
	for line := range strings.SplitSeq(text, "\n") {
		l := normLine(line)
		if len(l) < minSummaryLine || len(l) > 4096 || seen[l] {
			continue
		}
		seen[l] = true
		out = append(out, l)
		if len(out) == limit {
			break
		}
	}
	return out
}

func normLine(line string) string {
	l := strings.Join(strings.Fields(line), " ")
	for {
		t := trimTag(l)
		if t == l {
			return l
		}
		l = t
	}
}

// trimTag removes one <tag> or </tag> at the start or end of l.
func trimTag(l string) string {
	if strings.HasPrefix(l, "<") {
		if i := strings.IndexByte(l, '>'); i > 0 && isTagName(strings.TrimPrefix(l[1:i], "/")) {
			return strings.TrimSpace(l[i+1:])
		}
	}
	if strings.HasSuffix(l, ">") {
		if i := strings.LastIndexByte(l, '<'); i >= 0 && isTagName(strings.TrimPrefix(l[i+1:len(l)-1], "/")) {
			return strings.TrimSpace(l[:i])
		}
	}
	return l
}

func isTagName(s string) bool {
	if s == "" || len(s) > 40 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_' || c >= '0' && c <= '9' && i > 0) {
			return false
		}
	}
	return true
}
