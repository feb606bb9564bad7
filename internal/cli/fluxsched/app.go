// Package fluxsched builds the fluxsched command: the foreground loop that
// holds the store and runs the job manager, scheduler and exec service
// (docs/cli.md, "fluxsched — the instance").
package fluxsched

import (
	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/cli/complete"
	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/cli/instance"
	"github.com/fluxq/fluxq/internal/cloexec"
)

// New returns the fluxsched application. Without a command it runs, as
// `fluxsched run` does.
func New() *cli.App {
	runCmd := runCommand()
	return &cli.App{
		Name:  "fluxsched",
		Usage: "run the job manager, scheduler and exec service on this machine",
		UsageText: "fluxsched [global options] [run options]      (the same as fluxsched run)\n" +
			"fluxsched [global options] command [command options]",
		Description: `fluxsched keeps the machine busy: it schedules the jobs submitted with
fluxq onto this machine's cores and GPUs and runs them. Without a
command it runs, as fluxsched run does. The config is Flux's TOML
(fluxsched config check validates one); sim replays a workload trace to
compare scheduling policies. Run 'fluxsched help COMMAND' for a
command's options and examples.

EXAMPLES:
  # Run jobs on this machine until Ctrl-C
  $ fluxsched

  # With named queues and backfilling, from a config
  $ fluxsched run --config /etc/fluxq/config.toml --policy easy

  # Replay a trace on 64 eight-core nodes
  $ fluxsched sim --trace jobs.swf --nodes 64 --cores-per-node 8`,
		Flags:  append(instance.Flags(), runCmd.Flags...),
		Action: runCmd.Action,
		Commands: []*cli.Command{
			runCmd,
			configCommand(),
			simCommand(),
			stopCommand(),
			storeCommand(),
			AgentCommand(),
			SubinstanceCmd(),
			SchedSimpleCommand(),
			complete.Command("fluxsched"),
			complete.Hidden(),
		},
	}
}

// Main runs fluxsched with args and returns its exit status.
func Main(args []string) int {
	// Before anything is started: what fluxsched inherited (a shell's
	// `exec 7<file`) must reach neither its exec agent, its scheduler
	// command nor, through the agent, any job (issue 24). A kernel that
	// refuses both ways leaves descriptors as they were: the agent's
	// runner tries again, and nothing here is worth not starting for.
	_ = cloexec.Inherited()
	return exitcode.Run(New(), args)
}
