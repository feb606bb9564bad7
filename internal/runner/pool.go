package runner

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// With cgroup v2, a job's cgroup is a slot, <parent>/slot.<n>, taken from a
// pool of empty cgroups and given back once verified empty: making and
// removing a cgroup per job (mkdir, rmdir, the kernel's setup and its
// deferred teardown of the cgroup) cost more than the rest of a short
// job's launch. A slot names its job in the extended attribute
// user.fluxq.job (the id in decimal, "free" in the pool), set before any
// task is forked into it: `getfattr -n user.fluxq.job <slot>` maps a
// task's /proc/PID/cgroup to its job, and so does InJob. Only the cgroup's
// owner (the agent's user) may set it, as only it may move processes in.
//
// A runner holds an exclusive flock on the directory of every slot it
// owns, free or in use (the descriptor it forks with): the lock goes with
// the runner's process, so a later runner tells a live runner's slots
// from those a dead one left. A slot a dead runner left is taken into the
// pool at startup only when it is marked free and empty; one that names a
// job is the business of whichever agent adopts that job's record, which
// removes it once it is empty (Adopt). v1 hierarchies, and v2 hosts
// without user xattrs on cgroupfs (Linux < 5.7), keep a cgroup per job,
// named by its id.
const (
	slotPrefix = "slot."
	jobAttr    = "user.fluxq.job"
	freeMark   = "free"
	// maxFree bounds the pool: the free slots beyond it are removed.
	maxFree = 64
)

// slot is a cgroup of the pool that this runner owns.
type slot struct {
	dir    string
	fd     int // the directory, flocked; forked into (CLONE_INTO_CGROUP)
	events int // cgroup.events, read for "populated 0"
	// killed: SIGKILL was sent through its cgroup.kill. Such a slot is
	// removed, never reused: on Linux 6.14 and later a cgroup keeps a
	// count of its kills, and a child forked into it from another cgroup
	// (CLONE_INTO_CGROUP) is compared against the count of the parent's
	// cgroup, not its own, and killed at birth.
	killed bool
}

func (s *slot) close() {
	unix.Close(s.events)
	unix.Close(s.fd)
}

// mark names the slot's job (or "free").
func (s *slot) mark(v string) error {
	return unix.Setxattr(s.dir, jobAttr, []byte(v), 0)
}

// empty reports whether no process is left in the slot.
func (s *slot) empty() bool { return populated(s.events) == 0 }

// populated reads the "populated" key of a cgroup.events file: 1, 0, or
// -1 when it cannot be read.
func populated(fd int) int {
	var buf [256]byte
	n, err := unix.Pread(fd, buf[:], 0)
	if err != nil || n <= 0 {
		return -1
	}
	for _, l := range bytes.Split(buf[:n], []byte{'\n'}) {
		if v, ok := bytes.CutPrefix(l, []byte("populated ")); ok {
			if string(v) == "0" {
				return 0
			}
			return 1
		}
	}
	return -1
}

// openSlot opens and locks the slot dir; ok is false when another live
// runner holds it.
func openSlot(dir string) (s *slot, ok bool, err error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false, err
	}
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		unix.Close(fd)
		if err == unix.EWOULDBLOCK {
			return nil, false, nil
		}
		return nil, false, err
	}
	ev, err := unix.Openat(fd, "cgroup.events", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Close(fd)
		return nil, false, err
	}
	return &slot{dir: dir, fd: fd, events: ev}, true, nil
}

// canPool reports whether the slots' marks can be set here: user xattrs
// on cgroupfs, tried on the probe cgroup dir.
func canPool(dir string) bool {
	return unix.Setxattr(dir, jobAttr, []byte(freeMark), 0) == nil
}

// adoptLeftovers takes into the pool the free, empty slots that dead
// runners left in the parent; with v2 memory limits (mem), a limit a dead
// runner left on one is lifted first, or the slot is not taken.
func (c *cgroups) adoptLeftovers(mem *memLimits) {
	ents, err := os.ReadDir(c.parent)
	if err != nil {
		return
	}
	for _, e := range ents {
		n, ok := slotNumber(e.Name())
		if !ok || !e.IsDir() {
			continue
		}
		c.next = max(c.next, n+1)
		s, ok, err := openSlot(filepath.Join(c.parent, e.Name()))
		if err != nil || !ok {
			continue // a live runner's
		}
		var buf [32]byte
		m, err := unix.Getxattr(s.dir, jobAttr, buf[:])
		free := err == unix.ENODATA || err == nil && string(buf[:m]) == freeMark
		if !free || !s.empty() {
			// A job's: its record's adopter removes it once empty.
			s.close()
			continue
		}
		if mem != nil && mem.v2 && mem.limitV2(s.dir, 0) != nil {
			unix.Rmdir(s.dir)
			s.close()
			continue
		}
		c.giveBack(s)
	}
}

func slotNumber(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, slotPrefix)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil && n >= 0
}

// take returns an empty slot marked with the job id, from the pool or new.
func (c *cgroups) take(id uint64) (*slot, error) {
	c.mu.Lock()
	var s *slot
	if n := len(c.free); n > 0 {
		s, c.free = c.free[n-1], c.free[:n-1]
	}
	c.mu.Unlock()
	if s == nil {
		var err error
		if s, err = c.newSlot(); err != nil {
			return nil, err
		}
	}
	if err := s.mark(strconv.FormatUint(id, 10)); err != nil {
		c.giveBack(s)
		return nil, err
	}
	return s, nil
}

// newSlot makes a slot under a number no one uses.
func (c *cgroups) newSlot() (*slot, error) {
	for tries := 0; ; tries++ {
		c.mu.Lock()
		n := c.next
		c.next++
		c.mu.Unlock()
		dir := filepath.Join(c.parent, slotPrefix+strconv.Itoa(n))
		err := os.Mkdir(dir, 0o755)
		if errors.Is(err, os.ErrNotExist) {
			// The parent went with an earlier runner's Close.
			if err = os.Mkdir(c.parent, 0o755); err == nil || errors.Is(err, os.ErrExist) {
				err = os.Mkdir(dir, 0o755)
			}
		}
		if errors.Is(err, os.ErrExist) && tries < 1000 {
			continue // another runner's, or left by a dead one
		}
		if err != nil {
			return nil, err
		}
		s, ok, err := openSlot(dir)
		if err != nil {
			unix.Rmdir(dir)
			return nil, err
		}
		if !ok {
			// Taken meanwhile by a starting runner, for its pool.
			continue
		}
		return s, nil
	}
}

// release gives the slot of a job back once it is empty, and reports
// whether it was: while a process is left in it, it stays the job's.
func (c *cgroups) release(s *slot) bool {
	switch populated(s.events) {
	case 1:
		return false
	case -1:
		// Unreadable (removed from outside?): rmdir tells, as for a
		// cgroup of its own.
		if !removeCgroupDir(s.dir) {
			return false
		}
		s.close()
		return true
	}
	if s.killed || s.mark(freeMark) != nil {
		// Killed, or unmarked: it must not serve another job.
		unix.Rmdir(s.dir)
		s.close()
		return true
	}
	c.giveBack(s)
	return true
}

// giveBack puts an empty slot marked free in the pool, or removes it when
// the pool is full.
func (c *cgroups) giveBack(s *slot) {
	c.mu.Lock()
	if len(c.free) < maxFree && !c.closed {
		c.free = append(c.free, s)
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	unix.Rmdir(s.dir)
	s.close()
}

// closePool removes the free slots; the slots of running jobs stay, for a
// later runner to adopt.
func (c *cgroups) closePool() {
	c.mu.Lock()
	free := c.free
	c.free, c.closed = nil, true
	c.mu.Unlock()
	for _, s := range free {
		unix.Rmdir(s.dir)
		s.close()
	}
}

// adoptedSlotGone reports whether an adopted job's slot dir holds none of
// job id's processes, and removes it then: gone, no longer marked with
// the job (given back and reused since), or empty.
func adoptedSlotGone(dir string, id uint64) bool {
	var buf [32]byte
	n, err := unix.Getxattr(dir, jobAttr, buf[:])
	if err == unix.ENOENT {
		return true
	}
	if err == nil && string(buf[:n]) != strconv.FormatUint(id, 10) {
		return true
	}
	return removeCgroupDir(dir)
}

// slotMarkedDir reports whether the slot dir is marked with job id.
func slotMarkedDir(dir string, id uint64) bool {
	var buf [32]byte
	n, err := unix.Getxattr(dir, jobAttr, buf[:])
	return err == nil && string(buf[:n]) == strconv.FormatUint(id, 10)
}

// isSlot reports whether a cgroup dir is a slot of a pool.
func isSlot(dir string) bool {
	_, ok := slotNumber(filepath.Base(dir))
	return ok
}
