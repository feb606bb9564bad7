// Package version holds the build's version string, stamped by the Makefile
// with -ldflags "-X github.com/fluxq/fluxq/internal/version.Version=...".
package version

import "runtime/debug"

// Version is set at link time; "dev" means an unstamped build.
var Version = "dev"

// String returns the stamped version, or for `go install`/`go run` builds the
// module version or VCS revision the Go toolchain recorded, so a binary never
// claims to be something it is not.
func String() string {
	if Version != "dev" {
		return Version
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
