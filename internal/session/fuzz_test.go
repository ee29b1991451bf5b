package session

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tether-dev/tether/internal/dialect"
)

// FuzzOutOfBandText feeds arbitrary summarisation-request text through the
// parsers that read it (quoted turns, epoch token, summary lines) and
// through Resolve: no panic, bounded output, and an unknown request is
// never attributed.
func FuzzOutOfBandText(f *testing.F) {
	for _, name := range []string{"pi", "opencode"} {
		for _, c := range loadCaptures(f, name) {
			if c.Kind == "compaction" {
				f.Add(c.view(f).LastUserText())
			}
		}
	}
	f.Add("<conversation>\n[User]: \"quoted\"\n</conversation><previous-summary>line of a summary here</previous-summary>")
	f.Add(`<continuity-capsule ref="abc_DEF-123" revision="1">x</continuity-capsule><continuity-capsule ref="`)
	r := newTestResolver(newMemStore())
	f.Fuzz(func(t *testing.T, text string) {
		turns := quotedUserTurns(text, oobTurnsMax)
		if len(turns) > oobTurnsMax {
			t.Fatalf("%d turns", len(turns))
		}
		for _, l := range summaryLines(text, 8) {
			if len(l) < minSummaryLine || strings.Contains(l, "\n") {
				t.Fatalf("bad line %q", l)
			}
		}
		if !utf8.ValidString(text) {
			return
		}
		ref, err := r.Resolve(context.Background(), "fuzz", chatView(t, nil, u(text)), Hints{Compaction: true, OutOfBand: true})
		if err != nil {
			t.Fatal(err)
		}
		if ref.Event != EventUnattributed {
			t.Fatalf("attributed with an empty store: %+v", ref)
		}
	})
}

// FuzzHint: any header value is either ignored or becomes a bounded,
// printable hint.
func FuzzHint(f *testing.F) {
	f.Add("ses_dc884e03bffepuzWGzr2btJ5gL", `{"session_id":"3f0d8b50"}`, "01a2377a:1")
	f.Add(strings.Repeat("x", 200), "user_x_account_y_session_z", "t:-1")
	f.Fuzz(func(t *testing.T, sid, userID, window string) {
		hdr := http.Header{}
		hdr["X-Session-Id"] = []string{sid}
		hdr["X-Codex-Window-Id"] = []string{window}
		body := `{"model":"m","metadata":{"user_id":` + quote(userID) + `},"messages":[]}`
		v, err := dialect.Parse(dialect.AnthropicMessages, "/v1/messages", hdr, []byte(body))
		if err != nil {
			return
		}
		h := hintOf(v)
		if h.value != "" {
			_, rest, _ := strings.Cut(h.value, ":")
			if len(rest) == 0 || len(rest) > maxHint {
				t.Fatalf("hint length %d", len(rest))
			}
			for i := 0; i < len(rest); i++ {
				if rest[i] < 0x21 || rest[i] > 0x7e {
					t.Fatalf("unprintable hint %q", rest)
				}
			}
		}
		if h.window < 0 || h.window > 1<<20+1 {
			t.Fatalf("window %d", h.window)
		}
	})
}

func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == utf8.RuneError:
			b.WriteString(" ")
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
