// Package fluxq builds the fluxq command: submit, list and cancel jobs, and
// administer queues (CLI.md, "fluxq — jobs and queues").
package fluxq

import (
	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/cli/exitcode"
)

// New returns the fluxq application.
func New() *cli.App {
	return &cli.App{
		Name:  "fluxq",
		Usage: "submit, list and cancel jobs; administer queues",
		Description: "fluxq is the job and queue client of a single-machine resource manager\n" +
			"that behaves like Flux. fluxsched runs the jobs; fluxres shows resources.",
		Commands: []*cli.Command{},
	}
}

// Main runs fluxq with args and returns its exit status.
func Main(args []string) int { return exitcode.Run(New(), args) }
