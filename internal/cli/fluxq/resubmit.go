package fluxq

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/client"
)

func (e *env) resubmitCommand() *cli.Command {
	return &cli.Command{
		Name:      "resubmit",
		Usage:     "submit a job again: a new job from an old one's jobspec",
		ArgsUsage: "ID",
		Description: `Submits a new job with the jobspec of job ID, as it was admitted (its
command, resources, duration, queue and environment), and prints the new
job's id. Like pueue's restart, the old job is left as it is, in any
state, active or not; the new one is admitted as a new submission is, by
the queue's limits and access and the reservation targets as they are
now. Each names the other: fluxq info shows again_of on the new job and
resubmitted on the old. Only the job's submitter may resubmit it (a
new job runs as whoever submits it); a job submitted with --retry
resubmits with its retries.

EXAMPLES:
  # Run a finished job again, and wait for it
  $ id=$(fluxq resubmit ƒNH)
  $ fluxq wait $id

  # Which job a job was made from, and what was made from it
  $ fluxq info ƒNH -o '{again_of} {retried_as}'`,
		Action: action(e.resubmit),
	}
}

func (e *env) resubmit(c *cli.Context) error {
	if c.Args().Len() != 1 {
		return exitcode.UsageErrorf("expected one job ID, got %d arguments", c.Args().Len())
	}
	arg := c.Args().First()
	id, err := parseID(arg)
	if err != nil {
		return err
	}
	cl, err := e.connect(c)
	if err != nil {
		return err
	}
	defer cl.Close()
	made, err := client.Call(c.Context, cl, api.Resubmit, api.IDParams{ID: id}, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", arg, err)
	}
	_, err = fmt.Fprintln(stdout(c), e.fmtID(made))
	return err
}
