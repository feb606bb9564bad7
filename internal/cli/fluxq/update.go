package fluxq

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/client"
)

func (e *env) updateCommand() *cli.Command {
	return &cli.Command{
		Name:      "update",
		Usage:     "change an active job's jobspec",
		ArgsUsage: "ID KEY=VALUE...",
		Description: `Changes attributes of an active job, as flux update does. KEY is a
period-delimited jobspec path; one that does not start with attributes.,
tasks. or resources. is taken as under attributes.system. Aliases:

  duration   the time limit: seconds, a duration (30m, 2h), or a change
             of the current one (+10m, -5m); 0 or inf is none
  queue      the queue (attributes.system.queue)
  name       the job name (attributes.system.job.name)
  urgency    0-31, hold, default or expedite, as fluxq urgency takes it

and any attributes.user.KEY. VALUE is JSON where it reads as JSON, else a
string. Every key of the request is applied or none is: the job is
checked again as a submission is (the queue's existence, state, access
and limits, and whether the resources could ever run it), its eventlog
gets one jobspec-update event, and a job waiting for the scheduler is
asked for again with its new jobspec. Only the job's owner and the
instance owner may update it. Of a running job only the duration
changes: the instance owner may raise it, the job's owner lower it, and
the job is timed out at the new limit (counted from its start).

EXAMPLES:
  # Give a pending job more time and move it to another queue
  $ fluxq update ƒNH duration=+30m queue=batch

  # See the jobspec an update would make, changing nothing
  $ fluxq update --dry-run ƒNH name=sweep-3`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: flagDryRun, Usage: "print the updated jobspec JSON and change nothing", DisableDefaultText: true},
		},
		Action: action(e.update),
	}
}

func (e *env) update(c *cli.Context) error {
	if c.Args().Len() < 2 {
		return exitcode.UsageErrorf("expected ID and at least one KEY=VALUE, got %d arguments", c.Args().Len())
	}
	idArg := c.Args().First()
	id, err := parseID(idArg)
	if err != nil {
		return err
	}
	var updates []api.JobUpdate
	for _, arg := range c.Args().Slice()[1:] {
		u, err := parseUpdate(arg)
		if err != nil {
			return exitcode.UsageErrorf("%v", err)
		}
		updates = append(updates, u)
	}
	cl, err := e.connect(c)
	if err != nil {
		return err
	}
	defer cl.Close()
	res, err := client.Call(c.Context, cl, api.Update, api.UpdateParams{ID: id, Updates: updates, DryRun: c.Bool(flagDryRun)}, nil)
	if err != nil {
		return errors.New(idArg + ": " + err.Error())
	}
	if c.Bool(flagDryRun) {
		fmt.Fprintf(stdout(c), "%s\n", res.Jobspec)
	}
	return nil
}

// parseUpdate reads one KEY=VALUE: VALUE is JSON where it reads as JSON
// (flux update's rule), else a string. A name, a queue and a relative
// duration are strings whatever they look like: name=42 names the job
// "42", and duration=-5m is five minutes less.
func parseUpdate(arg string) (api.JobUpdate, error) {
	key, val, ok := strings.Cut(arg, "=")
	if !ok || key == "" {
		return api.JobUpdate{}, fmt.Errorf("invalid update %q: want KEY=VALUE", arg)
	}
	str := func() api.JobUpdate {
		b, _ := json.Marshal(val)
		return api.JobUpdate{Key: key, Value: b}
	}
	switch key {
	case "name", "queue", "job.name", "attributes.system.job.name", "attributes.system.queue":
		if !strings.HasPrefix(val, `"`) {
			return str(), nil
		}
	case "duration", "attributes.system.duration":
		if strings.HasPrefix(val, "+") || strings.HasPrefix(val, "-") {
			return str(), nil
		}
	}
	if json.Valid([]byte(val)) {
		return api.JobUpdate{Key: key, Value: json.RawMessage(val)}, nil
	}
	return str(), nil
}
