package dialect

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// agentHistory builds a Claude Code–shaped body of about size bytes: text
// turns, tool_use and tool_result blocks.
func agentHistory(size int) []byte {
	var b strings.Builder
	b.WriteString(`{"model":"claude","messages":[`)
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"role":"user","content":[{"type":"text","text":%q}]},`, strings.Repeat("please look at the inventory service and its repository layer; ", 3))
		fmt.Fprintf(&b, `{"role":"assistant","content":[{"type":"text","text":"ok"},{"type":"tool_use","id":"t%d","name":"Bash","input":{"command":"grep -rn \"x\" ."}}]},`, i)
		fmt.Fprintf(&b, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"t%d","content":%q}]}`, i, strings.Repeat("main.go:1: x\n", 30))
	}
	b.WriteString(`],"system":"You are a coding agent."}`)
	return []byte(b.String())
}

// BenchmarkMessages200KiB: the conversation of a 200 KiB agent request,
// the first time (every item decoded) and resent (items found in the memo).
func BenchmarkMessages200KiB(b *testing.B) {
	body := agentHistory(200 << 10)
	for _, resent := range []bool{false, true} {
		b.Run(map[bool]string{false: "first", true: "resent"}[resent], func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if !resent {
					memo.mu.Lock()
					memo.m = nil
					memo.mu.Unlock()
				}
				v, err := Parse(AnthropicMessages, "/v1/messages", nil, body)
				if err != nil {
					b.Fatal(err)
				}
				if len(v.Messages()) == 0 {
					b.Fatal("no messages")
				}
			}
		})
	}
}

// BenchmarkParse1MiB: the one pass over a 1 MiB agent history (validation,
// depth and duplicate-field checks, the index every later reader uses).
func BenchmarkParse1MiB(b *testing.B) {
	body := agentHistory(1 << 20)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(AnthropicMessages, "/v1/messages", nil, body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseFrom: an agent's next request (the previous one with one
// more tool call and its result, system prompt and tools after the
// history, the cache breakpoint moved) parsed with ParseFrom after the
// previous one, against Parse of the same body.
func BenchmarkParseFrom(b *testing.B) {
	for _, size := range []int{200 << 10, 2 << 20} {
		turns := size / 1200
		prev, next := agentBody(1, turns, true), agentBody(1, turns+1, true)
		b.Run(fmt.Sprintf("%dKiB/Parse", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(next)))
			for b.Loop() {
				if _, err := Parse(AnthropicMessages, "/v1/messages", nil, next); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("%dKiB/ParseFrom", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(next)))
			for b.Loop() {
				b.StopTimer()
				scope := fmt.Sprint(b.N, rand.Uint64())
				if _, err := ParseFrom(scope, AnthropicMessages, "/v1/messages", nil, prev); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, err := ParseFrom(scope, AnthropicMessages, "/v1/messages", nil, next); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSessionTurns: what every request of an agent's growing session
// costs the index: ParseFrom of the next body (one more tool call and its
// result), its item keys and its prefix ids, as the hooks ask for them.
// Turns 340–380 of a session (about 200 KiB), then a new session.
func BenchmarkSessionTurns(b *testing.B) {
	const first, turns = 340, 380
	bodies := make([][]byte, 0, turns-first)
	for n := first; n < turns; n++ {
		bodies = append(bodies, agentBody(1, n, true))
	}
	b.SetBytes(int64(len(bodies[len(bodies)-1])))
	b.ReportAllocs()
	scope := ""
	i := 0
	for b.Loop() {
		if i%len(bodies) == 0 {
			// A new session: its first body is parsed whole, untimed.
			b.StopTimer()
			scope = fmt.Sprint(rand.Uint64())
			v, err := ParseFrom(scope, AnthropicMessages, "/v1/messages", nil, bodies[0])
			if err != nil {
				b.Fatal(err)
			}
			v.PrefixIDs()
			i++
			b.StartTimer()
		}
		v, err := ParseFrom(scope, AnthropicMessages, "/v1/messages", nil, bodies[i%len(bodies)])
		if err != nil {
			b.Fatal(err)
		}
		if len(v.ItemKeys()) != len(v.PrefixIDs()) {
			b.Fatal("keys and ids differ")
		}
		i++
	}
}
