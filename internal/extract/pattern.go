package extract

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// A pattern is a regular expression with a prefilter derived from its
// syntax: literals of which every match must hold one, and where (at the
// start of the text, at a word boundary, anywhere). The prefilter answers
// only "cannot match" or "may match, from here on"; the regexp stays the
// one authority on what matches, so every method returns what the regexp's
// method of the same name returns.
//
// The built-in extractor's patterns are mostly word lists
// (`\b(?:maybe|perhaps|…)\b`) that Go's regexp tries at every position of
// the text, or anchored forms (`^(?:we|i)…`) tried one after another on the
// same sentence; the prefilter rules most sentences out in one pass over
// their bytes, and where a match is possible the regexp starts where the
// first literal does.
type pattern struct {
	re      *regexp.Regexp
	derived sync.Once // pre is derived on first use, not at start-up
	pre     prefilter
}

// mustPattern compiles expr as regexp.MustCompile does.
func mustPattern(expr string) *pattern {
	return &pattern{re: regexp.MustCompile(expr)}
}

// filter returns the prefilter, derived from the regexp's source the first
// time.
func (p *pattern) filter() *prefilter {
	p.derived.Do(func() { p.pre = newPrefilter(p.re.String()) })
	return &p.pre
}

func (p *pattern) MatchString(s string) bool {
	i := p.filter().start(s)
	return i >= 0 && p.re.MatchString(s[i:])
}

func (p *pattern) FindString(s string) string {
	i := p.filter().start(s)
	if i < 0 {
		return ""
	}
	return p.re.FindString(s[i:])
}

func (p *pattern) FindStringIndex(s string) []int {
	i := p.filter().start(s)
	if i < 0 {
		return nil
	}
	return shift(p.re.FindStringIndex(s[i:]), i)
}

func (p *pattern) FindStringSubmatch(s string) []string {
	i := p.filter().start(s)
	if i < 0 {
		return nil
	}
	return p.re.FindStringSubmatch(s[i:])
}

func (p *pattern) FindStringSubmatchIndex(s string) []int {
	i := p.filter().start(s)
	if i < 0 {
		return nil
	}
	return shift(p.re.FindStringSubmatchIndex(s[i:]), i)
}

// FindAllStringIndex searches from each place a literal begins, as the
// regexp searches on from the end of each match, when that is the same
// search: every match is a literal long at least (none is empty) and the
// regexp never looks at the text before where it starts.
func (p *pattern) FindAllStringIndex(s string, n int) [][]int {
	pre := p.filter()
	if !pre.leading || !pre.contextFree {
		if pre.start(s) < 0 {
			return nil
		}
		return p.re.FindAllStringIndex(s, n)
	}
	var out [][]int
	for pos := 0; n < 0 || len(out) < n; {
		i := pre.start(s[pos:])
		if i < 0 {
			break
		}
		m := p.re.FindStringIndex(s[pos+i:])
		if m == nil {
			break
		}
		end := pos + i + m[1]
		out = append(out, shift(m, pos+i))
		pos = end
	}
	return out
}

// ReplaceAllString returns s itself when nothing can match (the regexp
// returns an equal copy).
func (p *pattern) ReplaceAllString(s, repl string) string {
	if p.filter().start(s) < 0 {
		return s
	}
	return p.re.ReplaceAllString(s, repl)
}

func (p *pattern) ReplaceAllStringFunc(s string, repl func(string) string) string {
	if p.filter().start(s) < 0 {
		return s
	}
	return p.re.ReplaceAllStringFunc(s, repl)
}

// Split returns what regexp's Split returns; with nothing to split at that
// is s alone.
func (p *pattern) Split(s string, n int) []string {
	if n != 0 && p.filter().start(s) < 0 {
		return []string{s}
	}
	return p.re.Split(s, n)
}

// shift moves the offsets of a match in s[by:] to s.
func shift(m []int, by int) []int {
	for k := range m {
		if m[k] >= 0 {
			m[k] += by
		}
	}
	return m
}

// place is where a literal must occur.
type place uint8

const (
	anyPlace    place = iota // no literal is known: every string may match
	atStart                  // at offset 0 (the pattern is anchored by ^)
	atBoundary               // at an ASCII word boundary (the pattern opens with \b)
	atAnyOffset              // anywhere
)

// prefilter: a string can match only if it holds one of the literals of
// first where first.where allows, when inner is set one of inner's, and
// when ends is set ends with one of those.
type prefilter struct {
	first literals
	inner *literals
	ends  []string // the regexp matches only up to the end of the text ($)
	// trim: bytes a match may end with after what ends holds (`[.!]*$`);
	// they are cut from the text's end before it is compared with ends.
	trim byteSet
	// lastBytes: the last bytes of ends, a set of 256 bits; every bit
	// when one of ends is empty. Most texts end in a byte none of them
	// ends with, and are ruled out without comparing.
	lastBytes byteSet
	// alts: when the regexp is an alternation, the prefilters of its
	// alternatives; a match is one of theirs, so one of them must pass.
	alts []prefilter
	// leading: first holds literals a match begins with (not literals
	// from within it), so no match begins before the first of them.
	leading bool
	// contextFree: the regexp has no ^, \b or \B, which look at the text
	// before a position; it finds the same matches in s[i:] as in s from
	// i on.
	contextFree bool
}

// start returns -1 when s cannot hold a match; otherwise an offset i such
// that the regexp's leftmost match in s[i:], moved by i, is its leftmost
// match in s. A regexp that looks behind starts a byte early, where no
// literal begins: no match can begin there, and every later position keeps
// what lies before it.
func (f *prefilter) start(s string) int {
	if f.ends != nil && !f.endsWell(s) {
		return -1
	}
	c := f.first.find(s)
	if c < 0 {
		return -1
	}
	if f.inner != nil {
		from := 0
		if f.leading {
			from = c // the match, and the literal within it, begins at c or later
		}
		if f.inner.find(s[from:]) < 0 {
			return -1
		}
	}
	if f.alts != nil && len(s) <= altsUpTo && !f.anyAlt(s) {
		return -1
	}
	switch {
	case !f.leading || c == 0:
		return 0
	case f.contextFree:
		return c
	case !f.first.at(s, c-1):
		return c - 1
	}
	return 0
}

// anyAlt reports whether one of f.alts may match s.
func (f *prefilter) anyAlt(s string) bool {
	for k := range f.alts {
		if f.alts[k].start(s) >= 0 {
			return true
		}
	}
	return false
}

// endsWell reports whether s, once cut of the bytes of f.trim at its end,
// ends with one of f.ends.
func (f *prefilter) endsWell(s string) bool {
	s = trimEnd(s, &f.trim)
	if len(s) > 0 {
		if !f.lastBytes.has(s[len(s)-1]) {
			return false
		}
	}
	for _, e := range f.ends {
		if strings.HasSuffix(s, e) {
			return true
		}
	}
	return false
}

// byteSet is a set of bytes, a bit each.
type byteSet [4]uint64

func (set *byteSet) has(b byte) bool { return set[b>>6]&(1<<(b&63)) != 0 }

func (set *byteSet) add(b byte) { set[b>>6] |= 1 << (b & 63) }

// addRanges adds the bytes of rs, pairs of bounds as syntax.Regexp.Rune
// holds a class; every bound is below utf8.RuneSelf.
func (set *byteSet) addRanges(rs []rune) {
	for i := 0; i+1 < len(rs); i += 2 {
		for r := rs[i]; r <= rs[i+1]; r++ {
			set.add(byte(r))
		}
	}
}

// everyByte holds every byte.
var everyByte = byteSet{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}

// withEnds sets f's ends and the last bytes they end with.
func (f prefilter) withEnds(ends []string) prefilter {
	f.ends = ends
	for _, e := range ends {
		if e == "" {
			f.lastBytes = everyByte
			break
		}
		f.lastBytes.add(e[len(e)-1])
	}
	return f
}

// literals: a set of literals and where one must occur. index maps a byte
// to 1 + the index in groups of the group of literals that begin with it;
// 0: none does.
type literals struct {
	where  place
	index  [256]uint16
	groups []group
}

// group: the literals that begin with one byte, and the bytes that can
// follow it (every byte when one of them is that byte alone).
type group struct {
	lits   []string
	second byteSet
}

// find returns the first offset in s where one of the literals begins
// where allowed, or -1.
func (f *literals) find(s string) int {
	switch f.where {
	case anyPlace:
		return 0
	case atStart:
		if len(s) > 0 && f.at(s, 0) {
			return 0
		}
		return -1
	case atBoundary:
		word := false // s[i-1] is a word byte; the start of the text is not
		for i := 0; i < len(s); i++ {
			w := wordBytes[s[i]]
			if w != word && f.index[s[i]] != 0 && f.at(s, i) {
				return i
			}
			word = w
		}
		return -1
	}
	if len(f.groups) == 1 { // one first byte: let IndexByte find it
		b := f.groups[0].lits[0][0]
		for i := 0; i < len(s); i++ {
			k := strings.IndexByte(s[i:], b)
			if k < 0 {
				return -1
			}
			if i += k; f.at(s, i) {
				return i
			}
		}
		return -1
	}
	for i := 0; i < len(s); i++ {
		if f.index[s[i]] != 0 && f.at(s, i) {
			return i
		}
	}
	return -1
}

// at reports whether one of the literals begins at s[i], wherever i is.
func (f *literals) at(s string, i int) bool {
	g := f.index[s[i]]
	if g == 0 {
		return false
	}
	grp := &f.groups[g-1]
	if i+1 < len(s) && !grp.second.has(s[i+1]) {
		return false
	}
	for _, l := range grp.lits {
		if len(s)-i >= len(l) && hasAt(s, i, l) {
			return true
		}
	}
	return false
}

// hasAt compares l with s[i:] byte by byte from the second: the first
// is known to agree, and most candidates differ within a few bytes, sooner
// than a call to compare them whole returns.
func hasAt(s string, i int, l string) bool {
	for j := 1; j < len(l); j++ {
		if s[i+j] != l[j] {
			return false
		}
	}
	return true
}

// wordBytes holds \b's word characters, [0-9A-Za-z_]. A byte of a
// multi-byte rune is not one, as the rune is not.
var wordBytes = func() (t [256]bool) {
	for b := range utf8.RuneSelf {
		t[b] = syntax.IsWordChar(rune(b))
	}
	return t
}()

// Bounds of the literal sets: a larger set or character class is treated as
// unknown, which costs only selectivity. A literal of longEnough bytes is
// not extended by each character of a class (`\s`), which would multiply
// the literals to check for little gain.
const (
	maxLiterals = 256
	maxClass    = 16
	longEnough  = 4
)

// newPrefilter derives the prefilter of expr, parsed as regexp.Compile
// parses it: the literals a match must begin with, checked only where the
// pattern can start, and the literals a match must contain when they are
// others; either alone when the other is unknown.
//
// An alternation's alternatives each get a prefilter of their own too: the
// literals of all of them together are held by many texts none of them
// matches ("as" of `, as\s+` anywhere, "store" of `^store\s+` anywhere).
func newPrefilter(expr string) prefilter {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return prefilter{}
	}
	re = re.Simplify()
	d := deriver{memo: map[affixKey]litSet{}}
	f := d.prefilter(re)
	if alts := alternatives(re); len(alts) > 1 && len(alts) <= maxAlternatives {
		pres := make([]prefilter, len(alts))
		for k, alt := range alts {
			if pres[k] = d.prefilter(alt); pres[k].first.where == anyPlace && pres[k].ends == nil {
				return f // one alternative rules nothing out, so they do not
			}
		}
		f.alts = pres
	}
	return f
}

// prefilter derives the prefilter of re, simplified.
func (d *deriver) prefilter(re *syntax.Regexp) prefilter {
	prog, err := syntax.Compile(re)
	if err != nil {
		return prefilter{}
	}
	first := d.affixes(re, false)
	inner := d.factorsBesides(re, first)
	var ends []string
	rest, trim := cutOptionalEnd(re)
	if last := d.affixes(rest, true); endAnchored(re) && last.usable() {
		for _, l := range last.lits {
			ends = append(ends, trimEnd(l.s, &trim))
		}
		slices.Sort(ends)
		ends = slices.Compact(ends)
		if ends[0] == "" { // cut whole: ruling nothing out
			ends = nil
		}
	}
	if !first.usable() {
		if !inner.usable() {
			return prefilter{trim: trim}.withEnds(ends)
		}
		return prefilter{first: build(atAnyOffset, inner), trim: trim}.withEnds(ends)
	}
	f := prefilter{first: build(atAnyOffset, first), leading: true, contextFree: contextFree(prog), trim: trim}.withEnds(ends)
	if cond := prog.StartCond(); cond&syntax.EmptyBeginText != 0 {
		f.first.where = atStart
	} else if cond&syntax.EmptyWordBoundary != 0 {
		f.first.where = atBoundary
	}
	if inner.usable() && !slices.Equal(first.minimal(), inner.minimal()) {
		in := build(atAnyOffset, inner)
		f.inner = &in
	}
	return f
}

// altsUpTo bounds the texts asked of each alternative: a longer one (a
// whole message, not a sentence) holds the literals of one of them nearly
// always, and asking them all costs more than the regexp it saves.
const altsUpTo = 400

// maxAlternatives bounds the alternatives given a prefilter each: every one
// is asked in turn before a text is ruled out.
const maxAlternatives = 32

// alternatives returns regexps whose matches together are re's: the
// alternatives of an alternation, and of one in a sequence whose other
// parts are single characters or assertions (`^(?:a|b)`, or `,(?:\s+a|\s+b)`,
// which the parser makes of `,\s+a|,\s+b`); re alone otherwise.
func alternatives(re *syntax.Regexp) []*syntax.Regexp {
	switch re.Op {
	case syntax.OpCapture:
		return alternatives(re.Sub[0])
	case syntax.OpAlternate:
		var out []*syntax.Regexp
		for _, sub := range re.Sub {
			out = append(out, alternatives(sub)...)
		}
		return out
	case syntax.OpConcat:
		at := -1
		for i, sub := range re.Sub {
			if sub.Op == syntax.OpAlternate || sub.Op == syntax.OpCapture && sub.Sub[0].Op == syntax.OpAlternate {
				if at >= 0 {
					return []*syntax.Regexp{re} // two: their pairs could be many
				}
				at = i
			} else if !fixedPiece(sub) {
				return []*syntax.Regexp{re}
			}
		}
		if at < 0 {
			return []*syntax.Regexp{re}
		}
		var out []*syntax.Regexp
		for _, alt := range alternatives(re.Sub[at]) {
			part := []*syntax.Regexp{alt}
			if alt.Op == syntax.OpConcat {
				part = alt.Sub // one sequence, whose parts factorsBesides weighs each
			}
			subs := slices.Concat(re.Sub[:at], part, re.Sub[at+1:])
			out = append(out, &syntax.Regexp{Op: syntax.OpConcat, Flags: re.Flags, Sub: subs})
		}
		return out
	}
	return []*syntax.Regexp{re}
}

// fixedPiece: an assertion, a literal or one character of a class.
func fixedPiece(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary, syntax.OpLiteral, syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return true
	}
	return false
}

// cutOptionalEnd returns re without the optional parts of ASCII
// characters it ends with before the end of the text (`[.!]*$`, `\.?$`),
// and those characters: a match ends with what the rest ends with, then
// any number of them.
func cutOptionalEnd(re *syntax.Regexp) (*syntax.Regexp, byteSet) {
	var trim byteSet
	if re.Op != syntax.OpConcat || len(re.Sub) < 2 || re.Sub[len(re.Sub)-1].Op != syntax.OpEndText {
		return re, trim
	}
	k := len(re.Sub) - 1
	for k > 0 && optionalASCII(re.Sub[k-1], &trim) {
		k--
	}
	if k == len(re.Sub)-1 {
		return re, trim
	}
	subs := append(slices.Clone(re.Sub[:k]), re.Sub[len(re.Sub)-1])
	return &syntax.Regexp{Op: syntax.OpConcat, Flags: re.Flags, Sub: subs}, trim
}

// optionalASCII reports whether re matches only runs, empty included, of
// ASCII characters of one class or literal, and adds them to set.
func optionalASCII(re *syntax.Regexp, set *byteSet) bool {
	if re.Op != syntax.OpStar && re.Op != syntax.OpQuest && (re.Op != syntax.OpRepeat || re.Min != 0) {
		return false
	}
	var runes []rune
	switch sub := re.Sub[0]; {
	case sub.Op == syntax.OpCharClass:
		runes = sub.Rune
	case sub.Op == syntax.OpLiteral && len(sub.Rune) == 1 && sub.Flags&syntax.FoldCase == 0:
		runes = []rune{sub.Rune[0], sub.Rune[0]}
	default:
		return false
	}
	if len(runes) == 0 || slices.Max(runes) >= utf8.RuneSelf {
		return false // not one byte each (and a folded letter may be ſ or K)
	}
	set.addRanges(runes)
	return true
}

// trimEnd cuts the bytes of set from the end of s.
func trimEnd(s string, set *byteSet) string {
	for len(s) > 0 && set.has(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

// endAnchored reports whether every match of re ends at the end of the
// text.
func endAnchored(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpEndText:
		return true
	case syntax.OpCapture:
		return endAnchored(re.Sub[0])
	case syntax.OpConcat:
		return len(re.Sub) > 0 && endAnchored(re.Sub[len(re.Sub)-1])
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			if !endAnchored(sub) {
				return false
			}
		}
		return true
	}
	return false
}

// contextFree reports whether prog has no assertion on the text before a
// position.
func contextFree(prog *syntax.Prog) bool {
	const behind = syntax.EmptyBeginLine | syntax.EmptyBeginText | syntax.EmptyWordBoundary | syntax.EmptyNoWordBoundary
	for _, in := range prog.Inst {
		if in.Op == syntax.InstEmptyWidth && syntax.EmptyOp(in.Arg)&behind != 0 {
			return false
		}
	}
	return true
}

func build(where place, set litSet) literals {
	f := literals{where: where}
	for _, l := range set.minimal() {
		if f.index[l[0]] == 0 {
			f.groups = append(f.groups, group{})
			f.index[l[0]] = uint16(len(f.groups))
		}
		g := &f.groups[f.index[l[0]]-1]
		g.lits = append(g.lits, l)
		if len(l) == 1 {
			g.second = everyByte
		} else {
			g.second.add(l[1])
		}
	}
	return f
}

// lit is a literal a match begins with; exact when it is the whole of what
// its part of the pattern matched, so what follows can be appended.
type lit struct {
	s     string
	exact bool
}

// litSet is a set of literals, or unknown (any string may do).
type litSet struct {
	lits    []lit
	unknown bool
}

var (
	unknownSet = litSet{unknown: true}
	emptyLit   = litSet{lits: []lit{{"", true}}}
)

// usable: known and free of the empty literal, which every string holds.
func (s litSet) usable() bool {
	if s.unknown || len(s.lits) == 0 {
		return false
	}
	for _, l := range s.lits {
		if l.s == "" {
			return false
		}
	}
	return true
}

// quality ranks sets by their shortest literal: the longer, the fewer
// strings hold one by chance.
func (s litSet) quality() int {
	if !s.usable() {
		return 0
	}
	q := len(s.lits[0].s)
	for _, l := range s.lits[1:] {
		q = min(q, len(l.s))
	}
	return q
}

// minimal returns the distinct literals, without one that begins with
// another (which holds wherever the longer one does).
func (s litSet) minimal() []string {
	var out []string
	for _, l := range s.lits {
		out = append(out, l.s)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	kept := out[:0]
	for _, l := range out {
		if len(kept) == 0 || !strings.HasPrefix(l, kept[len(kept)-1]) {
			kept = append(kept, l)
		}
	}
	return kept
}

// oneOfChars: a choice of single characters (a class, an optional
// character).
func (s litSet) oneOfChars() bool {
	for _, l := range s.lits {
		if utf8.RuneCountInString(l.s) > 1 {
			return false
		}
	}
	return len(s.lits) > 1
}

func (s litSet) inexact() litSet {
	if s.unknown {
		return s
	}
	out := make([]lit, len(s.lits))
	for i, l := range s.lits {
		out[i] = lit{l.s, false}
	}
	return litSet{lits: out}
}

// union: a match of one of the sets' parts begins with one of the sets'
// literals (ends with one, atEnd). More than maxLiterals are shortened.
func union(atEnd bool, sets ...litSet) litSet {
	n := 0
	for _, set := range sets {
		if set.unknown {
			return unknownSet
		}
		n += len(set.lits)
	}
	out := make([]lit, 0, n)
	for _, set := range sets {
		out = append(out, set.lits...)
	}
	if n > maxLiterals {
		return litSet{lits: out}.shortened(atEnd)
	}
	return litSet{lits: out}
}

// shortened cuts the literals to their first bytes (last, atEnd), as many
// as keep at most maxLiterals distinct ones; a text that holds a literal
// holds its first bytes. A long word list (the interjections a sentence
// may open with) is thus still checked by the first bytes of its words
// rather than not at all.
func (s litSet) shortened(atEnd bool) litSet {
	longest := 0
	for _, l := range s.lits {
		longest = max(longest, len(l.s))
	}
	for n := longest; n > 0; n-- {
		seen := map[lit]bool{}
		var out []lit
		for _, l := range s.lits {
			if len(l.s) > n && atEnd {
				l = lit{l.s[len(l.s)-n:], false}
			} else if len(l.s) > n {
				l = lit{l.s[:n], false}
			}
			if !seen[l] {
				seen[l] = true
				out = append(out, l)
			}
		}
		if len(out) <= maxLiterals {
			return litSet{lits: out}
		}
	}
	return unknownSet
}

// deriver derives the literal sets of one expression, each part's once.
type deriver struct {
	memo map[affixKey]litSet
}

type affixKey struct {
	re    *syntax.Regexp
	atEnd bool
}

// affixes returns the literals every match of re begins with, or ends with
// when atEnd. Empty-width assertions are left out, which only widens the
// set.
func (d *deriver) affixes(re *syntax.Regexp, atEnd bool) litSet {
	k := affixKey{re, atEnd}
	if set, ok := d.memo[k]; ok {
		return set
	}
	set := d.derive(re, atEnd)
	d.memo[k] = set
	return set
}

func (d *deriver) derive(re *syntax.Regexp, atEnd bool) litSet {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return emptyLit
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase == 0 && !slices.Contains(re.Rune, utf8.RuneError) {
			return litSet{lits: []lit{{string(re.Rune), true}}}
		}
		parts := make([]*syntax.Regexp, len(re.Rune))
		for i, r := range re.Rune {
			runes := []rune{r}
			for f := unicode.SimpleFold(r); re.Flags&syntax.FoldCase != 0 && f != r; f = unicode.SimpleFold(f) {
				runes = append(runes, f)
			}
			parts[i] = &syntax.Regexp{Op: syntax.OpCharClass}
			for _, x := range runes {
				parts[i].Rune = append(parts[i].Rune, x, x)
			}
		}
		return d.concat(parts, atEnd)
	case syntax.OpCharClass:
		n := 0
		for i := 0; i < len(re.Rune); i += 2 {
			n += int(re.Rune[i+1]-re.Rune[i]) + 1
			// U+FFFD also matches a byte that is not UTF-8.
			if n > maxClass || re.Rune[i] <= utf8.RuneError && utf8.RuneError <= re.Rune[i+1] {
				return unknownSet
			}
		}
		var set litSet
		for i := 0; i < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				set.lits = append(set.lits, lit{string(r), true})
			}
		}
		return set
	case syntax.OpCapture:
		return d.affixes(re.Sub[0], atEnd)
	case syntax.OpConcat:
		return d.concat(re.Sub, atEnd)
	case syntax.OpAlternate:
		sets := make([]litSet, len(re.Sub))
		for i, sub := range re.Sub {
			sets[i] = d.affixes(sub, atEnd)
		}
		return union(atEnd, sets...)
	case syntax.OpQuest:
		return union(atEnd, d.affixes(re.Sub[0], atEnd), emptyLit)
	case syntax.OpStar:
		return union(atEnd, d.affixes(re.Sub[0], atEnd).inexact(), emptyLit)
	case syntax.OpPlus:
		return d.affixes(re.Sub[0], atEnd).inexact()
	case syntax.OpRepeat:
		if re.Min == 0 {
			return union(atEnd, d.affixes(re.Sub[0], atEnd).inexact(), emptyLit)
		}
		return d.affixes(re.Sub[0], atEnd).inexact()
	}
	return unknownSet // any character, no match
}

// concat returns the literals a match of subs, one after another,
// begins with (ends with, when atEnd): the exact literals of the first part
// (the last) extended by the next part's, while the set stays small.
func (d *deriver) concat(subs []*syntax.Regexp, atEnd bool) litSet {
	acc := emptyLit
	for k := range subs {
		sub := subs[k]
		if atEnd {
			sub = subs[len(subs)-1-k]
		}
		next := d.affixes(sub, atEnd)
		n := 0
		for _, a := range acc.lits {
			if a.exact && (len(a.s) < longEnough || !next.oneOfChars()) {
				n += len(next.lits)
			} else {
				n++
			}
		}
		if next.unknown || n > maxLiterals {
			return acc.inexact()
		}
		var out []lit
		more := false
		for _, a := range acc.lits {
			if !a.exact || len(a.s) >= longEnough && next.oneOfChars() {
				out = append(out, lit{a.s, false})
				continue
			}
			for _, b := range next.lits {
				joined := a.s + b.s
				if atEnd {
					joined = b.s + a.s
				}
				out = append(out, lit{joined, b.exact})
				more = more || b.exact
			}
		}
		acc = litSet{lits: out}
		if !more {
			break
		}
	}
	return acc
}

// opensWithText: re's every match begins with literal text, so a run of
// parts that begins with re may begin with a long literal.
func opensWithText(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral:
		return true
	case syntax.OpCapture, syntax.OpPlus:
		return opensWithText(re.Sub[0])
	case syntax.OpConcat:
		return len(re.Sub) > 0 && opensWithText(re.Sub[0])
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			if !opensWithText(sub) {
				return false
			}
		}
		return true
	}
	return false
}

// factors returns literals of which every match of re holds one somewhere:
// for a sequence, the best of what each run of its parts begins with.
func (d *deriver) factors(re *syntax.Regexp) litSet {
	switch re.Op {
	case syntax.OpLiteral, syntax.OpCharClass:
		return d.affixes(re, false)
	case syntax.OpCapture, syntax.OpPlus:
		return d.factors(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min > 0 {
			return d.factors(re.Sub[0])
		}
	case syntax.OpAlternate:
		sets := make([]litSet, len(re.Sub))
		for i, sub := range re.Sub {
			sets[i] = d.factors(sub)
		}
		return union(false, sets...)
	case syntax.OpConcat:
		return d.bestFactors(re.Sub, nil)
	}
	return unknownSet
}

// factorsBesides returns factors of re other than first, the literals it
// begins with (nor parts of those), when re is a sequence that holds
// others ("keep " and
// "ing " of `^keeps?\s+[a-z]+ing\s`): a text must hold both.
func (d *deriver) factorsBesides(re *syntax.Regexp, first litSet) litSet {
	if re.Op != syntax.OpConcat || !first.usable() {
		return d.factors(re)
	}
	opening := first.minimal()
	return d.bestFactors(re.Sub, func(c litSet) bool { return inEach(c.minimal(), opening) })
}

// inEach reports whether each of texts holds one of lits: a text that
// holds one of texts then holds one of lits too.
func inEach(lits, texts []string) bool {
	for _, t := range texts {
		if !slices.ContainsFunc(lits, func(l string) bool { return strings.Contains(t, l) }) {
			return false
		}
	}
	return true
}

// bestFactors returns the best of what each run of subs, a sequence,
// begins with, and of the factors of each part, leaving out those skip
// reports.
func (d *deriver) bestFactors(subs []*syntax.Regexp, skip func(litSet) bool) litSet {
	best := unknownSet
	for i, sub := range subs {
		candidates := []litSet{d.factors(sub)}
		if opensWithText(sub) {
			candidates = append(candidates, d.concat(subs[i:], false))
		}
		for _, c := range candidates {
			if skip != nil && c.usable() && skip(c) {
				continue
			}
			if c.quality() > best.quality() || c.quality() == best.quality() && c.usable() && len(c.lits) < len(best.lits) {
				best = c
			}
		}
	}
	return best
}

// A subjectPattern matches what `^S{1,most}?\s+V` matches, S a class of
// ASCII characters: a subject of up to most bytes, spaces, then V
// ("Postgres is overkill"). As one regexp, each of the subject's most
// bytes starts every alternative of V anew, in every thread of the NFA;
// here V is tried, after its own prefilter, only after the spaces that
// follow a possible subject.
type subjectPattern struct {
	expr    string   // the pattern as one regexp, for tests
	subject byteSet  // the bytes of S
	most    int      // bytes of the subject, at most
	verdict *pattern // `^(?:V)`
}

// mustSubjectPattern builds the subjectPattern of S, most and V, and
// panics as regexp.MustCompile does on a malformed V or S. V must not assert
// the start of a text or line: it is matched on the text from where it
// begins, and what comes before that (a space) looks to \b and \B as the
// start of a text does, but not to ^.
func mustSubjectPattern(class string, most int, v string) *subjectPattern {
	// The verdict is a pattern as mustPattern makes one; mustPattern's own
	// callers pass constant expressions, which the tests list and fuzz
	// (extractorExprs reads V from this call instead).
	p := &subjectPattern{expr: fmt.Sprintf(`^%s{1,%d}?\s+%s`, class, most, v), most: most, verdict: &pattern{re: regexp.MustCompile(`^(?:` + v + `)`)}}
	cc, err := syntax.Parse(class, syntax.Perl)
	if err != nil || cc.Op != syntax.OpCharClass || slices.Max(cc.Rune) >= utf8.RuneSelf {
		panic("subjectPattern: " + class + " is not a class of ASCII characters")
	}
	p.subject.addRanges(cc.Rune)
	if re, _ := syntax.Parse(v, syntax.Perl); assertsStart(re) {
		panic("subjectPattern: " + v + " asserts the start of a text or line")
	}
	return p
}

// assertsStart reports whether re holds ^ or \A.
func assertsStart(re *syntax.Regexp) bool {
	if re.Op == syntax.OpBeginLine || re.Op == syntax.OpBeginText {
		return true
	}
	return slices.ContainsFunc(re.Sub, assertsStart)
}

// MatchString reports whether s opens with a subject, spaces and V: for
// each subject of 1 to most bytes, V after any of the spaces that follow.
func (p *subjectPattern) MatchString(s string) bool {
	tried := 0 // V is tried at each offset once: S may hold a space
	for k := 1; k <= p.most && k < len(s) && p.subject.has(s[k-1]); k++ {
		for j := max(k, tried); j < len(s) && isSpace(s[j]); j++ {
			if p.verdict.MatchString(s[j+1:]) {
				return true
			}
			tried = j + 1
		}
	}
	return false
}

// isSpace: \s, [\t\n\f\r ].
func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\f' || b == '\r'
}
