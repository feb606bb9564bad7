package runner

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Containment names, as agentproto.Hello reports them.
const (
	ContainCgroup2   = "cgroup v2"
	ContainCgroup1   = "cgroup v1 (pids)"
	ContainSubreaper = "subreaper"
)

// cgroups keeps each job in a cgroup of its own, <parent>/<id> or a slot
// of the pool, <parent>/slot.<n> (pool.go), where parent is <the runner's
// own cgroup>/<Options.CgroupName>: every process a job starts stays in it
// whatever it does (setsid, double fork), and the job has ended only once
// it is empty.
//
// With cgroup v2 a task is forked straight into its job's cgroup (clone3
// with CLONE_INTO_CGROUP). Cgroup v1 has no such call, but there a thread,
// not a process, is a member; so the forking thread moves itself into the
// job's cgroup of the pids hierarchy, forks (the child inherits it), and
// moves back.
type cgroups struct {
	v2     bool
	parent string
	// selfTasks is the v1 tasks file of the runner's own cgroup, open,
	// for the forking thread to move back into.
	selfTasks int
	// pool: jobs run in slots of a pool of cgroups (see pool.go).
	pool   bool
	mu     sync.Mutex
	free   []*slot
	next   int // the next slot number to try
	closed bool
}

func (c *cgroups) name() string {
	if c.v2 {
		return ContainCgroup2
	}
	return ContainCgroup1
}

// mount is a cgroup filesystem mounted in this process's namespace.
type mount struct {
	point, root string
}

// findCgroups returns the cgroup v2 hierarchy (v2 true) or the v1 pids
// hierarchy of this process, and the process's own cgroup path in it.
func findCgroups(v2 bool) (dir string, err error) {
	if v2 {
		return findHierarchy("")
	}
	return findHierarchy("pids")
}

// findHierarchy returns the directory of this process's own cgroup in the
// v1 hierarchy of controller ctrl, or in the v2 hierarchy when ctrl is "".
func findHierarchy(ctrl string) (dir string, err error) {
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	var path string
	found := false
	for _, line := range strings.Split(string(self), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if (ctrl == "" && f[0] == "0" && f[1] == "") || (ctrl != "" && f[0] != "0" && hasWord(f[1], ",", ctrl)) {
			path, found = f[2], true
			break
		}
	}
	if !found {
		return "", errors.New("no such hierarchy")
	}
	return hierarchyDir(ctrl, path)
}

// hierarchyDir is where the cgroup path of the v1 hierarchy of controller
// ctrl (the v2 hierarchy when ctrl is "") is in this process's file system.
func hierarchyDir(ctrl, path string) (string, error) {
	mi, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer mi.Close()
	sc := bufio.NewScanner(mi)
	for sc.Scan() {
		// id parent dev root point options [optional...] - fstype source superoptions
		f := strings.Fields(sc.Text())
		sep := -1
		for i, w := range f {
			if w == "-" {
				sep = i
				break
			}
		}
		if sep < 5 || len(f) < sep+4 {
			continue
		}
		fstype, super := f[sep+1], f[sep+3]
		m := mount{point: unescape(f[4]), root: unescape(f[3])}
		if (ctrl == "" && fstype == "cgroup2") || (ctrl != "" && fstype == "cgroup" && hasWord(super, ",", ctrl)) {
			rel, ok := strings.CutPrefix(path, m.root)
			if !ok {
				continue // our cgroup is not visible through this mount
			}
			return filepath.Join(m.point, rel), nil
		}
	}
	return "", errors.New("not mounted")
}

func hasWord(list, sep, w string) bool {
	for _, x := range strings.Split(list, sep) {
		if x == w {
			return true
		}
	}
	return false
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// newCgroups sets up the parent of the jobs' cgroups in the hierarchy
// asked for, failing when this process cannot create cgroups there.
func newCgroups(v2 bool, name string) (*cgroups, error) {
	self, err := findCgroups(v2)
	if err != nil {
		return nil, err
	}
	c := &cgroups{v2: v2, parent: filepath.Join(self, name), selfTasks: -1}
	if err := os.Mkdir(c.parent, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, err
	}
	// A cgroup we may create is not enough: we must be able to put a
	// process in it, which a test job shows.
	probe := filepath.Join(c.parent, "probe")
	os.Remove(probe)
	if err := os.Mkdir(probe, 0o755); err != nil {
		return nil, err
	}
	defer os.Remove(probe)
	if v2 {
		fd, err := unix.Open(probe, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, err
		}
		defer unix.Close(fd)
		if err := probeFork(&syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}); err != nil {
			return nil, fmt.Errorf("forking into a cgroup: %w", err)
		}
		c.pool = canPool(probe)
		return c, nil
	}
	c.selfTasks, err = unix.Open(filepath.Join(self, "tasks"), unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if err := c.probeThread(probe); err != nil {
		unix.Close(c.selfTasks)
		return nil, err
	}
	return c, nil
}

// probeThread moves a thread into the v1 cgroup dir and back. It runs on
// a goroutine of its own, locked to its thread: unlocked, the goroutine
// could change threads between the two writes, leaving a runtime thread in
// the probe (which then could not be removed, failing the next runner's
// setup); and a thread that cannot move back ends with that goroutine.
func (c *cgroups) probeThread(dir string) error {
	done := make(chan error)
	go func() {
		runtime.LockOSThread()
		if err := c.moveThread(dir); err != nil {
			runtime.UnlockOSThread()
			done <- err
			return
		}
		err := c.moveBack()
		if err == nil {
			runtime.UnlockOSThread()
		}
		done <- err
	}()
	return <-done
}

// probeFork starts /bin/true with attr and waits for it, holding off the
// reaper meanwhile.
func probeFork(attr *syscall.SysProcAttr) error {
	reaper.mu.Lock()
	defer reaper.mu.Unlock()
	pid, err := syscall.ForkExec("/bin/true", []string{"true"}, &syscall.ProcAttr{Sys: attr})
	if err != nil {
		return err
	}
	var ws syscall.WaitStatus
	for {
		_, err = syscall.Wait4(pid, &ws, 0, nil)
		if err != syscall.EINTR {
			return err
		}
	}
}

// create makes the job's cgroup and returns its directory.
func (c *cgroups) create(id uint64) (string, error) {
	dir := filepath.Join(c.parent, strconv.FormatUint(id, 10))
	err := os.Mkdir(dir, 0o755)
	if errors.Is(err, os.ErrNotExist) {
		// The parent went with an earlier runner's Close.
		if err = os.Mkdir(c.parent, 0o755); err == nil || errors.Is(err, os.ErrExist) {
			err = os.Mkdir(dir, 0o755)
		}
	}
	if err != nil {
		if !errors.Is(err, os.ErrExist) {
			return "", err
		}
		// Left by a launch that died before its fork: empty it.
		if !c.remove(dir) {
			return "", fmt.Errorf("cgroup %s: still holds processes", dir)
		}
		if err := os.Mkdir(dir, 0o755); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// moveThread moves the calling thread (locked to its goroutine) into the
// v1 cgroup dir.
func (c *cgroups) moveThread(dir string) error {
	fd, err := unix.Open(filepath.Join(dir, "tasks"), unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if _, err := unix.Write(fd, []byte(strconv.Itoa(unix.Gettid()))); err != nil {
		return fmt.Errorf("joining cgroup %s: %w", dir, err)
	}
	return nil
}

// moveBack returns the calling thread to the runner's own v1 cgroup.
func (c *cgroups) moveBack() error {
	_, err := unix.Pwrite(c.selfTasks, []byte(strconv.Itoa(unix.Gettid())), 0)
	return err
}

// remove removes the cgroup dir and reports whether it is gone: rmdir
// fails while a process is in it, so it is the emptiness test as well.
func (c *cgroups) remove(dir string) bool { return removeCgroupDir(dir) }

func removeCgroupDir(dir string) bool {
	err := unix.Rmdir(dir)
	return err == nil || err == unix.ENOENT
}

// pids returns the processes in the cgroup dir.
func pidsOf(dir string) []int {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, l := range bytes.Fields(b) {
		if pid, err := strconv.Atoi(string(l)); err == nil && pid > 0 {
			out = append(out, pid)
		}
	}
	return out
}

// signal sends sig to every process of the cgroup dir and reports how
// many it reached.
func (c *cgroups) signal(dir string, sig syscall.Signal) int { return signalCgroup(dir, sig) }

// signalCgroup sends sig to every process of the cgroup dir, of either
// version, and reports how many it reached.
func signalCgroup(dir string, sig syscall.Signal) int {
	if sig == unix.SIGKILL {
		// cgroup v2 since Linux 5.14: all at once, forks included.
		if fd, err := unix.Open(filepath.Join(dir, "cgroup.kill"), unix.O_WRONLY|unix.O_CLOEXEC, 0); err == nil {
			_, err = unix.Write(fd, []byte("1"))
			unix.Close(fd)
			if err == nil {
				return 1
			}
		}
	}
	n := 0
	for _, pid := range pidsOf(dir) {
		if unix.Kill(pid, sig) == nil {
			n++
		}
	}
	return n
}
