package compaction

import (
	"slices"
	"testing"

	"github.com/tether-dev/tether/internal/dialect"
)

// The wire shapes below follow the providers' SDK types: anthropic-sdk-go
// BetaCompactionBlock (content, signature, encrypted_content), the
// on-demand compaction request {"compaction":{"type":"summarize"}} and
// its answer (stop_reason "compaction"), BetaRawMessageDeltaEvent's
// context_management.applied_edits; openai-go's Responses compaction
// output item.

func ruleIDs(rs []Rule) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

func TestOnDemandCompactionRules(t *testing.T) {
	rs := Default()
	req := mustView(t, dialect.AnthropicMessages, "/v1/messages", nil,
		`{"model":"m","max_tokens":10,"compaction":{"type":"summarize"},"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"}]}`)
	got := rs.Classify(req)
	if !got.Compaction || got.RuleID != "anthropic-on-demand-compaction" || got.Kind != Opaque || got.Placement != PlaceNone {
		t.Errorf("on-demand compaction request: %+v", got)
	}
	// Later turns lead messages with the signed block; however long the
	// history after it, the turn is post-compaction.
	body := `{"model":"m","max_tokens":10,"messages":[{"role":"assistant","content":[{"type":"compaction","content":"Summary so far.","signature":"c2ln"}]}`
	for range 40 {
		body += `,{"role":"user","content":"q"},{"role":"assistant","content":"a"}`
	}
	body += `,{"role":"user","content":"next"}]}`
	got = rs.Classify(mustView(t, dialect.AnthropicMessages, "/v1/messages", nil, body))
	if got.Compaction || !got.PostCompaction || got.RuleID != "anthropic-leading-compaction-block" || got.Kind != Opaque {
		t.Errorf("turn leading with the signed block: %+v", got)
	}
	// A request without the parameter, or with it null, is an ordinary turn.
	for _, b := range []string{
		`{"model":"m","messages":[{"role":"user","content":"compaction"}]}`,
		`{"model":"m","compaction":null,"messages":[{"role":"user","content":"a"}]}`,
	} {
		if got := rs.Classify(mustView(t, dialect.AnthropicMessages, "/v1/messages", nil, b)); got.Any() {
			t.Errorf("%s: %+v", b, got)
		}
	}
}

func TestContextEditRules(t *testing.T) {
	rs := Default()
	v := mustView(t, dialect.AnthropicMessages, "/v1/messages", nil,
		`{"model":"m","context_management":{"edits":[{"type":"clear_thinking_20251015"},{"type":"clear_tool_uses_20250919","trigger":{"type":"input_tokens","value":30000},"keep":{"type":"tool_uses","value":3}}]},"messages":[{"role":"user","content":"a"}]}`)
	if got := ruleIDs(rs.ContextEdits(v)); !slices.Equal(got, []string{"anthropic-clear-tool-uses", "anthropic-clear-thinking"}) {
		t.Errorf("ContextEdits = %v", got)
	}
	if got := rs.Classify(v); got.Any() {
		t.Errorf("a context edit is not a compaction: %+v", got)
	}
	plain := mustView(t, dialect.AnthropicMessages, "/v1/messages", nil, `{"model":"m","messages":[{"role":"user","content":"clear_tool_uses_20250919"}]}`)
	if got := rs.ContextEdits(plain); got != nil {
		t.Errorf("a request that only mentions the edit matched %v", ruleIDs(got))
	}
}

func TestWatchAnswer(t *testing.T) {
	rs := Default()
	cases := []struct {
		name   string
		d      dialect.Name
		body   string   // non-streamed answer
		events []string // the same in stream events
		want   []string
	}{
		{
			name: "anthropic server-side compaction",
			d:    dialect.AnthropicMessages,
			body: `{"type":"message","role":"assistant","content":[{"type":"compaction","content":"Summary.","encrypted_content":"ZW5j"},{"type":"text","text":"ok"}],"stop_reason":"end_turn"}`,
			events: []string{
				`{"type":"message_start","message":{"type":"message","content":[]}}`,
				`{"type":"content_block_start","index":0,"content_block":{"type":"compaction","content":""}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"compaction_delta","content":"Summary.","encrypted_content":"ZW5j"}}`,
				`{"type":"content_block_stop","index":0}`,
				`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}`,
			},
			want: []string{"anthropic-compaction-in-answer"},
		},
		{
			name: "anthropic applied edits",
			d:    dialect.AnthropicMessages,
			body: `{"type":"message","content":[{"type":"text","text":"ok"}],"context_management":{"applied_edits":[{"type":"clear_tool_uses_20250919","cleared_tool_uses":4,"cleared_input_tokens":9000}]}}`,
			events: []string{
				`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
				`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"context_management":{"applied_edits":[{"type":"clear_tool_uses_20250919","cleared_tool_uses":4,"cleared_input_tokens":9000}]}}`,
			},
			want: []string{"anthropic-applied-edits"},
		},
		{
			name: "responses compaction item",
			d:    dialect.OpenAIResponses,
			body: `{"object":"response","output":[{"type":"compaction","id":"cmp_1","encrypted_content":"gAAA"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]}]}`,
			events: []string{
				`{"type":"response.output_item.added","output_index":0,"item":{"type":"compaction","id":"cmp_1","encrypted_content":"gAAA"}}`,
				`{"type":"response.output_item.done","output_index":0,"item":{"type":"compaction","id":"cmp_1","encrypted_content":"gAAA"}}`,
			},
			want: []string{"responses-compaction-in-answer"},
		},
		{
			name:   "ordinary answer, text quoting the word",
			d:      dialect.AnthropicMessages,
			body:   `{"type":"message","content":[{"type":"text","text":"compaction applied_edits clear_tool_uses"}],"context_management":{"applied_edits":[]}}`,
			events: []string{`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"{\"type\":\"compaction\"}"}}`},
		},
	}
	for _, c := range cases {
		if got := ruleIDs(rs.WatchAnswer(c.d).Body([]byte(c.body))); !slices.Equal(got, c.want) {
			t.Errorf("%s, body: %v, want %v", c.name, got, c.want)
		}
		w := rs.WatchAnswer(c.d)
		var got []string
		for _, ev := range c.events {
			got = append(got, ruleIDs(w.Event(dialect.Event{Data: []byte(ev)}))...)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s, stream: %v, want %v (each rule once)", c.name, got, c.want)
		}
	}
	if rs.WatchAnswer(dialect.OpenAIChat) != nil {
		t.Errorf("no rule reads Chat Completions answers")
	}
}

func TestClassifyLineageSilentShrink(t *testing.T) {
	rs := Default()
	cases := []struct {
		l    Lineage
		want bool
	}{
		{Lineage{PreviousMessages: 40, Messages: 5}, true},   // session-memory compaction: summary + kept turns
		{Lineage{PreviousMessages: 8, Messages: 4}, true},    // the smallest shrink that counts
		{Lineage{PreviousMessages: 40, Messages: 1}, false},  // /clear: one new message
		{Lineage{PreviousMessages: 6, Messages: 2}, false},   // too short a branch to judge
		{Lineage{PreviousMessages: 40, Messages: 25}, false}, // kept more than half
		{Lineage{PreviousMessages: 40, Messages: 5, ExtendsBranch: true}, false},
	}
	for _, c := range cases {
		got := rs.ClassifyLineage(dialect.AnthropicMessages, c.l)
		if got.PostCompaction != c.want {
			t.Errorf("%+v: %+v, want post-compaction %v", c.l, got, c.want)
		}
		if c.want && (got.RuleID != "silent-history-shrink" || got.Kind != Silent || got.Evidence != EvidenceHeuristic) {
			t.Errorf("%+v: %+v", c.l, got)
		}
	}
}

func TestProviderRuleValidation(t *testing.T) {
	for _, c := range []struct{ name, yaml string }{
		{"mixed scopes", `schema_version: 1
rules:
  - {id: x, version: 1, agent: a, marks: compaction, kind: opaque, evidence: protocol, match: [{where: response_block_type, how: equals, value: compaction}, {where: system, how: prefix, value: s}]}`},
		{"answer rule marking post_compaction", `schema_version: 1
rules:
  - {id: x, version: 1, agent: a, marks: post_compaction, evidence: protocol, match: [{where: response_block_type, how: equals, value: compaction}]}`},
		{"at_least on a request place", `schema_version: 1
rules:
  - {id: x, version: 1, agent: a, marks: post_compaction, evidence: heuristic, match: [{where: system, how: at_least, value: "3"}]}`},
		{"unknown lineage count", `schema_version: 1
rules:
  - {id: x, version: 1, agent: a, marks: post_compaction, evidence: heuristic, match: [{where: "lineage:tokens", how: at_least, value: "3"}]}`},
		{"clears on a compaction rule", `schema_version: 1
rules:
  - {id: x, version: 1, agent: a, marks: compaction, kind: opaque, clears: tool_results, evidence: protocol, match: [{where: "body:compaction", how: present}]}`},
	} {
		if _, err := LoadRules([]byte(c.yaml)); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
}

// TestContextEditsInClaudeCodeCapture: the real Claude Code 2.1 requests ask
// for clear_thinking on every turn; that is a context edit, never a
// compaction, and none of them is taken for a provider compaction.
func TestContextEditsInClaudeCodeCapture(t *testing.T) {
	rs := Default()
	for _, c := range loadCaptures(t, "testdata/claude.jsonl") {
		v := c.view(t)
		if got := ruleIDs(rs.ContextEdits(v)); !slices.Equal(got, []string{"anthropic-clear-thinking"}) {
			t.Errorf("request %d: context edits %v", c.Seq, got)
		}
		if got := rs.Classify(v); got.RuleID == "anthropic-on-demand-compaction" || got.RuleID == "anthropic-leading-compaction-block" {
			t.Errorf("request %d classified %s", c.Seq, got.RuleID)
		}
	}
}
