package fluxq

import (
	"github.com/urfave/cli/v2"
)

func (e *env) runCommand() *cli.Command {
	st := &submitState{}
	return &cli.Command{
		Name:      "run",
		Usage:     "submit a job, stream its output, exit with its exit code",
		ArgsUsage: "COMMAND [ARGS...]",
		Description: "submit's options, then the job's output on stdout and stderr as it runs.\n" +
			"The exit status is the job's (128+N for signal N; 1 if it never ran).\n" +
			"An interrupt cancels the job; a second one detaches.",
		Flags:  st.flags(false),
		Action: action(func(c *cli.Context) error { return e.run(c, st) }),
	}
}

func (e *env) run(c *cli.Context, st *submitState) error {
	cl, ids, err := e.send(c, st)
	if err != nil || cl == nil {
		return err
	}
	defer cl.Close()
	return e.exitWith(e.follow(c, cl, ids[0]))
}
