package jobmgr

import (
	"slices"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
)

// schedQueue keeps the jobs in SCHED in allocation order, so that a turn's
// Schedule looks at the few it can send, not at every active job: with
// 1,000 jobs queued, a scan and a sort of them all in each of the 2,000
// turns they take to run was most of the loop's work.
//
// It is derived from the entries, never the other way round: track is
// called after each event, relist when a job in SCHED stops asking, allocs
// follows the alloc requests outstanding, and rebuild derives them anew
// when a failed turn puts the entries back.
type schedQueue struct {
	in map[fluid.ID]*entry // the jobs in SCHED
	// list holds every job of in that asks for nothing (alloc idle), and
	// jobs that have left SCHED or asked since (dropped as waiting walks
	// past them); in allocation order unless unsorted. A job with its
	// request outstanding is not walked again until it stops asking: in
	// unlimited mode every queued job has one, and walking them at each
	// turn was 15% of a replay of lublin_256 under fcfs (3,900 queued).
	list     []*entry
	unsorted bool
	// allocs are the jobs with a sched.alloc outstanding (alloc.asking):
	// at most the mode's limit in limited mode.
	allocs map[fluid.ID]*entry
}

func newSchedQueue() schedQueue {
	return schedQueue{in: map[fluid.ID]*entry{}, allocs: map[fluid.ID]*entry{}}
}

// track follows a job whose state or priority may have changed.
func (m *Manager) track(e *entry) {
	q := &m.queue
	if e.j().State != job.Sched {
		delete(q.in, e.id())
		return
	}
	if _, ok := q.in[e.id()]; ok {
		// Its priority may have changed.
		q.unsorted = true
		return
	}
	q.in[e.id()] = e
	q.add(e)
}

// relist follows a job in SCHED whose request is done (CANCEL, DENY, a
// refused SUCCESS, a lost scheduler): it may be offered again.
func (q *schedQueue) relist(e *entry) {
	if q.in[e.id()] == e {
		q.add(e)
	}
}

// add puts e at the end of list, unless it is there.
func (q *schedQueue) add(e *entry) {
	if e.listed {
		return
	}
	if n := len(q.list); n > 0 && order(q.list[n-1], e) > 0 {
		q.unsorted = true
	}
	e.listed = true
	q.list = append(q.list, e)
}

// rebuild derives the queue from the active jobs.
func (q *schedQueue) rebuild(active map[fluid.ID]*entry) {
	clear(q.in)
	clear(q.allocs)
	// Restore put the entries' listed marks back as they were: the list
	// is derived anew at the next waiting, marks and all.
	for _, e := range q.list {
		e.listed = false
	}
	clear(q.list)
	q.list = q.list[:0]
	for id, e := range active {
		e.listed = false
		if e.j().State == job.Sched {
			q.in[id] = e
		}
		if e.alloc.asking() {
			q.allocs[id] = e
		}
	}
	q.unsorted = true
}

// waiting lists the jobs that may be offered to the scheduler, in
// allocation order: in SCHED, no request outstanding, not held (priority
// 0), their queue scheduling. keep >= 0 stops at the first keep.
func (m *Manager) waiting(keep int) []*entry {
	q := &m.queue
	if q.unsorted {
		for _, e := range q.list {
			e.listed = false
		}
		clear(q.list)
		q.list = q.list[:0]
		for _, e := range q.in {
			if e.alloc == allocIdle {
				e.listed = true
				q.list = append(q.list, e)
			}
		}
		slices.SortFunc(q.list, order)
		q.unsorted = false
	}
	var out []*entry
	w, i := 0, 0
	for ; i < len(q.list) && (keep < 0 || len(out) < keep); i++ {
		e := q.list[i]
		if q.in[e.id()] != e || e.alloc != allocIdle {
			// It left SCHED, or asked: dropped here (relist or track
			// puts it back).
			e.listed = false
			continue
		}
		q.list[w] = e
		w++
		if e.j().Priority > 0 && m.scheduling(queueOf(e)) {
			out = append(out, e)
		}
	}
	n := copy(q.list[w:], q.list[i:])
	clear(q.list[w+n:])
	q.list = q.list[:w+n]
	return out
}

// order is before as a comparison.
func order(a, b *entry) int {
	switch {
	case before(a, b):
		return -1
	case before(b, a):
		return 1
	}
	return 0
}
