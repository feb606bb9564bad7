package fluxq

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/client"
	"github.com/fluxq/fluxq/internal/job"
)

// Messages of fluxq cancel, flux cancel's words.
const (
	msgNoTargets    = "No target jobs were provided"
	msgMatchedNone  = "Matched 0 jobs"
	msgInvalidState = "Invalid state %s specified"
)

// cancelStates are the state names -S accepts (flux cancel's STATES).
var cancelStates = map[string]job.State{
	"depend": job.Depend, "priority": job.Priority, "sched": job.Sched, "run": job.Run,
	"pending": job.Pending, "running": job.Running, "active": job.Active,
}

func (e *env) cancelCommand() *cli.Command {
	return &cli.Command{
		Name:      "cancel",
		Usage:     "cancel jobs: raise a cancel exception on each",
		ArgsUsage: "[ID...]",
		Description: `Raises a cancel exception on each job, as flux cancel does: a pending
job never runs, a running one is stopped; either ends CANCELED. With
--all (implied by -u, -S, --name and --queue), every active job of the
caller (or of USER, or of all users) in the given states, named NAME, in
QUEUES. Only a job's owner or the instance owner may cancel it: each
job that could not be canceled is named with why, is not counted in
"Canceled N jobs", and makes the command exit 1.

EXAMPLES:
  # Cancel two jobs
  $ fluxq cancel ƒNH ƒNJ

  # All your pending jobs, with a note in their eventlogs
  $ fluxq cancel --all -S pending -m 'wrong input'

  # See what --all would cancel, and cancel nothing
  $ fluxq cancel --all -n

  # Every pending job of yours named sweep
  $ fluxq cancel --name sweep -S pending`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "message", Aliases: []string{"m"}, Usage: "the exception's `NOTE`, shown in the eventlog and by info", DefaultText: "none"},
			&cli.BoolFlag{Name: "all", Usage: "target all jobs (of the caller, unless -u)", DisableDefaultText: true},
			&cli.StringFlag{Name: "user", Aliases: []string{"u"}, Usage: "with --all, the jobs of `USER` (name or uid), or 'all'", DefaultText: "yours"},
			&cli.StringSliceFlag{Name: "states", Aliases: []string{"S"}, Usage: "with --all, only jobs in these `STATES`: depend, priority, sched, run, pending, running, active", DefaultText: "active"},
			nameFlag(),
			queueFlag(),
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "cancel nothing, say what would be canceled", DisableDefaultText: true},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "say nothing when no job matches", DisableDefaultText: true},
		},
		Action: action(e.cancel),
	}
}

func (e *env) cancel(c *cli.Context) error {
	// As flux cancel: the options that select jobs exclude IDs; the
	// message names those given.
	set := selectors(c, "all", "user", "states", flagName, flagQueue)
	if len(set) > 0 && c.Args().Len() > 0 {
		return idsWithSelectors(set)
	}
	if len(set) > 0 {
		return e.cancelAll(c)
	}
	if c.Args().Len() == 0 {
		return exitcode.UsageErrorf(msgNoTargets)
	}
	ids, err := argIDs(c)
	if err != nil {
		return err
	}
	if c.Bool("dry-run") {
		notef(c, "Would cancel %s", plural(len(ids), "job"))
		return nil
	}
	cl, err := e.connect(c)
	if err != nil {
		return err
	}
	defer cl.Close()
	errs, err := cl.Cancel(c.Context, ids, c.String("message"))
	if err != nil {
		return err
	}
	failed := 0
	for i, err := range errs {
		if err != nil {
			failed++
			notef(c, "%s: %v", c.Args().Get(i), err)
		}
	}
	if failed > 0 {
		return exitcode.Silent(exitcode.Failed)
	}
	return nil
}

func (e *env) cancelAll(c *cli.Context) error {
	q := api.JobsQuery{Queues: c.StringSlice(flagQueue)}
	for _, w := range c.StringSlice("states") {
		st, ok := cancelStates[strings.ToLower(strings.TrimSpace(w))]
		if !ok {
			return exitcode.UsageErrorf(msgInvalidState, w)
		}
		q.States |= st
	}
	if q.States == 0 {
		q.States = job.Active
	}
	switch u := c.String("user"); u {
	case "":
	case "all":
		q.AllUsers = true
	default:
		uid, err := lookupUser(u)
		if err != nil {
			return err
		}
		q.UserID = &uid
	}
	q.Name = c.String(flagName)
	cl, err := e.connect(c)
	if err != nil {
		return err
	}
	defer cl.Close()
	// Chosen and cancelled by the instance in one turn, as flux cancel
	// --all's raiseall: no listing of every job comes here, no ids go
	// back, and no job submitted meanwhile is missed or taken.
	res, err := client.Call(c.Context, cl, api.CancelAll, api.CancelAllParams{Query: q, Note: c.String("message"), DryRun: c.Bool("dry-run")}, nil)
	if err != nil {
		return err
	}
	if res.Matched == 0 {
		if !c.Bool("quiet") {
			notef(c, msgMatchedNone)
		}
		return nil
	}
	if c.Bool("dry-run") {
		notef(c, "Would cancel %s", plural(res.Matched, "job"))
		return nil
	}
	// The count is of what was canceled, and each job that was not is
	// named with why, as a cancel by ID does: a guest's --all -u all
	// matches other users' jobs, which it may list but not cancel, and a
	// count of every match would tell it that they were canceled.
	for _, f := range res.Failed {
		err := api.Decode(f.Error)
		if errors.Is(err, api.ErrPermission) {
			notef(c, "%s: %v: it belongs to %s", e.fmtID(f.ID), err, e.userName(f.UserID))
		} else {
			notef(c, "%s: %v", e.fmtID(f.ID), err)
		}
	}
	failed := len(res.Failed)
	notef(c, "Canceled %s (%s)", plural(res.Matched-failed, "job"), plural(failed, "error"))
	if failed > 0 {
		return exitcode.Silent(exitcode.Failed)
	}
	return nil
}

// plural writes "1 job" or "4 jobs", as flux cancel does.
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
