// Command tether-bench measures the latency and throughput Tether adds to a
// proxied request. It starts one fast fake upstream on loopback and drives,
// in turn, the upstream directly, a bare tuned httputil.ReverseProxy and
// Tether in front of it, at each concurrency, streaming and not, and prints
// a Markdown table with the overhead targets checked.
//
// Usage:
//
//	go run ./cmd/tether-bench [-duration 3s] [-concurrency 1,64] [-stream both]
//	go run ./cmd/tether-bench continuity [-config tether.yaml] [-details]
//	go run ./cmd/tether-bench sessions [-sessions 220] [-pad 100000]
//	go run ./cmd/tether-bench kill [-kills 20]
//
// The continuity subcommand scores extractors over the public continuity
// corpus (bench/continuity) instead; sessions runs concurrent compacting
// Claude Code sessions and counts decisions lost (bench/sessions); kill
// SIGKILLs a serving Tether under load and checks the ledger (bench/crash).
//
// Everything runs in this one process on 127.0.0.1; request loops are
// bounded by time and by count.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/tether-dev/tether/bench/crash"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	runner := run
	args := os.Args[1:]
	if len(args) > 0 {
		switch args[0] {
		case "continuity":
			runner, args = runContinuity, args[1:]
		case "sessions":
			runner, args = runSessions, args[1:]
		case "kill":
			runner, args = runKill, args[1:]
		case "kill-child": // a process of the kill test, killed by its parent
			crash.Child()
			return
		}
	}
	if err := runner(ctx, args, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "tether-bench:", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")

// settings are the parsed flags.
type settings struct {
	duration    time.Duration
	warmup      time.Duration
	concurrency []int
	streams     []bool
	maxRequests int
	rounds      int
	cpuProfile  string
	memProfile  string
	only        map[string]bool // target keys to run; empty: all
	work        *workload
	store       string // store of the production-hooks target: sqlite (default) or memory
	staggered   bool   // clients start at evenly spread places in a session (-sessions)
}

// firstSeqs returns the first request number of each of n clients: 0 for
// all, or with staggered sessions client i's place i/n of the way through
// a session. Agents working independently begin their sessions at
// unrelated moments, and so new sessions (histories Tether has never
// seen, the costliest requests) arrive at the workload's steady rate, one
// per session-turns requests of a client, in every measured window.
// Started together, all n begin their next session within the same
// fraction of a second: a run then measures one such burst or none,
// depending on how its length falls against the session's, and the slice
// of a round the burst lands in is far slower than the others.
func (s settings) firstSeqs(n int) []int {
	seqs := make([]int, n)
	if s.staggered && s.work.agent() {
		for i := range seqs {
			seqs[i] = i * s.work.turns / n
		}
	}
	return seqs
}

func parseFlags(args []string, stderr io.Writer) (settings, error) {
	fs := flag.NewFlagSet("tether-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var s settings
	conc := fs.String("concurrency", "1,64", "comma-separated client concurrency levels")
	stream := fs.String("stream", "both", "request mode: both, true (SSE only) or false (JSON only)")
	fs.DurationVar(&s.duration, "duration", 2*time.Second, "measured time per target and cell, per round")
	fs.DurationVar(&s.warmup, "warmup", 300*time.Millisecond, "unmeasured warm-up per target and cell")
	fs.IntVar(&s.maxRequests, "max-requests", 1_000_000, "bound on the requests of one measurement")
	fs.IntVar(&s.rounds, "rounds", 2, "measurement rounds; targets alternate within each, samples are pooled")
	fs.StringVar(&s.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file")
	fs.StringVar(&s.memProfile, "memprofile", "", "write the allocations of the whole run (pprof allocs profile) to this file")
	only := fs.String("targets", "", "comma-separated subset of direct,bare,tether,app,app-nocontinuity (default all but app-nocontinuity; the checks need bare)")
	body := fs.String("body", "small", "request bodies: small (one short Chat Completions call), 200k or 2m (Claude Code–shaped agent histories)")
	prompt := fs.String("prompt", "claude", "agent workloads: claude (Claude Code's captured system prompt and tools after the history, 106 KiB, and its first message's system reminders) or short (a one-line system prompt, as earlier rounds measured)")
	turns := fs.Int("session-turns", defaultAgentTurns, "agent workloads: requests per session before a client starts a new one (each new session is a history Tether sees for the first time)")
	starts := fs.String("sessions", "staggered", "agent workloads: staggered (each client starts at its own place in a session, so new sessions arrive spread out, as independent agents' do) or together (every client starts at turn 0, so all begin their next session at once; use it with a very long -session-turns, whose staggered places would start clients with histories of that many turns)")
	fs.StringVar(&s.store, "store", "sqlite", "store of the production-hooks target: sqlite (a fresh file, as tether serve defaults to) or memory")
	if err := fs.Parse(args); err != nil {
		return s, fmt.Errorf("%w: %v", errUsage, err)
	}
	for _, f := range strings.Split(*conc, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 4096 {
			return s, fmt.Errorf("%w: -concurrency wants positive integers up to 4096, got %q", errUsage, f)
		}
		s.concurrency = append(s.concurrency, n)
	}
	s.only = map[string]bool{}
	for _, k := range strings.Split(*only, ",") {
		if k = strings.TrimSpace(k); k != "" {
			s.only[k] = true
		}
	}
	switch *stream {
	case "both":
		s.streams = []bool{false, true}
	case "true":
		s.streams = []bool{true}
	case "false":
		s.streams = []bool{false}
	default:
		return s, fmt.Errorf("%w: -stream wants both, true or false, got %q", errUsage, *stream)
	}
	w, err := newWorkload(*body, *prompt)
	if err != nil {
		return s, err
	}
	if *turns < 1 {
		return s, fmt.Errorf("%w: -session-turns must be positive, got %d", errUsage, *turns)
	}
	w.turns = *turns
	switch *starts {
	case "staggered":
		s.staggered = true
	case "together":
	default:
		return s, fmt.Errorf("%w: -sessions wants staggered or together, got %q", errUsage, *starts)
	}
	s.work = w
	if s.store != "sqlite" && s.store != "memory" {
		return s, fmt.Errorf("%w: -store wants sqlite or memory, got %q", errUsage, s.store)
	}
	if s.duration <= 0 || s.rounds < 1 || s.maxRequests < 1 {
		return s, fmt.Errorf("%w: -duration, -rounds and -max-requests must be positive", errUsage)
	}
	return s, nil
}
