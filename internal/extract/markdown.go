package extract

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// People write to an agent in Markdown: headings over lists, bold labels,
// checkboxes, inline code for names, links, struck-through options, quoted
// lines and tables. The reader reads sentences, so each line is first
// given the plain form its Markdown stands for:
//
//   - a quoted line ("> …") is someone else's words, and a table row is
//     data: neither is read (an empty line stands in);
//   - a heading ("## Decisions") introduces what follows, as a label line
//     does ("Decisions:");
//   - a checked box ("- [x] use pnpm") is an item said as settled; an open
//     one keeps its box, for the reader to tell a to-do from a choice;
//   - a status mark (✅, ❌) is dropped, except that a crossed option
//     alone ("❌ Redis") is that option turned down;
//   - emphasis (**, __, *, _) and links ([text](url)) leave their text;
//   - a struck option ("~~Redis~~ signed cookies") is the one replaced.

// markdownLine returns raw in its plain form.
func markdownLine(raw string) string {
	t := strings.TrimSpace(raw)
	if t == "" {
		return raw
	}
	switch {
	case t[0] == '>':
		return ""
	case t[0] == '|' && strings.Count(t, "|") >= 2:
		return ""
	case t[0] == '#':
		if h, ok := heading(t); ok {
			return h
		}
	}
	indent := raw[:len(raw)-len(strings.TrimLeft(raw, " \t"))]
	if strings.Contains(t, "] ") {
		t = checkbox(t)
	}
	if k := strings.IndexFunc(t, func(r rune) bool { return r >= 0x2000 }); k >= 0 && k <= 6 {
		t = statusMark(t)
	}
	if strings.Contains(t, "~~") {
		t = struck(t)
	}
	if strings.Contains(t, "](") {
		t = mdLink.ReplaceAllString(t, "$1")
	}
	if strings.ContainsAny(t, "*_") {
		t = emphasis(t)
	}
	return indent + t
}

// heading returns "## Decisions" as "Decisions:"; a heading holding a
// colon or ending a sentence is left as its text.
func heading(t string) (string, bool) {
	n := 0
	for n < len(t) && t[n] == '#' {
		n++
	}
	if n > 6 || n == len(t) || t[n] != ' ' {
		return "", false // "#hashtag", "#123"
	}
	h := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(t[n:]), "#"))
	h = emphasis(h)
	if h == "" || strings.ContainsAny(h, ":?!.") {
		return h, true
	}
	return h + ":", true
}

// checkbox returns a checked list item without its box.
func checkbox(t string) string {
	m := listItem.FindStringSubmatchIndex(t)
	if m == nil {
		return t
	}
	body := t[m[2]:m[3]]
	if len(body) > 4 && (strings.HasPrefix(body, "[x] ") || strings.HasPrefix(body, "[X] ")) {
		return t[:m[2]] + body[4:]
	}
	return t
}

// statusMark drops a leading status symbol; a crossed one before an
// option alone turns it down.
func statusMark(t string) string {
	lead := t
	prefix := ""
	if m := listItem.FindStringSubmatchIndex(t); m != nil {
		prefix, lead = t[:m[2]], t[m[2]:]
	}
	r, size := utf8.DecodeRuneInString(lead)
	if r < 0x2000 || !(unicode.Is(unicode.So, r) || unicode.Is(unicode.Sm, r)) {
		return t
	}
	rest := strings.TrimLeft(lead[size:], "\ufe0f\u200d ")
	if crossed(r) && bareOption(rest) {
		return prefix + "no " + rest
	}
	return prefix + rest
}

func crossed(r rune) bool {
	switch r {
	case '❌', '✗', '✘', '✖', '🚫', '⛔':
		return true
	}
	return false
}

// struck returns a line with its struck-through options as the ones the
// words after them replace ("~~Redis~~ signed cookies, for now" →
// "signed cookies instead of Redis, for now"), or as turned down when
// nothing follows them.
func struck(t string) string {
	locs := mdStruck.re.FindAllStringSubmatchIndex(t, -1)
	if locs == nil {
		return t
	}
	var b strings.Builder
	var old []string
	at, first := 0, -1
	for _, m := range locs {
		b.WriteString(t[at:m[0]])
		if first < 0 {
			first = b.Len()
		}
		old = append(old, strings.TrimSpace(t[m[2]:m[3]]))
		at = m[1]
	}
	b.WriteString(t[at:])
	s := b.String()
	before, after := s[:first], strings.TrimLeft(s[first:], " ")
	if before = strings.TrimRight(before, " "); before != "" {
		before += " "
	}
	if !strings.ContainsFunc(after, unicode.IsLetter) {
		if !strings.ContainsFunc(before, unicode.IsLetter) {
			return before + "no " + strings.Join(old, " or ")
		}
		return strings.TrimRight(strings.TrimSpace(before), ".") + ". No " + strings.Join(old, " or ") + "."
	}
	end := len(after)
	for _, sep := range []string{", ", "; ", " — ", " – ", " - ", ". ", " ("} {
		if k := strings.Index(after, sep); k > 0 && k < end && strings.ContainsFunc(after[:k], unicode.IsLetter) {
			end = k
		}
	}
	clause := strings.TrimRight(after[:end], ".")
	return before + clause + " instead of " + strings.Join(old, " and ") + after[len(clause):]
}

// emphasis removes emphasis marks, leaving their text; an underscore
// inside a word (snake_case) or an asterisk between spaces stays.
func emphasis(t string) string {
	if strings.Contains(t, "**") {
		t = mdStrong.ReplaceAllString(t, "$1")
	}
	if strings.Contains(t, "__") {
		t = mdUnder.ReplaceAllString(t, "$1$2$3")
	}
	if strings.ContainsAny(t, "*_") {
		t = mdEm.ReplaceAllString(t, "$1$2$3")
	}
	return t
}

var (
	mdLink   = mustPattern(`!?\[([^\]\n]*)\]\([^)\s]*\)`)
	mdStruck = mustPattern(`~~([^~\n]+)~~`)
	mdStrong = mustPattern(`\*\*([^*\n]+)\*\*`)
	mdUnder  = mustPattern(`(^|[\s(\[])__([^_\n]+)__($|[\s,;:!?)\]—–-]|\.(?:\s|$))`)
	mdEm     = mustPattern(`(^|[\s(\[])[*_]([^*_\s](?:[^*_\n]*[^*_\s])?)[*_]($|[\s,;:!?)\]—–-]|\.(?:\s|$))`)
)
