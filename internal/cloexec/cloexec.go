// Package cloexec keeps the descriptors a process inherited from reaching
// the processes it starts.
//
// Go opens every descriptor of its own close-on-exec, but one a process
// inherited open (a shell's `exec 7<file`, a service manager's, a
// library's) stays open across every exec that follows: fluxsched would
// hand it to its exec agent, and the agent to every job's tasks, so that
// a guest's job could read a file only root may open. Slurm and Flux
// start a job's tasks with 0, 1 and 2 alone; Inherited makes ours do so
// too, once, at process start, which costs the fork path nothing.
package cloexec

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Inherited marks every descriptor above 2 close-on-exec. Descriptors a
// child is meant to have are passed explicitly (os/exec's Stdin, Stdout,
// Stderr and ExtraFiles, syscall.ProcAttr.Files), which dup them into
// place and so clears the flag on the copy: none of them is affected.
func Inherited() error {
	// One system call since Linux 5.11.
	err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	if err == nil {
		return nil
	}
	if err != unix.ENOSYS && err != unix.EINVAL {
		return err
	}
	return eachListed()
}

// eachListed marks each descriptor above 2 that /proc lists: for kernels
// older than close_range's flag.
func eachListed() error {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		// The directory's own descriptor, already closed, fails with
		// EBADF: nothing to mark.
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && err != unix.EBADF {
			return err
		}
	}
	return nil
}
