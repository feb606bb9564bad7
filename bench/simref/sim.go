package main

import (
	"errors"
	"fmt"
	"sort"
)

// job is one trace job on its way through the simulated machine; times are
// relative to time zero.
type job struct {
	pos    int
	id     int64
	submit int64
	run    int64
	req    int64
	cores  int64
	denied bool

	started bool
	start   int64
	end     int64 // start + min(run, req): the job is killed at its requested time
}

// estEnd is when the scheduler believes the job ends: it knows only the
// requested time, never the run time.
func (j *job) estEnd() int64 { return j.start + j.req }

// hold is how long a job occupies its cores in an availability profile:
// a job with requested time 0 still holds its cores at the instant it
// starts, so it must not share them with another job placed at that instant.
func (j *job) hold() int64 { return max(j.req, 1) }

// Policy names accepted by --policy.
const (
	policyFCFS         = "fcfs"
	policyEASY         = "easy"
	policyHybrid       = "hybrid"
	policyConservative = "conservative"
)

// unbounded is the reservation depth of conservative: every job that cannot
// start now gets a reservation.
const unbounded = -1

// machine is the simulated state: the cores, the queue and the running jobs.
type machine struct {
	total   int64
	free    int64
	now     int64
	queue   []*job // in queue order: submit, job number, trace position
	running []*job
	policy  string
	depth   int // reservation depth for hybrid (and unbounded for conservative)
}

// simulate replays the jobs (not skipped, in trace order, times relative to
// time zero) on a machine of total cores and fills in their start and end.
func simulate(jobs []*job, total int64, policy string, depth int) error {
	m := &machine{total: total, free: total, policy: policy, depth: depth}
	switch policy {
	case policyFCFS, policyEASY, policyHybrid:
	case policyConservative:
		m.depth = unbounded
	default:
		return fmt.Errorf("unknown policy %q (want fcfs, easy, hybrid or conservative)", policy)
	}
	if policy == policyHybrid && depth < 0 {
		return fmt.Errorf("reservation depth %d is negative", depth)
	}

	arrivals := make([]*job, len(jobs))
	copy(arrivals, jobs)
	sort.SliceStable(arrivals, func(a, b int) bool { return arrivals[a].submit < arrivals[b].submit })

	next := 0
	for next < len(arrivals) || len(m.running) > 0 {
		t, ok := m.nextEnd()
		if next < len(arrivals) && (!ok || arrivals[next].submit < t) {
			t = arrivals[next].submit
		}
		m.now = t
		// docs/simulation.md: at one instant, ends first, then submissions, then
		// one pass.
		m.freeEnded()
		var batch []*job
		for next < len(arrivals) && arrivals[next].submit == t {
			if !arrivals[next].denied {
				batch = append(batch, arrivals[next])
			}
			next++
		}
		sort.SliceStable(batch, func(a, b int) bool { return batch[a].id < batch[b].id })
		m.queue = append(m.queue, batch...)
		// A job with run time 0 ends as it starts, and its freed cores earn
		// another pass at the same instant.
		for m.pass() {
			m.freeEnded()
		}
	}
	if len(m.queue) > 0 {
		return errors.New("internal error: jobs left in the queue on an idle machine")
	}
	return nil
}

// nextEnd returns the earliest actual end among the running jobs.
func (m *machine) nextEnd() (int64, bool) {
	if len(m.running) == 0 {
		return 0, false
	}
	t := m.running[0].end
	for _, j := range m.running[1:] {
		t = min(t, j.end)
	}
	return t, true
}

// freeEnded returns the cores of every running job that has ended by now.
func (m *machine) freeEnded() {
	kept := m.running[:0]
	for _, j := range m.running {
		if j.end <= m.now {
			m.free += j.cores
		} else {
			kept = append(kept, j)
		}
	}
	clear(m.running[len(kept):])
	m.running = kept
}

// startJob starts a queued job now; the caller removes it from the queue.
func (m *machine) startJob(j *job) {
	j.started = true
	j.start = m.now
	j.end = m.now + min(j.run, j.req)
	m.free -= j.cores
	m.running = append(m.running, j)
}

// pass makes one scheduling pass and reports whether a job that ends at
// once (run time 0) was started.
func (m *machine) pass() bool {
	var started []*job
	switch m.policy {
	case policyFCFS:
		started = m.passFCFS()
	case policyEASY:
		started = m.passEASY()
	default:
		started = m.passProfile()
	}
	if len(started) == 0 {
		return false
	}
	kept := m.queue[:0]
	for _, j := range m.queue {
		if !j.started {
			kept = append(kept, j)
		}
	}
	clear(m.queue[len(kept):])
	m.queue = kept
	for _, j := range started {
		if j.end == m.now {
			return true
		}
	}
	return false
}

// passFCFS starts jobs from the head of the queue while they fit and stops
// at the first that does not.
func (m *machine) passFCFS() []*job {
	var started []*job
	for _, j := range m.queue {
		if j.cores > m.free {
			break
		}
		m.startJob(j)
		started = append(started, j)
	}
	return started
}

// passEASY is EASY backfilling worded as docs/simulation.md words it: the head's
// shadow time and extra cores, then one scan of the rest of the queue.
func (m *machine) passEASY() []*job {
	var started []*job
	i := 0
	for i < len(m.queue) && m.queue[i].cores <= m.free {
		m.startJob(m.queue[i])
		started = append(started, m.queue[i])
		i++
	}
	if i == len(m.queue) {
		return started
	}
	head := m.queue[i]
	shadow, extra := m.shadow(head.cores)
	for _, j := range m.queue[i+1:] {
		if j.cores > m.free {
			continue
		}
		switch {
		case m.now+j.req <= shadow:
			// Tried first: a job done by the shadow time takes nothing
			// from the extra cores.
		case j.cores <= extra:
			extra -= j.cores
		default:
			continue
		}
		m.startJob(j)
		started = append(started, j)
	}
	return started
}

// shadow returns the earliest time at which need cores are free, counting
// each running job as ending at start + requested time, and the cores free
// then beyond need.
func (m *machine) shadow(need int64) (shadow, extra int64) {
	byEnd := make([]*job, len(m.running))
	copy(byEnd, m.running)
	sort.Slice(byEnd, func(a, b int) bool { return byEnd[a].estEnd() < byEnd[b].estEnd() })
	avail := m.free
	shadow = m.now
	for _, j := range byEnd {
		if avail >= need {
			break
		}
		avail += j.cores
		shadow = max(shadow, j.estEnd())
	}
	// The extra cores count every running job whose estimated end is at or
	// before the shadow time, including those that end at the same second
	// as the one that made the head fit.
	avail = m.free
	for _, j := range byEnd {
		if j.estEnd() <= shadow {
			avail += j.cores
		}
	}
	return shadow, avail - need
}

// passProfile is conservative (depth unbounded) and hybrid backfilling:
// walk the queue in order over an availability profile of the running jobs
// and the reservations made so far; a job that fits now for its whole
// requested time starts, the first depth jobs that do not get the earliest
// start where they fit, the others are passed over.
func (m *machine) passProfile() []*job {
	p := newProfile(m.now, m.total, m.running)
	var started []*job
	reserved := 0
	for _, j := range m.queue {
		if p.fitsAt(0, j.cores, j.hold()) {
			p.take(m.now, j.cores, j.hold())
			m.startJob(j)
			started = append(started, j)
			continue
		}
		if m.depth != unbounded && reserved >= m.depth {
			continue
		}
		reserved++
		p.take(p.earliest(j.cores, j.hold()), j.cores, j.hold())
	}
	return started
}
