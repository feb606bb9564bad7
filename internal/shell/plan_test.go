package shell

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/rset"
)

// envOf is a task's environment as a map.
func envOf(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// A plan lays the tasks out rank by rank and gives each its arguments and
// the environment flux-shell sets: the job's id, size and node count, the
// task's rank and local index, and the GPUs of its rank (-1 on a rank
// without any, per task with gpu-affinity=per-task).
func TestNewPlan(t *testing.T) {
	r := rset.New([]rset.Node{
		{Rank: 0, Hostname: "n0", Cores: idset.MustParse("0-1")},
		{Rank: 1, Hostname: "n1", Cores: idset.MustParse("0-1"), GPUs: idset.MustParse("0-1")},
	})
	id := fluid.ID(5002)
	type task struct {
		Rank, Local int
		Host        string
		GPUs        string
	}
	tests := []struct {
		name  string
		opts  jobspec.Options
		tasks []task
	}{
		{"-N2 -n4", jobspec.Options{Nodes: 2, NTasks: 4},
			[]task{{0, 0, "n0", "-1"}, {1, 1, "n0", "-1"}, {2, 0, "n1", "0,1"}, {3, 1, "n1", "0,1"}}},
		{"-N2 -n4, a GPU per task", jobspec.Options{Nodes: 2, NTasks: 4, Extra: map[string]any{"shell": map[string]any{"options": map[string]any{"gpu-affinity": "per-task"}}}},
			[]task{{0, 0, "n0", "-1"}, {1, 1, "n0", "-1"}, {2, 0, "n1", "0"}, {3, 1, "n1", "1"}}},
		{"-N2 -n4, gpu-affinity off", jobspec.Options{Nodes: 2, NTasks: 4, Extra: map[string]any{"shell": map[string]any{"options": map[string]any{"gpu-affinity": "off"}}}},
			[]task{{0, 0, "n0", ""}, {1, 1, "n0", ""}, {2, 0, "n1", ""}, {3, 1, "n1", ""}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Command = []string{"hostname", "-s"}
			tc.opts.Cwd = "/work"
			tc.opts.Environment = map[string]string{"PATH": "/opt/bin", "FLUXQ_F58_FORCE_ASCII": "1"}
			js, err := jobspec.FromOptions(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			p, err := NewPlan(id, js, r)
			if err != nil {
				t.Fatal(err)
			}
			var got []task
			for _, pt := range p.Tasks {
				env := envOf(pt.Env)
				got = append(got, task{pt.Rank, pt.Local, pt.Node.Hostname, env["CUDA_VISIBLE_DEVICES"]})
				if !slices.Equal(pt.Argv, []string{"hostname", "-s"}) {
					t.Errorf("task %d: argv %q", pt.Rank, pt.Argv)
				}
				want := map[string]string{"FLUXQ_JOB_ID": "f" + strings.TrimPrefix(id.String(), "ƒ"), "FLUXQ_JOB_NNODES": "2", "FLUXQ_JOB_SIZE": "4",
					"FLUXQ_TASK_RANK": itoa(pt.Rank), "FLUXQ_TASK_LOCAL_ID": itoa(pt.Local), "PATH": "/opt/bin",
					"FLUX_JOB_NNODES": "2", "FLUX_JOB_SIZE": "4", "FLUX_TASK_RANK": itoa(pt.Rank), "FLUX_TASK_LOCAL_ID": itoa(pt.Local)}
				for k, v := range want {
					if env[k] != v {
						t.Errorf("task %d: %s=%q, want %q", pt.Rank, k, env[k], v)
					}
				}
			}
			if diff := cmp.Diff(tc.tasks, got); diff != "" {
				t.Errorf("tasks (-want +got):\n%s", diff)
			}
			if p.Cwd() != "/work" || p.PathEnv() != "/opt/bin" || p.Command() != "hostname" {
				t.Errorf("cwd %q, PATH %q, command %q", p.Cwd(), p.PathEnv(), p.Command())
			}
		})
	}
}

func itoa(n int) string { return string(rune('0' + n)) }

// A plan binds each task to its rank's cores (all of them, or its share
// with cpu-affinity=per-task) where this process may run on them; off
// binds nothing.
func TestNewPlanCPUs(t *testing.T) {
	var allowed unix.CPUSet
	if err := unix.SchedGetaffinity(0, &allowed); err != nil || !allowed.IsSet(0) || !allowed.IsSet(1) {
		t.Skip("needs CPUs 0 and 1 in this process's affinity")
	}
	r := rset.New([]rset.Node{{Rank: 0, Hostname: "n0", Cores: idset.MustParse("0-1")}})
	for _, tc := range []struct {
		mode string
		want [][]int // each task's CPUs; nil: not bound
	}{
		{"", [][]int{{0, 1}, {0, 1}}},
		{"per-task", [][]int{{0}, {1}}},
		{"off", [][]int{nil, nil}},
	} {
		opts := jobspec.Options{NTasks: 2, Command: []string{"true"}}
		if tc.mode != "" {
			opts.Extra = map[string]any{"shell": map[string]any{"options": map[string]any{"cpu-affinity": tc.mode}}}
		}
		js, err := jobspec.FromOptions(opts)
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewPlan(1, js, r)
		if err != nil {
			t.Fatal(err)
		}
		var got [][]int
		for _, pt := range p.Tasks {
			var cpus []int
			if pt.CPUs != nil {
				cpus = []int{}
				for c := 0; c < 2; c++ {
					if pt.CPUs.IsSet(c) {
						cpus = append(cpus, c)
					}
				}
			}
			got = append(got, cpus)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("cpu-affinity %q (-want +got):\n%s", tc.mode, diff)
		}
	}
}

// A plan over an R with nothing in it is refused with the job's fatal
// error.
func TestNewPlanRefused(t *testing.T) {
	js, err := jobspec.FromOptions(jobspec.Options{NTasks: 2, Command: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := NewPlan(1, js, rset.New(nil)); err == nil || err.Error() != "R holds no resources" {
		t.Errorf("a plan over an empty R: %+v, %v", p, err)
	}
}

// Output paths: the job folder's files by default; a path template of
// the shell options, relative to the tasks' working directory, stderr
// following stdout unless it has its own; type kvs is the default; mode
// append.
func TestPlanOutputs(t *testing.T) {
	r := rset.New([]rset.Node{{Rank: 0, Hostname: "n0", Cores: idset.MustParse("0-1")}})
	tests := []struct {
		name       string
		output     map[string]any
		wantAppend bool
		want       [][2]string
	}{
		{"default", nil, false, [][2]string{{"/f/stdout", "/f/stderr"}, {"/f/stdout", "/f/stderr"}}},
		{"per task, relative", map[string]any{"stdout": map[string]any{"path": "out.{{taskid}}"}}, false,
			[][2]string{{"/w/out.0", "/w/out.0"}, {"/w/out.1", "/w/out.1"}}},
		{"own stderr, append", map[string]any{"mode": "append", "stdout": map[string]any{"path": "/o/{{name}}.out"}, "stderr": map[string]any{"path": "/o/{{name}}.err"}}, true,
			[][2]string{{"/o/true.out", "/o/true.err"}, {"/o/true.out", "/o/true.err"}}},
		{"kvs", map[string]any{"stdout": map[string]any{"type": "kvs"}, "stderr": map[string]any{"path": "e"}}, false,
			[][2]string{{"/f/stdout", "/w/e"}, {"/f/stdout", "/w/e"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := jobspec.Options{NTasks: 2, Command: []string{"true"}}
			if tc.output != nil {
				opts.Extra = map[string]any{"shell": map[string]any{"options": map[string]any{"output": tc.output}}}
			}
			js, err := jobspec.FromOptions(opts)
			if err != nil {
				t.Fatal(err)
			}
			p, err := NewPlan(1, js, r)
			if err != nil {
				t.Fatal(err)
			}
			p.Outputs("/f", "/w")
			var got [][2]string
			for _, pt := range p.Tasks {
				got = append(got, [2]string{pt.Stdout, pt.Stderr})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" || p.AppendMode != tc.wantAppend {
				t.Errorf("append %v (want %v); paths (-want +got):\n%s", p.AppendMode, tc.wantAppend, diff)
			}
		})
	}
}

// A working directory that is missing or not a directory falls back to
// /tmp, with the reason; an empty one stays empty.
func TestCheckCwd(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		cwd, want string
		wantErr   error
	}{
		{"", "", nil},
		{dir, dir, nil},
		{filepath.Join(dir, "nosuch"), "/tmp", os.ErrNotExist},
		{file, "/tmp", unix.ENOTDIR},
	}
	for _, tc := range tests {
		got, err := CheckCwd(tc.cwd)
		if got != tc.want || !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
			t.Errorf("CheckCwd(%q) = %q, %v; want %q, %v", tc.cwd, got, err, tc.want, tc.wantErr)
		}
	}
}

// The job's messages, in flux-shell's words.
func TestMessages(t *testing.T) {
	rk := &RankTasks{Hostname: "node3"}
	tests := []struct{ got, want string }{
		{Host(rk, "here"), "node3"},
		{Host(nil, "here"), "here"},
		{Host(&RankTasks{}, "here"), "here"},
		{LogLine(2, "error", "boom"), "fluxq-shell[2]: error: boom\n"},
		{LogLine(0, "warn", "w"), "fluxq-shell[0]:  warn: w\n"},
		{StartFailedMessage(1, "node3", "nosuch", unix.ENOENT), "task 1 (host node3): start failed: nosuch: No such file or directory"},
		{BadCwdMessage("node3", "/gone", unix.ENOENT), "host node3: Could not change dir to /gone: No such file or directory. Going to /tmp instead"},
		{OutputOpenError(unix.EACCES).Error(), "error opening output file: permission denied"},
		{OutputWriteError(unix.ENOSPC).Error(), "error writing output file: no space left on device"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
	for err, want := range map[error]int{unix.ENOENT: 127, unix.EACCES: 126, unix.EPERM: 126, unix.ENOEXEC: 1} {
		if got := StartExitCode(err); got != want {
			t.Errorf("StartExitCode(%v) = %d, want %d", err, got, want)
		}
	}
	if p, err := LookPath("sh", "/nonexistent:/bin", "/"); err != nil || p != "/bin/sh" {
		t.Errorf("LookPath(sh) = %q, %v; want /bin/sh", p, err)
	}
}

// A rank of R on which the layout puts no task (two slots of one core on
// two ranks, one task) keeps a plan of no task, as flux-shell runs on such
// a rank with none: it is not an error.
func TestPlanKeepNoTask(t *testing.T) {
	r := rset.New([]rset.Node{
		{Rank: 0, Hostname: "n0", Cores: idset.MustParse("0")},
		{Rank: 1, Hostname: "n1", Cores: idset.MustParse("0")},
	})
	js, err := jobspec.Parse([]byte(`{"version":1,"resources":[{"type":"slot","count":2,"label":"task",` +
		`"with":[{"type":"core","count":1}]}],"tasks":[{"command":["true"],"slot":"task","count":{"total":1}}],` +
		`"attributes":{"system":{"duration":0}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ranks string
		want  []int
	}{{"0", []int{0}}, {"1", nil}, {"0-1", []int{0}}} {
		p, err := NewPlan(1, js, r)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Keep(tc.ranks); err != nil {
			t.Fatalf("Keep(%q): %v", tc.ranks, err)
		}
		var got []int
		for _, pt := range p.Tasks {
			got = append(got, pt.Rank)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Keep(%q) kept ranks %v, want %v", tc.ranks, got, tc.want)
		}
	}
}

// Keep narrows a -N2 -n4 plan to one host's rank: its tasks keep their
// global ranks and the job's node and task counts.
func TestPlanKeep(t *testing.T) {
	r := rset.New([]rset.Node{
		{Rank: 0, Hostname: "n0", Cores: idset.MustParse("0-1")},
		{Rank: 1, Hostname: "n1", Cores: idset.MustParse("0-1")},
	})
	js, err := jobspec.FromOptions(jobspec.Options{Nodes: 2, NTasks: 4, Command: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		ranks   string
		want    []int // global ranks of the tasks kept
		wantErr string
	}{
		{"1", []int{2, 3}, ""},
		{"0", []int{0, 1}, ""},
		{"0-1", []int{0, 1, 2, 3}, ""},
		{"7", nil, "ranks 7 are not in R (0-1)"},
		{"1-2", nil, "ranks 2 are not in R (0-1)"},
		{"x", nil, `ranks "x": `},
	}
	for _, tc := range tests {
		p, err := NewPlan(1, js, r)
		if err != nil {
			t.Fatal(err)
		}
		err = p.Keep(tc.ranks)
		if tc.wantErr != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
				t.Errorf("Keep(%q) = %v, want %q", tc.ranks, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("Keep(%q): %v", tc.ranks, err)
		}
		p.Outputs(t.TempDir(), "")
		var got []int
		for _, pt := range p.Tasks {
			got = append(got, pt.Rank)
			env := envOf(pt.Env)
			if env["FLUXQ_TASK_RANK"] != itoa(pt.Rank) || env["FLUXQ_JOB_NNODES"] != "2" || env["FLUXQ_JOB_SIZE"] != "4" {
				t.Errorf("Keep(%q): task %d env %v", tc.ranks, pt.Rank, env)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Keep(%q) kept ranks %v, want %v", tc.ranks, got, tc.want)
		}
	}
}
