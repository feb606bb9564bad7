// Package launcher reaches the exec agents that run an instance's jobs
// (agentproto). A launcher is how fluxsched's exec service gets its agents:
// "local" finds the agents of this machine by their sockets in the state
// directory and starts one of this build when none answers; "ssh" and
// "command" (remote.go, a HostLauncher) reach one agent per host through
// a connection of its own that runs `fluxsched agent --attach` there
// (attach.go), a bridge to that machine's agent.
package launcher

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fluxq/fluxq/internal/agentproto"
	"github.com/fluxq/fluxq/internal/wire"
)

// Local is the name of the launcher that runs every host's tasks on this
// machine ([exec] launcher in the config).
const Local = "local"

// Agent is a connected agent that has answered hello: the connection is
// its owner's until closed (a later hello takes the agent over).
type Agent struct {
	Conn  wire.Conn
	Hello agentproto.Hello
	// Name says which agent this is in messages: its socket.
	Name string
	// Hosts are the hosts (R's hostnames) whose ranks this agent runs;
	// nil means every host of the instance, as the local launcher's one
	// agent does. A launcher for other machines (issue 29) connects one
	// agent per machine and names its hosts here, so that the exec
	// service sends each agent only its hosts' part of a job.
	Hosts []string
}

// Launcher yields the agents jobs run on.
type Launcher interface {
	// Connect reaches every live agent, starting one of this build when
	// none answers, and returns them, this build's first.
	Connect(ctx context.Context) ([]*Agent, error)
}

// HostLauncher is a launcher for other machines (issue 29: "ssh",
// "command"): it reaches one agent per host, host by host, so that the
// exec service can go on with the hosts that answer while it retries one
// that does not. Its Connect returns the agents of the hosts it reached.
type HostLauncher interface {
	Launcher
	// Hosts names the hosts it reaches, in the config's order.
	Hosts() []string
	// ConnectHost reaches the agent of host, starting one of this build
	// there when none answers. Its error says why in the transport's own
	// words (ssh's last line of standard error, say), one line, for the
	// host's drain reason.
	ConnectHost(ctx context.Context, host string) (*Agent, error)
}

// Options configure a launcher.
type Options struct {
	// StateDir is the instance's state directory; agents live in its
	// agentproto.Dir.
	StateDir string
	// Build is this fluxsched's build id (agent.BuildID): the agent that
	// takes new jobs is the one of the same build.
	Build string
	// Command starts an agent: argv before "--state-dir DIR", e.g.
	// {"/usr/bin/fluxsched", "agent"}.
	Command []string
	// AllowGuest opens the agents' folder to traversal, so that guests
	// can reach an agent's socket to cancel their own jobs.
	AllowGuest bool
	// StartTimeout bounds the wait for a started agent's socket (10 s if
	// zero).
	StartTimeout time.Duration
	// Log takes what is worth telling the operator: an agent that keeps
	// dying (nothing if nil).
	Log *slog.Logger
	// IdleTimeout is [exec] agent-idle-timeout, told to every agent in
	// the hello: how long one waits, holding no job and with no fluxsched
	// connected, before it exits. Zero: not said (the agent keeps its
	// own); negative: never.
	IdleTimeout time.Duration
	// SharedCPUs are the CPUs more than one of the local agent's hosts
	// names (an idset, config.Config.SharedCPUs), told to it in the
	// hello: their tasks run unbound. Empty: none.
	SharedCPUs string
	// Remote configures the launchers for other machines (SSH,
	// Command); Command is not used by them (the agent on a host is
	// started by its bridge there).
	Remote Remote
}

// New returns the launcher named kind: Local, or SSH or Command (a
// HostLauncher; opts.Remote.Hosts then name each host's own, one of
// these two).
func New(kind string, opts Options) (Launcher, error) {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	switch kind {
	case Local, "":
	case SSH, Command:
		if opts.StateDir == "" || opts.Build == "" {
			return nil, errors.New("launcher: state directory and build are required")
		}
		return newRemote(opts)
	default:
		return nil, fmt.Errorf("unknown launcher %q (want %s, %s or %s)", kind, Local, SSH, Command)
	}
	if opts.StateDir == "" || opts.Build == "" || len(opts.Command) == 0 {
		return nil, errors.New("launcher: state directory, build and agent command are required")
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 10 * time.Second
	}
	return &local{opts: opts, sleep: sleep}, nil
}

// sleep waits d, or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Files of the agents' folder.
const (
	sockSuffix = ".sock"
	pidSuffix  = ".pid"
	// LogFile takes the standard output and error of every agent started
	// here: they report there what they cannot send to fluxsched.
	LogFile = "agent.log"
)

// helloTimeout bounds an agent's answer to hello: a live agent answers at
// once, and a socket nobody serves must not hold the exec service up.
const helloTimeout = 5 * time.Second

// Dir is the agents' folder of a state directory.
func Dir(stateDir string) string { return filepath.Join(stateDir, agentproto.Dir) }

// SocketPath is where the agent of a build listens.
func SocketPath(stateDir, build string) string {
	return filepath.Join(Dir(stateDir), build+sockSuffix)
}

// Sockets lists the agent sockets of a state directory, sorted.
func Sockets(stateDir string) ([]string, error) {
	paths, err := filepath.Glob(filepath.Join(Dir(stateDir), "*"+sockSuffix))
	if err != nil {
		return nil, err
	}
	slices.Sort(paths)
	return paths, nil
}

type local struct {
	opts  Options
	sleep func(context.Context, time.Duration) error // tests see the pauses

	mu     sync.Mutex
	deaths deaths
}

// deaths follows the agents this launcher started. One that dies young
// (fails, within restartStable of its start) is started again only after
// a pause that doubles with each such death in a row, from restartMin to
// restartMax, and a run of crashLoopAfter of them is logged once, with
// the last one's cause (issue 24: an agent that panicked on every start
// was restarted four times a second, for ever, without a word of why).
type deaths struct {
	young  int    // agents that died young, in a row
	cause  string // why the last one ended: its exit status, its last words
	logged bool   // this run was logged
	// reaped is closed once the agent started last has been reaped;
	// nil when none is running.
	reaped chan struct{}
}

const (
	restartMin     = 100 * time.Millisecond
	restartMax     = 30 * time.Second
	restartStable  = 10 * time.Second
	crashLoopAfter = 3
	// reapWait bounds how long a start waits for the previous agent's
	// exit to be seen, so that its death is counted before the next.
	reapWait = time.Second
)

// pause waits before an agent is started, as long as the agents started
// before died young, and logs a crash loop once.
func (l *local) pause(ctx context.Context) error {
	l.mu.Lock()
	reaped := l.deaths.reaped
	l.mu.Unlock()
	if reaped != nil {
		// Not answering: it is dying, or dead and not yet reaped.
		select {
		case <-reaped:
		case <-time.After(reapWait):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	l.mu.Lock()
	n, cause := l.deaths.young, l.deaths.cause
	report := n >= crashLoopAfter && !l.deaths.logged
	if report {
		l.deaths.logged = true
	}
	l.mu.Unlock()
	if n == 0 {
		return nil
	}
	d := restartMax
	if n <= 20 {
		d = min(restartMin<<(n-1), restartMax)
	}
	if report {
		l.opts.Log.Error("the exec agent keeps exiting: it is started again after a pause that grows to "+restartMax.String(),
			"exits", n, "cause", cause, "pause", d)
	}
	return l.sleep(ctx, d)
}

// Failing says whether the agents started here are in a crash loop that
// was logged: their callers then need not log each failure again.
func (l *local) Failing() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.deaths.logged
}

// died records the end of an agent started here at started.
func (l *local) died(started time.Time, err error, logPath string, reaped chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.deaths.reaped == reaped {
		l.deaths.reaped = nil
	}
	if err == nil || time.Since(started) >= restartStable {
		// An orderly exit (stopped, retired, its state directory gone),
		// or one that was up: the next start is at once.
		if l.deaths.logged {
			l.opts.Log.Info("the exec agent had stayed up; a new crash loop would be logged again")
		}
		l.deaths = deaths{reaped: l.deaths.reaped} // a newer agent's, if any
		return
	}
	l.deaths.young++
	l.deaths.cause = err.Error() + ": " + lastWords(logPath)
}

func (l *local) Connect(ctx context.Context) ([]*Agent, error) {
	dir := Dir(l.opts.StateDir)
	if err := prepareDir(dir, l.opts.AllowGuest); err != nil {
		return nil, err
	}
	socks, err := Sockets(l.opts.StateDir)
	if err != nil {
		return nil, fmt.Errorf("exec agents: %w", err)
	}
	var agents []*Agent
	closeAll := func() {
		for _, a := range agents {
			a.Conn.Close()
		}
	}
	for _, path := range socks {
		a, err := l.dial(ctx, path)
		if err != nil {
			// A socket nobody serves: its agent died. The next agent of
			// its build replaces it; one of another build is for that
			// agent to clean up (its journal is adopted by ours).
			continue
		}
		agents = append(agents, a)
	}
	ours := slices.IndexFunc(agents, func(a *Agent) bool { return a.Hello.Build == l.opts.Build && !a.Hello.Retiring })
	if ours < 0 {
		if err := l.pause(ctx); err != nil {
			closeAll()
			return nil, err
		}
		a, err := l.start(ctx)
		if err != nil {
			closeAll()
			return nil, err
		}
		agents = append(agents, a)
		ours = len(agents) - 1
	}
	agents[0], agents[ours] = agents[ours], agents[0]
	return agents, nil
}

// prepareDir makes the agents' folder, private to the instance owner,
// or traversable when guests may reach their agent (the sockets check
// who calls).
func prepareDir(dir string, allowGuest bool) error {
	mode := os.FileMode(0o700)
	if allowGuest {
		mode = 0o711
	}
	if err := os.MkdirAll(dir, mode); err != nil {
		return fmt.Errorf("exec agents: %w", err)
	}
	if err := os.Chmod(dir, mode); err != nil {
		return fmt.Errorf("exec agents: %w", err)
	}
	return nil
}

// start runs `COMMAND --state-dir DIR` in a session of its own, so that
// it outlives fluxsched and its terminal, and waits until it answers.
func (l *local) start(ctx context.Context) (*Agent, error) {
	logPath := filepath.Join(Dir(l.opts.StateDir), LogFile)
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("starting the exec agent: %w", err)
	}
	defer logf.Close()
	argv := append(slices.Clone(l.opts.Command[1:]), "--state-dir", l.opts.StateDir)
	cmd := exec.Command(l.opts.Command[0], argv...)
	cmd.Stdout, cmd.Stderr = logf, logf // stdin: /dev/null
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the exec agent: %w", err)
	}
	exited := make(chan error, 1)
	reaped := make(chan struct{})
	started := time.Now()
	l.mu.Lock()
	l.deaths.reaped = reaped
	l.mu.Unlock()
	// Reaped here if it ends while fluxsched runs; it is not waited for
	// otherwise. Its death is counted before anyone hears of it.
	go func() {
		err := cmd.Wait()
		l.died(started, err, logPath, reaped)
		close(reaped)
		exited <- err
	}()

	path := SocketPath(l.opts.StateDir, l.opts.Build)
	deadline := time.Now().Add(l.opts.StartTimeout)
	for pause := 5 * time.Millisecond; ; pause = min(2*pause, 200*time.Millisecond) {
		if a, err := l.dial(ctx, path); err == nil {
			return a, nil
		}
		select {
		case err := <-exited:
			return nil, fmt.Errorf("the exec agent exited at start (%v): %s", err, lastLine(logPath))
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(pause):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the exec agent did not answer on %s within %s: %s", path, l.opts.StartTimeout, lastLine(logPath))
		}
	}
}

// lastLine is the end of the agents' log, which says why one failed.
func lastLine(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "no log"
	}
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if s == "" {
		return "nothing in " + path
	}
	return s
}

// lastWords is why an agent ended, from the agents' log: the line of its
// panic or fatal error if it left one (the lines after are its trace),
// else the last line.
func lastWords(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return "no log"
	}
	defer f.Close()
	// The end of the log is enough: a trace is a few kilobytes.
	const tail = 64 << 10
	if fi, err := f.Stat(); err == nil && fi.Size() > tail {
		f.Seek(fi.Size()-tail, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	s := "\n" + string(b)
	for _, mark := range []string{"\npanic: ", "\nfatal error: "} {
		if i := strings.LastIndex(s, mark); i >= 0 {
			line, _, _ := strings.Cut(s[i+1:], "\n")
			return strings.TrimSpace(line)
		}
	}
	return lastLine(path)
}

// dial is Dial with this launcher's build and idle timeout.
func (l *local) dial(ctx context.Context, path string) (*Agent, error) {
	h := agentproto.HelloRequest{Build: l.opts.Build, SharedCPUs: l.opts.SharedCPUs}
	switch t := l.opts.IdleTimeout; {
	case t < 0:
		h.IdleTimeout = -1
	case t > 0:
		h.IdleTimeout = t.Seconds()
	}
	return DialHello(ctx, path, h)
}

// Dial connects to the agent listening on path and says hello as the
// given build.
func Dial(ctx context.Context, path, build string) (*Agent, error) {
	return DialHello(ctx, path, agentproto.HelloRequest{Build: build})
}

// DialHello is Dial with the whole hello.
func DialHello(ctx context.Context, path string, hello agentproto.HelloRequest) (*Agent, error) {
	c, err := dial(ctx, path)
	if err != nil {
		return nil, err
	}
	conn := wire.NewLineConn(c, c, c.Close)
	req, err := wire.NewRequest(agentproto.TopicHello, hello)
	if err != nil {
		conn.Close()
		return nil, err
	}
	m, err := roundTrip(c, conn, req)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("exec agent %s: %w", path, err)
	}
	h, err := agentproto.DecodeHello(m)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("exec agent %s: %w", path, err)
	}
	return &Agent{Conn: conn, Hello: h, Name: path}, nil
}

func dial(ctx context.Context, path string) (*net.UnixConn, error) {
	var d net.Dialer
	ctx, cancel := context.WithTimeout(ctx, helloTimeout)
	defer cancel()
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, err
	}
	return c.(*net.UnixConn), nil
}

// roundTrip sends a request and reads its answer within helloTimeout.
func roundTrip(c *net.UnixConn, conn wire.Conn, req wire.Message) (wire.Message, error) {
	if err := c.SetDeadline(time.Now().Add(helloTimeout)); err != nil {
		return wire.Message{}, err
	}
	defer c.SetDeadline(time.Time{})
	if err := conn.Send(req); err != nil {
		return wire.Message{}, err
	}
	for {
		m, err := conn.Recv()
		if err == io.EOF {
			return m, fmt.Errorf("%s: connection closed before the answer", req.Topic)
		}
		if err != nil {
			return m, err
		}
		if m.Type == wire.Response && m.Topic == req.Topic {
			return m, m.Err()
		}
	}
}
