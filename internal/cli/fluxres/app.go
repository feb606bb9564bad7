// Package fluxres builds the fluxres command: resource inventory and status,
// drain/undrain, and node reservations (CLI.md, "fluxres — resources and
// reservations").
package fluxres

import (
	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/cli/args"
	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/cli/instance"
)

// New returns the fluxres application.
func New() *cli.App {
	return &cli.App{
		Name:  "fluxres",
		Usage: "show resources and manage node reservations",
		Description: "fluxres shows what this instance has and who holds it, drains and\n" +
			"undrains nodes, and manages node reservations.",
		Flags: instance.Flags(),
		Commands: []*cli.Command{
			listCommand(),
			statusCommand(),
			infoCommand(),
			drainCommand(),
			undrainCommand(),
			findCommand(),
			allocatedCommand(),
			availableCommand(),
			discoverCommand(),
		},
	}
}

// Main runs fluxres with args and returns its exit status.
func Main(argv []string) int {
	app := New()
	return exitcode.Run(app, args.Reorder(app, argv))
}
