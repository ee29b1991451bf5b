package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/demo"
)

func TestVersionAndUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"version"}, func(string) string { return "" }, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "tether ") {
		t.Errorf("version output %q", out.String())
	}
	err := run(context.Background(), []string{"frobnicate"}, func(string) string { return "" }, &out, &errb)
	if !errors.Is(err, errUsage) || exitCode(err) != 2 {
		t.Errorf("unknown command: err %v exit %d", err, exitCode(err))
	}
}

// The README's first command: the demo runs with no keys and no network and
// reports success.
func TestDemoCommand(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"demo"}, func(string) string { return "" }, &out, &errb); err != nil {
		t.Fatalf("demo failed: %v\n%s", err, out.String())
	}
	for _, want := range []string{"after compaction 3", "WITHOUT TETHER", "WITH TETHER", "OK: after three compactions"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
}

// The operator CLI reads what the proxy stored: list, show, history, purge.
func TestCapsuleCommands(t *testing.T) {
	dir := t.TempDir()
	if _, err := demo.Run(context.Background(), demo.Options{StateDir: dir}); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"TETHER_STORE": filepath.Join(dir, "tether.db")}
	getenv := func(k string) string { return env[k] }
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"capsule", "list"}, getenv, &out, &errb); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("capsule list: want a header and one capsule, got:\n%s", out.String())
	}
	f := strings.Fields(lines[1])
	principal, aLeg := f[0], f[1]
	out.Reset()
	if err := run(context.Background(), []string{"capsule", "show", aLeg}, getenv, &out, &errb); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ACCEPTED PLAN", "use PostgreSQL, not MongoDB", "superseded by"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("capsule show lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := run(context.Background(), []string{"capsule", "history", "--principal", principal, aLeg}, getenv, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "revision "); n < 3 {
		t.Errorf("capsule history shows %d revisions, want several:\n%s", n, out.String())
	}
	for _, want := range []string{"added decision", "superseded decision", "plan"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("capsule history does not say what changed (%q):\n%s", want, out.String())
		}
	}
	for _, sub := range []string{"history", "show"} {
		out.Reset()
		if err := run(context.Background(), []string{"capsule", sub, aLeg, "--json"}, getenv, &out, &errb); err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Errorf("capsule %s --json is not one JSON document: %v\n%s", sub, err, out.String())
		}
	}
	out.Reset()
	if err := run(context.Background(), []string{"capsule", "purge", "--principal", principal}, getenv, &out, &errb); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := run(context.Background(), []string{"capsule", "list"}, getenv, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), aLeg) {
		t.Errorf("capsule still listed after purge:\n%s", out.String())
	}
}
