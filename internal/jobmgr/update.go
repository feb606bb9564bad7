package jobmgr

import (
	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	ops "github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// ErrUpdateAllocated refuses an update of a job that holds resources:
// what it asked for is what it was given.
var ErrUpdateAllocated = api.Errorf(api.CodeBadRequest, "a job cannot be updated once resources are allocated")

// Update changes an active job's jobspec for uid (flux update): every key
// or none, checked as a submission is (ops.UpdateJobspec), the jobspec
// stored as updated with one jobspec-update event, and the urgency alias
// applied as fluxq urgency applies it. A job waiting on the scheduler is
// asked for again: its outstanding alloc request is cancelled, and once
// the scheduler answers CANCEL the job is offered with its new jobspec
// (RFC 27). With dryRun nothing changes and the result is what would be
// stored.
func (m *Manager) Update(tx *store.Tx, id fluid.ID, uid uint32, updates []api.JobUpdate, dryRun bool) (api.UpdateResult, error) {
	e, err := m.find(tx, id)
	if err != nil {
		return api.UpdateResult{}, err
	}
	j := e.j()
	if !m.may(uid, j) {
		return api.UpdateResult{}, api.ErrPermission
	}
	if j.State&(job.Pending|job.New) == 0 {
		return api.UpdateResult{}, ErrUpdateAllocated
	}
	raw, err := ops.RawJobspec(tx, e.rec)
	if err != nil {
		return api.UpdateResult{}, err
	}
	up, err := ops.UpdateJobspec(tx, raw, ops.UpdateRequest{
		Updates: updates, UserID: j.UserID, Owner: uid == m.cfg.Owner, Queue: e.rec.Spec.Queue,
	})
	if err != nil {
		return api.UpdateResult{}, err
	}
	if up.Urgency != nil && *up.Urgency > job.UrgencyGuestMax && uid != m.cfg.Owner {
		return api.UpdateResult{}, api.ErrGuestUrgency
	}
	res := api.UpdateResult{Jobspec: up.Jobspec, Updated: up.Context}
	if res.Jobspec == nil {
		res.Jobspec = raw // the urgency alone: the jobspec stays
	}
	if dryRun {
		return res, nil
	}
	if len(up.Context) > 0 {
		if err := tx.PutJobValue(uint64(id), store.JobJobspec, up.Jobspec); err != nil {
			return api.UpdateResult{}, err
		}
		m.touch(e) // before the record changes: a failed turn puts it back
		e.rec.Spec = up.Spec
		if err := m.post(tx, e, job.EventJobspecUpdate, up.Context); err != nil {
			return api.UpdateResult{}, err
		}
		if j.State == job.Sched {
			m.dirty = true
			if m.sched.phase == schedReady && e.alloc.asking() {
				// The scheduler holds the old request: take it back, and
				// the CANCEL brings the job back to be offered anew.
				m.allocGo(e, allocSendCancel) // unless one was sent
			}
		}
	}
	if up.Urgency != nil {
		if err := m.setUrgency(tx, e, uid, *up.Urgency); err != nil {
			return api.UpdateResult{}, err
		}
	}
	return res, nil
}
