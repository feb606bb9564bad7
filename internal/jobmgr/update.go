package jobmgr

import (
	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	ops "github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// ErrUpdateAllocated refuses an update of a job past RUN (in CLEANUP): it
// is ending.
var ErrUpdateAllocated = api.Errorf(api.CodeBadRequest, "a job cannot be updated once resources are allocated")

// Update changes an active job's jobspec for uid (flux update): every key
// or none, checked as a submission is (ops.UpdateJobspec), the jobspec
// stored as updated with one jobspec-update event, and the urgency alias
// applied as fluxq urgency applies it. A job waiting on the scheduler is
// asked for again: its outstanding alloc request is cancelled, and once
// the scheduler answers CANCEL the job is offered with its new jobspec
// (RFC 27). Of a running job only the duration changes (updateRunning).
// With dryRun nothing changes and the result is what would be stored.
func (m *Manager) Update(tx *store.Tx, id fluid.ID, uid uint32, updates []api.JobUpdate, dryRun bool) (api.UpdateResult, error) {
	e, err := m.find(tx, id)
	if err != nil {
		return api.UpdateResult{}, err
	}
	j := e.j()
	if !m.may(uid, j) {
		return api.UpdateResult{}, api.ErrPermission
	}
	running := j.State == job.Run && j.Allocated && e.rec.R != nil
	if j.State&(job.Pending|job.New) == 0 && !running {
		return api.UpdateResult{}, ErrUpdateAllocated
	}
	raw, err := ops.RawJobspec(tx, e.rec)
	if err != nil {
		return api.UpdateResult{}, err
	}
	up, err := ops.UpdateJobspec(tx, raw, ops.UpdateRequest{
		Updates: updates, UserID: j.UserID, Owner: uid == m.cfg.Owner, Queue: e.rec.Spec.Queue, Running: running,
	})
	if err != nil {
		return api.UpdateResult{}, err
	}
	if running {
		return m.updateRunning(tx, e, uid, raw, up, dryRun)
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

// updateRunning changes a running job's duration, the one key a running
// job may change (flux update): the instance owner may raise it, the
// job's owner lower it. R's expiration moves with it (R's start plus the
// new duration), stored with a resource-update event beside the
// jobspec-update, and the exec service is told, so that the exec agent
// times the job out at the new limit. The scheduler keeps planning with
// the R it granted (RFC 27 has no message for a changed expiration): its
// estimates for other jobs may be off until the job ends, its
// allocations never, as it allocates only what is free.
func (m *Manager) updateRunning(tx *store.Tx, e *entry, uid uint32, raw []byte, up *ops.Updated, dryRun bool) (api.UpdateResult, error) {
	if up.Urgency != nil {
		return api.UpdateResult{}, api.ErrUrgencyRunning
	}
	d := up.Spec.Duration
	switch {
	case d == 0:
		return api.UpdateResult{}, errRunningUnlimited
	case d > e.rec.Spec.Duration && e.rec.Spec.Duration > 0 && uid != m.cfg.Owner:
		return api.UpdateResult{}, errRaiseRunning
	case m.cfg.Offline:
		return api.UpdateResult{}, errRunningOffline
	}
	start := e.rec.R.StartTime()
	if start <= 0 {
		start = e.j().TStart
	}
	exp := start + d
	r := e.rec.R.WithTimes(e.rec.R.StartTime(), exp)
	res := api.UpdateResult{Jobspec: up.Jobspec, Updated: up.Context}
	if dryRun {
		return res, nil
	}
	if err := tx.PutJobValue(uint64(e.id()), store.JobJobspec, up.Jobspec); err != nil {
		return api.UpdateResult{}, err
	}
	m.touch(e)
	if err := ops.PutR(tx, e.rec, r); err != nil {
		return api.UpdateResult{}, err
	}
	e.rec.Spec = up.Spec
	if err := m.post(tx, e, job.EventJobspecUpdate, up.Context); err != nil {
		return api.UpdateResult{}, err
	}
	if err := m.post(tx, e, job.EventResourceUpdate, map[string]any{"expiration": exp}); err != nil {
		return api.UpdateResult{}, err
	}
	if m.exec.up {
		m.sendExec(execproto.MethodExpiration, execproto.Expiration{ID: e.id(), Expiration: exp})
	}
	return res, nil
}

// The refusals of a running job's duration update.
var (
	errRaiseRunning     = api.Errorf(api.CodePermission, "permission denied: only the instance owner may raise the duration of a running job")
	errRunningUnlimited = api.Errorf(api.CodeBadRequest, "a running job's duration cannot be made unlimited")
	errRunningOffline   = api.Errorf(api.CodeNeedsInstance, "the duration of a running job can only be changed while fluxsched runs")
)
