package fluxsched

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/cli/instance"
	"github.com/fluxq/fluxq/internal/config"
	"github.com/fluxq/fluxq/internal/daemon"
	"github.com/fluxq/fluxq/internal/gcpace"
	"github.com/fluxq/fluxq/internal/resource"
	"github.com/fluxq/fluxq/internal/sched"
	"github.com/fluxq/fluxq/internal/store"
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:  "run",
		Usage: "hold the instance: schedule and run jobs until SIGINT or SIGTERM",
		Description: `Holds the instance: opens the store, serves the socket in the state
directory, and schedules and runs jobs until SIGINT or SIGTERM. Running
jobs survive a stop: the exec agent that forks them keeps running, and
reports what ended meanwhile at the next start (fluxsched stop ends it).
Jobs submitted while no fluxsched ran are run now. Without --config this
machine is discovered (hostname, cores, GPUs), as fluxres discover shows.
'fluxsched help queues' explains named queues.

EXAMPLES:
  # Run jobs on this machine until Ctrl-C
  $ fluxsched run

  # Four hosts from a config, all on this machine, with backfilling
  $ fluxsched run --config four-nodes.toml --policy easy

  # Run what is queued, then exit
  $ fluxsched run --exit-on-idle`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "config", Aliases: []string{"c"}, Usage: "config `FILE` or directory of *.toml (Flux's TOML)", DefaultText: "none: discover this machine"},
			&cli.StringFlag{Name: "mode", Usage: "RFC 27 `MODE`: unlimited, or limited=N alloc requests outstanding", DefaultText: "from the config, else limited=8 for fcfs, unlimited for the others"},
			&cli.StringFlag{Name: "match-policy", Usage: "how nodes are picked, `POLICY`: first-fit, worst-fit or best-fit", DefaultText: "from the config, else worst-fit"},
			&cli.StringFlag{Name: "policy", Usage: "queue `POLICY`: fcfs, easy, hybrid or conservative (a queue's own policy.scheduler wins)", DefaultText: "from [sched], else fcfs"},
			&cli.IntFlag{Name: "queue-depth", Usage: "`N` pending jobs one pass considers per queue, 0 for all", DefaultText: "from [sched], else 32"},
			&cli.IntFlag{Name: "reservation-depth", Usage: "hybrid: `N` jobs that get a reservation per pass", DefaultText: "from [sched], else 64"},
			&cli.StringFlag{Name: "sched-cmd", Usage: "run the scheduler as this `COMMAND`, speaking RFC 27 as JSON lines on stdin/stdout", DefaultText: "the built-in scheduler"},
			&cli.BoolFlag{Name: "exit-on-idle", Usage: "return once no job is active", DisableDefaultText: true},
			&cli.BoolFlag{Name: "purge", Usage: "tear the session down first: every reservation ends and spare nodes leave", DisableDefaultText: true},
			&cli.StringFlag{Name: "log-level", Value: "info", Usage: "log `LEVEL` on stderr, one line each: debug, info (start-up, job exceptions, shutdown), warn or error"},
			&cli.StringFlag{Name: "cpu-profile", Hidden: true, Usage: "write a Go CPU profile of the loop to `FILE`"},
			&cli.StringFlag{Name: "heap-profile", Hidden: true, Usage: "on SIGINT or SIGTERM, write a Go heap profile to `FILE` before the instance ends"},
		},
		Action: run,
	}
}

// startProfile starts a Go CPU profile written to path; call the result to
// stop it.
func startProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

func run(c *cli.Context) error {
	if c.Args().Present() {
		return exitcode.UsageErrorf("run takes no arguments (got %q)", c.Args().First())
	}
	opts, err := options(c)
	if err != nil {
		return err
	}
	d, err := daemon.Open(opts)
	if errors.Is(err, store.ErrBusy) {
		return exitcode.WithCode(exitcode.Unavailable, err)
	}
	if err != nil {
		return err
	}
	if path := c.String("cpu-profile"); path != "" {
		stopProfile, err := startProfile(path)
		if err != nil {
			d.Close()
			return err
		}
		defer stopProfile()
	}
	// Signals end the instance once it is served; before, while the
	// store's lock is awaited, they end the process as they always do.
	// The signal is the cause of the end, which the last log line names.
	ctx, stop := context.WithCancelCause(c.Context)
	defer stop(nil)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		select {
		case sig := <-sigs:
			if path := c.String("heap-profile"); path != "" {
				writeHeapProfile(path, opts.Log)
			}
			stop(signalCause(sig))
		case <-ctx.Done():
		}
	}()
	gcpace.Start(ctx) // the process's collector, not the daemon's: tests run daemons in theirs
	return d.Run(ctx)
}

// writeHeapProfile writes what is live on the heap to path, while the
// instance still holds everything it held when the signal came: the
// pending jobs' cost is measured by what is live then (bench/rss_pending.sh).
func writeHeapProfile(path string, log *slog.Logger) {
	f, err := os.Create(path)
	if err == nil {
		runtime.GC() // the profile's in-use figures are those of the last collection
		err = pprof.WriteHeapProfile(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		log.Error("heap profile", "err", err)
	}
}

// signalCause names the signal that ends the instance, as kill(1) does.
func signalCause(sig os.Signal) error {
	switch sig {
	case os.Interrupt:
		return errors.New("SIGINT")
	case syscall.SIGTERM:
		return errors.New("SIGTERM")
	}
	return fmt.Errorf("signal %v", sig)
}

// options reads the command line into what the daemon starts with; each
// bad flag is a usage error.
func options(c *cli.Context) (daemon.Options, error) {
	var opts daemon.Options
	var err error
	if opts.Log, err = logger(c.String("log-level")); err != nil {
		return opts, err
	}
	opts.ConfigPath = c.String("config")
	if opts.Config, err = config.Load(opts.ConfigPath); err != nil {
		return opts, err
	}
	if err := schedFlags(c, &opts.Config.Sched); err != nil {
		return opts, err
	}
	mode := opts.Config.Sched.ModeOrDefault()
	if c.IsSet("mode") {
		mode = c.String("mode")
	}
	if opts.Limit, err = config.ParseMode(mode); err != nil {
		return opts, exitcode.UsageErrorf("--mode: %v", err)
	}
	if opts.StateDir, err = instance.StateDir(c); err != nil {
		return opts, err
	}
	if opts.Timeout, err = instance.Timeout(c); err != nil {
		return opts, err
	}
	self, err := selfPath()
	if err != nil {
		return opts, fmt.Errorf("finding the exec agent: %w", err)
	}
	opts.AgentCommand = []string{self, "agent"}
	opts.SchedCmd = c.String("sched-cmd")
	opts.ExitOnIdle = c.Bool("exit-on-idle")
	opts.Purge = c.Bool("purge")
	return opts, nil
}

// schedFlags applies the command line's scheduling flags over the
// [sched] table, checking each as a usage error.
func schedFlags(c *cli.Context, t *config.Sched) error {
	if c.IsSet("match-policy") {
		mp := c.String("match-policy")
		if _, err := resource.ParsePolicy(mp); err != nil {
			return exitcode.UsageErrorf("--match-policy: %v", err)
		}
		t.MatchPolicy = mp
	}
	if c.IsSet("policy") {
		k, err := sched.ParseKind(c.String("policy"))
		if err != nil {
			return exitcode.UsageErrorf("--policy: %v", err)
		}
		t.Policy = k.String()
	}
	for _, f := range []struct {
		name string
		min  int
		dst  **int
	}{{"queue-depth", 0, &t.QueueDepth}, {"reservation-depth", 1, &t.ReservationDepth}} {
		if !c.IsSet(f.name) {
			continue
		}
		n := c.Int(f.name)
		if n < f.min {
			return exitcode.UsageErrorf("--%s: must be %d or more, not %d", f.name, f.min, n)
		}
		*f.dst = &n
	}
	return nil
}

func logger(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, exitcode.UsageErrorf("--log-level: unknown level %q", level)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l})), nil
}

// selfPath is how to run this binary again, as the exec agent. It is the
// name it was started by (resolved on PATH and made absolute), not
// os.Executable: a binary reached through a link dispatches on its name,
// as the testscript binaries do.
func selfPath() (string, error) {
	name := os.Args[0]
	if !strings.Contains(name, "/") {
		p, err := exec.LookPath(name)
		if err != nil || !sameFile(p, "/proc/self/exe") {
			// Not this binary: PATH names another fluxsched (an
			// install beside the one ssh ran by its path).
			return os.Executable()
		}
		name = p
	}
	return filepath.Abs(name)
}

func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}
