// Package exec is the exec service: the service side of RFC 32, the job
// execution protocol. Run registers with the job manager (exec-hello), then
// serves <service>.start requests by launching one job shell per job
// (internal/shell, `fluxsched job-shell JOBDIR`) in a session of its own, and
// streams each job's responses back: start, any exception, finish with the
// job's wait status, and the final release, always last.
//
// The job folder <JobsDir>/<id in decimal>/ is the contract with the shell;
// the shell package's doc describes it. A shell outlives the exec service
// that launched it, so a restarted service takes jobs back from their
// folders, whatever the start request's reattach flag says:
//
//   - no spec.json: the job was never launched here, so it is launched now,
//     and answered with start (a reattach for a job whose launch the
//     previous service never got to is a launch, not a loss);
//   - the job's lock is held: the shell runs and is watched again;
//   - the lock is free and a status is recorded: the job ended while no
//     exec service ran, and is reported finished;
//   - the lock is free and there is no status: the shell is lost, and the
//     job gets exception "exec" "job shell lost".
//
// RFC 32 is silent on whether a reattach answers start again. flux-core's
// job-exec does not (its job manager logs an error if it does), so a start
// with reattach true is answered start only when this service launches the
// shell itself; with reattach false a shell already running, or already
// finished, is adopted and answered start, since the job manager has not
// seen it start. Either way a job is launched at most once.
//
// Signals go to the shell's process group, which holds every task: SIGTERM
// on a fatal exception (the job manager's <service>.exception notification)
// or at the time limit (exception "timeout", "resource allocation expired",
// as flux-core's job-exec words it), SIGKILL KillGrace later; a
// <service>.kill notification sends its signal. The time limit is R's
// expiration, else R's start time (or the launch) plus the jobspec's
// duration, and a job taken back gets it re-armed from the same times. A process group is signalled
// only while it can only be the job's (see groupIsOurs). When the shell
// ends, whatever remains of its group is killed before the final release,
// so that released cores are idle.
//
// A job whose start request names a userid other than this process's
// effective uid is a guest's (ARCHITECTURE.md, "Who may do what"): it runs
// only when this process is root, its shell started with the user's uid,
// primary gid and groups, in a job folder handed to the user just before
// the fork; otherwise, or when no such user exists, nothing runs: an
// exception "exec", then the final release. Since the guest may rewrite
// anything in its folder, the service reads the folder and signals the
// job with the guest's rights alone, as flux-core does through
// `flux-imp kill`, so that a forged shell.pid or a symlinked status file
// reaches nothing the guest could not reach itself.
package exec

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/wire"
)

// Defaults of Options.
const (
	DefaultService = "job-exec"
	// DefaultKillGrace is flux-core job-exec's default kill-timeout.
	DefaultKillGrace = 5 * time.Second
)

// Exception types and notes this service raises, in flux-core's words
// where it has them.
const (
	TypeTimeout     = "timeout"
	TypeExec        = "exec"
	NoteTimeout     = "resource allocation expired"
	NoteShellLost   = "job shell lost"
	NoteShellFailed = "job shell failed"
)

// Reasons for conventional error responses; the job manager suspends the
// service until its next hello when it gets one (RFC 32).
const (
	errAlreadyRunning = "job %s is already running here"
	errUnknownMethod  = "unknown method"
)

// pollInterval is how often a shell this service did not launch is checked
// for liveness: it is not our child, so its exit sends us nothing.
const pollInterval = 100 * time.Millisecond

// Options configure Run.
type Options struct {
	// Service is the name registered with exec-hello (DefaultService if
	// empty).
	Service string
	// JobsDir holds the job folders. It is created if needed.
	JobsDir string
	// ShellCommand is the job shell's argv before the job folder, e.g.
	// {"/usr/bin/fluxsched", "job-shell"}.
	ShellCommand []string
	// KillGrace is the time from SIGTERM to SIGKILL (DefaultKillGrace if
	// zero).
	KillGrace time.Duration
	// Now is the clock time limits are measured against (time.Now if
	// nil).
	Now func() time.Time
}

// Run registers as an exec service on conn and serves it until the job
// manager closes it (io.EOF), then returns nil. Running shells are left
// running: the next Run takes them back. A failed hello is returned as an
// error, as RFC 32 says the service must treat it as fatal; so is a start
// request Run must refuse (one it cannot decode, or a second start for a
// job it runs): it answers with a conventional error response, which RFC
// 32 makes a fatality, and returns. Run it again on the same connection to
// register anew.
func Run(conn wire.Conn, opts Options) error {
	if opts.Service == "" {
		opts.Service = DefaultService
	}
	if opts.KillGrace <= 0 {
		opts.KillGrace = DefaultKillGrace
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.JobsDir == "" {
		return errors.New("exec: no jobs directory")
	}
	if len(opts.ShellCommand) == 0 {
		return errors.New("exec: no job shell command")
	}
	dir, err := filepath.Abs(opts.JobsDir)
	if err != nil {
		return fmt.Errorf("exec: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("exec: %w", err)
	}
	opts.JobsDir = dir

	if err := hello(conn, opts.Service); err != nil {
		return err
	}
	s := &server{conn: conn, opts: opts, jobs: map[fluid.ID]*jobRun{}, stop: make(chan struct{})}
	defer s.shutdown()
	for {
		m, err := conn.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("exec: %w", err)
		}
		if err := s.dispatch(m); err != nil {
			return err
		}
	}
}

// hello registers the service and waits for the job manager's answer.
func hello(conn wire.Conn, service string) error {
	req, err := wire.NewRequest(execproto.TopicHello, execproto.Hello{Service: service})
	if err != nil {
		return err
	}
	if err := conn.Send(req); err != nil {
		return fmt.Errorf("exec: %s: %w", execproto.TopicHello, err)
	}
	for {
		m, err := conn.Recv()
		if err == io.EOF {
			return fmt.Errorf("exec: %s: connection closed before the answer", execproto.TopicHello)
		}
		if err != nil {
			return fmt.Errorf("exec: %s: %w", execproto.TopicHello, err)
		}
		if m.Type == wire.Response && m.Topic == execproto.TopicHello {
			if err := m.Err(); err != nil {
				return fmt.Errorf("exec: %w", err)
			}
			return nil
		}
		// Nothing else can come before the answer; a stray message is
		// not worth failing the registration for.
	}
}

// server is one registration of the exec service.
type server struct {
	conn wire.Conn
	opts Options
	stop chan struct{} // closed when Run returns
	wg   sync.WaitGroup

	mu   sync.Mutex
	jobs map[fluid.ID]*jobRun
}

func (s *server) topic(method string) string { return execproto.Topic(s.opts.Service, method) }

func (s *server) send(m wire.Message) {
	// A send fails only once the job manager is gone; Run then returns
	// at the next Recv, and the shells are taken back by the next Run.
	_ = s.conn.Send(m)
}

// dispatch serves one message. An error is fatal: the service answered a
// start with a conventional error response, after which (RFC 32) the job
// manager sends it nothing until a new hello.
func (s *server) dispatch(m wire.Message) error {
	if m.Type != wire.Request {
		return nil // nothing is asked of the job manager but the hello
	}
	switch m.Topic {
	case s.topic(execproto.MethodStart):
		return s.start(m)
	case s.topic(execproto.MethodException):
		// A notification: no response, even to a bad one.
		if e, err := execproto.DecodeException(m); err == nil && e.Severity == 0 {
			s.deliver(e.ID, event{fatal: true})
		}
	case s.topic(execproto.MethodKill):
		if k, err := execproto.DecodeKill(m); err == nil && k.Signal > 0 && k.Signal < 65 {
			s.deliver(k.ID, event{signal: k.Signal})
		}
	default:
		// Not a start: the job manager does not take this as fatal.
		s.send(wire.NewError(m.Topic, wire.ENOSYS, errUnknownMethod))
	}
	return nil
}

func (s *server) start(m wire.Message) error {
	req, err := execproto.DecodeStart(m)
	if err != nil {
		return s.fatal(m.Topic, err.Error())
	}
	s.mu.Lock()
	if _, running := s.jobs[req.ID]; running {
		s.mu.Unlock()
		// RFC 32: one start in flight per job, or responses could not
		// be matched to it.
		return s.fatal(m.Topic, fmt.Sprintf(errAlreadyRunning, req.ID))
	}
	j := &jobRun{s: s, req: req, dir: filepath.Join(s.opts.JobsDir, strconv.FormatUint(uint64(req.ID), 10)),
		wake: make(chan struct{}, 1)}
	s.jobs[req.ID] = j
	s.wg.Add(1)
	s.mu.Unlock()
	go j.run()
	return nil
}

// fatal answers a start with a protocol error and ends this registration:
// the job manager will send nothing more until the next hello, which a new
// Run sends. The running jobs are taken back by that Run.
func (s *server) fatal(topic, reason string) error {
	s.send(wire.NewError(topic, wire.EPROTO, reason))
	return fmt.Errorf("exec: %s: %s", topic, reason)
}

// deliver hands an event to a job's goroutine without ever blocking the
// receive loop; events for jobs not running here are dropped.
func (s *server) deliver(id fluid.ID, ev event) {
	s.mu.Lock()
	j := s.jobs[id]
	s.mu.Unlock()
	if j != nil {
		j.post(ev)
	}
}

// forget removes a job that has nothing more to send but its final
// release, so that the id is free again once the job manager reads it.
func (s *server) forget(j *jobRun) {
	s.mu.Lock()
	if s.jobs[j.req.ID] == j {
		delete(s.jobs, j.req.ID)
	}
	s.mu.Unlock()
}

// shutdown stops watching every job and waits for the watchers to let go.
func (s *server) shutdown() {
	close(s.stop)
	s.wg.Wait()
}
