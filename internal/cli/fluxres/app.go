// Package fluxres builds the fluxres command: resource inventory and status,
// drain/undrain, and node reservations (docs/cli.md, "fluxres — resources and
// reservations").
package fluxres

import (
	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/cli/args"
	"github.com/fluxq/fluxq/internal/cli/complete"
	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/cli/instance"
)

// New returns the fluxres application.
func New() *cli.App { return newApp(instance.Open) }

// newApp returns the application with its reservation, node and
// inventory views (list, status, info, find, allocated, available)
// reaching the instance through open, so that tests can hand them one.
func newApp(open opener) *cli.App {
	return &cli.App{
		Name:  "fluxres",
		Usage: "show resources and manage node reservations",
		Description: `fluxres shows what this instance has and who holds it, drains and
undrains nodes, and manages node reservations: nodes set aside for a job
and its children, onto which jobs can be directed. Node TARGETS are a
hostlist (node[1-4]) or an idset of ranks (0-3). Run 'fluxres help
COMMAND' for a command's options and examples.

EXAMPLES:
  # What this instance has, and what is free
  $ fluxres info
  $ fluxres list

  # Take rank 0 out of scheduling for maintenance, then return it
  $ fluxres drain 0 maintenance
  $ fluxres undrain 0

  # Reserve two nodes for an hour
  $ fluxres reservation create -N 2 --time 1h`,
		Flags: instance.Flags(),
		Commands: []*cli.Command{
			listCommand(open),
			statusCommand(open),
			infoCommand(open),
			drainCommand(),
			undrainCommand(),
			findCommand(open),
			allocatedCommand(open),
			availableCommand(open),
			discoverCommand(),
			reservationCommand(open),
			nodeCommand(open),
			complete.Command("fluxres"),
			complete.Hidden(),
		},
	}
}

// Main runs fluxres with args and returns its exit status.
func Main(argv []string) int { return run(New(), argv) }

// run runs app with argv. Options may follow positional arguments
// (internal/cli/args), except in `reservation target`, where the job's
// command line starts after the allocation list.
func run(app *cli.App, argv []string) int {
	target := reservationTarget(app)
	return exitcode.Run(app, args.Reorder(app, moveTargets(app, target, argv), target))
}

// reservationTarget is the `reservation target` command of app.
func reservationTarget(app *cli.App) *cli.Command {
	for _, c := range app.Commands {
		if c.Name == "reservation" {
			for _, s := range c.Subcommands {
				if s.Name == "target" {
					return s
				}
			}
		}
	}
	return nil
}

// moveTargets makes target's first argument, its allocation list, the
// value of --target: from the next argument on, the command line is the
// job's.
func moveTargets(app *cli.App, target *cli.Command, argv []string) []string {
	return args.FirstAsOption(app, argv, target, flagTarget)
}
