package compaction

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/dialect"
)

// history1MiB builds a Claude Code style body of about 1 MiB: many turns of
// text and tool calls, then the system prompt and tools after the messages,
// as Claude Code orders them.
func history1MiB(last string) []byte {
	var b strings.Builder
	b.WriteString(`{"model":"claude","messages":[`)
	for i := 0; b.Len() < 1<<20; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"role":"user","content":[{"type":"text","text":%q}]},`, strings.Repeat("please look at the inventory service and its repository layer; ", 20)+"see \"main.go\"")
		fmt.Fprintf(&b, `{"role":"assistant","content":[{"type":"text","text":"ok"},{"type":"tool_use","id":"t%d","name":"Bash","input":{"command":"grep -rn \"x\" ."}}]},`, i)
		fmt.Fprintf(&b, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"t%d","content":%q}]}`, i, strings.Repeat("main.go:1: x\n", 30))
	}
	fmt.Fprintf(&b, `,{"role":"user","content":[{"type":"text","text":%q}]}]`, last)
	b.WriteString(`,"system":[{"type":"text","text":"You are a Claude agent"}],"tools":[{"name":"Bash","input_schema":{"type":"object"}}],"stream":true}`)
	return []byte(b.String())
}

// BenchmarkClassify1MiB is classification in a conversation's steady
// state: the request's items were seen before (the memo of item verdicts
// is warm) and its item keys are made (the one hashing pass that lineage
// resolution shares). BenchmarkClassify1MiBFirstSeen is a history seen for
// the first time: a fresh View and empty memos, so it includes the item
// keys and every tail item's decoding.
func BenchmarkClassify1MiB(b *testing.B) {
	for _, tc := range []struct{ name, last string }{
		{"main", "Now add a users table."},
		{"compaction", claudeCritical + "\n\n" + claudeTask},
	} {
		b.Run(tc.name, func(b *testing.B) {
			body := history1MiB(tc.last)
			v, err := dialect.Parse(dialect.AnthropicMessages, "/v1/messages", http.Header{}, body)
			if err != nil {
				b.Fatal(err)
			}
			rs := Default()
			want := tc.name == "compaction"
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if got := rs.Classify(v); got.Compaction != want {
					b.Fatalf("Compaction = %v", got.Compaction)
				}
			}
		})
	}
}

func BenchmarkClassify1MiBFirstSeen(b *testing.B) {
	base := history1MiB("Now add a users table.")
	rs := Default()
	b.SetBytes(int64(len(base)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		// Every item made new (same length, so the JSON stays valid): no
		// memo has seen them.
		b.StopTimer()
		i++
		body := bytes.ReplaceAll(base, []byte("please look"), fmt.Appendf(nil, "%011d", i))
		body = bytes.ReplaceAll(body, []byte("Bash"), []byte(strconv.FormatInt(int64(36*36*36+i%(36*36*36*35)), 36)))
		body = bytes.ReplaceAll(body, []byte("main.go:1: x"), fmt.Appendf(nil, "%012d", i))
		v, err := dialect.Parse(dialect.AnthropicMessages, "/v1/messages", http.Header{}, body)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if got := rs.Classify(v); got.Compaction {
			b.Fatal("classified as compaction")
		}
	}
}

// BenchmarkClassifyNextTurn is classification of an agent's next request:
// the 1 MiB history before it was classified, and the request adds a tool
// call and its result no memo has seen. Parsing (ParseFrom, as the server
// parses) and the item keys (made once per request, shared with lineage
// resolution) are not timed.
func BenchmarkClassifyNextTurn(b *testing.B) {
	base := history1MiB("Now add a users table.")
	cut := bytes.LastIndex(base, []byte(`],"system":`)) // the tool loop follows the user's message
	rs := Default()
	var grown []byte // the tool calls of the session so far
	next := func(i int) *dialect.View {
		if i%64 == 0 {
			grown = grown[:0] // a new session now and then: the history stays near 1 MiB
		}
		grown = fmt.Appendf(grown,
			`,{"role":"assistant","content":[{"type":"tool_use","id":"n%d","name":"Read","input":{"file_path":"/repo/f%d.go"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"n%d","content":"package x // %d"}]}`, i, i, i, i)
		body := append(append(append([]byte{}, base[:cut]...), grown...), base[cut:]...)
		v, err := dialect.ParseFrom("bench", dialect.AnthropicMessages, "/v1/messages", http.Header{}, body)
		if err != nil {
			b.Fatal(err)
		}
		v.ItemKeys()
		return v
	}
	rs.Classify(next(0))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		v := next(i)
		b.StartTimer()
		if got := rs.Classify(v); got.Compaction {
			b.Fatal("a main turn classified as compaction")
		}
	}
}

// BenchmarkClassifyClaudeCodeTurn is the classification of a Claude Code
// tool-loop turn as Claude Code sends it: about 90 KiB of history opening
// with Claude Code's first message (its system reminders, 7 KB), then its
// system prompt (27 KB) and tools (82 KB), all taken from a captured
// request. The View is fresh, as every request's is, and parsed
// as the server parses (ParseFrom); its item keys and prefix ids are made
// before the clock runs (lineage shares them), and the memos are warm from
// the turn before.
func BenchmarkClassifyClaudeCodeTurn(b *testing.B) {
	var req struct {
		System   json.RawMessage   `json:"system"`
		Tools    json.RawMessage   `json:"tools"`
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(loadCaptures(b, "testdata/claude.jsonl")[0].Body, &req); err != nil {
		b.Fatal(err)
	}
	body := func(turns int) []byte {
		var h strings.Builder
		fmt.Fprintf(&h, `{"model":"claude","messages":[%s`, req.Messages[0])
		for i := range turns {
			fmt.Fprintf(&h, `,{"role":"assistant","content":[{"type":"tool_use","id":"t%d","name":"Bash","input":{"command":"grep -rn \"x\" ."}}]}`, i)
			fmt.Fprintf(&h, `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"t%d","content":%q}]}`, i, strings.Repeat("main.go:1: x\n", 30))
		}
		fmt.Fprintf(&h, `],"system":%s,"tools":%s,"stream":true}`, req.System, req.Tools)
		return []byte(h.String())
	}
	prev, next := body(180), body(181)
	rs := Default()
	parse := func(body []byte) *dialect.View {
		v, err := dialect.ParseFrom(b.Name(), dialect.AnthropicMessages, "/v1/messages", http.Header{}, body)
		if err != nil {
			b.Fatal(err)
		}
		v.ItemKeys()
		v.PrefixIDs()
		return v
	}
	rs.Classify(parse(prev))
	b.SetBytes(int64(len(next)))
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		v := parse(next)
		b.StartTimer()
		if got := rs.Classify(v); got.Any() {
			b.Fatalf("a tool-loop turn classified %+v", got)
		}
	}
}
