package main

import (
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionFromBuildInfo(t *testing.T) {
	rev := []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}}
	for _, c := range []struct {
		name, ldflags string
		bi            *debug.BuildInfo
		want          string
	}{
		{"go install @version", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.3.1"}}, "v0.3.1"},
		{"ldflags win", "v9", &debug.BuildInfo{Main: debug.Module{Version: "v0.3.1"}}, "v9"},
		{"checkout build", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: rev}, "dev-0123456789ab-dirty"},
		{"no vcs", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
		{"no build info", "", nil, "dev"},
	} {
		if got := versionFrom(c.ldflags, c.bi, c.bi != nil); got != c.want {
			t.Errorf("%s: version %q, want %q", c.name, got, c.want)
		}
	}
}

// The tether binary does not link the provider SDKs: they cost a cold build
// gigabytes of memory and minutes, and the extractor speaks both wire formats
// through Tether's own code. They stay test-only dependencies.
func TestBinaryDoesNotLinkProviderSDKs(t *testing.T) {
	for _, pkg := range binaryDeps(t) {
		if strings.HasPrefix(pkg, "github.com/openai/") || strings.HasPrefix(pkg, "github.com/anthropics/") {
			t.Errorf("cmd/tether depends on %s", pkg)
		}
	}
}

// The PostgreSQL store speaks database/sql through lib/pq: pgx (its type
// system, pool and SASLprep) cost a cold build several times as much
// (BENCHMARKS.md, "Cold build").
func TestBinaryDoesNotLinkPgx(t *testing.T) {
	for _, pkg := range binaryDeps(t) {
		if strings.HasPrefix(pkg, "github.com/jackc/") {
			t.Errorf("cmd/tether depends on %s", pkg)
		}
	}
}

// Extractor output and stored capsules are checked against schema/*.json by
// internal/capsule's own code; the JSON Schema validator (and the x/text
// message packages only it needs) is a test-only dependency that checks that
// code accepts exactly what it accepts.
func TestBinaryDoesNotLinkJSONSchemaValidator(t *testing.T) {
	for _, pkg := range binaryDeps(t) {
		if strings.HasPrefix(pkg, "github.com/santhosh-tekuri/jsonschema") {
			t.Errorf("cmd/tether depends on %s", pkg)
		}
	}
}

// /metrics is internal/metrics: the Prometheus client, and the protobuf
// runtime its data model brings, cost a cold build about 18 CPU-s of
// compile (BENCHMARKS.md, "Cold build"). They stay test-only dependencies.
func TestBinaryDoesNotLinkPrometheusClient(t *testing.T) {
	for _, pkg := range binaryDeps(t) {
		if strings.HasPrefix(pkg, "github.com/prometheus/") || strings.HasPrefix(pkg, "google.golang.org/protobuf/") {
			t.Errorf("cmd/tether depends on %s", pkg)
		}
	}
}

// binaryDeps lists the packages cmd/tether links.
func binaryDeps(t *testing.T) []string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not on PATH")
	}
	out, err := exec.Command(gobin, "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	return strings.Fields(string(out))
}
