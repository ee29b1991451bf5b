package session

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/store/sqlitestore"
)

// BenchmarkAgentTurnLineage is the lineage work of an agent's tool-loop
// turn as `tether serve` does it: a Claude Code–shaped request of about
// 200 KiB parsed with ParseFrom after the one before, resolved, and
// committed behind on the SQLite store with the production options
// (Exclusive, continuation writes coalesced). Eight agents take turns.
//
//	go test -run '^$' -bench AgentTurnLineage -benchtime 3000x ./internal/session/
func BenchmarkAgentTurnLineage(b *testing.B) {
	ctx := context.Background()
	st, err := sqlitestore.Open(ctx, filepath.Join(b.TempDir(), "tether.db"), sqlitestore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	r := NewResolver(st, Options{Secret: testSecret, Exclusive: true, Coalesce: time.Second})
	if err := r.IndexKeys(ctx); err != nil {
		b.Fatal(err)
	}
	const agents, first = 8, 200
	// Every turn's items, written once, with and without the breakpoint
	// Claude Code puts on the newest message.
	var items, itemsCC [][]byte
	const most = first + 1000 // turns an agent can reach: -benchtime up to 8000x
	for i := range most {
		step := fmt.Sprintf(`,{"role":"assistant","content":[{"type":"text","text":"Looking at file %d."},{"type":"tool_use","id":"toolu_%d","name":"Read","input":{"file_path":"/repo/f%d.go"}}]}`, i, i, i)
		result := fmt.Sprintf(`,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%d","content":%q`, i, strings.Repeat("func reserve() error { return nil }\n", 20))
		items = append(items, []byte(step+result+`}]}`))
		itemsCC = append(itemsCC, []byte(step+result+`,"cache_control":{"type":"ephemeral"}}]}`))
	}
	system := fmt.Sprintf(`],"system":[{"type":"text","text":%q}]`, strings.Repeat("You are Claude Code. ", 1000))
	buf := make([]byte, 0, 512<<10)
	body := func(agent, turns int) []byte {
		b := fmt.Appendf(buf[:0], `{"model":"claude","max_tokens":1024,"messages":[{"role":"user","content":[{"type":"text","text":"Agent %d: add a reservation endpoint to the inventory service."}]}`, agent)
		for i := range turns - 1 {
			b = append(b, items[i]...)
		}
		b = append(b, itemsCC[turns-1]...)
		b = append(b, system...)
		return fmt.Appendf(b, `,"metadata":{"user_id":"user_x_account_y_session_bench-%d"}}`, agent)
	}
	turn := func(agent, turns int) {
		principal := fmt.Sprint("p", agent)
		v, err := dialect.ParseFrom(principal, dialect.AnthropicMessages, "/v1/messages", nil, body(agent, turns))
		if err != nil {
			b.Fatal(err)
		}
		ref, err := r.Resolve(ctx, principal, v, Hints{Agent: "claude-code"})
		if err != nil {
			b.Fatal(err)
		}
		if turns > first && ref.Event != EventContinue {
			b.Fatalf("turn %d of agent %d: %s", turns, agent, ref.Event)
		}
		write, err := r.CommitBehind(ctx, ref, v)
		if err != nil {
			b.Fatal(err)
		}
		if write != nil {
			go func() { _ = write() }()
		}
	}
	for a := range agents {
		turn(a, first)
	}
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		a, n := i%agents, first+1+i/agents
		if n > most {
			b.Fatalf("-benchtime asks for more than %d turns", agents*(most-first))
		}
		i++
		bb := body(a, n)
		principal := fmt.Sprint("p", a)
		b.StartTimer()
		v, err := dialect.ParseFrom(principal, dialect.AnthropicMessages, "/v1/messages", nil, bb)
		if err != nil {
			b.Fatal(err)
		}
		ref, err := r.Resolve(ctx, principal, v, Hints{Agent: "claude-code"})
		if err != nil || ref.Event != EventContinue {
			b.Fatal(ref.Event, err)
		}
		write, err := r.CommitBehind(ctx, ref, v)
		if err != nil {
			b.Fatal(err)
		}
		if write != nil {
			go func() { _ = write() }()
		}
	}
	r.Flush()
}
