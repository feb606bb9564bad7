// Package version holds the build's version string, stamped by the Makefile
// with -ldflags "-X github.com/fluxq/fluxq/internal/version.Version=...
// -X github.com/fluxq/fluxq/internal/version.Commit=...".
package version

import (
	"runtime/debug"
	"strings"
)

// Version is set at link time; "dev" means an unstamped build.
var Version = "dev"

// Commit is the short hash of the commit built, set at link time next to
// Version; empty when unknown.
var Commit = ""

// String returns the stamped version with its commit ("0.6.0 (commit
// abc1234)"), or for `go install`/`go run` builds the module version or VCS
// revision the Go toolchain recorded, so a binary never claims to be
// something it is not.
func String() string {
	if Version != "dev" {
		return withCommit(Version, Commit)
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return Version
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			return "dev-" + s.Value[:12]
		}
	}
	return Version
}

// withCommit names the commit after v, unless v names it already: an
// untagged `git describe` is the hash itself, and one past a tag
// (0.6.0-3-gabc1234) ends with it.
func withCommit(v, commit string) string {
	if commit == "" || strings.Contains(v, commit) {
		return v
	}
	return v + " (commit " + commit + ")"
}
