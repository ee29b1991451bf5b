package replicas

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tether-dev/tether/internal/fakemodel"
	"github.com/tether-dev/tether/internal/store/storetest"
)

// capture is one recorded request of a real agent, with the text the
// provider answered (internal/session/testdata).
type capture struct {
	Seq     int               `json:"seq"`
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Kind    string            `json:"kind"`
	Headers map[string]string `json:"headers"`
	Body    json.RawMessage   `json:"body"`
	Reply   struct {
		Text string `json:"text"`
	} `json:"reply"`
}

// agents are the captured sessions played: each agent's wire format, every
// one through at least one compaction (Pi through two).
var agents = []string{"claude", "codex", "codex-openai-provider", "opencode", "pi", "pi-anthropic-messages"}

func loadCaptures(t testing.TB, name string) []capture {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "session", "testdata", name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []capture
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		var c capture
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		if c.Method == http.MethodPost {
			out = append(out, c)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}

// scripted answers every request with the captured reply of the request
// being played (requests are played one at a time).
type scripted struct {
	mu   sync.Mutex
	text string
}

func (s *scripted) set(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.text = text
}

func (s *scripted) respond(*fakemodel.Request) fakemodel.Reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fakemodel.Reply{Text: s.text, InputTokens: 1000, OutputTokens: 50}
}

const secret = "replicas-test-secret-0123456789abcdef"

// replicaYAML: continuity on, the built-in extractor, passthrough callers
// (principal by key fingerprint), one shared secret.
const replicaYAML = `
store: "%[2]s"
secret: ` + secret + `
providers:
  - {name: anthropic, dialect: anthropic, base_url: "%[1]s"}
  - {name: openai, dialect: openai, base_url: "%[1]s/v1"}
routes:
  - {match: "*", provider: anthropic}
  - {match: "*", provider: openai}
compaction_continuity:
  enabled: true
  barrier_timeout: 5s
`

// played is what a run leaves behind.
type played struct {
	forwarded []string          // bodies the provider received, in order
	capsules  map[string]string // A-leg → revision and data of the head
	history   map[string][]int64
	ledger    int
	requests  int
	killed    int // requests the killed replica served
	pending   int // reservations never settled
}

// play sends every agent's captured session through the front in turn and
// collects what the provider and the store saw. killAt > 0 kills replica 1
// after that many requests.
func play(t *testing.T, replicas, killAt int) played {
	t.Helper()
	base := storetest.PostgresURL(t)
	storeURL := storetest.FreshSearchPath(t, base, "tether_replicas")
	sc := &scripted{}
	fake := fakemodel.Start(sc.respond)
	t.Cleanup(fake.Close)
	yaml := sprintf(replicaYAML, fake.URL, storeURL)
	reps := make([]*replica, replicas)
	for i := range reps {
		reps[i] = startReplica(t, yaml)
	}
	fr := startFront(t, reps)
	client := &http.Client{}
	n := 0
	for _, name := range agents {
		for _, c := range loadCaptures(t, name) {
			if killAt > 0 && n == killAt {
				fr.kill(t, 1)
			}
			n++
			sc.set(c.Reply.Text)
			req, err := http.NewRequest(c.Method, fr.url+c.Path, bytes.NewReader(c.Body))
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range c.Headers {
				switch strings.ToLower(k) {
				case "host", "content-length", "accept-encoding", "connection":
					continue
				case "authorization":
					v = "Bearer sk-replicas-caller-" + name
				case "x-api-key":
					v = "sk-ant-replicas-caller-" + name
				}
				req.Header.Set(k, v)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("%s #%d: %v", name, c.Seq, err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s #%d (%s): status %d", name, c.Seq, c.Kind, resp.StatusCode)
			}
			fr.idle(t)
		}
	}
	for _, r := range reps {
		r.stop(t, false) // flushes the ledger
	}
	var out played
	out.requests = n
	for _, r := range fake.Requests() {
		out.forwarded = append(out.forwarded, string(r.Body))
	}
	st := openStore(t, storeURL)
	ctx := context.Background()
	heads, err := st.ListCapsules(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	out.capsules, out.history = map[string]string{}, map[string][]int64{}
	for _, h := range heads {
		out.capsules[h.ALeg] = sprintf("r%d %s", h.Revision, h.Data)
		hist, err := st.CapsuleHistory(ctx, h.Principal, h.ALeg, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range hist {
			out.history[h.ALeg] = append(out.history[h.ALeg], rec.Revision)
		}
	}
	rows, err := st.LedgerEntries(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	out.ledger = len(rows)
	pending, err := st.PendingReservations(ctx, time.Now().Add(100*365*24*time.Hour), 0)
	if err != nil {
		t.Fatal(err)
	}
	out.pending = len(pending)
	if replicas > 1 {
		t.Logf("requests per replica: %v", fr.hits)
	}
	if killAt > 0 {
		out.killed = fr.hits[1]
	}
	return out
}

// TestThreeReplicasMatchOneProcess plays every agent's captured session
// (Claude Code, Codex, OpenCode, Pi; compactions in band and out of band)
// through a round-robin front over three replicas on one PostgreSQL, every
// request on the next replica, and kills one replica mid-run. The provider
// must receive exactly the bytes it receives from one process (capsule
// blocks, reinjections and epoch tokens included), the capsules and their
// revision histories must be identical, and every request must have its
// ledger row.
func TestThreeReplicasMatchOneProcess(t *testing.T) {
	one := play(t, 1, 0)
	three := play(t, 3, 17)
	if len(one.capsules) == 0 {
		t.Fatal("the single-process run stored no capsule: the captures exercise nothing")
	}
	if diff := cmp.Diff(one.forwarded, three.forwarded); diff != "" {
		t.Errorf("the provider received different requests from three replicas (-one +three):\n%.4000s", diff)
	}
	if diff := cmp.Diff(one.capsules, three.capsules); diff != "" {
		t.Errorf("capsules differ (-one +three):\n%.4000s", diff)
	}
	if diff := cmp.Diff(one.history, three.history); diff != "" {
		t.Errorf("capsule revisions differ (-one +three):\n%s", diff)
	}
	// Every request has its row in the one ledger table, the killed
	// replica's included (a call it never settled would be a recorded
	// reservation, released and recorded by the survivors once expired).
	if one.ledger != one.requests {
		t.Errorf("ledger rows: one process %d of %d requests", one.ledger, one.requests)
	}
	if three.ledger+three.pending != three.requests {
		t.Errorf("ledger rows: three replicas %d (+%d reservations pending) of %d requests (%d served by the killed one)",
			three.ledger, three.pending, three.requests, three.killed)
	}
	t.Logf("ledger rows: three replicas %d of %d requests; the killed replica served %d", three.ledger, three.requests, three.killed)
}
