package fluxq

import (
	"fmt"
	"slices"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/cli/progress"
	"github.com/fluxq/fluxq/internal/client"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
)

func (e *env) waitCommand() *cli.Command {
	return &cli.Command{
		Name:      "wait",
		Usage:     "wait for a job (exit with its exit code) or for all of yours (--all)",
		ArgsUsage: "[ID]",
		Description: `With ID: waits until the job is inactive and exits with its exit code
(128+N for signal N; 1 if it ended before its tasks did), saying why it
failed on stderr. With --all: reports every one of the caller's jobs not
waited for yet, those that ended before it began as well as those still
active (a wait, run or submit --wait takes the jobs it reports, as
Flux's wait takes a waitable job); exits 0 if all succeeded, 1 otherwise,
naming each failure on stderr. A --retry job's chain is waited for to
its last run, whose result is the chain's. Use it in scripts, after
submit, where the next step needs the jobs done.

EXAMPLES:
  # Submit, do something else, then collect the job's exit code
  $ id=$(fluxq submit ./sim)
  $ fluxq wait $id

  # Eight jobs, then wait for them all
  $ fluxq submit --cc 1-8 --quiet ./sim input{cc}.dat
  $ fluxq wait --all -v`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "all", Aliases: []string{"a"}, Usage: "wait for all of the caller's jobs not waited for yet", DisableDefaultText: true},
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "with --all, say how many jobs it waits for and name those that succeed too", DisableDefaultText: true},
		},
		Action: action(e.wait),
	}
}

func (e *env) wait(c *cli.Context) error {
	all := c.Bool("all")
	switch {
	case all && c.Args().Len() > 0:
		return exitcode.UsageErrorf("jobid not supported with --all")
	case !all && c.Args().Len() != 1:
		return exitcode.UsageErrorf("give one job ID, or --all")
	}
	cl, err := e.connect(c)
	if err != nil {
		return err
	}
	defer cl.Close()
	if !all {
		id, err := parseID(c.Args().First())
		if err != nil {
			return err
		}
		// Read first, to say what it waits for when no fluxsched runs;
		// an error is Wait's to report.
		if info, err := cl.Job(c.Context, id); err == nil {
			e.noteWaitUnserved(c, cl, &info.Summary)
		}
		s, err := cl.Wait(c.Context, id)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Args().First(), err)
		}
		reap(c, cl, []fluid.ID{id})
		// A --retry chain ends with its last run: the wait follows each
		// retry (linked before its run's clean, so the summary has it).
		for s.RetriedAs != nil {
			next := *s.RetriedAs
			notef(c, "%s: retrying as %s (retry %d of %d)", e.fmtID(id), e.fmtID(next), s.Retry+1, s.Retries)
			id = next
			if s, err = cl.Wait(c.Context, id); err != nil {
				return fmt.Errorf("%s: %w", e.fmtID(id), err)
			}
			reap(c, cl, []fluid.ID{id})
		}
		// Why it did not succeed, as flux job wait says it: the fatal
		// exception, the signal or the tasks' exit code.
		if msg := failure(s); msg != "" {
			return exitcode.JobCode(exitCodeOf(s), errorString(e.fmtID(id)+": "+msg))
		}
		return e.exitWith(exitCodeOf(s), nil)
	}
	// Active jobs first, then the ended ones: a job that ends between
	// the two is taken as ended, and none is missed (docs/cli.md).
	jobs, err := cl.Jobs(c.Context, api.JobsQuery{States: job.Active})
	if err != nil {
		return err
	}
	ended, err := client.Call(c.Context, cl, api.Reap, api.ReapParams{All: true}, nil)
	if err != nil {
		return err
	}
	ids := waitOrder(ended, jobs)
	if c.Bool("verbose") {
		notef(c, "waiting for %s", plural(len(ids), "job"))
	}
	noteWaitAllUnserved(c, cl, len(jobs))
	failed := false
	pl := newJobsLine(c, len(ids))
	defer pl.done()
	var reported []fluid.ID
	// A run that was retried is no failure yet: its chain is waited for
	// to its last run, in rounds, as wait ID does.
	for wave := ids; len(wave) > 0 && err == nil; {
		var next []fluid.ID
		_, err = client.Call(c.Context, cl, api.WaitAll, api.IDsParams{IDs: wave}, func(s api.JobSummary) error {
			reported = append(reported, s.ID)
			if r := s.RetriedAs; r != nil {
				if !slices.Contains(ids, *r) {
					next = append(next, *r)
				}
				pl.note(c, "%s: retrying as %s (retry %d of %d)", e.fmtID(s.ID), e.fmtID(*r), s.Retry+1, s.Retries)
				return nil
			}
			msg := failure(&s)
			if msg != "" {
				pl.note(c, "%s: %s", e.fmtID(s.ID), msg)
				failed = true
			} else if c.Bool("verbose") {
				pl.note(c, "%s: job completed successfully", e.fmtID(s.ID))
			}
			pl.add(msg != "")
			return nil
		})
		wave = next
	}
	// Those that were active are taken now they are reported, even when
	// the wait stopped short: a later wait reports the others.
	reap(c, cl, reported)
	if err != nil {
		return err
	}
	if failed {
		return exitcode.Silent(exitcode.Failed)
	}
	return nil
}

// waitOrder is the jobs wait --all waits for: those ended and taken,
// and the active ones, each once, in submission order.
func waitOrder(ended []fluid.ID, active []api.JobSummary) []fluid.ID {
	ids := slices.Clone(ended)
	for _, j := range active {
		ids = append(ids, j.ID)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// reap takes jobs a wait has reported from those the caller may wait
// for, as Flux's wait consumes a zombie. It is best effort: the job's
// result was the request, and a job left waitable is only reported again
// by a later wait --all.
func reap(c *cli.Context, cl client.Client, ids []fluid.ID) {
	if len(ids) == 0 {
		return
	}
	_, _ = client.Call(c.Context, cl, api.Reap, api.ReapParams{IDs: ids}, nil)
}

// jobsLine is the progress line of a wait for many jobs (wait --all,
// submit --wait), on a terminal only: "waiting: 7 of 40 jobs done, 1
// failed". Jobs are waited for one after another, so the count is of
// those found done in that order.
type jobsLine struct {
	line  *progress.Line
	total int

	mu               sync.Mutex
	finished, failed int
}

func newJobsLine(c *cli.Context, total int) *jobsLine {
	p := &jobsLine{line: progress.New(stderr(c)), total: total}
	p.line.Tick(p.text)
	return p
}

// add counts one more job done.
func (p *jobsLine) add(failed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finished++
	if failed {
		p.failed++
	}
}

// note prints notef's line above the progress line.
func (p *jobsLine) note(c *cli.Context, format string, a ...any) {
	p.line.Hide(func() { notef(c, format, a...) })
}

// text is the line now.
func (p *jobsLine) text() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	unit := "jobs"
	if p.total == 1 {
		unit = "job"
	}
	s := fmt.Sprintf("waiting: %s of %s %s done", progress.Thousands(p.finished), progress.Thousands(p.total), unit)
	if p.failed > 0 {
		s += fmt.Sprintf(", %s failed", progress.Thousands(p.failed))
	}
	return s
}

// done erases the line.
func (p *jobsLine) done() { p.line.Done() }

// errorString is an error that is just its message.
type errorString string

func (e errorString) Error() string { return string(e) }
