// Package fluxsched builds the fluxsched command: the foreground loop that
// holds the store and runs the job manager, scheduler and exec service
// (CLI.md, "fluxsched — the instance").
package fluxsched

import (
	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/cli/instance"
)

// New returns the fluxsched application. Without a command it runs, as
// `fluxsched run` does.
func New() *cli.App {
	runCmd := runCommand()
	return &cli.App{
		Name:  "fluxsched",
		Usage: "run the job manager, scheduler and exec service on this machine",
		Description: "fluxsched keeps the machine busy: it schedules the jobs submitted with\n" +
			"fluxq onto this machine's cores and GPUs and runs them.",
		Flags:  append(instance.Flags(), runCmd.Flags...),
		Action: runCmd.Action,
		Commands: []*cli.Command{
			runCmd,
			configCommand(),
			simCommand(),
			JobShellCommand(),
			SchedSimpleCommand(),
		},
	}
}

// Main runs fluxsched with args and returns its exit status.
func Main(args []string) int { return exitcode.Run(New(), args) }
