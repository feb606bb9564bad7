package jobmgr

import (
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/queue"
)

// queueOf is the queue a job was admitted to ("" is the anonymous one).
func queueOf(e *entry) string { return e.rec.Spec.Queue }

// SetQueues tells the manager the queues' configuration and states. A
// queue that is not scheduling gets no new alloc requests, and its
// outstanding ones are canceled (RFC 33: "When scheduling is stopped, any
// pending alloc requests to the scheduler SHALL be canceled"); its jobs
// stay in SCHED, and running jobs are untouched.
func (m *Manager) SetQueues(set *queue.Set, states map[string]queue.State) {
	m.queues = set
	m.stopped = map[string]bool{}
	if set != nil {
		for _, name := range set.Names() {
			if started, _ := set.Scheduling(states, name); !started {
				m.stopped[name] = true
			}
		}
	}
	m.dirty = true
	if m.sched.phase != schedReady {
		return
	}
	for _, e := range m.sortedActive() {
		if e.alloc.asking() && !m.scheduling(queueOf(e)) {
			m.allocGo(e, allocSendCancel) // unless one was sent
		}
	}
}

// scheduling reports whether jobs of a queue may be offered to the
// scheduler. Without a queue configuration every job may; a job whose
// queue has left the configuration waits for it to come back, as in Flux.
func (m *Manager) scheduling(name string) bool {
	if m.queues == nil {
		return true
	}
	if _, ok := m.queues.Queue(name); !ok {
		return false
	}
	return !m.stopped[name]
}

// QueueCounts are a queue's jobs as flux queue status -v counts them.
type QueueCounts struct {
	Queued  int `json:"queued"`  // in SCHED, no alloc request outstanding
	Pending int `json:"pending"` // alloc requests pending to the scheduler
	Running int `json:"running"` // in RUN or CLEANUP
	Active  int `json:"active"`  // not yet INACTIVE
	Waiting int `json:"waiting"` // pending states: DEPEND, PRIORITY, SCHED
}

// Add counts one active job in state st; allocPending is whether its
// alloc request is outstanding (only the loop knows).
func (c *QueueCounts) Add(st job.State, allocPending bool) {
	c.Active++
	switch {
	case allocPending:
		c.Pending++
	case st == job.Sched:
		c.Queued++
	}
	if st&(job.Run|job.Cleanup) != 0 {
		c.Running++
	}
	if st&(job.Pending|job.New) != 0 {
		c.Waiting++
	}
}

// Counts counts the active jobs of the named queues (all when names is
// nil).
func (m *Manager) Counts(names []string) QueueCounts {
	var want map[string]bool
	if names != nil {
		want = make(map[string]bool, len(names))
		for _, n := range names {
			want[n] = true
		}
	}
	var c QueueCounts
	for _, e := range m.active {
		if want != nil && !want[queueOf(e)] {
			continue
		}
		c.Add(e.j().State, e.alloc.asking())
	}
	return c
}
