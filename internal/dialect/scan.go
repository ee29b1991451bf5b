package dialect

import (
	"bytes"
	"encoding/binary"
	"math/bits"

	"github.com/tidwall/gjson"
)

// index is what the one pass over a request body (scanBody) finds: the
// top-level fields with their raw values, and the items of the conversation
// array. Everything that reads a request afterwards — the model lookup,
// classification, the conversation walk, lineage digests, admission —
// slices the body at these offsets instead of scanning it again.
type index struct {
	fields []field
	conv   int    // index in fields of the conversation field, or -1
	items  []span // items of the conversation array (when it is one)
}

// field is one top-level field: its decoded name and the span of its raw
// value.
type field struct {
	name string
	val  span
}

type span struct{ start, end int }

// find returns the raw value span of the top-level field name.
func (x *index) find(name string) (span, bool) {
	for _, f := range x.fields {
		if f.name == name {
			return f.val, true
		}
	}
	return span{}, false
}

// convKey names the conversation field of each dialect.
func convKey(name Name) string {
	switch name {
	case OpenAIResponses:
		return "input"
	case Gemini:
		return "contents"
	default:
		return "messages"
	}
}

// scanner validates one body as JSON (RFC 8259, as encoding/json accepts
// it: invalid UTF-8 is not refused) in one recursive-descent pass whose
// depth is bounded by MaxDepth, recording the index as it goes.
type scanner struct {
	b    []byte
	i    int
	conv string
	x    index
	seen map[string]struct{} // duplicate check once the object is large
}

// scanBody checks body — valid JSON, an object, nesting at most MaxDepth,
// no top-level field named twice, at most MaxTopLevelKeys fields — and
// returns its index. Errors: ErrTooDeep, ErrDuplicateKey, ErrTooManyFields,
// ErrInvalidJSON.
func scanBody(body []byte, conv string) (index, error) {
	s := scanner{b: body, conv: conv, x: index{conv: -1}}
	s.space()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		if err := s.value(0); err == ErrTooDeep {
			return index{}, err
		}
		return index{}, ErrInvalidJSON
	}
	if err := s.object(1, true); err != nil {
		return index{}, err
	}
	s.space()
	if s.i != len(s.b) {
		return index{}, ErrInvalidJSON
	}
	return s.x, nil
}

func (s *scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value reads one value at depth d (the number of enclosing arrays and
// objects).
func (s *scanner) value(d int) error {
	if s.i >= len(s.b) {
		return ErrInvalidJSON
	}
	switch c := s.b[s.i]; {
	case c == '"':
		return s.str()
	case c == '{':
		return s.object(d+1, false)
	case c == '[':
		return s.array(d+1, nil)
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	}
	return ErrInvalidJSON
}

func (s *scanner) lit(w string) error {
	if !bytes.HasPrefix(s.b[s.i:], []byte(w)) {
		return ErrInvalidJSON
	}
	s.i += len(w)
	return nil
}

func (s *scanner) number() error {
	b, i := s.b, s.i
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return ErrInvalidJSON
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return ErrInvalidJSON
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return ErrInvalidJSON
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	s.i = i
	return nil
}

// str reads a string. Most of an agent's body is string content, so this
// is the loop that decides the scanner's speed. Text dense with escapes
// (code, tool output: a "\n" every few bytes) is read a byte at a time;
// a long clean run is crossed with bytes.IndexByte to the next quote and
// backslash, its bytes checked for control characters eight at a time.
func (s *scanner) str() error {
	b := s.b
	i := s.i + 1
	q := -1 // the next '"' at or after i, once looked for
	for {
		end := min(i+shortRun, len(b))
		for i+8 <= end {
			// Eight bytes at a time: stop at the first that is a quote, a
			// backslash or a control character.
			if m := special(binary.LittleEndian.Uint64(b[i:])); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		for i < end && plain[b[i]] {
			i++
		}
		if i == end && i < len(b) {
			// A long clean run: jump to the next quote or backslash.
			if q < i {
				j := bytes.IndexByte(b[i:], '"')
				if j < 0 {
					return ErrInvalidJSON
				}
				q = i + j
			}
			seg := b[i:q]
			if k := bytes.IndexByte(seg, '\\'); k >= 0 {
				seg = seg[:k]
			}
			if hasControl(seg) {
				return ErrInvalidJSON
			}
			i += len(seg)
		}
		if i >= len(b) {
			return ErrInvalidJSON
		}
		switch b[i] {
		case '"':
			s.i = i + 1
			return nil
		case '\\':
		default:
			return ErrInvalidJSON // a control character
		}
		i++ // the escaped character
		if i >= len(b) {
			return ErrInvalidJSON
		}
		switch b[i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i++
		case 'u':
			if i+5 > len(b) {
				return ErrInvalidJSON
			}
			for _, h := range b[i+1 : i+5] {
				if !isHex(h) {
					return ErrInvalidJSON
				}
			}
			i += 5
		default:
			return ErrInvalidJSON
		}
	}
}

// shortRun is how many bytes str reads one at a time before it jumps.
const shortRun = 32

// plain marks the bytes that may stand unescaped in a JSON string.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// special returns a mask whose lowest set bit is the top bit of the first
// byte of x (little-endian) that is '"', '\\' or below 0x20, or 0 when
// there is none. (Bits above the first hit may be spurious borrows; the
// lowest never is.)
func special(x uint64) uint64 {
	const ones, hi = 0x0101010101010101, 0x8080808080808080
	q := x ^ (ones * '"')
	bs := x ^ (ones * '\\')
	return ((x - ones*0x20) | (q - ones) | (bs - ones)) &^ x & hi
}

// hasControl reports whether b holds a byte below 0x20, which JSON strings
// may not contain unescaped.
func hasControl(b []byte) bool {
	const lo, hi = 0x2020202020202020, 0x8080808080808080
	for len(b) >= 8 {
		x := binary.LittleEndian.Uint64(b)
		// A byte below 0x20 borrows in x-lo while its own top bit is clear.
		if (x-lo)&^x&hi != 0 {
			return true
		}
		b = b[8:]
	}
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return false
}

// object reads an object at depth d; top records its fields in the index.
func (s *scanner) object(d int, top bool) error {
	if empty, err := s.open(d, '}'); empty || err != nil {
		return err
	}
	return s.members(d, top)
}

// members reads an object's members from s.i (at one) to its end.
func (s *scanner) members(d int, top bool) error {
	for {
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return ErrInvalidJSON
		}
		ks := s.i
		if err := s.str(); err != nil {
			return err
		}
		ke := s.i
		s.space()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return ErrInvalidJSON
		}
		s.i++
		s.space()
		vs := s.i
		var err error
		var name string
		if top {
			name = keyName(s.b[ks:ke])
			if err := s.addField(name); err != nil {
				return err
			}
		}
		if top && name == s.conv && s.i < len(s.b) && s.b[s.i] == '[' && s.x.conv < 0 {
			s.x.conv = len(s.x.fields) - 1
			err = s.array(d+1, &s.x.items)
		} else {
			err = s.value(d)
		}
		if err != nil {
			return err
		}
		if top {
			s.x.fields[len(s.x.fields)-1].val = span{vs, s.i}
		}
		if end, err := s.next('}'); end || err != nil {
			return err
		}
	}
}

// open enters the array or object at s.i, at depth d, and reports whether
// it is empty (closed by end at once).
func (s *scanner) open(d int, end byte) (bool, error) {
	if d > MaxDepth {
		return false, ErrTooDeep
	}
	s.i++ // '[' or '{'
	s.space()
	if s.i < len(s.b) && s.b[s.i] == end {
		s.i++
		return true, nil
	}
	return false, nil
}

// next reads what follows a member of a container: a comma (false) or the
// container's end (true).
func (s *scanner) next(end byte) (bool, error) {
	s.space()
	if s.i >= len(s.b) {
		return false, ErrInvalidJSON
	}
	switch s.b[s.i] {
	case ',':
		s.i++
		s.space()
		return false, nil
	case end:
		s.i++
		return true, nil
	}
	return false, ErrInvalidJSON
}

// addField records a top-level field, refusing a second field of one name
// and more than MaxTopLevelKeys fields.
func (s *scanner) addField(name string) error {
	if len(s.x.fields) == MaxTopLevelKeys {
		return ErrTooManyFields
	}
	if s.seen == nil && len(s.x.fields) < 32 {
		for _, f := range s.x.fields {
			if f.name == name {
				return ErrDuplicateKey
			}
		}
	} else {
		if s.seen == nil {
			s.seen = make(map[string]struct{}, 64)
			for _, f := range s.x.fields {
				s.seen[f.name] = struct{}{}
			}
		}
		if _, dup := s.seen[name]; dup {
			return ErrDuplicateKey
		}
		s.seen[name] = struct{}{}
	}
	s.x.fields = append(s.x.fields, field{name: name})
	return nil
}

// keyName decodes a key (a valid JSON string with its quotes): escapes
// count, so "mod\u0065l" is "model"; bytes that are not UTF-8 are kept as
// they are (as gjson, which reads the fields afterwards, keeps them).
func keyName(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1])
	}
	return gjson.ParseBytes(raw).Str
}

// array reads an array at depth d; items, when not nil, receives the span
// of each element.
func (s *scanner) array(d int, items *[]span) error {
	if empty, err := s.open(d, ']'); empty || err != nil {
		return err
	}
	return s.elements(d, items)
}

// elements reads an array's elements from s.i (at one) to its end.
func (s *scanner) elements(d int, items *[]span) error {
	for {
		start := s.i
		if err := s.value(d); err != nil {
			return err
		}
		if items != nil {
			*items = append(*items, span{start, s.i})
		}
		if end, err := s.next(']'); end || err != nil {
			return err
		}
	}
}
