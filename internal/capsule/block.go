package capsule

import (
	"bytes"
	"encoding/hex"
	"strconv"
	"strings"
)

// The capsule block is the delimited text Render produces and the proxy
// places in requests and answers:
//
//	<continuity-capsule ref="…" revision="7" digest="ab12cd34ef56">
//	…
//	</continuity-capsule>
//
// This file is the one place that knows its tags and attributes: finding a
// block, reading its attributes and epoch token, and removing blocks, whole
// or streamed. Tag matching is ASCII case-insensitive everywhere.

// Block delimiters.
const (
	openTag  = "<continuity-capsule"
	closeTag = "</continuity-capsule>"
)

// Marker is the tag name every opening and closing tag contains. It has no
// character JSON escapes, so it can be counted in a raw request body.
const Marker = "continuity-capsule"

// maxRef bounds an epoch token; longer values are not tokens.
const maxRef = 64

// RenderRef is Render with the epoch token ref on the opening tag, so the
// lineage layer recognises the text the block comes back in (see Ref). An
// empty or malformed ref is left out.
func RenderRef(c *Capsule, ref string) string {
	if c == nil {
		c = &Capsule{}
	}
	c = canonical(c)
	if !validRef(ref) {
		ref = ""
	}
	return renderRef(c, digestOf(c), ref)
}

// Ref returns the epoch token of the newest block in text that carries a
// valid one, or "".
func Ref(text string) string {
	tok := ""
	for i := 0; ; {
		o := indexOpen(text, i, true)
		if o < 0 {
			return tok
		}
		i = o + len(openTag)
		attrs := text[i:]
		if end := strings.IndexByte(attrs, '>'); end >= 0 {
			attrs = attrs[:end]
		}
		if v, ok := attr(attrs, "ref"); ok && validRef(v) {
			tok = v
		}
	}
}

func validRef(s string) bool {
	if s == "" || len(s) > maxRef {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// openMark is how an opening tag appears in a raw body: the tag name and the
// space before its attributes (a closing tag has no space). It has no
// character JSON escapes.
const openMark = Marker + " "

// CountOpen counts the opening tags in a raw request body (ASCII
// case-insensitive, like every tag match here): the cheap pre-check a
// caller runs before it decodes and rewrites the strings that hold blocks.
func CountOpen(body []byte) int { return countFold(body, openMark, bytes.IndexByte, 0) }

// CountOpenText is CountOpen over decoded text.
func CountOpenText(text string) int { return countFold(text, openMark, strings.IndexByte, 0) }

// Mentions reports whether raw, such as a JSON string literal as it appears
// in a body, holds the tag name in any case: an opening or a closing tag.
func Mentions(raw []byte) bool { return countFold(raw, Marker, bytes.IndexByte, 1) > 0 }

// MayMention reports whether raw, a JSON value as it appears in a body,
// may hold the tag name once decoded: it holds it as it is (Mentions), or
// it holds an escape, which could spell any character of it. A value for
// which it is false holds no tag, raw or decoded, and adds nothing to
// CountOpen, CountOpenText or Mentions over the body it is part of.
func MayMention(raw []byte) bool { return bytes.IndexByte(raw, '\\') >= 0 || Mentions(raw) }

// countFold counts the occurrences of mark (lower case, with a '-') in s
// under ASCII case folding, stopping at stop when it is positive. It looks
// for the caseless '-' and compares around it.
func countFold[T string | []byte](s T, mark string, indexByte func(T, byte) int, stop int) int {
	dash := strings.IndexByte(mark, '-')
	n := 0
	for i := dash; i < len(s); {
		k := indexByte(s[i:], '-')
		if k < 0 {
			break
		}
		k += i
		if start := k - dash; start+len(mark) <= len(s) && lowerEqual(s[start:start+len(mark)], mark) {
			if n++; n == stop {
				break
			}
		}
		i = k + 1
	}
	return n
}

// lowerEqual reports whether a, with ASCII upper case folded to lower, is
// lower (which has len(a) bytes).
func lowerEqual[T string | []byte](a T, lower string) bool {
	for i := range len(lower) {
		x := a[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if x != lower[i] {
			return false
		}
	}
	return true
}

// Contains reports whether text has an opening tag.
func Contains(text string) bool { return indexOpen(text, 0, true) >= 0 }

// IndexLast returns the position of the newest opening tag in text, or -1.
func IndexLast(text string) int {
	last := -1
	for i := 0; ; {
		o := indexOpen(text, i, true)
		if o < 0 {
			return last
		}
		last = o
		i = o + len(openTag)
	}
}

// Last returns the newest block in text, from its opening tag through its
// closing tag (to the end of text when it is unterminated), or "".
func Last(text string) string {
	i := IndexLast(text)
	if i < 0 {
		return ""
	}
	blk := text[i:]
	if k := indexFold(blk, closeTag, 0); k >= 0 {
		blk = blk[:k+len(closeTag)]
	}
	return blk
}

// Find reads the attributes of the last complete capsule block in text.
func Find(text string) (revision int64, digest string, ok bool) {
	last := IndexLast(text)
	if last < 0 {
		return 0, "", false
	}
	gt := strings.IndexByte(text[last:], '>')
	if gt < 0 || indexFold(text, closeTag, last) < 0 {
		return 0, "", false
	}
	attrs := text[last+len(openTag) : last+gt]
	rev, ok1 := attr(attrs, "revision")
	dig, ok2 := attr(attrs, "digest")
	if !ok1 || !ok2 || len(dig) != 12 {
		return 0, "", false
	}
	if _, err := hex.DecodeString(dig); err != nil {
		return 0, "", false
	}
	r, err := strconv.ParseInt(rev, 10, 64)
	if err != nil || r < 0 {
		return 0, "", false
	}
	return r, strings.ToLower(dig), true
}

func attr(attrs, name string) (string, bool) {
	for _, f := range strings.Fields(attrs) {
		k, v, found := strings.Cut(f, "=")
		if !found || !strings.EqualFold(k, name) {
			continue
		}
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			return v[1 : len(v)-1], true
		}
		return "", false
	}
	return "", false
}

// Strip removes every capsule block from text — complete blocks, an
// unterminated trailing block, and stray closing tags — and returns the
// result and the number of blocks removed. A newline directly after a
// removed tag is removed with it. Text that forms a new tag once a block
// inside it is removed is stripped too, so the result never holds a tag.
func Strip(text string) (string, int) {
	if indexOpen(text, 0, true) < 0 && indexFold(text, closeTag, 0) < 0 {
		return text, 0
	}
	var s Stripper
	out := s.Feed(text) + s.Finish()
	return out, s.Removed()
}

// Stripper is Strip for text that arrives in pieces (a streamed answer):
// the concatenation of everything Feed and Finish return equals Strip of
// the concatenated input. It holds back at most a tag's length of text. The
// zero value is ready to use.
type Stripper struct {
	rest   string // input not yet settled: it may begin a tag
	tail   string // end of the text before the tag being removed
	inside bool   // within a block whose closing tag has not arrived
	skipNL bool   // a newline right after a removed tag goes with it
	n      int
}

// Feed takes the next piece of text and returns what can be sent on.
func (s *Stripper) Feed(text string) string { return s.run(text, false) }

// Finish returns the text still held back; an unterminated block is dropped.
func (s *Stripper) Finish() string { return s.run("", true) }

// Removed is the number of blocks removed so far.
func (s *Stripper) Removed() int { return s.n }

func (s *Stripper) run(text string, final bool) string {
	buf := s.rest + text
	s.rest = ""
	var out strings.Builder
	for {
		if s.skipNL {
			switch {
			case strings.HasPrefix(buf, "\r\n"):
				buf = buf[2:]
			case strings.HasPrefix(buf, "\n"):
				buf = buf[1:]
			case !final && (buf == "" || buf == "\r"):
				s.rest = buf // not yet known whether a newline follows
				return out.String()
			}
			s.skipNL = false
		}
		if s.inside {
			j := indexFold(buf, closeTag, 0)
			if j < 0 {
				if final { // unterminated: drop the rest, scan what came before
					buf, s.tail, s.inside = s.tail, "", false
					continue
				}
				s.rest = buf[len(buf)-partialFold(buf, closeTag, false):]
				return out.String()
			}
			buf = buf[j+len(closeTag):]
			s.inside, s.skipNL = false, true
			continue
		}
		if s.tail != "" {
			// The text before a removed tag may form a tag with the text
			// after it: scan them together.
			buf, s.tail = s.tail+buf, ""
		}
		o := indexOpen(buf, 0, final)
		cl := indexFold(buf, closeTag, 0)
		switch {
		case cl >= 0 && (o < 0 || cl < o): // stray closing tag
			s.hold(&out, buf[:cl])
			buf = buf[cl+len(closeTag):]
			s.skipNL = true
		case o >= 0:
			s.hold(&out, buf[:o])
			s.n++
			s.inside = true
			buf = buf[o+len(openTag):]
		case final:
			out.WriteString(buf)
			return out.String()
		default:
			k := max(partialFold(buf, openTag, true), partialFold(buf, closeTag, false))
			if k > 0 {
				// A tag may start here: keep the text before it too, as
				// hold does, in case removing that block forms a tag.
				k = min(len(buf), k+len(closeTag)-1)
			}
			out.WriteString(buf[:len(buf)-k])
			s.rest = buf[len(buf)-k:]
			return out.String()
		}
	}
}

// hold sends the text before a removed tag on, except its end, which could
// form a tag with the text after the removal.
func (s *Stripper) hold(out *strings.Builder, pre string) {
	k := min(len(pre), len(closeTag)-1)
	out.WriteString(pre[:len(pre)-k])
	s.tail = pre[len(pre)-k:]
}

// indexOpen finds the next opening tag at or after from: "<continuity-capsule"
// followed by whitespace or ">", or by the end of text when atEnd is set
// (the whole text is known).
func indexOpen(s string, from int, atEnd bool) int {
	for {
		i := indexFold(s, openTag, from)
		if i < 0 {
			return -1
		}
		j := i + len(openTag)
		if j == len(s) && atEnd || j < len(s) && (s[j] == '>' || s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r') {
			return i
		}
		from = j
	}
}

// partialFold returns the length of the longest suffix of s that is a
// prefix of tag (ASCII case-insensitive): a proper prefix, or tag itself
// when whole is set.
func partialFold(s, tag string, whole bool) int {
	n := min(len(s), len(tag)-1)
	if whole {
		n = min(len(s), len(tag))
	}
	for start := len(s) - n; start < len(s); start++ {
		if s[start] == '<' && equalFoldASCII(s[start:], tag[:len(s)-start]) {
			return len(s) - start
		}
	}
	return 0
}

// indexFold is strings.Index with ASCII case folding, starting at from. sub
// must begin with a byte that has no case ('<' here).
func indexFold(s, sub string, from int) int {
	n := len(sub)
	for i := from; i+n <= len(s); {
		k := strings.IndexByte(s[i:len(s)-n+1], sub[0])
		if k < 0 {
			return -1
		}
		i += k
		if equalFoldASCII(s[i:i+n], sub) {
			return i
		}
		i++
	}
	return -1
}

// equalFoldASCII reports whether a and b are equal under ASCII case folding
// (non-ASCII bytes must match exactly).
func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
