package compaction

import (
	"net/http"
	"testing"

	"github.com/tether-dev/tether/internal/dialect"
)

// FuzzClassify feeds arbitrary bodies through the one-pass scanner: it must
// never panic and must agree with the View on what it reads.
func FuzzClassify(f *testing.F) {
	for _, file := range []string{"testdata/pi.jsonl", "testdata/opencode.jsonl", "testdata/pi-anthropic-messages.jsonl"} {
		for _, c := range loadCaptures(f, file) {
			f.Add(uint8(0), []byte(c.Body))
			f.Add(uint8(1), []byte(c.Body))
			f.Add(uint8(2), []byte(c.Body))
		}
	}
	f.Add(uint8(2), []byte(`{"input":"x\"y"}`))
	f.Add(uint8(0), []byte(`{"messages":[{"role":"user","content":[{"type":"text","text":"a\\"}]}]}`))
	names := []dialect.Name{dialect.AnthropicMessages, dialect.OpenAIChat, dialect.OpenAIResponses}
	rs := Default()
	f.Fuzz(func(t *testing.T, d uint8, body []byte) {
		v, err := dialect.Parse(names[int(d)%len(names)], "/v1/x", http.Header{}, body)
		if err != nil {
			return
		}
		rs.Classify(v)
		p := probe{v: v, name: v.Dialect()}
		if got, want := lastUserText(&p), v.LastUserText(); got != want {
			t.Errorf("last user text %q, View says %q", got, want)
		}
		if got, want := p.lastItemType(), v.LastItemType(); got != want {
			t.Errorf("last item type %q, View says %q", got, want)
		}
	})
}

// lastUserText is the probe's last user text as the rules read it.
func lastUserText(p *probe) string {
	t, _ := p.lastUserItem().texts()
	return t
}
