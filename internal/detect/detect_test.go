package detect

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/tether-dev/tether/internal/compaction"
	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/flow"
)

// recorder collects the events a hub passes on.
type recorder struct {
	mu  sync.Mutex
	evs []compaction.Event
}

func (r *recorder) Observe(e compaction.Event) {
	r.mu.Lock()
	r.evs = append(r.evs, e)
	r.mu.Unlock()
}

// types returns the types of the events seen, those of the provider's
// context edits (Claude Code asks for one on every turn) left out unless
// provider is set.
func (r *recorder) types(provider bool) []compaction.EventType {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []compaction.EventType
	for _, e := range r.evs {
		if provider || e.Type != compaction.EventProviderAsked && e.Type != compaction.EventProviderDone {
			out = append(out, e.Type)
		}
	}
	return out
}

func newDetector() (*Detector, *recorder) {
	rec := &recorder{}
	return New(compaction.Default(), compaction.NewHub(rec)), rec
}

// captured returns the exchange of request seq of Claude Code's captured
// session, and its body.
func captured(t *testing.T, seq int) (*flow.Exchange, []byte) {
	t.Helper()
	f, err := os.Open("../compaction/testdata/claude.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var c struct {
			Seq     int               `json:"seq"`
			Path    string            `json:"path"`
			Headers map[string]string `json:"headers"`
			Body    json.RawMessage   `json:"body"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		if c.Seq != seq {
			continue
		}
		return exchange(t, c.Path, c.Headers, c.Body), c.Body
	}
	t.Fatalf("no request %d", seq)
	return nil, nil
}

func exchange(t *testing.T, path string, headers map[string]string, body []byte) *flow.Exchange {
	t.Helper()
	h := http.Header{}
	for k, v := range headers {
		h.Set(k, v)
	}
	v, err := dialect.Parse(dialect.AnthropicMessages, path, h, body)
	if err != nil {
		t.Fatal(err)
	}
	return &flow.Exchange{ID: "req-1", Dialect: dialect.AnthropicMessages, Path: path, Header: h, View: v, Body: body}
}

// A compaction request: the verdict names it and its agent, and the B-leg's
// lifecycle is reported as it goes (detected, started, completed or
// failed), ids and counts only, never the request's words.
func TestDetectCompactionLifecycle(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		want   []compaction.EventType
	}{
		{"answered", 200, []compaction.EventType{compaction.EventDetected, compaction.EventStarted, compaction.EventCompleted}},
		{"refused", 500, []compaction.EventType{compaction.EventDetected, compaction.EventStarted, compaction.EventFailed}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, rec := newDetector()
			x, body := captured(t, 3)
			res := d.Detect(t.Context(), x)
			if !res.Compaction || res.Agent == "" || x.Agent != res.Agent || !x.Compaction {
				t.Fatalf("verdict %+v, exchange agent %q compaction %v; want a compaction by a named agent", res, x.Agent, x.Compaction)
			}
			if got := rec.types(false); len(got) != 1 || got[0] != compaction.EventDetected {
				t.Fatalf("events after Detect: %v, want [detected]", got)
			}
			x.Opened(tc.status)
			x.Finish(flow.Outcome{Status: tc.status, Usage: dialect.Usage{InputTokens: 1200, OutputTokens: 300}})
			if got := rec.types(false); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("events %v, want %v", got, tc.want)
			}
			// What the user and the agent wrote never reaches an event.
			var words []string
			for _, m := range x.View.Messages() {
				for _, w := range strings.Fields(m.Text) {
					if len(w) >= 12 && !strings.ContainsAny(w, "<>/") {
						words = append(words, w)
					}
				}
			}
			if len(words) == 0 {
				t.Fatal("the captured request has no words to look for")
			}
			events := fmt.Sprintf("%+v", rec.evs)
			for _, w := range words {
				if strings.Contains(events, w) {
					t.Fatalf("an event carries %q from the request: %s", w, events)
				}
			}
			if !bytes.Equal(x.Body, body) {
				t.Error("detection changed the request body")
			}
		})
	}
}

// An ordinary turn: no compaction, no event, nothing attached to its
// answer; Claude Code's captured turn (which asks the provider to clear
// thinking blocks) is no compaction either.
func TestDetectOrdinaryTurn(t *testing.T) {
	d, rec := newDetector()
	x := exchange(t, "/v1/messages", nil, []byte(`{"model":"claude-sonnet-4-5","max_tokens":64,"messages":[{"role":"user","content":"Add a users table."}]}`))
	if res := d.Detect(t.Context(), x); res.Compaction || x.Compaction {
		t.Fatalf("an ordinary turn classified as compaction: %+v", res)
	}
	if got := rec.types(true); len(got) != 0 || x.HasResponseHooks() {
		t.Errorf("events %v, response hooks %v; want none", got, x.HasResponseHooks())
	}
	x, _ = captured(t, 2)
	if res := d.Detect(t.Context(), x); res.Compaction || x.Compaction || len(rec.types(false)) != 0 {
		t.Errorf("Claude Code's ordinary turn: verdict %+v, lifecycle events %v", res, rec.types(false))
	}
}

// A request that asks the provider to edit its context is reported when
// it is detected, and the edit the provider made when its answer shows it;
// the answer is passed on as it came.
func TestDetectProviderContextEdit(t *testing.T) {
	d, rec := newDetector()
	body := []byte(`{"model":"claude-sonnet-4-5","max_tokens":64,"messages":[{"role":"user","content":"build it"}],` +
		`"context_management":{"edits":[{"type":"clear_tool_uses_20250919"}]}}`)
	x := exchange(t, "/v1/messages", map[string]string{"anthropic-beta": "context-management-2025-06-27"}, body)
	d.Detect(t.Context(), x)
	if got := rec.types(true); len(got) != 1 || got[0] != compaction.EventProviderAsked {
		t.Fatalf("events after Detect: %v, want [provider_asked]", got)
	}
	answer := []byte(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5",` +
		`"content":[{"type":"text","text":"Continuing."}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":5},` +
		`"context_management":{"applied_edits":[{"type":"clear_tool_uses_20250919","cleared_tool_uses":3,"cleared_input_tokens":2000}]}}`)
	x.Opened(200)
	if got := x.EditBody(bytes.Clone(answer)); !bytes.Equal(got, answer) {
		t.Errorf("the answer was changed: %s", got)
	}
	if got := rec.types(true); len(got) != 2 || got[1] != compaction.EventProviderDone {
		t.Errorf("events after the answer: %v, want [provider_asked provider_done]", got)
	}
}
