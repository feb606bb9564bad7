// Package agent is the exec agent, `fluxsched agent --state-dir DIR`: the
// one long-lived process per machine that runs every job's tasks
// (internal/runner) on fluxsched's word, and outlives it. fluxsched's exec
// service talks to it over <state>/agent/<build>.sock in agentproto's JSON
// lines; agentproto's doc is the conversation.
//
// What it holds is in its journal, <build>.journal (internal/journal),
// which it keeps locked while it lives: a job's record is durable before
// its tasks are forked, and its end before its finish is sent. So when
// fluxsched dies, the agent keeps running jobs and keeps their ends until
// the next fluxsched takes them back and acknowledges them; when the agent
// dies (kill -9), the next one, of any build, finds the dead one's journal
// unlocked, merges it, and watches the jobs' processes until they are gone
// (their wait status is lost with the agent that forked them: such a job
// ends with an exec exception saying so, never with a second launch).
// The cgroups are the truth for what runs: a job whose record was lost
// or damaged but whose cgroup still holds processes is held as running
// all the same (findStrays), so that its cores are not given to another.
//
// Nothing of the job's folder is read back: a guest may rewrite it.
//
// The agent exits when asked (agent.stop, SIGTERM as a forced stop), when
// retired (agent.retire: an agent of an older build, once it holds no job),
// when its state directory is removed (its jobs are ended first), and when
// it has held no job and had no fluxsched connected for the idle timeout
// (`[exec] agent-idle-timeout`, which each fluxsched's hello carries): an
// instance started and dropped, as tests do, leaves no agent behind, and
// one with jobs keeps its agent for as long as they run.
package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/agentproto"
	"github.com/fluxq/fluxq/internal/boot"
	"github.com/fluxq/fluxq/internal/connlimit"
	"github.com/fluxq/fluxq/internal/cycletrace"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/journal"
	"github.com/fluxq/fluxq/internal/runner"
)

// Exception notes the agent raises itself.
const (
	NoteRetiring   = "this agent is retiring"
	NoteStopping   = "this agent is stopping"
	NoteStatusLost = "job status lost: the exec agent was restarted"
	NoteNoRecord   = "job status lost: the exec agent has no record of the job"
	noteBadRecord  = "job status lost: its record in the agent's journal is unreadable"
	// noteStray ends a job whose record was lost or damaged but whose
	// cgroup still held processes: it ran on, held, until they ended.
	noteStray = noteBadRecord + "; its processes were watched until they ended"
)

// DefaultKillGrace is the time from SIGTERM to SIGKILL when a start does
// not say (flux-core job-exec's default kill-timeout).
const DefaultKillGrace = 5 * time.Second

// checkInterval is how often the agent checks that its state directory is
// still there, and looks for dead agents' journals.
var checkInterval = 2 * time.Second

// lockWait is how long a starting agent waits for its journal's lock: an
// agent adopting it holds it for a moment; a live agent of the same build
// holds it for good, and then this one is not needed.
const lockWait = 2 * time.Second

// Options configure an agent.
type Options struct {
	// StateDir is the instance's state directory.
	StateDir string
	// Build names the agent's files (BuildID() if empty).
	Build string
	// Containment is the runner's: "auto" (the default), "cgroup" or
	// "subreaper".
	Containment string
	// Log receives what the agent has to say (to stderr if nil).
	Log *slog.Logger
	// Now is the clock (time.Now if nil).
	Now func() time.Time
	// IdleTimeout is how long the agent waits, holding no job and with no
	// fluxsched connected, before it exits, until a fluxsched's hello
	// says otherwise: DefaultIdleTimeout if zero, never if negative.
	IdleTimeout time.Duration
}

// DefaultIdleTimeout is [exec] agent-idle-timeout's default: long enough
// for fluxsched to be restarted (an upgrade, a crash) without a new agent,
// short enough that instances dropped without `fluxsched stop` do not
// pile up agents. An agent that exits costs nothing: fluxsched starts one
// when it next needs it.
const DefaultIdleTimeout = 10 * time.Minute

// jobRunner is what the agent asks of internal/runner.
type jobRunner interface {
	Containment() string
	Memory() (how, whyNot string)
	Prepare(runner.Spec) (*runner.Record, error)
	Launch(*runner.Record, runner.Spec) error
	Discard(fluid.ID)
	Adopt(runner.Record)
	Strays(held func(fluid.ID) bool, named bool) []runner.Record
	Limit(fluid.ID, runner.Spec) (runner.Record, bool)
	SetExpiration(fluid.ID, time.Time) (runner.Record, bool)
	Signal(fluid.ID, syscall.Signal)
	Terminate(fluid.ID)
	SetSharedCPUs(idset.Set)
	Close()
}

// newRunner makes the agent's runner; tests of the agent's protocol
// replace it.
var newRunner = func(opts runner.Options) (jobRunner, error) { return runner.New(opts) }

// Agent is a running exec agent.
type Agent struct {
	opts    Options
	dir     string // <state>/agent
	sock    string
	pidFile string
	stateID [2]uint64 // dev and inode of the state directory
	log     *slog.Logger
	uid     uint32
	run     jobRunner
	jobsDir string // <state>/jobs: the job folders, whose output agent.output serves
	jnl     *journal.Journal
	ln      *net.UnixListener
	lim     *connlimit.Tracker // what callers may hold (limits.go)
	// syncLaunch: a launch record is synced before the fork, and an end
	// before it is reported, not only written, where the kernel does not
	// name its boot (see start and endJob).
	syncLaunch bool

	mu        sync.Mutex
	jobs      map[fluid.ID]*job
	cur       *conn // the fluxsched connection that last said hello
	conns     map[*conn]struct{}
	retiring  bool
	stopping  bool
	launchQ   []*job
	launchSig chan struct{}
	exiting   bool          // connections are refused
	idle      time.Duration // the idle timeout (Options.IdleTimeout, then the last hello's); 0: never
	idleSince time.Time     // when Run first saw the agent idle; zero while it is not
	done      chan struct{} // closed when the agent decided to exit
	doneOnce  sync.Once
	exitOnce  sync.Once
	exitErr   error
	wg        sync.WaitGroup // connection goroutines
	adoptMu   sync.Mutex     // one adoption of dead agents' journals at a time
	// Under adoptMu: the jobs of journals taken back whose records did
	// not read (they wait for findStrays), and whether the cgroups are to
	// be searched for strays at the next adoptDead.
	badRecords map[fluid.ID]bool
	findAgain  bool
}

// Paths of an agent's files for a build, in the agents' folder dir.
func SocketPath(dir, build string) string  { return filepath.Join(dir, build+".sock") }
func PIDPath(dir, build string) string     { return filepath.Join(dir, build+".pid") }
func JournalPath(dir, build string) string { return filepath.Join(dir, build+".journal") }

// CgroupName is the name an instance's job cgroups are grouped under,
// unique to its state directory.
func CgroupName(stateDir string) string { return agentproto.CgroupName(stateDir) }

// New starts an agent: it takes its journal, writes its pid file, takes
// back the jobs of its journal and of dead agents' journals, and listens.
// Run serves it.
func New(opts Options) (*Agent, error) {
	if opts.StateDir == "" {
		return nil, errors.New("agent: no state directory")
	}
	state, err := filepath.Abs(opts.StateDir)
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	opts.StateDir = state
	if opts.Build == "" {
		opts.Build = BuildID()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Containment == "" {
		opts.Containment = "auto"
	}
	switch {
	case opts.IdleTimeout == 0:
		opts.IdleTimeout = DefaultIdleTimeout
	case opts.IdleTimeout < 0:
		opts.IdleTimeout = 0
	}
	a := &Agent{opts: opts, dir: filepath.Join(state, agentproto.Dir), log: opts.Log, uid: uint32(os.Geteuid()),
		jobs: map[fluid.ID]*job{}, conns: map[*conn]struct{}{}, launchSig: make(chan struct{}, 1), done: make(chan struct{}), idle: opts.IdleTimeout,
		syncLaunch: boot.ID() == ""}
	if a.log == nil {
		a.log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	a.lim = connlimit.New("the exec agent", caps(a.log), a.log)
	a.sock, a.pidFile = SocketPath(a.dir, opts.Build), PIDPath(a.dir, opts.Build)
	var st unix.Stat_t
	if err := unix.Stat(state, &st); err != nil {
		return nil, fmt.Errorf("agent: state directory: %w", err)
	}
	a.stateID = [2]uint64{st.Dev, st.Ino}
	if err := a.makeDir(); err != nil {
		return nil, err
	}
	if a.jnl, err = openJournal(JournalPath(a.dir, opts.Build)); err != nil {
		return nil, err
	}
	a.jnl.OnWriteError(a.journalStuck)
	ok := false
	defer func() {
		if !ok {
			a.jnl.Close(false)
		}
	}()
	if err := writePID(a.pidFile); err != nil {
		return nil, fmt.Errorf("agent: pid file: %w", err)
	}
	jobsDir := filepath.Join(state, "jobs")
	if err := os.MkdirAll(jobsDir, 0o700); err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	a.jobsDir = jobsDir
	a.run, err = newRunner(runner.Options{JobsDir: jobsDir, Containment: opts.Containment,
		CgroupName: CgroupName(state), Events: a.event, Now: opts.Now})
	if err != nil {
		os.Remove(a.pidFile)
		return nil, fmt.Errorf("agent: %w", err)
	}
	a.writeMemoryStatus()
	a.takeBack(a.jnl.Jobs())
	// Whatever the journals say, the cgroups are searched once at start
	// (in adoptDead): an entry the journal lost or that no longer reads
	// must not make a busy core look free.
	a.findAgain = true
	a.adoptDead()
	if a.ln, err = listen(a.sock); err != nil {
		a.run.Close()
		os.Remove(a.pidFile)
		return nil, fmt.Errorf("agent: socket: %w", err)
	}
	ok = true
	go a.launcher()
	return a, nil
}

// writeMemoryStatus writes how this agent enforces memory limits where
// commands read it (agentproto.MemoryFile), and logs it once when it does
// not: readable by anyone who reaches the agents' folder.
func (a *Agent) writeMemoryStatus() {
	how, why := a.run.Memory()
	if how == "" {
		a.log.Info(agentproto.NotEnforcedLine(why))
	}
	path := filepath.Join(a.opts.StateDir, agentproto.MemoryFile)
	tmp := path + "." + a.opts.Build + ".tmp"
	err := os.WriteFile(tmp, agentproto.FormatMemoryStatus(how, why), 0o644)
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		a.log.Warn("cannot write the memory limits' status", "file", path, "err", err)
	}
}

// journalStuck logs, once each, that the journal cannot be written and
// that it can again. Meanwhile nothing is lost and nothing is reported
// early: a launch waits for its record, and an end is sent only once it
// is durable, so the jobs whose processes have ended still show R until
// then, with their run times kept (endRecord.Ended). Without this line
// that wait was silent.
func (a *Agent) journalStuck(err error) {
	path := JournalPath(a.dir, a.opts.Build)
	if err != nil {
		a.log.Error("cannot write the journal: launches and job ends wait until it can be written (the jobs show R meanwhile)", "journal", path, "err", err)
		return
	}
	a.log.Warn("the journal can be written again: the launches and job ends that waited go on", "journal", path)
}

// makeDir creates the agents' folder, the owner's alone. fluxsched's
// launcher makes it passable by others when guests are allowed (they may
// then reach the socket, for agent.cancel only); whatever it chose, no one
// else may write there.
func (a *Agent) makeDir() error {
	if err := os.MkdirAll(a.dir, 0o700); err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(a.dir, &st); err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || st.Uid != a.uid {
		return fmt.Errorf("agent: %s is not a directory of uid %d", a.dir, a.uid)
	}
	if st.Mode&0o022 != 0 {
		if err := os.Chmod(a.dir, os.FileMode(st.Mode&0o755)); err != nil {
			return fmt.Errorf("agent: %w", err)
		}
	}
	return nil
}

// openJournal takes the build's journal, waiting a little for an agent
// that is adopting it.
func openJournal(path string) (*journal.Journal, error) {
	deadline := time.Now().Add(lockWait)
	for {
		j, err := journal.Open(path)
		if !errors.Is(err, journal.ErrLocked) {
			if err != nil {
				return nil, fmt.Errorf("agent: %w", err)
			}
			return j, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("agent: another agent of this build runs (its journal %s is locked)", path)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func writePID(path string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, fmt.Appendf(nil, "%d\n", os.Getpid()), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// listen opens the socket. The journal's lock is held, so no live agent
// of this build has it: an old one is a dead agent's.
func listen(path string) (*net.UnixListener, error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	old := unix.Umask(0o177)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	unix.Umask(old)
	if err != nil {
		return nil, err
	}
	ln.SetUnlinkOnClose(false)
	// The folder decides who reaches it; the peer's uid decides whether
	// it is let in (limits.go) and what it may ask.
	if err := os.Chmod(path, 0o666); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// Run serves the agent until it exits: stopped, retired, its state
// directory removed, or ctx done (a forced stop, as SIGTERM asks).
func (a *Agent) Run(ctx context.Context) error {
	go a.accept()
	tick := time.NewTicker(checkInterval)
	defer tick.Stop()
	ctxDone := ctx.Done()
	gone := false
	for {
		select {
		case <-a.done:
			return a.exit()
		case <-ctxDone:
			ctxDone = nil
			a.log.Info("stopping on a signal")
			a.stop(true, nil)
		case <-tick.C:
			if gone {
				continue
			}
			if !a.stateDirThere() {
				gone = true
				a.log.Warn("the state directory is gone: ending every job and exiting", "dir", a.opts.StateDir)
				a.stop(true, nil)
				continue
			}
			a.adoptDead()
			a.idleCheck()
		}
	}
}

// idleCheck ends the agent once it has held no job and had no fluxsched
// connected for its idle timeout, measured from the first check that saw
// it idle (so up to checkInterval late). The test and the stop are one
// step under mu: a fluxsched's hello, which takes mu too, comes either
// before (the agent is not idle) or after (its answer says the agent is
// retiring, and fluxsched starts another).
func (a *Agent) idleCheck() {
	now := a.opts.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cur != nil || len(a.jobs) > 0 || a.idle <= 0 || a.stopping || a.retiring {
		a.idleSince = time.Time{}
		return
	}
	if a.idleSince.IsZero() {
		a.idleSince = now
		return
	}
	if now.Sub(a.idleSince) < a.idle {
		return
	}
	a.log.Info("exiting: no job and no fluxsched", "for", a.idle)
	a.stopping = true
	a.checkExit()
}

// setIdle applies a hello's idle timeout, in seconds (agentproto.HelloRequest).
// Called with mu held.
func (a *Agent) setIdle(secs float64) {
	switch {
	case secs == 0 || secs != secs: // not said
	case secs < 0 || secs >= float64(math.MaxInt64/int64(time.Second)):
		a.idle = 0 // never
	default:
		a.idle = time.Duration(secs * float64(time.Second))
	}
}

// stateDirThere reports whether the state directory is still the one the
// agent started in.
func (a *Agent) stateDirThere() bool {
	var st unix.Stat_t
	if err := unix.Stat(a.opts.StateDir, &st); err != nil {
		return !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.ENOTDIR)
	}
	return st.Dev == a.stateID[0] && st.Ino == a.stateID[1]
}

// exit closes everything; the jobs' processes are all gone (stop) or
// there are none (retire). Ends not acknowledged stay in the journal for
// the next agent.
func (a *Agent) exit() error {
	a.exitOnce.Do(func() { a.exitErr = a.exitNow() })
	return a.exitErr
}

func (a *Agent) exitNow() error {
	a.ln.Close()
	os.Remove(a.sock)
	os.Remove(a.pidFile)
	a.mu.Lock()
	a.exiting = true
	conns := make([]*conn, 0, len(a.conns))
	for c := range a.conns {
		conns = append(conns, c)
	}
	a.mu.Unlock()
	for _, c := range conns {
		c.closeAfterFlush(time.Second)
	}
	a.wg.Wait()
	a.run.Close()
	cycletrace.Dump("agent")
	return a.jnl.Close(true)
}

// finish ends Run.
func (a *Agent) finish() { a.doneOnce.Do(func() { close(a.done) }) }

// Close stops serving without ending any job, as a kill -9 would leave
// things, but tidily: for tests, which then start another agent on the
// same state directory.
func (a *Agent) Close() error {
	a.finish()
	return a.exit()
}

func (a *Agent) accept() {
	for {
		c, err := a.ln.AcceptUnix()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of descriptors: wait, never give up.
			time.Sleep(100 * time.Millisecond)
			continue
		}
		cred, err := credentials(c)
		if err != nil {
			c.Close()
			continue
		}
		guest, why := a.admit(cred.uid)
		if why != "" {
			a.refuse(c, cred, why)
			continue
		}
		a.serve(c, cred, guest)
	}
}
