package exec

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/shell"
)

// ARCHITECTURE.md: a guest's job runs as the guest, never as the owner;
// only a root service may run it, with the user's uid and groups.
func TestCredentialFor(t *testing.T) {
	alice := &syscall.Credential{Uid: 1001, Gid: 100, Groups: []uint32{100, 27}}
	errUnknown := user.UnknownUserIdError(4000)
	lookup := func(uid uint32) (*syscall.Credential, error) {
		switch uid {
		case 1001:
			return alice, nil
		case 1002: // a lookup that answers for someone else
			return &syscall.Credential{Uid: 1003, Gid: 100}, nil
		case math.MaxUint32:
			return &syscall.Credential{Uid: math.MaxUint32, Gid: 100}, nil
		}
		return nil, errUnknown
	}
	tests := []struct {
		name      string
		euid, uid uint32
		want      *syscall.Credential
		note      string
		looked    bool // whether the user is looked up
	}{
		{"the owner's job, owner not root", 1000, 1000, nil, "", false},
		{"the owner's job, owner root", 0, 0, nil, "", false},
		{"a guest's job, service not root", 1000, 1001, nil, "cannot run a job of uid 1001: fluxsched is not running as root", false},
		{"root's job, service not root", 1000, 0, nil, "cannot run a job of uid 0: fluxsched is not running as root", false},
		{"a guest's job, service root", 0, 1001, alice, "", true},
		{"an unknown user", 0, 4000, nil, "cannot run the job as uid 4000: " + errUnknown.Error(), true},
		{"a lookup answering for another uid", 0, 1002, nil, "cannot run the job as uid 1002: " + errNoSuchID.Error(), true},
		// -1 means "unchanged" to setuid: it would leave the shell root.
		{"uid -1", 0, math.MaxUint32, nil, "cannot run the job as uid 4294967295: " + errNoSuchID.Error(), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			looked := false
			got, note := credentialFor(tc.euid, tc.uid, func(uid uint32) (*syscall.Credential, error) {
				looked = true
				return lookup(uid)
			})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("credential (-want +got):\n%s", diff)
			}
			if note != tc.note {
				t.Errorf("note = %q, want %q", note, tc.note)
			}
			if looked != tc.looked {
				t.Errorf("looked the user up: %v, want %v", looked, tc.looked)
			}
		})
	}
}

// needRoot skips a test that starts processes as another user.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("running a job as another user needs root")
	}
}

// nobody returns the credential of the user nobody, skipping without one.
func nobody(t *testing.T) *syscall.Credential {
	t.Helper()
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Skipf("no user nobody: %v", err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		t.Fatal(err)
	}
	cred, err := lookupUser(uint32(uid))
	if err != nil {
		t.Fatal(err)
	}
	return cred
}

// guestTree makes a directory another user may pass through but not list,
// as the state directory of an instance open to guests is (t.TempDir lies
// under a folder private to the test's user), holding a copy of this test
// binary, the job shell, that the user may run. It returns the directory
// and the shell command.
func guestTree(t *testing.T) (string, []string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "fluxq-guest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	shellPath := filepath.Join(dir, "job-shell")
	dst, err := os.OpenFile(shellPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(dst, src)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"jobs", "work"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o711); err != nil {
			t.Fatal(err)
		}
	}
	return dir, []string{shellPath}
}

// owner returns the uid and gid owning path (not following a symlink).
func owner(t *testing.T, path string) [2]uint32 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	return [2]uint32{st.Uid, st.Gid}
}

// uniqueSorted parses whitespace-separated ids as a set.
func uniqueSorted(t *testing.T, s string) []uint32 {
	t.Helper()
	var out []uint32
	for _, f := range strings.Fields(s) {
		n, err := strconv.ParseUint(f, 10, 32)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		out = append(out, uint32(n))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ARCHITECTURE.md: a root fluxsched starts a guest's job shell with the
// submitter's uid and gids, in a folder that is the guest's.
func TestGuestJob(t *testing.T) {
	needRoot(t)
	guest := nobody(t)
	dir, shellCmd := guestTree(t)
	jobs, work := filepath.Join(dir, "jobs"), filepath.Join(dir, "work")
	h := startExec(t, Options{JobsDir: jobs, ShellCommand: shellCmd})
	id := fluid.ID(700)
	js := makeJobspec(t, jobspec.Options{Command: sh("id -u; id -G"), Cwd: work})
	h.request(execproto.MethodStart, execproto.Start{ID: id, UserID: guest.Uid, Jobspec: js, R: makeR(t, 1, "0", "", 0, 0)})
	rs := h.finished(id)
	folder := jobDir(jobs, id)
	if st := finishStatus(t, rs); st != 0 {
		b, _ := os.ReadFile(filepath.Join(folder, shell.StderrFile))
		l, _ := os.ReadFile(filepath.Join(folder, shell.LogFile))
		t.Fatalf("status %d; responses %+v; stderr %q; shell.log %q", st, rs, b, l)
	}
	out := strings.SplitN(readFile(t, filepath.Join(folder, shell.StdoutFile)), "\n", 2)
	if len(out) != 2 {
		t.Fatalf("stdout %q, want two lines", out)
	}
	if got := strings.TrimSpace(out[0]); got != strconv.FormatUint(uint64(guest.Uid), 10) {
		t.Errorf("id -u = %s, want %d", got, guest.Uid)
	}
	// id -G: the primary group and the supplementary ones, none of root's.
	wantGroups := append([]uint32{guest.Gid}, guest.Groups...)
	slices.Sort(wantGroups)
	wantGroups = slices.Compact(wantGroups)
	if diff := cmp.Diff(wantGroups, uniqueSorted(t, out[1])); diff != "" {
		t.Errorf("id -G (-want +got):\n%s", diff)
	}
	want := [2]uint32{guest.Uid, guest.Gid}
	for _, name := range []string{".", shell.SpecFile, shell.PIDFile, shell.StdoutFile, shell.StderrFile, shell.StatusFile} {
		if got := owner(t, filepath.Join(folder, name)); got != want {
			t.Errorf("%s is owned by %v, want the guest's %v", name, got, want)
		}
	}
}

// A guest's job taken back by a new exec service (reattach) is still
// signalled: a cancel reaches its task, with the guest's rights.
func TestGuestJobReattachCancel(t *testing.T) {
	needRoot(t)
	guest := nobody(t)
	dir, shellCmd := guestTree(t)
	jobs, work := filepath.Join(dir, "jobs"), filepath.Join(dir, "work")
	ready := fifo(t, work, "ready")
	if err := os.Chown(ready, int(guest.Uid), int(guest.Gid)); err != nil {
		t.Fatal(err)
	}
	id := fluid.ID(701)
	js := makeJobspec(t, jobspec.Options{Command: sh("echo up > " + ready + "; exec sleep 30"), Cwd: work})
	r := makeR(t, 1, "0", "", 0, 0)
	start := func(h *jm, reattach bool) {
		h.request(execproto.MethodStart, execproto.Start{ID: id, UserID: guest.Uid, Jobspec: js, R: r, Reattach: reattach})
	}

	h1 := startExec(t, Options{JobsDir: jobs, ShellCommand: shellCmd})
	start(h1, false)
	if got := readLine(t, ready); got != "up" {
		t.Fatalf("task said %q", got)
	}
	h1.waitResponse(id, execproto.TypeStart)
	h1.stop()

	h2 := startExec(t, Options{JobsDir: jobs, ShellCommand: shellCmd})
	start(h2, true)
	h2.request(execproto.MethodException, execproto.ExceptionNotice{ID: id, Severity: 0, Type: "cancel"})
	want := []resp{
		{Type: execproto.TypeFinish, Status: job.WaitStatusSignaled(15)},
		{Type: execproto.TypeRelease, Ranks: "all", Final: true},
	}
	if diff := cmp.Diff(want, h2.finished(id)); diff != "" {
		t.Errorf("responses after reattach (-want +got):\n%s", diff)
	}
}

// A job of a uid that names no user runs nothing: an exec exception, then
// the final release (RFC 32), and no job folder.
func TestGuestUnknownUser(t *testing.T) {
	needRoot(t)
	const uid = 4000000000
	_, lookupErr := lookupUser(uid)
	var unknown user.UnknownUserIdError
	if !errors.As(lookupErr, &unknown) {
		t.Skipf("uid %d: %v, want an unknown user", uid, lookupErr)
	}
	jobs := t.TempDir()
	h := startExec(t, Options{JobsDir: jobs})
	id := fluid.ID(702)
	h.request(execproto.MethodStart, execproto.Start{ID: id, UserID: uid,
		Jobspec: makeJobspec(t, jobspec.Options{Command: []string{"true"}}), R: makeR(t, 1, "0", "", 0, 0)})
	want := []resp{
		{Type: execproto.TypeException, ExcType: "exec", Note: fmt.Sprintf("cannot run the job as uid %d: %v", uid, lookupErr)},
		{Type: execproto.TypeRelease, Ranks: "all", Final: true},
	}
	if diff := cmp.Diff(want, h.finished(id)); diff != "" {
		t.Errorf("responses (-want +got):\n%s", diff)
	}
	if _, err := os.Lstat(jobDir(jobs, id)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("job folder: %v, want none", err)
	}
}

// Without root, a guest's job is refused, never run as the owner.
func TestGuestRefusedWithoutRoot(t *testing.T) {
	euid := uint32(os.Geteuid())
	if euid == 0 {
		t.Skip("as root a guest's job runs; TestCredentialFor covers the refusal")
	}
	jobs := t.TempDir()
	h := startExec(t, Options{JobsDir: jobs})
	id := fluid.ID(703)
	h.request(execproto.MethodStart, execproto.Start{ID: id, UserID: euid + 1,
		Jobspec: makeJobspec(t, jobspec.Options{Command: []string{"true"}}), R: makeR(t, 1, "0", "", 0, 0)})
	want := []resp{
		{Type: execproto.TypeException, ExcType: "exec", Note: fmt.Sprintf("cannot run a job of uid %d: fluxsched is not running as root", euid+1)},
		{Type: execproto.TypeRelease, Ranks: "all", Final: true},
	}
	if diff := cmp.Diff(want, h.finished(id)); diff != "" {
		t.Errorf("responses (-want +got):\n%s", diff)
	}
	if _, err := os.Lstat(jobDir(jobs, id)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("job folder: %v, want none", err)
	}
}

// What the service does on a guest's word it does with the guest's rights
// alone: no file or process of root's is reachable, and no other
// goroutine ever runs with the guest's credentials.
func TestAsUser(t *testing.T) {
	needRoot(t)
	guest := nobody(t)
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("root only\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "status")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	// A process group of root's, which the guest may not signal.
	pid, err := syscall.ForkExec("/bin/sleep", []string{"sleep", "30"}, &syscall.ProcAttr{Sys: &syscall.SysProcAttr{Setpgid: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		unix.Kill(pid, unix.SIGKILL)
		var ws syscall.WaitStatus
		syscall.Wait4(pid, &ws, 0, nil)
	})

	// Meanwhile root goroutines read the secret: a thread left with the
	// guest's credentials would make one fail.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	rootErrs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := os.ReadFile(secret); err != nil {
					rootErrs <- err
					return
				}
			}
		})
	}
	var readErr, killErr error
	var uid, gid int
	var groups []int
	for range 50 {
		// Fails too when run on a thread a former call left as the
		// guest, which may no longer setgroups.
		if err := asUser(guest.Uid, guest.Gid, func() {
			_, readErr = os.ReadFile(link)
			killErr = unix.Kill(-pid, unix.SIGKILL)
			uid, gid = syscall.Getuid(), syscall.Getgid()
			groups, _ = unix.Getgroups()
		}); err != nil {
			t.Errorf("asUser: %v", err)
			break
		}
	}
	close(stop)
	wg.Wait()
	close(rootErrs)
	for err := range rootErrs {
		t.Errorf("a root goroutine ran with other credentials: %v", err)
	}
	if !errors.Is(readErr, os.ErrPermission) {
		t.Errorf("read through a symlink to a root-only file: %v, want permission denied", readErr)
	}
	if !errors.Is(killErr, unix.EPERM) {
		t.Errorf("kill of root's process group: %v, want EPERM", killErr)
	}
	if uid != int(guest.Uid) || gid != int(guest.Gid) || len(groups) != 0 {
		t.Errorf("ran as uid %d gid %d groups %v, want uid %d gid %d and no groups", uid, gid, groups, guest.Uid, guest.Gid)
	}
	if err := asUser(math.MaxUint32, guest.Gid, func() { t.Error("ran as uid -1") }); !errors.Is(err, errNoSuchID) {
		t.Errorf("asUser(-1) = %v, want %v", err, errNoSuchID)
	}
}

// pendingSignals returns the signals pending for the whole process pid
// (ShdPnd in /proc/pid/status), as a mask with bit sig-1 per signal.
func pendingSignals(t *testing.T, pid int) uint64 {
	t.Helper()
	for _, line := range strings.Split(readFile(t, fmt.Sprintf("/proc/%d/status", pid)), "\n") {
		if v, ok := strings.CutPrefix(line, "ShdPnd:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			return mask
		}
	}
	t.Fatalf("no ShdPnd for process %d", pid)
	return 0
}

// stoppedGroup starts a process leading a group of its own, as cred (nil:
// as this process), and stops it: a signal sent to it then stays pending,
// so whether one was sent shows at once.
func stoppedGroup(t *testing.T, cred *syscall.Credential) int {
	t.Helper()
	pid, err := syscall.ForkExec("/bin/sleep", []string{"sleep", "30"},
		&syscall.ProcAttr{Sys: &syscall.SysProcAttr{Setpgid: true, Credential: cred}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		unix.Kill(pid, unix.SIGKILL)
		var ws syscall.WaitStatus
		syscall.Wait4(pid, &ws, 0, nil)
	})
	if err := unix.Kill(pid, unix.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(pid, &ws, syscall.WUNTRACED, nil); err != nil || !ws.Stopped() {
		t.Fatalf("process %d did not stop: %v %v", pid, ws, err)
	}
	return pid
}

// A guest's job is signalled with the guest's rights: a shell.pid the guest
// rewrote to name another user's process group, while its lock is held
// (so the group passes for the job's), reaches nothing (flux-core signals
// a guest's job through `flux-imp kill`, as the guest).
func TestGuestSignal(t *testing.T) {
	needRoot(t)
	guest := nobody(t)
	guestUser := &syscall.Credential{Uid: guest.Uid, Gid: guest.Gid}
	tests := []struct {
		name    string
		jobUser *syscall.Credential // nil: the service's own job
		group   *syscall.Credential // the group's owner; nil: root
		want    bool                // the signal reaches the group
	}{
		{"the owner's job, the owner's group", nil, nil, true},
		{"a guest's job, the guest's group", guestUser, guestUser, true},
		{"a guest's job, root's group", guestUser, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			lock, err := shell.Lock(dir) // a shell of the job runs
			if err != nil {
				t.Fatal(err)
			}
			defer lock.Close()
			pid := stoppedGroup(t, tc.group)
			j := &jobRun{dir: dir, pid: pid, user: tc.jobUser}
			j.signal(unix.SIGUSR1)
			got := pendingSignals(t, pid)&(1<<(unix.SIGUSR1-1)) != 0
			if got != tc.want {
				t.Errorf("SIGUSR1 reached the group: %v, want %v", got, tc.want)
			}
		})
	}
}
