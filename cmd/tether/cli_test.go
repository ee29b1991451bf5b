package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

func noEnv(string) string { return "" }

// -h prints the usage and succeeds on every command; extra arguments are
// refused with exit status 2.
func TestHelpAndExtraArguments(t *testing.T) {
	for _, args := range [][]string{
		{"-h"}, {"help"}, {"serve", "-h"}, {"demo", "-h"}, {"check", "-h"}, {"capsule", "-h"}, {"capsule", "help"},
		{"capsule", "list", "-h"}, {"capsule", "show", "-h"}, {"capsule", "history", "--help"}, {"capsule", "purge", "-h"},
	} {
		var out, errb bytes.Buffer
		err := run(context.Background(), args, noEnv, &out, &errb)
		if err != nil {
			t.Errorf("%v: err %v, want exit 0", args, err)
		}
		if out.Len()+errb.Len() == 0 || !strings.Contains(strings.ToLower(out.String()+errb.String()), "usage") {
			t.Errorf("%v printed no usage: %q %q", args, out.String(), errb.String())
		}
	}
	for _, args := range [][]string{
		{"serve", "extra"}, {"demo", "now"}, {"check", "a.yaml"}, {"version", "x"},
		{"capsule", "list", "x"}, {"capsule", "show", "a", "b"}, {"capsule", "frob"}, {"serve", "--no-such-flag"},
	} {
		var out, errb bytes.Buffer
		err := run(context.Background(), args, noEnv, &out, &errb)
		if !errors.Is(err, errUsage) || exitCode(err) != 2 {
			t.Errorf("%v: err %v (exit %d), want a usage error with exit 2", args, err, exitCode(err))
		}
	}
}

// check validates like serve and prints the effective settings with every
// secret masked; a bad file fails naming the YAML path and line.
func TestCheckMasksSecrets(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "tether.yaml")
	secrets := []string{"admin-key-0123456789abcdef", "0123456789abcdef0123456789abcdef", "hunter2", "sk-live-abcdefghijklmnop", "extra-secret-value", "alice-key-0123456789abcdef"}
	writeFile(t, good, `admin_key: admin-key-0123456789abcdef
secret: ${SECRET}
store: postgres://tether:hunter2@db.internal:5432/tether
providers:
  - name: oa
    dialect: openai
    base_url: https://api.openai.com/v1
    api_key: sk-live-abcdefghijklmnop
    headers: {X-Team: infra, X-Api-Key: extra-secret-value}
principals:
  - id: alice
    keys: [alice-key-0123456789abcdef]
compaction_continuity:
  enabled: true
`)
	env := map[string]string{"SECRET": "0123456789abcdef0123456789abcdef"}
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"check", "--config", good}, func(k string) string { return env[k] }, &out, &errb); err != nil {
		t.Fatalf("check: %v\n%s", err, errb.String())
	}
	for _, s := range secrets {
		if strings.Contains(out.String(), s) {
			t.Errorf("check printed the secret %q:\n%s", s, out.String())
		}
	}
	for _, want := range []string{"configuration OK", "barrier_timeout: 2s", "X-Team: infra", "db.internal:5432", "api_key: <set, 24 characters>", "route: builtin/markers"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("check output lacks %q:\n%s", want, out.String())
		}
	}
	bad := filepath.Join(dir, "bad.yaml")
	writeFile(t, bad, "compaction_continuity:\n  enabled: true\n  barrier_timeout: 2 seconds\n")
	out.Reset()
	err := run(context.Background(), []string{"check", "--config", bad}, noEnv, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "line 3: compaction_continuity.barrier_timeout") {
		t.Errorf("bad config: err %v, want the YAML path and line", err)
	}
}

// serve says "ready" only once its port accepts connections, and the line
// names the store, the upstreams and the continuity state.
func TestServeReadyLineAfterListening(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	env := map[string]string{"TETHER_STORE": "memory:"}
	done := make(chan error, 1)
	var errb syncBuffer
	go func() {
		done <- run(ctx, []string{"serve", "--listen", "127.0.0.1:0"}, func(k string) string { return env[k] }, pw, &errb)
		pw.Close()
	}()
	line := make([]byte, 4096)
	n, err := pr.Read(line)
	if err != nil {
		t.Fatalf("no ready line: %v\n%s", err, errb.String())
	}
	got := string(line[:n])
	m := regexp.MustCompile(`ready on (http://127\.0\.0\.1:\d+) \(store memory; upstreams openai=openai:https://api.openai.com/v1 anthropic=anthropic:https://api.anthropic.com[^;]*; continuity off\)`).FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("ready line %q", got)
	}
	resp, err := http.Get(m[1] + "/healthz")
	if err != nil {
		t.Fatalf("ready, but %s does not answer: %v", m[1], err)
	}
	resp.Body.Close()
	// The log line is written by Serve once it serves, which may be just
	// after the ready line on stdout: wait for it, bounded.
	logged := func() bool {
		return strings.Contains(errb.String(), `"msg":"tether ready"`) && strings.Contains(errb.String(), `"store":"memory"`)
	}
	for deadline := time.Now().Add(10 * time.Second); !logged() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if !logged() {
		t.Errorf("start-up log line lacks ready/store: %s", errb.String())
	}
	cancel()
	go io.Copy(io.Discard, pr)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}
}

// A port already in use fails before anything says ready.
func TestServeBusyPortNeverReady(t *testing.T) {
	var out, errb syncBuffer
	env := map[string]string{"TETHER_STORE": "memory:"}
	srv := &http.Server{}
	ln := mustListen(t)
	go srv.Serve(ln)
	defer srv.Close()
	err := run(context.Background(), []string{"serve", "--listen", ln.Addr().String()}, func(k string) string { return env[k] }, &out, &errb)
	if err == nil || strings.Contains(out.String()+errb.String(), "ready") {
		t.Errorf("busy port: err %v, output %q %q", err, out.String(), errb.String())
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func mustListen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// A positional argument may begin with '-' (a capsule ref is base64url and
// starts with one in 1 of 64 capsules): it is read as the argument, before
// or after the flags, while the flags the command defines still parse.
func TestPositionalArgumentBeginningWithDash(t *testing.T) {
	for _, args := range [][]string{
		{"-bSOJMYCXtj75ylm49oYuA"},
		{"--principal", "alice", "-bSOJMYCXtj75ylm49oYuA"},
		{"-bSOJMYCXtj75ylm49oYuA", "--principal=alice"},
		{"-principal", "-alice", "-bSOJMYCXtj75ylm49oYuA"},
	} {
		fs := flag.NewFlagSet("show", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		principal := fs.String("principal", "", "")
		pos, err := parseArgs(fs, args, 1)
		if err != nil || len(pos) != 1 || pos[0] != "-bSOJMYCXtj75ylm49oYuA" {
			t.Errorf("%q: positional %q, err %v; want the ref", args, pos, err)
		}
		if len(args) > 1 && *principal == "" {
			t.Errorf("%q: --principal not parsed", args)
		}
	}
}
