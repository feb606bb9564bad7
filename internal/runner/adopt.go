package runner

import (
	"path/filepath"
	"slices"
	"strconv"
	"time"
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
		dir: filepath.Join(r.opts.JobsDir, strconv.FormatUint(uint64(rec.ID), 10))}
	r.mu.Lock()
	if r.closed || r.jobs[rec.ID] != nil {
		r.mu.Unlock()
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
		for _, d := range j.rec.Cgroup {
			if isSlot(d) && !adoptedSlotGone(d, uint64(j.id)) || !isSlot(d) && !removeCgroupDir(d) {
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
