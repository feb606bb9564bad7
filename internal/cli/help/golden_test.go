package help_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/cli/fluxq"
	"github.com/fluxq/fluxq/internal/cli/fluxres"
	"github.com/fluxq/fluxq/internal/cli/fluxsched"
	"github.com/fluxq/fluxq/internal/cli/help"
)

var update = flag.Bool("update", false, "rewrite testdata/help/*.txt from the current help")

// goldenDir holds one file per help page: <bin>[_<command>...].txt, and
// <bin>_help_<topic>.txt for the topics.
const goldenDir = "testdata/help"

// apps are the three binaries, built afresh for every run: running an app
// changes its commands (help flags, help commands).
var apps = map[string]func() *cli.App{
	"fluxq":     fluxq.New,
	"fluxres":   fluxres.New,
	"fluxsched": fluxsched.New,
}

// page is one help page: the command line that prints it, and its file.
type page struct {
	file string
	args []string
}

// pages lists every help page of the three binaries: the app's, every
// visible command's (`--help`), the help command's and every topic's.
func pages() []page {
	var out []page
	for _, bin := range []string{"fluxq", "fluxres", "fluxsched"} {
		out = append(out,
			page{bin + ".txt", []string{bin, "--help"}},
			page{bin + "_help.txt", []string{bin, "help", "help"}})
		var walk func(path []string, cmds []*cli.Command)
		walk = func(path []string, cmds []*cli.Command) {
			for _, c := range cmds {
				if c.Hidden || c.Name == "help" {
					continue
				}
				p := append(slices.Clone(path), c.Name)
				out = append(out, page{strings.Join(p, "_") + ".txt", append(slices.Clone(p), "--help")})
				walk(p, c.Subcommands)
			}
		}
		walk([]string{bin}, apps[bin]().Commands)
		for _, t := range help.TopicsFor(bin) {
			out = append(out, page{bin + "_help_" + t.Name + ".txt", []string{bin, "help", t.Name}})
		}
	}
	return out
}

// run runs a fresh app as its binary would, and returns its exit status,
// stdout and stderr.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	app := apps[args[0]]()
	// The version is the build's; the help must not depend on it.
	app.Version = "VERSION"
	var stdout, stderr bytes.Buffer
	app.Writer, app.ErrWriter = &stdout, &stderr
	code := exitcode.Run(app, args)
	return code, stdout.String(), stderr.String()
}

// envValues are set while the pages render; none may show in them, so that
// the help is the same on every machine (the state directory's default
// would otherwise be this user's).
var envValues = map[string]string{
	"FLUXQ_STATE_DIR":       "/golden/state-dir",
	"XDG_STATE_HOME":        "/golden/xdg-state",
	"HOME":                  "/golden/home",
	"NO_COLOR":              "",
	"FLUXQ_F58_FORCE_ASCII": "",
	"COLUMNS":               "37",
}

func TestHelpGolden(t *testing.T) {
	for k, v := range envValues {
		t.Setenv(k, v)
	}
	want := map[string]bool{}
	for _, p := range pages() {
		want[p.file] = true
		t.Run(strings.TrimSuffix(p.file, ".txt"), func(t *testing.T) {
			code, got, stderr := run(t, p.args...)
			if code != 0 || stderr != "" {
				t.Fatalf("%s: exit %d, stderr %q", strings.Join(p.args, " "), code, stderr)
			}
			for k, v := range envValues {
				if len(v) > 2 && strings.Contains(got, v) {
					t.Errorf("%s shows $%s (%s): help must not depend on the environment", strings.Join(p.args, " "), k, v)
				}
			}
			file := filepath.Join(goldenDir, p.file)
			if *update {
				if err := os.MkdirAll(goldenDir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run go test ./internal/cli/help -update to create it)", err)
			}
			if diff := cmp.Diff(string(b), got); diff != "" {
				t.Errorf("%s differs from %s (-golden +now); if the change is meant, run go test ./internal/cli/help -update\n%s",
					strings.Join(p.args, " "), file, diff)
			}
		})
	}
	// A page whose command is gone must go too.
	files, err := filepath.Glob(filepath.Join(goldenDir, "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if want[filepath.Base(f)] {
			continue
		}
		if *update {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s belongs to no help page (run with -update to remove it)", f)
	}
}
