// End-to-end tests: testdata/script/*.txtar run the real fluxq, fluxsched and
// fluxres (this test binary re-executed as each of them) against a temporary
// state directory.
package fluxq_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/cli/fluxq"
	"github.com/fluxq/fluxq/internal/cli/fluxres"
	"github.com/fluxq/fluxq/internal/cli/fluxsched"
	"github.com/fluxq/fluxq/internal/sshtest"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"fluxq":     func() { os.Exit(fluxq.Main(os.Args)) },
		"fluxsched": func() { os.Exit(fluxsched.Main(os.Args)) },
		"fluxres":   func() { os.Exit(fluxres.Main(os.Args)) },
		// A misbehaving client for the guest tests (script_guest_test.go).
		"guestprobe": func() { os.Exit(guestProbe()) },
		// Each job's event names, from the store (script_agent_test.go).
		"eventnames": func() { os.Exit(eventNames()) },
		// Damage a store file where its own tree says (script_store_test.go).
		"storedamage": func() { os.Exit(storeDamage()) },
	})
}

func TestScripts(t *testing.T) {
	testscript.Run(t, scriptParams("testdata/script"))
}

// scriptParams runs the scripts of dir with the commands and set-up every
// script of this package has.
func scriptParams(dir string) testscript.Params {
	return testscript.Params{
		Dir: dir,
		Setup: func(env *testscript.Env) error {
			env.Setenv("FLUXQ_STATE_DIR", env.WorkDir+"/state")
			env.Setenv("NO_COLOR", "1")
			// The repository's examples (examples/sched/fcfs.py), run
			// where they are, so a script tests the file users copy.
			wd, err := os.Getwd()
			if err != nil {
				return err
			}
			env.Setenv("EXAMPLES", filepath.Join(wd, "examples"))
			if os.Getenv("GORACE") == "" {
				// A race-built command otherwise sleeps a second as it
				// exits (the race runtime's atexit_sleep_ms), which made
				// every command of every script a second long under
				// -race, and hid how fast jobs start and end.
				env.Setenv("GORACE", "atexit_sleep_ms=0")
			}
			env.Defer(func() { stopAgents(func(f string, a ...any) { env.T().Log(fmt.Sprintf(f, a...)) }, env.WorkDir) })
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":  cmdExits,
			"asuser": cmdAsUser,
			"tmpfs":  cmdTmpfs,
			"ptyrun": cmdPtyrun,
			// Hosts over real OpenSSH (script_ssh_test.go).
			"sshhosts":    cmdSSHHosts,
			"reachhosts":  cmdReachHosts,
			"killhost":    cmdKillHost,
			"dropconn":    cmdDropConn,
			"starthost":   cmdStartHost,
			"reconnected": cmdReconnected,
			"expandenv":   cmdExpandEnv,
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "root":
				return os.Geteuid() == 0, nil
			case "sshd": // hosts over OpenSSH can be made (sshhosts)
				return sshtest.Missing() == "", nil
			case "cpus2": // the test may run on two CPUs or more
				var set unix.CPUSet
				return unix.SchedGetaffinity(0, &set) == nil && set.Count() >= 2, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
	}
}

// cmdExits runs a command and checks its exact exit status, which the
// built-in `exec` cannot: docs/cli.md makes exit codes a contract.
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

// cmdAsUser runs a command as another Unix user, as a guest of the
// instance would, and checks its exit status (the test runs as root):
//
//	asuser nobody 0 fluxq submit true
//
// The command gets PATH, FLUXQ_STATE_DIR and NO_COLOR from the script.
// The directories it must pass through ($WORK and the commands' own
// folder, private to root) are opened for traversal (o+x) first.
func cmdAsUser(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: asuser USER CODE command [args...]")
	}
	u, err := user.Lookup(args[0])
	ts.Check(err)
	want, err := strconv.Atoi(args[1])
	ts.Check(err)
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	var groups []uint32
	if gids, err := u.GroupIds(); err == nil {
		for _, g := range gids {
			if n, err := strconv.ParseUint(g, 10, 32); err == nil {
				groups = append(groups, uint32(n))
			}
		}
	}
	path := ts.Getenv("PATH")
	bin := ""
	for _, dir := range filepath.SplitList(path) {
		if fi, err := os.Stat(filepath.Join(dir, args[2])); err == nil && !fi.IsDir() {
			bin = filepath.Join(dir, args[2])
			break
		}
	}
	if bin == "" {
		ts.Fatalf("asuser: %s not found in $PATH", args[2])
	}
	traversable(ts, ts.Getenv("WORK"))
	traversable(ts, filepath.Dir(bin))
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args[3:]...)
	cmd.Dir = ts.Getenv("WORK")
	cmd.Env = []string{"PATH=" + path, "FLUXQ_STATE_DIR=" + ts.Getenv("FLUXQ_STATE_DIR"), "NO_COLOR=1", "HOME=/"}
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: groups}}
	got := 0
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("asuser: %v", err)
		}
		got = ee.ExitCode()
	}
	ts.Stdout().Write(stdout.Bytes())
	ts.Stderr().Write(stderr.Bytes())
	if got != want {
		ts.Fatalf("%s as %s exited %d, want %d\nstderr: %s", args[2], args[0], got, want, stderr.String())
	}
}

// traversable adds o+x to dir and its parents inside the temporary
// directory, where the test's own folders are private to root.
func traversable(ts *testscript.TestScript, dir string) {
	tmp := filepath.Clean(os.TempDir())
	for d := filepath.Clean(dir); strings.HasPrefix(d, tmp+string(filepath.Separator)); d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		ts.Check(err)
		ts.Check(os.Chmod(d, fi.Mode().Perm()|0o001))
	}
}
