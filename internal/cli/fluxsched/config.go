package fluxsched

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/config"
	"github.com/fluxq/fluxq/internal/daemon"
)

func configCommand() *cli.Command {
	return &cli.Command{
		Name:      "config",
		Usage:     "work with fluxsched's configuration",
		ArgsUsage: "COMMAND",
		Description: `Works with fluxsched's configuration: Flux's TOML, one file or a
directory of *.toml, with [[resource.config]], [queues.NAME], [policy],
[sched], [exec], [store], [access] and [reservation] tables.

EXAMPLES:
  # Check a config before fluxsched reads it
  $ fluxsched config check /etc/fluxq/config.toml

  # Check a directory of *.toml, then run with it
  $ fluxsched config check conf.d && fluxsched run --config conf.d`,
		Subcommands: []*cli.Command{{
			Name:      "check",
			Usage:     "validate a config file or directory; exit 1 with the message on error",
			ArgsUsage: "FILE|DIR",
			Description: `Loads a config as fluxsched run would, checks it (TOML syntax, unknown
keys, queues and their parents, policies, the resources it describes)
and prints "FILE: ok", or the first error, naming its table, and exits
1. What is valid but cannot work here is a warning on stderr (exit 0):
a queue whose requires no node has, a host given cores this machine
lacks. Use it before restarting fluxsched with a changed config.

EXAMPLES:
  # One file
  $ fluxsched config check /etc/fluxq/config.toml

  # A directory of *.toml
  $ fluxsched config check /etc/fluxq/conf.d`,
			Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return exitcode.UsageErrorf("check needs one FILE or DIR")
				}
				cfg, err := config.Load(c.Args().First())
				if err != nil {
					return err
				}
				r, err := daemon.Inventory(cfg)
				if err != nil {
					return err
				}
				warns := daemon.ConfigWarnings(cfg, r, daemon.UsableCPUs())
				for _, w := range warns {
					fmt.Fprintf(c.App.ErrWriter, "fluxsched: config check: warning: %s\n", w)
				}
				if len(warns) > 0 {
					noun := "warnings"
					if len(warns) == 1 {
						noun = "warning"
					}
					fmt.Fprintf(c.App.Writer, "%s: ok, with %d %s\n", c.Args().First(), len(warns), noun)
					return nil
				}
				fmt.Fprintf(c.App.Writer, "%s: ok\n", c.Args().First())
				return nil
			},
		}},
	}
}
