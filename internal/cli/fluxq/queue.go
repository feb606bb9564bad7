package fluxq

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/cli/output"
	"github.com/fluxq/fluxq/internal/cli/printable"
	"github.com/fluxq/fluxq/internal/cli/progress"
	"github.com/fluxq/fluxq/internal/fsd"
	"github.com/fluxq/fluxq/internal/queue"
)

// queueCommand is fluxq queue: RFC 33's administrative tools, with flux
// queue's subcommands, flags and messages (docs/cli.md "Queues").
func (e *env) queueCommand() *cli.Command {
	all := &cli.BoolFlag{Name: "all", Aliases: []string{"a"}, Usage: "every queue", DisableDefaultText: true}
	reason := &cli.StringFlag{Name: "message", Aliases: []string{"m"}, Usage: "why, as `REASON`: status shows it", DefaultText: "for disable, 'disabled by administrator'; for stop, none"}
	nocheckpoint := &cli.BoolFlag{Name: "nocheckpoint", Usage: "leave the state a restart comes back to alone", DisableDefaultText: true}
	timeout := &cli.StringFlag{Name: "timeout", Aliases: []string{"t"}, Usage: "give up after `FSD` (e.g. 30s, 10m; a bare number means seconds) and exit 1", DefaultText: "wait as long as it takes"}
	return &cli.Command{
		Name:      "queue",
		Usage:     "list queues, show their status, and administer them (RFC 33)",
		ArgsUsage: "COMMAND",
		Description: `Shows and changes the state of the instance's queues (RFC 33), as flux
queue does. Each queue has two switches: enable/disable says whether it
takes submissions, start/stop whether its jobs are scheduled. Named
queues start enabled and stopped; the anonymous queue starts enabled and
started. Only the instance owner may change queue state. 'fluxq help
queues' explains queues, their limits and defaults.

EXAMPLES:
  # Queues with their limits and state
  $ fluxq queue list

  # Open every named queue for scheduling
  $ fluxq queue start --all

  # Stop taking debug jobs for a while
  $ fluxq queue disable -m 'maintenance window' debug`,
		Subcommands: []*cli.Command{
			{
				Name:      "list",
				Usage:     "list queues with their limits and state",
				ArgsUsage: " ",
				Description: `One line per queue: QUEUE (the default carries a *), PARENT, EN
(enabled) and ST (started) as ✔ or ✗, TDEFAULT and TLIMIT (default and
maximum time limit), and the NNODES, NCORES and NGPUS a job may ask for
(min-max). Use it to see where a job may go and what it may ask.

EXAMPLES:
  # Every queue
  $ fluxq queue list

  # Two queues, without the header, for a script
  $ fluxq queue list -q batch,debug -n`,
				Flags: append([]cli.Flag{
					&cli.StringSliceFlag{Name: "queue", Aliases: []string{"q"}, Usage: "only these `QUEUES`", DefaultText: "every queue"},
				}, output.ListFlags()...),
				Action: action(e.queueList),
			},
			{
				Name:      "status",
				Usage:     "show whether queues take submissions and are scheduled",
				ArgsUsage: "[QUEUE]",
				Description: `Prints two lines per queue, prefixed NAME: when queues are named:
"Job submission is enabled" or "disabled: REASON", and "Scheduling is
started" or "stopped: REASON". Without QUEUE, every queue. -v adds how
many alloc requests are queued and pending, and how many jobs run.

EXAMPLES:
  # Every queue's state
  $ fluxq queue status

  # One queue, with its job counts
  $ fluxq queue status -v batch`,
				Flags:  []cli.Flag{&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "add job counts", DisableDefaultText: true}},
				Action: action(e.queueStatus),
			},
			{Name: "enable", Usage: "let jobs be submitted to a queue", ArgsUsage: "[QUEUE]",
				Description: `Lets jobs be submitted to QUEUE again after disable; prints the
submission line of status. Enabling does not start scheduling: see start.
With named queues, name a QUEUE or give --all.

EXAMPLES:
  # Take debug jobs again
  $ fluxq queue enable debug

  # Every queue
  $ fluxq queue enable --all`,
				Flags: []cli.Flag{all}, Action: action(e.queueChange(true, false, true))},
			{Name: "disable", Usage: "refuse jobs submitted to a queue", ArgsUsage: "[QUEUE]",
				Description: `Refuses new submissions to QUEUE, with "job submission to QUEUE is
disabled: REASON"; the jobs it holds still run. Use it before
maintenance, with stop, or to retire a queue. With named queues, name a
QUEUE or give --all.

EXAMPLES:
  # Refuse new debug jobs, and say why
  $ fluxq queue disable -m 'maintenance window' debug

  # Refuse everything, for a shutdown
  $ fluxq queue disable --all -m 'shutdown at 18:00'`,
				Flags: []cli.Flag{all, reason}, Action: action(e.queueChange(true, false, false))},
			{Name: "start", Usage: "schedule a queue's jobs", ArgsUsage: "[QUEUE]",
				Description: `Schedules QUEUE's pending jobs again, or for the first time: named
queues start stopped. The state survives restarts unless --nocheckpoint.
With named queues, name a QUEUE or give --all.

EXAMPLES:
  # Open every named queue after the first start
  $ fluxq queue start --all

  # Start batch until the next restart only
  $ fluxq queue start --nocheckpoint batch`,
				Flags: []cli.Flag{all, nocheckpoint}, Action: action(e.queueChange(false, true, true))},
			{Name: "stop", Usage: "stop scheduling a queue's jobs (pending allocations are canceled)", ArgsUsage: "[QUEUE]",
				Description: `Stops scheduling QUEUE: its pending jobs stay pending, allocation
requests already sent to the scheduler are withdrawn, and running jobs go
on. The queue still takes submissions (see disable). Use it to hold
work back without refusing it.

EXAMPLES:
  # Hold the batch queue, and say why
  $ fluxq queue stop -m 'admin hold' batch

  # Hold everything until the next restart only
  $ fluxq queue stop --all --nocheckpoint`,
				Flags: []cli.Flag{all, reason, nocheckpoint}, Action: action(e.queueChange(false, true, false))},
			{
				Name:      "drain",
				Usage:     "wait until a queue, or the instance, has no active job",
				ArgsUsage: "[QUEUE]",
				Description: `Waits until QUEUE (without it, the whole instance) has no active job:
nothing pending, running or cleaning up. Use it after disable, to know
when a queue has emptied. On -t expiry it exits 1 with "drain: timeout".
On a terminal it shows progress.

EXAMPLES:
  # Empty the debug queue: refuse new jobs, wait for the rest
  $ fluxq queue disable debug
  $ fluxq queue drain debug

  # Wait at most ten minutes for the instance to empty
  $ fluxq queue drain -t 10m`,
				Flags:  []cli.Flag{timeout},
				Action: action(e.queueWait(false)),
			},
			{
				Name:      "idle",
				Usage:     "wait until nothing runs and no allocation is pending in a queue, or the instance",
				ArgsUsage: "[QUEUE]",
				Description: `Waits until no job of QUEUE (without it, of the instance) is in RUN or
CLEANUP and no allocation is pending, then prints "N jobs" still
pending. Use it after stop, to know when a queue has gone quiet. On -t
expiry it exits 1 with "idle: timeout". On a terminal it shows progress.

EXAMPLES:
  # Stop batch and wait for its running jobs to end
  $ fluxq queue stop batch
  $ fluxq queue idle batch

  # Wait at most ten minutes, print nothing if no job is pending
  $ fluxq queue idle -t 10m --quiet`,
				Flags:  []cli.Flag{timeout, &cli.BoolFlag{Name: "quiet", Usage: "print nothing when no job is pending", DisableDefaultText: true}},
				Action: action(e.queueWait(true)),
			},
		},
	}
}

// queueArg is the optional QUEUE argument.
func queueArg(c *cli.Context) (string, error) {
	switch c.NArg() {
	case 0:
		return "", nil
	case 1:
		return c.Args().First(), nil
	}
	return "", exitcode.UsageErrorf("expected at most one QUEUE, got %d arguments", c.NArg())
}

// queueLines prints lines for the queues, prefixed with the queue's name
// when queues are named.
func queueLines(w io.Writer, set *queue.Set, names []string, line func(name string) []string) {
	for _, n := range names {
		for _, l := range line(n) {
			// A stop reason is the owner's text: cleaned as every text output.
			l = printable.String(l)
			if set.Named() {
				fmt.Fprintf(w, "%s: %s\n", printable.String(n), l)
			} else {
				fmt.Fprintln(w, l)
			}
		}
	}
}

func (e *env) queueStatus(c *cli.Context) error {
	name, err := queueArg(c)
	if err != nil {
		return err
	}
	cl, err := e.connect(c)
	if err != nil {
		return err
	}
	defer cl.Close()
	qi, err := cl.Queues(c.Context)
	if err != nil {
		return err
	}
	names := qi.Set.Names()
	if name != "" {
		if names, err = qi.Set.Lookup(name, false); err != nil {
			return err
		}
	}
	queueLines(stdout(c), qi.Set, names, func(n string) []string {
		lines := []string{queue.SubmissionLine(qi.States[n]), qi.Set.SchedulingLine(qi.States, n)}
		if c.Bool("verbose") {
			ct := qi.Counts[n]
			lines = append(lines,
				fmt.Sprintf("%d alloc requests queued", ct.Queued),
				fmt.Sprintf("%d alloc requests pending to scheduler", ct.Pending),
				fmt.Sprintf("%d running jobs", ct.Running))
		}
		return lines
	})
	return nil
}

// queueChange is enable/disable (submission) or start/stop (scheduling).
func (e *env) queueChange(submission, scheduling, on bool) func(c *cli.Context) error {
	return func(c *cli.Context) error {
		name, err := queueArg(c)
		if err != nil {
			return err
		}
		ch := api.QueueChange{Queue: name, All: c.Bool("all"), Reason: c.String("message"), NoCheckpoint: c.Bool("nocheckpoint")}
		if submission {
			ch.Enable = &on
		}
		if scheduling {
			ch.Start = &on
		}
		cl, err := e.connect(c)
		if err != nil {
			return err
		}
		defer cl.Close()
		qi, err := cl.ChangeQueues(c.Context, ch)
		if err != nil {
			return err
		}
		queueLines(stdout(c), qi.Set, qi.Changed, func(n string) []string {
			if submission {
				return []string{queue.SubmissionLine(qi.States[n])}
			}
			return []string{qi.Set.SchedulingLine(qi.States, n)}
		})
		return nil
	}
}

// queueWait is drain (until no job is active) or idle (until nothing runs
// and no allocation is pending).
func (e *env) queueWait(idle bool) func(c *cli.Context) error {
	return func(c *cli.Context) error {
		name, err := queueArg(c)
		if err != nil {
			return err
		}
		ctx := c.Context
		if t := c.String("timeout"); t != "" {
			d, err := fsd.ParseBounded(t)
			if err != nil {
				return exitcode.UsageErrorf("--timeout: %v", err)
			}
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, fsd.Duration(d))
			defer cancel()
		}
		cl, err := e.connect(c)
		if err != nil {
			return err
		}
		defer cl.Close()
		pl := e.queueProgress(c, idle)
		counts, err := cl.WaitQueues(ctx, api.QueueWait{Queue: name, Idle: idle}, pl.show)
		pl.done()
		if errors.Is(err, context.DeadlineExceeded) && c.Context.Err() == nil {
			return errors.New("timeout")
		}
		if err != nil {
			return err
		}
		if idle && (counts.Waiting > 0 || !c.Bool("quiet")) {
			// As flux queue idle prints it, "1 jobs" included.
			fmt.Fprintf(stdout(c), "%d jobs\n", counts.Waiting)
		}
		return nil
	}
}

// queueLine is drain's or idle's progress line on a terminal: what is
// left, and how long the command has waited, redrawn as either changes
// ("drain: 12 active jobs (3 running) 12s"). Off a terminal it is
// silent, so scripts read only the result.
type queueLine struct {
	line  *progress.Line
	idle  bool
	now   func() time.Time
	start time.Time

	mu     sync.Mutex
	counts *api.QueueCounts // nil until the first counts come
}

func (e *env) queueProgress(c *cli.Context, idle bool) *queueLine {
	p := &queueLine{line: progress.New(stderr(c)), idle: idle, now: e.now, start: e.now()}
	// A tick, not each change, draws: the clock moves while nothing else
	// does.
	p.line.Tick(p.text)
	return p
}

// show hears the counts as the instance reports them.
func (p *queueLine) show(ct api.QueueCounts) {
	p.mu.Lock()
	p.counts = &ct
	p.mu.Unlock()
}

// text is the line now.
func (p *queueLine) text() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	verb := "drain"
	if p.idle {
		verb = "idle"
	}
	waited := progress.Duration(p.now().Sub(p.start).Truncate(time.Second))
	switch {
	case p.counts == nil:
		return fmt.Sprintf("%s: counting jobs %s", verb, waited)
	case p.idle:
		ct := p.counts
		return fmt.Sprintf("idle: %d running, %d alloc pending (%d jobs waiting) %s", ct.Running, ct.Pending, ct.Waiting, waited)
	}
	return fmt.Sprintf("drain: %s (%d running) %s", plural(p.counts.Active, "active job"), p.counts.Running, waited)
}

// done erases the line.
func (p *queueLine) done() { p.line.Done() }

// queueRow is one queue as fluxq queue list shows it.
type queueRow struct {
	Name          string      `json:"name"`
	Default       bool        `json:"default"`
	Parent        string      `json:"parent,omitempty"`
	Enabled       bool        `json:"enabled"`
	Started       bool        `json:"started"`
	DisableReason string      `json:"disable_reason,omitempty"`
	StopReason    string      `json:"stop_reason,omitempty"`
	Requires      []string    `json:"requires,omitempty"`
	TDefault      float64     `json:"default_duration"` // 0: none
	TLimit        float64     `json:"duration_limit"`   // 0: unlimited
	Max           queue.Sizes `json:"max"`              // -1: unlimited
	Min           queue.Sizes `json:"min"`
	// The memory policy in bytes: each slot's default (0: none) and the
	// bounds on a job's total (0: none). Keys of their own, not in max
	// and min, whose -1 means unlimited.
	DefaultMemory uint64          `json:"default_memory"`
	MaxMemory     uint64          `json:"max_memory"`
	MinMemory     uint64          `json:"min_memory"`
	Counts        api.QueueCounts `json:"counts"`
	Scheduler     map[string]any  `json:"scheduler,omitempty"`
}

func (e *env) queueList(c *cli.Context) error {
	if c.NArg() > 0 {
		return exitcode.UsageErrorf("list takes no arguments (got %q); use -q QUEUE", c.Args().First())
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
	qi, err := cl.Queues(c.Context)
	if err != nil {
		return err
	}
	names := qi.Set.Names()
	// urfave/cli splits -q a,b into a and b.
	if want := slices.DeleteFunc(c.StringSlice("queue"), func(n string) bool { return n == "" }); len(want) > 0 {
		names = nil
		for _, n := range want {
			if _, err := qi.Set.Lookup(n, false); err != nil {
				return err
			}
			names = append(names, n)
		}
	}
	rows := make([]*queueRow, 0, len(names))
	for _, n := range names {
		q, _ := qi.Set.Queue(n)
		st := qi.Set.StateOf(qi.States, n)
		started, _ := qi.Set.Scheduling(qi.States, n)
		rows = append(rows, &queueRow{
			Name: n, Default: n != "" && n == qi.Set.Default(), Parent: q.Parent,
			Enabled: st.Enabled, Started: started, DisableReason: st.DisableReason, StopReason: st.StopReason,
			Requires: q.Requires, TDefault: q.DefaultDuration, TLimit: q.MaxDuration, Max: q.Max, Min: q.Min,
			DefaultMemory: q.DefaultMemory, MaxMemory: q.MaxMemory, MinMemory: q.MinMemory,
			Counts: qi.Counts[n], Scheduler: q.Scheduler,
		})
	}
	return output.PrintList(p, queueListing(), rows)
}

func queueListing() output.List[*queueRow] {
	type col = output.Column[*queueRow]
	check := func(b bool) string {
		if b {
			return "✔"
		}
		return "✗"
	}
	cols := []col{
		{Header: "QUEUE", Value: func(r *queueRow) string {
			if r.Default {
				return r.Name + "*"
			}
			return r.Name
		}},
		{Header: "PARENT", Value: func(r *queueRow) string { return r.Parent }},
		{Header: "EN", Value: func(r *queueRow) string { return check(r.Enabled) }},
		{Header: "ST", Value: func(r *queueRow) string { return check(r.Started) }},
		{Header: "TDEFAULT", Align: output.Right, Value: func(r *queueRow) string { return durationCell(r.TDefault) }},
		{Header: "TLIMIT", Align: output.Right, Value: func(r *queueRow) string { return durationCell(r.TLimit) }},
		{Header: "NNODES", Align: output.Right, Value: func(r *queueRow) string { return sizeRange(r.Min.NNodes, r.Max.NNodes) }},
		{Header: "NCORES", Align: output.Right, Value: func(r *queueRow) string { return sizeRange(r.Min.NCores, r.Max.NCores) }},
		{Header: "NGPUS", Align: output.Right, Value: func(r *queueRow) string { return sizeRange(r.Min.NGPUs, r.Max.NGPUs) }},
	}
	return output.List[*queueRow]{
		Tables: map[string]output.Table[*queueRow]{
			"default": {Description: "QUEUE PARENT EN ST TDEFAULT TLIMIT NNODES NCORES NGPUS", Columns: cols},
		},
		Order: []string{"default"},
		Doc: func(rows []*queueRow) any {
			return struct {
				Queues []*queueRow `json:"queues"`
			}{rows}
		},
		Item:  func(r *queueRow) any { return r },
		Shape: queueRow{},
	}
}

// durationCell is a duration column: "inf" when there is none, as flux
// queue list prints it.
func durationCell(sec float64) string {
	if sec <= 0 {
		return "inf"
	}
	return fsd.FormatExact(sec)
}

// sizeRange is a job-size column: min-max, "inf" for no maximum.
func sizeRange(min, max int64) string {
	lo := "0"
	if min > 0 {
		lo = strconv.FormatInt(min, 10)
	}
	hi := "inf"
	if max != queue.Unlimited {
		hi = strconv.FormatInt(max, 10)
	}
	return lo + "-" + hi
}
