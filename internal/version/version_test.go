package version

import (
	"os/exec"
	"strings"
	"testing"
)

func TestStringNamesTheCommit(t *testing.T) {
	tests := []struct {
		version, commit, want string
	}{
		{"0.6.0", "abc1234", "0.6.0 (commit abc1234)"},
		{"0.6.0", "", "0.6.0"},
		{"abc1234", "abc1234", "abc1234"},                               // untagged describe is the hash
		{"0.6.0-3-gabc1234-dirty", "abc1234", "0.6.0-3-gabc1234-dirty"}, // past a tag: named already
	}
	defer func(v, c string) { Version, Commit = v, c }(Version, Commit)
	for _, tt := range tests {
		Version, Commit = tt.version, tt.commit
		if got := String(); got != tt.want {
			t.Errorf("Version=%q Commit=%q: String() = %q, want %q", tt.version, tt.commit, got, tt.want)
		}
	}
}

// An unstamped build never prints a commit it was not told about; the
// testscripts match `fluxq version \S+` on it.
func TestUnstampedIsOneWord(t *testing.T) {
	defer func(v, c string) { Version, Commit = v, c }(Version, Commit)
	Version, Commit = "dev", ""
	if got := String(); got == "" || strings.ContainsAny(got, " \t") {
		t.Errorf("String() = %q, want one word", got)
	}
}

// packaging/debversion.sh turns what the Makefile stamps into a Debian
// version (make deb); its cases live in the script, run here.
func TestDebianVersionMapping(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	out, err := exec.Command(sh, "../../packaging/debversion.sh", "--test").CombinedOutput()
	if err != nil {
		t.Fatalf("debversion.sh --test: %v\n%s", err, out)
	}
	out, err = exec.Command(sh, "../../packaging/debversion.sh", "v0.6.0-3-gabc1234-dirty").Output()
	if err != nil || strings.TrimSpace(string(out)) != "0.6.0+git3.abc1234.dirty" {
		t.Errorf("debversion.sh v0.6.0-3-gabc1234-dirty = %q, %v", out, err)
	}
}
