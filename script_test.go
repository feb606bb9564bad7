// End-to-end tests: testdata/script/*.txtar run the real fluxq, fluxsched and
// fluxres (this test binary re-executed as each of them) against a temporary
// state directory.
package fluxq_test

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fluxq/fluxq/internal/cli/fluxq"
	"github.com/fluxq/fluxq/internal/cli/fluxres"
	"github.com/fluxq/fluxq/internal/cli/fluxsched"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"fluxq":     func() { os.Exit(fluxq.Main(os.Args)) },
		"fluxsched": func() { os.Exit(fluxsched.Main(os.Args)) },
		"fluxres":   func() { os.Exit(fluxres.Main(os.Args)) },
	})
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("FLUXQ_STATE_DIR", env.WorkDir+"/state")
			env.Setenv("NO_COLOR", "1")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits": cmdExits,
		},
	})
}

// cmdExits runs a command and checks its exact exit status, which the
// built-in `exec` cannot: CLI.md makes exit codes a contract.
//
//	exits 2 fluxq --nosuch
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: bad code %q", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exits: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}
