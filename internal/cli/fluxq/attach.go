package fluxq

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/client"
	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/shell"
)

// noteInterrupted is the cancel note of a job whose run or attach was
// interrupted twice, in flux job attach's words.
const noteInterrupted = "interrupted by ctrl-C"

// noteTerminated is the cancel note of a job whose run or attach got
// SIGTERM.
const noteTerminated = "fluxq was terminated"

// exitDetached is the exit status after Ctrl-C then Ctrl-Z detaches from
// a job (128 + SIGINT, as a shell reports an interrupted command).
const exitDetached = 128 + int(syscall.SIGINT)

// cancelWindow is how soon after a Ctrl-C a second one cancels the job,
// or a Ctrl-Z detaches from it (flux job attach's 2s).
const cancelWindow = 2 * time.Second

func (e *env) attachCommand() *cli.Command {
	return &cli.Command{
		Name:      "attach",
		Usage:     "stream a job's output until it ends; exit with its exit code",
		ArgsUsage: "ID",
		Description: `Streams a job's stdout and stderr here until it ends (from its folder,
or through fluxsched from the agents of its hosts on other machines),
then exits with the job's exit code, as run does. Use it to follow a job
started with submit; output prints what a job wrote without waiting.
As flux job attach: a Ctrl-C says what comes next; a second one within
2s cancels the job; Ctrl-Z after a Ctrl-C detaches and leaves the job
running (attach again to follow it). SIGTERM cancels the job.

EXAMPLES:
  # Follow a job
  $ fluxq attach ƒNH

  # Submit now, follow later; the exit status is the job's
  $ id=$(fluxq submit ./sim)
  $ fluxq attach $id; echo $?`,
		Action: action(func(c *cli.Context) error {
			id, err := oneID(c)
			if err != nil {
				return err
			}
			cl, err := e.connect(c)
			if err != nil {
				return err
			}
			defer cl.Close()
			code, err := e.follow(c, cl, id, nil)
			if err != nil {
				return fmt.Errorf("%s: %w", c.Args().First(), err)
			}
			return e.exitWith(code, nil)
		}),
	}
}

// oneID reads the command's only argument, a job ID.
func oneID(c *cli.Context) (fluid.ID, error) {
	if c.Args().Len() != 1 {
		return 0, exitcode.UsageErrorf("expected one job ID, got %d arguments", c.Args().Len())
	}
	return parseID(c.Args().First())
}

// exitWith makes a job's exit code the command's exit status, with no
// message (docs/cli.md: run, attach and wait exit with the job's code).
func (e *env) exitWith(code int, err error) error {
	if err != nil {
		return err
	}
	if code == 0 {
		return nil
	}
	return exitcode.Silent(code)
}

// follow copies the job's output files to stdout and stderr while it runs
// and until it is inactive, prints its exceptions, and returns its exit
// code: its tasks' (128+N for signal N), or 1 when a fatal exception ended
// it before they finished. in, if not nil, is the stream of the job's
// stdin, which follow ends.
func (e *env) follow(c *cli.Context, cl client.Client, id fluid.ID, in *stdinStream) (int, error) {
	detached := false
	if in != nil {
		defer func() {
			if detached {
				in.detach()
			} else {
				in.end()
			}
		}()
	}
	ctx, sigs, stop := e.interruptible(c)
	defer stop()
	info, err := cl.Job(ctx, id)
	if err != nil {
		return 0, err
	}
	e.noteWaitUnserved(c, cl, &info.Summary)
	var tails []*tail
	if info.JobDir != "" {
		tails = []*tail{
			{dir: info.JobDir, name: shell.StdoutFile, uid: info.Summary.UserID, w: stdout(c)},
			{dir: info.JobDir, name: shell.StderrFile, uid: info.Summary.UserID, w: stderr(c)},
		}
	}
	var remote *remoteOutput
	if info.OutputRemote {
		// Its hosts' agents keep it: a host that cannot be read is said
		// once, and the others are followed on.
		remote = newRemoteOutput(cl, id, stdout(c), stderr(c), func(msg string) { notef(c, "%s: %s", e.fmtID(id), msg) })
	}
	pump := func() error {
		for _, t := range tails {
			if err := t.pump(); err != nil {
				return err
			}
		}
		if remote != nil {
			var he *hostOutputError
			if err := remote.pump(ctx); err != nil && !errors.As(err, &he) {
				return err
			}
		}
		return nil
	}
	defer func() {
		for _, t := range tails {
			t.close()
		}
	}()

	var events <-chan eventlog.Event
	evc := make(chan eventlog.Event, 64)
	events = evc
	done := make(chan error, 1)
	go func(out chan<- eventlog.Event) {
		err := cl.Events(ctx, id, true, func(ev eventlog.Event) error {
			select {
			case out <- ev:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		close(out)
		done <- err
	}(evc)
	tick := time.NewTicker(e.poll)
	defer tick.Stop()
	var end jobEnd
	keys := interruptKeys{e: e, c: c, id: id}
	defer keys.close()
	for events != nil {
		select {
		case ev, ok := <-events:
			if !ok {
				events = nil
				break
			}
			if msg := end.apply(ev); msg != "" {
				notef(c, "%s", msg)
			}
			if ev.Name == job.EventStart && in != nil {
				in.jobStarted()
			}
		case <-tick.C:
			if err := pump(); err != nil {
				return 0, err
			}
		case sig := <-sigs:
			if note := keys.signal(sig); note != "" {
				if errs, err := cl.Cancel(ctx, []fluid.ID{id}, note); err == nil && errs[0] != nil {
					notef(c, "%s: %v", e.fmtID(id), errs[0])
				}
			}
		case <-keys.stops:
			if keys.stop() {
				detached = true
				return exitDetached, nil
			}
		}
	}
	if err := <-done; err != nil {
		return 0, err
	}
	// The job is inactive: its shell has closed the files.
	if err := pump(); err != nil {
		return 0, err
	}
	if remote != nil {
		if err := remote.flush(); err != nil {
			return 0, err
		}
	}
	code := end.code()
	if msg := end.tasksFailed(); msg != "" {
		// As flux job attach (and so flux run) ends: on stderr, with
		// the job's code.
		return code, exitcode.JobCode(code, errorString(msg))
	}
	return code, nil
}

// interruptKeys follows the Ctrl-C and Ctrl-Z of a person attached to a
// job, as flux job attach reads them: a first Ctrl-C only says what comes
// next, a second within cancelWindow cancels; a Ctrl-Z within
// cancelWindow of a Ctrl-C detaches. Ctrl-Z is caught only after a
// Ctrl-C, so that otherwise it suspends fluxq as it would any command.
type interruptKeys struct {
	e         *env
	c         *cli.Context
	id        fluid.ID
	lastInt   time.Time // zero: none yet
	stops     <-chan os.Signal
	stopStops func()
}

// signal acts on SIGINT or SIGTERM and returns the note to cancel the job
// with, or "".
func (k *interruptKeys) signal(sig os.Signal) string {
	if sig == syscall.SIGTERM {
		// flux job attach forwards SIGTERM to the tasks; canceling sends
		// them SIGTERM too, then SIGKILL after the kill grace.
		return noteTerminated
	}
	now := k.e.now()
	if !k.lastInt.IsZero() && now.Sub(k.lastInt) <= cancelWindow {
		return noteInterrupted
	}
	k.lastInt = now
	if k.stops == nil && k.e.stops != nil {
		k.stops, k.stopStops = k.e.stops()
	}
	notef(k.c, "one more ctrl-C within 2s to cancel or ctrl-Z to detach")
	return ""
}

// stop acts on a Ctrl-Z and reports whether to detach.
func (k *interruptKeys) stop() bool {
	if k.e.now().Sub(k.lastInt) <= cancelWindow {
		id := k.e.fmtID(k.id)
		notef(k.c, "detached from %s: it keeps running; 'fluxq attach %s' follows it again", id, id)
		return true
	}
	// Too late to detach: the next Ctrl-Z suspends fluxq, as flux job
	// attach does.
	k.close()
	notef(k.c, "one more ctrl-Z to suspend")
	return false
}

func (k *interruptKeys) close() {
	if k.stopStops != nil {
		k.stopStops()
	}
	k.stops, k.stopStops = nil, nil
}

// jobEnd follows the events that decide a job's exit code.
type jobEnd struct {
	finished bool
	status   int
	fatal    bool
}

// apply notes one event and returns what to tell the user about it: an
// exception, in the words of flux job attach.
func (j *jobEnd) apply(ev eventlog.Event) string {
	switch ev.Name {
	case job.EventFinish:
		if st, ok := number(ev.Context["status"]); ok {
			j.finished, j.status = true, int(st)
		}
	case job.EventException:
		sev, _ := number(ev.Context["severity"])
		typ, _ := ev.Context["type"].(string)
		note, _ := ev.Context["note"].(string)
		if sev == 0 {
			j.fatal = true
		}
		msg := fmt.Sprintf("job.exception type=%s severity=%d", typ, int(sev))
		if note != "" {
			msg += " " + note
		}
		return msg
	}
	return ""
}

// tasksFailed says how the tasks failed, in flux-core's words (its
// flux_job_waitstatus_to_exitcode): the signal that ended them, or their
// exit code; "" when they succeeded or never finished (the exception
// said why).
func (j *jobEnd) tasksFailed() string {
	if !j.finished {
		return ""
	}
	ws := j.status
	return failure(&api.JobSummary{WaitStatus: &ws})
}

// code is the tasks' exit code, or 1 for a job that a fatal exception
// ended: before its tasks did, or after tasks that succeeded (its output
// could not be written, say), for then the job FAILED, and a script that
// reads 0 would take lost output for a success.
func (j *jobEnd) code() int {
	if j.finished {
		if code := job.ExitCode(j.status); code != 0 || !j.fatal {
			return code
		}
	}
	if j.fatal {
		return 1
	}
	return 0
}

// tail copies what is appended to a file of a job folder, which may not
// exist yet. The folder of a guest's job is the guest's: the file is
// opened as shell.OpenOutput says, so that root's fluxq never follows a
// guest's symlink nor waits on its FIFO.
type tail struct {
	dir, name string
	uid       uint32 // the job's user
	w         io.Writer
	f         *os.File
	buf       []byte
}

func (t *tail) pump() error {
	if t.f == nil {
		f, err := shell.OpenOutput(t.dir, t.name, t.uid)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		t.f, t.buf = f, make([]byte, 64<<10)
	}
	for {
		n, err := t.f.Read(t.buf)
		if n > 0 {
			if _, werr := t.w.Write(t.buf[:n]); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func (t *tail) close() {
	if t.f != nil {
		t.f.Close()
	}
}

func (e *env) outputCommand() *cli.Command {
	return &cli.Command{
		Name:      "output",
		Usage:     "print what jobs have written so far",
		ArgsUsage: "[ID...]",
		Description: `Prints what a job has written so far, without waiting for it: its
stdout to stdout and its stderr to stderr, from the job's folder (nothing
for output sent elsewhere with --output/--error); for a job that ran on
other machines, from the agents of its hosts, through fluxsched, each
host's lines whole. Use attach to follow a job until it ends. Given
several IDs, or --name and --queue (which select your jobs in any state,
instead of IDs), it prints each job's output in turn, in the order
given (selected jobs: in submission order), each preceded on stdout by
a line '==> ID <==' when there is more than one; a job's stderr follows
its stdout, so 2>&1 keeps them together.

EXAMPLES:
  # What a job printed
  $ fluxq output ƒNH

  # Only its errors
  $ fluxq output ƒNH 2>&1 >/dev/null

  # Every job of the sweep, one after another
  $ fluxq output --name sweep`,
		Flags:  []cli.Flag{nameFlag(), queueFlag()},
		Action: action(e.output),
	}
}

func (e *env) output(c *cli.Context) error {
	set := selectors(c, flagName, flagQueue)
	if len(set) > 0 && c.Args().Len() > 0 {
		return idsWithSelectors(set)
	}
	if len(set) == 0 && c.Args().Len() == 0 {
		return exitcode.UsageErrorf("give job IDs, or --name or --queue to select jobs")
	}
	ids, err := argIDs(c)
	if err != nil {
		return err
	}
	cl, err := e.connect(c)
	if err != nil {
		return err
	}
	defer cl.Close()
	names := c.Args().Slice() // each job as the user wrote it, for errors
	if len(set) > 0 {
		jobs, err := cl.Jobs(c.Context, api.JobsQuery{States: job.All, Queues: c.StringSlice(flagQueue)})
		if err != nil {
			return err
		}
		jobs = matchName(c, jobs)
		if len(jobs) == 0 {
			notef(c, msgMatchedNone)
			return nil
		}
		slices.SortFunc(jobs, func(a, b api.JobSummary) int { return cmp.Compare(a.ID, b.ID) })
		ids, names = make([]fluid.ID, len(jobs)), make([]string, len(jobs))
		for i := range jobs {
			ids[i], names[i] = jobs[i].ID, e.fmtID(jobs[i].ID)
		}
	}
	failed := false
	for i, id := range ids {
		if len(ids) > 1 {
			sep := ""
			if i > 0 {
				sep = "\n"
			}
			fmt.Fprintf(stdout(c), "%s==> %s <==\n", sep, e.fmtID(id))
		}
		if err := e.printOutput(c, cl, id); err != nil {
			if len(ids) == 1 {
				return fmt.Errorf("%s: %w", names[i], err)
			}
			// One job's error does not hide the others' output, as
			// cancel goes on past a job it cannot cancel.
			notef(c, "%s: %v", names[i], err)
			failed = true
		}
	}
	if failed {
		return exitcode.Silent(exitcode.Failed)
	}
	return nil
}

// printOutput copies what job id wrote so far: stdout, then stderr.
func (e *env) printOutput(c *cli.Context, cl client.Client, id fluid.ID) error {
	info, err := cl.Job(c.Context, id)
	if err != nil {
		return err
	}
	if info.OutputRemote {
		o := newRemoteOutput(cl, id, stdout(c), stderr(c), nil)
		err := o.pump(c.Context)
		if ferr := o.flush(); err == nil {
			err = ferr
		}
		return err
	}
	if info.JobDir == "" {
		return nil
	}
	for _, t := range []*tail{
		{dir: info.JobDir, name: shell.StdoutFile, uid: info.Summary.UserID, w: stdout(c)},
		{dir: info.JobDir, name: shell.StderrFile, uid: info.Summary.UserID, w: stderr(c)},
	} {
		err := t.pump()
		t.close()
		if err != nil {
			return err
		}
	}
	return nil
}

// jobInfo fetches one job whole for a command whose first argument named
// it; errors say which job.
func (e *env) jobInfo(c *cli.Context, id fluid.ID) (*api.JobInfo, error) {
	cl, err := e.connect(c)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	info, err := cl.Job(c.Context, id)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Args().First(), err)
	}
	return info, nil
}
