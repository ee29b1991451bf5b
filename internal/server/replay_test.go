package server_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/fakemodel"
)

// captured is one line of a recorded agent session.
type captured struct {
	Seq     int               `json:"seq"`
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Headers map[string]string `json:"headers"`
	Body    any               `json:"body"`
	Kind    string            `json:"kind"`
}

// loadCaptures reads every testdata/captures/*.jsonl.gz line.
func loadCaptures(t testing.TB) map[string][]captured {
	t.Helper()
	files, err := filepath.Glob("testdata/captures/*.jsonl.gz")
	if err != nil || len(files) == 0 {
		t.Fatalf("no captures in testdata/captures (%v)", err)
	}
	out := map[string][]captured{}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(fh)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		sc := bufio.NewScanner(zr)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
			dec.UseNumber()
			var c captured
			if err := dec.Decode(&c); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			name := strings.TrimSuffix(filepath.Base(f), ".jsonl.gz")
			out[name] = append(out[name], c)
		}
		if err := sc.Err(); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		zr.Close()
		fh.Close()
	}
	return out
}

// Headers the client-side transport owns; they are not replayed.
var notReplayed = map[string]bool{"Host": true, "Content-Length": true, "Accept-Encoding": true, "Connection": true}

// replayHeader returns the captured headers ready to send, with a fake
// credential in place of the redacted one.
func replayHeader(c captured) http.Header {
	h := http.Header{}
	for k, v := range c.Headers {
		ck := http.CanonicalHeaderKey(k)
		if notReplayed[ck] && (ck != "Connection" || c.Method != http.MethodGet) {
			continue // a WebSocket attempt keeps its Connection: Upgrade
		}
		switch ck {
		case "Authorization":
			v = "Bearer sk-replay-caller-key"
		case "X-Api-Key":
			v = "sk-ant-replay-caller-key"
		}
		h.Set(ck, v)
	}
	return h
}

// TestReplayCaptures sends every recorded agent request through a
// passthrough proxy: the provider receives the very bytes the agent sent, on
// the same method and path (query included), with the agent's headers.
func TestReplayCaptures(t *testing.T) {
	all := loadCaptures(t)
	fake := startFake(t, fakemodel.Static("ok"))
	p := startProxy(t, proxyOpts{cfg: passthroughConfig(t, fake.URL, nil)})

	posts, gets := 0, 0
	for name, lines := range all {
		for _, c := range lines {
			h := replayHeader(c)
			if c.Method == http.MethodGet {
				gets++
				resp, data := p.do(t, c.Method, c.Path, h, nil)
				if resp.StatusCode != http.StatusUpgradeRequired {
					t.Errorf("%s #%d GET %s: status %d, want 426", name, c.Seq, c.Path, resp.StatusCode)
				}
				dialectError(t, false, data)
				continue
			}
			posts++
			body, err := json.Marshal(c.Body)
			if err != nil {
				t.Fatalf("%s #%d: %v", name, c.Seq, err)
			}
			fake.Reset()
			resp, data := p.do(t, c.Method, c.Path, h, body)
			if resp.StatusCode != http.StatusOK {
				t.Errorf("%s #%d %s %s (%s): status %d: %.300s", name, c.Seq, c.Method, c.Path, c.Kind, resp.StatusCode, data)
				continue
			}
			reqs := fake.Requests()
			if len(reqs) != 1 {
				t.Errorf("%s #%d: fake received %d requests, want 1", name, c.Seq, len(reqs))
				continue
			}
			got := reqs[0]
			gotPath := got.Path
			if got.Query != "" {
				gotPath += "?" + got.Query
			}
			if got.Method != c.Method || gotPath != c.Path {
				t.Errorf("%s #%d: upstream saw %s %s, want %s %s", name, c.Seq, got.Method, gotPath, c.Method, c.Path)
			}
			if !bytes.Equal(got.Body, body) {
				t.Errorf("%s #%d (%s): upstream body differs from the client's (%d vs %d bytes)", name, c.Seq, c.Kind, len(got.Body), len(body))
			}
			for k, vv := range h {
				if g := got.Header.Values(k); strings.Join(g, ",") != strings.Join(vv, ",") {
					t.Errorf("%s #%d: upstream header %s = %q, want %q", name, c.Seq, k, g, vv)
				}
			}
		}
	}
	if posts < 40 || gets < 3 {
		t.Errorf("replayed %d POST and %d GET lines; the captures hold more", posts, gets)
	}
	// The proxy still answers after the whole replay.
	if resp, _ := p.do(t, http.MethodGet, "/healthz", nil, nil); resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz after replay: %d", resp.StatusCode)
	}
}
