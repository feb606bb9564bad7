package exec

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/shell"
)

// Notes of exceptions raised on a start request that cannot be served.
const (
	noteNoR        = "start request has no R"
	noteBadR       = "invalid R: %v"
	noteBadJobspec = "invalid jobspec: %v"
	noteLaunch     = "cannot launch the job shell: %v"
	noteFolder     = "cannot read the job folder: %v"
)

// event is something the job manager asked of a running job.
type event struct {
	fatal  bool // a fatal exception: terminate the job
	signal int  // a signal to send to its tasks
}

// exitInfo says how a shell ended: known is false for a shell this service
// did not launch, whose wait status it cannot learn.
type exitInfo struct {
	known bool
	ws    syscall.WaitStatus
}

// jobRun serves one start request. One goroutine runs it, so that the
// job's responses leave in order: start, exceptions, finish, release.
type jobRun struct {
	s   *server
	req execproto.Start
	dir string
	// user is who the job runs as when not as the service itself (a
	// guest's job, with a root service): its folder is the user's, and
	// the service reads it and signals the job with the user's rights
	// alone (asJob). Nil for the service's own jobs.
	user *syscall.Credential

	mu     sync.Mutex
	events []event
	wake   chan struct{} // capacity 1: events are waiting

	pid         int  // the shell, leader of the job's process group; 0 if unknown
	terminating bool // SIGTERM sent, SIGKILL armed
	killed      bool // SIGKILL sent
}

func (j *jobRun) post(ev event) {
	j.mu.Lock()
	j.events = append(j.events, ev)
	j.mu.Unlock()
	select {
	case j.wake <- struct{}{}:
	default:
	}
}

func (j *jobRun) take() []event {
	j.mu.Lock()
	defer j.mu.Unlock()
	evs := j.events
	j.events = nil
	return evs
}

// fatalPending reports whether a fatal exception is waiting to be handled.
func (j *jobRun) fatalPending() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.ContainsFunc(j.events, func(e event) bool { return e.fatal })
}

func (j *jobRun) stopped() bool {
	select {
	case <-j.s.stop:
		return true
	default:
		return false
	}
}

func (j *jobRun) respond(typ string, data any) {
	m, err := execproto.NewResponse(j.s.opts.Service, j.req.ID, typ, data)
	if err != nil {
		return // our own types always encode
	}
	j.s.send(m)
}

func (j *jobRun) exception(typ string, severity int, note string) {
	j.respond(execproto.TypeException, execproto.Exception{Severity: severity, Type: typ, Note: note})
}

// release sends the final release, the job's last response (RFC 32).
func (j *jobRun) release() {
	j.s.forget(j)
	j.respond(execproto.TypeRelease, execproto.Release{Ranks: "all", Final: true})
}

func (j *jobRun) run() {
	defer j.s.wg.Done()
	defer j.s.forget(j)

	js, r, note := parseRequest(j.req)
	if note != "" {
		j.exception(TypeExec, 0, note)
		j.release()
		return
	}
	if _, err := os.Stat(filepath.Join(j.dir, shell.SpecFile)); errors.Is(err, fs.ErrNotExist) {
		j.launch(js, r)
		return
	} else if err != nil {
		j.exception(TypeExec, 0, fmt.Sprintf(noteFolder, err))
		j.release()
		return
	}
	j.adopt(js, r)
}

// parseRequest reads the start request's jobspec and R, returning a note
// for the exception when they are unusable.
func parseRequest(req execproto.Start) (*jobspec.Jobspec, *rset.R, string) {
	js, err := jobspec.Parse(req.Jobspec)
	if err != nil {
		return nil, nil, fmt.Sprintf(noteBadJobspec, err)
	}
	if len(req.R) == 0 || string(req.R) == "null" {
		return nil, nil, noteNoR
	}
	r, err := rset.Parse(req.R)
	if err != nil {
		return nil, nil, fmt.Sprintf(noteBadR, err)
	}
	return js, r, ""
}

// launch starts the job's shell and watches it to its end.
func (j *jobRun) launch(js *jobspec.Jobspec, r *rset.R) {
	now := j.s.opts.Now()
	if j.fatalPending() {
		// Canceled before it ran: nothing to start (RFC 32 lets start and
		// finish be omitted).
		j.release()
		return
	}
	// Before anything is created: a job that is not ours to run leaves
	// nothing behind.
	cred, note := credentialFor(uint32(os.Geteuid()), j.req.UserID, lookupUser)
	if note != "" {
		j.exception(TypeExec, 0, note)
		j.release()
		return
	}
	j.user = cred
	exp := expiration(js, r, now)
	if !exp.IsZero() && !exp.After(now) {
		j.exception(TypeTimeout, 0, NoteTimeout)
		j.release()
		return
	}
	exited, err := j.startShell(now)
	if err != nil {
		j.exception(TypeExec, 0, fmt.Sprintf(noteLaunch, err))
		j.release()
		return
	}
	j.respond(execproto.TypeStart, nil)
	j.watch(exited, exp)
}

// startShell creates the job folder and forks the shell into a session of
// its own, holding the job's lock from before the fork, so that the lock
// is held for as long as a shell of this job may run.
func (j *jobRun) startShell(now time.Time) (<-chan exitInfo, error) {
	// Without spec.json nothing was launched: clear what a launch that
	// died halfway left.
	if err := os.RemoveAll(j.dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(j.dir, 0o700); err != nil {
		return nil, err
	}
	lock, err := shell.Lock(j.dir)
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	spec := shell.Spec{Version: shell.SpecVersion, ID: j.req.ID, UserID: j.req.UserID,
		Jobspec: j.req.Jobspec, R: j.req.R, Launched: seconds(now)}
	if err := shell.WriteSpec(j.dir, spec); err != nil {
		return nil, err
	}
	if j.user != nil {
		// The shell, as the user, writes its pid, output and status
		// here; it opens nothing else of ours: the lock comes open.
		if err := giveFolder(j.dir, j.user); err != nil {
			return nil, err
		}
	}
	argv := append(slices.Clone(j.s.opts.ShellCommand[1:]), j.dir)
	cmd := osexec.Command(j.s.opts.ShellCommand[0], argv...)
	// Standard streams stay /dev/null: the shell writes to the job's
	// files, and to shell.log before it has them.
	cmd.ExtraFiles = make([]*os.File, shell.LockFD-2)
	cmd.ExtraFiles[shell.LockFD-3] = lock
	// Its own session: the shell survives this process and its
	// terminal, and its group holds every task.
	// Credential nil: as this process; else the user's uid and groups,
	// none of ours.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: j.user}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	// The shell records its pid in the folder, for a later Run, before
	// it starts any task.
	j.pid = cmd.Process.Pid
	exited := make(chan exitInfo, 1)
	go func() {
		// Reaps the shell even after Run has returned.
		cmd.Wait()
		ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
		exited <- exitInfo{known: true, ws: ws}
	}()
	return exited, nil
}

// adopt takes back a job whose shell was launched before this start
// request: by an earlier Run, or by this one before a restart of the job
// manager.
func (j *jobRun) adopt(js *jobspec.Jobspec, r *rset.R) {
	if j.req.UserID != uint32(os.Geteuid()) {
		// Launched as the user (no other launch happens): no lookup,
		// which could fail now, is needed to act as the user.
		j.user = folderUser(j.dir, j.req.UserID)
	}
	var spec shell.Spec
	var specErr error
	if err := j.asJob(func() {
		if pid, err := shell.ReadPID(j.dir); err == nil {
			j.pid = pid
		}
		spec, specErr = shell.ReadSpec(j.dir)
	}); err != nil {
		specErr = err // nothing was read: the time limit runs from now
	}
	running, err := shell.Running(j.dir)
	if err != nil {
		j.exception(TypeExec, 0, fmt.Sprintf(noteFolder, err))
		j.release()
		return
	}
	if !j.req.Reattach {
		// The job manager has not seen this job start.
		j.respond(execproto.TypeStart, nil)
	}
	if !running {
		j.ended(exitInfo{})
		return
	}
	launched := j.s.opts.Now()
	if specErr == nil && spec.Launched > 0 {
		launched = fromSeconds(spec.Launched)
	}
	j.watch(j.poll(), expiration(js, r, launched))
}

// poll watches a shell that is not our child: its exit sends us nothing,
// but its lock is released with it.
func (j *jobRun) poll() <-chan exitInfo {
	exited := make(chan exitInfo, 1)
	go func() {
		t := time.NewTicker(pollInterval)
		defer t.Stop()
		for {
			select {
			case <-j.s.stop:
				return
			case <-t.C:
				// An error reading the lock is taken as "still running":
				// a job is never declared lost on a guess.
				if running, err := shell.Running(j.dir); err == nil && !running {
					exited <- exitInfo{}
					return
				}
			}
		}
	}()
	return exited
}

// watch serves the job while its shell runs: the time limit, the job
// manager's exceptions and kills, and the shell's end.
func (j *jobRun) watch(exited <-chan exitInfo, exp time.Time) {
	var limit, grace <-chan time.Time
	if !exp.IsZero() {
		t := time.NewTimer(max(0, exp.Sub(j.s.opts.Now())))
		defer t.Stop()
		limit = t.C
	}
	var graceTimer *time.Timer
	defer func() {
		if graceTimer != nil {
			graceTimer.Stop()
		}
	}()
	terminate := func() {
		if j.terminating {
			return
		}
		j.terminating = true
		j.signal(unix.SIGTERM)
		graceTimer = time.NewTimer(j.s.opts.KillGrace)
		grace = graceTimer.C
	}
	for {
		select {
		case <-j.s.stop:
			// The next Run takes the job back; the child, if ours, is
			// still reaped by its waiter.
			return
		case x := <-exited:
			j.ended(x)
			return
		case <-limit:
			limit = nil
			j.exception(TypeTimeout, 0, NoteTimeout)
			terminate()
		case <-grace:
			grace = nil
			j.killed = true
			j.signal(unix.SIGKILL)
		case <-j.wake:
			for _, ev := range j.take() {
				if ev.fatal {
					terminate()
				} else {
					j.signal(syscall.Signal(ev.signal))
				}
			}
		}
	}
}

// ended reports a shell that is gone: exception, finish, final release.
func (j *jobRun) ended(x exitInfo) {
	if j.stopped() {
		return
	}
	// Whatever the tasks left in the group must not outlive the release.
	j.signal(unix.SIGKILL)
	var (
		exc         *shell.Exception
		excErr, err error
		status      int
		ok          bool
		failure     string
	)
	if aerr := j.asJob(func() {
		exc, excErr = shell.ReadException(j.dir)
		status, ok, err = shell.ReadStatus(j.dir)
		if err == nil && !ok && x.known {
			failure = j.failure(x.ws)
		}
	}); aerr != nil {
		err = aerr // nothing was read
	}
	if excErr != nil {
		j.exception(TypeExec, 0, fmt.Sprintf(noteFolder, excErr))
	} else if exc != nil {
		j.exception(exc.Type, exc.Severity, exc.Note)
	}
	switch {
	case err != nil:
		j.exception(TypeExec, 0, fmt.Sprintf(noteFolder, err))
	case ok:
		j.respond(execproto.TypeFinish, execproto.Finish{Status: status})
	case x.known && x.ws.Signaled():
		// Killed with its tasks (SIGKILL after the grace period), before
		// it could record anything: its own status is the job's.
		j.respond(execproto.TypeFinish, execproto.Finish{Status: int(x.ws)})
	case j.killed:
		j.respond(execproto.TypeFinish, execproto.Finish{Status: job.WaitStatusSignaled(int(unix.SIGKILL))})
	case x.known:
		j.exception(TypeExec, 0, failure)
	default:
		j.exception(TypeExec, 0, NoteShellLost)
	}
	j.release()
}

// failure describes a shell that exited without recording a status, with
// the last line it wrote, which says why. It reads the job's folder, so
// it runs as the job's user (asJob).
func (j *jobRun) failure(ws syscall.WaitStatus) string {
	note := fmt.Sprintf("%s: exit code %d", NoteShellFailed, ws.ExitStatus())
	b, err := shell.ReadFolderFile(j.dir, shell.LogFile)
	if err != nil {
		return note
	}
	b = bytes.TrimSpace(b)
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[i+1:]
	}
	if len(b) > 200 {
		b = b[:200]
	}
	if len(b) > 0 {
		note += ": " + string(b)
	}
	return note
}

// signal sends sig to the job's process group, if that group can only be
// the job's. A guest's job is signalled with the guest's rights: its pid
// may come from a file the guest can rewrite, and then reach no process
// the guest could not signal itself.
func (j *jobRun) signal(sig syscall.Signal) {
	// Pid 1 would make the group -1: every process.
	if j.pid <= 1 || !groupIsOurs(j.pid, j.dir) {
		return
	}
	_ = j.asJob(func() { _ = unix.Kill(-j.pid, sig) })
}

// groupIsOurs reports whether the process group pid, led by the job's shell
// when it started, can only be the job's:
//   - the job's lock is held: the shell lives, and pid is still its own;
//   - no process has that pid: then no new group can have that id either (a
//     pid stays in use while a group bears it), and any process still in it
//     is a task the shell left behind;
//   - the process is a zombie child of ours: the shell, not yet reaped
//     (pids are handed out in turn, so another of our children could have
//     it only after the whole pid space went round).
func groupIsOurs(pid int, dir string) bool {
	if running, err := shell.Running(dir); err == nil && running {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ESRCH) {
		return true
	}
	if err != nil {
		return false
	}
	// "pid (comm) state ppid ...": comm may hold anything, so the fields
	// are read after its last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return false
	}
	f := strings.Fields(string(b[i+1:]))
	return len(f) >= 2 && f[0] == "Z" && f[1] == strconv.Itoa(os.Getpid())
}

// expiration is when the job's time limit ends: R's expiration, else its
// start time (or launched, without one) plus the jobspec's duration; zero
// for none.
func expiration(js *jobspec.Jobspec, r *rset.R, launched time.Time) time.Time {
	if e := r.Expiration(); e > 0 {
		return fromSeconds(e)
	}
	d := js.Attributes.System.Duration
	if d <= 0 || math.IsInf(d, 0) || math.IsNaN(d) {
		return time.Time{}
	}
	start := launched
	if s := r.StartTime(); s > 0 {
		start = fromSeconds(s)
	}
	if d > float64(math.MaxInt64/int64(time.Second)) {
		return time.Time{} // beyond any clock: unlimited
	}
	return start.Add(time.Duration(d * float64(time.Second)))
}

func seconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

func fromSeconds(s float64) time.Time {
	sec, frac := math.Modf(s)
	return time.Unix(int64(sec), int64(frac*1e9))
}
