package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/tether-dev/tether/internal/demo"
	"github.com/tether-dev/tether/internal/fakemodel"
)

// Provider-side and silent compaction, through real HTTP, streamed and not.
// The provider's wire shapes follow its SDK types (anthropic-sdk-go
// BetaCompactionBlock, the on-demand request {"compaction":{"type":
// "summarize"}} answered with stop_reason "compaction",
// BetaRawMessageDeltaEvent.context_management.applied_edits; the Responses
// compaction output item).

// onDemandSummary is the signed summary of the on-demand compaction. It
// quotes an older capsule block, as a model summarising a history that
// carried one may: the signed bytes must still reach the provider as they
// came back.
const onDemandSummary = `The user is building an inventory service. <continuity-capsule revision="1" digest="0000">stale</continuity-capsule>`

// providerModel is the demo model, plus: an on-demand compaction request is
// answered with one signed compaction block; a turn whose last user text
// says "Time to compact." gets the provider's compaction in its answer; a
// request with clear_tool_uses gets applied_edits.
func providerModel() fakemodel.Responder {
	base := demo.Model()
	return func(req *fakemodel.Request) fakemodel.Reply {
		if req.Model() == demo.ExtractorModel {
			return base(req)
		}
		if gjson.GetBytes(req.Body, "compaction.type").Exists() {
			return fakemodel.Reply{Compaction: &fakemodel.Compaction{Content: onDemandSummary, Signature: "c2lnbmVk", Alone: true}}
		}
		r := base(req)
		last := gjson.GetBytes(req.Body, "messages.@reverse.0.content").String()
		if req.Dialect == fakemodel.DialectResponses {
			last = gjson.GetBytes(req.Body, "input.@reverse.0.content").String()
		}
		if last == "Time to compact." {
			r.Compaction = &fakemodel.Compaction{Content: "The user is building an inventory service.", EncryptedContent: "ZW5jcnlwdGVk"}
		}
		if bytes.Contains(req.Body, []byte("clear_tool_uses_20250919")) {
			r.AppliedEdits = []fakemodel.AppliedEdit{{Type: "clear_tool_uses_20250919", ClearedToolUses: 2, ClearedInputTokens: 4000}}
		}
		return r
	}
}

// pcall sends one request and returns the status and the whole answer (a
// stream read to its end).
func pcall(t *testing.T, e *env, path string, h map[string]string, body any) (int, string) {
	t.Helper()
	raw, ok := body.([]byte)
	if !ok {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(body)
		raw = bytes.TrimSpace(buf.Bytes())
	}
	req, _ := http.NewRequest(http.MethodPost, e.url+path, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", "test-key-0123456789")
	req.Header.Set("anthropic-version", "2023-06-01")
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
	}
	return resp.StatusCode, string(b)
}

// lastTo returns the body of the newest request the model got on path.
func (e *env) lastTo(path string) string {
	var last string
	for _, r := range e.fake.Requests() {
		if r.Path == path && r.Model() != demo.ExtractorModel {
			last = string(r.Body)
		}
	}
	return last
}

func msgs(items ...any) []any { return items }

func asst(content any) map[string]any { return map[string]any{"role": "assistant", "content": content} }

// TestAnthropicOnDemandCompaction: the on-demand compaction request (beta
// compact-2026-09-04) reaches the model as sent; its signed block reaches
// the client unchanged; the turns that lead messages with it get exactly
// one current block with the user's decisions (outside the signed block,
// whose bytes go to the provider as they came back), however long the
// history grows after it.
func TestAnthropicOnDemandCompaction(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			e := newEnv(t, envOptions{yaml: continuityYAML, responder: providerModel()})
			h := map[string]string{"anthropic-beta": "compact-2026-09-04", "X-Claude-Code-Session-Id": "on-demand-session"}
			post := func(m []any, extra map[string]any) string {
				b := map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 100, "stream": stream, "messages": m}
				for k, v := range extra {
					b[k] = v
				}
				_, out := pcall(t, e, "/v1/messages", h, b)
				return out
			}
			hist := msgs(userMsg("We are building an inventory service. Decision: use PostgreSQL, not MongoDB."))
			post(hist, nil)
			hist = append(hist, asst("Understood."), userMsg("Constraint: never change the public REST API."))
			post(hist, nil)
			e.waitCapsule(t, "never change the public REST API")

			sent, _ := json.Marshal(map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 100, "stream": stream, "messages": append(hist, asst("Understood.")), "compaction": map[string]any{"type": "summarize"}})
			_, answer := pcall(t, e, "/v1/messages", h, sent)
			if got := e.lastPrimary(); got != string(sent) {
				t.Errorf("the on-demand compaction request was changed:\n%s", got)
			}
			signed := `{"type":"compaction","content":` + jsonQuote(onDemandSummary) + `,"signature":"c2lnbmVk"}`
			if !stream && gjson.Get(answer, "content.0").Raw != signed {
				t.Errorf("the signed block reached the client as %s", gjson.Get(answer, "content.0").Raw)
			}
			if stream && (!strings.Contains(answer, `"signature":"c2lnbmVk"`) || !strings.Contains(answer, `"compaction_delta"`) || !strings.Contains(answer, `"content":`+jsonQuote(onDemandSummary))) {
				t.Errorf("the streamed compaction block was changed:\n%s", answer)
			}

			// The client's first turn after it already holds more than the
			// tail the other rules read (32 messages) after the block: the
			// leading block marks it.
			next := []any{asst([]any{json.RawMessage(signed)})}
			for i := 0; i < 20; i++ {
				next = append(next, userMsg(fmt.Sprintf("Step %d is done.", i)), asst("ok"))
			}
			next = append(next, userMsg("What is next?"))
			for turn := 0; turn < 2; turn++ {
				post(next, nil)
				got := e.lastPrimary()
				if !strings.Contains(got, signed) {
					t.Fatalf("turn %d: the signed block did not reach the model byte for byte:\n%s", turn, got)
				}
				sys := gjson.Get(got, "system").String()
				if n := strings.Count(sys, "<continuity-capsule"); n != 1 {
					t.Fatalf("turn %d: the system prompt holds %d blocks, want 1:\n%s", turn, n, got)
				}
				for _, f := range []string{"use PostgreSQL, not MongoDB", "never change the public REST API"} {
					if !strings.Contains(block(sys), f) {
						t.Errorf("turn %d: the reinjected block lacks %q", turn, f)
					}
				}
				next = append(next, asst("Next: the reports."), userMsg("Go on."))
			}
			m := accountingMetrics(t, e)
			if sumSamples(t, m, `tether_compactions_detected_total{rule="anthropic-on-demand-compaction"}`) != 1 ||
				sumSamples(t, m, `tether_provider_context_total{rule="anthropic-compaction-in-answer",side="answer"}`) != 1 {
				t.Errorf("the on-demand compaction was not counted:\n%s", grepLines(m, "compaction"))
			}
		})
	}
}

func jsonQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

func grepLines(text, sub string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestProviderCompactionSeenInAnswer: when the provider's answer to an
// ordinary turn carries its own compaction (an Anthropic compaction block,
// a Responses compaction item), the answer reaches the client unchanged,
// the compaction is counted, and the turns after it get the capsule back
// even when their request does not carry the block; a branch whose
// provider did not compact gets no block.
func TestProviderCompactionSeenInAnswer(t *testing.T) {
	type dial struct {
		name, path string
		marker     string // what the client receives
		rule       string
		turn       func(hist []any, stream bool) map[string]any
		user       func(text string) any
		reply      any
	}
	dials := []dial{
		{
			name: "anthropic", path: "/v1/messages", marker: `"encrypted_content":"ZW5jcnlwdGVk"`, rule: "anthropic-compaction-in-answer",
			turn: func(hist []any, stream bool) map[string]any {
				return map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 100, "stream": stream, "messages": hist, "context_management": serverCompaction}
			},
			user: func(s string) any { return userMsg(s) }, reply: asst("Understood."),
		},
		{
			name: "responses", path: "/v1/responses", marker: `"type":"compaction"`, rule: "responses-compaction-in-answer",
			turn: func(hist []any, stream bool) map[string]any {
				return map[string]any{"model": "gpt-5", "stream": stream, "input": hist, "prompt_cache_key": "conv-seen",
					"context_management": []any{map[string]any{"type": "compaction", "compact_threshold": 200000}}}
			},
			user:  func(s string) any { return map[string]any{"role": "user", "content": s} },
			reply: map[string]any{"role": "assistant", "content": "Understood."},
		},
	}
	for _, d := range dials {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", d.name, stream), func(t *testing.T) {
				e := newEnv(t, envOptions{yaml: continuityYAML, responder: providerModel()})
				run := func(session string, compactNow bool) string {
					h := map[string]string{"anthropic-beta": "compact-2026-01-12", "X-Claude-Code-Session-Id": session}
					hist := []any{d.user("We are building an inventory service. Decision: use PostgreSQL, not MongoDB.")}
					pcall(t, e, d.path, h, d.turn(hist, stream))
					hist = append(hist, d.reply, d.user("Constraint: never change the public REST API."))
					pcall(t, e, d.path, h, d.turn(hist, stream))
					e.waitCapsule(t, "never change the public REST API")
					third := "Carry on."
					if compactNow {
						third = "Time to compact."
					}
					hist = append(hist, d.reply, d.user(third))
					_, answer := pcall(t, e, d.path, h, d.turn(hist, stream))
					if compactNow != strings.Contains(answer, d.marker) {
						t.Fatalf("the provider's compaction reached the client: %v, want %v:\n%s", !compactNow, compactNow, answer)
					}
					if strings.Contains(answer, "<continuity-capsule") {
						t.Errorf("the provider's answer was changed:\n%s", answer)
					}
					// The client goes on without sending the block back.
					hist = append(hist, d.reply, d.user("What is next?"))
					pcall(t, e, d.path, h, d.turn(hist, stream))
					return e.lastTo(d.path)
				}
				got := run("seen-"+d.name, true)
				if n := strings.Count(got, "<continuity-capsule"); n != 1 {
					t.Fatalf("the turn after the provider's compaction shows %d blocks, want 1:\n%s", n, got)
				}
				for _, f := range []string{"use PostgreSQL, not MongoDB", "never change the public REST API"} {
					if !strings.Contains(block(got), f) {
						t.Errorf("the reinjected block lacks %q", f)
					}
				}
				if n := observedOnTimeline(t, e, d.rule); n != 1 {
					t.Errorf("the compaction timeline shows %d observed compactions by %s, want 1", n, d.rule)
				}
				if got := accountingMetric(t, e, `tether_provider_context_total{rule="`+d.rule+`",side="answer"}`); got != 1 {
					t.Errorf("provider compactions seen in answers: %v, want 1", got)
				}
				if got := run("quiet-"+d.name, false); strings.Contains(got, "<continuity-capsule") {
					t.Errorf("a branch whose provider did not compact got a block:\n%s", got)
				}
			})
		}
	}
}

// TestAnthropicContextEditingKeepsCapsule: with context editing
// (clear_tool_uses_20250919, beta context-management-2025-06-27) the
// provider clears old tool results before the model reads them, so a block
// the history carries only inside a tool result does not count as carried:
// the turn after a compaction gets the block where no edit clears it, once.
// Without the edit, the carried block stands. The edit asked and the
// applied_edits reported are counted, and the answer reaches the client
// unchanged.
func TestAnthropicContextEditingKeepsCapsule(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			e := newEnv(t, envOptions{yaml: continuityYAML, responder: providerModel()})
			h := map[string]string{"anthropic-beta": "compact-2026-01-12,context-management-2025-06-27", "X-Claude-Code-Session-Id": "edits"}
			post := func(m []any, cm any) string {
				b := map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 100, "stream": stream, "messages": m}
				if cm != nil {
					b["context_management"] = cm
				}
				_, out := pcall(t, e, "/v1/messages", h, b)
				return out
			}
			hist := msgs(userMsg("We are building an inventory service. Decision: use PostgreSQL, not MongoDB."))
			post(hist, nil)
			hist = append(hist, asst("Understood."), userMsg("Constraint: never change the public REST API."))
			post(hist, nil)
			e.waitCapsule(t, "never change the public REST API")
			// The provider compacted (its block is in the history): the
			// next turn gets the block in its system prompt.
			hist = append(hist, asst([]any{map[string]any{"type": "compaction", "content": "Summary.", "encrypted_content": "c2ln"}, map[string]any{"type": "text", "text": "Understood."}}), userMsg("Run the tests."))
			post(hist, nil)
			carried := block(gjson.Get(e.lastPrimary(), "system").String())
			if carried == "" {
				t.Fatalf("no block after the provider's compaction:\n%s", e.lastPrimary())
			}
			// An agent's tool echoed that block into a tool result.
			hist = append(hist,
				asst([]any{map[string]any{"type": "tool_use", "id": "toolu_1", "name": "bash", "input": map[string]any{"cmd": "cat notes"}}}),
				map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "content": "notes:\n" + carried}}},
			)
			post(hist, nil)
			without := e.lastPrimary()
			if strings.Contains(gjson.Get(without, "system").String(), "<continuity-capsule") || strings.Count(without, "<continuity-capsule") != 1 {
				t.Fatalf("without context editing the carried block stands alone:\n%s", without)
			}
			clear := map[string]any{"edits": []any{map[string]any{"type": "clear_tool_uses_20250919", "trigger": map[string]any{"type": "input_tokens", "value": 30000}}}}
			answer := post(hist, clear)
			with := e.lastPrimary()
			sys := gjson.Get(with, "system").String()
			if strings.Count(with, "<continuity-capsule") != 1 || !strings.Contains(block(sys), "use PostgreSQL, not MongoDB") || !strings.Contains(block(sys), "never change the public REST API") {
				t.Fatalf("with clear_tool_uses the block must be in the system prompt, once:\n%s", with)
			}
			if !strings.Contains(answer, `"applied_edits":[{"type":"clear_tool_uses_20250919","cleared_input_tokens":4000,"cleared_tool_uses":2}]`) {
				t.Errorf("the applied edits did not reach the client as sent:\n%s", answer)
			}
			m := accountingMetrics(t, e)
			if sumSamples(t, m, `tether_provider_context_total{rule="anthropic-clear-tool-uses",side="request"}`) != 1 ||
				sumSamples(t, m, `tether_provider_context_total{rule="anthropic-applied-edits",side="answer"}`) != 1 {
				t.Errorf("context edits not counted:\n%s", grepLines(m, "provider_context"))
			}
		})
	}
}

// TestSilentCompactionReinjects: Claude Code's session-memory compaction
// sends no summarisation request; the next request simply carries a much
// shorter history that extends nothing of the branch. Tether takes it as
// the branch's next epoch (lineage counts only) and the model gets the
// user's decisions back; a /clear (one new message) starts afresh without
// them.
func TestSilentCompactionReinjects(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			e := newEnv(t, envOptions{yaml: continuityYAML, responder: providerModel()})
			long := func(session string) map[string]string {
				h := map[string]string{"X-Claude-Code-Session-Id": session}
				hist := msgs(userMsg("We are building an inventory service. Decision: use PostgreSQL, not MongoDB."))
				for i, u := range []string{"Constraint: never change the public REST API.", "Add the stock table.", "Add the orders table.", "Write the migration.", "Run the tests."} {
					pcall(t, e, "/v1/messages", h, map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 100, "stream": stream, "messages": hist})
					hist = append(hist, asst(fmt.Sprintf("Done %d.", i)), userMsg(u))
				}
				pcall(t, e, "/v1/messages", h, map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 100, "stream": stream, "messages": hist})
				e.waitCapsule(t, "never change the public REST API")
				return h
			}
			h := long("silent")
			shrunk := msgs(userMsg("This conversation is summarised from session notes: an inventory service with stock and orders tables."),
				asst("Understood."), userMsg("What is next?"))
			pcall(t, e, "/v1/messages", h, map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 100, "stream": stream, "messages": shrunk})
			got := e.lastPrimary()
			if n := strings.Count(got, "<continuity-capsule"); n != 1 {
				t.Fatalf("the turn after a silent compaction shows %d blocks, want 1:\n%s", n, got)
			}
			for _, f := range []string{"use PostgreSQL, not MongoDB", "never change the public REST API"} {
				if !strings.Contains(block(got), f) {
					t.Errorf("the reinjected block lacks %q", f)
				}
			}
			// The turn after it continues the new epoch and keeps the block.
			shrunk = append(shrunk, asst("Next: the reports."), userMsg("Go on."))
			pcall(t, e, "/v1/messages", h, map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 100, "stream": stream, "messages": shrunk})
			if n := strings.Count(e.lastPrimary(), "<continuity-capsule"); n != 1 {
				t.Errorf("the second turn after a silent compaction shows %d blocks, want 1", n)
			}
			if got := accountingMetric(t, e, `tether_lineage_events_total{event="silent_compaction"}`); got != 1 {
				t.Errorf("silent compactions counted: %v, want 1", got)
			}

			h = long("cleared")
			pcall(t, e, "/v1/messages", h, map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 100, "stream": stream, "messages": msgs(userMsg("Let us start something else."))})
			if got := e.lastPrimary(); strings.Contains(got, "<continuity-capsule") {
				t.Errorf("a /clear got the old branch's block:\n%s", got)
			}
		})
	}
}

// sysYAML routes claude-sys-* to a provider that accepts role "system"
// messages inside the conversation for those models.
const sysYAML = `
providers:
  - {name: model, dialect: anthropic, base_url: "%[1]s", system_message_models: ["claude-sys-*"]}
  - {name: openai, dialect: openai, base_url: "%[1]s/v1"}
  - {name: extractor, dialect: openai, base_url: "%[1]s/v1"}
routes:
  - {match: "*", provider: model}
  - {match: "*", provider: openai}
` + continuityYAML

// TestReinjectionAsSystemMessage: where the provider accepts role "system"
// messages inside messages for the model, the reinjected block goes there,
// right after the last message with a cache_control breakpoint (the
// cached prefix and the top-level system prompt stay byte for byte as
// sent); for another model it goes to the system prompt as before.
func TestReinjectionAsSystemMessage(t *testing.T) {
	fake := fakemodel.Start(providerModel())
	t.Cleanup(fake.Close)
	e := accountingServe(t, fake, sysYAML, nil)
	dbs := []string{"PostgreSQL", "SQLite", "MySQL", "MariaDB"}
	for _, model := range []string{"claude-sys-1", "claude-plain-1"} {
		for _, stream := range []bool{false, true} {
			db := dbs[0]
			dbs = dbs[1:]
			h := map[string]string{"X-Claude-Code-Session-Id": model + fmt.Sprint(stream)}
			post := func(m []any) {
				pcall(t, e, "/v1/messages", h, map[string]any{"model": model, "max_tokens": 100, "stream": stream, "system": "You are a coding agent.", "messages": m})
			}
			hist := msgs(userMsg("We are building an inventory service. Decision: use " + db + ", not MongoDB."))
			post(hist)
			e.waitCapsule(t, "use "+db+", not MongoDB")
			cached := map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "Run the tests.", "cache_control": map[string]any{"type": "ephemeral"}}}}
			hist = append(hist, asst([]any{map[string]any{"type": "compaction", "content": "Summary.", "encrypted_content": "c2ln"}}), cached, asst("Done."), userMsg("What is next?"))
			post(hist)
			got := e.lastPrimary()
			if strings.Count(got, "<continuity-capsule") != 1 {
				t.Fatalf("%s: want one block:\n%s", model, got)
			}
			sys := gjson.Get(got, "system").String()
			mm := gjson.Get(got, "messages").Array()
			if model == "claude-sys-1" {
				if sys != "You are a coding agent." || len(mm) != len(hist)+1 {
					t.Fatalf("%s: the system prompt changed or no message was added:\n%s", model, got)
				}
				if mm[3].Get("role").String() != "system" || !strings.Contains(block(mm[3].Get("content").String()), "use "+db+", not MongoDB") {
					t.Errorf("%s: the block is not a system message right after the cached prefix:\n%s", model, got)
				}
				if prefix := gjson.Get(got, "messages.0").Raw + gjson.Get(got, "messages.1").Raw + gjson.Get(got, "messages.2").Raw; !strings.Contains(prefix, `"cache_control":{"type":"ephemeral"}`) || !strings.Contains(prefix, `"Summary."`) {
					t.Errorf("%s: the cached prefix changed:\n%s", model, got)
				}
			} else if !strings.Contains(block(sys), "use "+db+", not MongoDB") || len(mm) != len(hist) {
				t.Errorf("%s: the block must go to the system prompt:\n%s", model, got)
			}
		}
	}
	m := accountingMetrics(t, e)
	if sumSamples(t, m, `tether_preserve_reinjection_placements_total{placement="system_message"}`) != 2 {
		t.Errorf("placements:\n%s", grepLines(m, "placements"))
	}
}

// TestAnthropicOnDemandCompactionInstructions: instructions the client gives
// the on-demand summariser replace the provider's default prompt, so the
// block goes after them (never in their place) and the signed summary keeps
// the decisions; the history is left as sent.
func TestAnthropicOnDemandCompactionInstructions(t *testing.T) {
	e := newEnv(t, envOptions{yaml: continuityYAML, responder: providerModel()})
	h := map[string]string{"anthropic-beta": "compact-2026-09-04", "X-Claude-Code-Session-Id": "on-demand-instructions"}
	hist := msgs(userMsg("We are building an inventory service. Decision: use PostgreSQL, not MongoDB."))
	pcall(t, e, "/v1/messages", h, map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": hist})
	e.waitCapsule(t, "use PostgreSQL, not MongoDB")
	hist = append(hist, asst("Understood."))
	pcall(t, e, "/v1/messages", h, map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": hist,
		"compaction": map[string]any{"type": "summarize", "instructions": "Keep every file path."}})
	got := e.lastPrimary()
	ins := gjson.Get(got, "compaction.instructions").String()
	if !strings.HasPrefix(ins, "Keep every file path.\n\n<continuity-capsule") || !strings.Contains(ins, "use PostgreSQL, not MongoDB") {
		t.Errorf("the summariser's instructions became %q", ins)
	}
	if m := gjson.Get(got, "messages").Raw; strings.Contains(m, "<continuity-capsule") {
		t.Errorf("the history of an on-demand compaction was changed: %s", m)
	}
}

// observedOnTimeline counts the timeline events of action observed by rule
// over every conversation, waiting a little for the write that follows the
// answer.
func observedOnTimeline(t *testing.T, e *env, rule string) int {
	t.Helper()
	ctx := context.Background()
	n := 0
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		recs, err := e.store.ListCapsules(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		n = 0
		for _, r := range recs {
			evs, err := e.store.Compactions(ctx, r.Principal, r.ALeg, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range evs {
				if ev.Action == "observed" && ev.RuleID == rule {
					n++
				}
			}
		}
		if n > 0 {
			break
		}
	}
	return n
}
