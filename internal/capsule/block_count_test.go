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

// Tags match in any case, as in Strip: an upper-case block counts too.
func TestCountOpenFoldsCase(t *testing.T) {
	text := "old <CONTINUITY-CAPSULE revision=\"1\">x</CONTINUITY-CAPSULE> mixed <Continuity-Capsule revision=\"2\">y</Continuity-Capsule> " +
		RenderRef(&Capsule{}, "") + " prose: continuity-capsules, continuity-capsule- and a-"
	body, err := json.Marshal(map[string]string{"content": text})
	if err != nil {
		t.Fatal(err)
	}
	if n := CountOpen(body); n != 3 {
		t.Errorf("CountOpen = %d, want 3 blocks", n)
	}
	if n := CountOpenText(text); n != 3 {
		t.Errorf("CountOpenText = %d, want 3 blocks", n)
	}
	for raw, want := range map[string]bool{`"</CONTINUITY-CAPSULE>"`: true, `"<continuity-Capsule>"`: true, `"continuity capsule"`: false, `"-"`: false, "": false} {
		if got := Mentions([]byte(raw)); got != want {
			t.Errorf("Mentions(%s) = %v, want %v", raw, got, want)
		}
	}
}
