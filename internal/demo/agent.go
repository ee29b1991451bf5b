// Package demo plays a scripted coding-agent session through a lossy
// compactor, with and without Tether in between, and reports what the model
// is shown after each compaction. `tether demo` prints it; the acceptance
// tests drive the same scenario and assert on what the model received.
package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/tether-dev/tether/internal/dialect"
)

// claudeCompactPrompt is the instruction Claude Code 2.1 appends to the last
// user message when it compacts (abridged; the recognised markers are kept).
const claudeCompactPrompt = "CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.\n\n" +
	"- Do NOT use Read, Bash, Grep, Glob, Edit, Write, or ANY other tool.\n" +
	"- Your entire response must be plain text: an <analysis> block followed by a <summary> block.\n\n" +
	"Your task is to create a detailed summary of the conversation so far, paying close attention to the user's explicit requests and your previous actions.\n"

// continuedPrefix starts the first user message after a Claude Code compaction.
const continuedPrefix = "This session is being continued from a previous conversation that ran out of context. " +
	"The summary below covers the earlier portion of the conversation.\n\nSummary:\n"

// Agent is a scripted client with the wire behaviour of Claude Code 2.1 on
// the Anthropic Messages API: streaming turns, the TodoWrite plan tool, in-band
// compaction, and a history that after compaction holds only the part of the
// summary inside <summary>…</summary>.
type Agent struct {
	BaseURL   string // without /v1
	APIKey    string
	SessionID string
	Model     string
	HTTP      *http.Client

	history []json.RawMessage
	// Shown is what the model was last shown as the compacted history.
	Shown string
}

var toolsJSON = `[{"name":"TodoWrite","description":"Update the todo list for the current session.","input_schema":{"type":"object","properties":{"todos":{"type":"array","items":{"type":"object","properties":{"content":{"type":"string"},"status":{"type":"string","enum":["pending","in_progress","completed"]},"activeForm":{"type":"string"}},"required":["content","status","activeForm"]}}},"required":["todos"]}},{"name":"Bash","description":"Run a shell command.","input_schema":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}}]`

const systemJSON = `[{"type":"text","text":"You are Claude Code, Anthropic's official CLI for Claude.","cache_control":{"type":"ephemeral"}},{"type":"text","text":"You are an interactive CLI tool that helps users with software engineering tasks."}]`

// reply is one parsed model answer.
type reply struct {
	text  string
	tools []toolUse
}

type toolUse struct {
	id, name string
	input    json.RawMessage
}

// Fork returns an independent copy of the agent with the same history: the
// user rewinding or branching the conversation from here.
func (a *Agent) Fork() *Agent {
	b := *a
	b.history = append([]json.RawMessage(nil), a.history...)
	return &b
}

// Say sends one user turn and follows tool calls until the model answers
// with text. It returns the final assistant text.
func (a *Agent) Say(ctx context.Context, text string) (string, error) {
	a.history = append(a.history, userText(text))
	for range 4 {
		r, err := a.call(ctx, a.history)
		if err != nil {
			return "", err
		}
		a.history = append(a.history, assistantMessage(r))
		if len(r.tools) == 0 {
			return r.text, nil
		}
		var results []map[string]any
		for _, t := range r.tools {
			out := "ok"
			if t.name == "TodoWrite" {
				out = "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress."
			}
			results = append(results, map[string]any{"type": "tool_result", "tool_use_id": t.id, "content": out})
		}
		a.history = append(a.history, marshal(map[string]any{"role": "user", "content": results}))
	}
	return "", errors.New("demo agent: too many tool rounds")
}

// Compact asks for a summary the way Claude Code does and replaces the
// history with what Claude Code keeps of it.
func (a *Agent) Compact(ctx context.Context) error {
	hist := append([]json.RawMessage(nil), a.history...)
	hist = append(hist, userText(claudeCompactPrompt))
	r, err := a.call(ctx, hist)
	if err != nil {
		return err
	}
	summary := r.text
	if i := strings.Index(summary, "<summary>"); i >= 0 {
		summary = summary[i+len("<summary>"):]
		if j := strings.LastIndex(summary, "</summary>"); j >= 0 {
			summary = summary[:j]
		}
	}
	a.Shown = strings.TrimSpace(summary)
	a.history = []json.RawMessage{userText(continuedPrefix + a.Shown)}
	return nil
}

func userText(text string) json.RawMessage {
	return marshal(map[string]any{"role": "user", "content": []map[string]any{{"type": "text", "text": text}}})
}

// marshal encodes like a JavaScript client: no HTML escaping of <, >, &.
func marshal(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return json.RawMessage(bytes.TrimRight(b.Bytes(), "\n"))
}

func assistantMessage(r reply) json.RawMessage {
	var content []map[string]any
	if r.text != "" {
		content = append(content, map[string]any{"type": "text", "text": r.text})
	}
	for _, t := range r.tools {
		content = append(content, map[string]any{"type": "tool_use", "id": t.id, "name": t.name, "input": t.input})
	}
	return marshal(map[string]any{"role": "assistant", "content": content})
}

// CompactionRequest returns the request Compact would send now.
func (a *Agent) CompactionRequest(ctx context.Context) (*http.Request, error) {
	hist := append([]json.RawMessage(nil), a.history...)
	return a.request(ctx, append(hist, userText(claudeCompactPrompt)))
}

func (a *Agent) request(ctx context.Context, history []json.RawMessage) (*http.Request, error) {
	msgs := marshal(history)
	meta, _ := json.Marshal(map[string]string{"session_id": a.SessionID})
	body := fmt.Sprintf(`{"model":%q,"max_tokens":32000,"stream":true,"system":%s,"tools":%s,"metadata":{"user_id":%s},"messages":%s}`,
		a.Model, systemJSON, toolsJSON, jsonString(string(meta)), msgs)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.BaseURL+"/v1/messages?beta=true", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("anthropic-version", "2023-06-01")
	req.Header.Set("x-api-key", a.APIKey)
	req.Header.Set("X-Claude-Code-Session-Id", a.SessionID)
	req.Header.Set("User-Agent", "claude-cli/2.1.197 (external, sdk-cli)")
	return req, nil
}

func (a *Agent) call(ctx context.Context, history []json.RawMessage) (reply, error) {
	req, err := a.request(ctx, history)
	if err != nil {
		return reply{}, err
	}
	resp, err := a.HTTP.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return reply{}, fmt.Errorf("status %d: %s", resp.StatusCode, bytes.TrimSpace(data))
	}
	return ReadAnthropicStream(resp.Body)
}

// ReadAnthropicStream accumulates a Messages SSE stream into its text and
// tool calls.
func ReadAnthropicStream(r io.Reader) (reply, error) {
	var out reply
	var text strings.Builder
	var cur *toolUse
	var args strings.Builder
	rd := dialect.NewSSEReader(r)
	for {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return out, errors.New("stream ended without message_stop")
		}
		if err != nil {
			return out, err
		}
		d := gjson.ParseBytes(ev.Data)
		switch d.Get("type").String() {
		case "content_block_start":
			if cb := d.Get("content_block"); cb.Get("type").String() == "tool_use" {
				cur = &toolUse{id: cb.Get("id").String(), name: cb.Get("name").String()}
				args.Reset()
			}
		case "content_block_delta":
			switch d.Get("delta.type").String() {
			case "text_delta":
				text.WriteString(d.Get("delta.text").String())
			case "input_json_delta":
				args.WriteString(d.Get("delta.partial_json").String())
			}
		case "content_block_stop":
			if cur != nil {
				cur.input = json.RawMessage(cmpOr(args.String(), "{}"))
				out.tools = append(out.tools, *cur)
				cur = nil
			}
		case "error":
			return out, fmt.Errorf("stream error: %s", d.Get("error.message").String())
		case "message_stop":
			out.text = text.String()
			return out, nil
		}
	}
}

func jsonString(s string) string { return string(marshal(s)) }

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
