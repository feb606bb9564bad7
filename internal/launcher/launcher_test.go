package launcher

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/agentproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/wire"
)

// The test binary is also a fake agent, started by the launcher as
// `BINARY --state-dir DIR` with FAKE_AGENT_BUILD set: it serves hello and
// cancel on the build's socket until the state directory goes, and fails
// at once when FAKE_AGENT_FAIL is set.
func TestMain(m *testing.M) {
	if build := os.Getenv("FAKE_AGENT_BUILD"); build != "" {
		os.Exit(fakeAgent(build))
	}
	os.Exit(m.Run())
}

func fakeAgent(build string) int {
	if msg := os.Getenv("FAKE_AGENT_FAIL"); msg != "" {
		fmt.Fprintln(os.Stderr, msg)
		return 1
	}
	if os.Getenv("FAKE_AGENT_PANIC") != "" {
		// Up, then a crash as Go reports one: the panic, then a trace.
		// The socket of the one that died before is replaced, as a
		// real agent replaces it.
		os.Remove(SocketPath(os.Args[2], build))
		if _, err := serveFake(os.Args[2], build); err != nil {
			return 1
		}
		time.Sleep(300 * time.Millisecond) // long enough to be dialled
		fmt.Fprintln(os.Stderr, "panic: agent: encoding a job record: year outside of range [0,9999]")
		fmt.Fprintln(os.Stderr, "\ngoroutine 1 [running]:\nmain.main()\n\t/src/main.go:12 +0x1d")
		return 2
	}
	if len(os.Args) != 3 || os.Args[1] != "--state-dir" {
		fmt.Fprintln(os.Stderr, "fake agent: bad arguments", os.Args)
		return 2
	}
	ln, err := serveFake(os.Args[2], build)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake agent:", err)
		return 1
	}
	defer ln.Close()
	for {
		if _, err := os.Stat(os.Args[2]); err != nil {
			return 0
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// serveFake answers hello with the build, and cancel (of job 1 only)
// by writing the id to DIR/cancelled.
func serveFake(stateDir, build string) (net.Listener, error) {
	ln, err := net.Listen("unix", SocketPath(stateDir, build))
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				conn := wire.NewLineConn(c, c, c.Close)
				defer conn.Close()
				for {
					m, err := conn.Recv()
					if err != nil {
						return
					}
					switch m.Topic {
					case agentproto.TopicHello:
						r, _ := wire.NewResponse(m.Topic, agentproto.Hello{Build: build, PID: os.Getpid(), Running: []fluid.ID{}, Ended: []fluid.ID{}})
						conn.Send(r)
					case agentproto.TopicCancel:
						var cl agentproto.Cancel
						wire.Decode(m, &cl, "id")
						if cl.ID != 1 {
							conn.Send(wire.NewError(m.Topic, 2, "no such job"))
							continue
						}
						f, _ := os.OpenFile(filepath.Join(stateDir, "cancelled"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
						fmt.Fprintf(f, "%s %d\n", build, cl.ID)
						f.Close()
						r, _ := wire.NewResponse(m.Topic, nil)
						conn.Send(r)
					}
				}
			}()
		}
	}()
	return ln, nil
}

func newLocal(t *testing.T, dir, build string) Launcher {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("FAKE_AGENT_BUILD", build)
	l, err := New(Local, Options{StateDir: dir, Build: build, Command: []string{self}, StartTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// stateDir is a state directory whose removal ends the fake agents.
func stateDir(t *testing.T) string {
	dir := t.TempDir()
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// No agent answers: one of this build is started, in a session of its
// own, and a later Connect finds it rather than starting another.
func TestStartsAgent(t *testing.T) {
	dir := stateDir(t)
	l := newLocal(t, dir, "b1")
	agents, err := l.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(agents) != 1 || agents[0].Hello.Build != "b1" {
		t.Fatalf("agents = %+v", agents)
	}
	pid := agents[0].Hello.PID
	if sid, err := unix.Getsid(pid); err != nil || sid != pid {
		t.Errorf("agent %d is in session %d (%v), want its own", pid, sid, err)
	}
	agents[0].Conn.Close()
	if fi, err := os.Stat(Dir(dir)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("agent folder: %v %v, want mode 0700", fi.Mode(), err)
	}
	again, err := l.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != 1 || again[0].Hello.PID != pid {
		t.Fatalf("second connect = %+v, want agent %d again", again, pid)
	}
	again[0].Conn.Close()
}

// An agent of another build is returned after this build's, which is
// started; a socket nobody serves is passed over.
func TestOtherBuildAndStaleSocket(t *testing.T) {
	dir := stateDir(t)
	if err := os.MkdirAll(Dir(dir), 0o700); err != nil {
		t.Fatal(err)
	}
	old, err := serveFake(dir, "old")
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	stale, err := net.Listen("unix", SocketPath(dir, "dead"))
	if err != nil {
		t.Fatal(err)
	}
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	stale.Close()

	agents, err := newLocal(t, dir, "new").Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var builds []string
	for _, a := range agents {
		builds = append(builds, a.Hello.Build)
		a.Conn.Close()
	}
	if strings.Join(builds, " ") != "new old" {
		t.Fatalf("builds = %v, want [new old]", builds)
	}
}

// An agent that cannot start says why, from its log.
func TestAgentFailsToStart(t *testing.T) {
	dir := stateDir(t)
	t.Setenv("FAKE_AGENT_FAIL", "cannot lock the journal")
	_, err := newLocal(t, dir, "b1").Connect(context.Background())
	if err == nil || !strings.Contains(err.Error(), "cannot lock the journal") {
		t.Fatalf("Connect = %v, want the agent's last words", err)
	}
}

// Cancel reaches every agent; one that does not hold the job refuses,
// which is no error.
func TestCancel(t *testing.T) {
	dir := stateDir(t)
	if err := os.MkdirAll(Dir(dir), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"a", "b"} {
		ln, err := serveFake(dir, b)
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
	}
	if err := Cancel(context.Background(), dir, []fluid.ID{1, 2}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "cancelled"))
	if string(b) != "a 1\nb 1\n" {
		t.Fatalf("cancelled = %q", b)
	}
}

func TestUnknownLauncher(t *testing.T) {
	for _, tc := range []struct {
		kind string
		opts Options
		want string
	}{
		{"rsh", Options{StateDir: "/x", Build: "b", Command: []string{"x"}}, `unknown launcher "rsh" (want local, ssh or command)`},
		{"ssh", Options{StateDir: "/x", Build: "b"}, "launcher: no hosts to reach"},
		{"ssh", Options{StateDir: "/x", Build: "b", Remote: Remote{Hosts: []RemoteHost{{Name: "n1", Launcher: "command"}}}}, "host n1: the command launcher needs [exec] command"},
		{"ssh", Options{StateDir: "/x", Build: "b", Remote: Remote{Hosts: []RemoteHost{{Name: "n1", Launcher: "local"}}}}, `host n1: unknown launcher "local" (want ssh or command)`},
	} {
		if _, err := New(tc.kind, tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%q) = %v, want %q", tc.kind, err, tc.want)
		}
	}
}

// The command each host is reached by: ssh's, with BatchMode and the
// options before the address, the remote command one quoted line; the
// template's, the agent's command as words of their own.
func TestRemoteArgv(t *testing.T) {
	tmpl, err := ParseTemplate("srun --overlap -w {host} {command}")
	if err != nil {
		t.Fatal(err)
	}
	l, err := New(SSH, Options{StateDir: "/var/lib/fluxq", Build: "b", Remote: Remote{
		Hosts:    []RemoteHost{{Name: "n1", Address: "10.0.0.1", Launcher: SSH}, {Name: "n2", Launcher: Command}},
		Path:     "/opt/fluxq/bin/fluxsched",
		StateDir: "/scratch/{host}/fluxq state", SSHOptions: []string{"-F", "cfg"}, Template: tmpl, BinaryID: "0123456789ab",
	}})
	if err != nil {
		t.Fatal(err)
	}
	r := l.(*remote)
	if got, want := r.Hosts(), []string{"n1", "n2"}; !slices.Equal(got, want) {
		t.Errorf("Hosts() = %q, want %q", got, want)
	}
	for _, tc := range []struct {
		host string
		want []string
	}{
		{"n1", []string{"ssh", "-T", "-o", "BatchMode=yes", "-F", "cfg", "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=3", "--", "10.0.0.1",
			"/opt/fluxq/bin/fluxsched agent --attach --state-dir '/scratch/n1/fluxq state' --build 0123456789ab"}},
		{"n2", []string{"srun", "--overlap", "-w", "n2", "/opt/fluxq/bin/fluxsched", "agent", "--attach", "--state-dir", "/scratch/n2/fluxq state", "--build", "0123456789ab"}},
	} {
		h, _ := r.host(tc.host)
		if got := r.Argv(h); !slices.Equal(got, tc.want) {
			t.Errorf("Argv(%s) = %q, want %q", tc.host, got, tc.want)
		}
	}
	if _, err := r.ConnectHost(context.Background(), "n9"); err == nil || !strings.Contains(err.Error(), `host "n9": not one of the launcher's hosts`) {
		t.Errorf("ConnectHost(n9) = %v", err)
	}
}

// A command that fails before the hello: its last line of standard error
// is the error, as ssh's would be.
func TestConnectHostSaysWhy(t *testing.T) {
	tmpl, err := ParseTemplate(`sh -c "echo 'some noise' >&2; echo 'ssh: connect to host n1 port 22: Connection refused' >&2; exit 255" {command}`)
	if err != nil {
		t.Fatal(err)
	}
	l, err := New(Command, Options{StateDir: "/x", Build: "b", Remote: Remote{Hosts: []RemoteHost{{Name: "n1", Launcher: Command}}, Template: tmpl}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.(HostLauncher).ConnectHost(context.Background(), "n1")
	if err == nil || err.Error() != "ssh: connect to host n1 port 22: Connection refused" {
		t.Errorf("ConnectHost = %v", err)
	}
	if _, err := l.Connect(context.Background()); err == nil || !strings.Contains(err.Error(), "no host reached (1 of 1 failed): ssh: connect") {
		t.Errorf("Connect = %v", err)
	}
}

// An agent that keeps dying young is started again after a pause that
// doubles each time, and the crash loop is logged once, with the panic
// that ended it (issue 24: it was restarted four times a second, for
// ever); an agent that stays up starts the count over.
func TestCrashLoopBackoff(t *testing.T) {
	dir := stateDir(t)
	t.Setenv("FAKE_AGENT_PANIC", "1")
	var logged bytes.Buffer
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("FAKE_AGENT_BUILD", "b1")
	ln, err := New(Local, Options{StateDir: dir, Build: "b1", Command: []string{self}, StartTimeout: 5 * time.Second,
		Log: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		t.Fatal(err)
	}
	l := ln.(*local)
	var pauses []time.Duration
	l.sleep = func(_ context.Context, d time.Duration) error { pauses = append(pauses, d); return nil }
	for range 5 {
		agents, err := l.Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range agents {
			a.Conn.Close()
		}
		// It dies; the next Connect finds its socket dead.
		l.mu.Lock()
		reaped := l.deaths.reaped
		l.mu.Unlock()
		if reaped != nil {
			<-reaped
		}
	}
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond}
	if !slices.Equal(pauses, want) {
		t.Errorf("pauses %v, want %v", pauses, want)
	}
	out := logged.String()
	if !l.Failing() {
		t.Error("in a logged crash loop, Failing is false")
	}
	if n := strings.Count(out, "keeps exiting"); n != 1 {
		t.Errorf("crash loop logged %d times, want once:\n%s", n, out)
	}
	if !strings.Contains(out, `cause="exit status 2: panic: agent: encoding a job record: year outside of range [0,9999]"`) {
		t.Errorf("the log does not give the cause:\n%s", out)
	}
	// An agent that exits in order starts the count over.
	l.died(time.Now(), nil, "", nil)
	if l.Failing() {
		t.Error("after an orderly exit, Failing is true")
	}
	pauses = nil
	if err := l.pause(context.Background()); err != nil || len(pauses) != 0 {
		t.Errorf("after an orderly exit: pause %v, %v; want none", pauses, err)
	}
}
