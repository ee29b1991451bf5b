package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/tether-dev/tether/internal/demo"
)

func runDemo(ctx context.Context, args []string, _ func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	logs := fs.Bool("logs", false, "also print the proxy's JSON logs (ids and counts only) to stderr")
	if _, err := parseArgs(fs, args, 0); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	opt := demo.Options{}
	if *logs {
		opt.Logs = stderr
	}
	start := time.Now()
	rep, err := demo.Run(ctx, opt)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	demo.Print(stdout, rep)
	fmt.Fprintf(stdout, "\n(ran in %s: scripted model on 127.0.0.1, SQLite store in a temporary directory, no keys, no network)\n", time.Since(start).Round(time.Millisecond))
	if len(rep.Problems) > 0 {
		return demo.ErrDemoFailed
	}
	return nil
}
