package writes

import (
	"context"
	"fmt"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/launcher"
	"github.com/fluxq/fluxq/internal/state"
)

// DirectPurgeMax bounds the jobs one purge removes on the direct path, in
// one transaction: far more than a socket request's batch, since every
// call there loads all the jobs, and few enough that the transaction
// keeps the store only briefly from another command.
const DirectPurgeMax = 10000

// The writes, on both paths.
func init() {
	write(api.Submit, Write{identify: ifClaimed}, submit)
	write(api.Resubmit, Write{identify: ifClaimed}, resubmit)
	write(api.Cancel, Write{loads: true}, cancel)
	write(api.CancelAll, Write{loads: true, many: true}, cancelAll)
	write(api.Purge, Write{loads: true}, purge)
	write(api.Urgency, Write{loads: true}, func(t *Turn, p api.UrgencyParams) (api.None, error) {
		return api.None{}, t.JM.Urgency(t.Tx, p.ID, t.Caller.UID, p.Urgency)
	})
	write(api.Update, Write{loads: true}, func(t *Turn, p api.UpdateParams) (api.UpdateResult, error) {
		if t.Caller.Room != nil && !p.DryRun {
			// A guest's update stores its values twice (the jobspec and
			// the event): held to the reserve a submission is, with a
			// page for the event.
			var size uint64
			for _, u := range p.Updates {
				size += 2 * uint64(len(u.Key)+len(u.Value))
			}
			if err := t.Caller.Room(size, 1); err != nil {
				return api.UpdateResult{}, err
			}
		}
		return t.JM.Update(t.Tx, p.ID, t.Caller.UID, p.Updates, p.DryRun)
	})
	write(api.Reap, Write{}, func(t *Turn, p api.ReapParams) ([]fluid.ID, error) {
		// The job manager holds no inactive job: the mark is the store's.
		return state.Reap(t.Tx, t.Caller.UID, p)
	})
	write(api.Drain, Write{}, func(t *Turn, p api.DrainParams) (api.None, error) {
		if _, err := state.Drain(t.Tx, p.Ranks, p.Reason, p.Force, t.JM.Now()); err != nil {
			return api.None{}, err
		}
		return api.None{}, down(t)
	})
	write(api.Undrain, Write{}, func(t *Turn, p api.DrainParams) (api.None, error) {
		if _, err := state.Undrain(t.Tx, p.Ranks); err != nil {
			return api.None{}, err
		}
		return api.None{}, down(t)
	})
	write(api.ChangeQueues, Write{}, func(t *Turn, ch api.QueueChange) (api.QueueInfo, error) {
		qi, err := state.ChangedQueues(t.Tx, ch)
		if err != nil {
			return api.QueueInfo{}, err
		}
		t.JM.SetQueues(qi.Set, qi.States)
		return *CountQueues(qi, t.JM), nil
	})
	write(api.Reserve, Write{identify: always, loop: true}, func(t *Turn, p api.ReserveParams) (api.ReservationView, error) {
		rr, err := p.Alloc()
		if err != nil {
			return api.ReservationView{}, err
		}
		r, err := t.JM.Reserve(t.Tx, rr, *t.Caller.Who, t.Caller.UID)
		if err != nil {
			return api.ReservationView{}, err
		}
		return state.View(t.JM.Reservations(), r, t.JM.Alive), nil
	})
	write(api.AddSpares, Write{}, func(t *Turn, p api.SpareParams) ([]string, error) {
		return t.JM.AddSpares(t.Tx, p.Hosts, p.Cores, p.GPUs)
	})
	write(api.RemoveNodes, Write{}, func(t *Turn, p api.SpareParams) (api.None, error) {
		names, err := state.ExpandHosts(p.Hosts)
		if err != nil {
			return api.None{}, err
		}
		return api.None{}, t.JM.RemoveSpares(t.Tx, names)
	})
}

// submit stores the jobs and hands them to the job manager, in one turn.
func submit(t *Turn, p api.SubmitParams) ([]fluid.ID, error) {
	reqs := make([]state.SubmitRequest, len(p.Jobs))
	for i, j := range p.Jobs {
		reqs[i] = state.SubmitRequest{Jobspec: j.Jobspec, Urgency: j.Urgency}
	}
	return admit(t, reqs)
}

// resubmit makes a new job of an old one's jobspec, admitted as any
// submission is, and links the old job to it, in one turn.
func resubmit(t *Turn, p api.IDParams) (fluid.ID, error) {
	req, err := state.Resubmission(t.Tx, t.Caller.UID, p.ID)
	if err != nil {
		return 0, err
	}
	ids, err := admit(t, []state.SubmitRequest{req})
	if err != nil {
		return 0, err
	}
	return ids[0], state.Resubmitted(t.Tx, p.ID, ids[0])
}

// admit stores new jobs as the caller's and hands them to the job
// manager: the caller's identity, room and cap are the turn's, whatever
// made the requests.
func admit(t *Turn, reqs []state.SubmitRequest) ([]fluid.ID, error) {
	c := t.Caller
	var size uint64
	for i := range reqs {
		reqs[i].UserID, reqs[i].Owner, reqs[i].Who = c.UID, c.Owner, c.Who
		size += uint64(len(reqs[i].Jobspec))
	}
	if c.Room != nil {
		if err := c.Room(size, len(reqs)); err != nil {
			return nil, err
		}
	}
	if c.MaxActive > 0 {
		// Counted in the turn: submissions earlier in it count.
		for i := range reqs {
			reqs[i].MaxActive, reqs[i].Active = c.MaxActive, t.JM.ActiveOf(c.UID)
		}
	}
	ids, recs, err := state.Submit(t.Tx, t.JM.Now(), reqs, t.JM.Reservations())
	if err != nil {
		return nil, err
	}
	return ids, t.JM.Submitted(t.Tx, recs)
}

// cancel raises each job's cancel exception; a refusal is that job's
// entry in the result. With no loop, no exec service passes the
// exception on to the processes of a running job: once the cancel is
// committed, the exec agents are asked to stop them (whatever they say,
// the cancel stands, and the next fluxsched collects the ends).
func cancel(t *Turn, p api.CancelParams) (api.CancelResult, error) {
	out := make(api.CancelResult, len(p.IDs))
	c := canceller{t: t}
	for i, id := range p.IDs {
		if err := c.cancel(id, p.Note); err != nil {
			out[i] = api.Encode(err)
		}
	}
	c.done()
	return out, nil
}

// cancelAll cancels every active job a query selects, chosen from the job
// manager's memory in the same turn (flux cancel --all's raiseall); each
// one the caller may not cancel is a failure of its own, with its owner.
func cancelAll(t *Turn, p api.CancelAllParams) (api.CancelAllResult, error) {
	q := p.Query
	q.IDs, q.Results, q.Count = nil, nil, 0
	q.States &= job.Active
	if q.States == 0 {
		q.States = job.Active
	}
	jobs := selected(t, q)
	out := api.CancelAllResult{Matched: len(jobs)}
	if p.DryRun {
		return out, nil
	}
	c := canceller{t: t}
	for _, s := range jobs {
		if err := c.cancel(s.ID, p.Note); err != nil {
			out.Failed = append(out.Failed, api.CancelFailure{ID: s.ID, UserID: s.UserID, Error: api.Encode(err)})
		}
	}
	c.done()
	return out, nil
}

// selected is the active jobs q takes as the last commit left them (what
// a listing would have shown the caller), in id order, from the job
// manager's memory. The direct path's has just taken every job up in
// this transaction, and moved those that could go on (DEPEND and
// PRIORITY to SCHED: jobmgr.Manager.Load); its selection sees each job
// in the state it was taken up in.
func selected(t *Turn, q api.JobsQuery) []jobmgr.Selection {
	return t.JM.Selected(state.Selects(t.Caller.UID, q))
}

// canceller cancels jobs of one turn, one by one, and with no loop has the
// exec agents stop the processes of those that may run, once committed.
type canceller struct {
	t       *Turn
	running []fluid.ID
}

func (c *canceller) cancel(id fluid.ID, note string) error {
	t := c.t
	// Whether its processes may run, asked before the cancel ends the
	// job.
	mayRun := t.JM.Offline() && t.JM.ShellMayRun(id)
	if err := t.JM.Cancel(t.Tx, id, t.Caller.UID, note); err != nil {
		return err
	}
	if mayRun {
		c.running = append(c.running, id)
	}
	return nil
}

func (c *canceller) done() {
	if len(c.running) == 0 {
		return
	}
	dir, running := c.t.Caller.StateDir, c.running
	c.t.Then(func(ctx context.Context) error {
		if err := launcher.Cancel(ctx, dir, running); err != nil {
			return fmt.Errorf("asking the exec agents to stop cancelled jobs: %w", err)
		}
		return nil
	})
}

// purge removes inactive jobs; their folders go once that is committed,
// so that what the caller sees next is what the purge left (a folder
// that cannot go then goes at the next fluxsched start).
func purge(t *Turn, p api.PurgeParams) (api.PurgeResult, error) {
	most := 0
	if t.JM.Offline() {
		most = DirectPurgeMax
	}
	res, purged, err := t.JM.PurgeUpTo(t.Tx, t.Caller.UID, p, most)
	if err != nil {
		return api.PurgeResult{}, err
	}
	if len(purged) > 0 {
		dir := t.Caller.JobsDir
		t.Then(func(context.Context) error {
			if err := state.RemoveJobFolders(dir, purged); err != nil {
				return fmt.Errorf("removing purged job folders: %w", err)
			}
			return nil
		})
	}
	return res, nil
}

// down tells the job manager which ranks are drained after a change.
func down(t *Turn) error {
	drained, err := state.Drained(t.Tx)
	if err != nil {
		return err
	}
	t.JM.SetDown(drained)
	return nil
}

// CountQueues fills the queues' counts from the job manager's, which know
// the alloc requests outstanding.
func CountQueues(qi *api.QueueInfo, jm *jobmgr.Manager) *api.QueueInfo {
	for _, name := range qi.Set.Names() {
		qi.Counts[name] = api.QueueCounts(jm.Counts([]string{name}))
	}
	return qi
}
