package fluxq

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"
)

// stdinFIFO is the name of the FIFO of a stdinStream in its folder.
const stdinFIFO = "stdin"

// stdinStream forwards fluxq run's stdin to the job's tasks, as flux run
// does (to every task: the agent copies it to each). fluxq makes a FIFO
// in a folder of its own (in its user's temporary directory, 0700) and
// names it in the jobspec as the tasks' input file; the exec agent opens it as it opens an --input file, with
// the job user's rights, so it never opens as root a path a guest chose;
// and fluxq writes what it reads to it.
//
// Why a FIFO and not a stream through fluxsched's socket: the tasks'
// stdin is a plain descriptor the kernel feeds, nothing is copied by
// fluxsched or the agent, and it works the same on the direct path, with
// the job started later. fluxq holds the FIFO open for reading and
// writing from the start: what it writes before the tasks start stays in
// the pipe (up to its size, then fluxq waits), and the tasks see the end
// of their stdin when fluxq closes it, once its own stdin has ended and
// the job has started (its tasks then hold the FIFO), or when the job
// ends.
type stdinStream struct {
	dir, path string

	mu      sync.Mutex
	f       *os.File // nil once closed
	eof     bool     // fluxq's stdin has ended
	started bool     // the tasks hold the FIFO
}

// errStdinHint says how to run without forwarding stdin, when it cannot be.
const errStdinHint = "(give the job no stdin with </dev/null, or a file with --input FILE)"

// newStdinStream makes the FIFO and opens it.
func newStdinStream() (s *stdinStream, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w %s", err, errStdinHint)
		}
	}()
	dir, err := os.MkdirTemp("", "fluxq-stdin-")
	if err != nil {
		return nil, fmt.Errorf("forwarding stdin: %w", err)
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs // $TMPDIR may be relative; the agent's directory is not ours
	}
	s = &stdinStream{dir: dir, path: filepath.Join(dir, stdinFIFO)}
	if err := unix.Mkfifo(s.path, 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("forwarding stdin: %w", &os.PathError{Op: "mkfifo", Path: s.path, Err: err})
	}
	// O_RDWR: opening never waits for a reader, and the FIFO keeps what
	// is written to it while no task has it open.
	f, err := os.OpenFile(s.path, os.O_RDWR, 0)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("forwarding stdin: %w", err)
	}
	s.f = f
	return s, nil
}

// copyFrom writes r to the FIFO until r ends (or the stream is closed).
func (s *stdinStream) copyFrom(r io.Reader) {
	s.mu.Lock()
	f := s.f
	s.mu.Unlock()
	if f != nil {
		io.Copy(f, r)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.eof = true
	if s.started {
		s.closeFile()
	}
}

// jobStarted is called once the job's tasks are forked: they hold the
// FIFO, so its name can go, and its end is theirs once stdin has ended.
func (s *stdinStream) jobStarted() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return
	}
	s.started = true
	os.RemoveAll(s.dir)
	if s.eof {
		s.closeFile()
	}
}

// end is called when the job is over, or was never submitted.
func (s *stdinStream) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closeFile()
	os.RemoveAll(s.dir)
}

// detach is called when fluxq leaves a job that runs on: its tasks see
// the end of their stdin. A job not started yet still finds the FIFO,
// empty, when it starts.
func (s *stdinStream) detach() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closeFile()
	if s.started {
		os.RemoveAll(s.dir)
	}
}

func (s *stdinStream) closeFile() {
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
}

// runStdin is what fluxq run forwards to the job's tasks, or nil: not
// /dev/null, nor a terminal fluxq does not own (run in the background,
// reading it would stop fluxq).
func (e *env) runStdin() io.Reader {
	r := e.stdin
	if r == nil {
		r = os.Stdin
	}
	f, ok := r.(*os.File)
	if !ok {
		if l, ok := r.(interface{ Len() int }); ok && l.Len() == 0 {
			return nil
		}
		return r
	}
	var st, null unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil {
		return nil
	}
	if st.Mode&unix.S_IFMT == unix.S_IFCHR {
		if unix.Stat(os.DevNull, &null) == nil && st.Rdev == null.Rdev {
			return nil
		}
		if pg, err := unix.IoctlGetInt(int(f.Fd()), unix.TIOCGPGRP); err == nil && pg != unix.Getpgrp() {
			return nil
		}
	}
	return f
}
