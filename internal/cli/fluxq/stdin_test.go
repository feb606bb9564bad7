package fluxq

import (
	"io"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// openAsTask opens the FIFO as the exec agent does for a task's stdin.
func openAsTask(t *testing.T, path string) *os.File {
	t.Helper()
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	unix.SetNonblock(fd, false)
	return os.NewFile(uintptr(fd), path)
}

// What run reads before the job starts is kept, more than a pipe holds
// included; the tasks see the end once stdin has ended and the job has
// started; the FIFO's folder goes once the tasks hold it.
func TestStdinStream(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	s, err := newStdinStream()
	if err != nil {
		t.Fatal(err)
	}
	data := strings.Repeat("0123456789abcdef\n", 20000) // 340 KB
	copied := make(chan struct{})
	go func() { s.copyFrom(strings.NewReader(data)); close(copied) }()
	task := openAsTask(t, s.path)
	defer task.Close()
	s.jobStarted()
	if _, err := os.Stat(s.dir); !os.IsNotExist(err) {
		t.Errorf("the FIFO's folder is still there once the job started: %v", err)
	}
	got, err := io.ReadAll(task) // ends only if the end reached the task
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != data {
		t.Errorf("the task read %d bytes, want %d", len(got), len(data))
	}
	<-copied
	s.end()
}

// A job that ends, or is never submitted, before it starts: the FIFO
// goes. Detached from before it starts: the FIFO stays for the job to
// open, and reads as ended.
func TestStdinStreamEnds(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	s, err := newStdinStream()
	if err != nil {
		t.Fatal(err)
	}
	s.end()
	if _, err := os.Stat(s.dir); !os.IsNotExist(err) {
		t.Errorf("end: the FIFO's folder is still there: %v", err)
	}

	s, err = newStdinStream()
	if err != nil {
		t.Fatal(err)
	}
	s.detach()
	task := openAsTask(t, s.path)
	defer task.Close()
	if n, err := task.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Errorf("detached: the task read %d bytes, %v; want the end", n, err)
	}
	os.RemoveAll(s.dir)
}

// run forwards nothing for an empty stdin of a test, or /dev/null.
func TestRunStdinNone(t *testing.T) {
	if r := testEnv(nil, "").runStdin(); r != nil {
		t.Errorf("empty reader forwarded")
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	e := testEnv(nil, "")
	e.stdin = null
	if r := e.runStdin(); r != nil {
		t.Errorf("/dev/null forwarded")
	}
	e.stdin = strings.NewReader("x")
	if r := e.runStdin(); r == nil {
		t.Errorf("stdin with data not forwarded")
	}
}

// stdin that cannot be forwarded is a one-line error that says how to do
// without, and nothing is submitted.
func TestRunStdinCannotForward(t *testing.T) {
	t.Setenv("TMPDIR", "/nonexistent/tmp")
	fc := &fakeClient{}
	got := runFluxq(t, fc, "data\n", "run", "cat")
	want := result{Stderr: "fluxq: run: forwarding stdin: ", Code: 1}
	if !strings.HasPrefix(got.Stderr, want.Stderr) || !strings.Contains(got.Stderr, "/nonexistent/tmp") || !strings.HasSuffix(got.Stderr, ": no such file or directory "+errStdinHint+"\n") ||
		strings.Count(got.Stderr, "\n") != 1 || got.Code != want.Code || got.Stdout != "" {
		t.Errorf("got %+v", got)
	}
	if len(fc.submits) != 0 {
		t.Errorf("%d submissions", len(fc.submits))
	}
}
