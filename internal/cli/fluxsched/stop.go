package fluxsched

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/agent"
	"github.com/fluxq/fluxq/internal/agentproto"
	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/cli/instance"
	"github.com/fluxq/fluxq/internal/wire"
)

// forceWait is how much longer than --timeout `stop --force` waits for an
// agent to exit: its jobs get SIGTERM, and SIGKILL after their grace.
const forceWait = time.Minute

// errBusy is the errnum of an agent that refuses to stop: jobs run.
const errBusy = 16

func stopCommand() *cli.Command {
	return &cli.Command{
		Name:  "stop",
		Usage: "stop the exec agents of the instance (they outlive fluxsched)",
		Description: `Stops the exec agents of the state directory: the processes that run
the jobs' tasks and keep running when fluxsched stops, so that running
jobs survive a restart or an upgrade. An agent that still runs jobs is
left alone unless --force is given: then its jobs are ended (SIGTERM,
then SIGKILL after the kill grace) and their ends are kept for the next
fluxsched, which records them. Stop fluxsched first: a running fluxsched
starts a new agent when it needs one. Prints what it stopped; exits 1 if
an agent refused or did not exit within --timeout. Only the instance
owner (the state directory's owner) and root may stop the agents.

EXAMPLES:
  # Stop the agents once no job runs
  $ fluxsched stop

  # End every running job and stop the agents
  $ fluxsched stop --force`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "force", Usage: "end the jobs still running (SIGTERM, then SIGKILL after their grace)", DisableDefaultText: true},
		},
		Action: exitcode.Action(stopAgents),
	}
}

func stopAgents(c *cli.Context) error {
	if c.Args().Present() {
		return exitcode.UsageErrorf("takes no arguments (got %q)", c.Args().First())
	}
	dir, err := instance.StateDir(c)
	if err != nil {
		return err
	}
	timeout, err := instance.Timeout(c)
	if err != nil {
		return err
	}
	if err := mayStop(dir, uint32(os.Geteuid())); err != nil {
		return err
	}
	agents, err := agent.Find(dir)
	if err != nil {
		return err
	}
	force := c.Bool("force")
	var refused []string
	stopped := 0
	for _, ag := range agents {
		m, err := agent.Call(ag.Socket, agentproto.TopicStop, agentproto.Stop{Force: force}, timeout)
		if errors.Is(err, agent.ErrNotRunning) {
			continue // a dead agent's socket: the next agent clears it
		}
		if err != nil {
			return fmt.Errorf("agent %s: %w", ag.Build, err)
		}
		var we *wire.Error
		if err := m.Err(); errors.As(err, &we) {
			msg := fmt.Sprintf("the exec agent %s%s refused: %s", ag.Build, pidNote(ag.PID), we.Errstr)
			if we.Errnum == errBusy {
				msg += " (--force ends them)"
			}
			refused = append(refused, msg)
			continue
		}
		wait := timeout
		if force {
			wait += forceWait
		}
		if !waitExit(ag, wait) {
			return fmt.Errorf("the exec agent %s%s has not exited after %s", ag.Build, pidNote(ag.PID), wait)
		}
		fmt.Fprintf(c.App.Writer, "stopped the exec agent %s%s\n", ag.Build, pidNote(ag.PID))
		stopped++
	}
	if len(refused) > 0 {
		return errors.New(refused[0])
	}
	if stopped == 0 {
		fmt.Fprintln(c.App.Writer, "no exec agent is running")
	}
	return nil
}

// mayStop refuses anyone but the instance owner (the state directory's
// owner, who runs fluxsched and its agents) and root. A guest cannot see
// into the agents' folder, so without this it was told "no exec agent is
// running", exit 0, while one ran: a refusal must say that it is one.
func mayStop(dir string, me uint32) error {
	fi, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil // no instance: nothing runs, and it says so
		}
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if me == 0 || me == st.Uid {
		return nil
	}
	owner := strconv.FormatUint(uint64(st.Uid), 10)
	if u, err := user.LookupId(owner); err == nil {
		owner = u.Username
	}
	return fmt.Errorf("permission denied: only the instance owner (%s) may stop its exec agents", owner)
}

func pidNote(pid int) string {
	if pid == 0 {
		return ""
	}
	return fmt.Sprintf(" (pid %d)", pid)
}

// waitExit waits until the agent's process is gone, or, without its pid,
// until it removed its socket.
func waitExit(ag agent.Running, wait time.Duration) bool {
	deadline := time.Now().Add(wait)
	for {
		if ag.PID != 0 {
			if gone(ag.PID) {
				return true
			}
		} else if err := unix.Access(ag.Socket, unix.F_OK); err != nil {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// gone reports whether process pid has exited: no such process, or a
// zombie its parent has not reaped yet.
func gone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ESRCH)
	}
	// "pid (comm) state ...": comm may hold anything.
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && (b[i+2] == 'Z' || b[i+2] == 'X')
}
