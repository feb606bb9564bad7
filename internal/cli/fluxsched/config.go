package fluxsched

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/config"
)

func configCommand() *cli.Command {
	return &cli.Command{
		Name:  "config",
		Usage: "work with fluxsched's configuration",
		Subcommands: []*cli.Command{{
			Name:      "check",
			Usage:     "validate a config file or directory; exit 1 with the message on error",
			ArgsUsage: "FILE|DIR",
			Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return exitcode.UsageErrorf("check needs one FILE or DIR")
				}
				cfg, err := config.Load(c.Args().First())
				if err != nil {
					return err
				}
				if _, err := inventory(cfg); err != nil {
					return err
				}
				fmt.Fprintf(c.App.Writer, "%s: ok\n", c.Args().First())
				return nil
			},
		}},
	}
}
