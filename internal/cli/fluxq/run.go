package fluxq

import (
	"io"

	"github.com/urfave/cli/v2"
)

func (e *env) runCommand() *cli.Command {
	st := &submitState{}
	return &cli.Command{
		Name:      "run",
		Usage:     "submit a job, stream its output, exit with its exit code",
		ArgsUsage: "COMMAND [ARGS...]",
		Description: `Submits a job as submit does, streams its stdout and stderr here as it
runs, and exits with the job's exit code (128+N for signal N; 1 if it
never ran). Use it for interactive work and in scripts that need the
job's result; use submit to queue work and move on. It takes submit's
options but one job only (no --cc). Ctrl-C, Ctrl-Z and SIGTERM act as in
attach: two Ctrl-C within 2s cancel the job, Ctrl-C then Ctrl-Z detaches.
Its stdin goes to every task of the job, its end too, as with flux run
(--input FILE gives them a file instead).

EXAMPLES:
  # Two tasks, output here
  $ fluxq run -n 2 hostname

  # The exit status is the job's
  $ fluxq run sh -c 'echo hello; exit 3'; echo $?

  # A whole node for at most an hour
  $ fluxq run -N 1 -t 1h ./bench

  # stdin goes to the job
  $ sort data.txt | fluxq run uniq -c`,
		Flags:  append(st.flags(false), ptyFlag()),
		Action: action(func(c *cli.Context) error { return e.run(c, st) }),
	}
}

func (e *env) run(c *cli.Context, st *submitState) error {
	// stdin goes to the tasks, as flux run's does, unless --input names
	// a file.
	if c.Bool(flagPty) {
		return e.runPty(c, st)
	}
	var in *stdinStream
	var r io.Reader
	if !c.IsSet(flagInput) && !c.Bool(flagDryRun) {
		if r = e.runStdin(); r != nil {
			var err error
			if in, err = newStdinStream(); err != nil {
				return err
			}
			if err := c.Set(flagInput, in.path); err != nil {
				in.end()
				return err
			}
		}
	}
	cl, ids, err := e.send(c, st)
	if err != nil || cl == nil {
		if in != nil {
			in.end()
		}
		return err
	}
	defer cl.Close()
	if in != nil {
		go in.copyFrom(r)
	}
	code, err := e.follow(c, cl, ids[0], in)
	if code != exitDetached || err != nil {
		// Its end was reported here: no wait --all reports it again.
		reap(c, cl, ids[:1])
	}
	return e.exitWith(code, err)
}

// runPty is run --pty: the job's first task on a terminal of fluxq's
// making (see ptySession), the rest as run does.
func (e *env) runPty(c *cli.Context, st *submitState) error {
	term, err := e.startPty(c, st)
	if err != nil {
		return err
	}
	defer term.close()
	cl, ids, err := e.send(c, st)
	if err != nil || cl == nil {
		return err
	}
	defer cl.Close()
	term.attach(e.ptyStdin())
	if term.raw() {
		errw := c.App.ErrWriter
		c.App.ErrWriter = crlf{stderr(c)}
		defer func() { c.App.ErrWriter = errw }()
	}
	code, err := e.follow(c, cl, ids[0], nil)
	term.close()
	if code != exitDetached || err != nil {
		reap(c, cl, ids[:1])
	}
	return e.exitWith(code, err)
}
