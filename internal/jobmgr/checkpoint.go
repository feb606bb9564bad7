package jobmgr

import (
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/queue"
	"github.com/fluxq/fluxq/internal/rset"
	ops "github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// Checkpoint is the manager's memory as of the last committed turn. A turn
// changes memory and the store together; when its commit fails, the store
// keeps nothing of it, and Restore puts memory back to match, so the turn
// is refused as a whole and its inputs can be handled again later.
//
// A turn touches few of the jobs, so Save records only the manager's own
// fields, and an active job is copied the first time the turn changes it
// (touch): its entry, record and job, by value. That is enough because
// what changes in them is replaced, never edited in place: job.Job.Apply
// copies the job before applying an event, slices and maps in a record
// are cloned before they change, and the manager's own sets (down,
// queues, stopped, inv) are swapped for new ones. Reservations are edited
// in place; they are reloaded from the store, which holds them as of the
// last commit (every change is saved in the turn that makes it).
type Checkpoint struct {
	turn    uint64
	entries savedEntries            // active jobs as they were before the turn first changed them
	added   []fluid.ID              // jobs that became active in the turn
	waiters map[fluid.ID]savedWaits // waiter lists as they were before the turn changed them
	sched   schedLink
	exec    execLink
	dirty   bool
	down    idset.Set
	wake    float64
	queues  *queue.Set
	stopped map[string]bool
	inv     *rset.R

	// The inactive index before the turn: its length (the turn only
	// appends to it), and the jobs the turn marked purged.
	inactiveLen int
	purged      []fluid.ID

	full *fullCopy // tests: everything, to check Restore against
}

type savedEntry struct {
	e   *entry
	v   entry
	rec ops.Record
	job job.Job
}

// savedEntries is a turn's saved entries in blocks of a fixed size. A
// savedEntry is ~600 bytes, and a turn that touches 100,000 jobs (a
// cancel of them all) grew one slice by doubling, copying 120 MB on the
// way; and the loop's checkpoint, reused every turn, kept that slice's
// 60 MB for as long as it ran. Blocks are never copied, and reset keeps
// only the first (what most turns need).
type savedEntries struct {
	blocks [][]savedEntry
	n      int
}

const savedBlock = 1024

func (s *savedEntries) add(v savedEntry) {
	if s.n == len(s.blocks)*savedBlock {
		s.blocks = append(s.blocks, make([]savedEntry, 0, savedBlock))
	}
	b := &s.blocks[s.n/savedBlock]
	*b = append(*b, v)
	s.n++
}

// each calls fn with every saved entry, in the order they were saved.
func (s *savedEntries) each(fn func(*savedEntry)) {
	for _, b := range s.blocks {
		for i := range b {
			fn(&b[i])
		}
	}
}

// reset empties the list for the next turn, dropping what it points to.
func (s *savedEntries) reset() {
	if len(s.blocks) > 0 {
		clear(s.blocks[0])
		s.blocks = append(s.blocks[:0], s.blocks[0][:0])
	}
	s.n = 0
}

type savedWaits struct {
	had bool
	ids []fluid.ID
}

// Save starts a turn: it records the manager's own fields into c, reusing
// c's space, and journals into c what the turn changes. The loop calls it
// before every turn.
func (m *Manager) Save(c *Checkpoint) {
	m.turn++
	c.turn = m.turn
	c.entries.reset()
	c.added = c.added[:0]
	if c.waiters == nil {
		c.waiters = map[fluid.ID]savedWaits{}
	}
	clear(c.waiters)
	c.sched, c.exec, c.dirty, c.down, c.wake = m.sched, m.exec, m.dirty, m.down, m.wake
	c.queues, c.stopped, c.inv = m.queues, m.stopped, m.inv
	// The last turn committed: what it purged can go from memory now.
	m.inactive.compact()
	c.inactiveLen = len(m.inactive.list)
	c.purged = c.purged[:0]
	c.full = nil
	if verifyRestore {
		m.checkHeld()
		m.checkListed()
		c.full = m.copyAll()
	}
	m.cp = c
}

// touch copies an active job before the turn first changes it.
func (m *Manager) touch(e *entry) {
	c := m.cp
	if c == nil || e.saved == c.turn {
		return
	}
	c.entries.add(savedEntry{e: e, v: *e, rec: *e.rec, job: *e.rec.Job})
	e.saved = c.turn
}

// activate makes a job active, noting it for Restore.
func (m *Manager) activate(e *entry) {
	m.active[e.id()] = e
	m.countActive(e.j().UserID, 1)
	m.track(e)
	if m.cp != nil {
		m.cp.added = append(m.cp.added, e.id())
		e.saved = m.cp.turn // nothing to put back: it goes
	}
}

// touchWaiters copies the list of jobs waiting on id before it changes.
func (m *Manager) touchWaiters(id fluid.ID) {
	c := m.cp
	if c == nil {
		return
	}
	if _, ok := c.waiters[id]; ok {
		return
	}
	ids, had := m.waiters[id]
	c.waiters[id] = savedWaits{had: had, ids: append([]fluid.ID(nil), ids...)}
}

// Restore puts the manager's memory back to checkpoint c, taken before a
// turn whose commit failed, and drops what that turn would have sent. tx
// reads the store as of the last commit.
func (m *Manager) Restore(tx *store.Tx, c *Checkpoint) error {
	for _, id := range c.added {
		if e, ok := m.active[id]; ok {
			delete(m.active, id)
			m.countActive(e.j().UserID, -1)
		}
	}
	c.entries.each(func(s *savedEntry) {
		*s.e = s.v
		*s.e.rec = s.rec
		*s.e.rec.Job = s.job
		if _, ok := m.active[s.e.id()]; !ok {
			m.countActive(s.job.UserID, 1) // it ended in the turn
		}
		m.active[s.e.id()] = s.e
	})
	for id, w := range c.waiters {
		if w.had {
			m.waiters[id] = w.ids
		} else {
			delete(m.waiters, id)
		}
	}
	m.queue.rebuild(m.active)
	m.rebuildHeld()
	m.sched, m.exec, m.dirty, m.down, m.wake = c.sched, c.exec, c.dirty, c.down, c.wake
	m.queues, m.stopped, m.inv = c.queues, c.stopped, c.inv
	m.inactive.list = m.inactive.list[:c.inactiveLen]
	for _, id := range c.purged {
		delete(m.inactive.gone, id)
	}
	m.out = Outbox{}
	clear(m.stale) // the store kept the summaries of the last commit
	m.staleIDs = m.staleIDs[:0]
	m.cp = nil
	if c.full != nil {
		c.full.check(m)
	}
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
