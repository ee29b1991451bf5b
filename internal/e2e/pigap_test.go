package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tether-dev/tether/internal/fakemodel"
)

// emptyCapsuleYAML keeps continuity on but records nothing (no extractor,
// no plan harvest): every compaction finds the capsule empty.
const emptyCapsuleYAML = `
compaction_continuity:
  enabled: true
  barrier_timeout: 2s
  preserve: {plan: false}
  extractor:
    route: none
`

// TestPiLineageWithEmptyCapsule replays Pi sessions (real wire format, no
// client session id) whose capsule is empty at every compaction. The
// summary Pi receives must still be recorded for the branch, so the turn
// that opens with it continues the same session in its next epoch instead
// of opening a new one: lineage must not depend on whether the capsule had
// content. The second case drops Pi's history-summary request and keeps
// only its split-turn request, a compaction Pi makes when the kept part
// starts inside the first turn.
func TestPiLineageWithEmptyCapsule(t *testing.T) {
	for _, tc := range []struct {
		name    string
		capture string
		skip    func(body string) bool
	}{
		{"history and split-turn summaries", "pi.jsonl", nil},
		{"split-turn summary only", "pi.jsonl", func(body string) bool {
			return strings.Contains(body, "<conversation>") && !strings.Contains(body, "This is the PREFIX of a turn") &&
				strings.Contains(body, "Plan recorded. We will use PostgreSQL")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The model answers every request as it did when the session
			// was captured, so the summaries Pi quotes later are the ones
			// it received.
			var next atomic.Pointer[string]
			fake := fakemodel.Start(func(*fakemodel.Request) fakemodel.Reply {
				if p := next.Load(); p != nil {
					return fakemodel.Reply{Text: *p}
				}
				return fakemodel.Reply{Text: "OK."}
			})
			t.Cleanup(fake.Close)
			e := accountingServe(t, fake, baseYAML+emptyCapsuleYAML, nil)
			posts := replayCapture(t, e, "../compaction/testdata/"+tc.capture, tc.skip, &next)
			if posts == 0 {
				t.Fatal("the capture holds no turn after a compaction")
			}
			if got := decisionsMetric(t, e, `tether_lineage_events_total{event="new"}`); got != 1 {
				t.Errorf("%v new sessions for one Pi session; a turn after a compaction opened a new session", got)
			}
			if got := decisionsMetric(t, e, `tether_lineage_events_total{event="epoch"}`); got != float64(posts) {
				t.Errorf("%v turns attributed to a next epoch, want %d", got, posts)
			}
		})
	}
}

// replayCapture sends a capture's requests to e in order (those skip
// accepts left out), setting reply to the captured answer before each, and
// returns how many main requests open with a compaction summary.
func replayCapture(t *testing.T, e *env, file string, skip func(string) bool, reply *atomic.Pointer[string]) int {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	posts := 0
	for sc.Scan() {
		var c struct {
			Seq     int               `json:"seq"`
			Path    string            `json:"path"`
			Headers map[string]string `json:"headers"`
			Body    json.RawMessage   `json:"body"`
			Kind    string            `json:"kind"`
			Reply   struct {
				Text string `json:"text"`
			} `json:"reply"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		if skip != nil && skip(string(c.Body)) {
			continue
		}
		reply.Store(&c.Reply.Text)
		req, _ := http.NewRequest(http.MethodPost, e.url+c.Path, bytes.NewReader(c.Body))
		for k, v := range c.Headers {
			if !strings.EqualFold(k, "Authorization") && !strings.EqualFold(k, "Content-Length") && !strings.EqualFold(k, "Host") {
				req.Header.Set(k, v)
			}
		}
		req.Header.Set("Authorization", "Bearer sk-test-0123456789")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body := new(bytes.Buffer)
		_, _ = body.ReadFrom(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("seq %d: status %d: %s", c.Seq, resp.StatusCode, body)
		}
		if c.Kind == "main" && strings.Contains(string(c.Body), "The conversation history before this point was compacted") {
			posts++
		}
	}
	return posts
}
