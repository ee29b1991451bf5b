package main

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// errUsage marks a command-line mistake (exit status 2).
var errUsage = errors.New("usage")

const usage = `Usage: tether <command> [flags]

Commands:
  serve     run the proxy (default 127.0.0.1:8787, passthrough, SQLite store)
  demo      show a scripted session through three lossy compactions, with and without Tether (no keys, no network)
  check     validate a configuration and print the effective settings (secrets masked)
  capsule   inspect and purge stored continuity capsules (list, show, history, purge)
  version   print the version

Run 'tether <command> -h' for a command's flags.
`

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if err := dispatch(ctx, args, getenv, stdout, stderr); !errors.Is(err, errHelp) {
		return err
	}
	return nil
}

func dispatch(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("%w: no command given", errUsage)
	}
	switch args[0] {
	case "serve":
		return runServe(ctx, args[1:], getenv, stdout, stderr)
	case "demo":
		return runDemo(ctx, args[1:], getenv, stdout, stderr)
	case "capsule":
		return runCapsule(ctx, args[1:], getenv, stdout, stderr)
	case "check":
		return runCheck(ctx, args[1:], getenv, stdout, stderr)
	case "version", "--version", "-v":
		if len(args) > 1 {
			return fmt.Errorf("%w: version: unexpected argument %q", errUsage, args[1])
		}
		fmt.Fprintln(stdout, versionLine())
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("%w: unknown command %q", errUsage, args[0])
	}
}

func exitCode(err error) int {
	if errors.Is(err, errUsage) {
		return 2
	}
	return 1
}
