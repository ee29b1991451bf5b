package dialect

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tether-dev/tether/internal/capsule"
	"github.com/tidwall/gjson"
)

// A content block's cache breakpoint, which agents move to the newest
// message every turn, is not part of an item's key; anything else that
// differs is.
func TestItemKeyIgnoresCacheBreakpoint(t *testing.T) {
	const cc = `"cache_control":{"type":"ephemeral"}`
	plain := `{"role":"user","content":[{"type":"text","text":"keep Postgres"},{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}`
	same := []string{
		`{"role":"user","content":[{"type":"text","text":"keep Postgres"},{"type":"tool_result","tool_use_id":"t1","content":"ok",` + cc + `}]}`,
		`{"role":"user","content":[{"type":"text","text":"keep Postgres",` + cc + `},{"type":"tool_result","tool_use_id":"t1","content":"ok",` + cc + `}]}`,
		`{"role":"user","content":[{` + cc + `,"type":"text","text":"keep Postgres"},{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}`,
		`{"role":"user","content":[{"type":"text","text":"keep Postgres"},{"type":"tool_result","tool_use_id":"t1","content":"ok","cache_control":{"type":"ephemeral","ttl":"1h"}}]}`,
		// A value that cannot hold a capsule tag, whatever else it holds.
		`{"role":"user","content":[{"type":"text","text":"keep Postgres"},{"type":"tool_result","tool_use_id":"t1","content":"ok","cache_control":{"type":"ephemeral","scope":"per-turn"}}]}`,
		// A member named twice (JSON allows it): both go, and what is
		// left is still JSON.
		`{"role":"user","content":[{` + cc + `,` + cc + `,"type":"text","text":"keep Postgres"},{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}`,
		`{"role":"user","content":[{"type":"text","text":"keep Postgres",` + cc + `,` + cc + `},{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}`,
	}
	different := map[string]string{
		"another text":                          `{"role":"user","content":[{"type":"text","text":"keep MySQL"},{"type":"tool_result","tool_use_id":"t1","content":"ok",` + cc + `}]}`,
		"a breakpoint inside a tool's input":    `{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Edit","input":{` + cc + `}}]}`,
		"a breakpoint on the item, not a block": `{"role":"user",` + cc + `,"content":[{"type":"text","text":"keep Postgres"},{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}`,
		"a value that could spell a tag":        `{"role":"user","content":[{"type":"text","text":"keep Postgres"},{"type":"tool_result","tool_use_id":"t1","content":"ok","cache_control":{"type":"` + capsule.Marker + ` "}}]}`,
		"an escaped value":                      `{"role":"user","content":[{"type":"text","text":"keep Postgres"},{"type":"tool_result","tool_use_id":"t1","content":"ok","cache_control":{"type":"\u0065phemeral"}}]}`,
		"a breakpoint spelt with an escape":     `{"role":"user","content":[{"type":"text","text":"keep Postgres"},{"type":"tool_result","tool_use_id":"t1","content":"ok","cache_contr\u006fl":{"type":"ephemeral"}}]}`,
	}
	for _, name := range []Name{AnthropicMessages, OpenAIChat} {
		want := memo.key(name, []byte(plain))
		for _, s := range same {
			if got := memo.key(name, []byte(s)); got != want {
				t.Errorf("%s: %s has key %v, want the key of the item without its breakpoints %v", name, s, got, want)
			}
		}
		for what, s := range different {
			plainKey := want
			if what == "a breakpoint inside a tool's input" {
				plainKey = memo.key(name, []byte(`{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Edit","input":{}}]}`))
			}
			if got := memo.key(name, []byte(s)); got == plainKey {
				t.Errorf("%s: %s (%s) shares a key with the item without it", name, what, s)
			}
		}
	}
	// Other dialects have no breakpoints: their bytes are their key.
	withCC := []byte(same[0])
	if memo.key(OpenAIResponses, withCC) == memo.key(OpenAIResponses, []byte(plain)) {
		t.Error("Responses items differing in a cache_control member share a key")
	}
}

// What every reader takes from an item with a breakpoint is what it takes
// from the item without: its message, and for the body the items of a
// Claude Code session whose breakpoint moves every turn, the prefix ids it
// shares with the request before it (so the memos keyed by them answer).
func TestBreakpointMovingEveryTurn(t *testing.T) {
	tool := func(i int, cc bool) string {
		b := ""
		if cc {
			b = `,"cache_control":{"type":"ephemeral"}`
		}
		return fmt.Sprintf(`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_%d","name":"Read","input":{"file_path":"/f%d.go"}}]},`+
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%d","content":%q%s}]}`, i, i, i, bytes.Repeat([]byte("func f() {}\n"), 40), b)
	}
	body := func(turns int) []byte {
		var b bytes.Buffer
		b.WriteString(`{"model":"claude-x","max_tokens":1024,"messages":[{"role":"user","content":[{"type":"text","text":"Use Postgres, not Mongo."}]}`)
		for i := range turns {
			b.WriteString("," + tool(i, i == turns-1))
		}
		b.WriteString(`],"system":[{"type":"text","text":"You are Claude Code.","cache_control":{"type":"ephemeral"}}],"metadata":{"user_id":"u"}}`)
		return b.Bytes()
	}
	scope := t.Name()
	var prev *View
	for turns := 40; turns < 46; turns++ {
		b := body(turns)
		v, err := ParseFrom(scope, AnthropicMessages, "/v1/messages", nil, b)
		if err != nil {
			t.Fatal(err)
		}
		fresh, err := Parse(AnthropicMessages, "/v1/messages", nil, b)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(fresh.Messages(), v.Messages()); diff != "" {
			t.Fatalf("turn %d reads differently from a fresh parse (-fresh +recalled):\n%s", turns, diff)
		}
		if prev != nil {
			n := len(prev.PrefixIDs())
			if !cmp.Equal(prev.PrefixIDs(), v.PrefixIDs()[:n]) {
				t.Errorf("turn %d: the prefix ids of the request before (its last item had the breakpoint) are not this request's first %d", turns, n)
			}
		}
		prev = v
	}
}

// Whatever an item holds, the item without its breakpoints is valid JSON
// and reads as the same message.
func FuzzBreakpoints(f *testing.F) {
	f.Add(`{"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}}]}`)
	f.Add(`{"role":"user","content":[{"cache_control":{"type":"ephemeral"} , "type":"text","text":"a"}]}`)
	f.Add(`{"role":"user","content":[{"cache_control":{}}]}`)
	f.Add(`{"content":[{"cache_control":{},"cache_control":{} , "type":"text"}]}`)
	f.Add(`{"content":[{"type":"text","cache_control":{},"cache_control":{"a":"b"},"x":1,"cache_control":{}}]}`)
	f.Add(`{"content":[{"cache_control":{"type":"e-x"},"cache_control":{},"cache_control":{}}]}`)
	f.Add(`{"content":[{"type":"tool_use","input":{"cache_control":1},"cache_control":[1,{"a":2}]}],"content":[{"cache_control":null}]}`)
	f.Fuzz(func(t *testing.T, item string) {
		body := []byte(`{"messages":[` + item + `]}`)
		v, err := Parse(AnthropicMessages, "/v1/messages", nil, body)
		if err != nil || v.NumItems() != 1 {
			return
		}
		norm, ok := withoutBreakpoints(nil, v.Item(0))
		if !ok {
			return
		}
		w, err := Parse(AnthropicMessages, "/v1/messages", nil, []byte(`{"messages":[`+string(norm)+`]}`))
		if err != nil {
			t.Fatalf("%s without its breakpoints is %s: %v", item, norm, err)
		}
		if diff := cmp.Diff(parseItem(v), parseItem(w)); diff != "" {
			t.Fatalf("%s reads differently without its breakpoints (%s):\n%s", item, norm, diff)
		}
	})
}

// parseItem decodes a View's first item afresh, without the memos.
func parseItem(v *View) []Message {
	parse := v.parser()
	return []Message{parse(0, gjson.ParseBytes(v.Item(0)))}
}

// The first request to extend another extends its keys and ids in place;
// another one extending the same request copies them. Every request keeps
// reading its own keys and ids, as a fresh parse makes them, whatever the
// others appended.
func TestKeysExtendedInPlaceAcrossForks(t *testing.T) {
	recallSmall(t)
	// A history of tool calls whose results are outs; cc[i] puts a cache
	// breakpoint on result i.
	body := func(outs []string, cc ...int) []byte {
		var b strings.Builder
		b.WriteString(`{"role":"user","content":[{"type":"text","text":"Use Postgres."}]}`)
		for i, out := range outs {
			mark := ""
			if slices.Contains(cc, i) {
				mark = `,"cache_control":{"type":"ephemeral"}`
			}
			fmt.Fprintf(&b, `,{"role":"assistant","content":[{"type":"tool_use","id":"t%d","name":"Read","input":{"n":%d}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t%d","content":"%s"%s}]}`, i, i, i, out, mark)
		}
		return []byte(`{"model":"m","max_tokens":9,"messages":[` + b.String() + `],"system":"s"}`)
	}
	// d, padded so that the second request's last item ends a block of
	// the recall's comparison: the last request then shares more with it
	// than with the third.
	d := "d"
	for ; ; d += "." {
		v, err := Parse(AnthropicMessages, "/p", nil, body([]string{"a", "b", "c", d}, 3))
		if err != nil {
			t.Fatal(err)
		}
		if _, end, _ := v.ItemsSpan(); end%recalled.block == 0 {
			break
		}
	}
	bodies := [][]byte{
		body([]string{"a", "b", "c"}, 2),
		body([]string{"a", "b", "c", d}, 3), // the breakpoint moved: extends the first in place (and replaces it in the recall)
		// And again, with a second breakpoint on an earlier item: the
		// same keys, but not the second request's bytes up to its last
		// item, so the second stays in the recall beside it.
		body([]string{"a", "b", "c", d, "e"}, 2, 4),
		// The second request's history with its breakpoint kept and
		// another result: it extends the second request too, which the
		// third extended already, so it copies.
		body([]string{"a", "b", "c", d, "x"}, 3, 4),
	}
	var views []*View
	for _, b := range bodies {
		views = append(views, sameParse(t, t.Name(), AnthropicMessages, b))
	}
	shares := func(i, j int) bool { return &(*views[i].rec.keys.Load())[0] == &(*views[j].rec.keys.Load())[0] }
	if !shares(0, 1) || !shares(1, 2) {
		t.Error("the requests that extend the one before did not extend its keys in place")
	}
	if views[3].from != views[1].rec {
		t.Fatal("the last request does not extend the second: the test misses its case")
	}
	if shares(1, 3) {
		t.Error("the second request extending the same one shares its keys")
	}
	for i, v := range views {
		fresh, err := Parse(AnthropicMessages, "/p", nil, bodies[i])
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(v.ItemKeys(), fresh.ItemKeys()) || !reflect.DeepEqual(v.PrefixIDs(), fresh.PrefixIDs()) {
			t.Errorf("request %d: its keys or ids changed after the requests that extended it", i)
		}
	}
}
