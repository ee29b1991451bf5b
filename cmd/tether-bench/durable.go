package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/tether-dev/tether/bench/crash"
	"github.com/tether-dev/tether/bench/sessions"
)

// runSessions is the loopback load test of concurrent compacting sessions:
//
//	go run ./cmd/tether-bench sessions [-sessions 220] [-cycles 2] [-decisions 2] [-pad 100000]
func runSessions(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tether-bench sessions", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("sessions", 220, "concurrent Claude Code sessions")
	cycles := fs.Int("cycles", 2, "compactions per session")
	decisions := fs.Int("decisions", 2, "marked decisions stated before each compaction")
	pad := fs.Int("pad", 100_000, "bytes of a file pasted in each session's first turn (every later request carries it)")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	rep, err := sessions.Run(ctx, sessions.Options{Sessions: *n, Cycles: *cycles, Decisions: *decisions, PadBytes: *pad, Baseline: true})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s\n(took %s)\n", rep.Markdown(), rep.Took.Round(time.Millisecond))
	if rep.Lost > 0 {
		return fmt.Errorf("%d decisions lost", rep.Lost)
	}
	return nil
}

// runKill is the kill -9 accounting test:
//
//	go run ./cmd/tether-bench kill [-kills 20] [-concurrency 16]
func runKill(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tether-bench kill", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kills := fs.Int("kills", 20, "SIGKILLs during traffic")
	conc := fs.Int("concurrency", 16, "concurrent callers")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	dir, err := os.MkdirTemp("", "tether-kill-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	rep, err := crash.Run(ctx, crash.Options{Kills: *kills, Concurrency: *conc, Dir: dir, Command: func() *exec.Cmd {
		return exec.Command(exe, "kill-child")
	}})
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, rep.Markdown())
	if bad := rep.Check(*conc); len(bad) > 0 {
		return fmt.Errorf("accounting broken: %v", bad)
	}
	return nil
}
