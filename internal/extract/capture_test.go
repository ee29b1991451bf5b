package extract

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/dialect"
)

// captured loads the messages of a real agent request from testdata.
func captured(t testing.TB, name string) []dialect.Message {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Path string          `json:"path"`
		Body json.RawMessage `json:"body"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	d := dialect.AnthropicMessages
	switch {
	case strings.HasPrefix(c.Path, "/v1/responses"):
		d = dialect.OpenAIResponses
	case strings.HasPrefix(c.Path, "/v1/chat"):
		d = dialect.OpenAIChat
	}
	v, err := dialect.Parse(d, c.Path, nil, c.Body)
	if err != nil {
		t.Fatal(err)
	}
	return v.Messages()
}

func TestGateOnCaptures(t *testing.T) {
	tests := []struct {
		file   string
		from   int // first message of the delta
		want   bool
		reason string
	}{
		{"codex_decision.json", 0, true, ReasonUserCue},    // "Decision: Use PostgreSQL, not MongoDB"
		{"claude_question.json", 0, false, ReasonNoSignal}, // reminders, an earlier summary, a question
		{"claude_todowrite.json", 0, true, ReasonUserCue},  // the decision comes first
		{"claude_todowrite.json", 1, true, ReasonPlanTool}, // then the TodoWrite call
	}
	for _, tc := range tests {
		t.Run(tc.file+"/"+tc.reason, func(t *testing.T) {
			got := Gate(nil, captured(t, tc.file)[tc.from:])
			if got.Eligible != tc.want || got.Reason != tc.reason {
				t.Errorf("Gate = %+v, want eligible=%v reason=%s", got, tc.want, tc.reason)
			}
		})
	}
}

func TestPrepareOnCapture(t *testing.T) {
	msgs := captured(t, "codex_decision.json")
	in := Prepare(nil, msgs, 0, 12000)
	if !strings.Contains(in.Text, "Decision: Use PostgreSQL, not MongoDB.") {
		t.Errorf("user decision missing:\n%s", in.Text)
	}
	for _, banned := range []string{"<environment_context>", "<cwd>", "<INSTRUCTIONS>"} {
		if strings.Contains(in.Text, banned) {
			t.Errorf("harness boilerplate %q sent to the extractor:\n%s", banned, in.Text)
		}
	}
	if len(in.Delta.UserTurns) == 0 {
		t.Errorf("no user turn kept")
	}
	if in.Tokens > 2000 {
		t.Errorf("input is %d tokens for one short user turn", in.Tokens)
	}
}

// OpenCode's automatic post-compaction messages ("What did we do so far?",
// "Continue if you have next steps, or stop and ask for clarification if you
// are unsure how to proceed.") are the agent's words in the user's role: they
// neither open the gate ("proceed" is an approval cue) nor reach the
// extractor, and the summary answering them is not a proposal.
func TestGateIgnoresAgentWrittenTurns(t *testing.T) {
	msgs := captured(t, "opencode_continue.json")
	if len(msgs) < 5 || !strings.HasPrefix(msgs[3].Text, "Continue if you have next steps") {
		t.Fatalf("capture changed: %d messages", len(msgs))
	}
	// The compaction and its aftermath, then a plain "Thanks."
	delta := append(msgs[1:5:5], dialect.Message{Role: "user", Text: "Thanks."})
	if got := Gate(nil, delta); got.Eligible {
		t.Errorf("Gate = %+v for a decision-free session after an OpenCode compaction", got)
	}
	in := Prepare(nil, delta, 0, 12000)
	for _, banned := range []string{"Continue if you have next steps", "What did we do so far?"} {
		if strings.Contains(in.Text, banned) {
			t.Errorf("the agent's own message %q is sent to the extractor as the user's:\n%s", banned, in.Text)
		}
	}
	if len(in.Delta.UserTurns) != 1 {
		t.Errorf("user turns = %v, want only the user's own", in.Delta.UserTurns)
	}
}

// The built-in extractor is given only the user's messages (prepareFor with
// usersOnly): on every captured history, with decisions of its own added
// between the agent's turns, it must record exactly what it records from
// the full transcript a model extractor gets.
func TestBuiltinReadsOnlyUserMessagesAlike(t *testing.T) {
	said := []dialect.Message{
		{Role: "user", Type: "message", Text: "Decision: we will use SQLite for the cache, not Redis, because it is one file."},
		{Role: "assistant", Type: "message", Text: "Plan:\n1. add the cache table\n2. wire the reader\n3. test it"},
		{Role: "user", Type: "message", Text: "Plan accepted. Constraint: never log request bodies."},
		{Role: "user", Type: "message", Text: "Actually, scratch that: use Redis instead of SQLite; final."},
	}
	for _, file := range []string{"codex_decision.json", "claude_todowrite.json", "claude_question.json", "opencode_continue.json"} {
		msgs := append(append([]dialect.Message{}, captured(t, file)...), said...)
		ords := make([]int, len(msgs))
		for i := range ords {
			ords[i] = i
		}
		full := prepareFor(nil, msgs, ords, 12000, false)
		users := prepareFor(nil, msgs, ords, 12000, true)
		a, _ := json.Marshal(markerOps(full))
		b, _ := json.Marshal(markerOps(users))
		if string(a) != string(b) {
			t.Errorf("%s: built-in ops differ\nfull transcript: %s\nusers only:      %s", file, a, b)
		}
		if !strings.Contains(string(b), "Redis") || !strings.Contains(string(b), "request bodies") {
			t.Errorf("%s: the user's decisions were not read: %s", file, b)
		}
	}
}
