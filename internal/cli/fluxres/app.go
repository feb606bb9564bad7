// Package fluxres builds the fluxres command: resource inventory and status,
// drain/undrain, and node reservations (CLI.md, "fluxres — resources and
// reservations").
package fluxres

import (
	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/cli/exitcode"
)

// New returns the fluxres application.
func New() *cli.App {
	return &cli.App{
		Name:  "fluxres",
		Usage: "show resources and manage node reservations",
		Description: "fluxres shows what this instance has and who holds it, drains and\n" +
			"undrains nodes, and manages node reservations.",
		Commands: []*cli.Command{},
	}
}

// Main runs fluxres with args and returns its exit status.
func Main(args []string) int { return exitcode.Run(New(), args) }
