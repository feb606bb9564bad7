package fluxq

import (
	"fmt"
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
(128+N for signal N; 1 if it ended before its tasks did). With --all:
waits for all of the caller's active jobs; exits 0 if all succeeded, 1
otherwise, naming each failure on stderr. Use it in scripts, after
submit, where the next step needs the jobs done.

EXAMPLES:
  # Submit, do something else, then collect the job's exit code
  $ id=$(fluxq submit ./sim)
  $ fluxq wait $id

  # Eight jobs, then wait for them all
  $ fluxq submit --cc 1-8 --quiet ./sim input{cc}.dat
  $ fluxq wait --all -v`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "all", Aliases: []string{"a"}, Usage: "wait for all of the caller's active jobs", DisableDefaultText: true},
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
		if !tasksSaid(s) {
			// No task finished, or the job failed after tasks that
			// succeeded: say why, as flux job wait does.
			if msg := failure(s); msg != "" {
				return exitcode.WithCode(exitCodeOf(s), errorString(e.fmtID(id)+": "+msg))
			}
		}
		return e.exitWith(exitCodeOf(s), nil)
	}
	jobs, err := cl.Jobs(c.Context, api.JobsQuery{States: job.Active})
	if err != nil {
		return err
	}
	if c.Bool("verbose") {
		notef(c, "waiting for %s", plural(len(jobs), "job"))
	}
	noteWaitAllUnserved(c, cl, len(jobs))
	failed := false
	pl := newJobsLine(c, len(jobs))
	defer pl.done()
	ids := make([]fluid.ID, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	_, err = client.Call(c.Context, cl, api.WaitAll, api.IDsParams{IDs: ids}, func(s api.JobSummary) error {
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
	if err != nil {
		return err
	}
	if failed {
		return exitcode.Silent(exitcode.Failed)
	}
	return nil
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
