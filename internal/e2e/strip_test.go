package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/demo"
)

// An agent that keeps an older summary next to the newest one (OpenCode
// keeps recent messages across a mid-turn compaction) sends two blocks of
// different revisions. The model must read one version of the state: the
// newest block stays, older ones are removed from the forwarded request.
// With no block to keep, a compaction request loses all carried ones to the
// current block it is given. Tags match in any case: an older block a model
// echoed in upper case is just as stale.
func TestStaleBlocksStripped(t *testing.T) {
	old := "<continuity-capsule revision=\"3\" digest=\"aaaaaaaaaaaa\">\nACTIVE DECISIONS:\n- D1: use Memcached for the cache\n</continuity-capsule>"
	t.Run("lower case", func(t *testing.T) { staleBlocksStripped(t, old) })
	t.Run("upper case older block", func(t *testing.T) {
		staleBlocksStripped(t, strings.ReplaceAll(old, "continuity-capsule", "CONTINUITY-CAPSULE"))
	})
}

func staleBlocksStripped(t *testing.T, old string) {
	e := newEnv(t, envOptions{yaml: continuityYAML})
	cur := "<continuity-capsule revision=\"5\" digest=\"bbbbbbbbbbbb\">\nACTIVE DECISIONS:\n- D2: Use Redis for the cache (instead of Memcached)\n</continuity-capsule>"
	body, _ := json.Marshal(map[string]any{
		"model": "fake-model",
		"messages": []map[string]string{
			{"role": "system", "content": "You are a coding agent."},
			{"role": "user", "content": "What did we do so far?"},
			{"role": "assistant", "content": "Earlier summary: building the inventory service.\n\n" + old},
			{"role": "assistant", "content": "Newer summary: the cache moved to Redis.\n\n" + cur},
			{"role": "user", "content": "Continue with the next step of the inventory service, please."},
		},
	})
	req, _ := http.NewRequest(http.MethodPost, e.url+"/v1/chat/completions", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer sk-test-0123456789")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, msg)
	}
	var got string
	for _, r := range e.fake.Requests() {
		if r.Model() != demo.ExtractorModel {
			var sent struct{ Messages []struct{ Content string } }
			if err := json.Unmarshal(r.Body, &sent); err != nil {
				t.Fatal(err)
			}
			got = ""
			for _, m := range sent.Messages {
				got += m.Content + "\n"
			}
		}
	}
	if n := strings.Count(strings.ToLower(got), "<continuity-capsule"); n != 1 {
		t.Fatalf("the model was shown %d blocks, want 1:\n%s", n, got)
	}
	if !strings.Contains(got, `revision="5"`) || strings.Contains(got, "D1: use Memcached") {
		t.Errorf("the block that stayed is not the newest:\n%s", got)
	}
	if !strings.Contains(got, "Earlier summary: building the inventory service.") || !strings.Contains(got, "Newer summary: the cache moved to Redis.") {
		t.Errorf("summary text around the blocks was lost:\n%s", got)
	}
}

// A second compaction: the history the summariser is asked to compact holds
// the first summary with its block, and the request is augmented with the
// current block. The summariser must read one version of the state.
func TestSecondCompactionSummariserGetsOneBlock(t *testing.T) {
	e := newEnv(t, envOptions{yaml: continuityYAML})
	a := e.agent("second-compaction")
	say(t, a, "Please make a plan and track it with your todo list.", "Decision: use PostgreSQL, not MongoDB.")
	for i := range 2 {
		compact(t, a)
		sent := e.lastPrimary() // the compaction request as the summariser got it
		if n := strings.Count(sent, "<continuity-capsule"); n != 1 {
			t.Fatalf("compaction %d: the summariser got %d blocks, want 1", i+1, n)
		}
		if !strings.Contains(block(sent), "use PostgreSQL, not MongoDB") {
			t.Fatalf("compaction %d: the block given to the summariser lost the decision:\n%s", i+1, block(sent))
		}
		say(t, a, "Continue.")
	}
}
