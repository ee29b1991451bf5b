package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/capsule"
	"github.com/tether-dev/tether/internal/demo"
	"github.com/tether-dev/tether/internal/web"
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
	rep, err := demo.Run(context.Background(), demo.Options{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	// The ref token of the block the model was last shown.
	ref := capsule.Ref(strings.ReplaceAll(string(rep.FinalRequest), `\"`, `"`))
	if ref == "" {
		t.Fatal("the demo's last request carries no block ref")
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
	for _, want := range []string{"claude-code", "5d1c8a4e-0000-4000-8000-000000000002"} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("capsule list does not show the agent and client session (%q):\n%s", want, out.String())
		}
	}
	// show takes the a-leg id, or the block's own ref as the model saw it.
	for _, arg := range []string{aLeg, ref, `ref="` + ref + `"`} {
		out.Reset()
		if err := run(context.Background(), []string{"capsule", "show", arg}, getenv, &out, &errb); err != nil {
			t.Fatalf("capsule show %s: %v", arg, err)
		}
		for _, want := range []string{"ACCEPTED PLAN", "use PostgreSQL, not MongoDB", "superseded by", "compactions (newest first)", "augmented"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("capsule show %s lacks %q:\n%s", arg, want, out.String())
			}
		}
	}
	if err := run(context.Background(), []string{"capsule", "show", "ref=\"not-a-ref\""}, getenv, &out, &errb); err == nil {
		t.Errorf("capsule show with an unknown ref succeeded")
	}
	out.Reset()
	if err := run(context.Background(), []string{"capsule", "history", "--principal", principal, aLeg}, getenv, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "revision "); n < 3 {
		t.Errorf("capsule history shows %d revisions, want several:\n%s", n, out.String())
	}
	for _, want := range []string{"added decision", "superseded decision", "plan", "1 superseded", "(from model)", "(from plan tool: TodoWrite)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("capsule history does not say what changed (%q):\n%s", want, out.String())
		}
	}
	// list and history --json are arrays, as the API's; show is one object.
	for _, tc := range []struct {
		args []string
		doc  any
	}{
		{[]string{"list", "--json"}, &[]web.Summary{}},
		{[]string{"history", aLeg, "--json"}, &[]web.Revision{}},
		{[]string{"show", ref, "--json"}, &web.Detail{}},
	} {
		out.Reset()
		if err := run(context.Background(), append([]string{"capsule"}, tc.args...), getenv, &out, &errb); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out.Bytes(), tc.doc); err != nil {
			t.Errorf("capsule %v is not the API's shape: %v\n%s", tc.args, err, out.String())
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
