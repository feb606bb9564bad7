package runner

import (
	"fmt"
	"io/fs"
	"os"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/diskspace"
	"github.com/fluxq/fluxq/internal/jobspec"
)

// Tasks write their output into pipes, one per output file, and the runner
// copies it into the files, as flux-shell does: a write that fails (a full
// filesystem, a quota) happens in the runner, which can say so. A task
// writing straight into the file would get the error alone, and the job
// would end as if nothing was lost.
//
// One goroutine copies every pipe of the process, woken by epoll, with
// one buffer: an idle pipe costs a descriptor and a small struct, not a
// goroutine and a buffer.
var poller struct {
	once sync.Once
	err  error
	epfd int
	// mu is held while a pipe is read and its data written, and while one
	// is dropped, so that a pipe is never read after it was closed.
	mu    sync.Mutex
	pipes map[uint32]*outPipe
	next  uint32
	buf   []byte
}

// outPipe is the read end of one output pipe, or a task's pidfd (j nil),
// readable once the task has ended.
type outPipe struct {
	j     *job
	fd    int
	token uint32
	file  *outFile
	err   error  // the first write that failed
	note  string // why output is dropped from here on, to report
}

// watchPidfd has the poller reap the children when the process of pidfd
// ends, and close pidfd.
func watchPidfd(pidfd int) {
	if err := watch(&outPipe{fd: pidfd}); err != nil {
		// Cannot happen with a valid pidfd; the task is reaped with
		// the next one.
		unix.Close(pidfd)
	}
}

func startPoller() error {
	poller.once.Do(func() {
		poller.epfd, poller.err = unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if poller.err != nil {
			return
		}
		poller.pipes = map[uint32]*outPipe{}
		poller.buf = make([]byte, 64<<10)
		// The epoll descriptor is itself readable when an event is ready:
		// the Go runtime's own poller watches it, so the copying goroutine
		// waits parked, not in a system call on a thread of its own, and
		// wakes without a hand-off between threads.
		if fallbacks {
			go pollLoop()
			return
		}
		if err := unix.SetNonblock(poller.epfd, true); err == nil {
			ep := os.NewFile(uintptr(poller.epfd), "epoll")
			if rc, err := ep.SyscallConn(); err == nil {
				go func() {
					events := make([]unix.EpollEvent, 128)
					var closed []*outPipe
					rc.Read(func(uintptr) bool {
						// Until nothing is ready: the runtime is told
						// only of new readiness.
						for {
							n, err := unix.EpollWait(poller.epfd, events, 0)
							if n <= 0 && err != unix.EINTR {
								return false
							}
							if n > 0 {
								closed = handle(events[:n], closed[:0])
							}
						}
					})
				}()
				return
			}
		}
		go pollLoop()
	})
	return poller.err
}

// watch starts copying p.
func watch(p *outPipe) error {
	poller.mu.Lock()
	poller.next++
	for poller.pipes[poller.next] != nil || poller.next == 0 {
		poller.next++
	}
	p.token = poller.next
	poller.pipes[p.token] = p
	poller.mu.Unlock()
	// The event carries a token, not the descriptor: a stale event for a
	// descriptor closed and reused meanwhile then finds nothing.
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(p.token)}
	if err := unix.EpollCtl(poller.epfd, unix.EPOLL_CTL_ADD, p.fd, &ev); err != nil {
		poller.mu.Lock()
		delete(poller.pipes, p.token)
		poller.mu.Unlock()
		return err
	}
	return nil
}

// drop stops copying p and closes it, unless it was closed already; it
// reports whether it closed it.
func drop(p *outPipe) bool {
	poller.mu.Lock()
	defer poller.mu.Unlock()
	if poller.pipes[p.token] != p {
		return false
	}
	delete(poller.pipes, p.token)
	unix.Close(p.fd)
	return true
}

// pollLoop waits for the pipes in epoll_wait, where the runtime cannot
// watch the epoll descriptor.
func pollLoop() {
	events := make([]unix.EpollEvent, 128)
	var closed []*outPipe
	for {
		n, err := unix.EpollWait(poller.epfd, events, -1)
		if err != nil {
			continue // EINTR
		}
		closed = handle(events[:n], closed[:0])
	}
}

// handle serves ready pipes and pidfds: output read and copied, ended
// tasks reaped, pipes at their end reported to their jobs.
func handle(events []unix.EpollEvent, closed []*outPipe) []*outPipe {
	reap := false
	poller.mu.Lock()
	var noted []*outPipe
	for _, ev := range events {
		p := poller.pipes[uint32(ev.Fd)]
		if p == nil {
			continue
		}
		if p.j == nil {
			// A task ended.
			delete(poller.pipes, p.token)
			unix.Close(p.fd)
			reap = true
			continue
		}
		// Level-triggered and read only here: one read cannot block.
		m, err := unix.Read(p.fd, poller.buf)
		if m > 0 && p.err == nil {
			note, werr := p.file.writeOutput(poller.buf[:m])
			if werr != nil {
				p.err = werr
			}
			if note != "" {
				p.note = note
				noted = append(noted, p)
			}
			// After a failure the rest is read and dropped, so that
			// no task blocks on a full pipe.
		}
		if (m == 0 && err == nil) || (err != nil && err != unix.EINTR && err != unix.EAGAIN) {
			delete(poller.pipes, p.token)
			unix.Close(p.fd)
			closed = append(closed, p)
		}
	}
	poller.mu.Unlock()
	// Notes before ends: a job's note comes before its finish. Sent
	// outside the poller's lock, as the ends are.
	for _, p := range noted {
		p.j.outputDropped(p.note)
	}
	// Reaped first: a job then ends at its last pipe's end, without
	// waiting for a drain.
	if reap {
		reapAll()
	}
	for _, p := range closed {
		p.j.pipeClosed()
	}
	return closed
}

// outFile is an output file, written only by the poller (and by the
// runner's own messages): a bare descriptor, which the Go runtime's own
// poller, of no use for a regular file, does not see.
//
// The runner's own jobs' default files, stdout and stderr in the job
// folder, are created at their first write (lazy), and so is the folder:
// a job that writes nothing costs no file and no folder (readers take a
// missing file, or folder, for "nothing yet"), and creating either costs
// more than the rest of a short job's launch on some filesystems (about
// 0.2 ms each on this machine's ext4).
type outFile struct {
	mu   sync.Mutex // guards a lazy open
	fd   int        // -1 until a lazy file is opened
	path string
	// direct: the tasks write to it themselves (see job.lookup).
	direct bool
	lazy   bool
	folder *folder // a lazy file's, made before it

	// limit caps what the job's tasks may write to the file (-1: no
	// cap): output.limit, for the files of the job folder, which are
	// stored output as Flux's KVS output is. guest: a guest's job, whose
	// output is written only while the file's filesystem keeps
	// diskspace.Reserve free (see roomFor). Past either, output is dropped,
	// and the first drop gives the note the job's eventlog gets, once.
	limit   int64
	guest   bool
	name    string // the stream, for the note: stdout, stderr or the path
	written int64
	dropped bool
}

// writeOutput writes what the job's tasks wrote, as far as the file's
// limit and, for a guest, its filesystem's reserve allow, and drops the
// rest. It returns the note to report, once: at the first drop.
func (f *outFile) writeOutput(b []byte) (note string, err error) {
	if f.dropped {
		return "", nil
	}
	keep := b
	if f.limit >= 0 && f.written+int64(len(b)) > f.limit {
		keep = b[:f.limit-f.written]
		note = fmt.Sprintf("%s: output.limit of %s reached: the rest of the job's %s is dropped", f.name, jobspec.FormatSize(uint64(f.limit)), f.name)
	}
	if f.guest && len(keep) > 0 {
		if ok, reserve := f.roomFor(len(keep)); !ok {
			keep = nil
			note = fmt.Sprintf("%s: the filesystem of the job's output keeps %s free for the instance: the rest of the job's %s is dropped", f.name, jobspec.FormatSize(reserve), f.name)
		}
	}
	if len(keep) > 0 {
		n, err := f.Write(keep)
		f.written += int64(n)
		if err != nil {
			return "", err
		}
	}
	if note != "" {
		f.dropped = true
	}
	return note, nil
}

// roomFor reports whether n more bytes of a guest's output leave the
// file's filesystem its reserve (internal/diskspace), and what that
// reserve is. Asked at every write, a system call per 64 KiB at most: a
// filesystem shared with others fills between two writes.
func (f *outFile) roomFor(n int) (bool, uint64) {
	if f.fd < 0 {
		return true, 0 // not open: the write fails and says so
	}
	return diskspace.RoomFD(f.fd, uint64(n))
}

func (f *outFile) Write(b []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fd < 0 {
		if !f.lazy {
			return 0, &fs.PathError{Op: "write", Path: f.path, Err: unix.EBADF}
		}
		// The folder is new: nothing to truncate. O_APPEND keeps the
		// runner's messages and the tasks' output from overwriting
		// each other.
		if err := f.folder.make(); err != nil {
			return 0, err
		}
		fd, err := unix.Open(f.path, unix.O_WRONLY|unix.O_CREAT|unix.O_APPEND|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o666)
		if err != nil {
			return 0, &fs.PathError{Op: "open", Path: f.path, Err: err}
		}
		f.fd = fd
	}
	n := 0
	for n < len(b) {
		m, err := unix.Write(f.fd, b[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return n, &fs.PathError{Op: "write", Path: f.path, Err: err}
		}
		n += m
	}
	return n, nil
}

func (f *outFile) WriteString(s string) (int, error) { return f.Write([]byte(s)) }

func (f *outFile) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fd >= 0 {
		unix.Close(f.fd)
		f.fd = -1
	}
}
