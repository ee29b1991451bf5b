package dialect

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestParseRefusesHostileStructure(t *testing.T) {
	nest := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	manyKeys := func(n int) string {
		var b strings.Builder
		b.WriteString(`{"model":"m"`)
		for i := range n - 1 {
			fmt.Fprintf(&b, `,"k%d":0`, i)
		}
		return b.String() + "}"
	}
	cases := []struct {
		name string
		body string
		want error // nil: accepted
	}{
		{"plain", `{"model":"m","messages":[]}`, nil},
		{"at the depth limit", `{"model":"m","x":` + nest(MaxDepth-1) + `}`, nil},
		{"one level over", `{"model":"m","x":` + nest(MaxDepth) + `}`, ErrTooDeep},
		{"deep objects", `{"model":"m","x":` + strings.Repeat(`{"a":`, MaxDepth) + "1" + strings.Repeat("}", MaxDepth) + `}`, ErrTooDeep},
		{"unclosed deep array", `{"model":"m","messages":` + strings.Repeat("[", 1<<20), ErrTooDeep},
		{"brackets inside strings do not count", `{"model":"m","x":"` + strings.Repeat("[{", 4*MaxDepth) + `"}`, nil},
		{"escaped quote keeps the string open", `{"model":"m","x":"\"` + strings.Repeat("[", 2*MaxDepth) + `"}`, nil},
		{"escaped backslash closes the string", `{"model":"m","x":"\\",` + `"y":` + nest(MaxDepth+1) + `}`, ErrTooDeep},
		{"duplicate model", `{"model":"a","messages":[],"model":"b"}`, ErrDuplicateKey},
		{"duplicate after unescaping", `{"model":"a","mod\u0065l":"b"}`, ErrDuplicateKey},
		{"same key nested is fine", `{"model":"a","metadata":{"model":"b"}}`, nil},
		{"fields at the limit", manyKeys(MaxTopLevelKeys), nil},
		{"too many fields", manyKeys(MaxTopLevelKeys + 1), ErrTooManyFields},
		{"array", `[1]`, ErrInvalidJSON},
		{"truncated", `{"model":"m"`, ErrInvalidJSON},
	}
	for _, tc := range cases {
		_, err := Parse(OpenAIChat, "/v1/chat/completions", nil, []byte(tc.body))
		if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("%s: Parse error %v, want %v", tc.name, err, tc.want)
		}
	}
}

// jsonDepth is the nesting depth of valid JSON per encoding/json's
// tokenizer: an independent reading of the same bytes.
// checkIndex compares the one-pass index of an accepted body with what
// gjson reads from the same bytes: every top-level field's raw value, and
// the items of the conversation array.
func checkIndex(t *testing.T, v *View, body []byte) {
	t.Helper()
	n := 0
	gjson.ParseBytes(body).ForEach(func(k, val gjson.Result) bool {
		n++
		raw, ok := v.Field(k.Str)
		if !ok || string(raw) != val.Raw {
			t.Fatalf("Field(%q) = %q, %v; gjson reads %q in %q", k.Str, raw, ok, val.Raw, body)
		}
		return true
	})
	if n != len(v.idx.fields) {
		t.Fatalf("index has %d fields, gjson %d: %q", len(v.idx.fields), n, body)
	}
	conv := gjson.GetBytes(body, gjson.Escape(convKey(v.Dialect())))
	var want []string
	if conv.IsArray() {
		for _, it := range conv.Array() {
			want = append(want, it.Raw)
		}
	}
	var got []string
	for _, it := range v.Items() {
		got = append(got, string(it))
	}
	if strings.Join(got, "\x00") != strings.Join(want, "\x00") || len(got) != len(want) {
		t.Fatalf("Items() = %q, gjson reads %q in %q", got, want, body)
	}
}

func jsonDepth(body []byte) (int, error) {
	d := json.NewDecoder(bytes.NewReader(body))
	depth, cur := 0, 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return depth, nil
		}
		if err != nil {
			return 0, err
		}
		switch tok {
		case json.Delim('['), json.Delim('{'):
			cur++
			depth = max(depth, cur)
		case json.Delim(']'), json.Delim('}'):
			cur--
		}
	}
}

// FuzzParse: Parse never panics or overflows the stack, and on bytes that
// encoding/json also reads it agrees on depth and object-ness: a body it
// accepts is a JSON object nesting at most MaxDepth levels; ErrTooDeep only
// for bodies that nest deeper.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"m","model":"n"}`,
		`{"model":"m","x":"[[[[\"[[["}`,
		`{"model":"m","x":` + strings.Repeat("[", MaxDepth+1),
		`{"model":"m","messages":` + strings.Repeat("[", 64<<10), // the crash, shortened
		"", "null", "[]", "{}", `{"a":"\\"}`, "\xff\xfe",
		`{"mod\u0065l":"m","messages":[1, {"a":[]} ,"x\"y"] ,"system":-1.5e3}`,
		"{\"a\":\"\x01\"}", `{"a":01}`, `{"a":1.}`, `{"a":"\u12"}`, `{"messages":[],"messages":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		v, err := Parse(AnthropicMessages, "/v1/messages", nil, body)
		if !json.Valid(body) {
			if err == nil {
				t.Fatalf("accepted invalid JSON %q", body)
			}
			return
		}
		depth, derr := jsonDepth(body)
		if derr != nil {
			return // encoding/json's own depth limit
		}
		if Valid(body) != (depth <= MaxDepth) {
			t.Fatalf("Valid = %v for valid JSON of depth %d: %q", Valid(body), depth, body)
		}
		switch {
		case err == nil:
			if depth > MaxDepth || v.Get("@this").Type.String() != "JSON" || !bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) {
				t.Fatalf("accepted %q (depth %d)", body, depth)
			}
			checkIndex(t, v, body)
		case errors.Is(err, ErrTooDeep):
			if depth <= MaxDepth {
				t.Fatalf("ErrTooDeep for depth %d: %q", depth, body)
			}
		case depth > MaxDepth:
			t.Fatalf("depth %d refused with %v, want ErrTooDeep", depth, err)
		}
	})
}

// special finds the first quote, backslash or control byte of a word,
// wherever it is and whatever surrounds it (bytes above 0x7f included).
func TestSpecialFindsFirstStopByte(t *testing.T) {
	fill := []byte{'a', ' ', 0x7f, 0x80, 0xa0, 0xdc, 0xa2, 0xff, '!', '#', '[', ']'}
	for _, stop := range []byte{'"', '\\', 0x00, 0x01, 0x1f, '\n'} {
		for pos := range 8 {
			for _, f := range fill {
				var w [8]byte
				for i := range w {
					w[i] = f
				}
				w[pos] = stop
				m := special(binary.LittleEndian.Uint64(w[:]))
				if m == 0 || bits.TrailingZeros64(m)>>3 != pos {
					t.Fatalf("stop %#x at %d among %#x: mask %#x", stop, pos, f, m)
				}
			}
		}
	}
	for _, f := range fill {
		var w [8]byte
		for i := range w {
			w[i] = f
		}
		if m := special(binary.LittleEndian.Uint64(w[:])); m != 0 {
			t.Fatalf("no stop byte among %#x, mask %#x", f, m)
		}
	}
}
