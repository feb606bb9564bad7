package daemon

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/fluxq/fluxq/internal/agent"
	"github.com/fluxq/fluxq/internal/config"
	execsvc "github.com/fluxq/fluxq/internal/exec"
	"github.com/fluxq/fluxq/internal/fsd"
	"github.com/fluxq/fluxq/internal/launcher"
	"github.com/fluxq/fluxq/internal/loop"
	"github.com/fluxq/fluxq/internal/sched"
	"github.com/fluxq/fluxq/internal/wire"
)

// SchedParamsEnv names the environment variable that hands a scheduler
// command the [policy.scheduler] table, as one JSON object: RFC 33 leaves
// that table to the scheduler, and a command has no other way to read it.
const SchedParamsEnv = "FLUXQ_SCHED_PARAMS"

// schedParams is the [policy.scheduler] table as SchedParamsEnv carries
// it: {} when there is none.
func schedParams(table map[string]any) (string, error) {
	if table == nil {
		table = map[string]any{}
	}
	b, err := json.Marshal(table)
	if err != nil {
		return "", fmt.Errorf("error parsing [policy.scheduler] config table: %v", err)
	}
	return string(b), nil
}

// startScheduler gives the loop its scheduler: sched-simple in process, or
// a command speaking RFC 27 as JSON lines, with params in its environment
// (SchedParamsEnv). Either is started again if it ends while the loop
// runs (the loop reconnects; RFC 27's hello replays the allocations).
func (d *Daemon) startScheduler(cmdline, params string, opts sched.Options, log *slog.Logger) (*loop.Peer, error) {
	var connect func() (wire.Conn, error)
	if cmdline == "" {
		opts.Logf = func(f string, a ...any) { log.Warn(fmt.Sprintf(f, a...)) }
		// Its answers stay values on the pipe: the job manager takes a
		// SUCCESS's R as it is (and encodes it once, to store it), where
		// JSON had the scheduler encode it and the job manager parse it
		// again.
		opts.Typed = true
		connect = func() (wire.Conn, error) {
			jmEnd, schedEnd := wire.Pipe()
			go func() {
				if err := sched.Run(schedEnd, opts); err != nil {
					log.Error("scheduler", "err", err)
				}
				schedEnd.Close()
			}()
			return jmEnd, nil
		}
	} else {
		argv := strings.Fields(cmdline)
		connect = func() (wire.Conn, error) {
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Stderr = os.Stderr
			// The last of a name wins (os/exec), so the table is what
			// the scheduler reads whatever fluxsched inherited.
			cmd.Env = append(os.Environ(), SchedParamsEnv+"="+params)
			in, err := cmd.StdinPipe()
			if err != nil {
				return nil, err
			}
			out, err := cmd.StdoutPipe()
			if err != nil {
				return nil, err
			}
			if err := cmd.Start(); err != nil {
				return nil, fmt.Errorf("--sched-cmd: %w", err)
			}
			// Closing the conn closes the child's stdin: it should exit;
			// it is killed if it has not within a few seconds.
			return wire.NewLineConn(out, in, func() error {
				in.Close()
				t := time.AfterFunc(5*time.Second, func() { cmd.Process.Kill() })
				defer t.Stop()
				return cmd.Wait()
			}), nil
		}
	}
	p := &loop.Peer{Connect: connect, Local: cmdline == ""}
	d.cleanup = append(d.cleanup, func() { p.Close() })
	return p, nil
}

// startExec gives the loop its exec service, in process, started again
// if it ends. It routes the jobs to the exec agents its launcher reaches
// (opts.AgentCommand, in a session of its own), which outlive it.
//
// With a launcher for other machines it also returns what fluxsched's
// socket reads jobs' output through, from the agents of their hosts; nil
// with the local one, whose jobs' output is in this state directory.
func (d *Daemon) startExec(opts Options) (*loop.Peer, *execsvc.Outputs, error) {
	l, err := NewLauncher(opts.Config, d.dir, opts.AgentCommand, opts.Log)
	if err != nil {
		return nil, nil, err
	}
	var outputs *execsvc.Outputs
	if _, ok := l.(launcher.HostLauncher); ok {
		outputs = &execsvc.Outputs{}
	}
	eopts := execsvc.Options{
		Outputs:   outputs,
		Launcher:  l,
		KillGrace: fsd.Duration(opts.Config.KillTimeoutSeconds()),
		Log:       opts.Log,
		// A host lost this long ends its jobs (node-failure).
		HostTimeout: opts.Config.HostTimeout(),
	}
	log := opts.Log
	p := &loop.Peer{Connect: func() (wire.Conn, error) {
		jmEnd, execEnd := wire.Pipe()
		go func() {
			switch err := execsvc.Run(execEnd, eopts); {
			case errors.Is(err, wire.ErrClosed):
				// The job manager's end went first: the loop is
				// ending, or dropped the service and says why itself.
				log.Debug("exec service", "err", err)
			case err != nil && failing(l):
				// Said once, with its cause, by the launcher.
				log.Debug("exec service", "err", err)
			case err != nil:
				log.Error("exec service", "err", err)
			}
			execEnd.Close()
		}()
		return jmEnd, nil
	}}
	d.cleanup = append(d.cleanup, func() { p.Close() })
	return p, outputs, nil
}

// NewLauncher is the launcher cfg names for the instance of stateDir:
// the local one (agentCommand starts its agent), or one for other
// machines (ssh, command), whose hosts' bridges are told this binary's
// id so that a host of another build is refused.
func NewLauncher(cfg *config.Config, stateDir string, agentCommand []string, log *slog.Logger) (launcher.Launcher, error) {
	kind, remote, err := cfg.Launcher()
	if err != nil {
		return nil, err
	}
	if kind != launcher.Local {
		remote.BinaryID = agent.BinaryID()
	} else {
		// What a launcher for other machines said of its hosts is no
		// longer this instance's.
		os.Remove(filepath.Join(stateDir, launcher.HostStatusFile))
	}
	return launcher.New(kind, launcher.Options{
		StateDir:   stateDir,
		Build:      agent.BuildID(),
		Command:    agentCommand,
		AllowGuest: cfg.Access.AllowGuestUser,
		Log:        log,
		// The running config's, told to every agent at each hello, so an
		// agent that outlived another fluxsched takes this one's.
		IdleTimeout: cfg.AgentIdleTimeout(),
		SharedCPUs:  cfg.SharedCPUs().String(),
		Remote:      remote,
	})
}

// failing says whether the launcher's agents are in a crash loop it has
// logged.
func failing(l launcher.Launcher) bool {
	f, ok := l.(interface{ Failing() bool })
	return ok && f.Failing()
}
