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

// BenchmarkConversationsOfOnePrincipal: what the load run's 64 clients
// cost the index, all of one principal: 64 Claude Code sessions whose
// first message opens with the same 7 KB of system reminders, each request
// resending a shared 90 KiB history, the session's own tool calls (one
// more each turn) and 100 KiB of system prompt and tools; the sessions
// take turns, one request each. Each request is ParseFrom, its item keys,
// prefix ids and messages, as the hooks ask for them. A session starts
// over after 40 turns (its first body parsed whole, untimed).
func BenchmarkConversationsOfOnePrincipal(b *testing.B) {
	const convs, turns = 64, 40
	opener := strings.Repeat(`<system-reminder>the same reminders in every session, every turn</system-reminder>\n`, 80)
	var middle strings.Builder
	for i := 0; middle.Len() < 90<<10; i++ {
		fmt.Fprintf(&middle, `,{"role":"assistant","content":[{"type":"text","text":"Looking at the inventory code."},{"type":"tool_use","id":"toolu_%04d","name":"Bash","input":{"command":"grep -rn Inventory internal/"}}]}`, i)
		fmt.Fprintf(&middle, `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%04d","content":%q}]}`, i, strings.Repeat("internal/inventory/service.go:42:\tfunc (s *Service) Reserve(ctx context.Context) error {\n", 12))
	}
	tail := fmt.Sprintf(`],"system":[{"type":"text","text":%q}],"tools":[{"name":"Bash","description":%q,"input_schema":{"type":"object"}}],"metadata":{"user_id":"u"}}`,
		strings.Repeat("You are Claude Code. ", 1500), strings.Repeat("Runs a shell command. ", 3300))
	body := func(buf []byte, conv, session, turn int) []byte {
		b := fmt.Appendf(buf[:0], `{"model":"claude-x","max_tokens":1024,"messages":[{"role":"user","content":[{"type":"text","text":%q},{"type":"text","text":"Session %d-%d"}]}`, opener, conv, session)
		b = append(b, middle.String()...)
		for i := range turn {
			cc := ""
			if i == turn-1 {
				cc = `,"cache_control":{"type":"ephemeral"}`
			}
			b = fmt.Appendf(b, `,{"role":"assistant","content":[{"type":"tool_use","id":"toolu_new_%d","name":"Read","input":{"file_path":"/repo/f%d.go"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_new_%d","content":"package inventory\n"%s}]}`, i, i, i, cc)
		}
		return append(b, tail...)
	}
	parse := func(b testing.TB, body []byte) {
		v, err := ParseFrom("principal", AnthropicMessages, "/v1/messages", nil, body)
		if err != nil {
			b.Fatal(err)
		}
		if len(v.ItemKeys()) != len(v.PrefixIDs()) || len(v.Messages()) != len(v.ItemKeys()) {
			b.Fatal("keys, ids and messages differ")
		}
	}
	buf := make([]byte, 0, 512<<10)
	session := make([]int, convs)
	start := func(c int) {
		session[c]++
		parse(b, body(buf, c, session[c], 1))
	}
	for c := range convs {
		start(c)
	}
	b.SetBytes(int64(len(body(buf, 0, 0, turns/2))))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		c, turn := i%convs, 2+(i/convs)%(turns-1)
		b.StopTimer()
		if turn == 2 && i >= convs {
			start(c)
		}
		next := body(buf, c, session[c], turn)
		b.StartTimer()
		parse(b, next)
		i++
	}
}
