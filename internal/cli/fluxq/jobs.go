package fluxq

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/cli/output"
	"github.com/fluxq/fluxq/internal/client"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/fsd"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/state"
)

// Annotation keys the INFO column reads (RFC 27 sched annotations).
const (
	annotSched         = "sched"
	annotReasonPending = "reason_pending"
	annotTEstimate     = "t_estimate"
)

// Words of the INFO column, as flux jobs prints them.
const (
	infoPriorityWait = "priority-wait"
	infoHeld         = "held"
	infoPriorityHold = "priority-hold"
	infoDepends      = "depends:"
	infoETA          = "eta:"
	infoNow          = "now"
)

// hidden is what a zero count or time prints as (flux jobs' "h" fields).
const hidden = "-"

// jobJSON is one job of `fluxq jobs --json` (docs/cli.md), built from its
// summary. Fields flux jobs leaves out until they are known (result,
// returncode, waitstatus) are left out here too.
type jobJSON struct {
	ID           fluid.ID       `json:"id"`
	IDF58        string         `json:"id_f58"`
	UserID       uint32         `json:"userid"`
	Username     string         `json:"username"`
	Queue        string         `json:"queue"`
	Name         string         `json:"name"`
	State        job.State      `json:"state"`
	Result       job.Result     `json:"result,omitempty"`
	Status       string         `json:"status"`
	Urgency      int            `json:"urgency"`
	Priority     int64          `json:"priority"`
	NTasks       int            `json:"ntasks"`
	NNodes       int            `json:"nnodes"`
	NCores       int            `json:"ncores"`
	NGPUs        int            `json:"ngpus"`
	Duration     float64        `json:"duration"`
	TSubmit      float64        `json:"t_submit"`
	TDepend      float64        `json:"t_depend,omitempty"`
	TRun         float64        `json:"t_run"`
	TCleanup     float64        `json:"t_cleanup,omitempty"`
	TInactive    float64        `json:"t_inactive"`
	Runtime      float64        `json:"runtime"`
	Nodelist     string         `json:"nodelist"`
	Annotations  map[string]any `json:"annotations"`
	Dependencies []string       `json:"dependencies"`
	Exception    exceptionJSON  `json:"exception"`
	ReturnCode   *int           `json:"returncode,omitempty"`
	WaitStatus   *int           `json:"waitstatus,omitempty"`
	Targets      []string       `json:"targets"`
	Parent       *fluid.ID      `json:"parent"`
	// The jobs made again from one another (resubmit, --retry): the
	// job this one was made from, which retry of its chain it is (0: a
	// first run), and the retry that followed it.
	AgainOf   *fluid.ID `json:"again_of"`
	Retry     int       `json:"retry"`
	RetriedAs *fluid.ID `json:"retried_as"`
	// What the job's processes consumed, as sacct's UserCPU, SystemCPU
	// (seconds) and MaxRSS (bytes, the largest of any one process); left
	// out until the job finished, as returncode is.
	UserCPU *float64 `json:"user_cpu,omitempty"`
	SysCPU  *float64 `json:"sys_cpu,omitempty"`
	MaxRSS  *int64   `json:"max_rss,omitempty"`
	// The first task's command line and the working directory (the
	// jobspec's); [] and absent for a job listed before they were kept.
	Command []string `json:"command"`
	Cwd     string   `json:"cwd,omitempty"`
}

// exceptionJSON is docs/cli.md's exception object; only occurred is present
// when none was raised, as flux jobs does.
type exceptionJSON struct {
	Occurred bool   `json:"occurred"`
	Type     string `json:"type,omitempty"`
	Severity *int   `json:"severity,omitempty"`
	Note     string `json:"note,omitempty"`
}

// jobsDoc is the `fluxq jobs --json` document.
type jobsDoc struct {
	Jobs []jobJSON `json:"jobs"`
}

// toJSON turns a summary into its --json form at time now.
func (e *env) toJSON(s *api.JobSummary, now time.Time) jobJSON {
	j := jobJSON{
		ID: s.ID, IDF58: e.fmtID(s.ID), UserID: s.UserID, Username: e.userName(s.UserID),
		Queue: s.Queue, Name: s.Name, State: s.State, Result: s.Result, Status: status(s),
		Urgency: s.Urgency, Priority: s.Priority,
		NTasks: s.NTasks, NNodes: s.NNodes, NCores: s.NCores, NGPUs: s.NGPUs, Duration: s.Duration,
		TSubmit: s.TSubmit, TDepend: s.TDepend, TRun: s.TRun, TCleanup: s.TCleanup, TInactive: s.TInactive,
		Runtime: runtime(s, now), Nodelist: s.Nodelist, Annotations: s.Annotations,
		Dependencies: s.Dependencies, WaitStatus: s.WaitStatus, Targets: s.Targets, Parent: s.Parent,
		AgainOf: s.AgainOf, Retry: s.Retry, RetriedAs: s.RetriedAs,
		Command: s.Command, Cwd: s.Cwd,
	}
	if j.Command == nil {
		j.Command = []string{}
	}
	if j.Targets == nil {
		j.Targets = []string{}
	}
	if j.Annotations == nil {
		j.Annotations = map[string]any{}
	}
	if j.Dependencies == nil {
		j.Dependencies = []string{}
	}
	if ex := s.Exception; ex != nil && ex.Occurred {
		sev := ex.Severity
		j.Exception = exceptionJSON{Occurred: true, Type: ex.Type, Severity: &sev, Note: ex.Note}
	}
	if rc, ok := returnCode(s); ok {
		j.ReturnCode = &rc
	}
	if u := s.Usage; u != nil {
		j.UserCPU, j.SysCPU, j.MaxRSS = &u.UserCPU, &u.SysCPU, &u.MaxRSS
	}
	return j
}

// status is flux jobs' status: the state while active, the result after.
func status(s *api.JobSummary) string {
	if s.State == job.Inactive && s.Result != 0 {
		return s.Result.String()
	}
	return s.State.String()
}

// statusAbbrev is the ST column: D P S R C while active, and CD F CA TO
// for the result of an inactive job.
func statusAbbrev(s *api.JobSummary) string {
	if s.State == job.Inactive && s.Result != 0 {
		return s.Result.Abbrev()
	}
	return s.State.Abbrev()
}

// returnCode is flux jobs' returncode (job.ReturnCode). It is worked out
// from the wait status and result rather than read from the summary's
// returncode: summaries stored under earlier meanings hold 128+N or -N
// for signal N, while the wait status beneath them never changed, so
// every job, old or new, lists Flux's value.
func returnCode(s *api.JobSummary) (int, bool) {
	return job.ReturnCode(s.WaitStatus, s.Result)
}

// runtime is how long the job has run (flux jobs' runtime): until cleanup,
// or until now while it runs.
func runtime(s *api.JobSummary, now time.Time) float64 {
	switch {
	case s.TRun > 0 && s.TCleanup > 0:
		return math.Max(0, s.TCleanup-s.TRun)
	case s.TRun > 0:
		return math.Max(0, state.Timestamp(now)-s.TRun)
	}
	return 0
}

// pending reports whether the job waits for resources or before them.
func pending(s *api.JobSummary) bool {
	return s.State&(job.Pending|job.New) != 0
}

// contextualTime is the TIME column: the time limit while pending, the
// runtime after (flux jobs' contextual_time).
func contextualTime(s *api.JobSummary, now time.Time) string {
	t := runtime(s, now)
	if pending(s) {
		t = s.Duration
	}
	if t <= 0 {
		return hidden
	}
	return fsd.Format(t)
}

// contextualInfo is the INFO column (flux jobs' contextual_info, plus the
// scheduler's pending reason, docs/cli.md): depends:… or begins 14:05
// while DEPEND, priority-wait while PRIORITY; while SCHED the estimated
// start, else held or priority-hold, else what the listing found it waits
// for (Waits), else the scheduler's reason; the nodelist after.
func contextualInfo(s *api.JobSummary, now time.Time) string {
	switch s.State {
	case job.Depend:
		return dependsInfo(s.Dependencies, now)
	case job.Priority, job.New:
		return infoPriorityWait
	case job.Sched:
		sched, _ := s.Annotations[annotSched].(map[string]any)
		if t, ok := number(sched[annotTEstimate]); ok {
			eta := t - state.Timestamp(now)
			if eta < 0 {
				return infoETA + infoNow
			}
			return infoETA + fsd.Format(eta)
		}
		if s.Urgency == job.UrgencyHold {
			return infoHeld
		}
		if s.Priority == job.PriorityMin {
			return infoPriorityHold
		}
		if s.Waits != "" {
			return s.Waits // a stopped queue, drained nodes (internal/state)
		}
		if r, ok := sched[annotReasonPending].(string); ok {
			return inTargets(r, s.Targets)
		}
		return ""
	}
	return s.Nodelist
}

// inactiveReason is how an inactive job ended, in flux jobs' words.
func inactiveReason(s *api.JobSummary) string {
	if s.State != job.Inactive {
		return ""
	}
	ex := s.Exception
	switch s.Result {
	case job.Canceled:
		if ex != nil && ex.Type == "cancel" && ex.Note != "" {
			return "Canceled: " + ex.Note
		}
		return "Canceled"
	case job.Timeout:
		return "Timeout"
	case job.Failed:
		if ex != nil && ex.Occurred && ex.Type != "exec" && ex.Severity == 0 {
			r := "Exception: type=" + ex.Type
			if ex.Note != "" {
				r += " note=" + ex.Note
			}
			return r
		}
		// As flux jobs reads it: a returncode above 128 is a signal's
		// (the tasks', or a task that exited with such a code).
		rc, _ := returnCode(s)
		switch {
		case rc > 128:
			return signalName(rc - 128)
		case rc == 126:
			return "Command invoked cannot execute"
		case rc == 127:
			return "command not found"
		case rc == 128:
			return "Invalid argument to exit"
		}
		return "Exit " + strconv.Itoa(rc)
	}
	rc, _ := returnCode(s)
	return "Exit " + strconv.Itoa(rc)
}

// signalName is strsignal(3)'s description ("Killed", "Terminated").
func signalName(sig int) string {
	s := syscall.Signal(sig).String()
	if s == "" || strings.HasPrefix(s, "signal ") {
		return fmt.Sprintf("Signaled %d", sig)
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// number reads an annotation number (encoding/json gives float64).
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case interface{ Float64() (float64, error) }:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// jobStyle colours a row as flux jobs does: completed green, failed and
// timed out red, canceled grey.
func jobStyle(s *api.JobSummary) output.Style {
	switch s.Result {
	case job.Completed:
		return output.Success
	case job.Failed, job.Timeout:
		return output.Failure
	case job.Canceled:
		return output.Muted
	}
	return output.Plain
}

// countCell prints a count, or "-" when it is not known yet.
func countCell(n int) string {
	if n <= 0 {
		return hidden
	}
	return strconv.Itoa(n)
}

// jobsList is how `fluxq jobs` prints, at time now. withQueue adds the
// QUEUE column (when some listed job names a queue).
func (e *env) jobsList(now time.Time, withQueue bool) output.List[*api.JobSummary] {
	type col = output.Column[*api.JobSummary]
	id := col{Header: "JOBID", Align: output.Right, Value: func(s *api.JobSummary) string { return e.fmtID(s.ID) }}
	queue := col{Header: "QUEUE", Max: 8, Value: func(s *api.JobSummary) string { return s.Queue }}
	usr := col{Header: "USER", Max: 8, Value: func(s *api.JobSummary) string { return e.userName(s.UserID) }}
	name := col{Header: "NAME", Max: 10, Value: func(s *api.JobSummary) string { return s.Name }}
	st := col{Header: "ST", Align: output.Right, Value: statusAbbrev}
	ntasks := col{Header: "NTASKS", Align: output.Right, Value: func(s *api.JobSummary) string { return countCell(s.NTasks) }}
	nnodes := col{Header: "NNODES", Align: output.Right, Value: func(s *api.JobSummary) string { return countCell(s.NNodes) }}
	tm := col{Header: "TIME", Align: output.Right, Value: func(s *api.JobSummary) string { return contextualTime(s, now) }}
	info := col{Header: "INFO", Value: func(s *api.JobSummary) string { return contextualInfo(s, now) }}

	withQ := func(cols ...col) []col {
		if !withQueue {
			return cols
		}
		return append([]col{cols[0], queue}, cols[1:]...)
	}
	def := withQ(id, usr, name, st, ntasks, nnodes, tm, info)
	long := withQ(id, usr, name,
		col{Header: "STATUS", Value: status},
		ntasks, nnodes,
		col{Header: "NCORES", Align: output.Right, Value: func(s *api.JobSummary) string { return countCell(s.NCores) }},
		col{Header: "NGPUS", Align: output.Right, Value: func(s *api.JobSummary) string { return countCell(s.NGPUs) }},
		col{Header: "T_SUBMIT", Align: output.Right, Value: func(s *api.JobSummary) string {
			return time.Unix(int64(s.TSubmit), 0).Format("Jan02 15:04")
		}},
		tm, info,
		col{Header: "REASON", Value: inactiveReason},
		col{Header: "COMMAND", Value: func(s *api.JobSummary) string { return commandLine(s.Command) }},
	)
	deps := withQ(id, name,
		col{Header: "URG", Align: output.Right, Value: func(s *api.JobSummary) string { return strconv.Itoa(s.Urgency) }},
		col{Header: "PRIORITY", Align: output.Right, Value: func(s *api.JobSummary) string { return strconv.FormatInt(s.Priority, 10) }},
		col{Header: "STATE", Value: func(s *api.JobSummary) string { return s.State.String() }},
		col{Header: "DEPENDENCIES", Value: func(s *api.JobSummary) string { return strings.Join(s.Dependencies, ",") }},
	)
	return output.List[*api.JobSummary]{
		Tables: map[string]output.Table[*api.JobSummary]{
			"default": {Description: "JOBID USER NAME ST NTASKS NNODES TIME INFO", Columns: def, Style: jobStyle},
			"long":    {Description: "adds status, cores, GPUs, submit time, how the job ended and its command", Columns: long, Style: jobStyle},
			"deps":    {Description: "urgency, priority and dependencies", Columns: deps, Style: jobStyle},
			"endreason": {Description: "when and how each job ended (flux jobs -o endreason)", Columns: withQ(id, usr, name, st,
				col{Header: "T_INACTIVE", Align: output.Right, Value: func(s *api.JobSummary) string {
					if s.TInactive == 0 {
						return ""
					}
					return time.Unix(int64(s.TInactive), 0).Format("Jan02 15:04")
				}},
				col{Header: "INACTIVE-REASON", Value: inactiveReason},
			), Style: jobStyle},
		},
		Order: []string{"default", "long", "deps", "endreason"},
		Doc: func(items []*api.JobSummary) any {
			doc := jobsDoc{Jobs: make([]jobJSON, len(items))}
			for i, s := range items {
				doc.Jobs[i] = e.toJSON(s, now)
			}
			return doc
		},
		DocKey: "jobs",
		DocList: func(items []*api.JobSummary) any {
			js := make([]jobJSON, len(items))
			for i, s := range items {
				js[i] = e.toJSON(s, now)
			}
			return js
		},
		Item:     func(s *api.JobSummary) any { return e.toJSON(s, now) },
		Shape:    jobJSON{},
		Fields:   e.jobFields(now),
		Prefixes: jobPrefixes,
	}
}

func (e *env) jobsCommand() *cli.Command {
	return &cli.Command{
		Name:      "jobs",
		Usage:     "list jobs",
		ArgsUsage: "[IDS...]",
		Description: `Lists jobs, one line each: JOBID, QUEUE (when named queues exist), USER,
NAME, ST (the state, or the result once inactive: 'fluxq help states'),
NTASKS, NNODES, TIME, and INFO: why a pending job waits, or where a
running one runs. By default, the caller's pending and running jobs in
every queue: pending by priority, running by start, inactive by end.
With IDS, those jobs in any state. A finished job's --json and -o fields
include user_cpu and sys_cpu (CPU seconds) and max_rss (bytes, the
largest process), as sacct's UserCPU, SystemCPU and MaxRSS.

EXAMPLES:
  # Your jobs, finished ones too
  $ fluxq jobs -a

  # Everyone's pending jobs in the batch queue
  $ fluxq jobs -A -f pending -q batch

  # IDs, results and peak memory of your failed jobs, for a script
  $ fluxq jobs -a -f failed -n -o '{{.id_f58}} {{.result}} {{.max_rss}}'

  # When your jobs ran, and what, in flux jobs' -o syntax (-o help lists
  # the fields, 'fluxq help formats' the syntax)
  $ fluxq jobs -a -o '{id.f58:>12} {state:<8} {t_run!d:%H:%M} {command}'`,
		Flags: append([]cli.Flag{
			&cli.BoolFlag{Name: "a", Usage: "include inactive jobs", DisableDefaultText: true},
			&cli.BoolFlag{Name: "A", Usage: "jobs of all users", DisableDefaultText: true},
			&cli.StringSliceFlag{Name: "filter", Aliases: []string{"f"}, Usage: "only jobs in these `STATES` or with these results (pending,running,inactive,sched,completed,failed,...)", DefaultText: "pending,running; with -a, all"},
			&cli.StringSliceFlag{Name: "queue", Aliases: []string{"q"}, Usage: "only jobs of these `QUEUES`", DefaultText: "every queue"},
			&cli.StringFlag{Name: "user", Aliases: []string{"u"}, Usage: "jobs of `USER` (a name or uid), or 'all' (as -A)", DefaultText: "yours"},
			&cli.StringFlag{Name: "name", Usage: "only jobs named `NAME`", DefaultText: "any name"},
			&cli.IntFlag{Name: "count", Aliases: []string{"c"}, Usage: "at most `N` of the jobs the other options select", DefaultText: "all"},
			&cli.BoolFlag{Name: "stats-only", Usage: "print only the instance's job counts on one line; exit 0 while some job is active, 1 when none is (as flux jobs)", DisableDefaultText: true},
		}, output.ListFlags("default", "long", "deps", "endreason")...),
		Action: action(e.jobs),
	}
}

func (e *env) jobs(c *cli.Context) error {
	if c.Bool("stats-only") {
		return e.statsOnly(c)
	}
	// The name travels in the query so that the store applies it with the
	// other filters, before the count.
	q := api.JobsQuery{Count: c.Int("count"), Queues: c.StringSlice("queue"), Name: c.String("name")}
	if q.Count < 0 {
		return exitcode.UsageErrorf("--count must be >= 0")
	}
	for _, a := range c.Args().Slice() {
		id, err := parseID(a)
		if err != nil {
			return err
		}
		q.IDs = append(q.IDs, id)
	}
	if err := parseFilter(c.StringSlice("filter"), &q); err != nil {
		return err
	}
	if c.Bool("a") {
		q.States |= job.Pending | job.Running | job.Inactive
	}
	if q.States == 0 && len(q.IDs) > 0 {
		q.States = job.All // listed by id: whatever their state
	}
	switch u := c.String("user"); {
	case c.Bool("A") || u == "all":
		q.AllUsers = true
	case u != "":
		uid, err := lookupUser(u)
		if err != nil {
			return err
		}
		q.UserID = &uid
	}
	p, err := printer(c)
	if err != nil {
		return err
	}
	cl, err := e.connect(c)
	if err != nil {
		return err
	}
	defer cl.Close()
	defer listingGC()()
	list, err := cl.Jobs(c.Context, q)
	if err != nil {
		return e.whichUnknown(c, cl, q, err)
	}
	items := make([]*api.JobSummary, 0, len(list))
	withQueue := false
	for i := range list {
		s := &list[i]
		withQueue = withQueue || s.Queue != ""
		items = append(items, s)
	}
	return output.PrintList(p, e.jobsList(e.now(), withQueue), items)
}

// listingGCPercent is the collector's pace while fluxq jobs reads and
// prints: what it allocates (the summaries, their JSON, the rows) is
// nearly all live until it exits, so Go's default collected it over and
// over for little: a third of the CPU of a listing of 100,000 jobs
// through the socket, in a profile. With it (and the listing in parts),
// that listing's peak is 238 MB, against 215 before (bench/listings.sh).
const listingGCPercent = 400

// listingGC sets listingGCPercent, unless $GOGC says otherwise; call the
// result to put the pace back.
func listingGC() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(listingGCPercent)
	return func() { debug.SetGCPercent(old) }
}

// statsOnly is flux jobs --stats-only: the counts of every user's jobs
// on one line, and an exit status a script can loop on (`while fluxq
// jobs --stats-only; do sleep 1; done` waits for the instance to empty).
func (e *env) statsOnly(c *cli.Context) error {
	st, err := e.stats(c)
	if err != nil {
		return err
	}
	pending := st.States[job.Depend.String()] + st.States[job.Priority.String()] + st.States[job.Sched.String()]
	running := st.States[job.Run.String()] + st.States[job.Cleanup.String()]
	completed := st.Results[job.Completed.String()]
	// Flux's failed: every inactive job that did not complete.
	failed := st.States[job.Inactive.String()] - completed
	if _, err := fmt.Fprintf(stdout(c), "%d running, %d completed, %d failed, %d pending\n", running, completed, failed, pending); err != nil {
		return err
	}
	if pending+running == 0 {
		return exitcode.Silent(exitcode.Failed)
	}
	return nil
}

// whichUnknown turns a failed listing by id into a message naming the
// first id that does not exist.
func (e *env) whichUnknown(c *cli.Context, cl client.Client, q api.JobsQuery, err error) error {
	if len(q.IDs) == 0 || !errors.Is(err, api.ErrUnknownJob) {
		return err
	}
	for _, id := range q.IDs {
		one := q
		one.IDs = []fluid.ID{id}
		if _, err1 := cl.Jobs(c.Context, one); err1 != nil {
			return fmt.Errorf("%s: %w", e.typedID(c, id), err1)
		}
	}
	return err
}

// parseFilter reads -f: states (virtual ones too) and results, as flux
// jobs does; results select inactive jobs that ended so.
func parseFilter(words []string, q *api.JobsQuery) error {
	for _, w := range words {
		w = strings.TrimSpace(w)
		if w == "" {
			continue
		}
		if st, err := job.ParseStates(w); err == nil {
			q.States |= st
			continue
		}
		r, err := job.ParseResult(w)
		if err != nil {
			return exitcode.UsageErrorf("--filter: invalid state or result %q", w)
		}
		q.States |= job.Inactive
		q.Results = append(q.Results, r)
	}
	// A result only narrows inactive jobs: with "inactive" itself named,
	// every inactive job is wanted.
	for _, w := range words {
		if st, err := job.ParseStates(w); err == nil && st&job.Inactive != 0 {
			q.Results = nil
		}
	}
	return nil
}
