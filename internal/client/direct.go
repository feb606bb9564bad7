package client

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/launcher"
	"github.com/fluxq/fluxq/internal/reservation"
	"github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// direct works on the store itself while no loop runs. It opens the store
// for each call only, so it never keeps a starting loop (or another
// command) waiting longer than one short transaction.
type direct struct {
	dir         string
	timeout     time.Duration
	uid         uint32
	now         func() time.Time
	claim       string
	asScheduler bool
}

func newDirect(o Options) *direct {
	return &direct{dir: o.StateDir, timeout: o.Timeout, uid: uint32(os.Getuid()), now: time.Now, claim: o.JobClaim, asScheduler: o.AsScheduler}
}

// who is the caller, for the reservation rules: this process.
func (d *direct) who(tx *store.Tx) (reservation.Requester, error) {
	return state.Identify(tx, filepath.Join(d.dir, JobsFolder), d.uid, os.Getpid(), d.claim, d.asScheduler, true)
}

func (d *direct) path() string { return filepath.Join(d.dir, StoreFile) }

// with opens the store for one transaction. A store held by a loop that
// started meanwhile is reported as unavailable after the timeout.
func (d *direct) with(write bool, fn func(tx *store.Tx) error) error {
	if err := os.MkdirAll(d.dir, 0o700); err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	st, err := store.Open(d.path(), store.Options{Timeout: d.timeout})
	if errors.Is(err, store.ErrBusy) {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if err != nil {
		return err
	}
	defer st.Close()
	if write {
		return st.Update(fn)
	}
	return st.View(fn)
}

func (d *direct) Submit(_ context.Context, jobs []SubmitJob) ([]fluid.ID, error) {
	var ids []fluid.ID
	err := d.with(true, func(tx *store.Tx) error {
		reqs := submitRequests(jobs, d.uid)
		if d.claim != "" || d.asScheduler {
			who, err := d.who(tx)
			if err != nil {
				return err
			}
			for i := range reqs {
				reqs[i].Who = &who
			}
		}
		var err error
		ids, _, err = state.Submit(tx, d.now(), reqs, nil)
		return err
	})
	return ids, err
}

// submitRequests makes the requests of the direct path, whose caller is
// the instance owner: only the owner can open the store (it is 0600).
func submitRequests(jobs []SubmitJob, uid uint32) []state.SubmitRequest {
	reqs := make([]state.SubmitRequest, len(jobs))
	for i, j := range jobs {
		reqs[i] = state.SubmitRequest{Jobspec: j.Jobspec, UserID: uid, Owner: true, Urgency: j.Urgency}
	}
	return reqs
}

func (d *direct) Jobs(_ context.Context, q JobsQuery) ([]state.Summary, error) {
	var out []state.Summary
	err := d.with(false, func(tx *store.Tx) error {
		var err error
		out, err = ListJobs(tx, d.uid, q)
		return err
	})
	return out, err
}

func (d *direct) Job(_ context.Context, id fluid.ID) (*JobInfo, error) {
	var info *JobInfo
	err := d.with(false, func(tx *store.Tx) error {
		var err error
		info, err = LoadJobInfo(tx, id, filepath.Join(d.dir, JobsFolder))
		return err
	})
	return info, err
}

// manager runs fn with a job manager over the store's active jobs, so a
// change made with no loop running follows the very rules the loop's
// would; what it would tell the scheduler or exec service is for the next
// loop to say, after it loads the jobs.
func (d *direct) manager(fn func(tx *store.Tx, jm *jobmgr.Manager) error) error {
	return d.with(true, func(tx *store.Tx) error {
		jm := jobmgr.New(jobmgr.Config{Owner: uint32(os.Geteuid()), Now: d.now})
		if err := jm.Load(tx); err != nil {
			return err
		}
		return fn(tx, jm)
	})
}

// Cancel commits each job's exception, then asks the exec agents to stop
// the processes of those that were running: no fluxsched is there to pass
// the exception on, and the next one only collects their ends.
func (d *direct) Cancel(ctx context.Context, ids []fluid.ID, note string) ([]error, error) {
	errs := make([]error, len(ids))
	var running []fluid.ID
	err := d.manager(func(tx *store.Tx, jm *jobmgr.Manager) error {
		running = running[:0]
		for i, id := range ids {
			rec, lerr := state.Load(tx, id)
			errs[i] = jm.Cancel(tx, id, d.uid, note)
			if errs[i] == nil && lerr == nil && rec.Job.State&job.Running != 0 && rec.Job.Allocated && !rec.Job.Released {
				running = append(running, id)
			}
		}
		return nil
	})
	if err != nil || len(running) == 0 {
		return errs, err
	}
	// The cancel is committed whatever the agents say: an agent that
	// cannot be asked leaves the job to end at the next fluxsched.
	_ = launcher.Cancel(ctx, d.dir, running)
	return errs, nil
}

func (d *direct) Urgency(_ context.Context, id fluid.ID, urgency int) error {
	var uerr error
	err := d.manager(func(tx *store.Tx, jm *jobmgr.Manager) error {
		uerr = jm.Urgency(tx, id, d.uid, urgency)
		return nil
	})
	if err != nil {
		return err
	}
	return uerr
}

// pollInterval paces followers on the direct path, where nothing can
// announce a change: the store is only read, briefly, between naps.
const pollInterval = 200 * time.Millisecond

func (d *direct) Events(ctx context.Context, id fluid.ID, follow bool, fn func(eventlog.Event) error) error {
	seen := 0
	for {
		var evs []eventlog.Event
		var done bool
		err := d.with(false, func(tx *store.Tx) error {
			var err error
			evs, done, err = NewEvents(tx, id, seen)
			return err
		})
		if err != nil {
			return err
		}
		for _, e := range evs {
			if err := fn(e); err != nil {
				return err
			}
		}
		seen += len(evs)
		if !follow || done {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pollInterval):
		}
	}
}

func (d *direct) Wait(ctx context.Context, id fluid.ID) (*state.Summary, error) {
	if err := d.Events(ctx, id, true, func(eventlog.Event) error { return nil }); err != nil {
		return nil, err
	}
	info, err := d.Job(ctx, id)
	if err != nil {
		return nil, err
	}
	return &info.Summary, nil
}

func (d *direct) Stats(context.Context) (*Stats, error) {
	var st *Stats
	err := d.with(false, func(tx *store.Tx) error {
		var err error
		st, err = CountJobs(tx)
		return err
	})
	return st, err
}

func (d *direct) Resources(context.Context) (*Resources, error) {
	var res *Resources
	err := d.with(false, func(tx *store.Tx) error {
		var err error
		res, err = LoadResources(tx)
		return err
	})
	return res, err
}

func (d *direct) Drain(_ context.Context, ranks, reason string, force bool) error {
	return d.with(true, func(tx *store.Tx) error {
		_, err := state.Drain(tx, ranks, reason, force, d.now())
		return err
	})
}

func (d *direct) Undrain(_ context.Context, ranks string) error {
	return d.with(true, func(tx *store.Tx) error {
		_, err := state.Undrain(tx, ranks)
		return err
	})
}

func (d *direct) Close() error { return nil }
