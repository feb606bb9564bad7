package fluxq

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
)

func intp(n int) *int { return &n }

// t0 is a few minutes before testNow.
const t0 = 1_700_000_000 - 300

// testJobs covers each way a job shows in a listing.
var testJobs = []api.JobSummary{
	{ID: 1 << 24, UserID: 1000, Name: "held", State: job.Sched, Urgency: 0, Priority: 0, NTasks: 1, NCores: 1, TSubmit: t0},
	{ID: 2 << 24, UserID: 1000, Name: "waiting", State: job.Sched, Urgency: 16, Priority: 16, NTasks: 4, NCores: 4, Duration: 3600, TSubmit: t0,
		Annotations: map[string]any{"sched": map[string]any{"reason_pending": "insufficient resources", "jobs_ahead": 2.0}}},
	{ID: 3 << 24, UserID: 1000, Name: "soon", State: job.Sched, Urgency: 16, Priority: 16, NTasks: 1, TSubmit: t0,
		Annotations: map[string]any{"sched": map[string]any{"t_estimate": 1_700_000_000.0 + 90}}},
	{ID: 4 << 24, UserID: 1000, Name: "after", State: job.Depend, Urgency: 16, Priority: -1, NTasks: 1, TSubmit: t0, Dependencies: []string{"afterok=ƒ2"}},
	{ID: 5 << 24, UserID: 1001, Name: "a-very-long-name", State: job.Run, Urgency: 16, Priority: 16, NTasks: 2, NNodes: 1, NCores: 2, TSubmit: t0, TRun: t0 + 60, Nodelist: "node[0-1]"},
	{ID: 6 << 24, UserID: 1000, Name: "done", State: job.Inactive, Result: job.Completed, NTasks: 1, NNodes: 1, TSubmit: t0, TRun: t0 + 1, TCleanup: t0 + 3.5, TInactive: t0 + 4, Nodelist: "node0", ReturnCode: intp(0), WaitStatus: intp(0)},
	{ID: 7 << 24, UserID: 1000, Name: "false", State: job.Inactive, Result: job.Failed, NTasks: 1, NNodes: 1, TSubmit: t0, TRun: t0 + 1, TCleanup: t0 + 1.25, TInactive: t0 + 2, Nodelist: "node0", ReturnCode: intp(1), WaitStatus: intp(1 << 8)},
	{ID: 8 << 24, UserID: 1000, Name: "stopped", State: job.Inactive, Result: job.Canceled, NTasks: 1, TSubmit: t0, TCleanup: t0 + 5, TInactive: t0 + 5,
		Exception: &api.Exception{Occurred: true, Type: "cancel", Note: "enough"}},
	{ID: 9 << 24, UserID: 1000, Name: "slow", State: job.Inactive, Result: job.Timeout, NTasks: 1, NNodes: 1, Duration: 1, TSubmit: t0, TRun: t0 + 1, TCleanup: t0 + 2, TInactive: t0 + 2, Nodelist: "node0", ReturnCode: intp(142), WaitStatus: intp(14),
		Exception: &api.Exception{Occurred: true, Type: "timeout", Note: "resource allocation expired"}},
}

func TestJobsTable(t *testing.T) {
	fc := &fakeClient{jobs: testJobs}
	got := runFluxq(t, fc, "", "jobs", "-a")
	// docs/cli.md: JOBID USER NAME ST NTASKS NNODES TIME INFO, ST letters and
	// result abbreviations; INFO as flux jobs shows it.
	want := " JOBID USER  NAME       ST NTASKS NNODES   TIME INFO\n" +
		"ƒ2UzHM alice held        S      1      -      - held\n" +
		"ƒ3xyZh alice waiting     S      4      -     1h insufficient resources\n" +
		"ƒ5Sxr3 alice soon        S      1      -      - eta:1.5m\n" +
		"ƒ6vx8P alice after       D      1      -      - depends:afterok=ƒ2\n" +
		"ƒ8QwQj bob   a-very-lo+  R      2      1     4m node[0-1]\n" +
		"ƒ9tvh5 alice done       CD      1      1 2.500s node0\n" +
		"ƒBNuyR alice false       F      1      1 0.250s node0\n" +
		"ƒCruFm alice stopped    CA      1      -      -\n" +
		"ƒELtY7 alice slow       TO      1      1 1.000s node0\n"
	if diff := cmp.Diff(result{Stdout: want}, got); diff != "" {
		t.Errorf("fluxq jobs -a (-want +got):\n%s", diff)
	}
	// -a asks for every state, of the caller.
	if diff := cmp.Diff([]api.JobsQuery{{States: job.Pending | job.Running | job.Inactive}}, fc.queries); diff != "" {
		t.Errorf("query (-want +got):\n%s", diff)
	}
}

// docs/cli.md: QUEUE only when named queues exist.
func TestJobsTableQueue(t *testing.T) {
	jobs := []api.JobSummary{
		{ID: 1 << 24, UserID: 1000, Name: "a", Queue: "batch", State: job.Sched, Urgency: 16, Priority: 16, NTasks: 1},
		{ID: 2 << 24, UserID: 1000, Name: "b", Queue: "debug-and-more", State: job.Sched, Urgency: 16, Priority: 16, NTasks: 1},
	}
	got := runFluxq(t, &fakeClient{jobs: jobs}, "", "jobs", "-n")
	want := "ƒ2UzHM batch    alice a S 1 - -\nƒ3xyZh debug-a+ alice b S 1 - -\n"
	if diff := cmp.Diff(result{Stdout: want}, got); diff != "" {
		t.Errorf("fluxq jobs -n (-want +got):\n%s", diff)
	}
}

func TestJobsQuery(t *testing.T) {
	uid := uint32(1001)
	tests := []struct {
		args []string
		want api.JobsQuery
	}{
		{nil, api.JobsQuery{}},
		{[]string{"-A"}, api.JobsQuery{AllUsers: true}},
		{[]string{"-u", "all"}, api.JobsQuery{AllUsers: true}},
		{[]string{"-u", "1001"}, api.JobsQuery{UserID: &uid}},
		{[]string{"-c", "5", "-q", "a,b"}, api.JobsQuery{Count: 5, Queues: []string{"a", "b"}}},
		// The name goes to the store with the count, which applies it first.
		{[]string{"-c", "2", "--name", "sleep"}, api.JobsQuery{Count: 2, Name: "sleep"}},
		// flux jobs -f: states and results.
		{[]string{"-f", "running"}, api.JobsQuery{States: job.Running}},
		{[]string{"-f", "completed,failed"}, api.JobsQuery{States: job.Inactive, Results: []job.Result{job.Completed, job.Failed}}},
		{[]string{"-f", "sched", "-f", "timeout"}, api.JobsQuery{States: job.Sched | job.Inactive, Results: []job.Result{job.Timeout}}},
		{[]string{"-f", "inactive,failed"}, api.JobsQuery{States: job.Inactive}},
		// Listed by ID, jobs show whatever their state.
		{[]string{"ƒ2UzHM"}, api.JobsQuery{States: job.All, IDs: []fluid.ID{1 << 24}}},
	}
	for _, tt := range tests {
		fc := &fakeClient{jobs: testJobs}
		if got := runFluxq(t, fc, "", append([]string{"jobs"}, tt.args...)...); got.Code != 0 {
			t.Fatalf("fluxq jobs %v: %+v", tt.args, got)
		}
		if diff := cmp.Diff([]api.JobsQuery{tt.want}, fc.queries); diff != "" {
			t.Errorf("fluxq jobs %v query (-want +got):\n%s", tt.args, diff)
		}
	}
}

// docs/cli.md: --json has at least these fields.
func TestJobsJSON(t *testing.T) {
	got := runFluxq(t, &fakeClient{jobs: testJobs}, "", "jobs", "-a", "--json")
	var doc struct {
		Jobs []map[string]any `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(got.Stdout), &doc); err != nil {
		t.Fatalf("%v: %s", err, got.Stdout)
	}
	if len(doc.Jobs) != len(testJobs) {
		t.Fatalf("%d jobs, want %d", len(doc.Jobs), len(testJobs))
	}
	always := []string{"id", "id_f58", "userid", "username", "queue", "name", "state", "urgency", "priority",
		"ntasks", "nnodes", "ncores", "ngpus", "duration", "t_submit", "t_run", "t_inactive", "nodelist",
		"annotations", "exception", "targets", "parent"}
	for _, j := range doc.Jobs {
		for _, k := range always {
			if _, ok := j[k]; !ok {
				t.Errorf("job %v has no %q", j["id_f58"], k)
			}
		}
	}
	failed := doc.Jobs[6]
	want := map[string]any{"id": 7.0 * (1 << 24), "id_f58": "ƒBNuyR", "username": "alice", "state": "INACTIVE", "result": "FAILED",
		"returncode": 1.0, "waitstatus": 256.0, "exception": map[string]any{"occurred": false}}
	for k, v := range want {
		if diff := cmp.Diff(v, failed[k]); diff != "" {
			t.Errorf("%s (-want +got):\n%s", k, diff)
		}
	}
	// The result only once inactive (docs/cli.md).
	if _, ok := doc.Jobs[0]["result"]; ok {
		t.Error("a pending job has a result")
	}
}

func TestContextualInfo(t *testing.T) {
	sched := func(a map[string]any) api.JobSummary {
		return api.JobSummary{State: job.Sched, Urgency: 16, Priority: 16, Annotations: map[string]any{"sched": a}}
	}
	tests := []struct {
		name string
		s    api.JobSummary
		want string
	}{
		{"priority", api.JobSummary{State: job.Priority}, "priority-wait"},
		{"depend", api.JobSummary{State: job.Depend, Dependencies: []string{"a", "b"}}, "depends:a,b"},
		{"eta", sched(map[string]any{"t_estimate": 1_700_000_000.0 + 300}), "eta:5m"},
		{"eta passed", sched(map[string]any{"t_estimate": 1_700_000_000.0 - 1}), "eta:now"},
		{"reason", sched(map[string]any{"reason_pending": "unsatisfiable"}), "unsatisfiable"},
		{"held", api.JobSummary{State: job.Sched, Urgency: 0, Priority: 0}, "held"},
		{"priority hold", api.JobSummary{State: job.Sched, Urgency: 5, Priority: 0}, "priority-hold"},
		{"nothing", api.JobSummary{State: job.Sched, Urgency: 16, Priority: 16}, ""},
		{"running", api.JobSummary{State: job.Run, Nodelist: "n[1-2]"}, "n[1-2]"},
		{"inactive", api.JobSummary{State: job.Inactive, Nodelist: "n1"}, "n1"},
	}
	for _, tt := range tests {
		if got := contextualInfo(&tt.s, testNow); got != tt.want {
			t.Errorf("%s: contextualInfo = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestJobEnd(t *testing.T) {
	tests := []struct {
		name           string
		s              api.JobSummary
		abbrev, reason string
		rc             int
		hasRC          bool
		exit           int
		failure        string
	}{
		{"completed", api.JobSummary{State: job.Inactive, Result: job.Completed, ReturnCode: intp(0), WaitStatus: intp(0)}, "CD", "Exit 0", 0, true, 0, ""},
		{"exit 3", api.JobSummary{State: job.Inactive, Result: job.Failed, ReturnCode: intp(3), WaitStatus: intp(3 << 8)}, "F", "Exit 3", 3, true, 3, "task(s) exited with exit code 3"},
		// Flux's returncode for tasks killed by signal N is its shell's
		// exit code, 128+N, as the exit code of fluxq run is (docs/cli.md).
		{"killed", api.JobSummary{State: job.Inactive, Result: job.Failed, ReturnCode: intp(137), WaitStatus: intp(9)}, "F", "Killed", 137, true, 137, "task(s) Killed"},
		{"interrupted", api.JobSummary{State: job.Inactive, Result: job.Failed, ReturnCode: intp(130), WaitStatus: intp(2)}, "F", "Interrupt", 130, true, 130, "task(s) Interrupt"},
		// A summary stored when the store's returncode was -N reads as
		// Flux's all the same: the listing works it out from the wait status.
		{"killed, stored before", api.JobSummary{State: job.Inactive, Result: job.Failed, ReturnCode: intp(-9), WaitStatus: intp(9)}, "F", "Killed", 137, true, 137, "task(s) Killed"},
		// flux jobs reads a returncode above 128 as a signal's, though the
		// task exited with it.
		{"exit 130", api.JobSummary{State: job.Inactive, Result: job.Failed, ReturnCode: intp(130), WaitStatus: intp(130 << 8)}, "F", "Interrupt", 130, true, 130, "task(s) Interrupt"},
		{"exit 128", api.JobSummary{State: job.Inactive, Result: job.Failed, ReturnCode: intp(128), WaitStatus: intp(128 << 8)}, "F", "Invalid argument to exit", 128, true, 128, "task(s) exited with exit code 128"},
		{"canceled running", api.JobSummary{State: job.Inactive, Result: job.Canceled, ReturnCode: intp(143), WaitStatus: intp(15), Exception: &api.Exception{Occurred: true, Type: "cancel"}}, "CA", "Canceled", 143, true, 143, "task(s) Terminated"},
		{"not found", api.JobSummary{State: job.Inactive, Result: job.Failed, ReturnCode: intp(127), WaitStatus: intp(127 << 8)}, "F", "command not found", 127, true, 127, "task(s) exited with exit code 127"},
		{"canceled pending", api.JobSummary{State: job.Inactive, Result: job.Canceled, ReturnCode: intp(-128), Exception: &api.Exception{Occurred: true, Type: "cancel"}}, "CA", "Canceled", -128, true, 1, "Fatal exception type=cancel"},
		{"denied", api.JobSummary{State: job.Inactive, Result: job.Failed, ReturnCode: intp(1), Exception: &api.Exception{Occurred: true, Type: "alloc", Note: "unsatisfiable request"}}, "F", "Exception: type=alloc note=unsatisfiable request", 1, true, 1, "Fatal exception type=alloc unsatisfiable request"},
		// The time limit sends SIGALRM, as flux-core's job-exec does.
		{"timeout", api.JobSummary{State: job.Inactive, Result: job.Timeout, ReturnCode: intp(142), WaitStatus: intp(14), Exception: &api.Exception{Occurred: true, Type: "timeout"}}, "TO", "Timeout", 142, true, 142, "task(s) Alarm clock"},
		// One stored when the time limit sent SIGTERM: what it was killed by.
		{"timeout, stored before", api.JobSummary{State: job.Inactive, Result: job.Timeout, ReturnCode: intp(-15), WaitStatus: intp(15), Exception: &api.Exception{Occurred: true, Type: "timeout"}}, "TO", "Timeout", 143, true, 143, "task(s) Terminated"},
		{"timeout, SIGALRM ignored", api.JobSummary{State: job.Inactive, Result: job.Timeout, ReturnCode: intp(137), WaitStatus: intp(9), Exception: &api.Exception{Occurred: true, Type: "timeout"}}, "TO", "Timeout", 137, true, 137, "task(s) Killed"},
		// Tasks that succeeded, output that could not be written: the job
		// FAILED, and run, wait and submit --wait exit 1 saying why.
		{"lost output", api.JobSummary{State: job.Inactive, Result: job.Failed, ReturnCode: intp(0), WaitStatus: intp(0), Exception: &api.Exception{Occurred: true, Type: "exec", Note: "error writing output file: no space left on device"}}, "F", "Exit 0", 0, true, 1, "Fatal exception type=exec error writing output file: no space left on device"},
		{"running", api.JobSummary{State: job.Run}, "R", "", 0, false, 0, ""},
		{"cleanup", api.JobSummary{State: job.Cleanup}, "C", "", 0, false, 0, ""},
		{"depend", api.JobSummary{State: job.Depend}, "D", "", 0, false, 0, ""},
	}
	for _, tt := range tests {
		s := &tt.s
		rc, ok := returnCode(s)
		got := []any{statusAbbrev(s), inactiveReason(s), rc, ok, exitCodeOf(s), failure(s)}
		want := []any{tt.abbrev, tt.reason, tt.rc, tt.hasRC, tt.exit, tt.failure}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: [abbrev reason returncode ok exit failure] (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestJobsErrors(t *testing.T) {
	tests := []struct {
		args []string
		want result
	}{
		{[]string{"jobs", "ƒ2UzHM", "ƒNoSuchJob"}, result{Stderr: "fluxq: jobs: ƒNoSuchJob: unknown job id\n", Code: 1}},
		{[]string{"jobs", "-f", "bogus"}, result{Stderr: "fluxq: jobs: --filter: invalid state or result \"bogus\"\nTry 'fluxq jobs --help' for more information.\n", Code: 2}},
		{[]string{"jobs", "-c", "x"}, result{Stderr: "fluxq: jobs: invalid value \"x\" for flag -c: parse error\nTry 'fluxq jobs --help' for more information.\n", Code: 2}},
	}
	for _, tt := range tests {
		got := runFluxq(t, &fakeClient{jobs: testJobs}, "", tt.args...)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("fluxq %v (-want +got):\n%s", tt.args, diff)
		}
	}
}

func TestStats(t *testing.T) {
	fc := &fakeClient{stats: api.JobCounts{States: map[string]int{"RUN": 2, "INACTIVE": 3}, Results: map[string]int{"COMPLETED": 2, "TIMEOUT": 1}, Total: 5}}
	got := runFluxq(t, fc, "", "stats")
	want := "depend      0\npriority    0\nsched       0\nrun         2\ncleanup     0\ninactive    3\n" +
		"  completed 2\n  failed    0\n  canceled  0\n  timeout   1\ntotal       5\n"
	if diff := cmp.Diff(result{Stdout: want}, got); diff != "" {
		t.Errorf("fluxq stats (-want +got):\n%s", diff)
	}
	got = runFluxq(t, fc, "", "stats", "--json")
	want = `{"states":{"INACTIVE":3,"RUN":2},"results":{"COMPLETED":2,"TIMEOUT":1},"total":5}` + "\n"
	if diff := cmp.Diff(result{Stdout: want}, got); diff != "" {
		t.Errorf("fluxq stats --json (-want +got):\n%s", diff)
	}
}

// TestJobsJSONAsEncodingJSON: the --json document of every kind of job
// is the bytes encoding/json made of it (output.WriteJSON encodes with
// another package, for speed).
func TestJobsJSONAsEncodingJSON(t *testing.T) {
	list := make([]api.JobSummary, len(testJobs))
	copy(list, testJobs)
	list[5].Usage = &execproto.Usage{UserCPU: 0.0005, SysCPU: 1.25, MaxRSS: 1 << 20}
	list[6].Command, list[6].Cwd = []string{"sh", "-c", "exit 1 <&>"}, "/tmp/a b"
	testJobsJSON(t, list)
	// Long enough to be written in chunks (output.WriteJSONList).
	var long []api.JobSummary
	for len(long) < 2*4096+3 {
		for _, j := range list {
			j.ID += fluid.ID(len(long) * 1000)
			long = append(long, j)
		}
	}
	testJobsJSON(t, long)
}

func testJobsJSON(t *testing.T, list []api.JobSummary) {
	t.Helper()
	fc := &fakeClient{jobs: list}
	got := runFluxq(t, fc, "", "jobs", "-a", "--json")
	e := &env{getenv: func(string) string { return "" }, users: map[uint32]string{1000: "alice", 1001: "bob"}}
	items := make([]*api.JobSummary, len(list))
	for i := range list {
		items[i] = &list[i]
	}
	var want strings.Builder
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e.jobsList(testNow, false).Doc(items)); err != nil {
		t.Fatal(err)
	}
	if got.Code != 0 || got.Stdout != want.String() {
		t.Errorf("%d jobs: jobs -a --json = %d %.300q\nencoding/json: %.300q", len(list), got.Code, got.Stdout, want.String())
	}
}
