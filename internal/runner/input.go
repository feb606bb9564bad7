package runner

import (
	"os"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/shell"
)

// openInput opens the tasks' stdin from path, with the job user's rights
// (it is called in asJob): once per task, so that each reads a file whole,
// as flux-shell's tasks each open it. A FIFO (fluxq run's stdin) is one
// stream: with several tasks, each gets a pipe of its own and a copy of
// all of it (see stdinTee), as flux-shell broadcasts stdin. O_NONBLOCK: a
// FIFO with no writer opens at once rather than blocking the launch of
// every job; the tasks get blocking descriptors.
func (su *setup) openInput(path string, ntasks int) {
	su.stdin = make([]int, ntasks)
	for i := range su.stdin {
		su.stdin[i] = -1
	}
	open := func() (int, bool) {
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOCTTY|unix.O_NONBLOCK, 0)
		if err != nil {
			su.inErr = shell.InputOpenError(path, err)
			su.closeInput()
			return -1, false
		}
		return fd, true
	}
	first, ok := open()
	if !ok {
		return
	}
	var st unix.Stat_t
	if ntasks > 1 && unix.Fstat(first, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFIFO {
		// Non-blocking, the descriptors are the Go poller's: closing
		// them at the job's end wakes the copy.
		t := &stdinTee{src: os.NewFile(uintptr(first), path)}
		su.tee = t
		for i := range su.stdin {
			var p [2]int
			if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
				su.inErr = shell.InputOpenError(path, err)
				su.closeInput()
				return
			}
			su.stdin[i] = p[0]
			unix.SetNonblock(p[1], true)
			t.dsts = append(t.dsts, os.NewFile(uintptr(p[1]), path))
		}
		return
	}
	unix.SetNonblock(first, false)
	su.stdin[0] = first
	for i := 1; i < ntasks; i++ {
		fd, ok := open()
		if !ok {
			return
		}
		unix.SetNonblock(fd, false)
		su.stdin[i] = fd
	}
}

// closeInput closes the runner's copies of the tasks' stdin: once they
// are forked, theirs are the only ones, so a FIFO's end reaches them. A
// tee not started is closed too.
func (su *setup) closeInput() {
	for i, fd := range su.stdin {
		if fd >= 0 {
			unix.Close(fd)
			su.stdin[i] = -1
		}
	}
	if su.tee != nil && !su.teeStarted {
		su.tee.close()
	}
}

// stdinTee copies one stream to every task of a job, each through its own
// pipe: one goroutine per such job (fluxq run of several tasks), which
// ends with the stream, or with the job. A task that reads nothing holds
// up the others once its pipe is full, until it ends.
type stdinTee struct {
	src  *os.File
	dsts []*os.File
	once sync.Once
}

func (t *stdinTee) run() {
	buf := make([]byte, 32<<10)
	dead := make([]bool, len(t.dsts))
	live := len(t.dsts)
	for live > 0 {
		n, err := t.src.Read(buf)
		for i, d := range t.dsts {
			if dead[i] || n == 0 {
				continue
			}
			if _, werr := d.Write(buf[:n]); werr != nil {
				// The task has closed its stdin, or ended.
				dead[i] = true
				live--
			}
		}
		if err != nil {
			break
		}
	}
	t.close()
}

// close ends the copy: the tasks see the end of their stdin.
func (t *stdinTee) close() {
	t.once.Do(func() {
		t.src.Close()
		for _, d := range t.dsts {
			d.Close()
		}
	})
}
