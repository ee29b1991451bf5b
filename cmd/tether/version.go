package main

import (
	"runtime/debug"
	"strings"
)

// version is normally empty and read from the build info; a release build
// may set it with -ldflags "-X main.version=…".
var version = ""

// versionString returns the version Tether was built as: the -ldflags value
// when set, else the module version `go install …@vX` records, else the VCS
// revision a build from a checkout records (with "-dirty" for uncommitted
// changes), else "dev".
func versionString() string {
	bi, ok := debug.ReadBuildInfo()
	return versionFrom(version, bi, ok)
}

func versionFrom(ldflags string, bi *debug.BuildInfo, ok bool) string {
	if ldflags != "" {
		return ldflags
	}
	if !ok || bi == nil {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return "dev"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	v := "dev-" + rev
	if modified == "true" {
		v += "-dirty"
	}
	return v
}

// versionLine is what `tether version` prints: version, Go version, platform.
func versionLine() string {
	var b strings.Builder
	b.WriteString("tether " + versionString())
	if bi, ok := debug.ReadBuildInfo(); ok && bi.GoVersion != "" {
		b.WriteString(" (" + bi.GoVersion)
		for _, s := range bi.Settings {
			if s.Key == "GOOS" || s.Key == "GOARCH" {
				b.WriteString(" " + s.Key + "=" + s.Value)
			}
		}
		b.WriteString(")")
	}
	return b.String()
}
