// Package runner runs and contains jobs on this machine for the exec agent
// (internal/agent): it forks every task of a job itself, from the agent's
// one long-lived process, with everything the job shell gave a task
// (internal/shell's Plan: the layout over R's ranks, the environment and
// FLUXQ_* variables, CUDA_VISIBLE_DEVICES, CPU binding, the working
// directory with its /tmp fallback, stdin from /dev/null or the input file,
// output files and their templates), keeps all of a job's processes together, and reports
// each job's end once every process it started is gone, with its wait
// status (the greatest of its tasks') and usage.
//
// # Cost per job
//
// Nothing waits per job: each task is forked with a pidfd, and one
// goroutine, parked in the Go runtime's poller, watches every pidfd and
// every output pipe through one epoll descriptor; it copies output with
// one buffer and reaps ended children with wait4(-1, WNOHANG) and their
// rusage (reap.go, output.go). Time limits and grace periods are runtime
// timers. The runner owns every child of the process: a program that uses
// a Runner must not start and wait for children of its own (os/exec), or
// each would take the other's.
//
// # Containment
//
// Options.Containment "auto" takes the first that works of:
//
//   - "cgroup v2": a cgroup of its own per job in the cgroup2 hierarchy
//     (on a host with v1 controllers, the hybrid "unified" one, which
//     needs no controller for this): a slot of a pool of empty cgroups,
//     <the agent's own cgroup>/<CgroupName>/slot.<n>, marked with the
//     job's id while the job has it (pool.go); without user xattrs on
//     cgroupfs (Linux < 5.7), <...>/<CgroupName>/<id>, made for the job.
//     Each task is forked straight into it (clone3, CLONE_INTO_CGROUP);
//   - "cgroup v1 (pids)": <...>/<CgroupName>/<id> in the v1 pids
//     hierarchy, made for the job; the forking thread moves itself into
//     the job's cgroup, forks, and moves back (in v1 a thread is a member,
//     and a child inherits its cgroup);
//   - "subreaper": the runner is the child subreaper of its jobs, and at a
//     job's end kills what is left in its tasks' process groups and the
//     orphans reparented to it that belong to the job.
//
// Containment() says which one runs (the agent's hello reports it); a
// task's /proc/PID/cgroup shows its job's cgroup: the job's id, or its
// slot, whose job `getfattr -n user.fluxq.job <slot's directory>` prints
// (and the agent's journal records, Record.Cgroup). Whatever a job
// starts, with setsid() or a double fork, stays in its cgroup: once the
// tasks are reaped, and their output drained (at most drainGrace), what is
// left in it is killed, and the job ends when the cgroup is empty, and
// removed or given back to the pool.
//
// # Memory limits
//
// A job with a memory limit (Spec.Memory) runs under it where there is a
// memory controller beside the containment (memory.go): its cgroup's
// memory.max with v2's controller, else a cgroup of its own in v1's
// memory hierarchy. A job the OOM killer reached ends with exception
// "oom"; Memory() says how limits are enforced, or why they are not.
//
// # The job folder
//
// <JobsDir>/<id in decimal>/ is where a job's files are, for people,
// tests and the commands that read a job's output (fluxq attach, fluxq
// output):
//
//	stdout     the tasks' standard output, unless the jobspec names a
//	           path (internal/shell's output templates)
//	stderr     the tasks' standard error and the job's own messages
//	           ("fluxq-shell[0]: FATAL: ..."), likewise
//
// Everything else about a job (its jobspec, R, launch time and wait
// status) is in the store: fluxq info, and the finish event.
//
// A job of the runner's own user gets its folder, mode 0700, and each of
// these files at their first write (see outFile.lazy): a job that writes
// nothing has no folder, which readers take for empty files. A guest's
// folder is made before the launch and handed to the guest, and its
// output files, command and working directory are opened or looked up
// with the guest's rights alone.
//
// The runner never reads anything from a job folder, which a guest's job
// may rewrite at will: what a later agent needs to find a job's processes
// is the Record, which the agent journals where jobs cannot write.
//
// Output is copied by this process: if it ends (an agent killed), a task
// still writing gets EPIPE or SIGPIPE.
package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	json "github.com/goccy/go-json"

	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/agentproto"
	"github.com/fluxq/fluxq/internal/cloexec"
	"github.com/fluxq/fluxq/internal/cycletrace"
	"github.com/fluxq/fluxq/internal/diskspace"
	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/fsd"
	"github.com/fluxq/fluxq/internal/idset"
	fjob "github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/shell"
)

// Exception types and notes the runner raises, in flux-core's words where
// it has them.
const (
	TypeTimeout = "timeout"
	TypeExec    = "exec"
	// TypeOutput is the note that a job's output is dropped past its
	// output.limit or its filesystem's reserve; SeverityOutput makes it
	// non-fatal (RFC 21: severity 0 alone ends a job).
	TypeOutput     = "output"
	SeverityOutput = 1
	NoteTimeout    = "resource allocation expired"
	// NoteStatusLost is an adopted job's end: its processes are gone, but
	// their wait status went with the runner that forked them.
	NoteStatusLost = "job status lost: the exec agent was restarted"
)

// Notes of the errors of Prepare.
const (
	noteNoR        = "start request has no R"
	noteBadR       = "invalid R: %v"
	noteBadJobspec = "invalid jobspec: %v"
	noteLaunch     = "cannot launch the job shell: %v"
)

// guestFolderRoom is what a guest's job needs beyond the reserve to be
// launched: its folder and a first write of output.
const guestFolderRoom = 64 << 10

// DefaultKillGrace is flux-core job-exec's default kill-timeout.
const DefaultKillGrace = 5 * time.Second

// drainGrace bounds how long the runner waits, once every task has ended,
// for the last of their output: a process a task left behind may hold a
// pipe open, and what it writes later is not the job's.
const drainGrace = 500 * time.Millisecond

// Intervals of the checks that a job's leftover processes are gone, after
// they were killed, and that an adopted job's processes have ended.
const (
	killPoll  = 10 * time.Millisecond
	adoptPoll = 250 * time.Millisecond
)

// Options configure a Runner.
type Options struct {
	JobsDir string // <state>/jobs
	// Containment is "auto" (or ""): a cgroup v2, else a cgroup v1 pids
	// hierarchy, else subreaper; "cgroup": a cgroup or New fails;
	// "cgroup2", "cgroup1": that version or New fails; "subreaper".
	Containment string
	// CgroupName names the folder of the jobs' cgroups, unique to the
	// instance, e.g. "fluxq-<hash of the state dir>".
	CgroupName string
	// Events receives exceptions and ends; it is called from the
	// runner's goroutines and must not block long.
	Events func(Event)
	Now    func() time.Time // time.Now if nil
}

// Spec is a job to run.
type Spec struct {
	ID        fluid.ID
	UserID    uint32
	Jobspec   json.RawMessage
	R         json.RawMessage
	KillGrace time.Duration // DefaultKillGrace if zero
	// Launched is the start of the time limit when R has no start time.
	Launched time.Time
	// Memory is the job's memory limit on this host in bytes (0: none):
	// where the runner has a memory controller (Memory), the job runs
	// under it, and ends with exception "oom" if the OOM killer reached
	// it.
	Memory uint64
	// Ranks are the ranks of R whose tasks run here (an idset,
	// agentproto.Start.Ranks); empty: all of R's.
	Ranks string
}

// Record is what the agent journals before the fork so that a later agent
// can find the job's processes.
type Record struct {
	ID     fluid.ID `json:"id"`
	UserID uint32   `json:"userid"`
	GID    uint32   `json:"gid"` // the gid the job runs with
	// Cgroup are the job's cgroup directories (v2: one; v1: one per
	// hierarchy used).
	Cgroup []string `json:"cgroup,omitempty"`
	// MemCgroup is the job's cgroup of the v1 memory hierarchy, beside
	// Cgroup, when it has a memory limit there (see memLimits): removed
	// once empty, as Cgroup's.
	MemCgroup string `json:"memory_cgroup,omitempty"`
	// Memory is the job's memory limit where it is enforced (bytes; 0:
	// none), and OOMBase its v2 cgroup's oom_kill count at the start: a
	// later runner that adopts the job still tells an OOM kill.
	Memory  uint64 `json:"memory,omitempty"`
	OOMBase uint64 `json:"oom_base,omitempty"`
	// Procs are the tasks in subreaper mode, filled by Launch.
	Procs      []Proc        `json:"procs,omitempty"`
	Expiration time.Time     `json:"expiration"` // zero: none
	KillGrace  time.Duration `json:"kill_grace"`
	// Recovered: the record was made from the job's cgroup (Strays), its
	// own having been lost.
	Recovered bool `json:"recovered,omitempty"`
}

// Proc names one process for good: a pid, and its start time, /proc/PID/stat
// field 22, which a reused pid does not share.
type Proc struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start"`
}

// Event is what the runner reports of a job: an exception to raise, or its
// end (never both).
type Event struct {
	ID        fluid.ID
	Exception *execproto.Exception
	End       *End
}

// End is a job that is over: every process gone, its cgroup removed or
// given back to the pool.
type End struct {
	Status int
	// Known is false when the status was lost (an adopted job).
	Known bool
	Usage agentproto.Usage
}

// Error is an error of Prepare that is an exception of its own type (the
// time limit passed before the launch); any other error is an "exec"
// exception with the error's text as note.
type Error struct {
	Type, Note string
}

func (e *Error) Error() string { return e.Note }

// Runner runs the jobs of one agent.
type Runner struct {
	opts     Options
	hostname string
	euid     uint32 // as whom the runner runs, and its own jobs
	egid     uint32
	devnull  int
	cg       *cgroups   // nil: subreaper
	mem      *memLimits // nil: memory limits not enforced, for memWhy
	memWhy   string

	// mu may be taken with a job's mu held (a job that ends leaves jobs
	// so), so a job's mu is never taken with mu held.
	mu     sync.Mutex
	jobs   map[fluid.ID]*job
	closed bool
	found  map[lookKey]found // see lookPath
	// shared are the CPUs that more than one host of the instance names
	// (SetSharedCPUs); nil: none. Read at every fork, set at each hello.
	shared atomic.Pointer[unix.CPUSet]
	// strays are the slots Strays found, locked, until Adopt takes them.
	strays map[fluid.ID]*slot
}

// New starts a runner.
func New(opts Options) (*Runner, error) {
	if opts.JobsDir == "" {
		return nil, errors.New("runner: no jobs directory")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Events == nil {
		opts.Events = func(Event) {}
	}
	if opts.CgroupName == "" {
		opts.CgroupName = "fluxq"
	}
	dir, err := filepath.Abs(opts.JobsDir)
	if err != nil {
		return nil, fmt.Errorf("runner: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("runner: %w", err)
	}
	opts.JobsDir = dir
	markTopDir(dir)
	// A job's tasks get 0, 1 and 2 alone (Slurm's and Flux's do): what
	// this process inherited open is marked close-on-exec here, once, so
	// that the fork path pays nothing for it. Everything the runner opens
	// itself is opened close-on-exec, and a task's 0, 1 and 2 are dup'ed
	// into place by the fork.
	if err := cloexec.Inherited(); err != nil {
		return nil, fmt.Errorf("runner: closing inherited descriptors: %w", err)
	}
	r := &Runner{opts: opts, jobs: map[fluid.ID]*job{}, found: map[lookKey]found{}, strays: map[fluid.ID]*slot{}}
	r.hostname, _ = os.Hostname()
	r.euid, r.egid = uint32(os.Geteuid()), uint32(os.Getegid())
	if r.cg, err = chooseContainment(opts.Containment, opts.CgroupName); err != nil {
		return nil, fmt.Errorf("runner: %w", err)
	}
	r.mem, r.memWhy = newMemLimits(r.cg, opts.CgroupName)
	if r.cg != nil && r.cg.pool {
		r.cg.adoptLeftovers(r.mem)
	}
	if err := startPoller(); err != nil {
		return nil, fmt.Errorf("runner: output poller: %w", err)
	}
	r.devnull, err = unix.Open(os.DevNull, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("runner: %w", err)
	}
	startReaper()
	return r, nil
}

// chooseContainment returns the cgroups to use, or nil for subreaper.
func chooseContainment(mode, name string) (*cgroups, error) {
	switch mode {
	case "", "auto", "cgroup":
		if c, err := newCgroups(true, name); err == nil {
			return c, nil
		}
		c, err := newCgroups(false, name)
		if err == nil {
			return c, nil
		}
		if mode == "cgroup" {
			return nil, fmt.Errorf("no usable cgroup: %w", err)
		}
		return nil, nil
	case "cgroup2", "cgroup1":
		c, err := newCgroups(mode == "cgroup2", name)
		if err != nil {
			return nil, fmt.Errorf("no usable %s: %w", mode, err)
		}
		return c, nil
	case "subreaper":
		return nil, nil
	}
	return nil, fmt.Errorf("unknown containment %q: want auto, cgroup or subreaper", mode)
}

// Containment says how jobs are kept together: "cgroup v2", "cgroup v1
// (pids)" or "subreaper".
func (r *Runner) Containment() string {
	if r.cg == nil {
		return ContainSubreaper
	}
	return r.cg.name()
}

// Memory says how jobs' memory limits (Spec.Memory) are enforced: "cgroup
// v2 (memory)" or "cgroup v1 (memory)"; or, when they are not, "" and
// why, in a few words.
func (r *Runner) Memory() (how, whyNot string) {
	if r.mem == nil {
		return "", r.memWhy
	}
	return r.mem.name(), ""
}

// Running returns the jobs prepared, running or ending.
func (r *Runner) Running() []fluid.ID {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := make([]fluid.ID, 0, len(r.jobs))
	for id := range r.jobs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Close stops watching: no event is sent any more. The jobs' processes
// keep running, for a later runner to adopt.
func (r *Runner) Close() {
	r.mu.Lock()
	r.closed = true
	jobs := r.jobs
	r.jobs = map[fluid.ID]*job{}
	strays := r.strays
	r.strays = map[fluid.ID]*slot{}
	r.mu.Unlock()
	for _, j := range jobs {
		j.mu.Lock()
		j.closed = true
		j.stopTimers()
		j.unlockStray()
		j.mu.Unlock()
	}
	for _, s := range strays {
		s.close()
	}
	if r.cg != nil {
		r.cg.closePool()
		// Gone only if no job's cgroup is left in it.
		unix.Rmdir(r.cg.parent)
	}
	if r.mem != nil && !r.mem.v2 {
		unix.Rmdir(r.mem.parent)
	}
}

func (r *Runner) job(id fluid.ID) *job {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.jobs[id]
}

// emit queues an event of the job, to be sent by unlock: events leave in
// order, and the Events function is never called with a job locked, so
// that it may call the runner. Called with j.mu held.
func (r *Runner) emit(j *job, ev Event) {
	if j.closed {
		return
	}
	ev.ID = j.id
	j.pending = append(j.pending, ev)
}

// unlock releases j.mu and sends the events queued meanwhile; one
// goroutine at a time sends a job's events, so they keep their order.
func (j *job) unlock() {
	if len(j.pending) == 0 || j.sending {
		j.mu.Unlock()
		return
	}
	j.sending = true
	for len(j.pending) > 0 {
		evs := j.pending
		j.pending = nil
		j.mu.Unlock()
		for _, ev := range evs {
			j.r.opts.Events(ev)
		}
		j.mu.Lock()
	}
	j.sending = false
	j.mu.Unlock()
}

// Signal sends sig to every process of the job.
func (r *Runner) Signal(id fluid.ID, sig syscall.Signal) {
	if j := r.job(id); j != nil {
		j.mu.Lock()
		j.signal(sig)
		j.unlock()
	}
}

// Terminate ends the job: SIGTERM now, SIGKILL after its kill grace.
func (r *Runner) Terminate(id fluid.ID) {
	if j := r.job(id); j != nil {
		j.mu.Lock()
		j.terminate(unix.SIGTERM)
		j.unlock()
	}
}

// job is one job of the runner.
type job struct {
	r    *Runner
	id   fluid.ID
	rec  *Record
	spec Spec
	dir  string
	// folder is dir, made at the first need (see folder).
	folder folder
	slot   *slot // the job's cgroup, from the pool, until given back
	// memLimit is the job's memory limit in bytes where it is enforced
	// (0: none); oomBase is the v2 cgroup's oom_kill count at the start
	// (a slot's is never reset), and oomKills what the job's end found
	// beyond it.
	memLimit   uint64
	memDropped bool
	oomBase    uint64
	oomKills   uint64
	cred       *syscall.Credential // nil: as the runner
	plan       *shell.Plan
	// planErr is a job that cannot be laid out: it fails at the launch,
	// as the job shell did.
	planErr error
	// stray is the slot of a job adopted from its cgroup alone (Strays),
	// kept locked until the job is over, so that no other runner adopts
	// it too.
	stray *slot

	mu          sync.Mutex
	closed      bool
	launching   bool // tasks are being forked
	launched    bool
	adopted     bool
	tasks       []*task
	live        int // tasks forked and not yet reaped
	pipes       []*outPipe
	open        int // pipes not yet at their end
	files       []*outFile
	errFile     *outFile // task 0's stderr, for the runner's messages
	tee         *stdinTee
	status      int
	usage       agentproto.Usage
	outErr      error // the first output write that failed
	terminating bool
	termSig     syscall.Signal // what terminate sent: SIGTERM, or SIGALRM for the time limit
	ending      bool           // every task reaped: draining, then emptying the cgroup
	done        bool
	limit       *time.Timer
	kill        *time.Timer
	later       *time.Timer // drain deadline, then the emptiness checks
	pending     []Event     // events to send (see unlock)
	sending     bool
}

// task is one process of a job.
type task struct {
	j    *job
	pid  int
	rank int
}

func (j *job) stopTimers() {
	for _, t := range []*time.Timer{j.limit, j.kill, j.later} {
		if t != nil {
			t.Stop()
		}
	}
}

// Prepare creates the job's cgroup, and a guest's job folder, handed to
// the guest, and returns the record to journal before Launch. An error
// means nothing is left behind and nothing runs: its text is the note of
// the "exec" exception to raise, unless it is an *Error, which names its
// type.
func (r *Runner) Prepare(s Spec) (*Record, error) {
	js, err := jobspec.Parse(s.Jobspec)
	if err != nil {
		return nil, fmt.Errorf(noteBadJobspec, err)
	}
	if len(s.R) == 0 || string(s.R) == "null" {
		return nil, errors.New(noteNoR)
	}
	rs, err := rset.Parse(s.R)
	if err != nil {
		return nil, fmt.Errorf(noteBadR, err)
	}
	// Before anything is created: a job that is not ours to run leaves
	// nothing behind.
	cred, note := credentialFor(r.euid, s.UserID, lookupUser)
	if note != "" {
		return nil, errors.New(note)
	}
	if cred != nil {
		// A guest's folder, and its output, are written with the
		// runner's rights: not past the filesystem's reserve, which
		// queued guest jobs would otherwise eat a folder at a time.
		if ok, reserve := diskspace.RoomPath(r.opts.JobsDir, guestFolderRoom); !ok {
			return nil, fmt.Errorf(noteLaunch, fmt.Sprintf("the filesystem of the job folders keeps %s free for the instance: no room for a guest's job", jobspec.FormatSize(reserve)))
		}
	}
	now := r.opts.Now()
	launched := s.Launched
	if launched.IsZero() {
		launched = now
	}
	exp := expiration(js, rs, launched)
	if !exp.IsZero() && !exp.After(now) {
		return nil, &Error{Type: TypeTimeout, Note: NoteTimeout}
	}
	if s.KillGrace <= 0 {
		s.KillGrace = DefaultKillGrace
	}
	j := &job{r: r, id: s.ID, spec: s, cred: cred,
		dir: filepath.Join(r.opts.JobsDir, strconv.FormatUint(uint64(s.ID), 10))}
	j.folder.dir, j.folder.cred = j.dir, cred
	j.plan, j.planErr = shell.NewPlan(s.ID, js, rs)
	if j.planErr == nil && s.Ranks != "" {
		j.planErr = j.plan.Keep(s.Ranks)
	}
	gid := r.egid
	if cred != nil {
		gid = cred.Gid
	}
	j.rec = &Record{ID: s.ID, UserID: s.UserID, GID: gid, Expiration: exp, KillGrace: s.KillGrace}
	// The id is taken first: a second start of a job that runs must not
	// touch its folder or its cgroup.
	r.mu.Lock()
	if r.closed || r.jobs[s.ID] != nil {
		r.mu.Unlock()
		return nil, fmt.Errorf(noteLaunch, fmt.Sprintf("job %s is already running here", s.ID))
	}
	r.jobs[s.ID] = j
	r.mu.Unlock()
	fail := func(err error) (*Record, error) {
		r.mu.Lock()
		if r.jobs[s.ID] == j {
			delete(r.jobs, s.ID)
		}
		r.mu.Unlock()
		return nil, fmt.Errorf(noteLaunch, err)
	}
	var cgroup []string
	switch {
	case r.cg != nil && r.cg.pool:
		sl, err := r.cg.take(uint64(s.ID))
		if err != nil {
			return fail(err)
		}
		j.slot, cgroup = sl, []string{sl.dir}
	case r.cg != nil:
		dir, err := r.cg.create(uint64(s.ID))
		if err != nil {
			return fail(err)
		}
		cgroup = []string{dir}
	}
	undo := func() {
		j.dropMemLimit()
		if j.slot != nil {
			r.cg.release(j.slot) // empty: nothing was forked
		} else {
			for _, d := range cgroup {
				removeCgroupDir(d)
			}
		}
	}
	if s.Memory > 0 && r.mem != nil {
		if err := j.setMemLimit(cgroup); err != nil {
			undo()
			return fail(err)
		}
	}
	if cred != nil {
		// A guest's folder is the guest's before the launch opens its
		// output files with the guest's rights.
		if err := j.folder.make(); err != nil {
			undo()
			return fail(err)
		}
	}
	j.mu.Lock()
	j.rec.Cgroup = cgroup
	j.rec.Memory, j.rec.OOMBase = j.memLimit, j.oomBase
	rec := *j.rec
	j.mu.Unlock()
	rec.Cgroup = slices.Clone(rec.Cgroup)
	return &rec, nil
}

// SetSharedCPUs says which of the machine's CPUs more than one host of
// the instance names (a test cluster of local hosts on the same cores:
// agentproto.HelloRequest.SharedCPUs); nil or empty: none. A task whose
// cores include one of them runs unbound: its host's cores are not its
// own, and binding each host's tasks to the same CPUs kept the kernel from
// spreading them over the machine (3,000 true jobs on 4 local hosts of the
// 2 cores left the cores idle a sixth of the time). Jobs launched from
// then on follow it. CPUs past what a mask holds are no CPU of the
// machine's.
func (r *Runner) SetSharedCPUs(cpus idset.Set) {
	var set *unix.CPUSet
	if !cpus.IsEmpty() {
		set = new(unix.CPUSet)
		limit := uint(len(set) * 64)
		for _, rg := range cpus.Ranges() {
			for c := rg.First; c <= rg.Last && c < limit; c++ {
				set.Set(int(c))
			}
		}
	}
	r.shared.Store(set)
}

// overlaps reports whether a and b have a CPU in common.
func overlaps(a, b *unix.CPUSet) bool {
	for i := range a {
		if a[i]&b[i] != 0 {
			return true
		}
	}
	return false
}

// Discard undoes Prepare for a job that will not be launched (its record
// could not be journaled): nothing of it was forked, so its cgroup, empty,
// goes back, and a folder made for it is removed. A job whose launch
// began is not Discard's to touch.
//
// The job is locked with the runner unlocked: a job that ends takes r.mu
// with j.mu held (finish), so j.mu comes first, always.
func (r *Runner) Discard(id fluid.ID) {
	j := r.job(id)
	if j == nil {
		return
	}
	j.mu.Lock()
	if j.launching || j.launched || j.closed {
		j.mu.Unlock()
		return
	}
	// Closed: a Launch from here on refuses it.
	j.closed = true
	cgroup := slices.Clone(j.rec.Cgroup)
	j.mu.Unlock()
	r.mu.Lock()
	if r.jobs[id] == j {
		delete(r.jobs, id)
	}
	r.mu.Unlock()
	j.dropMemLimit()
	if j.slot != nil {
		r.cg.release(j.slot)
	} else {
		for _, d := range cgroup {
			removeCgroupDir(d)
		}
	}
	j.folder.mu.Lock()
	made := j.folder.made
	j.folder.mu.Unlock()
	if made {
		os.RemoveAll(j.dir)
	}
}

// folder is a job's folder, made once, at the first need: a guest's in
// Prepare, to be handed to the guest before anything is opened in it with
// the guest's rights; the runner's own jobs' when a file must be written in
// it (see outFile.lazy), so that a job that writes nothing costs no folder
// (a new directory is the dearest part of a short job's launch on ext4:
// see markTopDir).
type folder struct {
	mu   sync.Mutex
	dir  string
	cred *syscall.Credential // the guest it is handed to; nil: the runner's
	made bool
}

// make makes the folder, unless it was made already.
func (f *folder) make() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.made {
		return nil
	}
	if err := os.Mkdir(f.dir, 0o700); errors.Is(err, fs.ErrExist) {
		// Left by a launch that died before its fork (or by an older
		// agent's spec.json): no task of the job ever wrote in it.
		if err := os.RemoveAll(f.dir); err != nil {
			return err
		}
		if err := os.Mkdir(f.dir, 0o700); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	if f.cred != nil {
		if err := giveFolder(f.dir, f.cred); err != nil {
			return err
		}
	}
	f.made = true
	return nil
}

// holds reports whether path is the folder or lies in it.
func (f *folder) holds(path string) bool {
	path = filepath.Clean(path)
	return path == f.dir || len(path) > len(f.dir) && path[len(f.dir)] == '/' && path[:len(f.dir)] == f.dir
}

// need makes the folder when path, which the launch is about to open or
// enter, lies in it: a job that names a file of its folder finds the
// folder there, as when it was made before every launch. An error is left
// to the open that follows.
func (f *folder) need(path string) {
	if path != "" && f.holds(path) {
		f.make()
	}
}

// Launch forks every task of a job Prepare returned rec for. It returns
// nil once the job is under way, even if a task failed to start: that is
// an Exception event, then the End, with exit status 127 (126 for a
// permission error, 1 otherwise) as the job shell did. An error means
// nothing was started and no event will come.
func (r *Runner) Launch(rec *Record, s Spec) error {
	j := r.job(rec.ID)
	if j == nil {
		return fmt.Errorf("job %s was not prepared", rec.ID)
	}
	j.mu.Lock()
	if j.launched || j.launching {
		j.mu.Unlock()
		return fmt.Errorf("job %s is already launched", rec.ID)
	}
	if j.closed {
		j.mu.Unlock()
		return fmt.Errorf("job %s was not prepared", rec.ID)
	}
	j.launching = true
	terminated := j.terminating
	j.mu.Unlock()

	if !j.rec.Expiration.IsZero() {
		j.mu.Lock()
		j.limit = time.AfterFunc(max(0, j.rec.Expiration.Sub(r.opts.Now())), j.expire)
		j.mu.Unlock()
	}
	var status int
	var exc string
	switch {
	case terminated:
		// Canceled before it ran: its tasks count as killed.
		status = fjob.WaitStatusSignaled(int(unix.SIGTERM))
	case j.planErr != nil:
		status, exc = fjob.WaitStatusExited(1), j.planErr.Error()
	case len(j.plan.Tasks) == 0:
		// A part of a job across hosts whose ranks hold none of its
		// tasks (shell.Plan.Keep): as flux-shell on such a rank, it
		// starts nothing and ends at once, with status 0.
	default:
		status, exc = j.start(rec)
	}
	j.mu.Lock()
	j.status = max(j.status, status)
	j.launching = false
	j.launched = true
	// What the tasks were started with is not needed again.
	j.plan = nil
	if exc != "" {
		r.emit(j, Event{Exception: &execproto.Exception{Type: TypeExec, Severity: 0, Note: exc}})
	}
	j.progress()
	j.unlock()
	return nil
}

// setup is what a launch needs that is looked up with the job user's
// rights.
type setup struct {
	cwd    string
	cwdErr error
	prog   string
	// files are the output files by path, opened; stdout and stderr index
	// them per task.
	paths          []string
	files          []*outFile
	stdout, stderr []int
	openErr        error
	lookErr        error
	// stdin are the tasks' stdin from the jobspec's input file (nil:
	// /dev/null); inErr is why it could not be opened; tee copies a
	// stream to them all (see openInput).
	stdin      []int
	inErr      error
	tee        *stdinTee
	teeStarted bool
}

// asJob runs f with the job user's rights.
func (j *job) asJob(f func()) error {
	if j.cred == nil {
		f()
		return nil
	}
	return asUser(j.cred.Uid, j.cred.Gid, f)
}

func (j *job) lookup() (*setup, error) {
	p := j.plan
	su := &setup{}
	err := j.asJob(func() {
		j.folder.need(p.Cwd())
		su.cwd, su.cwdErr = shell.CheckCwd(p.Cwd())
		p.Outputs(j.dir, su.cwd)
		// O_NONBLOCK: a FIFO with no reader fails (ENXIO) instead of
		// blocking the launch of every job.
		// O_NOCTTY: a terminal named as output (fluxq run --pty) must
		// never become the agent's controlling terminal.
		flags := unix.O_WRONLY | unix.O_CREAT | unix.O_TRUNC | unix.O_CLOEXEC | unix.O_NONBLOCK | unix.O_NOCTTY
		if p.AppendMode {
			flags = unix.O_WRONLY | unix.O_CREAT | unix.O_APPEND | unix.O_CLOEXEC | unix.O_NONBLOCK | unix.O_NOCTTY
		}
		index := map[string]int{}
		defaultOut, defaultErr := filepath.Join(j.dir, shell.StdoutFile), filepath.Join(j.dir, shell.StderrFile)
		limit := j.outputLimit()
		capped := func(f *outFile, path string) *outFile {
			f.guest, f.limit, f.name = j.cred != nil, -1, path
			switch path {
			case defaultOut:
				f.limit, f.name = limit, shell.StdoutFile
			case defaultErr:
				f.limit, f.name = limit, shell.StderrFile
			}
			return f
		}
		open := func(path string) int {
			if i, ok := index[path]; ok {
				return i
			}
			if su.openErr != nil {
				return -1
			}
			if j.cred == nil && (path == defaultOut || path == defaultErr) {
				index[path] = len(su.files)
				su.paths = append(su.paths, path)
				su.files = append(su.files, capped(&outFile{fd: -1, path: path, lazy: true, folder: &j.folder}, path))
				return len(su.files) - 1
			}
			j.folder.need(path)
			fd, err := unix.Open(path, flags, 0o666)
			if err != nil {
				su.openErr = &fs.PathError{Op: "open", Path: path, Err: err}
				return -1
			}
			f := capped(&outFile{fd: fd, path: path}, path)
			var st unix.Stat_t
			if unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT != unix.S_IFREG || j.cred != nil && onFUSE(fd) {
				// Not a file of a filesystem (/dev/null, a terminal, a
				// FIFO): nothing to learn from its write errors, and a
				// write to it may block, which must not stop the poller
				// that copies every job's output. The tasks get it; so
				// do a guest's on a FUSE filesystem, which the guest
				// may have mounted to make writes hang.
				f.direct = true
				unix.SetNonblock(fd, false)
			}
			index[path] = len(su.files)
			su.paths = append(su.paths, path)
			su.files = append(su.files, f)
			return len(su.files) - 1
		}
		su.stdout = make([]int, len(p.Tasks))
		su.stderr = make([]int, len(p.Tasks))
		for i, t := range p.Tasks {
			su.stdout[i] = open(t.Stdout)
			su.stderr[i] = open(t.Stderr)
		}
		if in := shell.InputPath(p.Jobspec.Attributes.System.Shell.Options, su.cwd); in != "" && su.openErr == nil {
			j.folder.need(in)
			su.openInput(in, len(p.Tasks))
		}
		if su.openErr == nil {
			su.prog, su.lookErr = j.r.lookPath(j.rec.UserID, p.Command(), p.PathEnv(), su.cwd)
		}
	})
	return su, err
}

// outputLimit is the cap of each of the job folder's output files (-1:
// none): the shell option output.limit; for a guest's job at most
// jobspec.GuestOutputLimit, which is also its default, as Flux keeps 10M
// of a job's output in a multi-user instance. A limit the submission
// should have refused counts as none given.
func (j *job) outputLimit() int64 {
	n, set, err := jobspec.OutputLimit(j.plan.Jobspec.Attributes.System.Shell.Options)
	if err != nil {
		set = false
	}
	if j.cred != nil && (!set || n > jobspec.GuestOutputLimit) {
		return jobspec.GuestOutputLimit
	}
	if !set {
		return -1
	}
	return int64(n)
}

// outputDropped reports, once per file, that the job's output is dropped
// from here on: a non-fatal exception, so that the eventlog says so and
// the job goes on (flux-shell logs "N of M bytes truncated").
func (j *job) outputDropped(note string) {
	j.mu.Lock()
	defer j.unlock()
	j.r.emit(j, Event{Exception: &execproto.Exception{Type: TypeOutput, Severity: SeverityOutput, Note: note}})
}

// start opens the job's output and forks its tasks; it returns the status
// and the exception note of a start that failed.
func (j *job) start(rec *Record) (int, string) {
	r := j.r
	su, err := j.lookup()
	defer su.closeInput()
	if err != nil {
		return fjob.WaitStatusExited(1), fmt.Sprintf(noteLaunch, err)
	}
	j.mu.Lock()
	j.files = su.files
	j.mu.Unlock()
	if su.openErr != nil {
		return fjob.WaitStatusExited(1), shell.OutputOpenError(su.openErr).Error()
	}
	p := j.plan
	stderr0 := su.files[su.stderr[0]]
	j.mu.Lock()
	j.errFile = stderr0
	j.mu.Unlock()
	if su.cwdErr != nil {
		stderr0.WriteString(shell.LogLine(0, "ERROR", shell.BadCwdMessage(shell.Host(p.Tasks[0].Node, r.hostname), p.Cwd(), su.cwdErr)))
	}
	if su.inErr != nil {
		stderr0.WriteString(shell.LogLine(0, "FATAL", su.inErr.Error()))
		return fjob.WaitStatusExited(1), su.inErr.Error()
	}
	// One pipe per output file, shared by every task and stream naming it.
	writers := make([]int, len(su.files))
	for i := range writers {
		writers[i] = -1
	}
	defer func() {
		for i, w := range writers {
			if w >= 0 && !su.files[i].direct {
				unix.Close(w)
			}
		}
	}()
	for i, f := range su.files {
		if f.direct {
			writers[i] = f.fd // closed with the files, not with the writers
			continue
		}
		var fds [2]int
		if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
			return fjob.WaitStatusExited(1), shell.OutputOpenError(err).Error()
		}
		writers[i] = fds[1]
		op := &outPipe{j: j, fd: fds[0], file: f}
		j.mu.Lock()
		j.pipes = append(j.pipes, op)
		j.open++
		j.mu.Unlock()
		if err := watch(op); err != nil {
			unix.Close(fds[0])
			j.mu.Lock()
			j.open--
			j.mu.Unlock()
			return fjob.WaitStatusExited(1), shell.OutputOpenError(err).Error()
		}
	}
	var started int
	var forkErr error
	cycletrace.At(cycletrace.RunnerSetUp, uint64(j.id))
	if su.lookErr != nil {
		forkErr = su.lookErr
	} else {
		started, forkErr = j.fork(su, writers)
	}
	if su.tee != nil && started > 0 {
		j.mu.Lock()
		j.tee = su.tee
		j.mu.Unlock()
		su.teeStarted = true
		go su.tee.run()
	}
	if r.cg == nil {
		rec.Procs = j.procs()
	}
	if forkErr == nil {
		j.mu.Lock()
		term, sig := j.terminating, j.termSig
		j.mu.Unlock()
		if started < len(p.Tasks) && term {
			// The tasks not started count as killed by the signal
			// that ended the others.
			return fjob.WaitStatusSignaled(int(sig)), ""
		}
		return 0, ""
	}
	failed := p.Tasks[started]
	msg := shell.StartFailedMessage(failed.Rank, shell.Host(failed.Node, r.hostname), failed.Argv[0], forkErr)
	stderr0.WriteString(shell.LogLine(failed.Node.NodeID, "FATAL", msg))
	j.mu.Lock()
	j.signal(unix.SIGKILL)
	j.mu.Unlock()
	return fjob.WaitStatusExited(shell.StartExitCode(forkErr)), msg
}

// fork starts the tasks in order and returns how many started and why the
// next did not. It stops early, without an error, when the job is
// terminated meanwhile.
//
// A child inherits the CPU mask of the thread that forks it, and, with
// cgroup v1, its cgroups: so the tasks are forked from this goroutine's
// thread, locked, with each task's mask set (and the job's cgroup joined)
// in turn. The thread is unlocked only once all is as it was; if that
// fails it stays locked, and ends with the goroutine.
func (j *job) fork(su *setup, writers []int) (int, error) {
	p := j.plan
	cg := j.r.cg
	runtime.LockOSThread()
	if j.rec.MemCgroup != "" && unix.Gettid() == unix.Getpid() {
		// The main thread is its process's leader, which the OOM killer
		// of the memory cgroup it joins would count as one of the job's
		// processes, and could kill: the tasks are forked from another
		// thread, this one held meanwhile so that the other is not it.
		defer runtime.UnlockOSThread()
		var n int
		var err error
		done := make(chan struct{})
		go func() {
			defer close(done)
			n, err = j.fork(su, writers)
		}()
		<-done
		return n, err
	}
	restored := true
	defer func() {
		if restored {
			runtime.UnlockOSThread()
		}
	}()
	attr := &syscall.SysProcAttr{Setpgid: true, Credential: j.cred}
	if cg != nil {
		dir := j.rec.Cgroup[0]
		switch {
		case j.slot != nil:
			attr.UseCgroupFD, attr.CgroupFD = true, j.slot.fd
		case cg.v2:
			fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != nil {
				return 0, err
			}
			defer unix.Close(fd)
			attr.UseCgroupFD, attr.CgroupFD = true, fd
		default:
			if err := cg.moveThread(dir); err != nil {
				return 0, err
			}
			defer func() {
				if cg.moveBack() != nil {
					restored = false
				}
			}()
		}
		if d := j.rec.MemCgroup; d != "" {
			if err := cg.moveThread(d); err != nil {
				return 0, err
			}
			defer func() {
				if _, err := unix.Pwrite(j.r.mem.selfTasks, []byte(strconv.Itoa(unix.Gettid())), 0); err != nil {
					restored = false
				}
			}()
		}
	}
	var orig unix.CPUSet
	haveOrig := unix.SchedGetaffinity(0, &orig) == nil
	bound := false
	defer func() {
		if bound && (!haveOrig || unix.SchedSetaffinity(0, &orig) != nil) {
			restored = false
		}
	}()
	files := []uintptr{uintptr(j.r.devnull), 0, 0}
	shared := j.r.shared.Load()
	for i := range p.Tasks {
		t := &p.Tasks[i]
		j.mu.Lock()
		term := j.terminating
		j.mu.Unlock()
		if term {
			return i, nil
		}
		switch {
		case t.CPUs != nil && haveOrig && (shared == nil || !overlaps(t.CPUs, shared)):
			if unix.SchedSetaffinity(0, t.CPUs) == nil {
				bound = true
			} else if bound && haveOrig && unix.SchedSetaffinity(0, &orig) == nil {
				bound = false
			}
		case bound && haveOrig && unix.SchedSetaffinity(0, &orig) == nil:
			bound = false
		}
		files[0] = uintptr(j.r.devnull)
		if su.stdin != nil {
			files[0] = uintptr(su.stdin[i])
		}
		files[1], files[2] = uintptr(writers[su.stdout[i]]), uintptr(writers[su.stderr[i]])
		tk := &task{j: j, rank: t.Rank}
		pidfd := -1
		attr.PidFD = nil
		if reaper.pidfds {
			attr.PidFD = &pidfd
		}
		sys := attr
		if i == 0 && ptyTask(p.Jobspec.Attributes.System.Shell.Options, int(files[0])) {
			// The pty shell option (fluxq run --pty, fluxq alloc): the
			// first task leads a session of its own whose controlling
			// terminal is its stdin, so that the terminal's ^C, ^Z and
			// job control reach it as at a login. Its process group is
			// still its pid, which is what the signals are sent to.
			tty := *attr
			tty.Setpgid, tty.Setsid, tty.Setctty, tty.Ctty = false, true, true, 0
			sys = &tty
		}
		reaper.mu.Lock()
		cycletrace.At(cycletrace.RunnerForkIn, uint64(j.id))
		pid, err := syscall.ForkExec(su.prog, t.Argv, &syscall.ProcAttr{Dir: su.cwd, Env: t.Env, Files: files, Sys: sys})
		cycletrace.At(cycletrace.RunnerForkOut, uint64(j.id))
		if err == nil {
			tk.pid = pid
			reaper.tasks[pid] = tk
		}
		reaper.mu.Unlock()
		if err != nil {
			return i, err
		}
		if pidfd >= 0 {
			watchPidfd(pidfd)
		}
		j.mu.Lock()
		j.tasks = append(j.tasks, tk)
		j.live++
		j.mu.Unlock()
	}
	return len(p.Tasks), nil
}

// procs names the job's tasks for good, for a later runner in subreaper
// mode.
func (j *job) procs() []Proc {
	j.mu.Lock()
	defer j.unlock()
	out := make([]Proc, 0, len(j.tasks))
	for _, t := range j.tasks {
		if st, err := startTime(t.pid); err == nil {
			out = append(out, Proc{PID: t.pid, Start: st})
		}
	}
	return out
}

// taskEnded is the reaper's report of a task.
func (j *job) taskEnded(t *task, ws unix.WaitStatus, ru *unix.Rusage) {
	cycletrace.At(cycletrace.AgentReaped, uint64(j.id))
	j.mu.Lock()
	defer j.unlock()
	j.live--
	j.status = max(j.status, int(ws))
	j.usage.UserCPU += tvSeconds(ru.Utime)
	j.usage.SysCPU += tvSeconds(ru.Stime)
	j.usage.MaxRSS = max(j.usage.MaxRSS, ru.Maxrss*1024)
	j.progress()
}

func tvSeconds(tv unix.Timeval) float64 { return float64(tv.Sec) + float64(tv.Usec)/1e6 }

// pipeClosed is the poller's report that an output pipe reached its end.
func (j *job) pipeClosed() {
	j.mu.Lock()
	defer j.unlock()
	j.open--
	j.progress()
}

// progress moves the job towards its end once its tasks are all reaped:
// the last output, then what is left in its cgroup, then End. Called with
// j.mu held.
func (j *job) progress() {
	if j.done || j.closed || !j.launched || j.live > 0 {
		return
	}
	if !j.ending {
		j.ending = true
		if j.open > 0 {
			j.later = time.AfterFunc(drainGrace, j.drained)
			return
		}
	}
	if j.open > 0 {
		return
	}
	if j.later != nil {
		j.later.Stop()
	}
	j.empty()
}

// drained ends the wait for output: what comes later is not the job's.
func (j *job) drained() {
	j.mu.Lock()
	pipes := j.pipes
	j.mu.Unlock()
	n := 0
	for _, p := range pipes {
		if drop(p) {
			n++
		}
	}
	j.mu.Lock()
	defer j.unlock()
	j.open -= n
	j.progress()
}

// empty removes the job's cgroup (or gives its slot back to the pool),
// killing what is left in it first, and ends the job once it is empty.
// Called with j.mu held.
func (j *job) empty() {
	gone := true
	switch {
	case j.r.cg == nil:
		gone = j.sweep()
	case j.slot != nil:
		if j.memLimit > 0 && j.r.mem.v2 && j.slot.empty() {
			// Counted, then unlimited, before the slot goes back.
			j.countOOM(j.slot.dir, true)
			j.dropMemLimit()
		}
		if j.r.cg.release(j.slot) {
			j.slot = nil
		} else {
			gone = false
			j.slot.killed = true
			signalCgroup(j.rec.Cgroup[0], unix.SIGKILL)
		}
	default:
		for _, d := range j.rec.Cgroup {
			if j.memLimit > 0 && j.r.mem.v2 {
				j.countOOM(d, true) // before its last rmdir
			}
			if !j.r.cg.remove(d) {
				gone = false
				j.r.cg.signal(d, unix.SIGKILL)
			}
		}
	}
	if d := j.rec.MemCgroup; gone && d != "" {
		// Once the job's processes are gone from its cgroup, its memory
		// cgroup holds none either, unless one left that cgroup (the
		// owner's jobs may): they are killed too.
		j.countOOM(d, false)
		if !removeCgroupDir(d) {
			gone = false
			signalCgroup(d, unix.SIGKILL)
		}
	}
	if gone {
		j.finish()
		return
	}
	j.later = time.AfterFunc(killPoll, func() {
		// What was killed may be our child (an orphan of the job): with
		// pidfds nothing else reaps it now.
		reapAll()
		j.mu.Lock()
		defer j.unlock()
		if !j.done && !j.closed {
			j.empty()
		}
	})
}

// sweep kills, in subreaper mode, what the job's tasks left behind, and
// reports whether nothing is left: the processes in the tasks' process
// groups (a group outlives its leader only while it has members, so its
// id is still the job's), and the orphans reparented to the runner, the
// subreaper, that belong to the job (see orphanOf).
func (j *job) sweep() bool {
	gone := true
	for _, t := range j.tasks {
		if unix.Kill(-t.pid, unix.SIGKILL) == nil {
			gone = false
		}
	}
	for _, pid := range orphans() {
		ours, sure := j.orphanOf(pid)
		if !sure || ours && unix.Kill(pid, unix.SIGKILL) == nil {
			gone = false
		}
	}
	return gone
}

// finish reports the job's end. Called with j.mu held.
func (j *job) finish() {
	j.done = true
	j.stopTimers()
	if j.tee != nil {
		j.tee.close()
	}
	for _, p := range j.pipes {
		if p.err != nil && j.outErr == nil {
			j.outErr = p.err
		}
	}
	for _, f := range j.files {
		f.close()
	}
	r := j.r
	r.mu.Lock()
	if r.jobs[j.id] == j {
		delete(r.jobs, j.id)
	}
	r.mu.Unlock()
	if j.oomKills > 0 {
		r.emit(j, Event{Exception: &execproto.Exception{Type: TypeOOM, Severity: 0, Note: oomNote(j.memLimit, j.oomKills)}})
	}
	if j.adopted {
		j.unlockStray()
		r.emit(j, Event{End: &End{Known: false}})
		return
	}
	if j.outErr != nil {
		// The job ran, but lost output: it ends with an exception that
		// says where and why, and keeps its tasks' status.
		msg := shell.OutputWriteError(j.outErr).Error()
		if j.errFile != nil {
			// Best effort: it is likely the file that is full.
			j.errFile.WriteString(shell.LogLine(0, "FATAL", msg))
		}
		r.emit(j, Event{Exception: &execproto.Exception{Type: TypeExec, Severity: 0, Note: msg}})
	}
	r.emit(j, Event{End: &End{Status: j.status, Known: true, Usage: j.usage}})
}

// expire is the time limit: exception "timeout", then SIGALRM, and SIGKILL
// after the grace, as flux-core's job-exec does: a job that ran out of
// time is told apart from a canceled one by its status (142, not 143).
func (j *job) expire() {
	j.mu.Lock()
	defer j.unlock()
	if j.done || j.closed {
		return
	}
	j.r.emit(j, Event{Exception: &execproto.Exception{Type: TypeTimeout, Severity: 0, Note: NoteTimeout}})
	j.terminate(unix.SIGALRM)
}

// terminate sends sig (SIGTERM for a cancel, SIGALRM for the time
// limit), and arms SIGKILL. Called with j.mu held.
func (j *job) terminate(sig syscall.Signal) {
	if j.terminating || j.done {
		return
	}
	j.terminating = true
	j.termSig = sig
	j.signal(sig)
	j.kill = time.AfterFunc(j.rec.KillGrace, func() {
		j.mu.Lock()
		defer j.unlock()
		if !j.done && !j.closed {
			j.signal(unix.SIGKILL)
		}
	})
}

// signal sends sig to every process of the job. Called with j.mu held.
func (j *job) signal(sig syscall.Signal) {
	if j.done {
		return
	}
	if len(j.rec.Cgroup) > 0 {
		if sig == unix.SIGKILL && j.slot != nil {
			j.slot.killed = true
		}
		for _, d := range j.rec.Cgroup {
			signalCgroup(d, sig)
		}
		return
	}
	if j.adopted {
		for _, p := range j.rec.Procs {
			if st, err := startTime(p.PID); err == nil && st == p.Start {
				unix.Kill(p.PID, sig)
			}
		}
		return
	}
	for _, t := range j.tasks {
		// A task not yet reaped still owns its pid; its group (its own
		// pid) holds what it started, unless they left it.
		if alive(t) {
			unix.Kill(-t.pid, sig)
		}
	}
}

// expiration is when the job's time limit ends: R's expiration, else its
// start time (or launched, without one) plus the jobspec's duration; zero
// for none.
//
// Submission holds durations and times to fsd's bounds; a stored job from
// before them, or an R a scheduler command wrote, may still name a time
// past year 9999, which the journal's record could not encode. Such a
// limit lies beyond any clock this runs on: it is none.
func expiration(js *jobspec.Jobspec, r *rset.R, launched time.Time) time.Time {
	if e := r.Expiration(); e > 0 {
		if e > latestExpiration {
			return time.Time{}
		}
		return fromSeconds(e)
	}
	d := js.Attributes.System.Duration
	if d <= 0 || math.IsInf(d, 0) || math.IsNaN(d) {
		return time.Time{}
	}
	start := launched
	if s := r.StartTime(); s > 0 && s <= latestExpiration {
		start = fromSeconds(s)
	}
	if d > float64(math.MaxInt64/int64(time.Second)) {
		return time.Time{} // beyond any clock: unlimited
	}
	exp := start.Add(time.Duration(d * float64(time.Second)))
	if float64(exp.Unix()) > latestExpiration {
		return time.Time{}
	}
	return exp
}

// latestExpiration is the latest time limit a job's record holds: a job
// that begins at fsd.LatestTime and runs fsd.MaxDuration, centuries short
// of year 9999.
const latestExpiration = fsd.LatestTime + fsd.MaxDuration

func fromSeconds(s float64) time.Time {
	sec, frac := math.Modf(s)
	return time.Unix(int64(sec), int64(frac*1e9))
}

// A burst of jobs runs one command many times, and looking it up costs a
// stat per PATH entry: a command found is remembered for foundTTL, for the
// same user, PATH and working directory. Only what was found is kept: a
// command missing, then installed, is found at once.
const (
	foundTTL = time.Second
	maxFound = 256
)

type lookKey struct {
	uid             uint32
	file, path, cwd string
}

type found struct {
	prog string
	at   time.Time
}

// lookPath is shell.LookPath, remembered (see foundTTL). It runs with the
// job user's rights.
func (r *Runner) lookPath(uid uint32, file, pathEnv, cwd string) (string, error) {
	k := lookKey{uid, file, pathEnv, cwd}
	now := time.Now()
	r.mu.Lock()
	f, ok := r.found[k]
	r.mu.Unlock()
	if ok && now.Sub(f.at) < foundTTL {
		return f.prog, nil
	}
	prog, err := shell.LookPath(file, pathEnv, cwd)
	if err == nil {
		r.mu.Lock()
		if len(r.found) >= maxFound {
			clear(r.found)
		}
		r.found[k] = found{prog, now}
		r.mu.Unlock()
	}
	return prog, err
}

// plainID is the job's id as FLUXQ_F58_FORCE_ASCII gives it.
func (j *job) plainID() string {
	s, _ := j.id.Encode(fluid.F58Plain)
	return s
}

// onFUSE reports whether fd is a file of a FUSE filesystem.
func onFUSE(fd int) bool {
	var st unix.Statfs_t
	return unix.Fstatfs(fd, &st) == nil && st.Type == unix.FUSE_SUPER_MAGIC
}

// setMemLimit puts the job, whose cgroup is cgroup, under its memory
// limit (Spec.Memory), where memory limits are enforced (r.mem is set).
func (j *job) setMemLimit(cgroup []string) error {
	m, n := j.r.mem, j.spec.Memory
	if m.v2 {
		if len(cgroup) == 0 {
			return nil
		}
		// Set first: a limit written in part is lifted by dropMemLimit.
		j.memLimit = n
		if err := m.limitV2(cgroup[0], n); err != nil {
			return err
		}
		j.oomBase = oomKills(cgroup[0], true)
		return nil
	}
	dir, err := m.createV1(uint64(j.id), n)
	if err != nil {
		return err
	}
	j.memLimit, j.rec.MemCgroup = n, dir
	return nil
}

// dropMemLimit undoes setMemLimit, once: a slot's limit is set back to
// none, before it goes back to the pool (a slot whose limit stays is
// never reused), and a v1 memory cgroup, empty, is removed.
func (j *job) dropMemLimit() {
	if j.memLimit == 0 || j.memDropped {
		return
	}
	j.memDropped = true
	if j.slot != nil && j.r.mem.v2 {
		if j.r.mem.limitV2(j.slot.dir, 0) != nil {
			j.slot.killed = true
		}
	}
	if d := j.rec.MemCgroup; d != "" {
		removeCgroupDir(d)
	}
}

// countOOM takes the OOM killer's count of the job from its memory cgroup
// dir, once the job's processes are gone.
func (j *job) countOOM(dir string, v2 bool) {
	if n := oomKills(dir, v2); n > j.oomBase {
		j.oomKills = n - j.oomBase
	}
}
