package fluxq

import (
	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/client"
)

// SubmitCommand returns `fluxq submit` for another binary to mount under a
// name of its own: `fluxres reservation target` is `fluxq submit --target`
// by another name, one code path (docs/cli.md). open replaces instance.Open
// when not nil, so that tests can give it an instance in memory.
func SubmitCommand(open func(*cli.Context) (client.Client, error)) *cli.Command {
	e := defaultEnv()
	if open != nil {
		e.open = open
	}
	return e.submitCommand()
}
