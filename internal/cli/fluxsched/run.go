package fluxsched

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/agent"
	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/cli/instance"
	"github.com/fluxq/fluxq/internal/client"
	"github.com/fluxq/fluxq/internal/config"
	execsvc "github.com/fluxq/fluxq/internal/exec"
	"github.com/fluxq/fluxq/internal/fsd"
	"github.com/fluxq/fluxq/internal/gcpace"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/launcher"
	"github.com/fluxq/fluxq/internal/loop"
	"github.com/fluxq/fluxq/internal/queue"
	"github.com/fluxq/fluxq/internal/reservation"
	"github.com/fluxq/fluxq/internal/resource"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/sched"
	"github.com/fluxq/fluxq/internal/server"
	"github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
	"github.com/fluxq/fluxq/internal/wire"
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
			&cli.StringFlag{Name: "log-level", Value: "warn", Usage: "log `LEVEL` on stderr: debug, info, warn or error"},
			&cli.StringFlag{Name: "cpu-profile", Hidden: true, Usage: "write a Go CPU profile of the loop to `FILE`"},
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

// setup is what run assembles before the loop starts.
type setup struct {
	cfg     *config.Config
	dir     string
	inv     *rset.R
	st      *store.Store
	log     *slog.Logger
	limit   int
	sched   sched.Options // the queue policies
	qstates map[string]queue.State
	res     *reservation.State
	schedR  *rset.R // the scheduler's inventory: the instance and its spare nodes
	cleanup []func()
}

func run(c *cli.Context) error {
	if c.Args().Present() {
		return exitcode.UsageErrorf("run takes no arguments (got %q)", c.Args().First())
	}
	s, err := prepare(c)
	defer func() {
		for i := len(s.cleanup) - 1; i >= 0; i-- {
			s.cleanup[i]()
		}
	}()
	if err != nil {
		return err
	}
	if path := c.String("cpu-profile"); path != "" {
		stop, err := startProfile(path)
		if err != nil {
			return err
		}
		defer stop()
	}
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return s.serve(ctx, c)
}

func prepare(c *cli.Context) (*setup, error) {
	s := &setup{}
	var err error
	if s.log, err = logger(c.String("log-level")); err != nil {
		return s, err
	}
	if s.cfg, err = config.Load(c.String("config")); err != nil {
		return s, err
	}
	if err := schedFlags(c, &s.cfg.Sched); err != nil {
		return s, err
	}
	mode := s.cfg.Sched.ModeOrDefault()
	if c.IsSet("mode") {
		mode = c.String("mode")
	}
	if s.limit, err = config.ParseMode(mode); err != nil {
		return s, exitcode.UsageErrorf("--mode: %v", err)
	}
	if s.sched.Default, s.sched.Queues, err = s.cfg.Policies(); err != nil {
		return s, err
	}
	if s.inv, err = inventory(s.cfg); err != nil {
		return s, err
	}
	if s.dir, err = instance.StateDir(c); err != nil {
		return s, err
	}
	if err := os.MkdirAll(filepath.Join(s.dir, client.JobsFolder), 0o700); err != nil {
		return s, fmt.Errorf("state directory: %w", err)
	}
	if err := guestAccess(s.cfg.Access.AllowGuestUser, s.dir, filepath.Join(s.dir, client.JobsFolder)); err != nil {
		return s, err
	}
	timeout, err := instance.Timeout(c)
	if err != nil {
		return s, err
	}
	s.st, err = store.Open(filepath.Join(s.dir, client.StoreFile), store.Options{Timeout: timeout})
	if errors.Is(err, store.ErrBusy) {
		return s, exitcode.WithCode(exitcode.Unavailable, fmt.Errorf("another fluxsched holds this instance (%s)", s.dir))
	}
	if err != nil {
		return s, err
	}
	s.cleanup = append(s.cleanup, func() { s.st.Close() })
	raw, err := s.inv.MarshalJSON()
	if err != nil {
		return s, err
	}
	rcfg, err := json.Marshal(s.cfg.Reservation)
	if err != nil {
		return s, err
	}
	return s, s.st.Update(func(tx *store.Tx) error {
		if err := tx.PutInventory(raw); err != nil {
			return err
		}
		if err := tx.PutReservationConfig(rcfg); err != nil {
			return err
		}
		if s.qstates, err = state.StartQueues(tx, s.cfg.QueueSet); err != nil {
			return err
		}
		// Reservations and spare nodes survive a restart (docs/reservations.md
		// decision 12); the scheduler knows every spare node, in the
		// instance or not.
		if s.res, err = state.LoadReservations(tx, s.cfg.Support); err != nil {
			return err
		}
		spares, err := state.Spares(tx)
		if err != nil {
			return err
		}
		spareR, err := state.SpareR(spares)
		if err != nil {
			return err
		}
		if s.schedR, err = s.inv.Union(spareR); err != nil {
			return fmt.Errorf("spare nodes: %w", err)
		}
		return nil
	})
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

func inventory(cfg *config.Config) (*rset.R, error) {
	if len(cfg.Resource.Config) > 0 {
		return resource.FromConfig(cfg.Resource.Config)
	}
	host, err := os.Hostname()
	if err != nil {
		return nil, fmt.Errorf("discovering resources: %w", err)
	}
	return resource.Discover(os.DirFS("/"), host)
}

func logger(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, exitcode.UsageErrorf("--log-level: unknown level %q", level)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l})), nil
}

// serve runs the loop with its scheduler, exec service and socket.
func (s *setup) serve(ctx context.Context, c *cli.Context) error {
	var down idset.Set
	err := s.st.View(func(tx *store.Tx) error {
		var err error
		down, err = state.Drained(tx)
		return err
	})
	if err != nil {
		return err
	}
	jm := jobmgr.New(jobmgr.Config{Inventory: s.schedR, Reservations: s.res, Down: down, Owner: uint32(os.Getuid()), Guests: s.cfg.Access.GuestLimits()})
	jm.SetQueues(s.cfg.QueueSet, s.qstates)

	schedPeer, err := s.startScheduler(c.String("sched-cmd"))
	if err != nil {
		return err
	}
	execPeer, err := s.startExec()
	if err != nil {
		return err
	}
	l := loop.New(s.st, jm, schedPeer, execPeer, s.log)

	sock := server.SocketPath(s.dir)
	ln, err := server.Listen(sock, s.cfg.Access.AllowGuestUser)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	s.cleanup = append(s.cleanup, func() { os.Remove(sock) })
	srv := &server.Server{Store: s.st, Loop: l, JobsDir: filepath.Join(s.dir, client.JobsFolder), Owner: uint32(os.Getuid()), AllowGuest: s.cfg.Access.AllowGuestUser, Log: s.log}

	ctx, cancel := context.WithCancel(ctx)
	gcpace.Start(ctx)
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	if c.Bool("exit-on-idle") {
		go exitOnIdle(ctx, l, cancel)
	}
	if c.Bool("purge") {
		// The first turn tears the session down, with the jobs loaded, so
		// jobs on departing spare nodes are stopped as for any departure.
		go func() {
			if _, err := l.Do(ctx, func(tx *store.Tx, jm *jobmgr.Manager) (any, error) { return nil, jm.Teardown(tx) }); err != nil && ctx.Err() == nil {
				s.log.Error("purge", "err", err)
				cancel()
			}
		}()
	}
	err = l.Run(ctx)
	cancel()
	if serr := <-served; err == nil {
		err = serr
	}
	return err
}

// exitOnIdle ends the loop once no job is active.
func exitOnIdle(ctx context.Context, l *loop.Loop, stop context.CancelFunc) {
	for {
		changed := l.Changed()
		v, err := l.Do(ctx, func(_ *store.Tx, jm *jobmgr.Manager) (any, error) { return jm.Active(), nil })
		if err != nil {
			return
		}
		if v.(int) == 0 {
			stop()
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
	}
}

// startScheduler gives the loop its scheduler: sched-simple in process, or
// a command speaking RFC 27 as JSON lines. Either is started again if it
// ends while the loop runs (the loop reconnects; RFC 27's hello replays
// the allocations).
func (s *setup) startScheduler(cmdline string) (*loop.Peer, error) {
	var connect func() (wire.Conn, error)
	if cmdline == "" {
		connect = func() (wire.Conn, error) {
			jmEnd, schedEnd := wire.Pipe()
			opts := s.sched
			opts.Limit = s.limit
			opts.Logf = func(f string, a ...any) { s.log.Warn(fmt.Sprintf(f, a...)) }
			go func() {
				if err := sched.Run(schedEnd, opts); err != nil {
					s.log.Error("scheduler", "err", err)
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
	p := &loop.Peer{Connect: connect}
	s.cleanup = append(s.cleanup, func() { p.Close() })
	return p, nil
}

// startExec gives the loop its exec service, in process, started again
// if it ends. It routes the jobs to the exec agents its launcher reaches
// (this binary's hidden agent command, in a session of its own), which
// outlive it.
func (s *setup) startExec() (*loop.Peer, error) {
	self, err := selfPath()
	if err != nil {
		return nil, fmt.Errorf("finding the exec agent: %w", err)
	}
	l, err := launcher.New(s.cfg.Exec.Launcher, launcher.Options{
		StateDir:   s.dir,
		Build:      agent.BuildID(),
		Command:    []string{self, "agent"},
		AllowGuest: s.cfg.Access.AllowGuestUser,
	})
	if err != nil {
		return nil, err
	}
	opts := execsvc.Options{
		Launcher:  l,
		KillGrace: fsd.Duration(s.cfg.KillTimeoutSeconds()),
		Log:       s.log,
	}
	p := &loop.Peer{Connect: func() (wire.Conn, error) {
		jmEnd, execEnd := wire.Pipe()
		go func() {
			if err := execsvc.Run(execEnd, opts); err != nil {
				s.log.Error("exec service", "err", err)
			}
			execEnd.Close()
		}()
		return jmEnd, nil
	}}
	s.cleanup = append(s.cleanup, func() { p.Close() })
	return p, nil
}

// selfPath is how to run this binary again, as the exec agent. It is the
// name it was started by (resolved on PATH and made absolute), not
// os.Executable: a binary reached through a link dispatches on its name,
// as the testscript binaries do.
func selfPath() (string, error) {
	name := os.Args[0]
	if !strings.Contains(name, "/") {
		p, err := exec.LookPath(name)
		if err != nil {
			return os.Executable()
		}
		name = p
	}
	return filepath.Abs(name)
}
