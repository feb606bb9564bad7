package fluxsched

import (
	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/shell"
)

// JobShellCommand returns the hidden `fluxsched job-shell JOBDIR` command:
// the job shell the exec service starts for each job.
func JobShellCommand() *cli.Command {
	return &cli.Command{
		Name:      "job-shell",
		Usage:     "run one job's tasks (started by the exec service)",
		ArgsUsage: "JOBDIR",
		Hidden:    true,
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return exitcode.UsageErrorf("job-shell: want one argument, the job folder")
			}
			if code := shell.Main([]string{c.App.Name + " job-shell", c.Args().First()}); code != 0 {
				return exitcode.Silent(code)
			}
			return nil
		},
	}
}
