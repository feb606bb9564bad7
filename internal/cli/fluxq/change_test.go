package fluxq

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/shell"
)

func TestCancel(t *testing.T) {
	active := []api.JobSummary{{ID: 1 << 24, State: job.Sched}, {ID: 2 << 24, State: job.Run}, {ID: 3 << 24, State: job.Sched}}
	tests := []struct {
		name      string
		jobs      []api.JobSummary
		errs      map[fluid.ID]error
		args      []string
		want      result
		canceled  int
		wantQuery *api.JobsQuery
	}{
		// docs/cli.md: the messages of flux cancel.
		{name: "all", jobs: active, args: []string{"--all"}, canceled: 3,
			want:      result{Stderr: "fluxq: cancel: Canceled 3 jobs (0 errors)\n"},
			wantQuery: &api.JobsQuery{States: job.Active}},
		{name: "all with an error", jobs: active, errs: map[fluid.ID]error{2 << 24: api.ErrInactive}, args: []string{"--all", "-m", "bye"}, canceled: 3,
			want: result{Stderr: "fluxq: cancel: ƒ3xyZh: job is inactive\nfluxq: cancel: Canceled 2 jobs (1 error)\n", Code: 1}},
		// Another user's job, which a guest may list but not cancel: not
		// counted as canceled, named with its owner, exit 1.
		{name: "all users, some not the caller's", jobs: []api.JobSummary{{ID: 1 << 24, State: job.Sched, UserID: 0}, {ID: 2 << 24, State: job.Run, UserID: 0}},
			errs: map[fluid.ID]error{1 << 24: api.ErrPermission, 2 << 24: api.ErrPermission}, args: []string{"--all", "-u", "all"}, canceled: 2,
			want: result{Stderr: "fluxq: cancel: ƒ2UzHM: permission denied: it belongs to root\nfluxq: cancel: ƒ3xyZh: permission denied: it belongs to root\nfluxq: cancel: Canceled 0 jobs (2 errors)\n", Code: 1}},
		{name: "one job", jobs: active[:1], args: []string{"--all"}, canceled: 1,
			want: result{Stderr: "fluxq: cancel: Canceled 1 job (0 errors)\n"}},
		{name: "none", args: []string{"--all"}, want: result{Stderr: "fluxq: cancel: Matched 0 jobs\n"}},
		{name: "none quietly", args: []string{"--all", "-q"}},
		{name: "dry run", jobs: active, args: []string{"--all", "-n"}, want: result{Stderr: "fluxq: cancel: Would cancel 3 jobs\n"}},
		// -S and -u imply --all.
		{name: "states", jobs: active[:2], args: []string{"-S", "run,sched"}, canceled: 2,
			want:      result{Stderr: "fluxq: cancel: Canceled 2 jobs (0 errors)\n"},
			wantQuery: &api.JobsQuery{States: job.Run | job.Sched}},
		{name: "all users", jobs: active[:1], args: []string{"-u", "all"}, canceled: 1,
			want:      result{Stderr: "fluxq: cancel: Canceled 1 job (0 errors)\n"},
			wantQuery: &api.JobsQuery{States: job.Active, AllUsers: true}},
		{name: "by id", args: []string{"ƒ2UzHM", "ƒ3xyZh"}, canceled: 2},
		// Per job: the job manager's reason, exit 1.
		{name: "by id with errors", args: []string{"ƒ2UzHM", "ƒ3xyZh", "ƒ5Sxr3"}, canceled: 3,
			errs: map[fluid.ID]error{1 << 24: api.ErrUnknownJob, 3 << 24: api.ErrInactive},
			want: result{Stderr: "fluxq: cancel: ƒ2UzHM: unknown job id\nfluxq: cancel: ƒ5Sxr3: job is inactive\n", Code: 1}},
		{name: "nothing", want: result{Stderr: "fluxq: cancel: No target jobs were provided\nTry 'fluxq cancel --help' for more information.\n", Code: 2}},
		{name: "ids and all", args: []string{"--all", "ƒ2UzHM"},
			want: result{Stderr: "fluxq: cancel: do not give job IDs with --all (it selects the jobs itself)\nTry 'fluxq cancel --help' for more information.\n", Code: 2}},
		{name: "ids and user", args: []string{"-u", "root", "ƒ2UzHM"},
			want: result{Stderr: "fluxq: cancel: do not give job IDs with --user (it selects the jobs itself)\nTry 'fluxq cancel --help' for more information.\n", Code: 2}},
		{name: "bad state", args: []string{"-S", "inactive"},
			want: result{Stderr: "fluxq: cancel: Invalid state inactive specified\nTry 'fluxq cancel --help' for more information.\n", Code: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fc := &fakeClient{jobs: tt.jobs, cancelErr: tt.errs}
			got := runFluxq(t, fc, "", append([]string{"cancel"}, tt.args...)...)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if len(fc.canceled) != tt.canceled {
				t.Errorf("%d jobs canceled, want %d", len(fc.canceled), tt.canceled)
			}
			if tt.wantQuery != nil {
				if diff := cmp.Diff([]api.JobsQuery{*tt.wantQuery}, fc.queries); diff != "" {
					t.Errorf("query (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestUrgency(t *testing.T) {
	info := func(u int) map[fluid.ID]*api.JobInfo {
		return map[fluid.ID]*api.JobInfo{1 << 24: {Summary: api.JobSummary{ID: 1 << 24, Urgency: u}}}
	}
	tests := []struct {
		name  string
		old   int
		err   error
		args  []string
		want  result
		valid int
	}{
		{name: "number", args: []string{"ƒ2UzHM", "7"}, valid: 7},
		// flux job urgency -v: the old value, bare, on stderr.
		{name: "verbose", old: 16, args: []string{"-v", "ƒ2UzHM", "hold"}, want: result{Stderr: "old urgency: 16\n"}, valid: 0},
		{name: "verbose held", old: 0, args: []string{"ƒ2UzHM", "default", "-v"}, want: result{Stderr: "old urgency: job held\n"}, valid: 16},
		{name: "verbose expedited", old: 31, args: []string{"ƒ2UzHM", "-v", "expedite"}, want: result{Stderr: "old urgency: job expedited\n"}, valid: 31},
		{name: "out of range", args: []string{"ƒ2UzHM", "32"}, want: result{Stderr: "fluxq: urgency: ƒ2UzHM: urgency value is out of range\n", Code: 1}, valid: -1},
		{name: "allocated", err: api.ErrUrgencyRunning, args: []string{"ƒ2UzHM", "3"},
			want: result{Stderr: "fluxq: urgency: ƒ2UzHM: urgency cannot be changed once resources are allocated\n", Code: 1}, valid: -1},
		{name: "word", args: []string{"ƒ2UzHM", "later"},
			want: result{Stderr: "fluxq: urgency: invalid urgency \"later\": want 0-31, hold, default or expedite\nTry 'fluxq urgency --help' for more information.\n", Code: 2}, valid: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fc := &fakeClient{infos: info(tt.old), urgErr: tt.err}
			got := runFluxq(t, fc, "", append([]string{"urgency"}, tt.args...)...)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			u, ok := fc.urgencies[1<<24]
			if !ok {
				u = -1
			}
			if u != tt.valid {
				t.Errorf("urgency set to %d, want %d", u, tt.valid)
			}
		})
	}
}

// testEvents is a job's life from submit to clean, failing with exit 3.
var testEvents = []eventlog.Event{
	{Timestamp: 1_700_000_000.25, Name: "submit", Context: map[string]any{"userid": 1000, "urgency": 16, "flags": 0, "version": 1}},
	{Timestamp: 1_700_000_000.25, Name: "validate"},
	{Timestamp: 1_700_000_000.5, Name: "exception", Context: map[string]any{"type": "test", "severity": 1, "note": "just so"}},
	{Timestamp: 1_700_000_001.5, Name: "finish", Context: map[string]any{"status": 3 << 8}},
	{Timestamp: 1_700_000_002.000125, Name: "release", Context: map[string]any{"ranks": "all", "final": true}},
	{Timestamp: 1_700_000_002.5, Name: "clean"},
}

func TestEventlog(t *testing.T) {
	fc := &fakeClient{events: map[fluid.ID][]eventlog.Event{1 << 24: testEvents}}
	got := runFluxq(t, fc, "", "eventlog", "ƒ2UzHM")
	want := "1700000000.250000 submit flags=0 urgency=16 userid=1000 version=1\n" +
		"1700000000.250000 validate\n" +
		"1700000000.500000 exception note=\"just so\" severity=1 type=\"test\"\n" +
		"1700000001.500000 finish status=768\n" +
		"1700000002.000125 release final=true ranks=\"all\"\n" +
		"1700000002.500000 clean\n"
	if diff := cmp.Diff(result{Stdout: want}, got); diff != "" {
		t.Errorf("eventlog (-want +got):\n%s", diff)
	}
	// -H: the first time as a date, then offsets from it.
	got = runFluxq(t, fc, "", "eventlog", "ƒ2UzHM", "-H")
	first := testNow.Local().Format("[Jan02 15:04]")
	want = first + " submit flags=0 urgency=16 userid=1000 version=1\n" +
		"[  +0.000000] validate\n" +
		"[  +0.250000] exception note=\"just so\" severity=1 type=\"test\"\n" +
		"[  +1.250000] finish status=768\n" +
		"[  +1.750125] release final=true ranks=\"all\"\n" +
		"[  +2.250000] clean\n"
	if diff := cmp.Diff(result{Stdout: want}, got); diff != "" {
		t.Errorf("eventlog -H (-want +got):\n%s", diff)
	}
	b, _ := eventlog.Append(nil, testEvents...)
	for _, flag := range [][]string{{"--json"}, {"-f", "json"}} {
		got = runFluxq(t, fc, "", append([]string{"eventlog", "ƒ2UzHM"}, flag...)...)
		if diff := cmp.Diff(result{Stdout: string(b)}, got); diff != "" {
			t.Errorf("eventlog %v (-want +got):\n%s", flag, diff)
		}
	}
	// flux job eventlog -T: iso (UTC) and offset times.
	got = runFluxq(t, fc, "", "eventlog", "-T", "iso", "ƒ2UzHM")
	if want := "2023-11-14T22:13:20.250000Z submit "; !strings.HasPrefix(got.Stdout, want) {
		t.Errorf("eventlog -T iso: %q, want prefix %q", got.Stdout, want)
	}
	got = runFluxq(t, fc, "", "eventlog", "-T", "offset", "ƒ2UzHM")
	if want := "0.000000 submit "; !strings.HasPrefix(got.Stdout, want) || !strings.HasSuffix(got.Stdout, "\n2.250000 clean\n") {
		t.Errorf("eventlog -T offset: %q", got.Stdout)
	}
	for _, bad := range [][]string{{"-f", "yaml"}, {"-T", "nanos"}} {
		if got := runFluxq(t, fc, "", append([]string{"eventlog", "ƒ2UzHM"}, bad...)...); got.Code != 2 {
			t.Errorf("eventlog %v: %+v, want exit 2", bad, got)
		}
	}
}

func TestAttach(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, shell.StdoutFile), "out 1\nout 2\n")
	writeFile(t, filepath.Join(dir, shell.StderrFile), "err\n")
	canceled := []eventlog.Event{
		{Timestamp: 1, Name: "submit", Context: map[string]any{"userid": 1000, "urgency": 16, "flags": 0, "version": 1}},
		{Timestamp: 2, Name: "exception", Context: map[string]any{"type": "cancel", "severity": 0, "note": ""}},
		{Timestamp: 3, Name: "clean"},
	}
	signaled := []eventlog.Event{{Timestamp: 1, Name: "finish", Context: map[string]any{"status": 9}}, {Timestamp: 2, Name: "clean"}}
	fc := &fakeClient{
		infos: map[fluid.ID]*api.JobInfo{
			1 << 24: {JobDir: dir},
			2 << 24: {JobDir: filepath.Join(dir, "never-ran")},
			3 << 24: {},
		},
		events: map[fluid.ID][]eventlog.Event{1 << 24: testEvents, 2 << 24: canceled, 3 << 24: signaled},
	}
	tests := []struct {
		args []string
		want result
	}{
		// The job's output, its non-fatal exception, its exit code. (The
		// job's stderr and our notes may come in either order.)
		// The tasks' code is said last, as flux job attach says it.
		{[]string{"attach", "ƒ2UzHM"}, result{Stdout: "out 1\nout 2\n", Stderr: "err\nfluxq: attach: job.exception type=test severity=1 just so\nfluxq: attach: ƒ2UzHM: task(s) exited with exit code 3\n", Code: 3}},
		// Canceled before it ran: no output, exit 1.
		{[]string{"attach", "ƒ3xyZh"}, result{Stderr: "fluxq: attach: job.exception type=cancel severity=0\n", Code: 1}},
		// Killed by SIGKILL: 128+9.
		{[]string{"attach", "ƒ5Sxr3"}, result{Stderr: "fluxq: attach: ƒ5Sxr3: task(s) Killed\n", Code: 137}},
		{[]string{"attach", "ƒ6vx8P"}, result{Stderr: "fluxq: attach: ƒ6vx8P: unknown job id\n", Code: 1}},
		{[]string{"output", "ƒ2UzHM"}, result{Stdout: "out 1\nout 2\n", Stderr: "err\n"}},
		{[]string{"output", "ƒ3xyZh"}, result{}},
	}
	for _, tt := range tests {
		got := runFluxq(t, fc, "", tt.args...)
		lines := strings.SplitAfter(got.Stderr, "\n")
		slices.Sort(lines)
		got.Stderr = strings.Join(lines, "")
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("fluxq %v (-want +got):\n%s", tt.args, diff)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "never-ran")); !errors.Is(err, os.ErrNotExist) {
		t.Error("attach created the job folder")
	}
}

func TestWait(t *testing.T) {
	fc := &fakeClient{
		jobs: []api.JobSummary{{ID: 1 << 24}, {ID: 2 << 24}, {ID: 3 << 24}},
		infos: map[fluid.ID]*api.JobInfo{
			1 << 24: {Summary: api.JobSummary{ID: 1 << 24, State: job.Inactive, Result: job.Completed, ReturnCode: intp(0), WaitStatus: intp(0)}},
			2 << 24: {Summary: api.JobSummary{ID: 2 << 24, State: job.Inactive, Result: job.Failed, ReturnCode: intp(2), WaitStatus: intp(2 << 8)}},
			3 << 24: {Summary: api.JobSummary{ID: 3 << 24, State: job.Inactive, Result: job.Canceled, Exception: &api.Exception{Occurred: true, Type: "cancel", Note: "no"}}},
		},
	}
	tests := []struct {
		args []string
		want result
	}{
		{[]string{"wait", "ƒ2UzHM"}, result{}},
		// The job's own exit code, said as flux job wait says it: 2 is not
		// a usage error here (no hint).
		{[]string{"wait", "ƒ3xyZh"}, result{Stderr: "fluxq: wait: ƒ3xyZh: task(s) exited with exit code 2\n", Code: 2}},
		{[]string{"wait", "ƒ5Sxr3"}, result{Stderr: "fluxq: wait: ƒ5Sxr3: Fatal exception type=cancel no\n", Code: 1}},
		{[]string{"wait", "--all", "-v"}, result{Stderr: "fluxq: wait: waiting for 3 jobs\n" +
			"fluxq: wait: ƒ2UzHM: job completed successfully\n" +
			"fluxq: wait: ƒ3xyZh: task(s) exited with exit code 2\n" +
			"fluxq: wait: ƒ5Sxr3: Fatal exception type=cancel no\n", Code: 1}},
		{[]string{"wait"}, result{Stderr: "fluxq: wait: give one job ID, or --all\nTry 'fluxq wait --help' for more information.\n", Code: 2}},
	}
	for _, tt := range tests {
		got := runFluxq(t, fc, "", tt.args...)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("fluxq %v (-want +got):\n%s", tt.args, diff)
		}
	}
}

func TestInfo(t *testing.T) {
	s := testJobs[6] // failed, exit 1
	fc := &fakeClient{infos: map[fluid.ID]*api.JobInfo{s.ID: {
		Summary:  s,
		Jobspec:  []byte(`{"version":1}`),
		R:        []byte(`{"version":1,"execution":{}}`),
		Eventlog: testEvents[:2],
	}}}
	got := runFluxq(t, fc, "", "info", "ƒBNuyR")
	local := func(sec float64) string { return formatTime(sec) }
	want := "id         ƒBNuyR\n" +
		"username   alice (1000)\n" +
		"name       false\n" +
		"state      INACTIVE\n" +
		"result     FAILED\n" +
		"reason     Exit 1\n" +
		"info       node0\n" +
		"urgency    0\n" +
		"priority   0\n" +
		"ntasks     1\n" +
		"nnodes     1\n" +
		"ncores     0\n" +
		"ngpus      0\n" +
		"duration   unlimited\n" +
		"nodelist   node0\n" +
		"t_submit   " + local(t0) + "\n" +
		"t_run      " + local(t0+1) + "\n" +
		"t_cleanup  " + local(t0+1.25) + "\n" +
		"t_inactive " + local(t0+2) + "\n" +
		"runtime    0.250s\n" +
		"returncode 1\n" +
		"R          {\"version\":1,\"execution\":{}}\n"
	if diff := cmp.Diff(result{Stdout: want}, got); diff != "" {
		t.Errorf("info (-want +got):\n%s", diff)
	}
	for key, want := range map[string]string{
		"jobspec":  "{\"version\":1}\n",
		"R":        "{\"version\":1,\"execution\":{}}\n",
		"eventlog": "{\"timestamp\":1700000000.25,\"name\":\"submit\",\"context\":{\"flags\":0,\"urgency\":16,\"userid\":1000,\"version\":1}}\n{\"timestamp\":1700000000.25,\"name\":\"validate\"}\n",
	} {
		got := runFluxq(t, fc, "", "info", "ƒBNuyR", key)
		if diff := cmp.Diff(result{Stdout: want}, got); diff != "" {
			t.Errorf("info %s (-want +got):\n%s", key, diff)
		}
	}
}

// interruptClient's job runs until it is canceled.
type interruptClient struct {
	*fakeClient
	canceled chan struct{}
}

func (c *interruptClient) Cancel(ctx context.Context, ids []fluid.ID, note string) ([]error, error) {
	defer close(c.canceled)
	return c.fakeClient.Cancel(ctx, ids, note)
}

func (c *interruptClient) Events(ctx context.Context, _ fluid.ID, _ bool, fn func(eventlog.Event) error) error {
	select {
	case <-c.canceled:
	case <-ctx.Done():
		return ctx.Err()
	}
	c.mu.Lock()
	note := c.notes[len(c.notes)-1]
	c.mu.Unlock()
	fn(eventlog.Event{Timestamp: 2, Name: "exception", Context: map[string]any{"type": "cancel", "severity": 0, "note": note}})
	return fn(eventlog.Event{Timestamp: 3, Name: "clean"})
}
