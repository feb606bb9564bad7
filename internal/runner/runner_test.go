package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/idset"
	fjob "github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/shell"
)

// failAfter bounds every wait of these tests: a job that never ends fails
// the test instead of hanging it.
const failAfter = 20 * time.Second

// harness is a runner and the events it sent, by job.
type harness struct {
	t    *testing.T
	r    *Runner
	jobs string

	mu     sync.Mutex
	cond   *sync.Cond
	events map[fluid.ID][]Event
}

func newHarness(t testing.TB, containment string) *harness {
	t.Helper()
	h := &harness{jobs: t.TempDir(), events: map[fluid.ID][]Event{}}
	if tt, ok := t.(*testing.T); ok {
		h.t = tt
	}
	h.cond = sync.NewCond(&h.mu)
	r, err := New(Options{JobsDir: h.jobs, Containment: containment, CgroupName: "fluxq-test-" + strconv.Itoa(os.Getpid()),
		Events: h.event})
	if err != nil {
		t.Fatal(err)
	}
	h.r = r
	t.Cleanup(func() {
		// Every job's processes go with the test.
		for _, id := range r.Running() {
			r.Signal(id, syscall.SIGKILL)
		}
		deadline := time.Now().Add(failAfter)
		for len(r.Running()) > 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		r.Close()
		if r.cg != nil {
			os.Remove(r.cg.parent)
		}
	})
	return h
}

func (h *harness) event(ev Event) {
	h.mu.Lock()
	h.events[ev.ID] = append(h.events[ev.ID], ev)
	h.cond.Broadcast()
	h.mu.Unlock()
}

// spec builds a job of the given command on n ranks of cores.
func spec(t testing.TB, id fluid.ID, o jobspec.Options, n int, cores string) Spec {
	t.Helper()
	if o.Environment == nil {
		o.Environment = map[string]string{"PATH": os.Getenv("PATH")}
	}
	js, err := jobspec.FromOptions(o)
	if err != nil {
		t.Fatal(err)
	}
	b, err := js.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var nodes []rset.Node
	for i := 0; i < n; i++ {
		nodes = append(nodes, rset.Node{Rank: uint(i), Hostname: fmt.Sprintf("node%d", i), Cores: idset.MustParse(cores)})
	}
	rb, err := rset.New(nodes).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return Spec{ID: id, UserID: uint32(os.Geteuid()), Jobspec: b, R: rb, KillGrace: 2 * time.Second}
}

// launch prepares and launches s.
func (h *harness) launch(s Spec) *Record {
	h.t.Helper()
	rec, err := h.r.Prepare(s)
	if err != nil {
		h.t.Fatalf("prepare: %v", err)
	}
	if err := h.r.Launch(rec, s); err != nil {
		h.t.Fatalf("launch: %v", err)
	}
	return rec
}

// wait returns the job's events once it has ended.
func (h *harness) wait(id fluid.ID) []Event {
	h.t.Helper()
	deadline := time.Now().Add(failAfter)
	timer := time.AfterFunc(failAfter, func() { h.mu.Lock(); h.cond.Broadcast(); h.mu.Unlock() })
	defer timer.Stop()
	h.mu.Lock()
	defer h.mu.Unlock()
	for {
		evs := h.events[id]
		if n := len(evs); n > 0 && evs[n-1].End != nil {
			return evs
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("job %d did not end; events %+v", id, evs)
		}
		h.cond.Wait()
	}
}

// summary is an event in a comparable form.
type summary struct {
	Exc    string
	Status int
	Known  bool
}

func summarize(evs []Event) []summary {
	var out []summary
	for _, ev := range evs {
		switch {
		case ev.Exception != nil:
			out = append(out, summary{Exc: ev.Exception.Type + ": " + ev.Exception.Note})
		case ev.End != nil:
			out = append(out, summary{Status: ev.End.Status, Known: ev.End.Known})
		}
	}
	return out
}

func sh(script string) []string { return []string{"sh", "-c", script} }

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (h *harness) dir(id fluid.ID) string {
	return filepath.Join(h.jobs, strconv.FormatUint(uint64(id), 10))
}

// modes are the containments this machine offers, for tests that run in
// each.
func modes(t *testing.T) []string {
	out := []string{"subreaper"}
	for _, m := range []string{"cgroup1", "cgroup2"} {
		if c, err := chooseContainment(m, "fluxq-probe-"+strconv.Itoa(os.Getpid())); err == nil {
			out = append(out, m)
			os.Remove(c.parent)
		} else {
			t.Logf("%s: %v", m, err)
		}
	}
	return out
}

func TestCommands(t *testing.T) {
	for _, mode := range modes(t) {
		t.Run(mode, func(t *testing.T) {
			h := newHarness(t, mode)
			h.t = t
			tests := []struct {
				name    string
				command []string
				status  int
			}{
				{"true", []string{"true"}, 0},
				{"false", []string{"false"}, fjob.WaitStatusExited(1)},
				{"exit 3", sh("exit 3"), fjob.WaitStatusExited(3)},
				{"killed by a signal", sh("kill -9 $$"), fjob.WaitStatusSignaled(9)},
			}
			for i, tc := range tests {
				h.launch(spec(t, fluid.ID(100+i), jobspec.Options{Command: tc.command}, 1, "0"))
			}
			for i, tc := range tests {
				id := fluid.ID(100 + i)
				want := []summary{{Status: tc.status, Known: true}}
				if diff := cmp.Diff(want, summarize(h.wait(id))); diff != "" {
					t.Errorf("%s: events (-want +got):\n%s", tc.name, diff)
				}
				// Its status is in its End alone; having written
				// nothing, it has no folder.
				if _, err := os.Lstat(h.dir(id)); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s: a job that wrote nothing has a folder (%v)", tc.name, err)
				}
			}
			if n := len(h.r.Running()); n != 0 {
				t.Errorf("%d jobs still running", n)
			}
		})
	}
}

// flux-shell: a task that cannot start ends the job with exit status 127,
// an exec exception, and the message on the job's stderr.
func TestCommandNotFound(t *testing.T) {
	h := newHarness(t, "auto")
	h.t = t
	id := fluid.ID(7)
	h.launch(spec(t, id, jobspec.Options{Command: []string{"no-such-command-xyz"}}, 1, "0"))
	note := "task 0 (host node0): start failed: no-such-command-xyz: No such file or directory"
	want := []summary{{Exc: "exec: " + note}, {Status: fjob.WaitStatusExited(127), Known: true}}
	if diff := cmp.Diff(want, summarize(h.wait(id))); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	stderr := readFile(t, filepath.Join(h.dir(id), shell.StderrFile))
	if wantLine := shell.Name + "[0]: FATAL: " + note + "\n"; stderr != wantLine {
		t.Errorf("stderr = %q, want %q", stderr, wantLine)
	}
}

// A task sees the jobspec's environment and cwd, the FLUXQ_ variables and
// CUDA_VISIBLE_DEVICES, and its output lands in the job folder.
func TestEnvironment(t *testing.T) {
	h := newHarness(t, "auto")
	h.t = t
	cwd := t.TempDir()
	script := `echo "$FLUXQ_JOB_ID|$FLUXQ_JOB_NNODES|$FLUXQ_JOB_SIZE|$FLUXQ_TASK_RANK|$FLUXQ_TASK_LOCAL_ID|$CUDA_VISIBLE_DEVICES|$FOO|$HOME"; pwd; echo err >&2`
	id := fluid.ID(1 << 30)
	env := map[string]string{"PATH": os.Getenv("PATH"), "FOO": "bar baz"}
	h.launch(spec(t, id, jobspec.Options{Command: sh(script), Cwd: cwd, Environment: env}, 1, "0"))
	if diff := cmp.Diff([]summary{{Known: true}}, summarize(h.wait(id))); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	want := id.String() + "|1|1|0|0|-1|bar baz|\n" + cwd + "\n"
	if got := readFile(t, filepath.Join(h.dir(id), shell.StdoutFile)); got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
	if got := readFile(t, filepath.Join(h.dir(id), shell.StderrFile)); got != "err\n" {
		t.Errorf("stderr = %q", got)
	}
}

// A job ends only when every process it started is gone: one that
// double-forks a sleep, and one that calls setsid.
func TestLeftoversKilled(t *testing.T) {
	for _, mode := range modes(t) {
		t.Run(mode, func(t *testing.T) {
			h := newHarness(t, mode)
			h.t = t
			tests := []struct {
				name   string
				script string
			}{
				{"double fork", `(sleep 300 & echo $! > pid) & wait`},
				{"setsid", `setsid sh -c 'echo $$ > pid; exec sleep 300' & sleep 0.2`},
			}
			for i, tc := range tests {
				id := fluid.ID(200 + i)
				cwd := t.TempDir()
				start := time.Now()
				h.launch(spec(t, id, jobspec.Options{Command: sh(tc.script), Cwd: cwd}, 1, "0"))
				evs := h.wait(id)
				if d := time.Since(start); d > 10*time.Second {
					t.Errorf("%s: took %v", tc.name, d)
				}
				if diff := cmp.Diff([]summary{{Known: true}}, summarize(evs)); diff != "" {
					t.Errorf("%s: events (-want +got):\n%s", tc.name, diff)
				}
				pid, err := strconv.Atoi(strings.TrimSpace(readFile(t, filepath.Join(cwd, "pid"))))
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				if _, err := startTime(pid); err == nil {
					t.Errorf("%s: leftover sleep %d still runs after the end", tc.name, pid)
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		})
	}
}

// Usage: CPU time of the tasks and their waited-for children, and the
// largest resident set.
func TestUsage(t *testing.T) {
	h := newHarness(t, "auto")
	h.t = t
	id := fluid.ID(300)
	h.launch(spec(t, id, jobspec.Options{Command: sh("head -c 200000000 /dev/zero | sort > /dev/null")}, 1, "0"))
	evs := h.wait(id)
	end := evs[len(evs)-1].End
	if end.Status != 0 {
		t.Fatalf("status %d", end.Status)
	}
	u := end.Usage
	t.Logf("usage %+v", u)
	if u.MaxRSS < 150e6 {
		t.Errorf("max rss %d, want at least 150 MB", u.MaxRSS)
	}
	if u.UserCPU+u.SysCPU <= 0 {
		t.Errorf("no CPU time: %+v", u)
	}
}

var _ = json.Marshal
var _ execproto.Exception

// A part of a job across hosts whose ranks hold none of its tasks (one
// task over two ranks of R: the layout puts it on rank 0) starts nothing
// and ends at once with status 0, no exception, as flux-shell on a rank
// with no task; the part of rank 0 runs the task.
func TestLaunchRanksWithoutTask(t *testing.T) {
	h := newHarness(t, "auto")
	h.t = t
	mark := filepath.Join(t.TempDir(), "ran")
	for _, tc := range []struct {
		id     fluid.ID
		ranks  string
		status int
		ran    bool
	}{
		{31, "1", 0, false},
		{32, "0", fjob.WaitStatusExited(3), true},
	} {
		s := spec(t, tc.id, jobspec.Options{Command: sh("echo $FLUXQ_TASK_RANK >> " + mark + "; exit 3")}, 2, "0")
		s.Ranks = tc.ranks
		h.launch(s)
		want := []summary{{Status: tc.status, Known: true}}
		if diff := cmp.Diff(want, summarize(h.wait(tc.id))); diff != "" {
			t.Errorf("ranks %s: events (-want +got):\n%s", tc.ranks, diff)
		}
		_, err := os.Stat(mark)
		if ran := err == nil; ran != tc.ran {
			t.Errorf("ranks %s: the task ran: %v, want %v", tc.ranks, ran, tc.ran)
		}
	}
	if got := readFile(t, mark); got != "0\n" {
		t.Errorf("tasks ran: %q, want rank 0 once", got)
	}
}
