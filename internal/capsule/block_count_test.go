package capsule

import (
	"encoding/json"
	"testing"
)

// The raw-body pre-check counts each rendered block once (its closing tag
// is not an opening one), also inside a JSON string.
func TestCountOpenInRawBody(t *testing.T) {
	c := &Capsule{}
	text := "summary " + RenderRef(c, "") + " later " + RenderRef(c, "")
	body, err := json.Marshal(map[string]any{"messages": []any{map[string]string{"role": "user", "content": text}}})
	if err != nil {
		t.Fatal(err)
	}
	if n := CountOpen(body); n != 2 {
		t.Errorf("CountOpen = %d, want 2 blocks", n)
	}
	if n := CountOpenText(text); n != 2 {
		t.Errorf("CountOpenText = %d, want 2 blocks", n)
	}
}
