package fluxsched

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/agent"
	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/daemon/daemontest"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// TestMain lets this test binary be the commands fluxsched run starts
// again from its own binary: the exec agent (`agent --state-dir DIR`) and
// the scheduler of --sched-cmd (`sched-simple`).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && (os.Args[1] == "agent" || os.Args[1] == "sched-simple") {
		os.Exit(Main(os.Args))
	}
	os.Exit(m.Run())
}

// fluxsched runs the fluxsched application in process and returns its
// exit status, stdout and stderr.
func fluxsched(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	app := New()
	app.Writer, app.ErrWriter = &out, &errb
	code := exitcode.Run(app, append([]string{"fluxsched"}, args...))
	return code, out.String(), errb.String()
}

const twoCoresTOML = `
[[resource.config]]
hosts = "node0"
cores = "0-1"
`

// instanceDir is a state directory (not made) and a two-core config;
// the exec agents started there are stopped when the test ends.
func instanceDir(t *testing.T) (dir, config string) {
	t.Helper()
	work := t.TempDir()
	config = filepath.Join(work, "two.toml")
	if err := os.WriteFile(config, []byte(twoCoresTOML), 0o600); err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(work, "state")
	t.Cleanup(func() { daemontest.StopAgents(t, dir) })
	return dir, config
}

// submitTrue stores n `true` jobs in the instance's store, as fluxq
// submit does while no fluxsched runs.
func submitTrue(t *testing.T, dir string, n int) []fluid.ID {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "jobs"), 0o700); err != nil {
		t.Fatal(err)
	}
	js, err := jobspec.FromOptions(jobspec.Options{Command: []string{"true"}, Cwd: "/tmp", Environment: map[string]string{"PATH": "/usr/bin:/bin"}})
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := js.MarshalJSON()
	reqs := make([]state.SubmitRequest, n)
	for i := range reqs {
		reqs[i] = state.SubmitRequest{Jobspec: spec, UserID: uint32(os.Getuid()), Owner: true, Urgency: 16}
	}
	st, err := store.Open(filepath.Join(dir, "fluxq.db"), store.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var ids []fluid.ID
	err = st.Update(func(tx *store.Tx) (err error) {
		ids, _, err = state.Submit(tx, time.Now(), reqs, nil)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// results reads the jobs' states and results from the store.
func results(t *testing.T, dir string, ids []fluid.ID) []string {
	t.Helper()
	st, err := store.Open(filepath.Join(dir, "fluxq.db"), store.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var out []string
	err = st.View(func(tx *store.Tx) error {
		for _, id := range ids {
			rec, err := state.Load(tx, id)
			if err != nil {
				return err
			}
			out = append(out, rec.Job.State.String()+" "+rec.Job.Result.String())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Each bad flag of fluxsched run is a usage error in the user's words,
// and changes nothing: the state directory is not even made.
func TestRunBadFlags(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"argument", []string{"run", "now"}, exitcode.Usage, `fluxsched: run takes no arguments (got "now")`},
		{"mode", []string{"run", "--mode", "limited=0"}, exitcode.Usage, `fluxsched: --mode: invalid mode "limited=0"`},
		{"policy", []string{"run", "--policy", "lifo"}, exitcode.Usage, "fluxsched: --policy: "},
		{"match policy", []string{"run", "--match-policy", "random"}, exitcode.Usage, "fluxsched: --match-policy: "},
		{"queue depth", []string{"run", "--queue-depth", "-1"}, exitcode.Usage, "fluxsched: --queue-depth: must be 0 or more, not -1"},
		{"reservation depth", []string{"run", "--reservation-depth", "0"}, exitcode.Usage, "fluxsched: --reservation-depth: must be 1 or more, not 0"},
		{"log level", []string{"run", "--log-level", "loud"}, exitcode.Usage, `fluxsched: --log-level: unknown level "loud"`},
		{"timeout", []string{"--timeout", "soon", "run"}, exitcode.Usage, "fluxsched: --timeout: "},
		{"config", []string{"run", "--config", "/nonexistent/fluxq.toml"}, 1, "fluxsched: "},
		{"without run", []string{"--mode", "bogus"}, exitcode.Usage, `fluxsched: --mode: invalid mode "bogus"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := instanceDir(t)
			code, out, errs := fluxsched(append([]string{"--state-dir", dir}, tc.args...)...)
			if code != tc.wantCode || !strings.HasPrefix(errs, tc.wantErr) || out != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d, stderr starting %q", code, out, errs, tc.wantCode, tc.wantErr)
			}
			if lines := strings.Count(strings.TrimSuffix(errs, "Try 'fluxsched run --help' for more information.\n"), "\n"); lines > 2 {
				t.Errorf("stderr has %d lines:\n%s", lines, errs)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("the state directory exists after a refused run (%v)", err)
			}
		})
	}
}

// fluxsched run --exit-on-idle runs the jobs submitted while no fluxsched
// ran, on an exec agent it starts, then exits 0; fluxsched stop then
// stops that agent, and says so when none is left.
func TestRunExitOnIdleThenStop(t *testing.T) {
	dir, config := instanceDir(t)
	ids := submitTrue(t, dir, 3)
	profile := filepath.Join(t.TempDir(), "cpu.pprof")
	code, out, errs := fluxsched("--state-dir", dir, "run", "--config", config, "--exit-on-idle", "--cpu-profile", profile)
	if code != 0 || out != "" {
		t.Fatalf("run: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	for i, got := range results(t, dir, ids) {
		if got != "INACTIVE COMPLETED" {
			t.Errorf("job %s: %s, want INACTIVE COMPLETED", ids[i], got)
		}
	}
	if fi, err := os.Stat(profile); err != nil || fi.Size() == 0 {
		t.Errorf("no CPU profile written: %v", err)
	}
	agents, err := agent.Find(dir)
	if err != nil || len(agents) != 1 || gone(agents[0].PID) {
		t.Fatalf("exec agents after run: %+v (%v), want one running", agents, err)
	}

	code, out, errs = fluxsched("--state-dir", dir, "stop")
	want := regexp.MustCompile(`^stopped the exec agent \S+ \(pid ` + strconv.Itoa(agents[0].PID) + `\)\n$`)
	if code != 0 || !want.MatchString(out) || errs != "" {
		t.Errorf("stop: exit %d, stdout %q, stderr %q; want 0, %s", code, out, errs, want)
	}
	if !gone(agents[0].PID) {
		t.Errorf("the exec agent %d still runs after stop", agents[0].PID)
	}
	code, out, errs = fluxsched("--state-dir", dir, "stop")
	if code != 0 || out != "no exec agent is running\n" || errs != "" {
		t.Errorf("second stop: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, _, errs = fluxsched("--state-dir", dir, "stop", "now")
	if code != exitcode.Usage || !strings.HasPrefix(errs, `fluxsched: stop: takes no arguments (got "now")`) {
		t.Errorf("stop now: exit %d, stderr %q", code, errs)
	}
}

// With --sched-cmd the scheduler is a command speaking RFC 27 on its
// stdin and stdout (here fluxsched sched-simple); --purge tears the
// session down first.
func TestRunSchedCmdPurge(t *testing.T) {
	dir, config := instanceDir(t)
	ids := submitTrue(t, dir, 2)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := fluxsched("--state-dir", dir, "run", "--config", config, "--exit-on-idle", "--purge", "--sched-cmd", self+" sched-simple")
	if code != 0 || out != "" {
		t.Fatalf("run: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	for i, got := range results(t, dir, ids) {
		if got != "INACTIVE COMPLETED" {
			t.Errorf("job %s: %s, want INACTIVE COMPLETED", ids[i], got)
		}
	}
}

// A second fluxsched on a held instance exits 69, naming the directory.
func TestRunHeld(t *testing.T) {
	dir, config := instanceDir(t)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(dir, "fluxq.db"), store.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	code, out, errs := fluxsched("--state-dir", dir, "--timeout", "0.1s", "run", "--config", config)
	want := "fluxsched: another fluxsched holds this instance (" + dir + ")\n"
	if code != exitcode.Unavailable || errs != want || out != "" {
		t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q", code, out, errs, exitcode.Unavailable, want)
	}
}

// fluxsched config check prints "FILE: ok" for a good config, and the
// first error of a bad one with exit 1.
func TestConfigCheck(t *testing.T) {
	work := t.TempDir()
	good := filepath.Join(work, "good.toml")
	bad := filepath.Join(work, "bad.toml")
	os.WriteFile(good, []byte(twoCoresTOML), 0o600)
	os.WriteFile(bad, []byte("[sched]\nplicy = \"easy\"\n"), 0o600)
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{"good", []string{good}, 0, good + ": ok\n", ""},
		{"unknown key", []string{bad}, 1, "", "fluxsched: " + bad},
		{"missing", []string{filepath.Join(work, "none.toml")}, 1, "", "fluxsched: "},
		{"no file", nil, exitcode.Usage, "", "fluxsched: check needs one FILE or DIR"},
		{"two files", []string{good, good}, exitcode.Usage, "", "fluxsched: check needs one FILE or DIR"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := fluxsched(append([]string{"config", "check"}, tc.args...)...)
			if code != tc.wantCode || out != tc.wantOut || !strings.HasPrefix(errs, tc.wantErr) || (tc.wantErr == "") != (errs == "") {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q, stderr starting %q", code, out, errs, tc.wantCode, tc.wantOut, tc.wantErr)
			}
		})
	}
}

// The hidden agent command needs its state directory on the command line.
func TestAgentUsage(t *testing.T) {
	for _, args := range [][]string{{"agent"}, {"agent", "--state-dir", "/tmp", "extra"}} {
		code, _, errs := fluxsched(args...)
		if code != exitcode.Usage || !strings.HasPrefix(errs, "fluxsched: agent") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
	}
}
