package preserve

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/capsule"
	"github.com/tether-dev/tether/internal/dialect"
)

// countOpen reads a next request only where it is new; it must count what
// a scan of the whole body counts, whatever the history holds: blocks in
// any case, in the system prompt outside the conversation, a history
// edited in the middle (a fork), a system prompt that changes, and a body
// that is not the one the view indexed.
func TestCountOpenAgreesWithScan(t *testing.T) {
	block := func(i int) string {
		tags := []string{"continuity-capsule", "CONTINUITY-CAPSULE", "Continuity-Capsule"}
		return fmt.Sprintf(`<%s ref="r%d">plan</%s>`, tags[i%3], i, tags[i%3])
	}
	// Long enough for ParseFrom to remember it: the system prompt after
	// the history is then counted once per distinct prompt (tailOpen).
	msgs := []map[string]any{{"role": "user", "content": strings.Repeat("context ", 2600)}}
	body := func(system string) []byte {
		b, err := json.Marshal(map[string]any{"model": "m", "max_tokens": 10, "system": system, "messages": msgs})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	check := func(step string, b []byte) {
		t.Helper()
		v, err := dialect.ParseFrom("alice", dialect.AnthropicMessages, "/v1/messages", nil, b)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := countOpen(v, b), capsule.CountOpen(b); got != want {
			t.Fatalf("%s: countOpen = %d, a scan of the body counts %d", step, got, want)
		}
		other := append([]byte(nil), b...) // equal bytes, another body
		other = []byte(strings.Replace(string(other), `"model":"m"`, `"model":"n"`, 1))
		if got, want := countOpen(v, other), capsule.CountOpen(other); got != want {
			t.Fatalf("%s, another body: countOpen = %d, want %d", step, got, want)
		}
	}
	for i := range 40 {
		role := []string{"user", "assistant"}[i%2]
		text := fmt.Sprintf("turn %d", i)
		if i%4 == 1 {
			text += " " + block(i)
		}
		msgs = append(msgs, map[string]any{"role": role, "content": text})
		check(fmt.Sprintf("turn %d", i), body("sys "+block(100)))
	}
	// A fork: an early message loses its block; the same request again.
	msgs[1]["content"] = "turn 1, edited"
	check("fork", body("sys"))
	check("fork again", body("sys"))
	// Back to the longer history, whose prefixes were counted before.
	msgs[1]["content"] = "turn 1 " + block(1)
	check("back", body("sys "+block(100)))
	// The same history with another system prompt of the same length.
	check("other prompt", body("sys "+strings.Replace(block(100), "plan", "todo", 1)))
	check("one more block", body("sys "+block(100)+block(101)))
}

// BenchmarkCountOpenNextTurn counts the opening tags of an agent's next
// request, a 2 MiB history with one new message, against a scan of the
// whole body.
//
//	go test -run '^$' -bench CountOpenNextTurn ./internal/preserve/
func BenchmarkCountOpenNextTurn(b *testing.B) {
	var msgs []map[string]any
	for i := 0; len(msgs) < 2 || i < 4000; i++ {
		msgs = append(msgs, map[string]any{"role": []string{"user", "assistant"}[i%2],
			"content": fmt.Sprintf("step %d: run go test ./internal/... --count=1 -run TestX-%d and read the diff-stat", i, i) + strings.Repeat(" x-y", 100)})
	}
	parse := func(n int) (*dialect.View, []byte) {
		body, err := json.Marshal(map[string]any{"model": "m", "max_tokens": 10, "messages": msgs[:n]})
		if err != nil {
			b.Fatal(err)
		}
		v, err := dialect.ParseFrom("bench", dialect.AnthropicMessages, "/v1/messages", nil, body)
		if err != nil {
			b.Fatal(err)
		}
		return v, body
	}
	prev, prevBody := parse(len(msgs) - 1)
	countOpen(prev, prevBody)
	v, body := parse(len(msgs))
	b.Logf("%d KiB, %d items", len(body)>>10, v.NumItems())
	b.Run("scan", func(b *testing.B) {
		for b.Loop() {
			capsule.CountOpen(body)
		}
	})
	b.Run("countOpen", func(b *testing.B) {
		for b.Loop() {
			openCounts.put(v.PrefixIDs()[len(msgs)-2], 0) // as after the previous request
			countOpen(v, body)
		}
	})
}
