package launcher

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The bridge lets agentproto requests through, and nothing else.
func TestCheckRequest(t *testing.T) {
	for _, tc := range []struct {
		line, want string // want "": let through
	}{
		{`{"topic":"agent.hello","type":"request","payload":{"build":"b"}}`, ""},
		{`{"topic":"agent.start","type":"request","payload":{}}`, ""},
		{`{"topic":"agent.nosuch","type":"request"}`, ""}, // the agent answers ENOSYS itself
		{`{"topic":"job-manager.submit","type":"request"}`, `is not a request of the exec agent's`},
		{`{"topic":"agent.hello","type":"response"}`, `is not a request of the exec agent's`},
		{`not json`, "not a JSON message"},
		{`[1,2]`, "not a JSON message"},
	} {
		err := CheckRequest([]byte(tc.line))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("CheckRequest(%s) = %v, want it let through", tc.line, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("CheckRequest(%s) = %v, want %q", tc.line, err, tc.want)
		}
	}
}

// forward copies requests line by line to the agent's socket and stops,
// with why, at the first line that is not one.
func TestForward(t *testing.T) {
	c, agent := agentSocket(t)
	got := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(agent)
		got <- string(b)
	}()
	in := `{"topic":"agent.hello","type":"request"}` + "\n\n" + `{"topic":"agent.ack","type":"request","payload":{"ids":[]}}` + "\n" +
		`{"topic":"state.purge","type":"request"}` + "\n" + `{"topic":"agent.stop","type":"request"}` + "\n"
	err := forward(strings.NewReader(in), c)
	if err == nil || !strings.Contains(err.Error(), `carries only its protocol: line 4: request "state.purge" is not a request of the exec agent's`) {
		t.Errorf("forward = %v", err)
	}
	c.Close()
	want := `{"topic":"agent.hello","type":"request"}` + "\n" + `{"topic":"agent.ack","type":"request","payload":{"ids":[]}}` + "\n"
	select {
	case s := <-got:
		if s != want {
			t.Errorf("the agent read %q, want %q", s, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("nothing read")
	}
}

// forward holds no line it has read while its input is quiet: each line
// reaches the agent before the next is sent, a line sent in two pieces
// once its end comes, and a burst arrives whole and in order.
func TestForwardHoldsNothing(t *testing.T) {
	c, agent := agentSocket(t)
	lines := make(chan string, 16)
	go func() {
		r := bufio.NewReader(agent)
		for {
			l, err := r.ReadString('\n')
			if err != nil {
				close(lines)
				return
			}
			lines <- l
		}
	}()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- forward(pr, c); c.CloseWrite() }()
	next := func(want string) {
		t.Helper()
		select {
		case l := <-lines:
			if l != want {
				t.Fatalf("the agent read %q, want %q", l, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%q not forwarded while the input is quiet", want)
		}
	}
	hello := `{"topic":"agent.hello","type":"request"}` + "\n"
	ack := `{"topic":"agent.ack","type":"request","payload":{"ids":[1]}}` + "\n"
	io.WriteString(pw, hello)
	next(hello)
	io.WriteString(pw, ack[:20])
	io.WriteString(pw, ack[20:]+"\n"+hello[:10])
	next(ack)
	io.WriteString(pw, hello[10:]+ack+hello)
	next(hello)
	next(ack)
	next(hello)
	pw.Close()
	if err := <-done; err != nil {
		t.Errorf("forward = %v", err)
	}
}

// agentSocket stands for an agent's socket: the bridge's end (c) and the
// agent's (agent), both closed when the test ends.
func agentSocket(t *testing.T) (c *net.UnixConn, agent net.Conn) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err = net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	agent, err = ln.Accept() // the dial has queued it
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); agent.Close() })
	return c, agent
}

func TestReadLineBound(t *testing.T) {
	r := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(bytes.Repeat([]byte("x"), 64<<20)), strings.NewReader("y\n")), 64<<10)
	if _, err := readLine(r); err == nil || !strings.Contains(err.Error(), "message longer than") {
		t.Errorf("readLine of a line past wire.MaxLine = %v", err)
	}
	r = bufio.NewReader(strings.NewReader("last"))
	if line, err := readLine(r); err != nil || string(line) != "last\n" {
		t.Errorf("readLine of a last line without newline = %q, %v", line, err)
	}
}

// Attach reaches a live agent of its build and carries both ways; the
// agent's hang-up ends it.
func TestAttachBridges(t *testing.T) {
	state := t.TempDir()
	if err := os.MkdirAll(Dir(state), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := serveFake(state, "b1")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	inR, inW := io.Pipe()
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- Attach(context.Background(), Options{StateDir: state, Build: "b1", Command: []string{"/nonexistent"}}, inR, &out)
	}()
	io.WriteString(inW, `{"topic":"agent.hello","type":"request","payload":{"build":"b1"}}`+"\n")
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), `"agent.hello"`) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(out.String(), `"type":"response"`) {
		t.Fatalf("no hello answered through the bridge: %q", out.String())
	}
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Attach = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Attach did not end at the end of its input")
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct{ reason, want string }{
		{"host2 runs fluxsched build 0123456789ab, this instance is build ba9876543210", HostAnotherBuild},
		{"bash: line 1: /opt/fluxq/bin/fluxsched: No such file or directory", HostNoBinary},
		{"bash: line 1: fluxsched: command not found", HostNoBinary},
		{"sh: 1: /opt/fluxsched: Permission denied", HostNoBinary},
		{"root@10.0.0.1: Permission denied (publickey).", HostUnreachable},
		{"ssh: connect to host 10.0.0.1 port 22: Connection refused", HostUnreachable},
		{"no hello from the exec agent within 30s", HostUnreachable},
	} {
		if got := classify(tc.reason); got != tc.want {
			t.Errorf("classify(%q) = %q, want %q", tc.reason, got, tc.want)
		}
	}
}

// Whatever line the far side sends, the bridge's check never panics, and
// what it lets through is an agent.* request that reads as one.
func FuzzCheckRequest(f *testing.F) {
	for _, s := range []string{`{"topic":"agent.hello","type":"request","payload":{"build":"b"}}`, `{"topic":"job-manager.submit","type":"request"}`,
		`{"topic":"agent.start","type":"response"}`, `not json`, `{}`, `{"topic":"agent.","type":"request","matchtag":4294967296}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		err := CheckRequest(line)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("CheckRequest(%q): error %q is not one line", line, err)
			}
			return
		}
		var m struct {
			Topic, Type string
		}
		if json.Unmarshal(line, &m) != nil || !strings.HasPrefix(m.Topic, "agent.") || m.Type != "request" {
			t.Fatalf("CheckRequest let %q through", line)
		}
	})
}

// A socket in the agent's place served by another user is refused before
// a byte is bridged (a remote state directory under a shared /tmp).
func TestAttachRefusesAnotherUsersAgent(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root, to serve the socket as nobody")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The test binary, copied where nobody may run it, is the fake agent.
	bin := filepath.Join(t.TempDir(), "fake")
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	// t.TempDir's folders are 0700: opened to nobody for this test alone.
	for _, d := range []string{filepath.Dir(bin), filepath.Dir(filepath.Dir(bin))} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	// The folder made first by the other user, as under a shared /tmp.
	if err := os.Mkdir(Dir(dir), 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o777)
	os.Chmod(Dir(dir), 0o777)
	os.Chmod(filepath.Dir(dir), 0o755)
	cmd := osexec.Command(bin, "--state-dir", dir)
	cmd.Env = append(os.Environ(), "FAKE_AGENT_BUILD=b1")
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for i := 0; i < 100; i++ {
		if _, err := os.Stat(SocketPath(dir, "b1")); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	err = Attach(context.Background(), Options{StateDir: dir, Build: "b1", Command: []string{"/bin/false"}}, strings.NewReader(""), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "is served by uid 65534") {
		t.Fatalf("Attach = %v, want the other user's socket refused", err)
	}
}
