package main

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// A workload is what the clients send. "small" is one short Chat
// Completions call, the same every time. The agent workloads are Claude
// Code–shaped Anthropic Messages histories of about the given size (text
// turns, tool_use and tool_result blocks; system prompt, tools and
// metadata after the messages, as Claude Code orders them): each client is
// an agent working through sessions of w.turns turns, every request
// resending the whole history plus the newest tool call and its result,
// so the proxy sees real continuations of growing conversations.
type workload struct {
	name   string
	path   string // request path on every target
	prompt []byte // what follows the history: system prompt and tools, with their keys
	opener []byte // the first user message's content blocks before the task's own, each followed by a comma
	size   int    // approximate body size; 0 for the small call
	middle []byte // shared filler history (messages 1…), without brackets
	turns  int    // requests per session; a client then starts a new one

	stepsOnce sync.Once
	steps     []byte   // every turn's newest items, written once (stepItems)
	stepEnds  []int    // end of turn t's items in steps
	userStart []int    // start of turn t's tool result in steps
	userCC    [][]byte // turn t's tool result with the cache breakpoint
	middleCC  []byte   // middle with the breakpoint on its last message
}

// cacheBreakpoint is what Claude Code adds to the last content block of a
// request's last message, and takes off it on the next request (the
// captures in testdata show it moving every turn): the item that was last
// comes back changed.
const cacheBreakpoint = `,"cache_control":{"type":"ephemeral"}`

// withBreakpoint returns item (a message whose content ends with a block
// object) with the breakpoint on its last block.
func withBreakpoint(item []byte) []byte {
	end := bytes.LastIndex(item, []byte("}]}"))
	out := append([]byte(nil), item[:end]...)
	out = append(out, cacheBreakpoint...)
	return append(out, item[end:]...)
}

// defaultAgentTurns is the default length of one session. A new session's
// first request is a whole history Tether has not seen (the case of a
// conversation pointed at it for the first time); longer sessions
// (-session-turns) weigh the steady state of a long session instead.
const defaultAgentTurns = 32

func newWorkload(name, prompt string) (*workload, error) {
	var p, opener []byte
	switch prompt {
	case "claude":
		p, opener = claudePrompt()
	case "short":
		p = []byte(shortPrompt)
	default:
		return nil, fmt.Errorf("%w: -prompt wants claude or short, got %q", errUsage, prompt)
	}
	switch name {
	case "small":
		return &workload{name: name, path: "/v1/chat/completions", turns: defaultAgentTurns}, nil
	case "200k":
		return agentWorkload(name, 200<<10, p, opener), nil
	case "2m":
		return agentWorkload(name, 2<<20, p, opener), nil
	}
	return nil, fmt.Errorf("%w: -body wants small, 200k or 2m, got %q", errUsage, name)
}

// claudePromptJSON is Claude Code's own system prompt (three text blocks,
// 27 KB) and tool definitions (24 tools, 82 KB), from a captured request,
// with the content of the first user message of that request (its system
// reminders, 7 KB): every request Claude Code sends carries the prompt and
// tools after the history, so a 200 KiB request of it holds about 90 KiB
// of conversation, which opens with those reminders.
//
//go:embed testdata/claude-code-prompt.json
var claudePromptJSON []byte

// shortPrompt is a one-line system prompt and two small tools: the
// workload of earlier rounds, kept to compare with (-prompt short).
const shortPrompt = `"system":[{"type":"text","text":"You are Claude Code, Anthropic's official CLI for Claude."},{"type":"text","text":"You are an interactive agent that helps users with software engineering tasks.","cache_control":{"type":"ephemeral"}}],` +
	`"tools":[{"name":"Bash","description":"Run a shell command","input_schema":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}},{"name":"Read","description":"Read a file","input_schema":{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}}]`

// claudePrompt is claudePromptJSON as the members that follow the history,
// and the first message's blocks.
func claudePrompt() (prompt, opener []byte) {
	var p struct {
		System, Tools json.RawMessage
		First         []json.RawMessage
	}
	if err := json.Unmarshal(claudePromptJSON, &p); err != nil {
		panic("embedded Claude Code prompt: " + err.Error())
	}
	for _, blk := range p.First {
		opener = append(append(opener, blk...), ',')
	}
	return fmt.Appendf(nil, `"system":%s,"tools":%s`, p.System, p.Tools), opener
}

// agentWorkload makes bodies of about size bytes: the history fills what
// the prompt leaves.
func agentWorkload(name string, size int, prompt, opener []byte) *workload {
	var b bytes.Buffer
	for i := 0; b.Len() < max(size-len(prompt)-len(opener), 16<<10); i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"role":"assistant","content":[{"type":"text","text":%q},{"type":"tool_use","id":"toolu_%04d","name":"Bash","input":{"command":"grep -rn \"Inventory\" internal/ --include=*.go | head -40","description":"Find the inventory code"}}]},`,
			"I'll look at how the inventory service reaches its repository layer before changing it.", i)
		fmt.Fprintf(&b, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%04d","content":%q}]},`,
			i, strings.Repeat("internal/inventory/service.go:42:\tfunc (s *Service) Reserve(ctx context.Context, sku string, n int) error {\n", 12))
		fmt.Fprintf(&b, `{"role":"user","content":[{"type":"text","text":%q}]}`,
			fmt.Sprintf("Step %d done. Keep PostgreSQL as the store, not MongoDB, and keep every change behind the repository interface.", i))
	}
	return &workload{name: name, path: "/v1/messages", size: size, prompt: prompt, opener: opener, middle: b.Bytes(), turns: defaultAgentTurns}
}

func (w *workload) agent() bool { return w.size > 0 }

// describe names the workload in the report.
func (w *workload) describe() string {
	if !w.agent() {
		return "small Chat Completions call"
	}
	prompt := "Claude Code's captured system prompt and tools (106 KiB), the first message opening with its captured system reminders (7 KB)"
	if len(w.prompt) < 4<<10 {
		prompt = "a one-line system prompt and two small tools"
	}
	return fmt.Sprintf("Claude Code–shaped Anthropic Messages requests of about %d KiB, the history followed by %s, growing by one tool call per request, sessions of %d turns", w.size>>10, prompt, w.turns)
}

// body writes the request of a client's seq-th request into buf. It only
// copies bytes prepared once (w.steps) and formats the few that name the
// client and session: the clients share the CPUs with the proxy under test,
// and formatting a 400-turn tail on every request was a sizeable share of
// the run's CPU that no real agent spends on the proxy's machine.
func (w *workload) body(buf []byte, client, seq int, stream bool) []byte {
	if !w.agent() {
		return requestBody(stream)
	}
	session, turn := seq/w.turns, seq%w.turns
	b := buf[:0]
	b = append(b, `{"model":"claude-bench","max_tokens":1024,"messages":[{"role":"user","content":[`...)
	b = append(b, w.opener...)
	b = append(b, `{"type":"text","text":"Session `...)
	b = strconv.AppendInt(b, int64(client), 10)
	b = append(b, '-')
	b = strconv.AppendInt(b, int64(session), 10)
	b = append(b, `: add a reservation endpoint to the inventory service. Make a plan first."}]},`...)
	// The history as Claude Code sends it: the breakpoint on the last
	// message's last block only.
	steps := w.stepItems()
	if turn == 0 {
		b = append(b, w.middleCC...)
	} else {
		b = append(b, w.middle...)
		b = append(b, steps[:w.userStart[turn-1]]...)
		b = append(b, w.userCC[turn-1]...)
	}
	b = append(b, `],`...)
	b = append(b, w.prompt...)
	b = append(b, `,"metadata":{"user_id":"user_0123456789abcdef_account_00000000-0000-0000-0000-000000000000_session_bench-`...)
	b = strconv.AppendInt(b, int64(client), 10)
	b = append(b, '-')
	b = strconv.AppendInt(b, int64(session), 10)
	b = append(b, `"}`...)
	if stream {
		b = append(b, `,"stream":true`...)
	}
	return append(b, '}')
}

// stepItems is every turn's newest tool call and result, in order, written
// once: a request of turn t carries its first w.stepEnds[t] bytes.
func (w *workload) stepItems() []byte {
	w.stepsOnce.Do(func() {
		var b bytes.Buffer
		w.stepEnds = make([]int, w.turns)
		w.userStart = make([]int, w.turns)
		w.userCC = make([][]byte, w.turns)
		for i := range w.turns {
			w.stepEnds[i] = b.Len()
			fmt.Fprintf(&b, `,{"role":"assistant","content":[{"type":"tool_use","id":"toolu_new_%d","name":"Read","input":{"file_path":"/repo/internal/inventory/file%d.go"}}]}`, i, i)
			w.userStart[i] = b.Len()
			fmt.Fprintf(&b, `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_new_%d","content":"package inventory\n\n// file %d\nfunc reserve() error { return nil }\n"}]}`, i, i)
			w.userCC[i] = withBreakpoint(b.Bytes()[w.userStart[i]:])
		}
		w.steps = b.Bytes()
		w.middleCC = withBreakpoint(w.middle)
	})
	return w.steps
}

// The Anthropic answers of the fake upstream: a fixed message, or the same
// as streamChunks SSE events.
var messageJSON = []byte(`{"id":"msg_bench","type":"message","role":"assistant","model":"claude-bench",` +
	`"content":[{"type":"text","text":"We will use PostgreSQL, not MongoDB. The plan is recorded."}],` +
	`"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":42,"output_tokens":14}}`)

var messageEvents = func() [][]byte {
	ev := func(name, data string) []byte { return []byte("event: " + name + "\ndata: " + data + "\n\n") }
	evs := [][]byte{
		ev("message_start", `{"type":"message_start","message":{"id":"msg_bench","type":"message","role":"assistant","model":"claude-bench","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":42,"output_tokens":1}}}`),
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
	}
	words := []string{"We", " will", " use", " PostgreSQL", ",", " not", " MongoDB", ".", " The", " plan", " is", " recorded", " in", " the", " capsule", "."}
	for _, w := range words[:streamChunks-5] {
		evs = append(evs, ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+strconv.Quote(w)+`}}`))
	}
	return append(evs,
		ev("content_block_stop", `{"type":"content_block_stop","index":0}`),
		ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":15}}`),
		ev("message_stop", `{"type":"message_stop"}`),
	)
}()
