package fluxq

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/job"
)

// Messages of fluxq urgency (docs/cli.md, flux job urgency's words).
const (
	msgUrgencyRange = "urgency value is out of range"
	msgOldHeld      = "old urgency: job held"
	msgOldExpedited = "old urgency: job expedited"
	msgOldUrgency   = "old urgency: %d"
)

func (e *env) urgencyCommand() *cli.Command {
	return &cli.Command{
		Name:      "urgency",
		Usage:     "change a pending job's urgency",
		ArgsUsage: "ID N|hold|default|expedite",
		Description: `Changes the urgency of a pending job, which orders it among the jobs
waiting: N is 0-31; hold is 0 (the job waits until released), default
16, expedite 31 (ahead of everything); above 16 is the instance owner's
alone, as in Flux. Use hold to keep a job back and a number or default to
release it. Not once resources are allocated.

EXAMPLES:
  # Keep a job back, then let it go
  $ fluxq urgency ƒNH hold
  $ fluxq urgency ƒNH default

  # Run this one before the others, and show its old urgency
  $ fluxq urgency -v ƒNH expedite`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "print the old urgency on stderr", DisableDefaultText: true},
		},
		Action: action(e.urgency),
	}
}

func (e *env) urgency(c *cli.Context) error {
	if c.Args().Len() != 2 {
		return exitcode.UsageErrorf("expected ID and N|hold|default|expedite, got %d arguments", c.Args().Len())
	}
	idArg, uArg := c.Args().Get(0), c.Args().Get(1)
	id, err := parseID(idArg)
	if err != nil {
		return err
	}
	u, err := job.ParseUrgency(uArg)
	if err != nil {
		if _, nerr := strconv.Atoi(uArg); nerr == nil {
			// A number out of range is refused as the job manager
			// refuses it (exit 1), not as bad usage.
			return errors.New(idArg + ": " + msgUrgencyRange)
		}
		return exitcode.UsageErrorf("%v", err)
	}
	cl, err := e.connect(c)
	if err != nil {
		return err
	}
	defer cl.Close()
	old := -1
	if c.Bool("verbose") {
		info, err := cl.Job(c.Context, id)
		if err != nil {
			return errors.New(idArg + ": " + err.Error())
		}
		old = info.Summary.Urgency
	}
	if err := cl.Urgency(c.Context, id, u); err != nil {
		return errors.New(idArg + ": " + err.Error())
	}
	// flux job urgency -v prints this line bare.
	switch {
	case old == job.UrgencyHold:
		fmt.Fprintln(stderr(c), msgOldHeld)
	case old == job.UrgencyExpedite:
		fmt.Fprintln(stderr(c), msgOldExpedited)
	case old >= 0:
		fmt.Fprintf(stderr(c), msgOldUrgency+"\n", old)
	}
	return nil
}
