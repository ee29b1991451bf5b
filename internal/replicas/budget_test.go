package replicas

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/tether-dev/tether/internal/fakemodel"
	"github.com/tether-dev/tether/internal/store/storetest"
)

// budgetYAML: one principal with a token budget, shared by three replicas.
const budgetYAML = `
store: "%[2]s"
secret: ` + secret + `
providers:
  - {name: anthropic, dialect: anthropic, base_url: "%[1]s", api_key: sk-operator-key}
routes:
  - {match: "*", provider: anthropic}
principals:
  - {id: alice, account: team, keys: ["alice-proxy-key-0123456789"]}
budgets:
  - {principal: alice, period: total, max_tokens: 20000}
`

// TestBudgetExactAcrossReplicas: one principal's budget is one counter in
// the shared store, so three replicas admitting the principal's requests at
// the same time spend no more than the budget plus one request per replica
// in flight, and every admitted request has its ledger row.
func TestBudgetExactAcrossReplicas(t *testing.T) {
	storeURL := storetest.FreshSearchPath(t, storetest.PostgresURL(t), "tether_replicas")
	// The provider counts about one token per four bytes, as the
	// admission estimate does.
	fake := fakemodel.Start(func(r *fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Text: "ok", InputTokens: int64(len(r.Body) / 4), OutputTokens: 50}
	})
	t.Cleanup(fake.Close)
	yaml := sprintf(budgetYAML, fake.URL, storeURL)
	reps := []*replica{startReplica(t, yaml), startReplica(t, yaml), startReplica(t, yaml)}
	fr := startFront(t, reps)
	body := []byte(`{"model":"claude-sonnet-4-5","max_tokens":50,"messages":[{"role":"user","content":"` + strings.Repeat("hello world ", 700) + `"}]}`)
	perCall := int64(len(body)/4 + 50) // tokens one call really uses
	var mu sync.Mutex
	status := map[int]int{}
	var wg sync.WaitGroup
	for w := range 9 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 6 {
				req, _ := http.NewRequest(http.MethodPost, fr.url+"/v1/messages", bytes.NewReader(body))
				req.Header.Set("x-api-key", "alice-proxy-key-0123456789")
				req.Header.Set("anthropic-version", "2023-06-01")
				req.Header.Set("content-type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(fmt.Errorf("worker %d: %w", w, err))
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				mu.Lock()
				status[resp.StatusCode]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for _, r := range reps {
		r.stop(t, false)
	}
	st := openStore(t, storeURL)
	rows, err := st.LedgerEntries(context.Background(), "alice", 0)
	if err != nil {
		t.Fatal(err)
	}
	var spent int64
	served := 0
	for _, e := range rows {
		spent += e.InputTokens + e.OutputTokens
		if e.Status == http.StatusOK {
			served++
		}
	}
	if status[http.StatusOK] == 0 || status[http.StatusTooManyRequests] == 0 {
		t.Fatalf("statuses %v: want some requests served and the rest refused by the budget", status)
	}
	if served != status[http.StatusOK] {
		t.Errorf("%d requests served, %d ledger rows of served calls", status[http.StatusOK], served)
	}
	if limit := 20000 + int64(len(reps))*perCall; spent > limit {
		t.Errorf("spent %d tokens across 3 replicas; the budget is 20000 (+%d for one call per replica in flight)", spent, int64(len(reps))*perCall)
	}
	t.Logf("statuses %v; %d tokens spent of a 20000 budget", status, spent)
}
