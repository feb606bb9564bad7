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
// called after each event, allocs follows the alloc requests outstanding, and rebuild
// derives both anew when a failed turn puts the entries back.
type schedQueue struct {
	in map[fluid.ID]*entry // the jobs in SCHED
	// list holds every job of in, and jobs that have left SCHED since
	// (dropped as waiting walks past them); in allocation order unless
	// unsorted.
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
	if n := len(q.list); n > 0 && order(q.list[n-1], e) > 0 {
		q.unsorted = true
	}
	q.list = append(q.list, e)
}

// rebuild derives the queue from the active jobs.
func (q *schedQueue) rebuild(active map[fluid.ID]*entry) {
	clear(q.in)
	clear(q.allocs)
	for id, e := range active {
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
		clear(q.list)
		q.list = q.list[:0]
		for _, e := range q.in {
			q.list = append(q.list, e)
		}
		slices.SortFunc(q.list, order)
		q.unsorted = false
	}
	var out []*entry
	w, i := 0, 0
	for ; i < len(q.list) && (keep < 0 || len(out) < keep); i++ {
		e := q.list[i]
		if q.in[e.id()] != e {
			continue // it left SCHED: dropped here
		}
		q.list[w] = e
		w++
		if e.allocMay(allocSendAlloc) && e.j().Priority > 0 && m.scheduling(queueOf(e)) {
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
