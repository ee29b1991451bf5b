package dialect

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tidwall/gjson"
)

// An item resent in a later request (or repeated within one) reads the same
// from the memo as when it was decoded, at its own position.
func TestMessagesResentFromMemo(t *testing.T) {
	item := `{"role":"assistant","content":[{"type":"text","text":"memo check: reading the file"},{"type":"tool_use","id":"toolu_m1","name":"Read","input":{"file_path":"/x.go"}}]}`
	body := []byte(`{"model":"m","messages":[` + item + `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_m1","content":"package x"}]},` + item + `]}`)
	memo.mu.Lock()
	memo.m = nil
	memo.mu.Unlock()
	parse := func() []Message {
		v, err := Parse(AnthropicMessages, "/v1/messages", nil, body)
		if err != nil {
			t.Fatal(err)
		}
		return v.Messages()
	}
	first := parse()
	if len(first) != 3 || first[0].Index != 0 || first[2].Index != 2 {
		t.Fatalf("messages %+v", first)
	}
	if first[0].Text != "memo check: reading the file" || len(first[0].ToolCalls) != 1 || string(first[0].ToolCalls[0].Arguments) != `{"file_path":"/x.go"}` {
		t.Errorf("item read as %+v", first[0])
	}
	memo.mu.Lock()
	n := len(memo.m)
	memo.mu.Unlock()
	if n != 2 {
		t.Errorf("memo holds %d items, want the 2 distinct ones", n)
	}
	if diff := cmp.Diff(first, parse()); diff != "" {
		t.Errorf("resent request reads differently (-first +resent):\n%s", diff)
	}
}

// A request that extends a remembered one takes the shared prefix from the
// list memo; whatever it takes, it reads exactly as a request parsed item by
// item with no memo: growing, forking at an earlier item, resent, and
// shrinking (a compaction).
func TestMessagesFromRememberedPrefix(t *testing.T) {
	item := func(i int, who string) string {
		if who == "user" {
			return `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_` + strconv.Itoa(i) + `","content":"out ` + strconv.Itoa(i) + `"}]}`
		}
		return `{"role":"assistant","content":[{"type":"text","text":"step ` + strconv.Itoa(i) + `"},{"type":"tool_use","id":"toolu_` + strconv.Itoa(i) + `","name":"Read","input":{"n":` + strconv.Itoa(i) + `}}]}`
	}
	var hist []string
	for i := range 40 {
		hist = append(hist, item(i, "assistant"), item(i, "user"))
	}
	body := func(items []string) []byte {
		return []byte(`{"model":"m","messages":[{"role":"user","content":"prefix check"},` + strings.Join(items, ",") + `]}`)
	}
	fresh := func(b []byte) []Message {
		v, err := Parse(AnthropicMessages, "/v1/messages", nil, b)
		if err != nil {
			t.Fatal(err)
		}
		var out []Message
		for i := range v.NumItems() {
			out = append(out, anthropicMessage(i, gjson.ParseBytes(v.Item(i))))
		}
		return out
	}
	type seen struct {
		name string
		body []byte
		msgs []Message
	}
	var views []seen
	forked := slices.Clone(hist[:30])
	forked[20] = item(99, "assistant")
	for _, tc := range []struct {
		name  string
		items []string
	}{
		{"first", hist[:10]},
		{"grown by two", hist[:12]},
		{"grown by two again", hist[:14]},
		{"resent", hist[:14]},
		{"grown by many", hist[:30]},
		{"fork at an earlier item, same last item", forked},
		{"back on the first branch", hist[:42]},
		{"extends it", hist[:44]},
		{"extends the same list another way", append(slices.Clone(hist[:42]), item(77, "assistant"))},
		{"shrunk", hist[30:34]},
	} {
		b := body(tc.items)
		v, err := Parse(AnthropicMessages, "/v1/messages", nil, b)
		if err != nil {
			t.Fatal(err)
		}
		got := v.Messages()
		if diff := cmp.Diff(fresh(b), got); diff != "" {
			t.Errorf("%s: reads differently from an item-by-item parse (-want +got):\n%s", tc.name, diff)
		}
		views = append(views, seen{tc.name, b, got})
	}
	// A reader appending to its messages must not reach what later
	// requests wrote in place.
	for _, s := range views {
		_ = append(s.msgs, Message{Text: "appended by a reader"})
	}
	// Later requests extended earlier lists in place: what each earlier
	// request read is unchanged.
	for _, s := range views {
		if diff := cmp.Diff(fresh(s.body), s.msgs); diff != "" {
			t.Errorf("%s: changed by later requests (-want +got):\n%s", s.name, diff)
		}
	}
}

// Two conversations that end in the same item (a user's "yes") are two
// remembered lists: the next request of each extends its own.
func TestListsOfConversationsEndingAlike(t *testing.T) {
	body := func(topic string, extra ...string) []byte {
		items := []string{`{"role":"user","content":"` + topic + `: plan the work"}`, `{"role":"assistant","content":"Here is a plan for ` + topic + `."}`,
			`{"role":"user","content":"yes"}`}
		return []byte(`{"model":"m","messages":[` + strings.Join(append(items, extra...), ",") + `]}`)
	}
	parse := func(b []byte) *View {
		v, err := Parse(AnthropicMessages, "/v1/messages", nil, b)
		if err != nil {
			t.Fatal(err)
		}
		v.Messages()
		return v
	}
	for _, topic := range []string{"billing", "search"} {
		parse(body(topic))
	}
	for _, topic := range []string{"billing", "search"} {
		v, err := Parse(AnthropicMessages, "/v1/messages", nil, body(topic, `{"role":"assistant","content":"On it."}`))
		if err != nil {
			t.Fatal(err)
		}
		prev, _, _ := lists.prefix(v.ItemKeys(), v.PrefixIDs())
		if len(prev) < 3 || prev[0].Text != topic+": plan the work" {
			t.Errorf("%s: the next request extends no remembered list of its own (found %d messages)", topic, len(prev))
		}
	}
}

// TestListMemoSizes: a list's size, counted from the list it extends and
// its new items, is the raw bytes of all its items, and the memo's size
// is its lists'.
func TestListMemoSizes(t *testing.T) {
	recallSmall(t)
	for turn := 1; turn <= 30; turn++ {
		v, err := ParseFrom(t.Name(), AnthropicMessages, "/v1/messages", nil, agentBody(5, turn, false))
		if err != nil {
			t.Fatal(err)
		}
		v.Messages()
	}
	lists.mu.Lock()
	defer lists.mu.Unlock()
	total := 0
	for _, l := range lists.m {
		n := 0
		for _, k := range l.keys {
			n += k.N
		}
		if n != l.size {
			t.Fatalf("a list of %d items counts %d bytes, holds %d", len(l.keys), l.size, n)
		}
		total += l.size
	}
	if total != lists.size {
		t.Fatalf("the lists hold %d bytes, the memo counts %d", total, lists.size)
	}
}
