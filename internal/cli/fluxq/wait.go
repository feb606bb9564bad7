package fluxq

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/client"
	"github.com/fluxq/fluxq/internal/job"
)

func (e *env) waitCommand() *cli.Command {
	return &cli.Command{
		Name:      "wait",
		Usage:     "wait for a job (exit with its exit code) or for all of yours (--all)",
		ArgsUsage: "[ID]",
		Description: "With ID: wait until the job is inactive and exit with its exit code (128+N\n" +
			"for signal N; 1 if it ended before its tasks did). With --all: wait for all\n" +
			"of the caller's active jobs; exit 0 if all succeeded, 1 otherwise, naming\n" +
			"each failure on stderr.",
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
		s, err := cl.Wait(c.Context, id)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Args().First(), err)
		}
		if s.WaitStatus == nil {
			// No task finished: say why, as flux job wait does.
			if msg := failure(s); msg != "" {
				return exitcode.WithCode(exitCodeOf(s), errorString(e.fmtID(id)+": "+msg))
			}
		}
		return e.exitWith(exitCodeOf(s), nil)
	}
	jobs, err := cl.Jobs(c.Context, client.JobsQuery{States: job.Active})
	if err != nil {
		return err
	}
	if c.Bool("verbose") {
		notef(c, "waiting for %s", plural(len(jobs), "job"))
	}
	failed := false
	for _, j := range jobs {
		s, err := cl.Wait(c.Context, j.ID)
		if err != nil {
			return err
		}
		if msg := failure(s); msg != "" {
			notef(c, "%s: %s", e.fmtID(j.ID), msg)
			failed = true
		} else if c.Bool("verbose") {
			notef(c, "%s: job completed successfully", e.fmtID(j.ID))
		}
	}
	if failed {
		return exitcode.Silent(exitcode.Failed)
	}
	return nil
}

// errorString is an error that is just its message.
type errorString string

func (e errorString) Error() string { return string(e) }
