package fluxsched

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/agent"
	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/cli/instance"
	"github.com/fluxq/fluxq/internal/launcher"
)

// AgentCommand returns the hidden `fluxsched agent --state-dir DIR`
// command: the exec agent, which fluxsched starts detached when it needs
// one. The state directory is on its command line so that ps tells the
// agents of different instances apart.
func AgentCommand() *cli.Command {
	return &cli.Command{
		Name:   "agent",
		Usage:  "run the exec agent of a state directory (started by fluxsched)",
		Hidden: true,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: instance.FlagStateDir, Usage: "the instance's state `DIR` (required: ps shows it)"},
			&cli.StringFlag{Name: "containment", Value: "auto", Usage: "how jobs are contained: auto, cgroup or subreaper"},
			// Run by a launcher for other machines (ssh, command) on the
			// host it reaches: a bridge from stdin and stdout to the
			// agent here, started if none answers.
			&cli.BoolFlag{Name: "attach", Usage: "bridge stdin and stdout to this machine's exec agent, starting it when none answers"},
			&cli.StringFlag{Name: "build", Usage: "with --attach: the instance's `BUILD` (fluxsched's binary id); another is refused"},
		},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return exitcode.UsageErrorf("agent takes no arguments (got %q)", c.Args().First())
			}
			// On the command line, never from the environment: ps tells
			// the agents of different instances apart by it.
			if c.String(instance.FlagStateDir) == "" {
				return exitcode.UsageErrorf("agent: --state-dir DIR is required")
			}
			dir, err := instance.StateDir(c)
			if err != nil {
				return err
			}
			if c.Bool("attach") {
				// One P for the bridge too: its two copies hand each
				// line on and sleep, and a second P only adds thread
				// wake-ups (bench/hosts.sh: the bridges' CPU per job
				// a fifth lower). $GOMAXPROCS, if set, decides.
				if os.Getenv("GOMAXPROCS") == "" {
					runtime.GOMAXPROCS(1)
				}
				return attach(c, dir)
			}
			// One P: the agent's work per job is system calls and short
			// hand-offs between its goroutines (connection, launcher,
			// journal committer, output poller), which on one P pass
			// without waking another thread. For 1,000 true jobs it cut
			// the agent's CPU per job by a sixth. A blocking system call
			// still hands the P on. $GOMAXPROCS, if set, decides.
			if os.Getenv("GOMAXPROCS") == "" {
				runtime.GOMAXPROCS(1)
			}
			// SIGTERM is a forced stop: the jobs end, then the agent.
			ctx, stop := signal.NotifyContext(c.Context, syscall.SIGTERM, os.Interrupt)
			defer stop()
			// Detached from any terminal; a hangup means nothing to it.
			signal.Ignore(syscall.SIGHUP)
			log := slog.New(slog.NewTextHandler(agent.LogWriter(os.Stderr), &slog.HandlerOptions{Level: slog.LevelInfo}))
			a, err := agent.New(agent.Options{StateDir: dir, Containment: c.String("containment"), Log: log.With("pid", os.Getpid())})
			if err != nil {
				return err
			}
			return a.Run(ctx)
		},
	}
}

// attach serves `fluxsched agent --attach`: the far end of the ssh and
// command launchers. A different build here is refused in one line,
// which the launcher reports as the host's reason: an agent of another
// build must not run this instance's jobs.
func attach(c *cli.Context, dir string) error {
	if want := c.String("build"); want != "" && want != agent.BinaryID() {
		host, _ := os.Hostname()
		return fmt.Errorf("%s runs fluxsched build %s, this instance is build %s", host, agent.BinaryID(), want)
	}
	self, err := selfPath()
	if err != nil {
		return fmt.Errorf("finding the exec agent: %w", err)
	}
	// The agent this starts is this machine's (its own build), in a
	// session of its own: it outlives the connection.
	return launcher.Attach(c.Context, launcher.Options{StateDir: dir, Build: agent.BuildID(), Command: []string{self, "agent"}}, os.Stdin, os.Stdout)
}
