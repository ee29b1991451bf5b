package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/app"
	"github.com/tether-dev/tether/internal/compaction"
	"github.com/tether-dev/tether/internal/demo"
	"github.com/tether-dev/tether/internal/fakemodel"
)

// TestMissedCompactionStillReinjects replays real sessions (five
// out-of-band compactions each, captured by test/realagents) through a
// Tether whose rules know only the agent's first compaction prompt, as after
// an agent release that rewords the later ones. Those summaries come back
// without the block; the turns after them must still get it (reinjected),
// from the same branch, and the summarisation requests must not reset the
// branch — OpenCode with its session id, Pi with none.
func TestMissedCompactionStillReinjects(t *testing.T) {
	for _, tc := range []struct{ capture, rule, later, post string }{
		{"opencode-update.jsonl", "opencode-anchored-update-1.18", "<prior-summary>", "What did we do so far?"},
		{"pi-split-turn.jsonl", "pi-summary-update", "<previous-summary>", "The conversation history before this point was compacted"},
	} {
		t.Run(tc.capture, func(t *testing.T) {
			missedReplay(t, tc.capture, tc.rule, tc.later, tc.post)
		})
	}
}

func missedReplay(t *testing.T, capture, rule, later, post string) {
	raw, err := os.ReadFile("../compaction/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	id := "  - id: " + rule + "\n"
	i := bytes.Index(raw, []byte(id))
	if i < 0 {
		t.Fatalf("rule %s not found", rule)
	}
	j := i + len(id) + bytes.Index(raw[i+len(id):], []byte("\n  - id:")) + 1
	rules, err := compaction.LoadRules(append(append([]byte(nil), raw[:i]...), raw[j:]...))
	if err != nil {
		t.Fatal(err)
	}
	fake := fakemodel.Start(demo.Model())
	t.Cleanup(fake.Close)
	e := accountingServe(t, fake, baseYAML+continuityYAML, nil, func(o *app.Options) { o.Rules = rules })

	f, err := os.Open("../compaction/testdata/" + capture)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	var posts []int
	missed := 0
	for sc.Scan() {
		var c struct {
			Seq     int               `json:"seq"`
			Path    string            `json:"path"`
			Headers map[string]string `json:"headers"`
			Body    json.RawMessage   `json:"body"`
			Kind    string            `json:"kind"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
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
		switch {
		case c.Kind == "compaction":
			if strings.Contains(string(c.Body), later) {
				missed++
			}
		case c.Kind == "main" && strings.Contains(string(c.Body), post):
			posts = append(posts, len(coding(e)))
		}
	}
	if missed < 3 {
		t.Fatalf("the capture holds %d later compactions, want at least 3", missed)
	}
	reqs := coding(e)
	last := ""
	for _, n := range posts {
		last = string(reqs[n-1].Body)
		if !strings.Contains(last, "<continuity-capsule") {
			t.Errorf("request %d after a compaction reached the model without the block", n)
		}
	}
	for _, want := range []string{"PostgreSQL", "never change the public REST API", "Redis", "GORM", demo.PlanSteps[0]} {
		if !strings.Contains(last, want) {
			t.Errorf("the last turn's block lacks %q", want)
		}
	}
}

// coding returns the requests the model received, the extractor's left out.
func coding(e *env) []fakemodel.Request {
	var out []fakemodel.Request
	for _, r := range e.fake.Requests() {
		if r.Model() != demo.ExtractorModel {
			out = append(out, r)
		}
	}
	return out
}
