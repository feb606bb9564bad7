package runner

import (
	"os"
	"os/signal"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// One reaper serves every runner of the process, and no goroutine or
// thread waits per child: each task is forked with a pidfd, which the
// output poller (output.go) watches with the output pipes; when one is
// readable, every child that ended is collected with wait4(-1, WNOHANG),
// on the poller's thread, often in the same wake-up as the task's last
// output. On a kernel without pidfds (before Linux 5.3), SIGCHLD wakes the
// reaper instead. It owns the process's children: a process that uses a
// Runner must not wait for children of its own (no os/exec), or the two
// would take each other's.
//
// Children that are no task (processes a job left behind and that were
// reparented to us, the subreaper) are reaped and forgotten.
var reaper struct {
	once sync.Once
	// pidfds: tasks are forked with a pidfd, and SIGCHLD is not watched.
	pidfds bool
	// mu is held around a fork and the registration of its pid, and
	// around the wait loop, so that a child that ends at once is never
	// reaped before it is known.
	mu    sync.Mutex
	tasks map[int]*task
}

// fallbacks makes the runner use what it falls back on where the kernel
// lacks something (SIGCHLD instead of pidfds, a thread of its own for the
// output poller): for tests of those paths.
var fallbacks bool

// ended is one reaped task.
type ended struct {
	t  *task
	ws unix.WaitStatus
	ru unix.Rusage
}

func startReaper() {
	reaper.once.Do(func() {
		reaper.tasks = map[int]*task{}
		// A subreaper gets the orphans of its jobs, so that their
		// processes are reaped at once, and a sweep can find them.
		unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
		if !fallbacks && probePidfd() {
			reaper.pidfds = true
			return
		}
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, unix.SIGCHLD)
		go func() {
			for range ch {
				reapAll()
			}
		}()
		// Children that ended before Notify sent nothing we saw.
		select {
		case ch <- unix.SIGCHLD:
		default:
		}
	})
}

// probePidfd reports whether a child can be forked with a pidfd.
func probePidfd() bool {
	reaper.mu.Lock()
	defer reaper.mu.Unlock()
	pidfd := -1
	pid, err := syscall.ForkExec("/bin/true", []string{"true"}, &syscall.ProcAttr{Sys: &syscall.SysProcAttr{PidFD: &pidfd}})
	if err != nil {
		return false
	}
	var ws unix.WaitStatus
	for {
		if _, err := unix.Wait4(pid, &ws, 0, nil); err != unix.EINTR {
			break
		}
	}
	if pidfd < 0 {
		return false
	}
	unix.Close(pidfd)
	return true
}

// reapAll collects every child that ended and reports the tasks among
// them to their jobs.
func reapAll() {
	var done []ended
	reaper.mu.Lock()
	for {
		var e ended
		pid, err := unix.Wait4(-1, &e.ws, unix.WNOHANG, &e.ru)
		if err == unix.EINTR {
			continue
		}
		if pid <= 0 {
			break
		}
		if t := reaper.tasks[pid]; t != nil {
			delete(reaper.tasks, pid)
			e.t = t
			done = append(done, e)
		}
	}
	reaper.mu.Unlock()
	for _, e := range done {
		e.t.j.taskEnded(e.t, e.ws, &e.ru)
	}
}

// alive reports whether pid is a task not yet reaped: only then is the pid
// surely still the task's.
func alive(t *task) bool {
	reaper.mu.Lock()
	defer reaper.mu.Unlock()
	return reaper.tasks[t.pid] == t
}
