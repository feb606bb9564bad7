package jobmgr

import (
	"cmp"
	"slices"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	ops "github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// may reports whether uid may change the job: its owner or the instance
// owner (checked on the caller's real uid by whoever calls us).
func (m *Manager) may(uid uint32, j *job.Job) bool { return uid == j.UserID || uid == m.cfg.Owner }

// ActiveOf is how many active jobs uid has. A submission is checked
// against [access] guest-max-active-jobs with it, so it is a count kept
// as jobs become active and inactive, not a walk over every job.
func (m *Manager) ActiveOf(uid uint32) int { return m.perUser[uid] }

// countActive adds d to uid's active jobs; a user with none has no entry,
// so the map holds only the users with active jobs.
func (m *Manager) countActive(uid uint32, d int) {
	if n := m.perUser[uid] + d; n > 0 {
		if m.perUser == nil {
			m.perUser = map[uint32]int{}
		}
		m.perUser[uid] = n
	} else {
		delete(m.perUser, uid)
	}
}

// find returns the active job, or the reason it cannot be changed.
func (m *Manager) find(tx *store.Tx, id fluid.ID) (*entry, error) {
	if e, ok := m.lookup(id); ok {
		return e, nil
	}
	if tx.HasJob(uint64(id)) {
		return nil, api.ErrInactive
	}
	return nil, ops.ErrUnknownJob
}

// Cancel raises a cancel exception on a job for uid, with an optional note
// (flux cancel).
func (m *Manager) Cancel(tx *store.Tx, id fluid.ID, uid uint32, note string) error {
	return m.Raise(tx, id, uid, "cancel", 0, note)
}

// Selection is a job Selected chose: its id and owner.
type Selection struct {
	ID     fluid.ID
	UserID uint32
}

// Selected lists the active jobs want takes, in id (submit) order: what
// a cancel of many selects, from memory (api.CancelAll, flux-core's
// raiseall). want sees as much of each job as a query reads (its id,
// owner, state, name and queue, as its summary would say them), in one
// summary reused for every job. Of an Offline manager, a job's state is
// the one it was taken up in (asStored), not the one Load moved it to in
// this transaction: the caller chose from what the store said.
func (m *Manager) Selected(want func(*api.JobSummary) bool) []Selection {
	var out []Selection
	var s api.JobSummary
	for _, e := range m.active {
		j := e.j()
		s.ID, s.UserID, s.State, s.Name, s.Queue = j.ID, j.UserID, j.State, ops.JobName(e.rec), e.rec.Spec.Queue
		if st, ok := m.asStored[j.ID]; ok {
			s.State = st
		}
		if want(&s) {
			out = append(out, Selection{ID: j.ID, UserID: j.UserID})
		}
	}
	slices.SortFunc(out, func(a, b Selection) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// ShellMayRun reports whether the processes of active job id may be
// running, as the manager holds it: a shell was started on resources it
// has not released (of an Offline manager, a job Load found in RUN or
// CLEANUP, allocated and not released: execDetached). The direct path
// asks it before a cancel, to have the exec agents stop those processes
// once the cancel is committed.
func (m *Manager) ShellMayRun(id fluid.ID) bool {
	e := m.active[id]
	return e != nil && e.exec.shellMayRun()
}

// Raise posts an exception on a job for uid; severity 0 ends it.
func (m *Manager) Raise(tx *store.Tx, id fluid.ID, uid uint32, typ string, severity int, note string) error {
	e, err := m.find(tx, id)
	if err != nil {
		return err
	}
	if !m.may(uid, e.j()) {
		return api.ErrPermission
	}
	ctx := map[string]any{"type": typ, "severity": severity, "note": note}
	if uid != m.cfg.Owner {
		ctx["userid"] = uid
	}
	if err := m.post(tx, e, job.EventException, ctx); err != nil {
		return err
	}
	return m.advance(tx, e)
}

// Urgency changes a pending job's urgency and, from it, its priority;
// the scheduler hears of the new priority (sched.prioritize), and a job
// newly held is taken back from it (sched.cancel).
func (m *Manager) Urgency(tx *store.Tx, id fluid.ID, uid uint32, urgency int) error {
	e, err := m.find(tx, id)
	if err != nil {
		return err
	}
	j := e.j()
	if !m.may(uid, j) {
		return api.ErrPermission
	}
	if urgency > job.UrgencyGuestMax && uid != m.cfg.Owner {
		return api.ErrGuestUrgency
	}
	if j.State&(job.Pending|job.New) == 0 {
		return api.ErrUrgencyRunning
	}
	return m.setUrgency(tx, e, uid, urgency)
}

// setUrgency posts a checked urgency change, and the priority that
// follows from it (Urgency, and the urgency alias of Update).
func (m *Manager) setUrgency(tx *store.Tx, e *entry, uid uint32, urgency int) error {
	j := e.j()
	if err := m.post(tx, e, job.EventUrgency, map[string]any{"urgency": urgency, "userid": uid}); err != nil {
		return err
	}
	if j.State != job.Sched {
		return nil // the priority event comes with the PRIORITY state
	}
	p := job.PriorityOf(urgency)
	if p == j.Priority {
		return nil
	}
	if err := m.post(tx, e, job.EventPriority, map[string]any{"priority": p}); err != nil {
		return err
	}
	m.dirty = true
	if m.sched.phase == schedReady {
		if p == job.PriorityMin {
			m.allocGo(e, allocSendCancel) // while asking, unless one was sent
		} else {
			m.allocGo(e, allocSendPrioritize) // while asking
		}
	}
	return nil
}
