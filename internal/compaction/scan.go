package compaction

import "bytes"

// A small structural scanner over a request body that View.Parse has already
// validated. It skips strings with bytes.IndexByte, so locating the
// conversation array and the bounds of its items costs one fast pass instead
// of several full parses; only the few items a rule needs are then decoded.

type span struct{ start, end int }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipString returns the index just past the string starting at b[i] == '"'.
func skipString(b []byte, i int) int {
	i++
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return len(b)
		}
		i += j
		n := 0
		for k := i - 1; k >= 0 && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return i + 1
		}
		i++
	}
}

// skipValue returns the index just past the value starting at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(b)
	default:
		for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && !isSpace(b[i]) {
			i++
		}
		return i
	}
}

// objectFields calls fn for every member of the object at b[s.start:s.end]
// with the raw key (quotes removed, escapes kept) and the offset of its
// value. fn returns the index just past the value when it read it itself, or
// -1 to have it skipped. objectFields reports false when the bytes are not
// an object.
func objectFields(b []byte, s span, fn func(key []byte, start int) int) bool {
	i := skipSpace(b, s.start)
	if i >= s.end || b[i] != '{' {
		return false
	}
	i++
	for {
		i = skipSpace(b, i)
		if i >= s.end {
			return false
		}
		if b[i] == '}' {
			return true
		}
		if b[i] != '"' {
			return false
		}
		ke := skipString(b, i)
		key := b[i+1 : ke-1]
		i = skipSpace(b, ke)
		if i >= s.end || b[i] != ':' {
			return false
		}
		i = skipSpace(b, i+1)
		ve := fn(key, i)
		if ve < 0 {
			ve = skipValue(b, i)
		}
		if ve > s.end || ve <= i {
			return false
		}
		i = skipSpace(b, ve)
		if i < s.end && b[i] == ',' {
			i++
		}
	}
}

// arrayItems returns the spans of the elements of the array starting at
// b[i] == '[' and the index just past it, or false when the bytes are not an
// array.
func arrayItems(b []byte, i int) ([]span, int, bool) {
	if i >= len(b) || b[i] != '[' {
		return nil, 0, false
	}
	out := make([]span, 0, 64)
	i++
	for {
		i = skipSpace(b, i)
		if i >= len(b) {
			return nil, 0, false
		}
		if b[i] == ']' {
			return out, i + 1, true
		}
		e := skipValue(b, i)
		if e == i {
			return nil, 0, false
		}
		out = append(out, span{i, e})
		i = skipSpace(b, e)
		if i < len(b) && b[i] == ',' {
			i++
		}
	}
}
