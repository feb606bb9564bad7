package exec

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/shell"
	"github.com/fluxq/fluxq/internal/wire"
)

// shellEnv makes this test binary the job shell: the exec service under
// test launches os.Args[0] with the job folder, and TestMain runs
// shell.Main instead of the tests.
const shellEnv = "FLUXQ_EXEC_TEST_SHELL"

// failAfter bounds every wait of these tests; it is a failure bound, never
// a way to synchronize.
const failAfter = 30 * time.Second

func TestMain(m *testing.M) {
	if os.Getenv(shellEnv) == "1" {
		os.Exit(shell.Main(os.Args))
	}
	os.Setenv(shellEnv, "1")
	// A race-enabled binary sleeps a second at exit by default; the
	// shells are this binary, and that second would be every job's.
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	os.Exit(m.Run())
}

// jm is a fake job manager: the other end of exec.Run's connection.
type jm struct {
	t    *testing.T
	conn wire.Conn
	ran  chan error // Run's result

	// runErr is what Run is expected to return (nil: io.EOF, cleanly).
	runErr string

	mu      sync.Mutex
	cond    *sync.Cond
	byJob   map[fluid.ID][]wire.Message // start responses, in order
	others  []wire.Message              // every other message
	readErr error
}

// startExec runs the exec service against a fake job manager and answers
// its hello.
func startExec(t *testing.T, opts Options) *jm {
	t.Helper()
	a, b := wire.Pipe()
	if len(opts.ShellCommand) == 0 {
		opts.ShellCommand = []string{os.Args[0]}
	}
	if opts.KillGrace == 0 {
		opts.KillGrace = 2 * time.Second
	}
	h := &jm{t: t, conn: a, ran: make(chan error, 1), byJob: map[fluid.ID][]wire.Message{}}
	h.cond = sync.NewCond(&h.mu)
	go func() { h.ran <- Run(b, opts) }()

	m := h.recvRaw()
	// RFC 32: the service registers with exec-hello {service}.
	hello, err := execproto.DecodeHello(m)
	if err != nil || m.Type != wire.Request {
		t.Fatalf("first message = %+v, %v; want an exec-hello request", m, err)
	}
	want := opts.Service
	if want == "" {
		want = DefaultService
	}
	if hello.Service != want {
		t.Fatalf("hello service = %q, want %q", hello.Service, want)
	}
	resp, _ := wire.NewResponse(execproto.TopicHello, nil)
	h.send(resp)
	go h.read()
	t.Cleanup(func() { h.stop() })
	return h
}

func (h *jm) recvRaw() wire.Message {
	h.t.Helper()
	type res struct {
		m   wire.Message
		err error
	}
	ch := make(chan res, 1)
	go func() { m, err := h.conn.Recv(); ch <- res{m, err} }()
	select {
	case r := <-ch:
		if r.err != nil {
			h.t.Fatalf("recv: %v", r.err)
		}
		return r.m
	case <-time.After(failAfter):
		h.t.Fatal("no message from the exec service")
	}
	return wire.Message{}
}

func (h *jm) read() {
	for {
		m, err := h.conn.Recv()
		h.mu.Lock()
		if err != nil {
			h.readErr = err
			h.cond.Broadcast()
			h.mu.Unlock()
			return
		}
		var r execproto.Response
		if m.Type == wire.Response && !m.IsError() && json.Unmarshal(m.Payload, &r) == nil && r.ID != 0 {
			h.byJob[r.ID] = append(h.byJob[r.ID], m)
		} else {
			h.others = append(h.others, m)
		}
		h.cond.Broadcast()
		h.mu.Unlock()
	}
}

// waitFor waits until cond holds over the messages received so far.
func (h *jm) waitFor(what string, cond func() bool) {
	h.t.Helper()
	timer := time.AfterFunc(failAfter, func() {
		h.mu.Lock()
		h.readErr = fmt.Errorf("timed out waiting for %s", what)
		h.cond.Broadcast()
		h.mu.Unlock()
	})
	defer timer.Stop()
	h.mu.Lock()
	defer h.mu.Unlock()
	for !cond() {
		if h.readErr != nil {
			h.t.Fatalf("waiting for %s: %v; job messages %v, others %v", what, h.readErr, h.byJob, h.others)
		}
		h.cond.Wait()
	}
}

func (h *jm) send(m wire.Message) {
	h.t.Helper()
	if err := h.conn.Send(m); err != nil {
		h.t.Fatalf("send %s: %v", m.Topic, err)
	}
}

func (h *jm) request(method string, v any) {
	h.t.Helper()
	m, err := wire.NewRequest(execproto.Topic(DefaultService, method), v)
	if err != nil {
		h.t.Fatal(err)
	}
	h.send(m)
}

func (h *jm) start(id fluid.ID, jobspec, r json.RawMessage, reattach bool) {
	h.t.Helper()
	h.request(execproto.MethodStart, execproto.Start{ID: id, UserID: uint32(os.Geteuid()), Jobspec: jobspec, Reattach: reattach, R: r})
}

// resp is a start response as the tests compare it.
type resp struct {
	Type     string
	Status   int    `json:",omitempty"`
	ExcType  string `json:",omitempty"`
	Severity int    `json:",omitempty"`
	Note     string `json:",omitempty"`
	Ranks    string `json:",omitempty"`
	Final    bool   `json:",omitempty"`
}

func decodeResp(t *testing.T, m wire.Message) resp {
	t.Helper()
	r, data, err := execproto.DecodeResponse(m)
	if err != nil {
		t.Fatalf("bad start response %s: %v", m.Payload, err)
	}
	out := resp{Type: r.Type}
	switch d := data.(type) {
	case *execproto.Finish:
		out.Status = d.Status
	case *execproto.Exception:
		out.ExcType, out.Severity, out.Note = d.Type, d.Severity, d.Note
	case *execproto.Release:
		out.Ranks, out.Final = d.Ranks, d.Final
	}
	return out
}

// responses returns what the job has been sent so far.
func (h *jm) responses(id fluid.ID) []resp {
	h.mu.Lock()
	ms := slices.Clone(h.byJob[id])
	h.mu.Unlock()
	out := make([]resp, len(ms))
	for i, m := range ms {
		out[i] = decodeResp(h.t, m)
	}
	return out
}

// countLocked returns how many responses of type typ the job has been sent.
// Callers hold h.mu.
func (h *jm) countLocked(id fluid.ID, typ string) int {
	n := 0
	for _, m := range h.byJob[id] {
		var r execproto.Response
		if json.Unmarshal(m.Payload, &r) == nil && r.Type == typ {
			n++
		}
	}
	return n
}

// waitResponse waits until the job has been sent a response of type typ.
func (h *jm) waitResponse(id fluid.ID, typ string) {
	h.t.Helper()
	h.waitFor(fmt.Sprintf("%s for job %d", typ, id), func() bool { return h.countLocked(id, typ) > 0 })
}

// finished waits for the job's final release and returns all it was sent,
// checking that the final release came last (RFC 32).
func (h *jm) finished(id fluid.ID) []resp {
	h.t.Helper()
	h.waitResponse(id, execproto.TypeRelease)
	rs := h.responses(id)
	last := rs[len(rs)-1]
	// RFC 32: the final release is the last response for the job.
	if last.Type != execproto.TypeRelease || !last.Final {
		h.t.Fatalf("job %d: last response %+v, want the final release; all: %+v", id, last, rs)
	}
	return rs
}

// stop closes the connection and waits for Run to return.
func (h *jm) stop() {
	h.t.Helper()
	h.conn.Close()
	select {
	case err := <-h.ran:
		if h.runErr == "" && err != nil {
			h.t.Errorf("Run returned %v, want nil on EOF", err)
		}
		if h.runErr != "" && (err == nil || !strings.Contains(err.Error(), h.runErr)) {
			h.t.Errorf("Run returned %v, want an error with %q", err, h.runErr)
		}
		h.ran <- err // stop may be called again by Cleanup
	case <-time.After(failAfter):
		h.t.Fatal("Run did not return after the connection closed")
	}
}

// types lists the response types, for comparing sequences.
func types(rs []resp) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Type
	}
	return out
}

func finishStatus(t *testing.T, rs []resp) int {
	t.Helper()
	for _, r := range rs {
		if r.Type == execproto.TypeFinish {
			return r.Status
		}
	}
	t.Fatalf("no finish in %+v", rs)
	return 0
}

// makeJobspec builds a jobspec as fluxq submit would; the environment is
// PATH alone unless given.
func makeJobspec(t *testing.T, o jobspec.Options) json.RawMessage {
	t.Helper()
	if o.Environment == nil {
		o.Environment = map[string]string{"PATH": os.Getenv("PATH")}
	}
	js, err := jobspec.FromOptions(o)
	if err != nil {
		t.Fatal(err)
	}
	b, err := js.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// makeR builds an R of n ranks, each with the given cores and GPUs.
func makeR(t *testing.T, n int, cores, gpus string, start, exp float64) json.RawMessage {
	t.Helper()
	var nodes []rset.Node
	for i := 0; i < n; i++ {
		node := rset.Node{Rank: uint(i), Hostname: fmt.Sprintf("node%d", i), Cores: idset.MustParse(cores)}
		if gpus != "" {
			node.GPUs = idset.MustParse(gpus)
		}
		nodes = append(nodes, node)
	}
	r := rset.New(nodes)
	if start != 0 || exp != 0 {
		r = r.WithTimes(start, exp)
	}
	b, err := r.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func jobDir(jobs string, id fluid.ID) string {
	return filepath.Join(jobs, strconv.FormatUint(uint64(id), 10))
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fifo makes a named pipe: a task writes to it, the test reads, and so the
// test knows the task is running without guessing how long that takes.
func fifo(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := unix.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// readLine opens a FIFO and reads one line from it.
func readLine(t *testing.T, path string) string {
	t.Helper()
	ch := make(chan string, 1)
	go func() {
		f, err := os.Open(path)
		if err != nil {
			ch <- "error: " + err.Error()
			return
		}
		defer f.Close()
		line, _ := bufio.NewReader(f).ReadString('\n')
		ch <- strings.TrimSpace(line)
	}()
	select {
	case s := <-ch:
		return s
	case <-time.After(failAfter):
		t.Fatalf("nothing written to %s", path)
	}
	return ""
}

// writeLine opens a FIFO for writing and writes one line, which a task
// blocked reading it takes as its cue.
func writeLine(t *testing.T, path, line string) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			done <- err
			return
		}
		_, err = io.WriteString(f, line+"\n")
		f.Close()
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(failAfter):
		t.Fatalf("no reader on %s", path)
	}
}

// waitExit waits for any process to end, whoever its parent is.
func waitExit(t *testing.T, pid int) {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if err == unix.ESRCH {
		return
	}
	if err != nil {
		t.Fatalf("pidfd_open %d: %v", pid, err)
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, int(failAfter/time.Millisecond))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Fatalf("process %d did not exit", pid)
		}
		return
	}
}

func readPID(dir string) (int, error) { return shell.ReadPID(dir) }

func sh(script string) []string { return []string{"sh", "-c", script} }

// The wait status a command ends with is the job's finish status; its
// responses are start, finish and the final release (RFC 32).
func TestCommands(t *testing.T) {
	jobs := t.TempDir()
	h := startExec(t, Options{JobsDir: jobs})
	tests := []struct {
		name    string
		command []string
		status  int
	}{
		{"true", []string{"true"}, 0},
		{"false", []string{"false"}, job.WaitStatusExited(1)},
		{"exit 3", sh("exit 3"), job.WaitStatusExited(3)},
		{"killed by a signal", sh("kill -9 $$"), job.WaitStatusSignaled(9)},
	}
	r := makeR(t, 1, "0", "", 0, 0)
	for i, tc := range tests {
		id := fluid.ID(100 + i)
		h.start(id, makeJobspec(t, jobspec.Options{Command: tc.command}), r, false)
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id := fluid.ID(100 + i)
			rs := h.finished(id)
			want := []resp{
				{Type: execproto.TypeStart},
				{Type: execproto.TypeFinish, Status: tc.status},
				// A release of all ranks, final.
				{Type: execproto.TypeRelease, Ranks: "all", Final: true},
			}
			if diff := cmp.Diff(want, rs); diff != "" {
				t.Errorf("responses (-want +got):\n%s", diff)
			}
		})
	}
}

// flux-shell: a task that cannot start ends the job with exit status 127,
// an exec exception, and the message on the job's stderr.
func TestCommandNotFound(t *testing.T) {
	jobs := t.TempDir()
	h := startExec(t, Options{JobsDir: jobs})
	id := fluid.ID(7)
	h.start(id, makeJobspec(t, jobspec.Options{Command: []string{"no-such-command-xyz"}}), makeR(t, 1, "0", "", 0, 0), false)
	rs := h.finished(id)
	note := "task 0 (host node0): start failed: no-such-command-xyz: No such file or directory"
	want := []resp{
		{Type: execproto.TypeStart},
		{Type: execproto.TypeException, ExcType: "exec", Note: note},
		{Type: execproto.TypeFinish, Status: job.WaitStatusExited(127)},
		{Type: execproto.TypeRelease, Ranks: "all", Final: true},
	}
	if diff := cmp.Diff(want, rs); diff != "" {
		t.Errorf("responses (-want +got):\n%s", diff)
	}
	stderr := readFile(t, filepath.Join(jobDir(jobs, id), shell.StderrFile))
	if wantLine := shell.Name + "[0]: FATAL: " + note + "\n"; stderr != wantLine {
		t.Errorf("stderr = %q, want %q", stderr, wantLine)
	}
}

// A task sees the jobspec's environment and cwd, the FLUXQ_ variables and
// CUDA_VISIBLE_DEVICES (its rank's GPUs, or -1 without, as flux-shell's
// gpu-affinity sets it).
func TestEnvironment(t *testing.T) {
	jobs := t.TempDir()
	h := startExec(t, Options{JobsDir: jobs})
	cwd := t.TempDir()
	script := `echo "$FLUXQ_JOB_ID|$FLUXQ_JOB_NNODES|$FLUXQ_JOB_SIZE|$FLUXQ_TASK_RANK|$FLUXQ_TASK_LOCAL_ID|$CUDA_VISIBLE_DEVICES|$FOO|$FLUXQ_JOB_CC|$HOME"; pwd`
	env := map[string]string{"PATH": os.Getenv("PATH"), "FOO": "bar baz", "FLUXQ_JOB_CC": "3"}
	tests := []struct {
		name string
		id   fluid.ID
		env  map[string]string
		gpus string
		want string
	}{
		{"gpus", 1 << 30, env, "0-1", fluid.ID(1<<30).String() + "|1|1|0|0|0,1|bar baz|3|\n" + cwd + "\n"},
		{"no gpus", 1<<30 + 1, env, "", fluid.ID(1<<30+1).String() + "|1|1|0|0|-1|bar baz|3|\n" + cwd + "\n"},
		{"ascii id", 1<<30 + 2, map[string]string{"PATH": os.Getenv("PATH"), "FOO": "x", "FLUXQ_F58_FORCE_ASCII": "1"}, "",
			"f" + strings.TrimPrefix(fluid.ID(1<<30+2).String(), "ƒ") + "|1|1|0|0|-1|x||\n" + cwd + "\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h.start(tc.id, makeJobspec(t, jobspec.Options{Command: sh(script), Cwd: cwd, Environment: tc.env}), makeR(t, 1, "0", tc.gpus, 0, 0), false)
			if st := finishStatus(t, h.finished(tc.id)); st != 0 {
				t.Fatalf("status %d; stderr %q", st, readFile(t, filepath.Join(jobDir(jobs, tc.id), shell.StderrFile)))
			}
			got := readFile(t, filepath.Join(jobDir(jobs, tc.id), shell.StdoutFile))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("task output (-want +got):\n%s", diff)
			}
		})
	}
}

// flux-shell: a cwd that is not a directory is reported on the job's
// stderr, and the tasks run in /tmp instead.
func TestBadCwd(t *testing.T) {
	jobs := t.TempDir()
	h := startExec(t, Options{JobsDir: jobs})
	cwd := filepath.Join(t.TempDir(), "gone")
	id := fluid.ID(450)
	h.start(id, makeJobspec(t, jobspec.Options{Command: []string{"pwd"}, Cwd: cwd}), makeR(t, 1, "0", "", 0, 0), false)
	if st := finishStatus(t, h.finished(id)); st != 0 {
		t.Fatalf("status %d", st)
	}
	if got := readFile(t, filepath.Join(jobDir(jobs, id), shell.StdoutFile)); got != "/tmp\n" {
		t.Errorf("task ran in %q, want /tmp", got)
	}
	want := shell.Name + "[0]: ERROR: host node0: Could not change dir to " + cwd + ": No such file or directory. Going to /tmp instead\n"
	if got := readFile(t, filepath.Join(jobDir(jobs, id), shell.StderrFile)); got != want {
		t.Errorf("stderr = %q, want %q", got, want)
	}
}

// Output goes to the job folder by default, and to --output/--error paths
// (flux-shell's output.stdout.path / output.stderr.path) with {{id}}
// expanded; stderr follows stdout when only stdout has a path.
func TestOutputPaths(t *testing.T) {
	jobs := t.TempDir()
	h := startExec(t, Options{JobsDir: jobs})
	cwd := t.TempDir()
	output := func(stdout, stderr string) map[string]any {
		o := map[string]any{}
		if stdout != "" {
			o["stdout"] = map[string]any{"path": stdout}
		}
		if stderr != "" {
			o["stderr"] = map[string]any{"path": stderr}
		}
		return map[string]any{"shell": map[string]any{"options": map[string]any{"output": o}}}
	}
	id1, id2, id3 := fluid.ID(5000), fluid.ID(5001), fluid.ID(5002)
	tests := []struct {
		name  string
		id    fluid.ID
		extra map[string]any
		files map[string]string // path -> content
	}{
		{"job folder", id1, nil, map[string]string{
			filepath.Join(jobDir(jobs, id1), "stdout"): "out\n",
			filepath.Join(jobDir(jobs, id1), "stderr"): "err\n",
		}},
		{"output only", id2, output(filepath.Join(cwd, "job-{{id}}.out"), ""), map[string]string{
			filepath.Join(cwd, "job-"+id2.String()+".out"): "out\nerr\n",
		}},
		{"output and error, relative", id3, output("o-{{id.dec}}.txt", "e-{{jobid.hex}}-{{name}}.txt"), map[string]string{
			filepath.Join(cwd, "o-5002.txt"):      "out\n",
			filepath.Join(cwd, "e-0x138a-sh.txt"): "err\n",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h.start(tc.id, makeJobspec(t, jobspec.Options{Command: sh("echo out; echo err >&2"), Cwd: cwd, Extra: tc.extra}), makeR(t, 1, "0", "", 0, 0), false)
			if st := finishStatus(t, h.finished(tc.id)); st != 0 {
				t.Fatalf("status %d", st)
			}
			for path, want := range tc.files {
				if got := readFile(t, path); got != want {
					t.Errorf("%s = %q, want %q", path, got, want)
				}
			}
		})
	}
}

// Four tasks on two ranks (flux submit -N2 -n4): four processes, tasks 0-1
// on rank 0 and 2-3 on rank 1, each seeing its own rank, as flux-shell's
// block task map numbers them.
func TestMultiRank(t *testing.T) {
	jobs := t.TempDir()
	h := startExec(t, Options{JobsDir: jobs})
	id := fluid.ID(77)
	js := makeJobspec(t, jobspec.Options{NTasks: 4, Nodes: 2, Command: sh(`echo "$FLUXQ_TASK_RANK $FLUXQ_TASK_LOCAL_ID $FLUXQ_JOB_SIZE $FLUXQ_JOB_NNODES $$"`)})
	h.start(id, js, makeR(t, 2, "0-1", "", 0, 0), false)
	if st := finishStatus(t, h.finished(id)); st != 0 {
		t.Fatalf("status %d", st)
	}
	lines := strings.Split(strings.TrimSpace(readFile(t, filepath.Join(jobDir(jobs, id), shell.StdoutFile))), "\n")
	slices.Sort(lines)
	var got []string
	pids := map[string]bool{}
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) != 5 {
			t.Fatalf("bad line %q", l)
		}
		pids[f[4]] = true
		got = append(got, strings.Join(f[:4], " "))
	}
	want := []string{"0 0 4 2", "1 1 4 2", "2 0 4 2", "3 1 4 2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tasks (-want +got):\n%s", diff)
	}
	if len(pids) != 4 {
		t.Errorf("%d distinct processes, want 4", len(pids))
	}
}

// Tasks are bound to their rank's cores when those CPUs exist here, and
// left unbound, without error, when they do not.
func TestCoreBinding(t *testing.T) {
	var allowed unix.CPUSet
	if err := unix.SchedGetaffinity(0, &allowed); err != nil || !allowed.IsSet(0) {
		t.Skip("CPU 0 is not available to this process")
	}
	own := cpusAllowed(t, "/proc/self/status")
	jobs := t.TempDir()
	h := startExec(t, Options{JobsDir: jobs})
	tests := []struct {
		name  string
		id    fluid.ID
		cores string
		want  string
	}{
		{"core 0", 900, "0", "0"},
		{"cores beyond this machine", 901, "1000-1003", own},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h.start(tc.id, makeJobspec(t, jobspec.Options{Command: []string{"cat", "/proc/self/status"}}), makeR(t, 1, tc.cores, "", 0, 0), false)
			if st := finishStatus(t, h.finished(tc.id)); st != 0 {
				t.Fatalf("status %d", st)
			}
			if got := cpusAllowed(t, filepath.Join(jobDir(jobs, tc.id), shell.StdoutFile)); got != tc.want {
				t.Errorf("Cpus_allowed_list = %q, want %q", got, tc.want)
			}
		})
	}
}

func cpusAllowed(t *testing.T, statusFile string) string {
	t.Helper()
	for _, l := range strings.Split(readFile(t, statusFile), "\n") {
		if v, ok := strings.CutPrefix(l, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no Cpus_allowed_list in %s", statusFile)
	return ""
}

// At the time limit the job gets exception "timeout" ("resource allocation
// expired", flux-core's words), SIGTERM, then SIGKILL after the grace; then
// finish with the signal's status and the final release, last.
func TestTimeout(t *testing.T) {
	jobs := t.TempDir()
	h := startExec(t, Options{JobsDir: jobs, KillGrace: 500 * time.Millisecond})
	now := float64(time.Now().UnixNano()) / 1e9
	tests := []struct {
		name     string
		id       fluid.ID
		js       json.RawMessage
		r        json.RawMessage
		statuses []int // acceptable finish statuses
	}{
		// R's expiration is the limit.
		{"R expiration", 300, makeJobspec(t, jobspec.Options{Command: []string{"sleep", "30"}}), makeR(t, 1, "0", "", now, now+0.5),
			// SIGTERM, or SIGKILL if the task started after the SIGTERM.
			[]int{job.WaitStatusSignaled(15), job.WaitStatusSignaled(9)}},
		// Without times in R, the jobspec's duration from the launch.
		{"jobspec duration", 301, makeJobspec(t, jobspec.Options{Command: []string{"sleep", "30"}, Duration: 0.5}), makeR(t, 1, "0", "", 0, 0),
			[]int{job.WaitStatusSignaled(15), job.WaitStatusSignaled(9)}},
		// A job that ignores SIGTERM is killed after the grace period.
		{"SIGTERM ignored", 302, makeJobspec(t, jobspec.Options{Command: sh(`trap "" TERM; sleep 30`), Duration: 0.5}), makeR(t, 1, "0", "", 0, 0),
			[]int{job.WaitStatusSignaled(9)}},
	}
	for _, tc := range tests {
		h.start(tc.id, tc.js, tc.r, false)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs := h.finished(tc.id)
			want := []string{execproto.TypeStart, execproto.TypeException, execproto.TypeFinish, execproto.TypeRelease}
			if diff := cmp.Diff(want, types(rs)); diff != "" {
				t.Fatalf("response types (-want +got):\n%s", diff)
			}
			if got, want := rs[1], (resp{Type: execproto.TypeException, ExcType: "timeout", Note: "resource allocation expired"}); got != want {
				t.Errorf("exception = %+v, want %+v", got, want)
			}
			if st := rs[2].Status; !slices.Contains(tc.statuses, st) {
				t.Errorf("finish status %d, want one of %v", st, tc.statuses)
			}
		})
	}
}

// A fatal exception notification (a cancel) terminates the job: SIGTERM
// reaches the task, then finish and the final release follow.
func TestCancel(t *testing.T) {
	jobs := t.TempDir()
	h := startExec(t, Options{JobsDir: jobs})
	fifos := t.TempDir()
	ready := fifo(t, fifos, "ready")
	id := fluid.ID(400)
	h.start(id, makeJobspec(t, jobspec.Options{Command: sh("echo up > " + ready + "; exec sleep 30")}), makeR(t, 1, "0", "", 0, 0), false)
	readLine(t, ready)
	h.request(execproto.MethodException, execproto.ExceptionNotice{ID: id, Severity: 0, Type: "cancel", Note: "by test"})
	want := []resp{
		{Type: execproto.TypeStart},
		{Type: execproto.TypeFinish, Status: job.WaitStatusSignaled(15)},
		{Type: execproto.TypeRelease, Ranks: "all", Final: true},
	}
	if diff := cmp.Diff(want, h.finished(id)); diff != "" {
		t.Errorf("responses (-want +got):\n%s", diff)
	}
}

// A kill notification sends its signal to the tasks, and not to death of
// the shell, which reports the task's status.
func TestKill(t *testing.T) {
	jobs := t.TempDir()
	h := startExec(t, Options{JobsDir: jobs})
	fifos := t.TempDir()
	ready := fifo(t, fifos, "ready")
	id := fluid.ID(401)
	h.start(id, makeJobspec(t, jobspec.Options{Command: sh("echo up > " + ready + "; exec sleep 30")}), makeR(t, 1, "0", "", 0, 0), false)
	readLine(t, ready)
	h.request(execproto.MethodKill, execproto.Kill{ID: id, Signal: int(unix.SIGUSR1)})
	want := []resp{
		{Type: execproto.TypeStart},
		{Type: execproto.TypeFinish, Status: job.WaitStatusSignaled(int(unix.SIGUSR1))},
		{Type: execproto.TypeRelease, Ranks: "all", Final: true},
	}
	if diff := cmp.Diff(want, h.finished(id)); diff != "" {
		t.Errorf("responses (-want +got):\n%s", diff)
	}
}

// RFC 32: one start per job in flight, so a second start for a running job
// is a protocol error (a conventional error response), and an error
// response is a fatality: Run returns. The next Run takes the job back.
func TestDuplicateStart(t *testing.T) {
	jobs := t.TempDir()
	h := startExec(t, Options{JobsDir: jobs})
	fifos := t.TempDir()
	ready := fifo(t, fifos, "ready")
	id := fluid.ID(402)
	js := makeJobspec(t, jobspec.Options{Command: sh("echo up > " + ready + "; exec sleep 30")})
	r := makeR(t, 1, "0", "", 0, 0)
	h.start(id, js, r, false)
	readLine(t, ready)
	h.waitResponse(id, execproto.TypeStart)
	h.start(id, js, r, false)
	h.waitFor("an error response", func() bool { return len(h.others) > 0 })
	h.mu.Lock()
	m := h.others[0]
	h.mu.Unlock()
	if !m.IsError() || m.Errnum != wire.EPROTO || m.Topic != "job-exec.start" {
		t.Errorf("got %+v, want an EPROTO error response to job-exec.start", m)
	}
	h.runErr = "already running"
	h.stop()

	h2 := startExec(t, Options{JobsDir: jobs})
	h2.start(id, js, r, true)
	h2.request(execproto.MethodException, execproto.ExceptionNotice{ID: id, Severity: 0, Type: "cancel"})
	want := []resp{
		{Type: execproto.TypeFinish, Status: job.WaitStatusSignaled(15)},
		{Type: execproto.TypeRelease, Ranks: "all", Final: true},
	}
	if diff := cmp.Diff(want, h2.finished(id)); diff != "" {
		t.Errorf("responses after the restart (-want +got):\n%s", diff)
	}
}

// A start request without a REQUIRED key (RFC 32) is a protocol error.
func TestBadStartRequest(t *testing.T) {
	h := startExec(t, Options{JobsDir: t.TempDir()})
	h.runErr = `payload has no "reattach"`
	m, _ := wire.NewRequest("job-exec.start", map[string]any{"id": 1, "userid": 0, "jobspec": map[string]any{}})
	h.send(m)
	h.waitFor("an error response", func() bool { return len(h.others) > 0 })
	h.mu.Lock()
	got := h.others[0]
	h.mu.Unlock()
	if got.Errnum != wire.EPROTO || !strings.Contains(got.Errstr, `payload has no "reattach"`) {
		t.Errorf("got %+v, want EPROTO naming the missing key", got)
	}
}

// RFC 32: an exception may come before start, and the final release
// always comes: a shell that cannot be launched, a start without R.
func TestStartFailures(t *testing.T) {
	js := makeJobspec(t, jobspec.Options{Command: []string{"true"}})
	tests := []struct {
		name  string
		opts  Options
		r     json.RawMessage
		jspec json.RawMessage
		note  string
	}{
		{"no shell", Options{ShellCommand: []string{"/nonexistent/fluxsched", "job-shell"}}, makeR(t, 1, "0", "", 0, 0), js,
			"cannot launch the job shell: fork/exec /nonexistent/fluxsched: no such file or directory"},
		{"no R", Options{}, nil, js, "start request has no R"},
		{"bad jobspec", Options{}, makeR(t, 1, "0", "", 0, 0), json.RawMessage(`{"version":1}`), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.JobsDir = t.TempDir()
			h := startExec(t, tc.opts)
			h.start(1, tc.jspec, tc.r, false)
			rs := h.finished(1)
			if got := types(rs); !slices.Equal(got, []string{"exception", "release"}) {
				t.Fatalf("responses %+v", rs)
			}
			if rs[0].ExcType != "exec" || rs[0].Severity != 0 || (tc.note != "" && rs[0].Note != tc.note) {
				t.Errorf("exception %+v, want exec severity 0 %q", rs[0], tc.note)
			}
		})
	}
}

// A shell that ends without recording a status: killed, its own wait
// status is the job's; exited, the job gets an exec exception.
func TestShellFailures(t *testing.T) {
	tests := []struct {
		name  string
		shell string
		want  []resp
	}{
		{"killed", "kill -9 $$", []resp{
			{Type: execproto.TypeStart},
			{Type: execproto.TypeFinish, Status: job.WaitStatusSignaled(9)},
			{Type: execproto.TypeRelease, Ranks: "all", Final: true},
		}},
		{"exited", "echo cannot go on >> \"$1/shell.log\"; exit 3", []resp{
			{Type: execproto.TypeStart},
			{Type: execproto.TypeException, ExcType: "exec", Note: "job shell failed: exit code 3: cannot go on"},
			{Type: execproto.TypeRelease, Ranks: "all", Final: true},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// A stand-in shell: sh -c SCRIPT sh JOBDIR.
			h := startExec(t, Options{JobsDir: t.TempDir(), ShellCommand: []string{"/bin/sh", "-c", tc.shell, "sh"}})
			h.start(1, makeJobspec(t, jobspec.Options{Command: []string{"true"}}), makeR(t, 1, "0", "", 0, 0), false)
			if diff := cmp.Diff(tc.want, h.finished(1)); diff != "" {
				t.Errorf("responses (-want +got):\n%s", diff)
			}
		})
	}
}

// Requests the service does not know get ENOSYS; notifications for jobs
// it does not run are ignored.
func TestUnknownRequests(t *testing.T) {
	h := startExec(t, Options{JobsDir: t.TempDir()})
	h.request("nosuch", map[string]int{"id": 1})
	h.request(execproto.MethodKill, execproto.Kill{ID: 99, Signal: 15})
	h.request(execproto.MethodException, execproto.ExceptionNotice{ID: 99, Type: "cancel"})
	h.waitFor("an error response", func() bool { return len(h.others) > 0 })
	h.mu.Lock()
	defer h.mu.Unlock()
	if m := h.others[0]; m.Errnum != wire.ENOSYS || m.Topic != "job-exec.nosuch" {
		t.Errorf("got %+v, want ENOSYS for job-exec.nosuch", m)
	}
}

// RFC 32: the service must treat a failed hello as fatal.
func TestHelloRefused(t *testing.T) {
	a, b := wire.Pipe()
	ran := make(chan error, 1)
	go func() { ran <- Run(b, Options{JobsDir: t.TempDir(), ShellCommand: []string{os.Args[0]}}) }()
	if _, err := a.Recv(); err != nil {
		t.Fatal(err)
	}
	a.Send(wire.NewError(execproto.TopicHello, 16, "jobs have start requests outstanding"))
	select {
	case err := <-ran:
		if err == nil || !strings.Contains(err.Error(), "jobs have start requests outstanding") {
			t.Errorf("Run = %v, want the hello's error", err)
		}
	case <-time.After(failAfter):
		t.Fatal("Run did not return")
	}
}

// blockingJob runs a task that appends to runs (so a second launch would
// show), reports its pid on ready, and exits with code when released.
func blockingJob(t *testing.T, dir string, code int) (js json.RawMessage, runs, ready, release string) {
	t.Helper()
	runs = filepath.Join(dir, "runs")
	ready = fifo(t, dir, "ready")
	release = fifo(t, dir, "release")
	script := fmt.Sprintf("echo run >> %s; echo $$ > %s; read x < %s; exit %d", runs, ready, release, code)
	return makeJobspec(t, jobspec.Options{Command: sh(script)}), runs, ready, release
}

// After the exec service stops mid-job, a new one given reattach=true
// watches the same shell to its end: no second launch, no second start.
func TestReattachRunning(t *testing.T) {
	jobs, work := t.TempDir(), t.TempDir()
	id := fluid.ID(600)
	js, runs, ready, release := blockingJob(t, work, 5)
	r := makeR(t, 1, "0", "", 0, 0)

	h1 := startExec(t, Options{JobsDir: jobs})
	h1.start(id, js, r, false)
	readLine(t, ready)
	h1.waitResponse(id, execproto.TypeStart)
	h1.stop()
	pid, err := readPID(jobDir(jobs, id))
	if err != nil {
		t.Fatal(err)
	}

	h2 := startExec(t, Options{JobsDir: jobs})
	h2.start(id, js, r, true)
	writeLine(t, release, "go")
	want := []resp{
		{Type: execproto.TypeFinish, Status: job.WaitStatusExited(5)},
		{Type: execproto.TypeRelease, Ranks: "all", Final: true},
	}
	if diff := cmp.Diff(want, h2.finished(id)); diff != "" {
		t.Errorf("responses after reattach (-want +got):\n%s", diff)
	}
	if got := readFile(t, runs); got != "run\n" {
		t.Errorf("the task ran %d times", strings.Count(got, "run"))
	}
	if pid2, _ := readPID(jobDir(jobs, id)); pid2 != pid {
		t.Errorf("shell pid %d, then %d: launched again", pid, pid2)
	}
}

// A job that ended while no exec service ran is reported finished on
// reattach, from the status its shell recorded.
func TestReattachExited(t *testing.T) {
	jobs, work := t.TempDir(), t.TempDir()
	id := fluid.ID(601)
	js, runs, ready, release := blockingJob(t, work, 4)
	r := makeR(t, 1, "0", "", 0, 0)

	h1 := startExec(t, Options{JobsDir: jobs})
	h1.start(id, js, r, false)
	readLine(t, ready)
	h1.waitResponse(id, execproto.TypeStart)
	h1.stop()
	pid, err := readPID(jobDir(jobs, id))
	if err != nil {
		t.Fatal(err)
	}
	writeLine(t, release, "go")
	waitExit(t, pid)

	h2 := startExec(t, Options{JobsDir: jobs})
	h2.start(id, js, r, true)
	want := []resp{
		{Type: execproto.TypeFinish, Status: job.WaitStatusExited(4)},
		{Type: execproto.TypeRelease, Ranks: "all", Final: true},
	}
	if diff := cmp.Diff(want, h2.finished(id)); diff != "" {
		t.Errorf("responses after reattach (-want +got):\n%s", diff)
	}
	if got := readFile(t, runs); got != "run\n" {
		t.Errorf("the task ran %d times", strings.Count(got, "run"))
	}
}

// A shell that is gone without a status is lost: exception "exec" "job
// shell lost", then the final release; what it left running is killed.
func TestReattachLost(t *testing.T) {
	jobs, work := t.TempDir(), t.TempDir()
	id := fluid.ID(602)
	js, _, ready, _ := blockingJob(t, work, 0)
	r := makeR(t, 1, "0", "", 0, 0)

	h1 := startExec(t, Options{JobsDir: jobs})
	h1.start(id, js, r, false)
	taskPID, err := strconv.Atoi(readLine(t, ready))
	if err != nil {
		t.Fatal(err)
	}
	h1.waitResponse(id, execproto.TypeStart)
	h1.stop()
	shellPID, err := readPID(jobDir(jobs, id))
	if err != nil {
		t.Fatal(err)
	}
	// The shell alone dies; its task lives on in the group.
	if err := unix.Kill(shellPID, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitExit(t, shellPID)

	h2 := startExec(t, Options{JobsDir: jobs})
	h2.start(id, js, r, true)
	want := []resp{
		{Type: execproto.TypeException, ExcType: "exec", Note: "job shell lost"},
		{Type: execproto.TypeRelease, Ranks: "all", Final: true},
	}
	if diff := cmp.Diff(want, h2.finished(id)); diff != "" {
		t.Errorf("responses after reattach (-want +got):\n%s", diff)
	}
	waitExit(t, taskPID) // killed before the release
}

// A start without reattach for a job whose shell already runs (the service
// died between launching it and answering start) adopts the shell and
// answers start: the job is not launched twice.
func TestStartAdoptsRunningShell(t *testing.T) {
	jobs, work := t.TempDir(), t.TempDir()
	id := fluid.ID(603)
	js, runs, ready, release := blockingJob(t, work, 0)
	r := makeR(t, 1, "0", "", 0, 0)

	h1 := startExec(t, Options{JobsDir: jobs})
	h1.start(id, js, r, false)
	readLine(t, ready)
	h1.waitResponse(id, execproto.TypeStart)
	h1.stop()

	h2 := startExec(t, Options{JobsDir: jobs})
	h2.start(id, js, r, false)
	h2.waitResponse(id, execproto.TypeStart)
	writeLine(t, release, "go")
	if got := types(h2.finished(id)); !slices.Equal(got, []string{"start", "finish", "release"}) {
		t.Errorf("responses %v", got)
	}
	if got := readFile(t, runs); got != "run\n" {
		t.Errorf("the task ran %d times", strings.Count(got, "run"))
	}
}

// A reattach for a job never launched here (its start was lost with the
// previous service) launches it: nothing ran, so nothing runs twice.
func TestReattachNeverLaunched(t *testing.T) {
	jobs := t.TempDir()
	h := startExec(t, Options{JobsDir: jobs})
	h.start(604, makeJobspec(t, jobspec.Options{Command: []string{"true"}}), makeR(t, 1, "0", "", 0, 0), true)
	if got := types(h.finished(604)); !slices.Equal(got, []string{"start", "finish", "release"}) {
		t.Errorf("responses %v", got)
	}
}

// BenchmarkTrueJobs measures jobs per second through the exec service and
// real shells: b.N `true` jobs, all started at once, to the last release.
//
// FLUXQ_BENCH_SHELL="/path/fluxsched job-shell" measures the real binary
// instead of this test binary; FLUXQ_BENCH_DIR=DIR puts the job folders in
// DIR (file creation cost differs much between file systems).
func BenchmarkTrueJobs(b *testing.B) {
	jobs := b.TempDir()
	if d := os.Getenv("FLUXQ_BENCH_DIR"); d != "" {
		var err error
		if jobs, err = os.MkdirTemp(d, "bench"); err != nil {
			b.Fatal(err)
		}
		defer os.RemoveAll(jobs)
	}
	a, c := wire.Pipe()
	ran := make(chan error, 1)
	shellCmd := []string{os.Args[0]}
	if s := strings.Fields(os.Getenv("FLUXQ_BENCH_SHELL")); len(s) > 0 {
		shellCmd = s
	}
	go func() { ran <- Run(c, Options{JobsDir: jobs, ShellCommand: shellCmd}) }()
	if _, err := a.Recv(); err != nil {
		b.Fatal(err)
	}
	ok, _ := wire.NewResponse(execproto.TopicHello, nil)
	a.Send(ok)
	js, err := jobspec.FromOptions(jobspec.Options{Command: []string{"true"}, Environment: map[string]string{"PATH": os.Getenv("PATH")}})
	if err != nil {
		b.Fatal(err)
	}
	jsb, _ := js.MarshalJSON()
	rb, _ := rset.New([]rset.Node{{Rank: 0, Cores: idset.Of(0)}}).MarshalJSON()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m, _ := wire.NewRequest(execproto.Topic(DefaultService, execproto.MethodStart),
			execproto.Start{ID: fluid.ID(i + 1), UserID: uint32(os.Geteuid()), Jobspec: jsb, R: rb})
		a.Send(m)
	}
	for released := 0; released < b.N; {
		m, err := a.Recv()
		if err != nil {
			b.Fatal(err)
		}
		r, data, err := execproto.DecodeResponse(m)
		if err != nil {
			b.Fatal(err)
		}
		if rel, isRel := data.(*execproto.Release); isRel && rel.Final {
			released++
		} else if exc, isExc := data.(*execproto.Exception); isExc {
			b.Fatalf("job %d: exception %+v", r.ID, exc)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
	a.Close()
	<-ran
}
