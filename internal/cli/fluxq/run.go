package fluxq

import (
	"io"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/client"
	"github.com/fluxq/fluxq/internal/fluid"
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
	// a file, or the job may run again (--retry): a stream read once
	// cannot be given to a retry too, so none of the runs gets it.
	if c.Bool(flagPty) {
		return e.runPty(c, st)
	}
	var in *stdinStream
	var r io.Reader
	retries, _ := parseRetry(cliOptions{c}) // a bad one is refused with the job's options
	if !c.IsSet(flagInput) && !c.Bool(flagDryRun) && retries == 0 {
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
	id := ids[0]
	code, err := e.follow(c, cl, id, in)
	for code != exitDetached || err != nil {
		// Its end was reported here: no wait --all reports it again.
		reap(c, cl, []fluid.ID{id})
		if err != nil && !exitcode.IsJob(err) {
			break
		}
		// A failed run of a --retry job is followed by its retry: the
		// command's result is the chain's last run's, and each earlier
		// run's failure is said as it ends.
		next := e.retriedAs(c, cl, id, err)
		if next == 0 {
			break
		}
		id = next
		code, err = e.follow(c, cl, id, nil)
	}
	return e.exitWith(code, err)
}

// retriedAs is the retry that followed job id, saying so on stderr
// after the run's failure (failed, when it has one to say); 0
// when none did (or the job cannot be read: its result stands).
func (e *env) retriedAs(c *cli.Context, cl client.Client, id fluid.ID, failed error) fluid.ID {
	info, err := cl.Job(c.Context, id)
	if err != nil || info.Summary.RetriedAs == nil {
		return 0
	}
	next := *info.Summary.RetriedAs
	if failed != nil {
		notef(c, "%s", failed.Error())
	}
	notef(c, "%s: retrying as %s (retry %d of %d)", e.fmtID(id), e.fmtID(next), info.Summary.Retry+1, info.Summary.Retries)
	return next
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
