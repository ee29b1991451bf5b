package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/tether-dev/tether/internal/demo"
	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/fakemodel"
)

// geminiYAML is a Gemini provider beside the scripted extractor.
const geminiYAML = `
providers:
  - {name: gemini, dialect: gemini, base_url: "%[1]s"}
  - {name: extractor, dialect: openai, base_url: "%[1]s/v1"}
routes:
  - {match: "*", provider: gemini}
` + continuityYAML

// The shapes below are Gemini CLI 0.61's, as captured through Tether: the
// session context and the first prompt in one user content, the
// <state_snapshot> compression with its system instruction, and the
// compressed history that puts the snapshot in the first user content.
const (
	geminiContext  = "<session_context>\nThis is the Gemini CLI. We are setting up the context for our chat.\n</session_context>"
	geminiSnapshot = "You are a specialized system component responsible for distilling chat history into a structured XML <state_snapshot>.\n\n### CRITICAL SECURITY RULE\n…"
	geminiAsk      = "Generate a new <state_snapshot> based on the provided history.\n\nFirst, reason in your scratchpad. Then, generate the updated <state_snapshot>."
)

func geminiText(role, text string) map[string]any {
	return map[string]any{"role": role, "parts": []any{map[string]any{"text": text}}}
}

// geminiModel answers like demo.Model, with a state snapshot for Gemini
// CLI's compression.
func geminiModel() fakemodel.Responder {
	inner := demo.Model()
	return func(r *fakemodel.Request) fakemodel.Reply {
		if r.Dialect == fakemodel.DialectGemini {
			if fakemodel.Classify(r) == fakemodel.KindCompaction {
				return fakemodel.Reply{Text: "<state_snapshot>\n<overall_goal>" + demo.LossySummary + "</overall_goal>\n</state_snapshot>", InputTokens: 3000, OutputTokens: 80}
			}
			return fakemodel.Reply{Text: "Understood.", InputTokens: 2000, OutputTokens: 5}
		}
		return inner(r)
	}
}

// geminiCall posts one generateContent call (streamed with alt=sse when
// stream is set) and returns the answer text the client reads.
func geminiCall(t *testing.T, e *env, stream bool, body map[string]any) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // as JavaScript clients send it
	if err := enc.Encode(body); err != nil {
		t.Fatal(err)
	}
	raw := buf.Bytes()
	path := "/v1beta/models/gemini-2.5-pro:generateContent"
	if stream {
		path = "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
	}
	req, _ := http.NewRequest(http.MethodPost, e.url+path, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-goog-api-key", "test-key-0123456789")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
	}
	if !stream {
		b, _ := io.ReadAll(resp.Body)
		return dialect.ResponseText(dialect.Gemini, b)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("streamed answer has Content-Type %q", ct)
	}
	var text strings.Builder
	rd := dialect.NewSSEReader(resp.Body)
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !gjson.ValidBytes(ev.Data) {
			t.Fatalf("invalid chunk %q", ev.Data)
		}
		text.WriteString(dialect.EventText(dialect.Gemini, ev))
	}
	return text.String()
}

// TestGeminiCLICompressionKeepsDecisions drives Gemini CLI's wire shapes
// through Tether over real HTTP and SSE: two turns state a decision and a
// constraint, the <state_snapshot> compression (streamed and not) gets
// exactly one continuity block with both, and the first turn on the
// compressed history shows the model exactly one block.
func TestGeminiCLICompressionKeepsDecisions(t *testing.T) {
	for _, stream := range []bool{true, false} {
		name := "generateContent"
		if stream {
			name = "streamGenerateContent"
		}
		t.Run(name, func(t *testing.T) {
			e := accountingStart(t, geminiYAML, geminiModel(), nil)
			first := geminiText("user", geminiContext)
			first["parts"] = append(first["parts"].([]any), map[string]any{"text": "We are building an inventory service. Decision: use PostgreSQL, not MongoDB."})
			hist := []any{first}
			turn := func(text string) {
				if text != "" {
					hist = append(hist, geminiText("user", text))
				}
				answer := geminiCall(t, e, stream, map[string]any{"contents": hist, "systemInstruction": map[string]any{"parts": []any{map[string]any{"text": "You are an interactive CLI agent."}}}})
				hist = append(hist, geminiText("model", answer))
			}
			turn("")
			turn("Constraint: never change the public REST API.")
			// no wait: the compression follows the turn at once, as in Gemini CLI

			snapshot := geminiCall(t, e, stream, map[string]any{
				"contents":          append(append([]any{}, hist...), geminiText("user", geminiAsk)),
				"systemInstruction": map[string]any{"parts": []any{map[string]any{"text": geminiSnapshot}}},
			})
			if n := strings.Count(snapshot, "<continuity-capsule"); n != 1 {
				t.Fatalf("the snapshot carries %d blocks, want 1:\n%s", n, snapshot)
			}
			for _, f := range []string{"use PostgreSQL, not MongoDB", "never change the public REST API", "<state_snapshot>"} {
				if !strings.Contains(snapshot, f) {
					t.Errorf("the snapshot lost %q:\n%s", f, snapshot)
				}
			}

			// Gemini CLI's compressed history: the snapshot joins the
			// session context in the first user content.
			compressed := geminiText("user", geminiContext)
			compressed["parts"] = append(compressed["parts"].([]any), map[string]any{"text": snapshot})
			after := []any{compressed, geminiText("model", "Got it. Thanks for the additional context!"), geminiText("user", "What is next?")}
			geminiCall(t, e, stream, map[string]any{"contents": after})
			reqs := e.fake.Requests()
			last := reqs[len(reqs)-1]
			for i := len(reqs) - 1; i >= 0 && reqs[i].Model() == demo.ExtractorModel; i-- {
				last = reqs[i-1]
			}
			if n := strings.Count(string(last.Body), "<continuity-capsule"); n != 1 {
				t.Fatalf("the turn after compression shows the model %d blocks, want 1", n)
			}
			if !strings.Contains(string(last.Body), "never change the public REST API") {
				t.Errorf("the turn after compression lost the constraint")
			}
		})
	}
}

// TestGeminiErrorsInGeminiDialect: bad input on a Gemini route gets a
// Gemini error body (code, message, status) with the right HTTP status.
func TestGeminiErrorsInGeminiDialect(t *testing.T) {
	e := accountingStart(t, geminiYAML, geminiModel(), nil)
	for _, c := range []struct {
		path, body string
		code       int
		status     string
	}{
		{"/v1beta/models/gemini-2.5-pro:generateContent", `{"contents":[`, http.StatusBadRequest, "INVALID_ARGUMENT"},
		{"/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", `[]`, http.StatusBadRequest, "INVALID_ARGUMENT"},
		{"/v1beta/nothing-here", `{}`, http.StatusNotFound, "NOT_FOUND"},
	} {
		req, _ := http.NewRequest(http.MethodPost, e.url+c.path, strings.NewReader(c.body))
		req.Header.Set("x-goog-api-key", "test-key-0123456789")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.code || gjson.GetBytes(b, "error.status").String() != c.status ||
			gjson.GetBytes(b, "error.code").Int() != int64(c.code) || gjson.GetBytes(b, "error.message").String() == "" {
			t.Errorf("%s %s: %d %s", c.path, c.body, resp.StatusCode, b)
		}
	}
}
