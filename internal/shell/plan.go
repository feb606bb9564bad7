package shell

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/rset"
)

// A Plan is what a job's tasks are started with, worked out before any
// starts: the layout over R's ranks, each task's arguments, environment
// and CPU binding, and its output paths. The exec agent's runner
// (internal/runner) starts the tasks from it.
type Plan struct {
	ID      fluid.ID
	Jobspec *jobspec.Jobspec
	Ranks   []RankTasks
	Tasks   []PlanTask
	// AppendMode is output.mode "append": output files are appended to,
	// not truncated.
	AppendMode bool

	data  tmplData
	tasks []*task
}

// PlanTask is one task of a Plan.
type PlanTask struct {
	Rank, Local int // global rank, and index on its node
	Node        *RankTasks
	Argv, Env   []string
	CPUs        *unix.CPUSet // nil: not bound
	// Stdout and Stderr are the output paths, set by Plan.Outputs.
	Stdout, Stderr string
}

// NewPlan lays the job out and gives each task its arguments, environment
// and CPU binding. An error is the message of the job's fatal error (an R
// the tasks do not fit, too many GPUs on a rank).
func NewPlan(id fluid.ID, js *jobspec.Jobspec, r *rset.R) (*Plan, error) {
	ranks, err := Layout(js, r)
	if err != nil {
		return nil, err
	}
	sys := &js.Attributes.System
	_, ascii := sys.Environment["FLUXQ_F58_FORCE_ASCII"]
	ntasks := 0
	for _, rk := range ranks {
		ntasks += rk.NTasks
	}
	p := &Plan{ID: id, Jobspec: js, Ranks: ranks,
		data: tmplData{id: id, ascii: ascii, name: jobName(sys.Job.Name, js.Tasks[0].Command),
			nnodes: len(ranks), ntasks: ntasks}}
	p.tasks = make([]*task, 0, ntasks)
	for i := range ranks {
		rk := &p.Ranks[i]
		for l := 0; l < rk.NTasks; l++ {
			p.tasks = append(p.tasks, &task{id: taskID{rank: rk.Basis + l, local: l}, node: rk})
		}
	}
	if err := prepare(p.tasks, js, sys.Environment, sys.Shell.Options, p.data); err != nil {
		return nil, err
	}
	p.Tasks = make([]PlanTask, len(p.tasks))
	for i, t := range p.tasks {
		p.Tasks[i] = PlanTask{Rank: t.id.rank, Local: t.id.local, Node: t.node, Argv: t.argv, Env: t.env, CPUs: t.cpus}
	}
	return p, nil
}

// Cwd is the working directory the jobspec asks for; "" means the
// starter's own.
func (p *Plan) Cwd() string { return p.Jobspec.Attributes.System.Cwd }

// PathEnv is the PATH the command is looked up in.
func (p *Plan) PathEnv() string { return pathOf(p.Jobspec.Attributes.System.Environment) }

// Command is the tasks' command, as the jobspec names it.
func (p *Plan) Command() string { return p.Jobspec.Tasks[0].Command[0] }

// Outputs sets each task's output paths for the job folder dir, relative
// paths being relative to cwd (the working directory the tasks get).
func (p *Plan) Outputs(dir, cwd string) {
	var paths [][2]string
	p.AppendMode, paths = outputPaths(dir, p.tasks, p.Jobspec.Attributes.System.Shell.Options, p.data, cwd)
	for i := range p.Tasks {
		p.Tasks[i].Stdout, p.Tasks[i].Stderr = paths[i][0], paths[i][1]
	}
}

// CheckCwd returns the directory tasks run in for the requested cwd: cwd
// itself, or /tmp with the reason when cwd is not a directory, as
// flux-shell falls back. "" stays "".
func CheckCwd(cwd string) (string, error) {
	if cwd == "" {
		return "", nil
	}
	fi, err := os.Stat(cwd)
	if err == nil && !fi.IsDir() {
		err = unix.ENOTDIR
	}
	if err != nil {
		return fallbackCwd, err
	}
	return cwd, nil
}

// Host names the machine of a rank in messages: its name in R, else
// hostname.
func Host(rk *RankTasks, hostname string) string {
	if rk != nil && rk.Hostname != "" {
		return rk.Hostname
	}
	return hostname
}

// LogLine is one message in flux-shell's form, "NAME[N]: LEVEL: message",
// with its newline.
func LogLine(node int, level, msg string) string {
	return fmt.Sprintf("%s[%d]: %5s: %s\n", Name, node, level, msg)
}

// StartFailedMessage says that a task could not start, as flux-shell does.
func StartFailedMessage(rank int, host, command string, err error) string {
	return fmt.Sprintf(msgStartFailed, rank, host, command, strerror(err))
}

// BadCwdMessage says that tasks run in /tmp instead of cwd.
func BadCwdMessage(host, cwd string, err error) string {
	return fmt.Sprintf(msgBadCwd, host, cwd, strerror(err))
}

// OutputOpenError is the fatal error of an output file that cannot be
// opened.
func OutputOpenError(err error) error { return fmt.Errorf(msgOutput, err) }

// OutputWriteError is the fatal error of output that could not be written.
func OutputWriteError(err error) error { return fmt.Errorf(msgOutputWrite, err) }

// LookPath finds file in pathEnv as execvp does, relative entries being
// relative to cwd.
func LookPath(file, pathEnv, cwd string) (string, error) { return lookPath(file, pathEnv, cwd) }

// StartExitCode is the exit status of a job whose task could not start:
// 126 for a permission error, 127 for a missing file, else 1.
func StartExitCode(err error) int { return startExitCode(err) }

// Keep narrows the plan to the tasks of the ranks of R named by ranks (an
// idset): the part of a job one host's agent runs when the job spans
// several. The layout was made over the whole R first, so each task keeps
// its global rank and environment (FLUXQ_TASK_RANK, FLUXQ_JOB_NNODES...)
// as every other host computes them. Ranks of R on which the layout puts
// no task leave a plan of no task: as flux-shell on a rank with no task,
// the part starts nothing and ends at once, with status 0. An error is a
// ranks that does not parse, or names a rank that R does not hold.
func (p *Plan) Keep(ranks string) error {
	set, err := idset.Parse(ranks)
	if err != nil {
		return fmt.Errorf("ranks %q: %w", ranks, err)
	}
	rs := make([]uint, len(p.Ranks))
	for i, rk := range p.Ranks {
		rs[i] = rk.Rank
	}
	held := idset.Of(rs...)
	if extra := set.Difference(held); !extra.IsEmpty() {
		return fmt.Errorf("ranks %s are not in R (%s)", extra, held)
	}
	var tasks []*task
	var planTasks []PlanTask
	for i, t := range p.tasks {
		if set.Contains(t.node.Rank) {
			tasks = append(tasks, t)
			planTasks = append(planTasks, p.Tasks[i])
		}
	}
	p.tasks, p.Tasks = tasks, planTasks
	return nil
}
