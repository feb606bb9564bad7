package jobmgr

import (
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/ops"
	"github.com/fluxq/fluxq/internal/queue"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/store"
)

// Checkpoint is the manager's memory as of the last committed turn. A turn
// changes memory and the store together; when its commit fails, the store
// keeps nothing of it, and Restore puts memory back to match, so the turn
// is refused as a whole and its inputs can be handled again later.
//
// Saving is cheap because what a turn changes is replaced, never edited in
// place: job.Job.Apply copies the job before applying an event, slices and
// maps in a job record are cloned before they change, and the manager's
// own sets (down, queues, stopped, inv) are swapped for new ones. So a
// copy of each active entry, its record and its job, by value, is enough.
// Reservations are edited in place; they are reloaded from the store,
// which holds them as of the last commit (every change is saved in the
// turn that makes it).
type Checkpoint struct {
	entries []savedEntry
	sched   schedLink
	exec    execLink
	dirty   bool
	down    idset.Set
	waiters map[fluid.ID][]fluid.ID
	wake    float64
	queues  *queue.Set
	stopped map[string]bool
	inv     *rset.R
}

type savedEntry struct {
	e   *entry
	v   entry
	rec ops.Record
	job job.Job
}

// Save records the manager's memory into c, reusing c's space: the loop
// calls it before every turn.
func (m *Manager) Save(c *Checkpoint) {
	c.entries = c.entries[:0]
	for _, e := range m.active {
		c.entries = append(c.entries, savedEntry{e: e, v: *e, rec: *e.rec, job: *e.rec.Job})
	}
	c.sched, c.exec, c.dirty, c.down, c.wake = m.sched, m.exec, m.dirty, m.down, m.wake
	c.queues, c.stopped, c.inv = m.queues, m.stopped, m.inv
	clear(c.waiters)
	if c.waiters == nil {
		c.waiters = make(map[fluid.ID][]fluid.ID, len(m.waiters))
	}
	for id, w := range m.waiters {
		c.waiters[id] = append([]fluid.ID(nil), w...)
	}
}

// Restore puts the manager's memory back to checkpoint c, taken before a
// turn whose commit failed, and drops what that turn would have sent. tx
// reads the store as of the last commit.
func (m *Manager) Restore(tx *store.Tx, c *Checkpoint) error {
	clear(m.active)
	for i := range c.entries {
		s := &c.entries[i]
		*s.e = s.v
		*s.e.rec = s.rec
		*s.e.rec.Job = s.job
		m.active[s.e.id()] = s.e
	}
	m.sched, m.exec, m.dirty, m.down, m.wake = c.sched, c.exec, c.dirty, c.down, c.wake
	m.queues, m.stopped, m.inv = c.queues, c.stopped, c.inv
	m.waiters = make(map[fluid.ID][]fluid.ID, len(c.waiters))
	for id, w := range c.waiters {
		m.waiters[id] = append([]fluid.ID(nil), w...)
	}
	m.out = Outbox{}
	// A manager built without the store's reservations (tests) has none
	// to reload.
	if m.cfg.Reservations == nil || tx.Inventory() == nil {
		return nil
	}
	res, err := ops.LoadReservations(tx, m.res.Support)
	if err != nil {
		return err
	}
	m.res = res
	return nil
}
