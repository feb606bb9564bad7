// Package daemon assembles a running instance: it opens the store of a
// state directory, records the inventory and the config there, and runs
// the loop with its scheduler, its exec service and the socket the other
// binaries reach it by. fluxsched run parses its flags and calls Start;
// tests start and stop an instance in process with it.
package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fluxq/fluxq/internal/boot"
	"github.com/fluxq/fluxq/internal/config"
	"github.com/fluxq/fluxq/internal/cycletrace"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/loop"
	"github.com/fluxq/fluxq/internal/queue"
	"github.com/fluxq/fluxq/internal/reservation"
	"github.com/fluxq/fluxq/internal/resource"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/sched"
	"github.com/fluxq/fluxq/internal/server"
	"github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// Options are what an instance is started with.
type Options struct {
	// Config is the loaded config, with any command-line [sched] values
	// already applied over it.
	Config *config.Config
	// ConfigPath is where Config was read from, for the log; "" when
	// none was given and this machine was discovered.
	ConfigPath string
	// StateDir is the instance's state directory; it is created if
	// missing.
	StateDir string
	// Limit is RFC 27's mode: how many alloc requests may be
	// outstanding; 0 is unlimited.
	Limit int
	// Timeout bounds the wait for another process's lock on the store.
	Timeout time.Duration
	// SchedCmd, if set, runs the scheduler as this command line,
	// speaking RFC 27 as JSON lines on its stdin and stdout; else the
	// built-in scheduler runs in process.
	SchedCmd string
	// AgentCommand starts an exec agent: the argv before
	// "--state-dir DIR" (fluxsched's is {fluxsched, "agent"}).
	AgentCommand []string
	// ExitOnIdle ends the instance once no job is active.
	ExitOnIdle bool
	// Purge tears the session down at the first turn: every
	// reservation ends and spare nodes leave.
	Purge bool
	// Log gets the instance's log; nil discards it.
	Log *slog.Logger
}

// BusyError is a state directory whose store another process holds.
type BusyError struct{ Dir string }

func (e *BusyError) Error() string {
	return fmt.Sprintf("another fluxsched holds this instance (%s)", e.Dir)
}

// Unwrap makes errors.Is(err, store.ErrBusy) true.
func (e *BusyError) Unwrap() error { return store.ErrBusy }

// Daemon is an instance: opened (its store held), then served.
type Daemon struct {
	dir   string
	opts  Options
	setup *setup // what Open prepared, for Serve
	st    *store.Store
	loop  *loop.Loop

	mu     sync.Mutex
	state  int                     // opened, serving or closed
	cancel context.CancelCauseFunc // ends a served instance, saying why
	done   chan struct{}           // closed once it has ended and released what it held
	err    error                   // why it ended; read after done

	cleanup []func() // undone in reverse order once it ends
}

// The states of a Daemon.
const (
	opened = iota
	serving
	closed
)

// Start opens the instance of opts.StateDir and serves it until ctx ends,
// Stop is called, or (with ExitOnIdle) no job is active: Open, then
// Serve. It returns once the socket listens.
func Start(ctx context.Context, opts Options) (*Daemon, error) {
	d, err := Open(opts)
	if err != nil {
		return nil, err
	}
	if err := d.Serve(ctx); err != nil {
		return nil, err
	}
	return d, nil
}

// Open checks the config, opens the store of opts.StateDir (waiting up to
// opts.Timeout for another process's lock: a store still held is a
// *BusyError) and records there what this run of the instance is. Nothing
// runs yet: Serve or Run it, or Close it.
func Open(opts Options) (*Daemon, error) {
	if opts.Config == nil {
		return nil, errors.New("daemon: no config")
	}
	if len(opts.AgentCommand) == 0 {
		return nil, errors.New("daemon: no exec agent command")
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	d := &Daemon{dir: opts.StateDir, opts: opts, done: make(chan struct{})}
	s, err := d.prepare(opts)
	if err != nil {
		d.undo()
		return nil, err
	}
	d.setup = s
	return d, nil
}

// Serve starts the loop with its scheduler, exec service and socket, and
// returns once the socket listens; the instance then runs until ctx ends,
// Stop is called, or (with ExitOnIdle) no job is active. An instance that
// cannot start is closed.
func (d *Daemon) Serve(ctx context.Context) error {
	d.mu.Lock()
	if d.state != opened {
		d.mu.Unlock()
		return errors.New("daemon: served twice, or closed")
	}
	d.state = serving
	ctx, d.cancel = context.WithCancelCause(ctx)
	d.mu.Unlock()
	if err := d.serve(ctx, d.cancel, d.opts, d.setup); err != nil {
		d.cancel(err)
		d.undo()
		d.mu.Lock()
		d.state, d.err = closed, err
		d.mu.Unlock()
		close(d.done)
		return err
	}
	return nil
}

// Run serves the instance and waits until it ends, as fluxsched run does.
func (d *Daemon) Run(ctx context.Context) error {
	if err := d.Serve(ctx); err != nil {
		return err
	}
	return d.Wait()
}

// Close releases an instance that was opened and not served: its store.
func (d *Daemon) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.state == opened {
		d.undo()
		d.state = closed
		close(d.done)
	}
}

// setup is what Open prepares before the loop starts.
type setup struct {
	inv     *rset.R
	sched   sched.Options // the queue policies
	qstates map[string]queue.State
	res     *reservation.State
	schedR  *rset.R // the scheduler's inventory: the instance and its spare nodes
}

// prepare checks the config, opens the store and records in it what this
// run of the instance is.
func (d *Daemon) prepare(opts Options) (*setup, error) {
	cfg := opts.Config
	s := &setup{}
	var err error
	if s.sched.Default, s.sched.Queues, err = cfg.Policies(); err != nil {
		return nil, err
	}
	if s.inv, err = Inventory(cfg); err != nil {
		return nil, err
	}
	jobs := filepath.Join(d.dir, state.JobsFolder)
	if err := os.MkdirAll(jobs, 0o700); err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	if err := guestAccess(cfg.Access.AllowGuestUser, d.dir, jobs); err != nil {
		return nil, err
	}
	path := filepath.Join(d.dir, state.StoreFile)
	// The full check, every page, once at start (a million jobs: seconds,
	// docs/architecture.md), so that a damaged store is refused in one
	// line here rather than met by bbolt in the middle of a turn.
	d.st, err = store.Open(path, store.Options{Timeout: opts.Timeout, FullCheck: true, Checked: func(rep *store.Report) {
		for _, n := range rep.Notes {
			opts.Log.Warn("store", "note", n)
		}
	}})
	if errors.Is(err, store.ErrBusy) {
		return nil, &BusyError{Dir: d.dir}
	}
	if err != nil {
		return nil, err
	}
	// A store whose file is mostly free room (after a large purge) is
	// compacted: bbolt reuses free pages but never returns them.
	var c store.Compacted
	d.st, c, err = store.CompactIfSparse(d.st, store.Options{Timeout: opts.Timeout})
	switch {
	case d.st == nil && errors.Is(err, store.ErrBusy):
		return nil, &BusyError{Dir: d.dir}
	case d.st == nil:
		// Compacted, and the new file could not be opened.
		return nil, err
	case err != nil:
		// The copy failed (a full filesystem): the store is as it was,
		// and serves as it is.
		opts.Log.Warn("cannot compact the store", "err", err)
	case c.After < c.Before:
		opts.Log.Info("store compacted", "path", path, "before", c.Before, "after", c.After)
	}
	st := d.st
	d.cleanup = append(d.cleanup, func() { st.Close() })
	raw, err := s.inv.MarshalJSON()
	if err != nil {
		return nil, err
	}
	rcfg, err := json.Marshal(cfg.Reservation)
	if err != nil {
		return nil, err
	}
	err = d.st.Update(func(tx *store.Tx) error {
		if err := tx.PutInventory(raw); err != nil {
			return err
		}
		if err := tx.PutReservationConfig(rcfg); err != nil {
			return err
		}
		if s.qstates, err = state.StartQueues(tx, cfg.QueueSet); err != nil {
			return err
		}
		// Reservations and spare nodes survive a restart (docs/reservations.md
		// decision 12); the scheduler knows every spare node, in the
		// instance or not.
		if s.res, err = state.LoadReservations(tx, cfg.Support); err != nil {
			return err
		}
		s.schedR, err = state.Schedulable(tx, s.inv)
		return err
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Inventory is the instance's resources: the config's [[resource.config]],
// else this machine, discovered.
func Inventory(cfg *config.Config) (*rset.R, error) {
	if len(cfg.Resource.Config) > 0 {
		return resource.FromConfig(cfg.Resource.Config)
	}
	host, err := os.Hostname()
	if err != nil {
		return nil, fmt.Errorf("discovering resources: %w", err)
	}
	return resource.Discover(os.DirFS("/"), host, cfg.Resource.Reserve())
}

// serve starts the loop with its scheduler, exec service and socket;
// cancel ends ctx, and so the instance.
func (d *Daemon) serve(ctx context.Context, cancel context.CancelCauseFunc, opts Options, s *setup) error {
	cfg := opts.Config
	var down idset.Set
	err := d.st.View(func(tx *store.Tx) error {
		var err error
		down, err = state.Drained(tx)
		return err
	})
	if err != nil {
		return err
	}
	jm := jobmgr.New(jobmgr.Config{Inventory: s.schedR, Reservations: s.res, Down: down, Owner: uint32(os.Getuid()), Guests: cfg.Access.GuestLimits(), BootID: boot.ID(), TypedSched: true})
	jm.SetQueues(cfg.QueueSet, s.qstates)
	age, num := cfg.JobManager.Retention()
	jm.SetRetention(jobmgr.Retention{AgeLimit: age, NumLimit: num})

	s.sched.Limit = opts.Limit
	params, err := schedParams(cfg.Policy.Scheduler)
	if err != nil {
		return err
	}
	schedPeer, err := d.startScheduler(opts.SchedCmd, params, s.sched, opts.Log)
	if err != nil {
		return err
	}
	execPeer, outputs, err := d.startExec(opts)
	if err != nil {
		return err
	}
	l := loop.New(d.st, jm, schedPeer, execPeer, opts.Log)
	d.loop = l
	remover := newFolderRemover(filepath.Join(d.dir, state.JobsFolder), opts.Log)
	l.OnPurged(remover.add)
	remover.sweep(d.st)
	go remover.run(ctx)

	sock := server.SocketPath(d.dir)
	ln, err := server.Listen(sock, cfg.Access.AllowGuestUser)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	d.cleanup = append(d.cleanup, func() { os.Remove(sock) })
	srv := &server.Server{Store: d.st, Loop: l, JobsDir: filepath.Join(d.dir, state.JobsFolder), Owner: uint32(os.Getuid()), AllowGuest: cfg.Access.AllowGuestUser, GuestMaxActive: cfg.Access.GuestMaxActive(), Log: opts.Log, Output: outputs}

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	go dropMapped(ctx, d.st, opts.Log)
	if opts.ExitOnIdle {
		go exitOnIdle(ctx, l, cancel)
	}
	if opts.Purge {
		// The first turn tears the session down, with the jobs loaded, so
		// jobs on departing spare nodes are stopped as for any departure.
		go func() {
			if _, err := l.Do(ctx, func(tx *store.Tx, jm *jobmgr.Manager) (any, error) { return nil, jm.Teardown(tx) }); err != nil && ctx.Err() == nil {
				opts.Log.Error("purge", "err", err)
				cancel(fmt.Errorf("purge: %w", err))
			}
		}()
	}
	d.logStart(opts, s, sock, down)
	interval, err := cfg.BackupInterval()
	if err != nil {
		return err
	}
	bk := newBackups(d.st, d.dir, interval, opts.Log)
	bk.start(ctx)
	go func() {
		err := l.Run(ctx)
		cycletrace.Dump("fluxsched")
		cancel(err)
		// The loop has ended: its job manager is read from here alone.
		logEnd(opts.Log, err, context.Cause(ctx), jm.Counts(nil))
		bk.wait()
		if err == nil {
			// A clean stop: the store as this run leaves it.
			bk.once("stop")
		}
		if serr := <-served; err == nil {
			err = serr
		}
		d.err = err
		d.undo()
		close(d.done)
	}()
	return nil
}

// undo releases what the instance holds, the last taken first.
func (d *Daemon) undo() {
	for i := len(d.cleanup) - 1; i >= 0; i-- {
		d.cleanup[i]()
	}
	d.cleanup = nil
}

// exitOnIdle ends the loop once no job is active, and retention has
// purged what is due (a batch a turn: it is asked again shortly).
func exitOnIdle(ctx context.Context, l *loop.Loop, stop context.CancelCauseFunc) {
	for {
		changed := l.Changed()
		var retaining bool
		v, err := l.Do(ctx, func(_ *store.Tx, jm *jobmgr.Manager) (any, error) {
			due := jm.RetainDue()
			retaining = !due.IsZero() && !due.After(jm.Now())
			return jm.Active(), nil
		})
		if err != nil {
			return
		}
		if v.(int) == 0 && !retaining {
			stop(errIdle)
			return
		}
		var soon <-chan time.Time
		if v.(int) == 0 {
			soon = time.After(20 * time.Millisecond)
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-soon:
		}
	}
}

// Wait returns once a served instance has ended and released its store
// and socket: nil when it was stopped, or why it failed. The exec agents
// it started keep running (fluxsched stop ends them).
func (d *Daemon) Wait() error {
	<-d.done
	return d.err
}

// Stop ends a served instance and waits for it, as SIGTERM ends
// fluxsched run; one never served is closed.
func (d *Daemon) Stop() error {
	d.mu.Lock()
	cancel := d.cancel
	d.mu.Unlock()
	if cancel == nil {
		d.Close()
		return nil
	}
	cancel(errStopped)
	return d.Wait()
}

// Done is closed once the instance has ended.
func (d *Daemon) Done() <-chan struct{} { return d.done }

// Loop is the instance's loop: a test submits operations through it.
func (d *Daemon) Loop() *loop.Loop { return d.loop }

// StateDir is the instance's state directory.
func (d *Daemon) StateDir() string { return d.dir }
