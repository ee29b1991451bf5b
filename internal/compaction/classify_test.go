package compaction

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tether-dev/tether/internal/dialect"
)

const (
	claudeCritical = "CRITICAL: Respond with TEXT ONLY. Do NOT call any tools."
	claudeTask     = "Your task is to create a detailed summary of the conversation so far, paying close attention to the user's explicit requests and your previous actions."
)

func mustView(t testing.TB, name dialect.Name, path string, h http.Header, body string) *dialect.View {
	t.Helper()
	v, err := dialect.Parse(name, path, h, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func jsonStr(s string) string { return fmt.Sprintf("%q", s) }

func TestClassifyNearMisses(t *testing.T) {
	turnMeta := http.Header{"X-Codex-Turn-Metadata": {`{"request_kind":"turn"}`}}
	tests := []struct {
		name   string
		d      dialect.Name
		path   string
		header http.Header
		body   string
		want   Result
	}{
		{
			name: "user asks to summarize a file",
			d:    dialect.AnthropicMessages, path: "/v1/messages",
			body: `{"system":"You are a Claude agent","messages":[{"role":"user","content":"Please summarize this file for me: main.go"}]}`,
		},
		{
			name: "normal chat turn without tools",
			d:    dialect.OpenAIChat, path: "/v1/chat/completions",
			body: `{"messages":[{"role":"system","content":"You are helpful."},{"role":"user","content":"Summarize the conversation so far, briefly."}]}`,
		},
		{
			name: "claude sentence quoted inside a longer last block",
			d:    dialect.AnthropicMessages, path: "/v1/messages",
			body: `{"messages":[{"role":"user","content":[{"type":"text","text":` +
				jsonStr("Why does my prompt say \""+claudeCritical+" "+claudeTask+"\"?") + `}]}]}`,
		},
		{
			name: "claude prompt quoted in an earlier block, not the last one",
			d:    dialect.AnthropicMessages, path: "/v1/messages",
			body: `{"messages":[{"role":"user","content":[{"type":"text","text":` + jsonStr(claudeCritical+"\n\n"+claudeTask) +
				`},{"type":"text","text":"What does the text above do? Explain it."}]}]}`,
		},
		{
			name: "claude prompt in an earlier user message",
			d:    dialect.AnthropicMessages, path: "/v1/messages",
			body: `{"messages":[{"role":"user","content":[{"type":"text","text":` + jsonStr(claudeCritical+"\n\n"+claudeTask) + `}]},` +
				`{"role":"assistant","content":"ok"},{"role":"user","content":"carry on"}]}`,
		},
		{
			name: "claude compaction block as the final block",
			d:    dialect.AnthropicMessages, path: "/v1/messages",
			body: `{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"done"},{"type":"text","text":` +
				jsonStr(claudeCritical+"\n\n"+claudeTask) + `}]}]}`,
			want: Result{Compaction: true, Kind: InBand, Agent: "claude-code", RuleID: "claude-code-summary-2.1", RuleVersion: 1,
				Evidence: EvidenceSignature, SummaryAnchor: "</summary>", PromptStart: claudeCritical},
		},
		{
			name: "codex user types the checkpoint prompt in a normal turn",
			d:    dialect.OpenAIResponses, path: "/v1/responses", header: turnMeta,
			body: `{"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"You are performing a CONTEXT CHECKPOINT COMPACTION. lol"}]}]}`,
		},
		{
			name: "codex checkpoint prompt without turn metadata (older client)",
			d:    dialect.OpenAIResponses, path: "/v1/responses",
			body: `{"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary"}]}]}`,
			want: Result{Compaction: true, Kind: InBand, Agent: "codex", RuleID: "codex-checkpoint-prompt", RuleVersion: 1, Evidence: EvidenceSignature},
		},
		{
			name: "compaction trigger that is not the last item",
			d:    dialect.OpenAIResponses, path: "/v1/responses", header: turnMeta,
			body: `{"input":[{"type":"compaction_trigger"},{"type":"message","role":"user","content":"hi"}]}`,
		},
		{
			name: "legacy responses compact endpoint",
			d:    dialect.OpenAIResponses, path: "/v1/responses/compact",
			body: `{"input":[{"type":"message","role":"user","content":"hi"}]}`,
			want: Result{Compaction: true, Kind: Opaque, Agent: "codex", RuleID: "responses-compact-endpoint", RuleVersion: 1, Evidence: EvidenceProtocol, Placement: PlaceAfterLastItem},
		},
		{
			name: "pi phrase typed by the user in a normal pi turn",
			d:    dialect.OpenAIChat, path: "/v1/chat/completions",
			body: `{"messages":[{"role":"system","content":"You are an expert coding assistant operating inside pi"},{"role":"user","content":"The messages above are a conversation to summarize? no."}]}`,
		},
		{
			name: "title request is a title, not a turn",
			d:    dialect.OpenAIChat, path: "/v1/chat/completions",
			body: `{"messages":[{"role":"system","content":"You are a title generator. You output ONLY a thread title."},{"role":"user","content":"Summarize the conversation"}]}`,
			want: Result{Title: true, Agent: "opencode", RuleID: "opencode-title", RuleVersion: 1, Evidence: EvidenceSignature},
		},
		{
			name: "continued-session text written by the assistant is not a marker",
			d:    dialect.AnthropicMessages, path: "/v1/messages",
			body: `{"messages":[{"role":"assistant","content":"This session is being continued from a previous conversation that ran out of context."},{"role":"user","content":"ok"}]}`,
		},
		{
			name: "cline summarize task",
			d:    dialect.AnthropicMessages, path: "/v1/messages",
			body: `{"messages":[{"role":"user","content":[{"type":"text","text":"<explicit_instructions type=\"summarize_task\">\nsummarize"},{"type":"text","text":"<environment_details/>"}]}]}`,
			want: Result{Compaction: true, Kind: InBand, Agent: "cline", RuleID: "cline-summarize-task", RuleVersion: 1, Evidence: EvidenceSignature},
		},
		{
			name: "gemini state snapshot system",
			d:    dialect.OpenAIChat, path: "/v1/chat/completions",
			body: `{"messages":[{"role":"system","content":"You are a specialized system component responsible for distilling chat history into a structured XML <state_snapshot>."},{"role":"user","content":"go"}]}`,
			want: Result{Compaction: true, Kind: InBand, Agent: "gemini-cli", RuleID: "gemini-state-snapshot", RuleVersion: 3, Evidence: EvidenceSignature, SummaryAnchor: "</state_snapshot>", Older: true},
		},
		{
			name: "gemini cli compression over the generateContent wire",
			d:    dialect.Gemini, path: "/v1beta/models/gemini-2.5-pro:generateContent",
			body: `{"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"user","parts":[{"text":"Generate a new <state_snapshot> based on the provided history."}]}],"systemInstruction":{"parts":[{"text":"You are a specialized system component responsible for distilling chat history into a structured XML <state_snapshot>."}]}}`,
			want: Result{Compaction: true, Kind: InBand, Agent: "gemini-cli", RuleID: "gemini-state-snapshot", RuleVersion: 3, Evidence: EvidenceSignature, SummaryAnchor: "</state_snapshot>", Older: true},
		},
		{
			name: "gemini cli history after compression: snapshot behind the session context",
			d:    dialect.Gemini, path: "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
			body: `{"contents":[{"role":"user","parts":[{"text":"<session_context>\nThis is the Gemini CLI.\n</session_context>"},{"text":"<scratchpad>x</scratchpad>\n<state_snapshot>\n<overall_goal>g</overall_goal>\n</state_snapshot>"}]},{"role":"model","parts":[{"text":"Got it. Thanks for the additional context!"}]},{"role":"user","parts":[{"text":"What is next?"}]}]}`,
			want: Result{PostCompaction: true, Agent: "gemini-cli", RuleID: "gemini-session-context-snapshot", RuleVersion: 1, Evidence: EvidenceSignature},
		},
		{
			name: "a user quoting the snapshot tag is not a compressed history",
			d:    dialect.Gemini, path: "/v1beta/models/gemini-2.5-pro:generateContent",
			body: `{"contents":[{"role":"user","parts":[{"text":"what does <state_snapshot> mean?"}]}]}`,
		},
		{
			name: "anthropic server-side compaction block in the history",
			d:    dialect.AnthropicMessages, path: "/v1/messages",
			body: `{"messages":[{"role":"user","content":"build it"},{"role":"assistant","content":[{"type":"compaction","content":"Summary of the work so far."},{"type":"text","text":"Continuing."}]},{"role":"user","content":"next"}],"context_management":{"edits":[{"type":"compact_20260112"}]}}`,
			want: Result{PostCompaction: true, Kind: Opaque, Agent: "anthropic-api", RuleID: "anthropic-server-compaction-block", RuleVersion: 1, Evidence: EvidenceProtocol},
		},
		{
			name: "anthropic compaction edit requested but not applied yet",
			d:    dialect.AnthropicMessages, path: "/v1/messages",
			body: `{"messages":[{"role":"user","content":[{"type":"text","text":"compaction"}]}],"context_management":{"edits":[{"type":"compact_20260112"}]}}`,
		},
		{
			name: "opencode v2 summary instruction",
			d:    dialect.OpenAIChat, path: "/v1/chat/completions",
			body: `{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"},{"role":"user","content":"You MUST summarize the conversation above into a structured summary."}]}`,
			want: Result{Compaction: true, Kind: InBand, Agent: "opencode", RuleID: "opencode-summary-v2", RuleVersion: 1, Evidence: EvidenceSignature},
		},
		{
			name: "responses string input",
			d:    dialect.OpenAIResponses, path: "/v1/responses",
			body: `{"input":"Provide a detailed prompt for continuing our conversation above."}`,
			want: Result{Compaction: true, Kind: InBand, Agent: "opencode", RuleID: "opencode-legacy-continue-prompt", RuleVersion: 1, Evidence: EvidenceSignature},
		},
	}
	rs := Default()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := rs.Classify(mustView(t, tt.d, tt.path, tt.header, tt.body))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Classify (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPostCompactionMarkerBeyondTailIsNotReported(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"messages":[{"role":"user","content":"The conversation history before this point was compacted into the following summary:\n\n<summary>x</summary>"}`)
	for i := 0; i < DefaultWithin; i++ {
		b.WriteString(`,{"role":"assistant","content":"a"},{"role":"user","content":"u"}`)
	}
	b.WriteString(`]}`)
	got := Default().Classify(mustView(t, dialect.OpenAIChat, "/v1/chat/completions", nil, b.String()))
	if got.PostCompaction {
		t.Errorf("marker %d items back still reported: %+v", 2*DefaultWithin, got)
	}
}

func TestStrongestEvidenceWins(t *testing.T) {
	// A Codex local compaction whose prompt also matches the signature rule:
	// the protocol rule (header) wins even though the signature rule is
	// listed later with weaker evidence.
	h := http.Header{"X-Codex-Turn-Metadata": {`{"request_kind":"compaction"}`}}
	v := mustView(t, dialect.OpenAIResponses, "/v1/responses", h,
		`{"input":[{"type":"message","role":"user","content":"You are performing a CONTEXT CHECKPOINT COMPACTION."}]}`)
	got := Default().Classify(v)
	if got.RuleID != "codex-local-request-kind" || got.Evidence != EvidenceProtocol {
		t.Errorf("got %s/%s, want codex-local-request-kind/protocol", got.RuleID, got.Evidence)
	}
	// Ties go to file order.
	rs, err := LoadRules([]byte(`schema_version: 1
rules:
  - {id: first, version: 1, agent: a, marks: compaction, kind: in_band, evidence: signature, match: [{where: system, how: prefix, value: S}]}
  - {id: second, version: 2, agent: b, marks: compaction, kind: opaque, evidence: signature, match: [{where: system, how: contains, value: S}]}
  - {id: weak, version: 1, agent: c, marks: compaction, kind: opaque, evidence: heuristic, match: [{where: system, how: contains, value: S}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	got = rs.Classify(mustView(t, dialect.AnthropicMessages, "/v1/messages", nil, `{"system":"S","messages":[]}`))
	if got.RuleID != "first" {
		t.Errorf("tie went to %s, want first", got.RuleID)
	}
}

func TestDefaultRulesLoad(t *testing.T) {
	rs := Default()
	if len(rs.Rules()) < 20 || len(rs.HarvestRules()) < 8 {
		t.Fatalf("default rules: %d rules, %d harvest rules", len(rs.Rules()), len(rs.HarvestRules()))
	}
	// Every agent named in the brief has a compaction rule.
	agents := map[string]bool{}
	for _, r := range rs.Rules() {
		if r.Marks == MarkCompaction {
			agents[r.Agent] = true
		}
	}
	for _, a := range []string{"codex", "claude-code", "opencode", "pi", "gemini-cli", "cline", "roo-kilo", "aider"} {
		if !agents[a] {
			t.Errorf("no compaction rule for %s", a)
		}
	}
}

func TestDefaultUserRoleText(t *testing.T) {
	u := Default().UserRoleText()
	for _, tag := range []string{"system-reminder", "environment_context", "local-command-stdout", "turn_aborted"} {
		if !slices.Contains(u.HarnessTags, tag) {
			t.Errorf("harness tag %q missing from rules.yaml", tag)
		}
	}
	if !slices.Contains(u.SummaryPrefixes, "This session is being continued from a previous conversation") {
		t.Errorf("Claude Code's summary prefix missing from rules.yaml: %q", u.SummaryPrefixes)
	}
	if q := Default().QuotedHistory(); q != (QuotedHistory{TranscriptTag: "conversation", UserSpeaker: "User", SummaryTag: "previous-summary"}) {
		t.Errorf("quoted_history = %+v", q)
	}
	u.HarnessTags[0] = "changed"
	if Default().UserRoleText().HarnessTags[0] == "changed" {
		t.Error("UserRoleText returned the rule set's own slice")
	}
}

func TestMustLoadPanicsOnBrokenFile(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("mustLoad accepted a broken rule file")
		}
	}()
	mustLoad([]byte("schema_version: 1\nrules: [{id: x}]\n"))
}

func TestLoadRulesRejects(t *testing.T) {
	const head = "schema_version: 1\nrules:\n"
	const ok = "  - {id: good, version: 1, agent: a, marks: compaction, kind: in_band, evidence: signature, match: [{where: system, how: prefix, value: S}]}\n"
	tests := []struct {
		name, yaml, wantID, wantField string
	}{
		{"unknown field", head + "  - {id: r1, version: 1, agent: a, marks: title, evidense: signature, match: [{where: system, how: prefix, value: S}]}\n", "", "evidense"},
		{"unknown how", head + "  - {id: r2, version: 1, agent: a, marks: title, evidence: signature, match: [{where: system, how: regex, value: S}]}\n", "r2", "match[0].how"},
		{"unknown where", head + "  - {id: r3, version: 1, agent: a, marks: title, evidence: signature, match: [{where: body, how: prefix, value: S}]}\n", "r3", "match[0].where"},
		{"compaction without kind", head + "  - {id: r4, version: 1, agent: a, marks: compaction, evidence: signature, match: [{where: system, how: prefix, value: S}]}\n", "r4", "kind"},
		{"unknown evidence", head + "  - {id: r5, version: 1, agent: a, marks: title, evidence: hunch, match: [{where: system, how: prefix, value: S}]}\n", "r5", "evidence"},
		{"json_path off header", head + "  - {id: r6, version: 1, agent: a, marks: title, evidence: signature, match: [{where: system, json_path: x, how: prefix, value: S}]}\n", "r6", "match[0].json_path"},
		{"contains_all without values", head + "  - {id: r7, version: 1, agent: a, marks: title, evidence: signature, match: [{where: system, how: contains_all}]}\n", "r7", "match[0].values"},
		{"no conditions", head + "  - {id: r8, version: 1, agent: a, marks: title, evidence: signature, match: []}\n", "r8", "match"},
		{"version zero", head + "  - {id: r9, version: 0, agent: a, marks: title, evidence: signature, match: [{where: system, how: prefix, value: S}]}\n", "r9", "version"},
		{"duplicate id", head + ok + ok, "good", "id"},
		{"unknown dialect", head + "  - {id: r10, version: 1, agent: a, dialects: [cohere], marks: title, evidence: signature, match: [{where: system, how: prefix, value: S}]}\n", "r10", "dialects[0]"},
		{"unknown mark", head + "  - {id: r11, version: 1, agent: a, marks: summary, evidence: signature, match: [{where: system, how: prefix, value: S}]}\n", "r11", "marks"},
		{"unknown harvest format", head + ok + "harvest:\n  - {id: h1, version: 1, agent: a, tools: [t], format: regex_prose}\n", "h1", "format"},
		{"harvest without tools", head + ok + "harvest:\n  - {id: h2, version: 1, agent: a, format: todowrite}\n", "h2", "tools"},
		{"wrong schema version", "schema_version: 2\nrules:\n" + ok, "", "schema_version"},
		{"harness tag not a name", head + ok + "user_role_text:\n  harness_tags: [\"system reminder\"]\n", "", "user_role_text.harness_tags[0]"},
		{"empty harness tag", head + ok + "user_role_text:\n  harness_tags: [ok, \"\"]\n", "", "user_role_text.harness_tags[1]"},
		{"empty summary prefix", head + ok + "user_role_text:\n  summary_prefixes: [\"\"]\n", "", "user_role_text.summary_prefixes[0]"},
		{"summary prefix too long", head + ok + "user_role_text:\n  summary_prefixes: [" + strings.Repeat("x", MaxSummaryPrefix+1) + "]\n", "", "user_role_text.summary_prefixes[0]"},
		{"unknown user-role field", head + ok + "user_role_text:\n  prefixes: [x]\n", "", "prefixes"},
		{"speaker without a transcript tag", head + ok + "quoted_history:\n  user_speaker: User\n", "", "quoted_history.user_speaker"},
		{"transcript tag without a speaker", head + ok + "quoted_history:\n  transcript_tag: conversation\n", "", "quoted_history.user_speaker"},
		{"summary tag not a name", head + ok + "quoted_history:\n  summary_tag: \"previous summary\"\n", "", "quoted_history.summary_tag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadRules([]byte(tt.yaml))
			if err == nil {
				t.Fatal("accepted")
			}
			if !errors.Is(err, ErrInvalidRules) {
				t.Errorf("error %v does not wrap ErrInvalidRules", err)
			}
			if !strings.Contains(err.Error(), tt.wantField) {
				t.Errorf("error %q does not name field %q", err, tt.wantField)
			}
			var re *RuleError
			if tt.wantID != "" {
				if !errors.As(err, &re) || re.RuleID != tt.wantID {
					t.Errorf("error %q does not name rule %q", err, tt.wantID)
				}
			}
		})
	}
}

// What a system condition found is remembered by the prompt's bytes
// (systemHolds): a prompt that differs by one byte, or a system message
// that became a user message, is tested anew, and the first prompt still
// reads as it did.
func TestSystemVerdictsFollowThePrompt(t *testing.T) {
	rs := Default()
	const aider = "*Briefly* summarize this partial conversation about programming."
	const history = "# USER\nadd a users table\n# ASSISTANT\ndone"
	anthropic := func(system string) []byte {
		return fmt.Appendf(nil, `{"model":"m","system":%q,"messages":[{"role":"user","content":%q}]}`, system, history)
	}
	chat := func(role string) []byte {
		return fmt.Appendf(nil, `{"model":"m","messages":[{"role":%q,"content":%q},{"role":"user","content":%q}]}`, role, aider, history)
	}
	for i, tc := range []struct {
		name dialect.Name
		body []byte
		want bool
	}{
		{dialect.AnthropicMessages, anthropic(aider), true},
		{dialect.AnthropicMessages, anthropic(" " + aider), false},
		{dialect.AnthropicMessages, anthropic(aider), true},
		{dialect.OpenAIChat, chat("system"), true},
		{dialect.OpenAIChat, chat("user"), false},
		{dialect.OpenAIChat, chat("system"), true},
		{dialect.AnthropicMessages, anthropic(aider[:len(aider)-1] + "!"), false},
	} {
		v, err := dialect.Parse(tc.name, "/v1/x", http.Header{}, tc.body)
		if err != nil {
			t.Fatal(err)
		}
		if got := rs.Classify(v).Compaction; got != tc.want {
			t.Errorf("request %d (%s): compaction %v, want %v", i, tc.name, got, tc.want)
		}
	}
	// Long requests, parsed as the server parses them, with the system
	// prompt after the history (as Claude Code sends it): the prompt is
	// known by its place in what follows the conversation.
	long := func(system string) []byte {
		return fmt.Appendf(nil, `{"model":"m","messages":[{"role":"user","content":%q},{"role":"assistant","content":"ok"},{"role":"user","content":%q}],"system":%q}`,
			strings.Repeat("earlier work ", 2000), history, system)
	}
	for i, tc := range []struct {
		body []byte
		want bool
	}{
		{long(aider), true},
		{long(aider[:len(aider)-1] + "!"), false},
		{long(aider), true},
		{long("x" + aider[1:]), false},
	} {
		v, err := dialect.ParseFrom(t.Name(), dialect.AnthropicMessages, "/v1/messages", http.Header{}, tc.body)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := v.TailID(); !ok {
			t.Fatal("a long request has no TailID")
		}
		if got := rs.Classify(v).Compaction; got != tc.want {
			t.Errorf("long request %d: compaction %v, want %v", i, got, tc.want)
		}
	}
}
