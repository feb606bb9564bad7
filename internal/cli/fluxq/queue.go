package fluxq

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/cli/output"
	"github.com/fluxq/fluxq/internal/client"
	"github.com/fluxq/fluxq/internal/fsd"
	"github.com/fluxq/fluxq/internal/ops"
	"github.com/fluxq/fluxq/internal/queue"
)

// queueCommand is fluxq queue: RFC 33's administrative tools, with flux
// queue's subcommands, flags and messages (CLI.md "Queues").
func (e *env) queueCommand() *cli.Command {
	all := &cli.BoolFlag{Name: "all", Aliases: []string{"a"}, Usage: "every queue", DisableDefaultText: true}
	reason := &cli.StringFlag{Name: "message", Aliases: []string{"m"}, Usage: "the `REASON`, shown by status"}
	nocheckpoint := &cli.BoolFlag{Name: "nocheckpoint", Usage: "leave the state a restart comes back to alone", DisableDefaultText: true}
	timeout := &cli.StringFlag{Name: "timeout", Aliases: []string{"t"}, Usage: "give up after `FSD` (exit 1)"}
	return &cli.Command{
		Name:  "queue",
		Usage: "list queues, show their status, and administer them (RFC 33)",
		Description: "Named queues start enabled and stopped; the anonymous queue starts enabled\n" +
			"and started. Only the instance owner may change queue state.",
		Subcommands: []*cli.Command{
			{
				Name:      "list",
				Usage:     "list queues with their limits and state",
				ArgsUsage: " ",
				Flags: append([]cli.Flag{
					&cli.StringSliceFlag{Name: "queue", Aliases: []string{"q"}, Usage: "only these `QUEUES`"},
				}, output.ListFlags()...),
				Action: action(e.queueList),
			},
			{
				Name:      "status",
				Usage:     "show whether queues take submissions and are scheduled",
				ArgsUsage: "[QUEUE]",
				Flags:     []cli.Flag{&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "add job counts", DisableDefaultText: true}},
				Action:    action(e.queueStatus),
			},
			{Name: "enable", Usage: "let jobs be submitted to a queue", ArgsUsage: "[QUEUE]", Flags: []cli.Flag{all}, Action: action(e.queueChange(true, false, true))},
			{Name: "disable", Usage: "refuse jobs submitted to a queue", ArgsUsage: "[QUEUE]", Flags: []cli.Flag{all, reason}, Action: action(e.queueChange(true, false, false))},
			{Name: "start", Usage: "schedule a queue's jobs", ArgsUsage: "[QUEUE]", Flags: []cli.Flag{all, nocheckpoint}, Action: action(e.queueChange(false, true, true))},
			{Name: "stop", Usage: "stop scheduling a queue's jobs (pending allocations are canceled)", ArgsUsage: "[QUEUE]", Flags: []cli.Flag{all, reason, nocheckpoint}, Action: action(e.queueChange(false, true, false))},
			{
				Name:      "drain",
				Usage:     "wait until a queue, or the instance, has no active job",
				ArgsUsage: "[QUEUE]",
				Flags:     []cli.Flag{timeout},
				Action:    action(e.queueWait(false)),
			},
			{
				Name:      "idle",
				Usage:     "wait until nothing runs and no allocation is pending in a queue, or the instance",
				ArgsUsage: "[QUEUE]",
				Flags:     []cli.Flag{timeout, &cli.BoolFlag{Name: "quiet", Usage: "print nothing when no job is pending", DisableDefaultText: true}},
				Action:    action(e.queueWait(true)),
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
			if set.Named() {
				fmt.Fprintf(w, "%s: %s\n", n, l)
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
		ch := ops.QueueChange{Queue: name, All: c.Bool("all"), Reason: c.String("message"), NoCheckpoint: c.Bool("nocheckpoint")}
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
			d, err := fsd.Parse(t)
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
		progress := e.queueProgress(c, idle)
		counts, err := cl.WaitQueues(ctx, client.QueueWait{Queue: name, Idle: idle}, progress.show)
		progress.done()
		if errors.Is(err, context.DeadlineExceeded) && c.Context.Err() == nil {
			return errors.New("timeout")
		}
		if err != nil {
			return err
		}
		if idle && (counts.Waiting > 0 || !c.Bool("quiet")) {
			fmt.Fprintf(stdout(c), "%d jobs pending\n", counts.Waiting)
		}
		return nil
	}
}

// progressLine rewrites one status line on a terminal; elsewhere it is
// silent, so scripts read only the result.
type progressLine struct {
	w     io.Writer
	idle  bool
	shown bool
}

func (e *env) queueProgress(c *cli.Context, idle bool) *progressLine {
	w := stderr(c)
	if !output.IsTerminal(w) {
		return &progressLine{}
	}
	return &progressLine{w: w, idle: idle}
}

func (p *progressLine) show(ct client.QueueCounts) {
	if p.w == nil {
		return
	}
	var msg string
	if p.idle {
		msg = fmt.Sprintf("idle: %d running, %d alloc pending, %d waiting", ct.Running, ct.Pending, ct.Waiting)
	} else {
		msg = fmt.Sprintf("drain: %d active jobs (%d running)", ct.Active, ct.Running)
	}
	fmt.Fprintf(p.w, "\r\033[K%s", msg)
	p.shown = true
}

func (p *progressLine) done() {
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// queueRow is one queue as fluxq queue list shows it.
type queueRow struct {
	Name          string             `json:"name"`
	Default       bool               `json:"default"`
	Parent        string             `json:"parent,omitempty"`
	Enabled       bool               `json:"enabled"`
	Started       bool               `json:"started"`
	DisableReason string             `json:"disable_reason,omitempty"`
	StopReason    string             `json:"stop_reason,omitempty"`
	Requires      []string           `json:"requires,omitempty"`
	TDefault      float64            `json:"default_duration"` // 0: none
	TLimit        float64            `json:"duration_limit"`   // 0: unlimited
	Max           queue.Sizes        `json:"max"`              // -1: unlimited
	Min           queue.Sizes        `json:"min"`
	Counts        client.QueueCounts `json:"counts"`
	Scheduler     map[string]any     `json:"scheduler,omitempty"`
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
		Item: func(r *queueRow) any { return r },
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
