package dialect

import (
	"testing"

	"github.com/tidwall/gjson"
)

// The type an event's data is read as is the one gjson reads, whichever
// way the data writes it.
func TestEventTypeAsGjsonReadsIt(t *testing.T) {
	for _, data := range []string{
		`{"type":"message_stop"}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}`,
		`{"type":"message_stop","type":"other"}`,
		`{"type":"mess\"age_stop"}`,
		`{"type":"message\u005fstop"}`,
		`{"type":"message_stop" ,"x":1}`,
		`{ "type":"message_stop"}`,
		`{"type":"message_stop`,
		`{"type":"`,
		`{"type":"a"x}`,
		`{"type":""}`,
		`{"index":0,"type":"message_delta"}`,
		`{"type":1}`,
		`[DONE]`,
		``,
	} {
		ev := Event{Name: "fallback", Data: []byte(data)}
		want := ev.Name
		if r := gjson.GetBytes(ev.Data, "type"); r.Type == gjson.String {
			want = r.String()
		}
		if got := eventType(ev); got != want {
			t.Errorf("%s: type %q, gjson reads %q", data, got, want)
		}
	}
}
