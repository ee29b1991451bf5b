package dialect

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// An item resent in a later request (or repeated within one) reads the same
// from the memo as when it was decoded, at its own position.
func TestMessagesResentFromMemo(t *testing.T) {
	item := `{"role":"assistant","content":[{"type":"text","text":"memo check: reading the file"},{"type":"tool_use","id":"toolu_m1","name":"Read","input":{"file_path":"/x.go"}}]}`
	body := []byte(`{"model":"m","messages":[` + item + `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_m1","content":"package x"}]},` + item + `]}`)
	memo.mu.Lock()
	memo.m = nil
	memo.mu.Unlock()
	parse := func() []Message {
		v, err := Parse(AnthropicMessages, "/v1/messages", nil, body)
		if err != nil {
			t.Fatal(err)
		}
		return v.Messages()
	}
	first := parse()
	if len(first) != 3 || first[0].Index != 0 || first[2].Index != 2 {
		t.Fatalf("messages %+v", first)
	}
	if first[0].Text != "memo check: reading the file" || len(first[0].ToolCalls) != 1 || string(first[0].ToolCalls[0].Arguments) != `{"file_path":"/x.go"}` {
		t.Errorf("item read as %+v", first[0])
	}
	memo.mu.Lock()
	n := len(memo.m)
	memo.mu.Unlock()
	if n != 2 {
		t.Errorf("memo holds %d items, want the 2 distinct ones", n)
	}
	if diff := cmp.Diff(first, parse()); diff != "" {
		t.Errorf("resent request reads differently (-first +resent):\n%s", diff)
	}
}
