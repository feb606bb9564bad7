package fluxq

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/cli/instance"
	"github.com/fluxq/fluxq/internal/cli/output"
	"github.com/fluxq/fluxq/internal/cli/top"
	"github.com/fluxq/fluxq/internal/client"
	"github.com/fluxq/fluxq/internal/fsd"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/state"
)

// The header counts jobs that ended within topInactiveWindow, reading at
// most topInactiveCap of them per refresh (newest first), so that an
// instance with 100,000 finished jobs costs a refresh no more than a
// thousand.
const (
	topInactiveWindow = time.Hour
	topInactiveCap    = 1000
)

// topRows is the most rows of each job table a snapshot formats: more
// than a terminal shows; the rest count in "+N more".
const topRows = 500

// topDefaultDelay is flux top's refresh interval.
const topDefaultDelay = "2s"

// policyKey is the key of a policy.scheduler table that names the queue
// policy (fcfs, easy, hybrid, conservative).
const policyKey = "policy"

// newScreen opens the terminal; tests put a simulation screen here.
var newScreen = tcell.NewScreen

// isTerminal reports whether the command's stdout is a terminal; tests
// replace it along with newScreen.
var isTerminal = output.IsTerminal

func (e *env) topCommand() *cli.Command {
	return &cli.Command{
		Name:      "top",
		Usage:     "a live view of the instance: resources in use, queues, running and pending jobs",
		ArgsUsage: " ",
		Description: `Shows the instance on one screen, as top does for processes: resources
in use, queues, running and pending jobs of every user. Use it to watch
a busy instance. Refreshes every --delay and at once on 'r'; 'q' or
Ctrl-C quits. Rows that do not fit are cut with a '+N more' line. When
the instance cannot be read, the error shows in the header and top keeps
retrying. Without a terminal, --once prints one snapshot instead.

EXAMPLES:
  # Watch the instance, refreshed every second
  $ fluxq top -d 1s

  # One snapshot as text, e.g. for a report
  $ fluxq top --once > snapshot.txt`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "delay", Aliases: []string{"d"}, Value: topDefaultDelay, Usage: "refresh every `FSD`, e.g. 500ms, 5s (a bare number means seconds)"},
			&cli.BoolFlag{Name: "once", Usage: "print one snapshot as plain text and exit (no terminal needed)", DisableDefaultText: true},
		},
		Action: action(e.top),
	}
}

func (e *env) top(c *cli.Context) error {
	if c.NArg() > 0 {
		return exitcode.UsageErrorf("unexpected argument %q", c.Args().First())
	}
	sec, err := fsd.ParseBounded(c.String("delay"))
	if err != nil {
		return exitcode.UsageErrorf("--delay: %v", err)
	}
	delay := fsd.Duration(sec)
	if sec <= 0 || delay <= 0 || sec > fsd.Seconds(24*time.Hour) {
		return exitcode.UsageErrorf("--delay: %s is not a refresh interval (from 1ms to 1d)", c.String("delay"))
	}
	timeout, err := instance.Timeout(c)
	if err != nil {
		return err
	}
	title, err := instance.StateDir(c)
	if err != nil {
		return err
	}
	fetch := func(ctx context.Context) (*top.Snapshot, error) { return e.topFetch(ctx, c) }

	if c.Bool("once") {
		ctx, cancel := context.WithTimeout(c.Context, timeout)
		defer cancel()
		snap, err := fetch(ctx)
		if errors.Is(err, client.ErrUnavailable) {
			return exitcode.WithCode(exitcode.Unavailable, err)
		}
		if err != nil {
			return err
		}
		st := top.Status{Title: title, Updated: e.now()}
		_, err = fmt.Fprint(stdout(c), top.Text(top.Layout(snap, st, top.Plain, 0, 0)))
		return err
	}

	if !isTerminal(stdout(c)) {
		return exitcode.UsageErrorf("needs a terminal")
	}
	colour, err := output.ColorEnabled(c.String(instance.FlagColor), stdout(c), e.getenv("NO_COLOR"))
	if err != nil {
		return err
	}
	styles := top.Plain
	if colour {
		styles = top.Colored
	}
	s, err := newScreen()
	if err != nil {
		return fmt.Errorf("cannot open the terminal: %w", err)
	}
	// SIGINT and SIGTERM (Ctrl-C arrives as a key while the screen is
	// raw) end top like 'q': the terminal is restored, the status is 0.
	ctx, signals, stop := e.interruptible(c)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-signals:
			cancel()
		case <-ctx.Done():
		}
	}()
	return top.Run(ctx, s, top.Options{
		Fetch: fetch, Timeout: timeout, Delay: delay, Title: title, Styles: styles, Now: e.now,
	})
}

// topFetch reads one snapshot: the same listings as fluxq jobs -A,
// fluxres list and fluxq queue list.
func (e *env) topFetch(ctx context.Context, c *cli.Context) (*top.Snapshot, error) {
	cl, err := e.connect(c)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	active, err := cl.Jobs(ctx, api.JobsQuery{States: job.Active, AllUsers: true})
	if err != nil {
		return nil, err
	}
	ended, err := cl.Jobs(ctx, api.JobsQuery{States: job.Inactive, AllUsers: true, Count: topInactiveCap})
	if err != nil {
		return nil, err
	}
	res, err := cl.Resources(ctx)
	if err != nil {
		return nil, err
	}
	qi, err := cl.Queues(ctx)
	if err != nil {
		return nil, err
	}
	return e.topSnapshot(e.now(), append(active, ended...), res, qi)
}

// topSnapshot formats what the instance said for the screen at time now:
// jobs (active ones and recently ended ones, in listing order), the
// resources, and the queues (nil: none known).
func (e *env) topSnapshot(now time.Time, jobs []api.JobSummary, res *api.ResourceInfo, qi *api.QueueInfo) (*top.Snapshot, error) {
	snap := &top.Snapshot{InactiveWindow: fsd.FormatExact(topInactiveWindow.Seconds())}
	gauges, err := topGauges(res)
	if err != nil {
		return nil, err
	}
	snap.Gauges = gauges

	if qi != nil && qi.Set != nil {
		set := qi.Set
		if p, ok := set.Tables().Policy.Scheduler[policyKey].(string); ok {
			snap.Policy = p
		}
		if set.Named() {
			snap.WithQueue = true
			for _, n := range set.Names() {
				q, _ := set.Queue(n)
				started, _ := set.Scheduling(qi.States, n)
				row := top.Queue{
					Name: n, Default: n == set.Default(), Enabled: set.StateOf(qi.States, n).Enabled, Started: started,
					Running: qi.Counts[n].Running, Pending: qi.Counts[n].Waiting,
				}
				if q != nil {
					row.Policy, _ = q.Scheduler[policyKey].(string)
				}
				snap.Queues = append(snap.Queues, row)
			}
		}
	}

	since := state.Timestamp(now.Add(-topInactiveWindow))
	ended := 0
	for i := range jobs {
		s := &jobs[i]
		snap.WithQueue = snap.WithQueue || s.Queue != ""
		switch {
		case s.State == job.Inactive:
			ended++
			if s.TInactive >= since {
				snap.Inactive++
			}
		case pending(s):
			snap.Pending++
			if len(snap.PendingJobs) < topRows {
				snap.PendingJobs = append(snap.PendingJobs, e.topJob(s, now))
			}
		default:
			snap.Running++
			if len(snap.RunningJobs) < topRows {
				snap.RunningJobs = append(snap.RunningJobs, e.topJob(s, now))
			}
		}
	}
	// Every job read ended within the window, and there may be more.
	snap.InactiveMore = ended >= topInactiveCap && snap.Inactive == ended
	return snap, nil
}

// topJob is one row of either job table, in fluxq jobs' words: the INFO
// column (eta, hold, reason; the nodelist once running) is contextualInfo.
func (e *env) topJob(s *api.JobSummary, now time.Time) top.Job {
	return top.Job{
		ID: e.fmtID(s.ID), Queue: s.Queue, User: e.userName(s.UserID), Name: s.Name,
		NTasks: countCell(s.NTasks), NNodes: countCell(s.NNodes), Time: contextualTime(s, now),
		Priority: strconv.FormatInt(s.Priority, 10), Info: contextualInfo(s, now),
	}
}

// topGauges are nodes, cores, GPUs and memory held by jobs out of the
// instance's; GPUs and memory only when it has some. No inventory (an instance never started)
// shows no gauge.
func topGauges(res *api.ResourceInfo) ([]top.Gauge, error) {
	if res == nil || len(res.Inventory) == 0 {
		return nil, nil
	}
	inv, err := rset.Parse(res.Inventory)
	if err != nil {
		return nil, fmt.Errorf("inventory: %w", err)
	}
	held := &rset.R{}
	if len(res.Allocated) > 0 {
		if held, err = rset.Parse(res.Allocated); err != nil {
			return nil, fmt.Errorf("allocated resources: %w", err)
		}
	}
	nodes, cores, gpus := inv.Counts()
	unodes, ucores, ugpus := held.Counts()
	g := []top.Gauge{
		{Name: "nodes", Used: unodes, Total: nodes},
		{Name: "cores", Used: ucores, Total: cores},
	}
	if n := len(res.Drained); n > 0 {
		g[0].Note = strconv.Itoa(n) + " drained"
	}
	if gpus > 0 {
		g = append(g, top.Gauge{Name: "gpus", Used: ugpus, Total: gpus})
	}
	if mem := inv.Memory(); mem > 0 {
		used := held.Memory()
		g = append(g, top.Gauge{Name: "memory", Used: clampInt(used), Total: clampInt(mem),
			UsedText: jobspec.FormatMemory(used), TotalText: jobspec.FormatMemory(mem)})
	}
	return g, nil
}

// clampInt is n as an int, the largest int for more: a gauge's bar needs
// only the ratio, and its text is printed from n itself.
func clampInt(n uint64) int {
	if n > math.MaxInt {
		return math.MaxInt
	}
	return int(n)
}
