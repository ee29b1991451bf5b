package dialect

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/tidwall/gjson"
)

const testBlock = "<continuity-capsule revision=\"7\" digest=\"sha256:ab12\">\nplan: accepted\n- use PostgreSQL, not MongoDB\n</continuity-capsule>"

const oldBlock = "<continuity-capsule revision=\"3\" digest=\"sha256:old\">\n- use MongoDB\n</continuity-capsule>"

func TestMergeText(t *testing.T) {
	tests := []struct {
		name, text, anchor, want string
	}{
		{"append", "Summary.", "", "Summary.\n\n" + testBlock},
		{"before anchor", "<analysis>a</analysis>\n<summary>s</summary>", "</summary>", "<analysis>a</analysis>\n<summary>s\n" + testBlock + "\n</summary>"},
		{"anchor missing", "no tags", "</summary>", "no tags\n\n" + testBlock},
		{"strip old", "A " + oldBlock + " B", "", "A  B\n\n" + testBlock},
		{"strip two", oldBlock + "x" + oldBlock, "", "x\n\n" + testBlock},
		{"unclosed stripped to end", "keep <continuity-capsule revision=\"2\"> partial", "", "keep \n\n" + testBlock},
		{"anchor inside old block ignored", "<summary>s " + strings.Replace(oldBlock, "MongoDB", "</summary>", 1) + " t</summary>", "</summary>", "<summary>s  t\n" + testBlock + "\n</summary>"},
		{"anchor formed by stripping", "</sum" + oldBlock + "mary>", "</summary>", "\n" + testBlock + "\n</summary>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MergeText(tt.text, testBlock, tt.anchor)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if n := strings.Count(got, "<continuity-capsule"); n != 1 {
				t.Errorf("%d blocks in result", n)
			}
		})
	}
}

var mergeTexts = []string{
	"<analysis>\nThe user chose PostgreSQL.\n</analysis>\n\n<summary>\n1. Primary Request: inventory service.\n2. Key decision: PostgreSQL, not MongoDB.\n" + oldBlock + "\n</summary>",
	"FAKE-COMPACTION-SUMMARY: User decided: use PostgreSQL, not MongoDB. Plan recorded via plan tool (3 steps). Next: create users table.",
	"## Goal\nInventory service ✓ — ünïcødé\n\n" + oldBlock + "\n## Next Steps\n1. Create schema <continuity-caps",
	"</summar</summary></summary><continuity-capsule>x</continuity-capsule",
}

// TestTextMergeSplits is the oracle property: for any split of the text into
// deltas, the streamed output equals MergeText of the whole text.
func TestTextMergeSplits(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, text := range mergeTexts {
		for _, anchor := range []string{"", "</summary>"} {
			want := MergeText(text, testBlock, anchor)
			for range 300 {
				tm := textMerge{block: testBlock, anchor: anchor}
				var got strings.Builder
				for _, d := range splitAt(text, randomCuts(rng, len(text))) {
					got.WriteString(tm.feed(d))
				}
				got.WriteString(tm.finish())
				if got.String() != want {
					t.Fatalf("anchor %q: streamed\n%q\nwant\n%q", anchor, got.String(), want)
				}
				if tm.out.String() != want {
					t.Fatalf("out %q", tm.out.String())
				}
			}
		}
	}
}

func randomCuts(rng *rand.Rand, n int) []int {
	if n < 2 {
		return nil
	}
	k := rng.IntN(n)
	cuts := make([]int, 0, k)
	pos := 0
	for range k {
		pos += 1 + rng.IntN(8)
		cuts = append(cuts, pos)
	}
	return cuts
}

// clientText returns what a client assembles from the answer's text deltas.
func clientText(t *testing.T, name Name, evs []Event) string {
	t.Helper()
	var b strings.Builder
	for _, e := range evs {
		switch name {
		case OpenAIChat:
			if string(e.Data) != "[DONE]" {
				b.WriteString(gjson.GetBytes(e.Data, "choices.0.delta.content").String())
			}
		case OpenAIResponses:
			if eventType(e) == "response.output_text.delta" {
				b.WriteString(gjson.GetBytes(e.Data, "delta").String())
			}
		case AnthropicMessages:
			if eventType(e) == "content_block_delta" && gjson.GetBytes(e.Data, "delta.type").String() == "text_delta" {
				b.WriteString(gjson.GetBytes(e.Data, "delta.text").String())
			}
		}
	}
	return b.String()
}

func runMerger(m *TextMerger, in []Event) []Event {
	var out []Event
	for _, e := range in {
		out = append(out, m.Process(e)...)
	}
	return out
}

func TestTextMergerStreams(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, name := range []Name{OpenAIChat, OpenAIResponses, AnthropicMessages} {
		for ti, text := range mergeTexts {
			for _, anchor := range []string{"", "</summary>"} {
				want := MergeText(text, testBlock, anchor)
				for range 50 {
					in := streamFor(name, splitAt(text, randomCuts(rng, len(text))))
					m := NewTextMerger(name, testBlock, anchor)
					out := runMerger(m, in)
					if got := clientText(t, name, out); got != want {
						t.Fatalf("%s text %d anchor %q: client saw\n%q\nwant\n%q", name, ti, anchor, got, want)
					}
					if m.Text() != want {
						t.Fatalf("%s: Text() = %q", name, m.Text())
					}
					checkStream(t, name, out, want)
				}
			}
		}
	}
}

// checkStream checks what a client notices beyond the deltas: valid JSON,
// the terminal event last, aggregates equal to the deltas, strictly
// increasing sequence numbers, and the block before the terminal text event.
func checkStream(t *testing.T, name Name, out []Event, want string) {
	t.Helper()
	if !IsTerminal(name, out[len(out)-1]) {
		t.Fatalf("%s: last event %s %s is not terminal", name, out[len(out)-1].Name, out[len(out)-1].Data)
	}
	lastSeq := int64(-1)
	blockSeen := false
	for i, e := range out {
		if string(e.Data) == "[DONE]" {
			continue
		}
		if !gjson.ValidBytes(e.Data) {
			t.Fatalf("event %d invalid JSON: %s", i, e.Data)
		}
		if strings.Contains(clientText(t, name, []Event{e}), "</continuity-capsule>") {
			blockSeen = true
		}
		switch name {
		case OpenAIResponses:
			if e.Name != eventType(e) {
				t.Errorf("event name %q != type %q", e.Name, eventType(e))
			}
			s := gjson.GetBytes(e.Data, "sequence_number").Int()
			if s <= lastSeq {
				t.Fatalf("sequence_number %d after %d", s, lastSeq)
			}
			lastSeq = s
			agg := map[string]string{
				"response.output_text.done":  "text",
				"response.content_part.done": "part.text",
				"response.output_item.done":  "item.content.0.text",
				"response.completed":         "response.output.1.content.0.text",
			}
			if p, ok := agg[eventType(e)]; ok && gjson.GetBytes(e.Data, "item.type").String() != "reasoning" {
				if got := gjson.GetBytes(e.Data, p).String(); got != want {
					t.Fatalf("%s %s = %q, want %q", eventType(e), p, got, want)
				}
				if !blockSeen {
					t.Fatalf("%s before the block delta", eventType(e))
				}
			}
		case AnthropicMessages:
			if eventType(e) == "content_block_stop" && gjson.GetBytes(e.Data, "index").Int() == 1 && !blockSeen {
				t.Fatal("content_block_stop before the block delta")
			}
			if eventType(e) == "content_block_delta" && gjson.GetBytes(e.Data, "delta.type").String() == "text_delta" && gjson.GetBytes(e.Data, "index").Int() != 1 {
				t.Fatal("text delta with the wrong index")
			}
		case OpenAIChat:
			if gjson.GetBytes(e.Data, "choices.0.finish_reason").String() == "stop" && !blockSeen {
				t.Fatal("finish_reason before the block chunk")
			}
			if gjson.GetBytes(e.Data, "id").String() != "chatcmpl-7" || gjson.GetBytes(e.Data, "model").String() != "gpt-test" {
				t.Fatalf("chunk lost id/model: %s", e.Data)
			}
		}
	}
}

func TestTextMergerNoTextPassesThrough(t *testing.T) {
	streams := map[Name][]Event{
		OpenAIChat: {
			ev("", `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"todowrite","arguments":"{}"}}]},"finish_reason":null}]}`),
			ev("", `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`),
			ev("", `[DONE]`),
		},
		OpenAIResponses: {
			ev("response.created", `{"type":"response.created","sequence_number":0,"response":{"id":"r","output":[]}}`),
			ev("response.output_item.done", `{"type":"response.output_item.done","sequence_number":1,"output_index":0,"item":{"id":"cmp_1","type":"compaction","encrypted_content":"FAKE-ENCRYPTED"}}`),
			ev("response.completed", `{"type":"response.completed","sequence_number":2,"response":{"id":"r","output":[{"id":"cmp_1","type":"compaction","encrypted_content":"FAKE-ENCRYPTED"}]}}`),
		},
		AnthropicMessages: {
			ev("message_start", `{"type":"message_start","message":{"id":"m","content":[],"usage":{"input_tokens":1,"output_tokens":1}}}`),
			ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}}`),
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"cmd\":\"ls\"}"}}`),
			ev("content_block_stop", `{"type":"content_block_stop","index":0}`),
			ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}}`),
			ev("message_stop", `{"type":"message_stop"}`),
		},
	}
	for name, in := range streams {
		m := NewTextMerger(name, testBlock, "")
		out := runMerger(m, in)
		if diff := cmp.Diff(in, out); diff != "" {
			t.Errorf("%s: stream changed (-in +out):\n%s", name, diff)
		}
		if m.Text() != "" {
			t.Errorf("%s: Text() = %q", name, m.Text())
		}
	}
}

func TestTextMergerLeavesOtherEventsByteIdentical(t *testing.T) {
	for _, name := range []Name{OpenAIChat, OpenAIResponses, AnthropicMessages} {
		in := streamFor(name, []string{"Hello ", "world"})
		out := runMerger(NewTextMerger(name, testBlock, ""), in)
		// The untouched events before the first text delta are identical.
		for i := 0; i < 3; i++ {
			if string(in[i].Data) != string(out[i].Data) || in[i].Name != out[i].Name {
				t.Errorf("%s: event %d changed: %s -> %s", name, i, in[i].Data, out[i].Data)
			}
		}
	}
}

func FuzzTextMerger(f *testing.F) {
	for _, s := range mergeTexts {
		f.Add(s, uint64(1), "</summary>")
		f.Add(s, uint64(7), "")
	}
	f.Fuzz(func(t *testing.T, text string, seed uint64, anchor string) {
		if len(anchor) > 64 || len(text) > 1<<14 || strings.Contains(anchor, "<continuity-capsule") {
			t.Skip()
		}
		want := MergeText(text, testBlock, anchor)
		rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b9))
		deltas := splitAt(text, randomCuts(rng, len(text)))
		tm := textMerge{block: testBlock, anchor: anchor}
		var got strings.Builder
		for _, d := range deltas {
			got.WriteString(tm.feed(d))
		}
		got.WriteString(tm.finish())
		if got.String() != want {
			t.Fatalf("streamed %q, want %q", got.String(), want)
		}
		if text == "" || !utf8.ValidString(text) || !utf8.ValidString(anchor) {
			return // the wire carries JSON strings: valid UTF-8 only
		}
		for _, name := range []Name{OpenAIChat, OpenAIResponses, AnthropicMessages} {
			m := NewTextMerger(name, testBlock, anchor)
			out := runMerger(m, streamFor(name, deltas))
			if got := clientText(t, name, out); got != want {
				t.Fatalf("%s: client saw %q, want %q", name, got, want)
			}
		}
	})
}

func TestTextMergerFinishOnTruncatedStream(t *testing.T) {
	for _, name := range []Name{OpenAIChat, OpenAIResponses, AnthropicMessages} {
		text := "Summary so far </summ"
		full := streamFor(name, []string{text})
		// Cut the stream right after the text delta.
		var cut []Event
		for _, e := range full {
			cut = append(cut, e)
			if clientText(t, name, []Event{e}) == text {
				break
			}
		}
		m := NewTextMerger(name, testBlock, "</summary>")
		out := runMerger(m, cut)
		if len(cut) == len(full) || IsTerminal(name, out[len(out)-1]) {
			t.Fatalf("%s: stream was not truncated", name)
		}
		out = append(out, m.Finish()...)
		want := MergeText(text, testBlock, "</summary>")
		if got := clientText(t, name, out); got != want {
			t.Errorf("%s: client saw %q, want %q", name, got, want)
		}
		if extra := m.Finish(); len(extra) != 0 {
			t.Errorf("%s: second Finish returned %d events", name, len(extra))
		}
	}
}
