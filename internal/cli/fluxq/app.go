// Package fluxq builds the fluxq command: submit, list and cancel jobs, and
// administer queues (docs/cli.md, "fluxq — jobs and queues"). Each noun has its
// own file; what they share (opening the instance, printing job IDs and
// user names, reading IDs) is here.
package fluxq

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"os/user"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/cli/args"
	"github.com/fluxq/fluxq/internal/cli/complete"
	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/cli/instance"
	"github.com/fluxq/fluxq/internal/cli/output"
	"github.com/fluxq/fluxq/internal/cli/printable"
	"github.com/fluxq/fluxq/internal/client"
	"github.com/fluxq/fluxq/internal/fluid"
)

// New returns the fluxq application.
func New() *cli.App { return newApp(defaultEnv()) }

// Main runs fluxq with args and returns its exit status. Options may follow
// positional arguments (internal/cli/args), except in submit, run, bulksubmit and alloc,
// where the job's command line starts at the first positional argument.
func Main(argv []string) int { return runApp(defaultEnv(), argv) }

// runApp runs fluxq in e with argv and returns its exit status: the
// command's, or the job's for run, attach, wait and submit --wait.
func runApp(e *env, argv []string) int {
	app := newApp(e)
	var inOrder []*cli.Command
	for _, c := range app.Commands {
		if c.Name == "submit" || c.Name == "run" || c.Name == "bulksubmit" || c.Name == "alloc" {
			inOrder = append(inOrder, c)
		}
	}
	return exitcode.Run(app, args.Reorder(app, argv, inOrder...))
}

// env is what the commands take from the world, so tests can replace it.
type env struct {
	open    func(c *cli.Context) (client.Client, error)
	now     func() time.Time
	environ func() []string // the submitter's environment
	getwd   func() (string, error)
	getenv  func(string) string
	// stdin, stdout and stderr are the app's (nil: the process's).
	stdin          io.Reader
	stdout, stderr io.Writer
	// poll paces reading a job's output files while it runs.
	poll time.Duration
	// signals delivers the interrupts run and attach act on; nil: none.
	signals func() (<-chan os.Signal, func())
	// stops delivers Ctrl-Z (SIGTSTP) until its stop function restores
	// the default (suspend); nil: never caught.
	stops func() (<-chan os.Signal, func())

	usersMu sync.Mutex
	users   map[uint32]string
}

func defaultEnv() *env {
	return &env{
		open:    instance.Open,
		now:     time.Now,
		environ: os.Environ,
		getwd:   os.Getwd,
		getenv:  os.Getenv,
		poll:    50 * time.Millisecond,
		signals: func() (<-chan os.Signal, func()) {
			ch := make(chan os.Signal, 2)
			signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
			return ch, func() { signal.Stop(ch) }
		},
		stops: func() (<-chan os.Signal, func()) {
			ch := make(chan os.Signal, 1)
			signal.Notify(ch, syscall.SIGTSTP)
			return ch, func() { signal.Stop(ch) }
		},
	}
}

func newApp(e *env) *cli.App {
	return &cli.App{
		Name:  "fluxq",
		Usage: "submit, list and cancel jobs; administer queues",
		Description: `fluxq is the job and queue client of a single-machine resource manager
that behaves like Flux. fluxsched runs the jobs; fluxres shows resources.
Jobs can be submitted while no fluxsched runs: they wait for it. Options
may follow a command's arguments, except in submit, run and bulksubmit,
where the job's command line starts at COMMAND. Run 'fluxq help COMMAND'
for a command's options and examples.

EXAMPLES:
  # Five one-core jobs: as many run as there are cores, the rest wait
  $ fluxq submit --cc 1-5 sleep 10
  $ fluxq jobs

  # Run a job here and get its exit code
  $ fluxq run -n 2 -t 5m ./sim

  # What became of your jobs
  $ fluxq jobs -a -o '{{.id_f58}} {{.result}}'`,
		Flags:     instance.Flags(),
		Reader:    e.stdin,
		Writer:    e.stdout,
		ErrWriter: e.stderr,
		Commands: []*cli.Command{
			e.submitCommand(),
			e.runCommand(),
			e.bulksubmitCommand(),
			e.allocCommand(),
			e.jobsCommand(),
			e.infoCommand(),
			e.eventlogCommand(),
			e.attachCommand(),
			e.outputCommand(),
			e.waitCommand(),
			e.cancelCommand(),
			e.purgeCommand(),
			e.urgencyCommand(),
			e.updateCommand(),
			e.resubmitCommand(),
			e.statsCommand(),
			e.topCommand(),
			e.queueCommand(),
			complete.Command("fluxq"),
			complete.Hidden(),
		},
	}
}

// cmdError prefixes err with the command's name (docs/cli.md's
// `fluxq: submit: <message>`), keeping its exit code.
func cmdError(c *cli.Context, err error) error { return exitcode.Prefix(exitcode.CommandPath(c), err) }

// action wraps a command's body: the command's name prefixes its errors.
func action(fn func(c *cli.Context) error) cli.ActionFunc { return exitcode.Action(fn) }

// connect opens the instance for a command.
func (e *env) connect(c *cli.Context) (client.Client, error) { return e.open(c) }

// stdout and stderr are the app's writers.
func stdout(c *cli.Context) io.Writer {
	if c.App.Writer != nil {
		return c.App.Writer
	}
	return os.Stdout
}

func stderr(c *cli.Context) io.Writer {
	if c.App.ErrWriter != nil {
		return c.App.ErrWriter
	}
	return os.Stderr
}

// notef prints one informational line on stderr, prefixed like errors.
func notef(c *cli.Context, format string, a ...any) {
	fmt.Fprintf(stderr(c), "%s: %s: %s\n", c.App.Name, exitcode.CommandPath(c), printable.String(fmt.Sprintf(format, a...)))
}

// fmtID prints a job ID (docs/cli.md: F58, ASCII when asked).
func (e *env) fmtID(id fluid.ID) string { return output.JobID(id, e.getenv) }

// parseID reads a job ID in any RFC 19 form; a malformed one is a usage
// error.
func parseID(s string) (fluid.ID, error) {
	id, err := fluid.Parse(s)
	if err != nil {
		return 0, exitcode.UsageErrorf("invalid job id %q", s)
	}
	return id, nil
}

// userName is the login name of uid, or the number when it has none.
func (e *env) userName(uid uint32) string {
	e.usersMu.Lock()
	defer e.usersMu.Unlock()
	if n, ok := e.users[uid]; ok {
		return n
	}
	name := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(name); err == nil {
		name = u.Username
	}
	if e.users == nil {
		e.users = map[uint32]string{}
	}
	e.users[uid] = name
	return name
}

// lookupUser reads -u USER: a login name or a uid.
func lookupUser(s string) (uint32, error) {
	if u, err := user.Lookup(s); err == nil {
		if n, err := strconv.ParseUint(u.Uid, 10, 32); err == nil {
			return uint32(n), nil
		}
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, exitcode.UsageErrorf("Invalid user %s specified", s)
	}
	return uint32(n), nil
}

// printer is the command's output.Printer.
func printer(c *cli.Context) (*output.Printer, error) { return output.FromContext(c) }

// interruptible returns a context for a command that waits on a job, and a
// channel of the interrupts it receives meanwhile.
func (e *env) interruptible(c *cli.Context) (context.Context, <-chan os.Signal, func()) {
	ctx, cancel := context.WithCancel(c.Context)
	if e.signals == nil {
		return ctx, nil, cancel
	}
	ch, stop := e.signals()
	return ctx, ch, func() { stop(); cancel() }
}
