package runner

import (
	"os"
	"os/signal"
	"sync"

	"golang.org/x/sys/unix"
)

// One reaper serves every runner of the process: SIGCHLD wakes it, and it
// collects every child that ended with wait4(-1, WNOHANG), so that no
// goroutine or thread waits per child. It owns the process's children: a
// process that uses a Runner must not wait for children of its own (no
// os/exec), or the two would take each other's.
//
// Children that are no task (processes a job left behind and that were
// reparented to us, the subreaper) are reaped and forgotten.
var reaper struct {
	once sync.Once
	// mu is held around a fork and the registration of its pid, and
	// around the wait loop, so that a child that ends at once is never
	// reaped before it is known.
	mu    sync.Mutex
	tasks map[int]*task
}

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
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, unix.SIGCHLD)
		go func() {
			var done []ended
			for range ch {
				done = reapAll(done[:0])
			}
		}()
		// Children that ended before Notify sent nothing we saw.
		select {
		case ch <- unix.SIGCHLD:
		default:
		}
	})
}

// reapAll collects every child that ended and reports the tasks among
// them to their jobs.
func reapAll(done []ended) []ended {
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
	return done
}

// alive reports whether pid is a task not yet reaped: only then is the pid
// surely still the task's.
func alive(t *task) bool {
	reaper.mu.Lock()
	defer reaper.mu.Unlock()
	return reaper.tasks[t.pid] == t
}
