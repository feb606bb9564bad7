package jobmgr

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	ops "github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// Retention is Flux's [job-manager] inactive-age-limit and
// inactive-num-limit: inactive jobs older than AgeLimit seconds (since
// they became inactive), and the oldest beyond the NumLimit most recent,
// are purged as the instance runs. A negative limit is no limit.
type Retention struct {
	AgeLimit float64
	NumLimit int
}

// NoRetention keeps every inactive job, as Flux does when neither key is
// set.
var NoRetention = Retention{AgeLimit: -1, NumLimit: -1}

// On reports whether either limit is set.
func (r Retention) On() bool { return r.AgeLimit >= 0 || r.NumLimit >= 0 }

// RetainBatch bounds the jobs retention purges in one turn, as a purge
// request's batch is bounded: a backlog (a limit just lowered, or the
// instance's first start with one) is purged over many short turns, with
// the other work of the instance between them.
const RetainBatch = api.PurgeBatchMax

// inactiveIndex is the manager's memory of inactive jobs: nothing but
// their ids, owners and the times they became inactive, in that order,
// so that purge and retention find the oldest without reading the store.
// Purged entries are marked gone and dropped at the next turn (compact),
// so a turn whose commit fails can put them back (Restore).
type inactiveIndex struct {
	list []ops.InactiveJob
	gone map[fluid.ID]bool
}

func (x *inactiveIndex) live() int { return len(x.list) - len(x.gone) }

// compact drops the gone entries: those at the front at once (the common
// case, oldest first), the rest when they are most of the list.
func (x *inactiveIndex) compact() {
	i := 0
	for i < len(x.list) && x.gone[x.list[i].ID] {
		delete(x.gone, x.list[i].ID)
		i++
	}
	x.list = x.list[i:]
	if len(x.gone) > 0 && 2*len(x.gone) > len(x.list) {
		kept := make([]ops.InactiveJob, 0, x.live())
		for _, j := range x.list {
			if !x.gone[j.ID] {
				kept = append(kept, j)
			}
		}
		x.list = kept
		clear(x.gone)
	}
	if len(x.list) == 0 && cap(x.list) > 1024 {
		x.list = nil // let a big purge's room go
	}
}

// SetRetention sets the limits retention applies (fluxsched's config).
func (m *Manager) SetRetention(r Retention) { m.retention = r }

// Inactive reports how many inactive jobs the instance holds.
func (m *Manager) Inactive() int { return m.inactive.live() }

// retainPause is how long retention waits, when every job beyond the
// limits is kept, before it looks again.
const retainPause = time.Second

// becameInactive records a job that has just posted clean.
func (m *Manager) becameInactive(e *entry) {
	m.retainPause = time.Time{} // what was kept for it may go now
	m.inactive.list = append(m.inactive.list, ops.InactiveJob{ID: e.id(), UserID: e.j().UserID, T: e.j().TInactive})
}

// markPurged marks purged jobs gone, noting them for Restore.
func (m *Manager) markPurged(ids []fluid.ID) {
	if m.inactive.gone == nil {
		m.inactive.gone = map[fluid.ID]bool{}
	}
	for _, id := range ids {
		m.inactive.gone[id] = true
	}
	if m.cp != nil {
		m.cp.purged = append(m.cp.purged, ids...)
	}
}

// eligible walks the inactive jobs uid may purge (all, for the owner),
// oldest first, and returns those beyond the limits: a job is beyond them
// when it has been inactive longer than age seconds, or when more than
// num of the caller's inactive jobs would remain with it. The walk stops
// at the first job within both, as Flux's does, and after max (< 0: no
// bound). visible is how many inactive jobs the caller may purge.
func (m *Manager) eligible(tx *store.Tx, uid uint32, all bool, age float64, num, max int) (ids []fluid.ID, visible int) {
	mine := func(j ops.InactiveJob) bool {
		return !m.inactive.gone[j.ID] && (all || j.UserID == uid)
	}
	var keep map[fluid.ID]bool // made at the first candidate
	if all {
		visible = m.inactive.live()
	} else {
		for _, j := range m.inactive.list {
			if mine(j) {
				visible++
			}
		}
	}
	now := m.now()
	left := visible
	for _, j := range m.inactive.list {
		if max >= 0 && len(ids) >= max {
			break
		}
		if !mine(j) {
			continue
		}
		if !(age >= 0 && now-j.T > age) && !(num >= 0 && left > num) {
			break
		}
		if keep == nil {
			keep = m.ancestors(tx)
		}
		if keep[j.ID] {
			continue
		}
		ids = append(ids, j.ID)
		left--
	}
	return ids, visible
}

// Purge answers fluxq purge for uid: the oldest inactive jobs beyond the
// request's limits, or the jobs it names; with Force they are removed
// from the store in this turn and returned, for their folders to be
// removed once it has committed. A guest purges only its own jobs (Flux
// lets only the instance owner purge; we let a guest tidy its own).
func (m *Manager) Purge(tx *store.Tx, uid uint32, p api.PurgeParams) (api.PurgeResult, []fluid.ID, error) {
	return m.PurgeUpTo(tx, uid, p, 0)
}

// PurgeUpTo is Purge that removes up to most jobs by limits in this call
// when that is more than the request's batch: the direct path's, which
// holds up no loop, but loads every job for each call, so that a purge of
// a million jobs is not twenty thousand loads. The request is checked as
// Purge checks it.
func (m *Manager) PurgeUpTo(tx *store.Tx, uid uint32, p api.PurgeParams, most int) (api.PurgeResult, []fluid.ID, error) {
	owner := uid == m.cfg.Owner
	batch := p.Batch
	if batch == 0 {
		batch = api.PurgeBatchDefault
	}
	if batch < 1 || batch > api.PurgeBatchMax {
		return api.PurgeResult{}, nil, api.Errorf(api.CodeBadRequest, "batch must be >= 1 and <= %d", api.PurgeBatchMax)
	}
	if math.IsNaN(p.AgeLimit) || math.IsInf(p.AgeLimit, 0) {
		return api.PurgeResult{}, nil, api.Errorf(api.CodeBadRequest, "age limit must be a finite duration")
	}
	if len(p.IDs) > 0 {
		return m.purgeIDs(tx, uid, owner, p)
	}
	max := -1
	if p.Force {
		max = batch
		if most > batch {
			max = most
		}
	}
	ids, visible := m.eligible(tx, uid, owner, p.AgeLimit, p.NumLimit, max)
	res := api.PurgeResult{Count: len(ids), Inactive: visible}
	if !p.Force || len(ids) == 0 {
		return res, nil, nil
	}
	if err := ops.PurgeJobs(tx, ids); err != nil {
		return api.PurgeResult{}, nil, err
	}
	m.markPurged(ids)
	res.Inactive = visible - len(ids)
	return res, ids, nil
}

// purgeIDs purges the jobs p names, each on its own: one that cannot be
// purged gets its error and the others go on.
func (m *Manager) purgeIDs(tx *store.Tx, uid uint32, owner bool, p api.PurgeParams) (api.PurgeResult, []fluid.ID, error) {
	if len(p.IDs) > api.PurgeBatchMax {
		return api.PurgeResult{}, nil, api.Errorf(api.CodeBadRequest, "at most %d job ids per purge request", api.PurgeBatchMax)
	}
	res := api.PurgeResult{Errors: make([]*api.Error, len(p.IDs))}
	var ids []fluid.ID
	var keep map[fluid.ID]bool
	seen := map[fluid.ID]bool{}
	for i, id := range p.IDs {
		if seen[id] {
			continue // named twice, purged once
		}
		seen[id] = true
		if e, ok := m.active[id]; ok && e.j().State != job.Inactive {
			if !owner && e.j().UserID != uid {
				res.Errors[i] = api.Encode(ops.ErrPurgeOthers)
			} else {
				res.Errors[i] = api.Encode(ops.ErrPurgeActive)
			}
			continue
		}
		if m.inactive.gone[id] {
			res.Errors[i] = api.Encode(ops.ErrUnknownJob)
			continue
		}
		if _, err := ops.PurgeCheck(tx, id, uid, owner); err != nil {
			res.Errors[i] = api.Encode(err)
			continue
		}
		if keep == nil {
			keep = m.ancestors(tx)
		}
		if keep[id] {
			res.Errors[i] = api.Encode(ErrPurgeAncestor)
			continue
		}
		ids = append(ids, id)
	}
	res.Count = len(ids)
	if p.Force && len(ids) > 0 {
		if err := ops.PurgeJobs(tx, ids); err != nil {
			return api.PurgeResult{}, nil, err
		}
		m.markPurged(ids)
	} else {
		ids = nil
	}
	_, res.Inactive = m.eligible(tx, uid, owner, -1, -1, 0)
	return res, ids, nil
}

// ErrPurgeAncestor keeps an inactive job that jobs still active were
// submitted from.
var ErrPurgeAncestor = errors.New("cannot purge a job while jobs submitted from it are active")

// ancestors are the jobs that active jobs were submitted from, at any
// depth: purge keeps them, inactive or not, while a descendant is active,
// because a reservation's derived children are found through the chain
// (descendants), which may pass through jobs that have ended.
func (m *Manager) ancestors(tx *store.Tx) map[fluid.ID]bool {
	out := map[fluid.ID]bool{}
	for _, e := range m.active {
		// The visited set ends every walk, a cycle's too.
		for p := e.j().Parent; p != 0 && !out[p]; {
			out[p] = true
			if a, ok := m.active[p]; ok {
				p = a.j().Parent
				continue
			}
			rec, err := ops.Load(tx, p)
			if err != nil {
				break
			}
			p = rec.Job.Parent
		}
	}
	return out
}

// Retain applies retention: it purges up to RetainBatch of the oldest
// inactive jobs beyond the limits, in this turn, and puts their ids in the
// outbox (Purged) for their folders to be removed after the commit.
func (m *Manager) Retain(tx *store.Tx) error {
	r := m.retention
	if !r.On() {
		return nil
	}
	// A job that ended earlier in this turn may have its summary still
	// waiting (DeferSummaries); the store's must say INACTIVE before the
	// job is judged by it.
	if err := m.SaveSummaries(tx); err != nil {
		return fmt.Errorf("retention: %w", err)
	}
	cand, _ := m.eligible(tx, 0, true, r.AgeLimit, r.NumLimit, RetainBatch)
	if len(cand) == 0 {
		// Due, yet nothing may go (ancestors of active jobs are kept):
		// looked at again after a pause, or when a job ends, not at
		// every turn.
		m.retainPause = m.cfg.Now().Add(retainPause)
		return nil
	}
	ids := cand[:0:0]
	var stale []fluid.ID
	for _, id := range cand {
		if _, err := ops.PurgeCheck(tx, id, 0, true); err != nil {
			// Not an inactive job of the store (any more): forgotten,
			// so that retention never comes back to it turn after turn.
			stale = append(stale, id)
			continue
		}
		ids = append(ids, id)
	}
	m.markPurged(stale)
	if len(ids) == 0 {
		return nil
	}
	if err := ops.PurgeJobs(tx, ids); err != nil {
		return fmt.Errorf("retention: %w", err)
	}
	m.markPurged(ids)
	m.out.Purged = append(m.out.Purged, ids...)
	return nil
}

// maxDue is the latest retention time a timer is set for (the year 2286,
// far within time.Duration's range).
const maxDue = 1e10

// RetainDue is when retention next has a job to purge: zero for never (no
// limits, or no inactive job), now or earlier when one is due already,
// else when the oldest inactive job passes the age limit.
func (m *Manager) RetainDue() time.Time {
	r := m.retention
	if !r.On() || m.inactive.live() == 0 {
		return time.Time{}
	}
	if now := m.cfg.Now(); now.Before(m.retainPause) {
		return m.retainPause
	}
	if r.NumLimit >= 0 && m.inactive.live() > r.NumLimit {
		return m.cfg.Now()
	}
	if r.AgeLimit < 0 {
		return time.Time{}
	}
	for _, j := range m.inactive.list {
		if !m.inactive.gone[j.ID] {
			// The list is in the order the jobs became inactive, so the
			// first is the next to pass the limit.
			due := j.T + r.AgeLimit
			if due > maxDue {
				return time.Time{} // centuries away: no timer
			}
			return time.Unix(0, int64(due*1e9)).Add(time.Millisecond)
		}
	}
	return time.Time{}
}
