package launcher

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fluxq/fluxq/internal/agentproto"
	"github.com/fluxq/fluxq/internal/wire"
)

// Launchers for other machines ([exec] launcher, or a [[resource.config]]
// entry's).
const (
	// SSH reaches each host with the system's OpenSSH client, the
	// user's own config and keys: `ssh -T -o BatchMode=yes [ssh-options]
	// ADDRESS REMOTE-PATH agent --attach ...`.
	SSH = "ssh"
	// Command reaches each host with [exec] command's template.
	Command = "command"
)

// RemoteHost is one host a launcher for other machines reaches.
type RemoteHost struct {
	// Name is the host's name in R ([[resource.config]] hosts).
	Name string
	// Address is what ssh connects to ({address}); Name if empty, so
	// that a config's host names need not resolve.
	Address string
	// Launcher is SSH or Command.
	Launcher string
}

// Remote configures the launchers for other machines.
type Remote struct {
	// Hosts are the hosts, in the config's order (R's ranks).
	Hosts []RemoteHost
	// Path is the fluxsched to run on the hosts ([exec] remote-path);
	// "fluxsched" if empty, found by the remote PATH.
	Path string
	// StateDir is the agents' state directory on the hosts ([exec]
	// remote-state-dir, {host} replaced by the host's name); the
	// instance's own if empty.
	StateDir string
	// SSHOptions are given to ssh before the address ([exec]
	// ssh-options); BatchMode=yes always.
	SSHOptions []string
	// Template is the command launcher's ([exec] command).
	Template Template
	// BinaryID is this fluxsched's (agent.BinaryID): the bridge on a host
	// refuses to serve an instance of another build.
	BinaryID string
	// ConnectTimeout bounds one host's connection, from the start of ssh
	// to the agent's hello (30 s if zero): the agent may have to be
	// started there first.
	ConnectTimeout time.Duration
}

// remote is the launcher for other machines: one agent per host, each
// reached through its own connection (ssh, or the template's command),
// which carries every job of the host.
type remote struct {
	opts Options

	mu     sync.Mutex
	failed map[string]HostStatus // the hosts whose last try failed (HostStatusFile)
}

func newRemote(opts Options) (*remote, error) {
	r := opts.Remote
	if len(r.Hosts) == 0 {
		return nil, errors.New("launcher: no hosts to reach")
	}
	for _, h := range r.Hosts {
		switch h.Launcher {
		case SSH:
		case Command:
			if len(r.Template.words) == 0 {
				return nil, fmt.Errorf("launcher: host %s: the command launcher needs [exec] command", h.Name)
			}
		default:
			return nil, fmt.Errorf("launcher: host %s: unknown launcher %q (want ssh or command)", h.Name, h.Launcher)
		}
	}
	if opts.Remote.ConnectTimeout <= 0 {
		opts.Remote.ConnectTimeout = 30 * time.Second
	}
	l := &remote{opts: opts, failed: map[string]HostStatus{}}
	// What the last launcher of the instance said (a fluxsched before
	// this one): a host still failing keeps its Since, and one reached or
	// no longer configured leaves the list.
	for _, h := range ReadHostStatus(opts.StateDir) {
		if slices.ContainsFunc(r.Hosts, func(rh RemoteHost) bool { return rh.Name == h.Host }) {
			l.failed[h.Host] = h
		}
	}
	return l, nil
}

func (r *remote) Hosts() []string {
	names := make([]string, len(r.opts.Remote.Hosts))
	for i, h := range r.opts.Remote.Hosts {
		names[i] = h.Name
	}
	return names
}

// Connect reaches every host at once and returns the agents of those
// that answered, in the hosts' order; an error only when none did (the
// first host's, with how many failed).
func (r *remote) Connect(ctx context.Context) ([]*Agent, error) {
	hosts := r.Hosts()
	agents := make([]*Agent, len(hosts))
	errs := make([]error, len(hosts))
	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			agents[i], errs[i] = r.ConnectHost(ctx, h)
		}()
	}
	wg.Wait()
	var out []*Agent
	var first error
	failed := 0
	for i, a := range agents {
		if errs[i] != nil {
			failed++
			if first == nil {
				first = errs[i]
			}
			r.opts.Log.Warn("exec agent not reached", "host", hosts[i], "err", errs[i])
			continue
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no host reached (%d of %d failed): %w", failed, len(hosts), first)
	}
	return out, nil
}

func (r *remote) host(name string) (RemoteHost, bool) {
	i := slices.IndexFunc(r.opts.Remote.Hosts, func(h RemoteHost) bool { return h.Name == name })
	if i < 0 {
		return RemoteHost{}, false
	}
	h := r.opts.Remote.Hosts[i]
	if h.Address == "" {
		h.Address = h.Name
	}
	return h, true
}

// Argv is the command that reaches host's agent.
func (r *remote) Argv(h RemoteHost) []string {
	rm := r.opts.Remote
	path := rm.Path
	if path == "" {
		path = "fluxsched"
	}
	dir := r.opts.StateDir
	if rm.StateDir != "" {
		dir = strings.ReplaceAll(rm.StateDir, "{host}", h.Name)
	}
	command := []string{path, "agent", "--attach", "--state-dir", dir}
	if rm.BinaryID != "" {
		command = append(command, "--build", rm.BinaryID)
	}
	if h.Launcher == Command {
		return rm.Template.Expand(h.Name, h.Address, command)
	}
	// ssh keeps the first value it is given of an option: BatchMode
	// first, so that nothing turns it off; the keepalives after the
	// user's options, so that theirs win. Without keepalives a host that
	// vanishes from the network (not one that refuses) would hold its
	// connection open for as long as TCP does, hours.
	argv := []string{"ssh", "-T", "-o", "BatchMode=yes"}
	argv = append(argv, rm.SSHOptions...)
	argv = append(argv, "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=3")
	// ssh hands its command to the remote user's shell as one line.
	return append(argv, "--", h.Address, ShellQuote(command))
}

// ConnectHost starts the host's connection and says hello through it.
// The connection is the agent's Conn: closing it ends the command (its
// stdin closed, then killed if it lingers). An error is the command's
// last line of standard error (ssh's own words, or the bridge's on the
// host: a missing binary, another build), or how it ended.
func (r *remote) ConnectHost(ctx context.Context, name string) (*Agent, error) {
	a, err := r.connectHost(ctx, name)
	if errors.Is(err, errNoSuchHost) {
		return nil, err
	}
	r.mu.Lock()
	r.recordHost(name, err)
	r.mu.Unlock()
	return a, err
}

var errNoSuchHost = errors.New("not one of the launcher's hosts")

func (r *remote) connectHost(ctx context.Context, name string) (*Agent, error) {
	h, ok := r.host(name)
	if !ok {
		return nil, fmt.Errorf("host %q: %w", name, errNoSuchHost)
	}
	argv := r.Argv(h)
	cmd := exec.Command(argv[0], argv[1:]...)
	tail := &tailWriter{}
	cmd.Stderr = tail
	// Its own process group: a ^C at fluxsched's terminal is
	// fluxsched's to handle, not ssh's.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", argv[0], err)
	}
	var once sync.Once
	var waitErr error
	wait := func() error {
		once.Do(func() {
			in.Close()
			t := time.AfterFunc(5*time.Second, func() { cmd.Process.Kill() })
			waitErr = cmd.Wait()
			t.Stop()
		})
		return waitErr
	}
	conn := wire.NewLineConn(out, in, func() error { wait(); return nil })
	fail := func(err error) (*Agent, error) {
		cmd.Process.Kill()
		werr := wait()
		if line := tail.lastLine(); line != "" {
			return nil, errors.New(line)
		}
		if werr != nil {
			return nil, fmt.Errorf("%s exited (%v) without a word: %v", argv[0], werr, err)
		}
		return nil, err
	}
	hreq := agentproto.HelloRequest{Build: r.opts.Build}
	switch t := r.opts.IdleTimeout; {
	case t < 0:
		hreq.IdleTimeout = -1
	case t > 0:
		hreq.IdleTimeout = t.Seconds()
	}
	req, err := wire.NewRequest(agentproto.TopicHello, hreq)
	if err != nil {
		return fail(err)
	}
	if err := conn.Send(req); err != nil {
		return fail(err)
	}
	answer := make(chan struct {
		m   wire.Message
		err error
	}, 1)
	go func() {
		for {
			m, err := conn.Recv()
			if err == nil && (m.Type != wire.Response || m.Topic != agentproto.TopicHello) {
				continue
			}
			answer <- struct {
				m   wire.Message
				err error
			}{m, err}
			return
		}
	}()
	timer := time.NewTimer(r.opts.Remote.ConnectTimeout)
	defer timer.Stop()
	var m wire.Message
	select {
	case a := <-answer:
		if a.err == io.EOF {
			return fail(errors.New("the connection closed before the agent's hello"))
		}
		if a.err != nil {
			return fail(a.err)
		}
		m = a.m
	case <-timer.C:
		return fail(fmt.Errorf("no hello from the exec agent within %s", r.opts.Remote.ConnectTimeout))
	case <-ctx.Done():
		return fail(ctx.Err())
	}
	if err := m.Err(); err != nil {
		return fail(err)
	}
	hello, err := agentproto.DecodeHello(m)
	if err != nil {
		return fail(err)
	}
	return &Agent{Conn: conn, Hello: hello, Name: h.Name + " (" + h.Launcher + " " + h.Address + ")", Hosts: []string{h.Name}}, nil
}

// tailWriter keeps the end of what a command writes to its standard
// error: its last line says why it failed.
type tailWriter struct {
	mu  sync.Mutex
	buf []byte
}

const tailMax = 4 << 10

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > tailMax {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailMax:]...)
	}
	return len(p), nil
}

// lastLine is the last line written that is not blank, without the
// "fluxsched: " a failed command's message begins with.
func (t *tailWriter) lastLine() string {
	t.mu.Lock()
	s := strings.TrimSpace(string(t.buf))
	t.mu.Unlock()
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[i+1:])
	}
	return strings.TrimPrefix(s, "fluxsched: ")
}
