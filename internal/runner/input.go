package runner

import (
	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/shell"
)

// openInput opens the tasks' stdin from path, with the job user's rights
// (it is called in asJob): once per task, so that each reads a file whole,
// as flux-shell's tasks each open it. A FIFO (fluxq run's stdin) is one
// stream the tasks share. O_NONBLOCK: a FIFO with no writer opens at once
// rather than blocking the launch of every job; the tasks get blocking
// descriptors.
func (su *setup) openInput(path string, ntasks int) {
	su.stdin = make([]int, ntasks)
	for i := range su.stdin {
		su.stdin[i] = -1
	}
	for i := range su.stdin {
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOCTTY|unix.O_NONBLOCK, 0)
		if err != nil {
			su.inErr = shell.InputOpenError(path, err)
			su.closeInput()
			return
		}
		unix.SetNonblock(fd, false)
		su.stdin[i] = fd
	}
}

// closeInput closes the runner's copies of the tasks' stdin: once they
// are forked, theirs are the only ones, so a FIFO's end reaches them.
func (su *setup) closeInput() {
	for i, fd := range su.stdin {
		if fd >= 0 {
			unix.Close(fd)
			su.stdin[i] = -1
		}
	}
}
