package fluxq

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/cli/instance"
	"github.com/fluxq/fluxq/internal/cli/progress"
	"github.com/fluxq/fluxq/internal/client"
	"github.com/fluxq/fluxq/internal/constraint"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/fsd"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/shell"
	"github.com/fluxq/fluxq/internal/state"
)

// Names of the variables fluxq sets in a job's environment.
const (
	// EnvJobCC is set to the copy's id in each job of a --cc submission.
	EnvJobCC = "FLUXQ_JOB_CC"
)

// ccTag is what --cc replaces in the command and in the options Flux
// replaces it in (its bulksubmit "mutable" options).
const ccTag = "{cc}"

// ccMustache is {cc} as an output path's mustache tag ({{id}}, {{name}}).
const ccMustache = "{{cc}}"

// maxCopies bounds a --cc or --bcc IDSET: each copy is a whole jobspec.
const maxCopies = 1_000_000

// Output values flux submit treats as "the default place" (not a path).
var outputDefaults = map[string]bool{"none": true, "kvs": true}

// listValue is a repeatable string option that keeps its values whole:
// urfave/cli's StringSlice would split "host:node[1,2]" at the comma.
type listValue struct{ list *[]string }

func (l listValue) Set(v string) error { *l.list = append(*l.list, v); return nil }
func (l listValue) String() string     { return "" }

// aliasList is a listValue for a flag with an alias (-o, --setopt). Once
// parsing ends, urfave/cli copies a flag's value to its unused names
// through String and Set: the copy is aliasCopy, which no argument can
// be (none holds a NUL), and is not taken for one more entry.
type aliasList struct{ list *[]string }

const aliasCopy = "\x00"

func (l aliasList) Set(v string) error {
	if v != aliasCopy {
		*l.list = append(*l.list, v)
	}
	return nil
}
func (l aliasList) String() string { return aliasCopy }

// submitState holds the options urfave/cli cannot keep in order or whole.
type submitState struct {
	envRules     []string
	requires     []string
	dependencies []string
	setopts      []string // -o, --setopt KEY[=VAL], in order
	// command, when set, is the job's command instead of the arguments
	// (fluxq alloc's job is its sub-instance); oneTask asks for the
	// resources of the options with one task per node (its broker).
	command []string
	oneTask bool
}

// Flag names of submit and run, where they are read more than once.
const (
	flagNTasks    = "ntasks"
	flagCores     = "cores-per-task"
	flagGPUs      = "gpus-per-task"
	flagMem       = "mem"
	flagMemPerCPU = "mem-per-cpu"
	flagNodes     = "nodes"
	flagExclusive = "exclusive"
	flagTime      = "time-limit"
	flagQueue     = "queue"
	flagUrgency   = "urgency"
	flagJobName   = "job-name"
	flagCwd       = "cwd"
	flagEnv       = "env"
	flagEnvRemove = "env-remove"
	flagEnvFile   = "env-file"
	flagRequires  = "requires"
	flagDepend    = "dependency"
	flagBegin     = "begin-time"
	flagCC        = "cc"
	flagBCC       = "bcc"
	flagOutput    = "output"
	flagError     = "error"
	flagInput     = "input"
	flagDryRun    = "dry-run"
	flagWait      = "wait"
	flagQuiet     = "quiet"
	flagJobspec   = "jobspec"
	flagTarget    = "target"
	flagSetopt    = "setopt"
	flagRetry     = "retry"
)

// jobFlags are the options that shape a job; --jobspec takes none of them.
var jobFlags = []string{flagNTasks, flagCores, flagGPUs, flagMem, flagMemPerCPU, flagNodes, flagExclusive, flagTime, flagQueue,
	flagJobName, flagCwd, flagEnv, flagEnvRemove, flagEnvFile, flagRequires, flagDepend, flagBegin,
	flagOutput, flagError, flagInput, flagTarget, flagSetopt, flagRetry}

// flags are submit's options (docs/cli.md's table); bulk adds those of a
// submission of many jobs (--cc, --bcc, --wait, --quiet, --jobspec).
func (st *submitState) flags(bulk bool) []cli.Flag {
	fs := []cli.Flag{
		&cli.IntFlag{Name: flagNTasks, Aliases: []string{"n"}, Usage: "`N` tasks", DefaultText: "1, or one per node with -N"},
		&cli.IntFlag{Name: flagCores, Aliases: []string{"c"}, Usage: "`N` cores per task", DefaultText: "1"},
		&cli.IntFlag{Name: flagGPUs, Aliases: []string{"g"}, Usage: "`N` GPUs per task"},
		&cli.StringFlag{Name: flagMem, Usage: "memory per task slot, a `SIZE`: 512M, 4G, 1.5T; a bare number means megabytes", DefaultText: "the queue's default, else none asked"},
		&cli.StringFlag{Name: flagMemPerCPU, Usage: "memory per core, a `SIZE` (Slurm's): the slot gets SIZE x --cores-per-task", DefaultText: "none"},
		&cli.IntFlag{Name: flagNodes, Aliases: []string{"N"}, Usage: "`N` nodes", DefaultText: "as the scheduler places the tasks"},
		&cli.BoolFlag{Name: flagExclusive, Aliases: []string{"x"}, Usage: "with -N, whole nodes (implied by -N without -n)", DisableDefaultText: true},
		&cli.StringFlag{Name: flagTime, Aliases: []string{"t"}, Usage: "time limit, an `FSD`: e.g. 30s, 1.5h; a bare number means minutes", DefaultText: "the queue's default, else none"},
		&cli.StringFlag{Name: flagQueue, Aliases: []string{"q"}, Usage: "queue `NAME`", DefaultText: "the configured default"},
		&cli.StringFlag{Name: flagUrgency, Value: "default", Usage: "urgency `N`: 0-31, hold (0), default (16) or expedite (31); above 16 for the instance owner only", DefaultText: "16"},
		&cli.StringFlag{Name: flagJobName, Usage: "the job's `NAME`", DefaultText: "the command's base name"},
		&cli.StringFlag{Name: flagCwd, Usage: "working directory `DIR`", DefaultText: "the current directory"},
		&cli.GenericFlag{Name: flagEnv, Value: envRules{rules: &st.envRules}, Usage: "environment `RULE`: VAR=VAL, PATTERN to copy, -PATTERN to remove, ^FILE (repeatable)", DefaultText: "the submitter's whole environment"},
		&cli.GenericFlag{Name: flagEnvRemove, Value: envRules{rules: &st.envRules, prefix: "-"}, Usage: "remove the variables matching `PATTERN` (glob, or /regex/) (repeatable)", DefaultText: "none"},
		&cli.GenericFlag{Name: flagEnvFile, Value: envRules{rules: &st.envRules, prefix: "^"}, Usage: "read environment rules from `FILE` (repeatable)", DefaultText: "none"},
		&cli.GenericFlag{Name: flagRequires, Value: listValue{&st.requires}, Usage: "constraint `EXPR`: gpu,ssd ^debug host:node[1-2] rank:0-3 'a or b' (repeatable: and; see 'help constraints')", DefaultText: "any node"},
		&cli.GenericFlag{Name: flagDepend, Value: listValue{&st.dependencies}, Usage: "dependency `URI`: afterok:ID, afterany:ID, afternotok:ID, afterstart:ID (repeatable)", DefaultText: "none"},
		&cli.StringFlag{Name: flagBegin, Usage: "do not start before `WHEN`: +FSD from now (+30m, +2h), or a time (2006-01-02T15:04:05, 15:04)", DefaultText: "now"},
		&cli.StringFlag{Name: flagOutput, Usage: "write stdout to `FILE` ({{id}} expands)", DefaultText: "the job's folder, read with fluxq attach or output"},
		&cli.StringFlag{Name: flagError, Usage: "write stderr to `FILE` ({{id}} expands)", DefaultText: "where stdout goes"},
		&cli.GenericFlag{Name: flagSetopt, Aliases: []string{"o"}, Value: aliasList{&st.setopts}, Usage: "set shell option `OPT`, KEY[=VAL] (repeatable; dots nest keys; VAL is JSON or a string, 1 when left out), e.g. output.limit=1M", DefaultText: "none"},
		&cli.StringFlag{Name: flagInput, Usage: "read stdin from `FILE`, each task from its start (relative to the job's working directory)", DefaultText: "none; run forwards its own stdin"},
		&cli.BoolFlag{Name: flagDryRun, Usage: "print the jobspec JSON and submit nothing", DisableDefaultText: true},
		&cli.StringFlag{Name: flagTarget, Usage: "run only on the nodes of these reservations, `ID[,ID...]`; default names the default session", DefaultText: "the default session"},
		&cli.StringFlag{Name: flagRetry, Usage: fmt.Sprintf("run the job again, as a new job, up to `N` times (0-%d) while it ends FAILED (see 'fluxq help submit')", jobspec.MaxRetry), DefaultText: "0, never"},
		&cli.BoolFlag{Name: instance.FlagAsScheduler, Usage: "submit as the scheduler, which may target any reservation (instance owner only)", DisableDefaultText: true},
	}
	if bulk {
		fs = append(fs,
			&cli.StringFlag{Name: flagCC, Usage: "submit one copy per id of `IDSET` (1-8, 0,4,7); {cc} in the command is the id, " + EnvJobCC + " is set", DefaultText: "one job"},
			&cli.StringFlag{Name: flagBCC, Usage: "like --cc `IDSET`, without " + EnvJobCC, DefaultText: "one job"},
			&cli.BoolFlag{Name: flagWait, Usage: "wait for the jobs to end; exit with the highest exit code", DisableDefaultText: true},
			&cli.BoolFlag{Name: flagQuiet, Usage: "print no job IDs", DisableDefaultText: true},
			&cli.StringFlag{Name: flagJobspec, Usage: "submit the jobspec V1 in `FILE` (JSON or YAML; - is stdin) as is", DefaultText: "one built from the options"},
		)
	}
	return fs
}

func (e *env) submitCommand() *cli.Command {
	st := &submitState{}
	return &cli.Command{
		Name:      "submit",
		Usage:     "submit a job; print its ID",
		ArgsUsage: "COMMAND [ARGS...]",
		Description: `Queues a job and prints its ID; the job runs when fluxsched finds it
resources (fluxq jobs shows it meanwhile). Use run instead to wait for the
job and see its output here.

Options go before COMMAND: everything from COMMAND on (or after --) is
the job's. The job gets the submitter's environment unless --env rules
say otherwise. A rejected submission prints why, stores nothing and exits
1. 'fluxq help jobspec' shows what the options ask for; 'fluxq help
durations' and 'fluxq help constraints' explain -t and --requires.

EXAMPLES:
  # Four tasks of two cores each, for at most ten minutes
  $ fluxq submit -n 4 -c 2 -t 10m ./sim input.dat

  # One job per input file: {cc} becomes 1, 2, ... 8
  $ fluxq submit --cc 1-8 ./sim input{cc}.dat

  # A GPU job in the debug queue, once job ƒNH has succeeded
  $ fluxq submit -q debug -g 1 --dependency afterok:ƒNH ./train

  # Show the jobspec instead of submitting it
  $ fluxq submit --dry-run -N 2 hostname`,
		Flags:  st.flags(true),
		Action: action(func(c *cli.Context) error { return e.submit(c, st) }),
	}
}

// send builds the submission from the command line and submits it; with
// --dry-run it prints the jobspecs instead and returns a nil client.
func (e *env) send(c *cli.Context, st *submitState) (client.Client, []fluid.ID, error) {
	jobs, err := e.submission(c, st)
	if err != nil {
		return nil, nil, err
	}
	if c.Bool(flagDryRun) {
		return nil, nil, printSpecs(stdout(c), jobs)
	}
	return e.sendJobs(c, jobs, false)
}

// sendJobs submits jobs in one request, all or none; eager shows the
// progress line from the start (bulksubmit --progress).
func (e *env) sendJobs(c *cli.Context, jobs []api.SubmitJob, eager bool) (client.Client, []fluid.ID, error) {
	pl := submitLine(c, len(jobs), eager)
	cl, err := e.connect(c)
	if err != nil {
		pl.Done()
		return nil, nil, err
	}
	ids, err := cl.Submit(c.Context, jobs)
	pl.Done()
	if err != nil {
		cl.Close()
		return nil, nil, err
	}
	return cl, ids, nil
}

// bigSubmission is how many jobs make a submission worth a progress line
// from the start; a smaller one shows it only once it has taken a second
// (a busy store, a slow instance).
const bigSubmission = 100

// submitLine shows a submission while the instance stores it, on a
// terminal only: "| submitting 10,000 jobs, 2s". The jobs are stored all
// or none in one request, so there is no count of those stored so far:
// a spinner and the time taken say it is alive.
func submitLine(c *cli.Context, n int, eager bool) *progress.Line {
	delay := time.Second
	if n >= bigSubmission || eager {
		delay = 0
	}
	l := progress.New(stderr(c), progress.WithDelay(delay))
	if !l.Enabled() {
		return nil
	}
	unit := "jobs"
	if n == 1 {
		unit = "job"
	}
	start, frame := time.Now(), 0
	l.Tick(func() string {
		frame++
		return fmt.Sprintf("%s submitting %s %s, %s", progress.Spinner(frame-1), progress.Thousands(n), unit,
			progress.Duration(time.Since(start).Truncate(time.Second)))
	})
	return l
}

func (e *env) submit(c *cli.Context, st *submitState) error {
	cl, ids, err := e.send(c, st)
	if err != nil || cl == nil {
		return err
	}
	defer cl.Close()
	return e.submitted(c, cl, ids)
}

// submitted reports the jobs just stored, as submit and bulksubmit do:
// their IDs unless --quiet, and with --wait their ends, exiting with the
// highest exit code.
func (e *env) submitted(c *cli.Context, cl client.Client, ids []fluid.ID) error {
	if !c.Bool(flagQuiet) {
		w := bufio.NewWriterSize(stdout(c), 64<<10)
		for _, id := range ids {
			w.WriteString(e.fmtID(id))
			w.WriteByte('\n')
		}
		if err := w.Flush(); err != nil {
			return err
		}
		noteSubmitUnserved(c, cl, len(ids))
	}
	if !c.Bool(flagWait) {
		return nil
	}
	worst := 0
	var done []fluid.ID
	pl := newJobsLine(c, len(ids))
	defer pl.done()
	var err error
	// A --retry job's chain ends with its last run: the runs retried
	// are waited for again as their retries, in rounds.
	for wave := ids; len(wave) > 0 && err == nil; {
		var next []fluid.ID
		_, err = client.Call(c.Context, cl, api.WaitAll, api.IDsParams{IDs: wave}, func(s api.JobSummary) error {
			done = append(done, s.ID)
			if r := s.RetriedAs; r != nil {
				pl.note(c, "%s: retrying as %s (retry %d of %d)", e.fmtID(s.ID), e.fmtID(*r), s.Retry+1, s.Retries)
				next = append(next, *r)
				return nil
			}
			msg := failure(&s)
			if msg != "" && !tasksSaid(&s) {
				pl.note(c, "%s: %s", e.fmtID(s.ID), msg)
			}
			pl.add(msg != "")
			worst = max(worst, exitCodeOf(&s))
			return nil
		})
		wave = next
	}
	// Reported here, so no later wait --all reports them again.
	reap(c, cl, done)
	if err != nil {
		return err
	}
	return e.exitWith(worst, nil)
}

// printSpecs writes each jobspec on a line of its own: --dry-run.
func printSpecs(w io.Writer, jobs []api.SubmitJob) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	for _, j := range jobs {
		bw.Write(j.Jobspec)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// submission builds the jobs the command line asks for: one, or one per
// --cc/--bcc id.
func (e *env) submission(c *cli.Context, st *submitState) ([]api.SubmitJob, error) {
	copies, setCC, err := ccCopies(cliOptions{c})
	if err != nil {
		return nil, err
	}
	if path := c.String(flagJobspec); path != "" {
		return e.jobspecSubmission(c, path, copies, setCC)
	}
	return e.jobsFrom(cliOptions{c}, c.Args().Slice(), st, copies, setCC)
}

// jobOptions is where a submission's options are read: the command line
// (submit, run), or the command line with one input combination's fields
// replaced (bulksubmit, whose counts are strings until then).
type jobOptions interface {
	String(name string) string
	IsSet(name string) bool
	Bool(name string) bool
	Int(name string) (int, error)
}

// cliOptions reads the options as urfave/cli parsed them.
type cliOptions struct{ *cli.Context }

func (o cliOptions) Int(name string) (int, error) { return o.Context.Int(name), nil }

// jobsFrom builds the jobs of one command line: one, or one per --cc or
// --bcc copy (copies, nil for none). It is the one home of a jobspec built
// from options, for submit, run and every job of bulksubmit.
func (e *env) jobsFrom(o jobOptions, cmd []string, st *submitState, copies []string, setCC bool) ([]api.SubmitJob, error) {
	in, err := e.inputs(o, cmd, st)
	if err != nil {
		return nil, err
	}
	if copies == nil {
		j, err := in.build(e, "", false, false)
		if err != nil {
			return nil, err
		}
		return []api.SubmitJob{j}, nil
	}
	if in.ccShapesJob() {
		// {cc} changes what is parsed (a time limit, constraints...):
		// every copy is built on its own.
		jobs := make([]api.SubmitJob, len(copies))
		for i, cc := range copies {
			if jobs[i], err = in.build(e, cc, true, setCC); err != nil {
				return nil, fmt.Errorf("cc=%s: %w", cc, err)
			}
		}
		return jobs, nil
	}
	// {cc} only lands in strings: build one jobspec with a marker for the
	// id and copy it, which keeps `--cc 1-10000` to one build.
	marker, err := newMarker(in)
	if err != nil {
		return nil, err
	}
	tmpl, err := in.build(e, marker, true, setCC)
	if err != nil {
		return nil, err
	}
	return stamp(tmpl, marker, copies), nil
}

// stamp makes one job per copy from a jobspec holding marker where the id
// goes. The id is digits, which JSON strings hold as they are.
func stamp(tmpl api.SubmitJob, marker string, copies []string) []api.SubmitJob {
	jobs := make([]api.SubmitJob, len(copies))
	m := []byte(marker)
	for i, cc := range copies {
		jobs[i] = api.SubmitJob{Jobspec: bytes.ReplaceAll(tmpl.Jobspec, m, []byte(cc)), Urgency: tmpl.Urgency}
	}
	return jobs
}

// newMarker returns a string found nowhere in the inputs, to stand for the
// copy id while the jobspec is built. It is letters and digits only, so
// that no encoding changes it.
func newMarker(in *submitInputs) (string, error) {
	for range 8 {
		var b [12]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", err
		}
		m := "FLUXQCC" + hex.EncodeToString(b[:]) + "CCQXULF"
		if !in.contains(m) {
			return m, nil
		}
	}
	return "", errors.New("cannot make a --cc marker")
}

// ccCopies reads --cc or --bcc: the copy ids, in order, and whether each
// job gets FLUXQ_JOB_CC. No option gives nil.
func ccCopies(c jobOptions) ([]string, bool, error) {
	cc, bcc := c.String(flagCC), c.String(flagBCC)
	if cc != "" && bcc != "" {
		return nil, false, exitcode.UsageErrorf("specify only one of --cc or --bcc")
	}
	spec, name := cc, flagCC
	if bcc != "" {
		spec, name = bcc, flagBCC
	}
	if spec == "" {
		return nil, false, nil
	}
	set, err := idset.Parse(spec)
	if err != nil {
		return nil, false, exitcode.UsageErrorf("--%s: invalid IDSET %q: %v", name, spec, err)
	}
	if n := set.Count(); n > maxCopies {
		return nil, false, exitcode.UsageErrorf("--%s: %d copies is more than %d", name, n, maxCopies)
	}
	copies := make([]string, 0, set.Count())
	for id := range set.All() {
		copies = append(copies, strconv.FormatUint(uint64(id), 10))
	}
	return copies, cc != "", nil
}

// submitInputs are the options as given, before {cc} is replaced.
type submitInputs struct {
	retries   int             // --retry N (0: none)
	opts      jobspec.Options // the options that take no {cc}
	command   []string
	queue     string
	timeLimit string
	urgency   string
	name      string
	output    string
	errorPath string
	input     string // --input FILE
	envRules  []string
	requires  []string
	deps      []string
	environ   []string
	targets   []string
	setopts   []string // -o KEY[=VAL]
	oneTask   bool     // one task per node, whatever the slots (fluxq alloc)
}

func (e *env) inputs(c jobOptions, cmd []string, st *submitState) (*submitInputs, error) {
	if st.command != nil {
		cmd = st.command
	}
	if len(cmd) == 0 {
		return nil, exitcode.UsageErrorf("job command and arguments are missing")
	}
	o := jobspec.Options{Exclusive: c.Bool(flagExclusive)}
	for _, n := range []struct {
		flag string
		to   *int
	}{{flagNTasks, &o.NTasks}, {flagCores, &o.CoresPerTask}, {flagGPUs, &o.GPUsPerTask}, {flagNodes, &o.Nodes}} {
		v, err := c.Int(n.flag)
		if err != nil {
			return nil, err
		}
		*n.to = v
	}
	// FromOptions reads 0 as "not given": a 0 given is refused here, in
	// its words.
	for _, chk := range []struct {
		flag string
		bad  bool
		msg  string
	}{
		{flagNTasks, o.NTasks < 1, "task count must be an integer >= 1"},
		{flagCores, o.CoresPerTask < 1, "cores per task must be an integer >= 1"},
		{flagGPUs, o.GPUsPerTask < 0, "gpus per task must be an integer >= 0"},
		{flagNodes, o.Nodes < 1, "node count must be an integer >= 1 (if set)"},
	} {
		if c.IsSet(chk.flag) && chk.bad {
			return nil, exitcode.UsageErrorf("--%s: %s", chk.flag, chk.msg)
		}
	}
	mem, err := memPerSlot(c, o.CoresPerTask)
	if err != nil {
		return nil, err
	}
	o.MemPerSlot = mem
	// The job runs in --cwd, else where it was submitted; a relative
	// --cwd is taken from there too (a jobspec's cwd is absolute).
	o.Cwd = c.String(flagCwd)
	if o.Cwd == "" || !filepath.IsAbs(o.Cwd) {
		wd, err := e.getwd()
		if err != nil {
			return nil, fmt.Errorf("current directory: %w", err)
		}
		o.Cwd = filepath.Join(wd, o.Cwd)
	}
	if begin := c.String(flagBegin); begin != "" {
		t, err := parseBeginTime(begin, e.now())
		if err != nil {
			return nil, exitcode.UsageErrorf("--begin-time: %v", err)
		}
		o.BeginTime = t
	}
	retries, err := parseRetry(c)
	if err != nil {
		return nil, err
	}
	var targets []string
	if t := c.String(flagTarget); c.IsSet(flagTarget) {
		for _, id := range strings.Split(t, ",") {
			if id = strings.TrimSpace(id); id == "" {
				return nil, exitcode.UsageErrorf("--target: %q has an empty allocation id", t)
			}
			targets = append(targets, id)
		}
	}
	return &submitInputs{
		targets: targets, retries: retries,
		opts: o, command: cmd, queue: c.String(flagQueue), timeLimit: c.String(flagTime),
		urgency: c.String(flagUrgency), name: c.String(flagJobName),
		output: c.String(flagOutput), errorPath: c.String(flagError), input: c.String(flagInput),
		envRules: st.envRules, requires: st.requires, deps: st.dependencies,
		environ: e.environ(), setopts: st.setopts, oneTask: st.oneTask,
	}, nil
}

// ccShapesJob reports whether {cc} appears where it changes more than a
// string of the jobspec: the time limit, urgency, constraints,
// dependencies, or the names environment rules select.
func (in *submitInputs) ccShapesJob() bool {
	if strings.Contains(in.timeLimit, ccTag) || strings.Contains(in.urgency, ccTag) {
		return true
	}
	for _, list := range [][]string{in.requires, in.deps} {
		for _, s := range list {
			if strings.Contains(s, ccTag) {
				return true
			}
		}
	}
	for _, r := range in.envRules {
		if !strings.Contains(r, ccTag) {
			continue
		}
		// Only the VALUE of VAR=VALUE is a plain string; a "$" in it
		// could join the id to a variable's name.
		name, value, set := strings.Cut(r, "=")
		if !set || strings.HasPrefix(r, "-") || strings.HasPrefix(r, "^") ||
			strings.Contains(name, ccTag) || strings.Contains(value, "$") {
			return true
		}
	}
	return false
}

// contains reports whether s appears in any input.
func (in *submitInputs) contains(s string) bool {
	all := [][]string{in.command, in.envRules, in.requires, in.deps, in.environ, in.setopts,
		{in.queue, in.timeLimit, in.urgency, in.name, in.output, in.errorPath, in.input, in.opts.Cwd}}
	for _, list := range all {
		for _, x := range list {
			if strings.Contains(x, s) {
				return true
			}
		}
	}
	return false
}

// build makes the job of copy cc (withCC) or the only job, as flux submit
// does: {cc} replaced in the command and in the options that take it,
// then the environment, constraints and time limit worked out.
func (in *submitInputs) build(e *env, cc string, withCC, setCC bool) (api.SubmitJob, error) {
	sub := func(s string) string { return s }
	if withCC {
		sub = func(s string) string { return replaceCC(s, cc) }
	}
	subAll := func(list []string) []string {
		out := make([]string, len(list))
		for i, s := range list {
			out[i] = sub(s)
		}
		return out
	}
	o := in.opts
	o.Command = subAll(in.command)
	o.Queue = sub(in.queue)
	o.Name = sub(in.name)

	urgency, err := parseSubmitUrgency(sub(in.urgency))
	if err != nil {
		return api.SubmitJob{}, err
	}
	if tl := sub(in.timeLimit); tl != "" {
		d, err := fsd.ParseTimeLimitBounded(tl)
		if err != nil {
			return api.SubmitJob{}, exitcode.UsageErrorf("--time-limit: %v", err)
		}
		if math.IsInf(d, 1) {
			// inf is no limit of the job's own, as 0 is in a jobspec
			// (fluxq help durations); Flux refuses it, Slurm takes
			// "infinite" and "UNLIMITED" the same way.
			d = 0
		}
		o.Duration = d
	}
	env, err := jobEnvironment(in.environ, subAll(in.envRules))
	if err != nil {
		return api.SubmitJob{}, exitcode.UsageErrorf("%v", err)
	}
	if setCC {
		env[EnvJobCC] = cc
	}
	o.Environment = env
	if len(in.requires) > 0 {
		q := strings.Join(subAll(in.requires), " ")
		cons, err := constraint.ParseQuery(q)
		if err != nil {
			// flux submit reports a bad --requires as a failure (exit 1).
			return api.SubmitJob{}, fmt.Errorf("--requires='%s': %v", q, err)
		}
		o.Constraints = cons
	}
	o.Dependencies = subAll(in.deps)
	out, errp, err := in.outputPaths(sub, cc, withCC)
	if err != nil {
		return api.SubmitJob{}, err
	}
	shellOpts := map[string]any{}
	if (out != "" && !outputDefaults[out]) || errp != "" {
		streams := map[string]any{}
		if out != "" && !outputDefaults[out] {
			streams["stdout"] = map[string]any{"path": out}
		}
		if errp != "" {
			streams["stderr"] = map[string]any{"path": errp}
		}
		shellOpts["output"] = streams
	}
	if input := sub(in.input); input != "" {
		// Where flux run --input puts it.
		shellOpts["input"] = shell.InputOptions(input)
	}
	for _, opt := range subAll(in.setopts) {
		if err := setShellOption(shellOpts, opt); err != nil {
			return api.SubmitJob{}, exitcode.UsageErrorf("--setopt: %v", err)
		}
	}
	if len(shellOpts) > 0 {
		o.Extra = map[string]any{"shell": map[string]any{"options": shellOpts}}
	}
	js, err := jobspec.FromOptions(o)
	if err != nil {
		return api.SubmitJob{}, exitcode.UsageErrorf("%v", err)
	}
	if in.oneTask {
		// The slots are the allocation; its one task per node is the
		// sub-instance that runs them (RFC 14 allows a total below the
		// slots, not below the nodes).
		js.Tasks[0].Count = jobspec.Count{Total: max(1, o.Nodes)}
	}
	if len(in.targets) > 0 {
		// PMIX_SPAWN_TARGET: the instance checks ownership and resolves
		// the ids to the sessions the scheduler filters on.
		list := make([]any, len(in.targets))
		for i, t := range in.targets {
			list[i] = t
		}
		if js.Attributes.System.Extra == nil {
			js.Attributes.System.Extra = map[string]any{}
		}
		js.Attributes.System.Extra[jobspec.TargetsKey] = list
	}
	if in.retries > 0 {
		if js.Attributes.System.Extra == nil {
			js.Attributes.System.Extra = map[string]any{}
		}
		js.Attributes.System.Extra[jobspec.RetryKey] = in.retries
	}
	b, err := js.MarshalJSON()
	if err != nil {
		return api.SubmitJob{}, err
	}
	return api.SubmitJob{Jobspec: b, Urgency: urgency}, nil
}

// parseRetry reads --retry N: a count from 0 to jobspec.MaxRetry.
func parseRetry(c jobOptions) (int, error) {
	if !c.IsSet(flagRetry) {
		return 0, nil
	}
	v := c.String(flagRetry)
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 || n > jobspec.MaxRetry {
		return 0, exitcode.UsageErrorf("--retry: %q is not a count of retries from 0 to %d", v, jobspec.MaxRetry)
	}
	return n, nil
}

// replaceCC replaces {cc} in s, leaving mustache templates such as
// {{id}} (which the job shell expands) alone, as flux's Xcmd does.
// outputPaths are --output and --error with {cc} and, as users of the
// paths' mustache tags write it, {{cc}} replaced. A tag no job could
// expand is refused here, naming it, rather than making a file with
// braces in its name.
func (in *submitInputs) outputPaths(sub func(string) string, cc string, withCC bool) (out, errp string, err error) {
	paths := [2]string{in.output, in.errorPath}
	for i, flag := range [2]string{flagOutput, flagError} {
		p := paths[i]
		if withCC {
			p = strings.ReplaceAll(p, ccMustache, cc)
		}
		p = sub(p)
		switch tag := shell.UnknownTag(p); {
		case tag == ccMustache:
			return "", "", exitcode.UsageErrorf("--%s: %s is the copy's id, given with --cc", flag, ccMustache)
		case tag != "":
			return "", "", exitcode.UsageErrorf("--%s: no tag %s in an output path (tags: %s)", flag, tag, shell.Tags)
		}
		paths[i] = p
	}
	return paths[0], paths[1], nil
}

func replaceCC(s, cc string) string {
	if !strings.Contains(s, ccTag) {
		return s
	}
	const open, close = "\x00<\x00", "\x00>\x00"
	s = strings.NewReplacer("{{", open, "}}", close).Replace(s)
	s = strings.ReplaceAll(s, ccTag, cc)
	return strings.NewReplacer(open, "{{", close, "}}").Replace(s)
}

// parseSubmitUrgency reads --urgency: a word or a number is a usage
// matter, a number out of range is refused as the job manager would.
func parseSubmitUrgency(s string) (int, error) {
	u, err := job.ParseUrgency(s)
	if err == nil {
		return u, nil
	}
	if _, nerr := strconv.Atoi(s); nerr == nil {
		return 0, errors.New(msgUrgencyRange)
	}
	return 0, exitcode.UsageErrorf("--urgency: %v", err)
}

// jobspecSubmission reads --jobspec FILE (or - for stdin), as is.
func (e *env) jobspecSubmission(c *cli.Context, path string, copies []string, setCC bool) ([]api.SubmitJob, error) {
	if c.Args().Len() > 0 {
		return nil, exitcode.UsageErrorf("--jobspec takes no COMMAND")
	}
	for _, f := range jobFlags {
		if c.IsSet(f) {
			return nil, exitcode.UsageErrorf("--jobspec does not combine with --%s", f)
		}
	}
	var data []byte
	var err error
	if path == "-" {
		r := c.App.Reader
		if r == nil {
			r = os.Stdin
		}
		data, err = io.ReadAll(io.LimitReader(r, jobspec.MaxSize+1))
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("--jobspec: %w", err)
	}
	js, err := jobspec.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	urgency, err := parseSubmitUrgency(c.String(flagUrgency))
	if err != nil {
		return nil, err
	}
	if copies == nil || !setCC {
		b, err := js.MarshalJSON()
		if err != nil {
			return nil, err
		}
		one := api.SubmitJob{Jobspec: b, Urgency: urgency}
		if copies == nil {
			return []api.SubmitJob{one}, nil
		}
		jobs := make([]api.SubmitJob, len(copies))
		for i := range jobs {
			jobs[i] = one
		}
		return jobs, nil
	}
	marker := "FLUXQCC" + strconv.FormatInt(time.Now().UnixNano(), 36) + "CCQXULF"
	if bytes.Contains(data, []byte(marker)) {
		return nil, errors.New("cannot make a --cc marker")
	}
	env := map[string]string{}
	for k, v := range js.Attributes.System.Environment {
		env[k] = v
	}
	env[EnvJobCC] = marker
	js.Attributes.System.Environment = env
	b, err := js.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return stamp(api.SubmitJob{Jobspec: b, Urgency: urgency}, marker, copies), nil
}

// parseBeginTime reads --begin-time: "+FSD" from now, or a date and time
// in local time; a time of day alone is its next occurrence.
func parseBeginTime(s string, now time.Time) (float64, error) {
	t, err := readBeginTime(s, now)
	if err != nil {
		return 0, err
	}
	// The edge of the time bound: a begin time past it would become an
	// expiration no job record can encode.
	if err := fsd.CheckTime(s, t); err != nil {
		return 0, err
	}
	return t, nil
}

func readBeginTime(s string, now time.Time) (float64, error) {
	if rest, ok := strings.CutPrefix(s, "+"); ok {
		d, err := fsd.ParseBounded(rest)
		if err != nil {
			return 0, err
		}
		return state.Timestamp(now) + d, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return dateSeconds(t), nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, now.Location()); err == nil {
			return dateSeconds(t), nil
		}
	}
	for _, layout := range []string{"15:04:05", "15:04", "3pm", "3:04pm", "3PM", "3:04PM"} {
		if t, err := time.ParseInLocation(layout, s, now.Location()); err == nil {
			y, m, d := now.Date()
			at := time.Date(y, m, d, t.Hour(), t.Minute(), t.Second(), 0, now.Location())
			if at.Before(now) {
				at = at.AddDate(0, 0, 1)
			}
			return state.Timestamp(at), nil
		}
	}
	return 0, fmt.Errorf("invalid time %q: want +FSD or a date and time", s)
}

// dateSeconds is a date a user wrote in seconds since the epoch. Within
// the years UnixNano holds it is state.Timestamp, as every other time
// fluxq stores; beyond them UnixNano is undefined (year 9999 came out as
// a time in the past), so the seconds are taken whole, for the bound to
// see.
func dateSeconds(t time.Time) float64 {
	if y := t.Year(); y > 1678 && y < 2262 {
		return state.Timestamp(t)
	}
	return float64(t.Unix()) + float64(t.Nanosecond())/1e9
}

// exitCodeOf is the exit code a job's end stands for: its tasks' (128+N
// for signal N, as a shell's, not the job's returncode), or 1 for a job
// that ended without running to the end, or that failed although its
// tasks succeeded (an exec exception after them: lost output).
func exitCodeOf(s *api.JobSummary) int {
	if s.WaitStatus != nil {
		if code := job.ExitCode(*s.WaitStatus); code != 0 || !failedAnyway(s) {
			return code
		}
		return 1
	}
	if failedAnyway(s) {
		return 1
	}
	return 0
}

// failedAnyway reports whether a job's result is not a success, whatever
// its tasks' status.
func failedAnyway(s *api.JobSummary) bool {
	return s.Result != 0 && s.Result != job.Completed
}

// tasksSaid reports whether a job's failure is its tasks' own (a signal,
// an exit code), which they have already shown: fluxq run, wait and
// submit --wait name only the failures that the tasks' status does not.
func tasksSaid(s *api.JobSummary) bool {
	return s.WaitStatus != nil && job.ExitCode(*s.WaitStatus) != 0
}

// failure says why a job did not succeed, in the words of flux-core's job
// wait: the fatal exception, the signal, or the exit code; "" if it did.
func failure(s *api.JobSummary) string {
	if ex := s.Exception; ex != nil && ex.Occurred && ex.Severity == 0 && !tasksSaid(s) {
		return strings.TrimSpace("Fatal exception type=" + ex.Type + " " + ex.Note)
	}
	if ws := s.WaitStatus; ws != nil {
		if sig := *ws & 0x7f; sig != 0 && sig != 0x7f {
			return "task(s) " + signalName(sig)
		}
		code := (*ws >> 8) & 0xff
		if code > 128 {
			// The job shell's 128+N for tasks that signal N ended.
			return "task(s) " + signalName(code-128)
		}
		if code != 0 {
			return fmt.Sprintf("task(s) exited with exit code %d", code)
		}
		return ""
	}
	if s.Result != 0 && s.Result != job.Completed {
		return "job " + strings.ToLower(s.Result.String())
	}
	return ""
}

// setShellOption sets one shell option as flux submit's --setopt does:
// KEY[=VAL], where dots in KEY nest (output.limit is options.output.limit),
// VAL is taken as JSON when it is JSON and as a string otherwise, and a
// KEY alone is 1.
func setShellOption(opts map[string]any, opt string) error {
	key, raw, hasVal := strings.Cut(opt, "=")
	var val any = 1
	if hasVal {
		val = raw
		// Numbers kept as written: 4096 stays an integer.
		dec := json.NewDecoder(strings.NewReader(raw))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err == nil && !dec.More() {
			if _, err := dec.Token(); err == io.EOF {
				val = v
			}
		}
	}
	parts := strings.Split(key, ".")
	for _, p := range parts {
		if p == "" {
			return fmt.Errorf("%q: a key is missing (want KEY[=VAL], e.g. output.limit=1M)", opt)
		}
	}
	m := opts
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = val
	return nil
}

// memPerSlot reads --mem, or --mem-per-cpu times the cores of a slot (a
// slot is one task's cores, so Slurm's per-CPU memory maps to it exactly);
// 0 when neither is given.
func memPerSlot(c jobOptions, coresPerTask int) (uint64, error) {
	if c.IsSet(flagMem) && c.IsSet(flagMemPerCPU) {
		return 0, exitcode.UsageErrorf("--mem and --mem-per-cpu are mutually exclusive")
	}
	flag := flagMem
	if c.IsSet(flagMemPerCPU) {
		flag = flagMemPerCPU
	}
	if !c.IsSet(flag) {
		return 0, nil
	}
	n, err := jobspec.ParseMemory(c.String(flag))
	if err != nil {
		return 0, exitcode.UsageErrorf("--%s: %v", flag, err)
	}
	if flag == flagMemPerCPU {
		cores := uint64(max(coresPerTask, 1))
		if n > jobspec.MaxMemory/cores {
			return 0, exitcode.UsageErrorf("--%s: %s per core x %d cores is over the largest allowed, 1E", flag, c.String(flag), cores)
		}
		n *= cores
	}
	return n, nil
}
