package web

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tether-dev/tether/internal/auth"
	"github.com/tether-dev/tether/internal/capsule"
	"github.com/tether-dev/tether/internal/store/backend"
	"github.com/tether-dev/tether/internal/store/memstore"
)

const hostile = `</continuity-capsule><script>alert("x")</script>`

func put(t *testing.T, st *memstore.Store, principal, session, aLeg string, rev int64, c *capsule.Capsule) {
	t.Helper()
	c.SchemaVersion, c.Session, c.ALeg, c.Revision = capsule.SchemaVersion, session, aLeg, rev
	data, err := capsule.Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := capsule.Decode(data); err != nil {
		t.Fatalf("test capsule: %v", err)
	}
	if err := st.PutCapsule(t.Context(), backend.CapsuleRecord{Principal: principal, Session: session, ALeg: aLeg, Revision: rev, Data: data}, rev-1); err != nil {
		t.Fatal(err)
	}
}

// apiServer holds alice's branch A1 (two revisions) and bob's B1 (hostile
// text), with proxy keys key-alice / key-bob and admin key admin-key.
func apiServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	Routes(testOptions(t))(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// testOptions is the store and keys apiServer describes.
func testOptions(t *testing.T) Options {
	t.Helper()
	st := memstore.New(memstore.Options{})
	r1 := &capsule.Capsule{Decisions: []capsule.Decision{{ID: "D1", Statement: "Use MongoDB", Status: "active", Provenance: "extractor", SourceTurn: 1}}}
	put(t, st, "alice", "s-alice", "A1", 1, r1)
	r2 := &capsule.Capsule{
		LatestPlan: &capsule.Plan{Status: "accepted", Source: "structured_tool", Tool: "update_plan", Steps: []capsule.Step{{Text: "Schema", Status: "in_progress"}, {Text: "API", Status: "pending"}}},
		Decisions: []capsule.Decision{
			{ID: "D1", Statement: "Use MongoDB", Status: "superseded", SupersededBy: "D2", Provenance: "extractor", SourceTurn: 1, ClosedTurn: 3, ClosedBy: "marked"},
			{ID: "D2", Statement: "Use PostgreSQL, not MongoDB", Status: "active", Provenance: "marked", SourceTurn: 3},
		},
		Constraints: []capsule.Constraint{{ID: "C1", Text: "No new dependencies", Status: "active", Provenance: "model", SourceTurn: 3}},
		Rejected:    []capsule.Rejected{{ID: "R1", Text: "MongoDB", SourceTurn: 3, Provenance: "model"}},
	}
	put(t, st, "alice", "s-alice", "A1", 2, r2)
	for _, ev := range []backend.CompactionEvent{
		{Principal: "alice", Session: "s-alice", ALeg: "A1", RequestID: "req-1", Agent: "claude-code", RuleID: "claude-code-summary", RuleVersion: 2,
			Kind: "in_band", Action: "augmented", Revision: 2, Tokens: 180, Decisions: 1, Constraints: 1, Rejected: 2, Steps: 2},
		{Principal: "bob", Session: "s-bob", ALeg: "B1", RequestID: "req-bob", Agent: "codex", RuleID: "codex-compact", RuleVersion: 1,
			Kind: "opaque", Action: "augmented", Revision: 1},
	} {
		if _, err := st.AppendCompaction(t.Context(), ev); err != nil {
			t.Fatal(err)
		}
	}
	put(t, st, "bob", "s-bob", "B1", 1, &capsule.Capsule{Decisions: []capsule.Decision{{ID: "D1", Statement: hostile, Status: "active", SourceTurn: 1}}})
	conversations := func(_ context.Context, principal string, aLegs []string) (map[string]Conversation, error) {
		out := map[string]Conversation{}
		for _, a := range aLegs {
			if principal == "alice" && a == "A1" {
				out[a] = Conversation{Agent: "claude-code", ClientKind: "claude", ClientSession: "5d1c8a4e-alice", LastActivity: time.Date(2026, 5, 4, 3, 2, 0, 0, time.UTC)}
			}
			if principal == "bob" && a == "B1" {
				out[a] = Conversation{ClientKind: "cache", ClientSession: hostile}
			}
		}
		return out, nil
	}
	return Options{Store: st, AdminKey: "admin-key", Conversations: conversations, SessionSecret: []byte("test-web-secret"), Authn: func(h http.Header) (auth.Principal, error) {
		switch auth.Credential(h) {
		case "key-alice":
			return auth.Principal{ID: "alice"}, nil
		case "key-bob":
			return auth.Principal{ID: "bob"}, nil
		}
		return auth.Principal{}, auth.ErrUnauthenticated
	}}
}

func getJSON(t *testing.T, url, key string, v any) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if v != nil && resp.StatusCode == 200 {
		if err := json.Unmarshal(body, v); err != nil {
			t.Fatalf("%s: %v: %s", url, err, body)
		}
	}
	return resp.StatusCode
}

func TestCapsuleAPIScopesToThePrincipal(t *testing.T) {
	srv := apiServer(t)
	var list struct{ Capsules []Summary }
	if getJSON(t, srv.URL+"/v1/capsules", "key-alice", &list) != 200 || len(list.Capsules) != 1 || list.Capsules[0].ID != "A1" || list.Capsules[0].Revision != 2 {
		t.Errorf("alice's list: %+v", list)
	}
	for _, path := range []string{"/v1/capsules/B1", "/v1/capsules/B1/history"} {
		if s := getJSON(t, srv.URL+path, "key-alice", nil); s != 404 {
			t.Errorf("alice reading bob's %s: status %d, want 404", path, s)
		}
	}
	if s := getJSON(t, srv.URL+"/v1/capsules", "", nil); s != 401 {
		t.Errorf("no key: status %d", s)
	}
	list.Capsules = nil
	if getJSON(t, srv.URL+"/v1/capsules", "admin-key", &list) != 200 || len(list.Capsules) != 2 {
		t.Errorf("admin list: %+v", list)
	}
	var d Detail
	if getJSON(t, srv.URL+"/v1/capsules/B1", "admin-key", &d) != 200 || d.Principal != "bob" || !strings.Contains(d.Rendered, "<continuity-capsule") {
		t.Errorf("admin show B1: %+v", d)
	}
}

func TestCapsuleHistorySaysWhatChanged(t *testing.T) {
	srv := apiServer(t)
	var h struct{ Revisions []Revision }
	if s := getJSON(t, srv.URL+"/v1/capsules/A1/history", "key-alice", &h); s != 200 {
		t.Fatalf("status %d", s)
	}
	want := [][]Change{
		{
			{Item: "plan", Action: "added", Text: "accepted plan, 2 steps, 0 completed", Source: "plan_tool", Tool: "update_plan"},
			{Item: "decision", Action: "superseded", ID: "D1", Text: "Use MongoDB", Source: "marked"},
			{Item: "decision", Action: "added", ID: "D2", Text: "Use PostgreSQL, not MongoDB", Source: "marked"},
			{Item: "constraint", Action: "added", ID: "C1", Text: "No new dependencies", Source: "model"},
			{Item: "rejected_alternative", Action: "rejected", ID: "R1", Text: "MongoDB", Source: "model"},
		},
		{{Item: "decision", Action: "added", ID: "D1", Text: "Use MongoDB", Source: "extractor"}},
	}
	var got [][]Change
	for _, r := range h.Revisions {
		got = append(got, r.Changes)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("changes, newest first (-want +got):\n%s", diff)
	}
	if len(h.Revisions) == 2 {
		if diff := cmp.Diff(map[string]int{"added": 3, "superseded": 1, "rejected": 1}, h.Revisions[0].Counts); diff != "" {
			t.Errorf("revision 2 counts (-want +got):\n%s", diff)
		}
	}
}

// The list says which agent and client session each branch belongs to and
// when it was last active; the detail and /compactions give the branch's
// compaction timeline, and only to its owner.
func TestCapsuleAPIConversationAndTimeline(t *testing.T) {
	srv := apiServer(t)
	var list struct{ Capsules []Summary }
	getJSON(t, srv.URL+"/v1/capsules", "key-alice", &list)
	last := time.Date(2026, 5, 4, 3, 2, 0, 0, time.UTC)
	if len(list.Capsules) != 1 || list.Capsules[0].Agent != "claude-code" || list.Capsules[0].ClientSession != "5d1c8a4e-alice" ||
		list.Capsules[0].ClientKind != "claude" || list.Capsules[0].LastActivity == nil || !list.Capsules[0].LastActivity.Equal(last) {
		t.Errorf("alice's list: %+v", list.Capsules)
	}
	var d Detail
	getJSON(t, srv.URL+"/v1/capsules/A1", "key-alice", &d)
	if len(d.Compactions) != 1 || d.Compactions[0].Rule != "claude-code-summary" || d.Compactions[0].Revision != 2 || d.Compactions[0].Steps != 2 {
		t.Errorf("A1 detail timeline: %+v", d.Compactions)
	}
	var tl struct {
		ID          string
		Compactions []Compaction
	}
	if s := getJSON(t, srv.URL+"/v1/capsules/A1/compactions", "key-alice", &tl); s != 200 || tl.ID != "A1" || len(tl.Compactions) != 1 ||
		tl.Compactions[0].Action != "augmented" || tl.Compactions[0].Agent != "claude-code" || tl.Compactions[0].Tokens != 180 {
		t.Errorf("GET /v1/capsules/A1/compactions: status %d, %+v", s, tl)
	}
	if s := getJSON(t, srv.URL+"/v1/capsules/B1/compactions", "key-alice", nil); s != 404 {
		t.Errorf("alice reading bob's timeline: status %d, want 404", s)
	}
	// Bob's branch has a timeline but no agent from lineage: the rule's.
	d = Detail{}
	getJSON(t, srv.URL+"/v1/capsules/B1", "key-bob", &d)
	if d.Agent != "codex" {
		t.Errorf("B1 agent %q, want codex (from its compaction rule)", d.Agent)
	}
}

// uiServer is apiServer with the web view mounted too.
func uiServer(t *testing.T) *httptest.Server { return uiServerWithCookie(t, "") }

// uiServerWithCookie adds a sign-in cookie for key to every request that
// has none, as a browser signed in with key would.
func uiServerWithCookie(t *testing.T, key string) *httptest.Server {
	t.Helper()
	opt := testOptions(t)
	token := newSessions(opt.SessionSecret, nil, nil).mint(key)
	mux := http.NewServeMux()
	Routes(opt)(mux)
	UIRoutes(opt)(mux)
	h := http.Handler(mux)
	if key != "" {
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, err := r.Cookie(cookieName); err != nil {
				r.AddCookie(&http.Cookie{Name: cookieName, Value: token})
			}
			mux.ServeHTTP(w, r)
		})
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}
