package fluxq

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/cli/instance"
	"github.com/fluxq/fluxq/internal/client"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/state"
)

const flagBg = "bg"

func (e *env) allocCommand() *cli.Command {
	st := &submitState{}
	return &cli.Command{
		Name:      "alloc",
		Usage:     "allocate resources and run a shell (or COMMAND) in them, as a sub-instance",
		ArgsUsage: "[COMMAND [ARGS...]]",
		Description: `Allocates resources as submit's options ask (-n, -N, -c, -g, --mem, -t,
-q...) and, once they are granted, runs an interactive shell ($SHELL, else
/bin/sh) or COMMAND on a terminal in them, as flux alloc does. The
allocation is a job whose task is a sub-instance: a fluxsched of its own,
whose resources are the job's and whose state directory is the job's
alone; in the shell FLUXQ_STATE_DIR names it, so fluxq submit, run and
jobs there use the allocation and nothing else, and the jobs outside
never use it. Exiting the shell ends the sub-instance, and frees the
allocation; the exit status is the shell's. Only the allocation's holder
can reach it.

With --bg there is no shell: the allocation stays until 'fluxq cancel ID'
(or its time limit) ends it; alloc prints its ID, and on stderr how to
reach it.

EXAMPLES:
  # A shell on one whole node for an hour
  $ fluxq alloc -N 1 -t 1h

  # Four cores; the jobs run in the shell share them
  $ fluxq alloc -n 4

  # An allocation kept in the background, used from scripts
  $ fluxq alloc --bg -n 2 -t 30m`,
		Flags: append(st.flags(false),
			&cli.BoolFlag{Name: flagBg, Usage: "keep the allocation without a shell, until it is cancelled", DisableDefaultText: true}),
		Action: action(func(c *cli.Context) error { return e.alloc(c, st) }),
	}
}

func (e *env) alloc(c *cli.Context, st *submitState) error {
	for _, f := range []string{flagInput, flagOutput, flagError} {
		if c.IsSet(f) {
			return exitcode.UsageErrorf("--%s: an allocation's shell runs on a terminal, its input and output", f)
		}
	}
	bg := c.Bool(flagBg)
	argv := c.Args().Slice()
	if bg && len(argv) > 0 {
		return exitcode.UsageErrorf("--bg: no COMMAND: the allocation runs until 'fluxq cancel' (got %q)", argv[0])
	}
	if !bg && len(argv) == 0 {
		sh := os.Getenv("SHELL")
		if sh == "" {
			sh = "/bin/sh"
		}
		argv = []string{sh}
	}
	parent, err := instance.StateDir(c)
	if err != nil {
		return err
	}
	sched, err := fluxschedPath()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "fluxq-alloc-")
	if err != nil {
		return fmt.Errorf("the allocation's state directory: %w", err)
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	st.command = append([]string{sched, instance.Subinstance, "--dir", dir, "--parent", parent, "--"}, argv...)
	st.oneTask = true
	if !c.IsSet(flagJobName) {
		if err := c.Set(flagJobName, "alloc"); err != nil {
			return err
		}
	}
	if c.Bool(flagDryRun) {
		defer os.RemoveAll(dir)
		_, _, err := e.send(c, st)
		return err
	}
	if !bg {
		err := e.runPty(c, st)
		// The sub-instance removes its directory as it ends; one that
		// never started leaves it.
		os.RemoveAll(dir)
		return err
	}
	cl, ids, err := e.send(c, st)
	if err != nil {
		os.RemoveAll(dir)
		return err
	}
	defer cl.Close()
	return e.allocUp(c, cl, ids[0], dir)
}

// allocUp waits until the allocation's sub-instance serves, then says how
// to reach and free it: alloc --bg.
func (e *env) allocUp(c *cli.Context, cl client.Client, id fluid.ID, dir string) error {
	sock := filepath.Join(dir, state.SocketFile)
	for {
		info, err := cl.Job(c.Context, id)
		if err != nil {
			return err
		}
		s := info.Summary
		if s.State == job.Inactive {
			os.RemoveAll(dir)
			why := "it ended"
			if x := s.Exception; x != nil {
				why = fmt.Sprintf("%s: %s", x.Type, x.Note)
			}
			return fmt.Errorf("the allocation %s ended before its sub-instance served (%s)", id, why)
		}
		if _, err := os.Stat(sock); err == nil && s.State == job.Run {
			fmt.Fprintln(stdout(c), id)
			notef(c, "%s holds %s (%d cores): reach it with FLUXQ_STATE_DIR=%s; free it with 'fluxq cancel %s'",
				id, s.Nodelist, s.NCores, dir, id)
			return nil
		}
		select {
		case <-c.Context.Done():
			return c.Context.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// fluxschedPath is the fluxsched beside this fluxq (as installed and
// built), else the one on PATH: the allocation's job runs it.
func fluxschedPath() (string, error) {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), "fluxsched")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	p, err := exec.LookPath("fluxsched")
	if err != nil {
		return "", fmt.Errorf("fluxsched, which runs the allocation, is neither beside fluxq nor on PATH")
	}
	return filepath.Abs(p)
}
