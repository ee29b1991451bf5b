// Command tether is a proxy for LLM APIs that keeps a coding agent's accepted
// plan and the user's decisions through context compaction.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "tether:", err)
		os.Exit(exitCode(err))
	}
}
