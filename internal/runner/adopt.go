package runner

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/rset"
)

// Adopt watches a job that an earlier runner launched (from a dead agent's
// journal): its processes are not our children, so their wait statuses are
// lost, but its cgroup (or, in subreaper mode, its recorded processes)
// still says when they are all gone. Its time limit is enforced, it can be
// signalled and terminated, and once nothing of it is left it ends with
// End{Known: false}.
func (r *Runner) Adopt(rec Record) {
	if rec.KillGrace <= 0 {
		rec.KillGrace = DefaultKillGrace
	}
	rec.Cgroup = slices.Clone(rec.Cgroup)
	rec.Procs = slices.Clone(rec.Procs)
	j := &job{r: r, id: rec.ID, rec: &rec, adopted: true, launched: true, ending: true,
		dir:      filepath.Join(r.opts.JobsDir, strconv.FormatUint(uint64(rec.ID), 10)),
		memLimit: rec.Memory, oomBase: rec.OOMBase}
	r.mu.Lock()
	j.stray = r.strays[rec.ID]
	delete(r.strays, rec.ID)
	if r.closed || r.jobs[rec.ID] != nil {
		r.mu.Unlock()
		if j.stray != nil {
			j.stray.close()
		}
		return
	}
	r.jobs[rec.ID] = j
	r.mu.Unlock()
	j.mu.Lock()
	defer j.unlock()
	if !rec.Expiration.IsZero() {
		j.limit = time.AfterFunc(max(0, rec.Expiration.Sub(r.opts.Now())), j.expire)
	}
	j.watchAdopted()
}

// watchAdopted ends an adopted job once nothing of it is left, else looks
// again later. Called with j.mu held.
func (j *job) watchAdopted() {
	if j.done || j.closed {
		return
	}
	if j.adoptedGone() {
		j.finish()
		return
	}
	j.later = time.AfterFunc(adoptPoll, func() {
		j.mu.Lock()
		defer j.unlock()
		j.watchAdopted()
	})
}

// adoptedGone reports whether an adopted job's processes are all gone
// (and removes its cgroup then).
func (j *job) adoptedGone() bool {
	if len(j.rec.Cgroup) > 0 {
		gone := true
		if d := j.rec.Cgroup[0]; j.memLimit > 0 && j.rec.MemCgroup == "" && (!isSlot(d) || slotMarkedDir(d, uint64(j.id))) {
			// v2's limit, on the job's cgroup: its count, before
			// it is removed (a slot given back is another job's).
			j.countOOM(d, true)
		}
		for _, d := range j.rec.Cgroup {
			if isSlot(d) && !adoptedSlotGone(d, uint64(j.id)) || !isSlot(d) && !removeCgroupDir(d) {
				gone = false
			}
		}
		if d := j.rec.MemCgroup; gone && d != "" {
			if j.memLimit > 0 {
				j.countOOM(d, false)
			}
			if !removeCgroupDir(d) {
				gone = false
			}
		}
		return gone
	}
	for _, p := range j.rec.Procs {
		if st, err := startTime(p.PID); err == nil && st == p.Start {
			return false
		}
	}
	return true
}

// Strays finds the jobs that a dead runner left running without a record
// that says so: a cgroup of this instance, marked with its job's id (a
// slot) or named by it, that still holds processes, of a job that held
// does not claim and this runner does not run. It returns a record made
// from each such cgroup (Recovered set, no time limit, the runner's own
// user), for the agent to hold the job and Adopt it: the cgroup is the
// truth for what runs, so a journal entry that was damaged or lost never
// frees a core that is still busy.
//
// A slot is taken only when no live runner holds its lock, and stays
// locked until its job is over. A cgroup named by its job's id (cgroup v1,
// or v2 without user xattrs) has no lock, so it is taken only when named
// is true, which the caller sets when no other agent lives. In subreaper
// mode there is no cgroup to find: Strays returns nothing.
func (r *Runner) Strays(held func(fluid.ID) bool, named bool) []Record {
	if r.cg == nil {
		return nil
	}
	ents, err := os.ReadDir(r.cg.parent)
	if err != nil {
		return nil
	}
	var out []Record
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(r.cg.parent, e.Name())
		if _, ok := slotNumber(e.Name()); ok {
			if rec, ok := r.straySlot(dir, held); ok {
				out = append(out, rec)
			}
			continue
		}
		n, err := strconv.ParseUint(e.Name(), 10, 64)
		id := fluid.ID(n)
		if err != nil || !named || held(id) || r.job(id) != nil || len(pidsOf(dir)) == 0 {
			continue
		}
		out = append(out, r.strayRecord(id, dir))
	}
	return out
}

// straySlot returns the record of the slot dir's job if it is a stray,
// keeping the slot locked in r.strays.
func (r *Runner) straySlot(dir string, held func(fluid.ID) bool) (Record, bool) {
	s, ok, err := openSlot(dir)
	if err != nil || !ok {
		return Record{}, false // a live runner's
	}
	var buf [32]byte
	m, err := unix.Getxattr(dir, jobAttr, buf[:])
	n, perr := strconv.ParseUint(string(buf[:max(m, 0)]), 10, 64)
	id := fluid.ID(n)
	// Populated, or unreadable with processes listed: a slot whose
	// emptiness cannot be told is taken as busy, never as free.
	busy := func() bool {
		p := populated(s.events)
		return p == 1 || p == -1 && len(pidsOf(dir)) > 0
	}
	if err != nil || perr != nil || held(id) || !busy() {
		s.close()
		return Record{}, false
	}
	r.mu.Lock()
	if r.closed || r.jobs[id] != nil || r.strays[id] != nil {
		r.mu.Unlock()
		s.close()
		return Record{}, false
	}
	r.strays[id] = s
	r.mu.Unlock()
	return r.strayRecord(id, dir), true
}

func (r *Runner) strayRecord(id fluid.ID, dir string) Record {
	return Record{ID: id, UserID: r.euid, GID: r.egid, Cgroup: []string{dir}, KillGrace: DefaultKillGrace, Recovered: true}
}

// unlockStray releases the lock of a stray's slot. Called with j.mu held
// (or before j is shared).
func (j *job) unlockStray() {
	if j.stray != nil {
		j.stray.close()
		j.stray = nil
	}
}

// Limit gives a stray (an adopted job whose record was made from its
// cgroup, and so knows no time limit) the limit its start request says:
// R's expiration, else R's start time plus the jobspec's duration, and the
// request's kill grace. It returns the record as it now is, for the agent
// to journal, and false when nothing changed: not a stray, a limit
// already, or none to be had (an R without times).
func (r *Runner) Limit(id fluid.ID, s Spec) (Record, bool) {
	js, err := jobspec.Parse(s.Jobspec)
	if err != nil {
		return Record{}, false
	}
	rs, err := rset.Parse(s.R)
	if err != nil || rs.Expiration() <= 0 && rs.StartTime() <= 0 {
		// Without R's times the limit would count from now, or from
		// nothing: better none than a wrong one.
		return Record{}, false
	}
	exp := expiration(js, rs, r.opts.Now())
	j := r.job(id)
	if j == nil || exp.IsZero() {
		return Record{}, false
	}
	j.mu.Lock()
	defer j.unlock()
	if !j.adopted || !j.rec.Recovered || j.done || j.closed || j.limit != nil || !j.rec.Expiration.IsZero() {
		return Record{}, false
	}
	j.rec.Expiration = exp
	if s.KillGrace > 0 {
		j.rec.KillGrace = s.KillGrace
	}
	j.limit = time.AfterFunc(max(0, exp.Sub(r.opts.Now())), j.expire)
	rec := *j.rec
	rec.Cgroup, rec.Procs = slices.Clone(rec.Cgroup), slices.Clone(rec.Procs)
	return rec, true
}

// SetExpiration moves a running job's time limit to at (fluxq update
// duration=): the timer is armed again for the new time, which may have
// passed already (the job is then timed out at once). It returns the
// record as it now is, for the agent to journal, and false for a job the
// runner does not hold, or one that has ended or is being stopped.
func (r *Runner) SetExpiration(id fluid.ID, at time.Time) (Record, bool) {
	j := r.job(id)
	if j == nil || at.IsZero() {
		return Record{}, false
	}
	j.mu.Lock()
	defer j.unlock()
	if j.done || j.closed || j.terminating {
		return Record{}, false
	}
	j.rec.Expiration = at
	if j.limit != nil {
		j.limit.Stop()
		j.limit = nil
	}
	if j.launched || j.adopted {
		// Not yet launched, Launch arms the limit from the record.
		j.limit = time.AfterFunc(max(0, at.Sub(r.opts.Now())), j.expire)
	}
	rec := *j.rec
	rec.Cgroup, rec.Procs = slices.Clone(rec.Cgroup), slices.Clone(rec.Procs)
	return rec, true
}
