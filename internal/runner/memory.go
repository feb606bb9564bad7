package runner

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/jobspec"
)

// Memory enforcement names, as agentproto.Hello reports them (Runner.Memory).
const (
	MemoryCgroup2 = "cgroup v2 (memory)"
	MemoryCgroup1 = "cgroup v1 (memory)"
)

// Exception of a job the OOM killer reached (issue 26): fatal, as the
// memory the job was granted is what it outgrew.
const (
	TypeOOM = "oom"
	// noteOOM is its note: the limit, and how many processes the kernel
	// killed.
	noteOOM = "memory limit %s exceeded: the kernel's OOM killer ended %d %s of the job"
)

// Modes of the v1 memory cgroups: the jobs' parent is passable but not
// listable, and a job's cgroup is the runner's alone, so that a guest's job
// neither lists the others' nor reads their use; their files are the
// runner's (root's, for guests' jobs), so no guest can lift a limit.
const (
	memParentMode = 0o711
	memJobMode    = 0o700
)

// memLimits puts the jobs that have a memory limit (Spec.Memory) under
// it, with the cgroup memory controller, where there is one:
//
//   - v2: the controller is enabled for the jobs' parent
//     (<own cgroup>/<CgroupName>, cgroup.subtree_control), and the limit is
//     the job's own cgroup's (or slot's) memory.max, with memory.swap.max
//     0: the limit is of memory, not of memory and swap. A slot's limit is
//     set back to max when it goes back to the pool, and its oom_kill
//     count, which the kernel never resets, is taken at the start to be
//     compared with at the end;
//   - v1: a cgroup of the job's own in the memory hierarchy,
//     <own memory cgroup>/<CgroupName>/<id>, beside the one that contains
//     the job (v2's, or v1's pids one), with memory.limit_in_bytes and,
//     where swap is accounted, memory.memsw.limit_in_bytes the same. The
//     forking thread moves itself into it, forks and moves back, as for
//     v1's pids hierarchy (cgroups); the tasks are in both cgroups.
//
// A job without a limit is put under none, and costs nothing more. The
// kernel's OOM killer, on a job that outgrows its limit, kills one of the
// job's processes, and the memory cgroup counts it (v1 memory.oom_control,
// v2 memory.events, "oom_kill"): a job whose count grew ends with the fatal
// exception "oom", whatever its status. Only the job's own processes are
// candidates: the OOM killer of a memory cgroup looks at its processes
// (thread group leaders) alone, so the agent's forking thread, never its
// process's leader (see job.fork), is not one.
type memLimits struct {
	v2 bool
	// parent is v1's <own memory cgroup>/<CgroupName>.
	parent string
	// selfTasks is v1's tasks file of the runner's own memory cgroup,
	// open, for the forking thread to move back into.
	selfTasks int
	// swap: swap is accounted, and limited too (v1 memsw, v2 swap.max).
	swap bool
}

func (m *memLimits) name() string {
	if m.v2 {
		return MemoryCgroup2
	}
	return MemoryCgroup1
}

// newMemLimits finds where jobs' memory limits can be set, beside the
// containment cg: v2's memory controller when cg is v2 and it can be had
// there, else v1's memory hierarchy. It returns why there is none
// otherwise, in a few words for the hello and fluxres status.
func newMemLimits(cg *cgroups, name string) (*memLimits, string) {
	if cg == nil {
		return nil, "no cgroup containment (subreaper)"
	}
	if cg.v2 && enableMemoryV2(cg.parent) {
		_, err := os.Stat(filepath.Join(cg.parent, "memory.swap.max"))
		// The parent's own files tell whether its children have one;
		// a probe child says it for sure.
		probe := filepath.Join(cg.parent, "memprobe")
		os.Remove(probe)
		if os.Mkdir(probe, 0o755) == nil {
			_, err = os.Stat(filepath.Join(probe, "memory.swap.max"))
			os.Remove(probe)
		}
		return &memLimits{v2: true, selfTasks: -1, swap: err == nil}, ""
	}
	m, err := newMemLimitsV1(name)
	if err != nil {
		return nil, "no cgroup memory controller: " + err.Error()
	}
	return m, ""
}

// enableMemoryV2 enables the memory controller for the children of the
// jobs' parent dir, and reports whether they have it. Its own parent (the
// runner's cgroup) must have it enabled for it, which works only where
// that cgroup holds no process (cgroup v2 lets a cgroup with processes
// give controllers to its children only at the root).
func enableMemoryV2(parent string) bool {
	has := func(dir, file string) bool {
		b, err := os.ReadFile(filepath.Join(dir, file))
		return err == nil && hasWord(strings.TrimSpace(string(b)), " ", "memory")
	}
	if !has(parent, "cgroup.controllers") {
		self := filepath.Dir(parent)
		if !has(self, "cgroup.controllers") {
			return false
		}
		os.WriteFile(filepath.Join(self, "cgroup.subtree_control"), []byte("+memory"), 0)
		if !has(parent, "cgroup.controllers") {
			return false
		}
	}
	if !has(parent, "cgroup.subtree_control") {
		os.WriteFile(filepath.Join(parent, "cgroup.subtree_control"), []byte("+memory"), 0)
	}
	return has(parent, "cgroup.subtree_control")
}

// newMemLimitsV1 sets up the jobs' parent in the v1 memory hierarchy,
// failing when a thread cannot be moved into a limited cgroup there.
func newMemLimitsV1(name string) (*memLimits, error) {
	self, err := findHierarchy("memory")
	if err != nil {
		return nil, err
	}
	m := &memLimits{parent: filepath.Join(self, name), selfTasks: -1}
	if err := os.Mkdir(m.parent, memParentMode); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, err
	}
	if err := os.Chmod(m.parent, memParentMode); err != nil {
		return nil, err
	}
	probe := filepath.Join(m.parent, "probe")
	os.Remove(probe)
	if err := os.Mkdir(probe, memJobMode); err != nil {
		return nil, err
	}
	defer os.Remove(probe)
	if err := writeFile(probe, "memory.limit_in_bytes", "1G"); err != nil {
		return nil, err
	}
	_, err = os.Stat(filepath.Join(probe, "memory.memsw.limit_in_bytes"))
	m.swap = err == nil
	if m.selfTasks, err = unix.Open(filepath.Join(self, "tasks"), unix.O_WRONLY|unix.O_CLOEXEC, 0); err != nil {
		return nil, err
	}
	c := &cgroups{selfTasks: m.selfTasks}
	if err := c.probeThread(probe); err != nil {
		unix.Close(m.selfTasks)
		return nil, err
	}
	m.sweep()
	return m, nil
}

// sweep removes the empty job cgroups that dead runners left whose
// records were lost (a record's adopter finds its cgroup gone, which is
// what it waits for). Only a runner of this instance and build makes them
// and only one such runs; an agent of another build takes no new job.
func (m *memLimits) sweep() {
	ents, err := os.ReadDir(m.parent)
	if err != nil {
		return
	}
	for _, e := range ents {
		if _, err := strconv.ParseUint(e.Name(), 10, 64); err == nil && e.IsDir() {
			unix.Rmdir(filepath.Join(m.parent, e.Name())) // fails while populated
		}
	}
}

// writeFile writes v to the cgroup file dir/name, as the kernel wants it:
// one write.
func writeFile(dir, name, v string) error {
	fd, err := unix.Open(filepath.Join(dir, name), unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if _, err := unix.Write(fd, []byte(v)); err != nil {
		return fmt.Errorf("writing %s of %s: %w", v, filepath.Join(dir, name), err)
	}
	return nil
}

// limitV2 sets the memory limit of the v2 cgroup dir (n bytes; 0: none,
// memory.max back to max).
func (m *memLimits) limitV2(dir string, n uint64) error {
	v, swap := "max", "max"
	if n > 0 {
		v, swap = strconv.FormatUint(n, 10), "0"
	}
	if err := writeFile(dir, "memory.max", v); err != nil {
		return err
	}
	if m.swap {
		return writeFile(dir, "memory.swap.max", swap)
	}
	return nil
}

// createV1 makes the v1 memory cgroup of job id with a limit of n bytes
// and returns its directory.
func (m *memLimits) createV1(id uint64, n uint64) (string, error) {
	dir := filepath.Join(m.parent, strconv.FormatUint(id, 10))
	err := os.Mkdir(dir, memJobMode)
	if errors.Is(err, os.ErrNotExist) {
		// The parent went with an earlier runner's Close.
		if err = os.Mkdir(m.parent, memParentMode); err == nil || errors.Is(err, os.ErrExist) {
			err = os.Mkdir(dir, memJobMode)
		}
	}
	if errors.Is(err, os.ErrExist) {
		// Left by a launch that died before its fork: made anew, so
		// that its OOM count is the job's.
		if !removeCgroupDir(dir) {
			return "", fmt.Errorf("cgroup %s: still holds processes", dir)
		}
		err = os.Mkdir(dir, memJobMode)
	}
	if err != nil {
		return "", err
	}
	v := strconv.FormatUint(n, 10)
	// limit_in_bytes first: memsw may not be below it.
	err = writeFile(dir, "memory.limit_in_bytes", v)
	if err == nil && m.swap {
		err = writeFile(dir, "memory.memsw.limit_in_bytes", v)
	}
	if err != nil {
		unix.Rmdir(dir)
		return "", err
	}
	return dir, nil
}

// oomKills reads the oom_kill count of a memory cgroup dir: v1's
// memory.oom_control or v2's memory.events (0 when it cannot be read).
func oomKills(dir string, v2 bool) uint64 {
	file := "memory.oom_control"
	if v2 {
		file = "memory.events"
	}
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return 0
	}
	return oomKillCount(b)
}

// oomKillCount reads the "oom_kill N" line of a memory.oom_control or
// memory.events file.
func oomKillCount(b []byte) uint64 {
	for _, l := range bytes.Split(b, []byte{'\n'}) {
		if v, ok := bytes.CutPrefix(l, []byte("oom_kill ")); ok {
			n, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 10, 64)
			if err == nil {
				return n
			}
		}
	}
	return 0
}

// oomNote is the note of a job's oom exception.
func oomNote(limit, kills uint64) string {
	what := "processes"
	if kills == 1 {
		what = "process"
	}
	return fmt.Sprintf(noteOOM, jobspec.FormatMemory(limit), kills, what)
}
