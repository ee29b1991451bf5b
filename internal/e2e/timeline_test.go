package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/web"
)

// Each compaction Tether handles is on the A-leg's timeline: when, which
// rule, and what was injected (the capsule revision and its counts), with
// no conversation text in the record.
func TestCompactionTimelineRecorded(t *testing.T) {
	e := newEnv(t, envOptions{yaml: continuityYAML})
	a := e.agent("timeline-session")
	say(t, a, "We're building an inventory service. Please make a plan and track it with your todo list.",
		"Yes, go ahead with that plan.")
	compact(t, a)
	say(t, a, "Continue.")
	compact(t, a)

	ctx := context.Background()
	recs, err := e.store.ListCapsules(ctx, "")
	if err != nil || len(recs) != 1 {
		t.Fatalf("ListCapsules = %d records, %v; want the one conversation", len(recs), err)
	}
	evs, err := e.store.Compactions(ctx, recs[0].Principal, recs[0].ALeg, 0)
	if err != nil {
		t.Fatal(err)
	}
	var augmented int
	for _, ev := range evs {
		if ev.Action != "augmented" {
			continue
		}
		augmented++
		if ev.RuleID == "" || ev.RuleVersion == 0 || ev.Agent != "claude-code" || ev.Kind != "in_band" {
			t.Errorf("event without its rule: %+v", ev)
		}
		if ev.Revision < 1 || ev.Steps == 0 || ev.Tokens == 0 || ev.At.IsZero() || ev.RequestID == "" {
			t.Errorf("event does not say what was injected: %+v", ev)
		}
	}
	if augmented != 2 {
		t.Errorf("timeline has %d augmented compactions, want 2: %+v", augmented, evs)
	}
	if len(evs) >= 2 && evs[0].Seq < evs[1].Seq {
		t.Errorf("timeline not newest first: %+v", evs)
	}
	dump, err := e.store.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range dump["compactions"] {
		if strings.Contains(row, "inventory") {
			t.Errorf("a timeline row holds conversation text: %s", row)
		}
	}
}

// getCapsuleAPI reads a capsule API path with the agent's own key.
func getCapsuleAPI(t *testing.T, e *env, path string, v any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer test-key-0123456789")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: status %d: %s", path, resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

// Through the real server, the capsule API tells a principal which agent
// and client session a conversation is, when it was last active, what its
// compactions injected, and from which source each change came: the plan
// tool, a statement the user marked (built-in extractor), or the model
// extractor.
func TestCapsuleAPIAgentTimelineAndSources(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string // sources that must appear in the history
	}{
		{"builtin", "\ncompaction_continuity: {enabled: true}\n", []string{"plan_tool", "marked"}},
		{"model", continuityYAML, []string{"plan_tool", "model"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOptions{yaml: tc.yaml})
			a := e.agent("sources-session-" + tc.name)
			say(t, a, "We're building an inventory service. Please make a plan and track it with your todo list.",
				"Yes, go ahead with that plan. Decision: use PostgreSQL for storage, because we need multi-row transactions.")
			e.waitCapsule(t, "PostgreSQL")
			compact(t, a)
			say(t, a, "Continue.")

			var list struct{ Capsules []web.Summary }
			getCapsuleAPI(t, e, "/v1/capsules", &list)
			if len(list.Capsules) != 1 {
				t.Fatalf("%d conversations listed, want 1: %+v", len(list.Capsules), list.Capsules)
			}
			c := list.Capsules[0]
			if c.Agent != "claude-code" || c.ClientSession != "sources-session-"+tc.name || c.ClientKind != "claude" || c.LastActivity == nil {
				t.Errorf("conversation listed as %+v; want agent claude-code, its client session id and a last activity", c)
			}
			var tl struct{ Compactions []web.Compaction }
			getCapsuleAPI(t, e, "/v1/capsules/"+c.ID+"/compactions", &tl)
			if len(tl.Compactions) == 0 || tl.Compactions[0].Action != "augmented" || tl.Compactions[0].Rule == "" || tl.Compactions[0].Decisions == 0 {
				t.Errorf("timeline %+v; want the augmented compaction with its rule and a decision injected", tl.Compactions)
			}
			var h struct{ Revisions []web.Revision }
			getCapsuleAPI(t, e, "/v1/capsules/"+c.ID+"/history", &h)
			seen := map[string]bool{}
			for _, r := range h.Revisions {
				for _, ch := range r.Changes {
					seen[ch.Source] = true
					if ch.Item == "decision" && strings.Contains(ch.Text, "PostgreSQL") && ch.Source == "" {
						t.Errorf("decision change without a source: %+v", ch)
					}
				}
			}
			for _, s := range tc.want {
				if !seen[s] {
					t.Errorf("history has no change from %q; sources seen: %v", s, seen)
				}
			}
			if seen["extractor"] {
				t.Errorf("a new revision is attributed to the undifferentiated extractor: %v", seen)
			}
		})
	}
}
