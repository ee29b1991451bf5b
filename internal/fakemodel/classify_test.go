package fakemodel_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/fakemodel"
)

type captureLine struct {
	Seq     int               `json:"seq"`
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Headers map[string]string `json:"headers"`
	Body    json.RawMessage   `json:"body"`
	Kind    string            `json:"kind"`
}

// loadCaptures reads every request captured from the real agents.
func loadCaptures(t testing.TB) map[string][]captureLine {
	t.Helper()
	files, err := filepath.Glob("testdata/captures/*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no captures in testdata/captures: %v", err)
	}
	out := map[string][]captureLine{}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 8<<20)
		for sc.Scan() {
			var c captureLine
			if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			out[filepath.Base(f)] = append(out[filepath.Base(f)], c)
		}
		if err := sc.Err(); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		fh.Close()
	}
	return out
}

func (c captureLine) request() *fakemodel.Request {
	h := http.Header{}
	for k, v := range c.Headers {
		h.Set(k, v)
	}
	path, query, _ := strings.Cut(c.Path, "?")
	body := []byte(c.Body)
	if string(body) == "null" {
		body = nil
	}
	return &fakemodel.Request{Seq: c.Seq, Method: c.Method, Path: path, Query: query, Header: h, Body: body}
}

func TestClassifyCaptures(t *testing.T) {
	counts := map[string]int{}
	for file, lines := range loadCaptures(t) {
		for _, c := range lines {
			want := c.Kind
			switch want {
			case fakemodel.KindMain, fakemodel.KindCompaction, fakemodel.KindTitle:
			default: // e.g. "websocket_upgrade(refused)"
				want = fakemodel.KindProbe
			}
			counts[want]++
			if got := fakemodel.Classify(c.request()); got != want {
				t.Errorf("%s seq %d (%s %s): Classify = %q, want %q", file, c.Seq, c.Method, c.Path, got, want)
			}
		}
	}
	// Every label must be exercised, or the test proves little.
	for _, k := range []string{fakemodel.KindMain, fakemodel.KindCompaction, fakemodel.KindTitle, fakemodel.KindProbe} {
		if counts[k] == 0 {
			t.Errorf("no capture labelled %q", k)
		}
	}
}

func TestClassifyMarkersInOtherDialects(t *testing.T) {
	tests := []struct {
		name string
		req  fakemodel.Request
		want string
	}{
		{"compact endpoint", fakemodel.Request{Method: "POST", Path: "/v1/responses/compact", Body: []byte(`{"input":[]}`)}, fakemodel.KindCompaction},
		{"count tokens", fakemodel.Request{Method: "POST", Path: "/v1/messages/count_tokens", Body: []byte(`{}`)}, fakemodel.KindProbe},
		{"anchored system in responses instructions", fakemodel.Request{Method: "POST", Path: "/v1/responses",
			Body: []byte(`{"instructions":"You are an anchored context summarization assistant.","input":"x"}`)}, fakemodel.KindCompaction},
		{"title in anthropic system string", fakemodel.Request{Method: "POST", Path: "/v1/messages",
			Body: []byte(`{"system":"You are a title generator. Output a title.","messages":[{"role":"user","content":"hi"}]}`)}, fakemodel.KindTitle},
		{"claude marker only in an earlier user turn", fakemodel.Request{Method: "POST", Path: "/v1/messages",
			Body: []byte(`{"messages":[{"role":"user","content":"Your task is to create a detailed summary of the conversation so far"},{"role":"assistant","content":"ok"},{"role":"user","content":"next"}]}`)}, fakemodel.KindMain},
		{"opencode v2 user marker in chat", fakemodel.Request{Method: "POST", Path: "/v1/chat/completions",
			Body: []byte(`{"messages":[{"role":"user","content":[{"type":"text","text":"You MUST summarize the conversation above into a structured summary"}]}]}`)}, fakemodel.KindCompaction},
		{"codex metadata header", fakemodel.Request{Method: "POST", Path: "/v1/responses",
			Header: http.Header{"X-Codex-Turn-Metadata": {`{"request_kind":"compaction"}`}}, Body: []byte(`{"input":[]}`)}, fakemodel.KindCompaction},
		{"plain turn", fakemodel.Request{Method: "POST", Path: "/v1/responses", Body: []byte(`{"input":"summarise the README"}`)}, fakemodel.KindMain},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.req.Header == nil {
				tt.req.Header = http.Header{}
			}
			if got := fakemodel.Classify(&tt.req); got != tt.want {
				t.Errorf("Classify = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestByKindAnswersCompactionDifferently(t *testing.T) {
	s := start(t, fakemodel.ByKind(map[string]fakemodel.Responder{
		fakemodel.KindCompaction: fakemodel.Static("SUMMARY"),
	}, fakemodel.Static("TURN")))
	lines := loadCaptures(t)["pi.jsonl"]
	var got []string
	for _, c := range lines[1:3] { // main turn, then the compaction request
		_, _, b := do(t, "POST", s.URL+c.request().Path, nil, strings.Replace(string(c.Body), `"stream":true`, `"stream":false`, 1))
		var resp struct {
			Choices []struct{ Message struct{ Content string } }
		}
		if err := json.Unmarshal(b, &resp); err != nil || len(resp.Choices) == 0 {
			t.Fatalf("answer %s: %v", b, err)
		}
		got = append(got, resp.Choices[0].Message.Content)
	}
	if strings.Join(got, ",") != "TURN,SUMMARY" {
		t.Errorf("answers = %q, want TURN then SUMMARY", got)
	}
}

func FuzzClassify(f *testing.F) {
	for _, lines := range loadCaptures(f) {
		for _, c := range lines {
			f.Add(c.Path, []byte(c.Body))
		}
	}
	f.Add("/v1/responses", []byte(`{"input":[{"type":"compaction_trigger"}]}`))
	f.Add("/v1/messages", []byte(`{"system":[{"text":1}],"messages":"x"}`))
	valid := map[string]bool{fakemodel.KindMain: true, fakemodel.KindCompaction: true, fakemodel.KindTitle: true, fakemodel.KindProbe: true}
	f.Fuzz(func(t *testing.T, path string, body []byte) {
		got := fakemodel.Classify(&fakemodel.Request{Method: "POST", Path: path, Header: http.Header{}, Body: body})
		if !valid[got] {
			t.Fatalf("Classify = %q", got)
		}
	})
}
