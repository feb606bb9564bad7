package runner

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/idset"
	fjob "github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/shell"
)

// withTimes gives s's R a start and an expiration.
func withTimes(t *testing.T, s Spec, start, exp time.Time) Spec {
	t.Helper()
	r, err := rset.Parse(s.R)
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.WithTimes(float64(start.UnixNano())/1e9, float64(exp.UnixNano())/1e9).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	s.R = b
	return s
}

// waitFile waits for path to hold a line, and returns it.
func waitFile(t *testing.T, path string) string {
	t.Helper()
	deadline := time.Now().Add(failAfter)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			return strings.TrimSpace(string(b))
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never written", path)
	return ""
}

// flux-core job-exec: at R's expiration the job gets exception "timeout",
// "resource allocation expired", then SIGALRM (not a cancel's SIGTERM: a
// timeout's status is 142); SIGKILL after the grace when SIGALRM did not
// end it.
func TestTimeLimit(t *testing.T) {
	h := newHarness(t, "auto")
	h.t = t
	now := time.Now()
	cwd := t.TempDir()
	// One job leaves on SIGALRM with a status of its own, one ignores it,
	// one takes its default action.
	polite := withTimes(t, spec(t, 400, jobspec.Options{Command: sh(`trap 'exit 5' ALRM; echo up > up; sleep 30 & wait`), Cwd: cwd}, 1, "0"), now, now.Add(700*time.Millisecond))
	stubborn := withTimes(t, spec(t, 401, jobspec.Options{Command: sh(`trap '' ALRM; sleep 30`)}, 1, "0"), now, now.Add(700*time.Millisecond))
	stubborn.KillGrace = 300 * time.Millisecond
	plain := withTimes(t, spec(t, 402, jobspec.Options{Command: []string{"sleep", "30"}}, 1, "1"), now, now.Add(700*time.Millisecond))
	h.launch(polite)
	h.launch(stubborn)
	h.launch(plain)
	timeout := summary{Exc: "timeout: resource allocation expired"}
	if diff := cmp.Diff([]summary{timeout, {Status: fjob.WaitStatusExited(5), Known: true}}, summarize(h.wait(400))); diff != "" {
		t.Errorf("polite job: events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]summary{timeout, {Status: fjob.WaitStatusSignaled(9), Known: true}}, summarize(h.wait(401))); diff != "" {
		t.Errorf("stubborn job: events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]summary{timeout, {Status: fjob.WaitStatusSignaled(14), Known: true}}, summarize(h.wait(402))); diff != "" {
		t.Errorf("plain job: events (-want +got):\n%s", diff)
	}
	if elapsed := time.Since(now); elapsed < 700*time.Millisecond {
		t.Errorf("ended after %v, before the limit", elapsed)
	}

	// A job whose time is up before it starts does not start.
	late := withTimes(t, spec(t, 402, jobspec.Options{Command: []string{"true"}}, 1, "0"), now.Add(-time.Hour), now.Add(-time.Minute))
	_, err := h.r.Prepare(late)
	var e *Error
	if !errors.As(err, &e) || e.Type != TypeTimeout || e.Note != NoteTimeout {
		t.Errorf("prepare of an expired job: %v, want a timeout", err)
	}
	if _, err := os.Stat(h.dir(402)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("expired job left a folder: %v", err)
	}
}

// Signal reaches every process of the job; Terminate sends SIGTERM, then
// SIGKILL after the grace; a job terminated before its launch runs nothing.
func TestSignals(t *testing.T) {
	for _, mode := range modes(t) {
		t.Run(mode, func(t *testing.T) {
			h := newHarness(t, mode)
			h.t = t
			cwd := t.TempDir()
			h.launch(spec(t, 500, jobspec.Options{Command: sh(`trap 'exit 7' USR1; echo up > up; sleep 30 & wait`), Cwd: cwd}, 1, "0"))
			waitFile(t, filepath.Join(cwd, "up"))
			h.r.Signal(500, syscall.SIGUSR1)
			if diff := cmp.Diff([]summary{{Status: fjob.WaitStatusExited(7), Known: true}}, summarize(h.wait(500))); diff != "" {
				t.Errorf("signal: events (-want +got):\n%s", diff)
			}

			s := spec(t, 501, jobspec.Options{Command: sh(`trap '' TERM; echo up > up2; sleep 30`), Cwd: cwd}, 1, "0")
			s.KillGrace = 200 * time.Millisecond
			h.launch(s)
			waitFile(t, filepath.Join(cwd, "up2"))
			start := time.Now()
			h.r.Terminate(501)
			if diff := cmp.Diff([]summary{{Status: fjob.WaitStatusSignaled(9), Known: true}}, summarize(h.wait(501))); diff != "" {
				t.Errorf("terminate: events (-want +got):\n%s", diff)
			}
			if d := time.Since(start); d < 200*time.Millisecond {
				t.Errorf("SIGKILL after %v, before the grace", d)
			}

			s = spec(t, 502, jobspec.Options{Command: sh(`echo ran > ran`), Cwd: cwd}, 1, "0")
			rec, err := h.r.Prepare(s)
			if err != nil {
				t.Fatal(err)
			}
			h.r.Terminate(502)
			if err := h.r.Launch(rec, s); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]summary{{Status: fjob.WaitStatusSignaled(15), Known: true}}, summarize(h.wait(502))); diff != "" {
				t.Errorf("terminated before launch: events (-want +got):\n%s", diff)
			}
			if _, err := os.Stat(filepath.Join(cwd, "ran")); err == nil {
				t.Errorf("a job terminated before its launch ran")
			}
		})
	}
}

// A job whose runner went away (the agent was killed) is adopted by the
// next: it ends once its processes are gone, with its status unknown,
// exactly once; its processes are not run again.
func TestAdopt(t *testing.T) {
	for _, mode := range modes(t) {
		t.Run(mode, func(t *testing.T) {
			h := newHarness(t, mode)
			h.t = t
			cwd := t.TempDir()
			s := spec(t, 600, jobspec.Options{Command: sh(`echo x >> runs; echo up > up; sleep 1`), Cwd: cwd}, 1, "0")
			rec := h.launch(s)
			waitFile(t, filepath.Join(cwd, "up"))
			h.r.Close()

			h2 := newHarness(t, mode)
			h2.t = t
			h2.jobs = h.jobs
			h2.r.opts.JobsDir = h.jobs
			h2.r.Adopt(*rec)
			if got := h2.r.Running(); !slices.Equal(got, []fluid.ID{600}) {
				t.Errorf("running %v", got)
			}
			if diff := cmp.Diff([]summary{{Known: false}}, summarize(h2.wait(600))); diff != "" {
				t.Errorf("adopted: events (-want +got):\n%s", diff)
			}
			time.Sleep(300 * time.Millisecond)
			if n := len(summarize(h2.events[600])); n != 1 {
				t.Errorf("%d events, want one end", n)
			}
			if len(h.events[600]) != 0 {
				t.Errorf("the closed runner reported %+v", h.events[600])
			}
			if got := readFile(t, filepath.Join(cwd, "runs")); got != "x\n" {
				t.Errorf("runs = %q", got)
			}
			for _, d := range rec.Cgroup {
				if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("cgroup %s left: %v", d, err)
				}
			}

			// An adopted job can still be terminated.
			s = spec(t, 601, jobspec.Options{Command: sh(`echo up > up3; exec sleep 30`), Cwd: cwd}, 1, "0")
			h3 := newHarness(t, mode)
			h3.t = t
			rec = h3.launch(s)
			waitFile(t, filepath.Join(cwd, "up3"))
			h3.r.Close()
			h2.r.Adopt(*rec)
			h2.r.Terminate(601)
			if diff := cmp.Diff([]summary{{Known: false}}, summarize(h2.wait(601))); diff != "" {
				t.Errorf("adopted and terminated: events (-want +got):\n%s", diff)
			}
		})
	}
}

// Output paths are flux-shell's templates, relative to the cwd; append
// mode appends.
func TestOutputTemplates(t *testing.T) {
	h := newHarness(t, "auto")
	h.t = t
	cwd := t.TempDir()
	os.WriteFile(filepath.Join(cwd, "700.log"), []byte("before\n"), 0o644)
	output := map[string]any{"mode": "append", "stdout": map[string]any{"path": "{{id.dec}}.log"}}
	o := jobspec.Options{Command: sh(`echo "out $FLUXQ_TASK_RANK"; echo "err $FLUXQ_TASK_RANK" >&2`), Cwd: cwd, NTasks: 2,
		Extra: map[string]any{"shell": map[string]any{"options": map[string]any{"output": output}}}}
	h.launch(spec(t, 700, o, 2, "0"))
	if diff := cmp.Diff([]summary{{Known: true}}, summarize(h.wait(700))); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	got := strings.Split(strings.TrimSpace(readFile(t, filepath.Join(cwd, "700.log"))), "\n")
	slices.Sort(got)
	want := []string{"before", "err 0", "err 1", "out 0", "out 1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("700.log (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(h.dir(700), shell.StdoutFile)); err == nil {
		t.Errorf("stdout written to the job folder too")
	}
}

var _ = strconv.Itoa

// A task is bound to its rank's cores when the machine has them.
func TestCoreBinding(t *testing.T) {
	var set unixCPUSet
	if !set.get() || set.count() < 2 {
		t.Skip("needs 2 CPUs")
	}
	h := newHarness(t, "auto")
	h.t = t
	h.launch(spec(t, 1000, jobspec.Options{Command: sh("grep Cpus_allowed_list /proc/self/status")}, 1, "1"))
	if diff := cmp.Diff([]summary{{Known: true}}, summarize(h.wait(1000))); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if got := readFile(t, filepath.Join(h.dir(1000), shell.StdoutFile)); !strings.HasSuffix(got, "\t1\n") {
		t.Errorf("task bound to %q, want CPU 1", got)
	}
	// The runner's own threads are not left bound.
	var after unixCPUSet
	if after.get(); after.count() != set.count() {
		t.Errorf("the runner's mask went from %d CPUs to %d", set.count(), after.count())
	}
}

// A task whose cores another host of the instance names too runs
// unbound (SetSharedCPUs), on every CPU the runner may use; one whose
// cores are its own is still bound; and a set that names none binds as
// before.
func TestCoreBindingShared(t *testing.T) {
	var set unixCPUSet
	if !set.get() || set.count() < 2 {
		t.Skip("needs 2 CPUs")
	}
	all := cpuList(t)
	h := newHarness(t, "auto")
	h.t = t
	for i, tc := range []struct {
		shared, cores, want string
	}{
		{"1", "1", all},
		{"1", "0", "0"},
		{"0-1", "0", all},
		{"", "1", "1"},
	} {
		s, err := idset.Parse(tc.shared)
		if err != nil {
			t.Fatal(err)
		}
		h.r.SetSharedCPUs(s)
		id := fluid.ID(2000 + i)
		h.launch(spec(t, id, jobspec.Options{Command: sh("grep Cpus_allowed_list /proc/self/status")}, 1, tc.cores))
		if diff := cmp.Diff([]summary{{Known: true}}, summarize(h.wait(id))); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
		if got := readFile(t, filepath.Join(h.dir(id), shell.StdoutFile)); !strings.HasSuffix(got, "\t"+tc.want+"\n") {
			t.Errorf("shared %q, cores %q: the task ran on %q, want %s", tc.shared, tc.cores, got, tc.want)
		}
	}
}

// cpuList is the runner's CPUs as /proc says them (Cpus_allowed_list).
func cpuList(t *testing.T) string {
	t.Helper()
	for _, line := range strings.Split(readFile(t, "/proc/self/status"), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatal("no Cpus_allowed_list in /proc/self/status")
	return ""
}

// Every descriptor a job used is closed once it has ended.
func TestNoDescriptorLeak(t *testing.T) {
	h := newHarness(t, "auto")
	h.t = t
	count := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		n := len(ents)
		if c := h.r.cg; c != nil {
			// The free slots of the pool keep two each (pool.go): as
			// many as jobs ran at once, for good.
			c.mu.Lock()
			n -= 2 * len(c.free)
			c.mu.Unlock()
		}
		return n
	}
	// A first job opens what the runner keeps for good.
	h.launch(spec(t, 1100, jobspec.Options{Command: []string{"true"}}, 1, "0"))
	h.wait(1100)
	before := count()
	for i := range 20 {
		cmd := []string{"true"}
		if i%2 == 1 {
			cmd = sh("echo out; echo err >&2; (sleep 300 &)")
		}
		h.launch(spec(t, fluid.ID(1101+i), jobspec.Options{Command: cmd}, 1, "0"))
	}
	for i := range 20 {
		h.wait(fluid.ID(1101 + i))
	}
	if after := count(); after != before {
		t.Errorf("%d descriptors open before 20 jobs, %d after", before, after)
	}
}

// A process of a job is known to be in it by its cgroup; a claim of
// another job, or from outside, is not believed.
func TestInJob(t *testing.T) {
	for _, mode := range modes(t) {
		if mode == "subreaper" {
			continue
		}
		t.Run(mode, func(t *testing.T) {
			h := newHarness(t, mode)
			h.t = t
			cwd := t.TempDir()
			h.launch(spec(t, 1200, jobspec.Options{Command: sh(`echo $$ > pid; exec sleep 30`), Cwd: cwd}, 1, "0"))
			pid, err := strconv.Atoi(waitFile(t, filepath.Join(cwd, "pid")))
			if err != nil {
				t.Fatal(err)
			}
			name := h.r.opts.CgroupName
			if !InJob(pid, name, 1200) {
				b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
				t.Errorf("task %d not found in its job; its cgroups:\n%s", pid, b)
			}
			if InJob(pid, name, 1201) || InJob(pid, name, 120) || InJob(pid, "other", 1200) || InJob(os.Getpid(), name, 1200) {
				t.Errorf("a claim that is not true was believed")
			}
			h.r.Terminate(1200)
			h.wait(1200)
		})
	}
}

// A second start of a job that runs is refused and touches nothing of it:
// not its folder, not its cgroup.
func TestPrepareTwice(t *testing.T) {
	h := newHarness(t, "auto")
	h.t = t
	cwd := t.TempDir()
	s := spec(t, 1300, jobspec.Options{Command: sh(`echo first; echo up > up; sleep 0.5; echo last`), Cwd: cwd}, 1, "0")
	rec := h.launch(s)
	waitFile(t, filepath.Join(cwd, "up"))
	if _, err := h.r.Prepare(s); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Errorf("second prepare: %v, want a refusal", err)
	}
	for _, d := range rec.Cgroup {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("cgroup of the running job: %v", err)
		}
	}
	if diff := cmp.Diff([]summary{{Known: true}}, summarize(h.wait(1300))); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if got := readFile(t, filepath.Join(h.dir(1300), shell.StdoutFile)); got != "first\nlast\n" {
		t.Errorf("stdout %q: the running job's folder was touched", got)
	}
}

// Output that is no file of a filesystem is the tasks' own: /dev/null, and
// a FIFO, which, without a reader, is refused rather than waited for.
func TestOutputSpecialFiles(t *testing.T) {
	h := newHarness(t, "auto")
	h.t = t
	cwd := t.TempDir()
	output := func(path string) map[string]any {
		return map[string]any{"shell": map[string]any{"options": map[string]any{"output": map[string]any{"stdout": map[string]any{"path": path}}}}}
	}
	devnull := output("/dev/null")
	devnull["shell"].(map[string]any)["options"].(map[string]any)["output"].(map[string]any)["stderr"] = map[string]any{"path": "err"}
	h.launch(spec(t, 1400, jobspec.Options{Command: sh("echo gone; echo kept >&2"), Cwd: cwd, Extra: devnull}, 1, "0"))
	if diff := cmp.Diff([]summary{{Known: true}}, summarize(h.wait(1400))); diff != "" {
		t.Errorf("/dev/null: events (-want +got):\n%s", diff)
	}
	if got := readFile(t, filepath.Join(cwd, "err")); got != "kept\n" {
		t.Errorf("stderr %q", got)
	}
	fifo := filepath.Join(cwd, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.launch(spec(t, 1401, jobspec.Options{Command: sh("echo hi"), Extra: output(fifo)}, 1, "0"))
	}()
	select {
	case <-done:
	case <-time.After(failAfter):
		t.Fatal("the launch waits for a reader of the FIFO")
	}
	want := []summary{{Exc: "exec: error opening output file: open " + fifo + ": no such device or address"},
		{Status: fjob.WaitStatusExited(1), Known: true}}
	if diff := cmp.Diff(want, summarize(h.wait(1401))); diff != "" {
		t.Errorf("FIFO: events (-want +got):\n%s", diff)
	}
}

// A job of the runner's own user that writes nothing leaves no empty
// output files in its folder; one that writes has them.
func TestLazyOutput(t *testing.T) {
	h := newHarness(t, "auto")
	h.t = t
	h.launch(spec(t, 1500, jobspec.Options{Command: []string{"true"}}, 1, "0"))
	h.launch(spec(t, 1501, jobspec.Options{Command: sh("echo err >&2")}, 1, "0"))
	h.wait(1500)
	h.wait(1501)
	for _, name := range []string{shell.StdoutFile, shell.StderrFile} {
		if _, err := os.Stat(filepath.Join(h.dir(1500), name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("silent job: %s: %v, want none", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(h.dir(1501), shell.StdoutFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("job writing to stderr only has a stdout: %v", err)
	}
	if got := readFile(t, filepath.Join(h.dir(1501), shell.StderrFile)); got != "err\n" {
		t.Errorf("stderr %q", got)
	}
}
