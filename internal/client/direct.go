package client

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"time"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/launcher"
	"github.com/fluxq/fluxq/internal/reservation"
	"github.com/fluxq/fluxq/internal/state"
	_ "github.com/fluxq/fluxq/internal/state/jobkinds" // the job manager's errors keep their kinds
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

// caller is this process, for the state functions: only the instance
// owner can open the store (it is 0600).
func (d *direct) caller() state.Caller {
	return state.Caller{UID: d.uid, Owner: true, JobsDir: filepath.Join(d.dir, state.JobsFolder)}
}

// who is the caller, for the reservation rules: this process.
func (d *direct) who(tx *store.Tx) (reservation.Requester, error) {
	return state.Identify(tx, filepath.Join(d.dir, state.JobsFolder), d.uid, os.Getpid(), d.claim, d.asScheduler, true)
}

func (d *direct) path() string { return filepath.Join(d.dir, state.StoreFile) }

// with opens the store for one transaction. A store held by a loop that
// started meanwhile is reported as unavailable after the timeout. Any
// other error reads as it would from the socket (api.Wire).
func (d *direct) with(write bool, fn func(tx *store.Tx) error) error {
	if err := os.MkdirAll(d.dir, 0o700); err != nil {
		return api.Wire(fmt.Errorf("state directory: %w", err))
	}
	st, err := store.Open(d.path(), store.Options{Timeout: d.timeout, FullCheck: fullCheck(d.path())})
	if errors.Is(err, store.ErrBusy) {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if errors.Is(err, os.ErrPermission) {
		return ErrOwnersStore
	}
	if err != nil {
		return api.Wire(err)
	}
	defer st.Close()
	if write {
		return api.Wire(st.Update(fn))
	}
	return api.Wire(st.View(fn))
}

// fullCheckMax is the largest store whose every page a command on the
// direct path checks before it reads it, as fluxsched does at start: up
// to 64 MB (some 15,000 jobs) that costs under 50 ms. A larger store gets
// the meta check, and bbolt's own checks as it reads, whose failures are
// a damaged-store error too (store.Open): a command that opens the store
// for each request cannot pay seconds for each (bench/storecheck.sh).
const fullCheckMax = 64 << 20

func fullCheck(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Size() <= fullCheckMax
}

// roundTrip answers an exchange with the state function of its entry: a
// read the server answers the same way (state.ReaderOf), or the direct
// path's own answer (locals).
func (d *direct) roundTrip(ctx context.Context, x *exchange) error {
	var v any
	var err error
	if r, ok := state.ReaderOf(x.spec.Name); ok {
		err = d.with(false, func(tx *store.Tx) error {
			var err error
			v, err = r.Run(tx, d.caller(), func(p any) error {
				reflect.ValueOf(p).Elem().Set(reflect.ValueOf(x.params))
				return nil
			})
			return err
		})
	} else if l, ok := locals[x.spec.Name]; ok {
		v, err = l(ctx, d, x.params, x.line)
	} else {
		err = fmt.Errorf("unknown method %q", x.spec.Name)
	}
	if err != nil {
		return err
	}
	reflect.ValueOf(x.result).Elem().Set(reflect.ValueOf(v))
	return nil
}

// local is the direct path's answer to an entry the store alone does not
// answer the way the server does: a change made with no loop to tell, or
// a stream with no loop to wait for.
type local func(ctx context.Context, d *direct, params any, line func(any) error) (any, error)

var locals = map[string]local{}

// serve binds an entry to its direct answer, with its types.
func serve[P, R, S any](m api.Method[P, R, S], fn func(ctx context.Context, d *direct, p P, emit func(S) error) (R, error)) {
	locals[m.Name] = func(ctx context.Context, d *direct, params any, line func(any) error) (any, error) {
		return fn(ctx, d, params.(P), func(v S) error { return line(v) })
	}
}

// pollInterval paces followers on the direct path, where nothing can
// announce a change: the store is only read, briefly, between naps.
const pollInterval = 200 * time.Millisecond

func init() {
	serve(api.Submit, func(_ context.Context, d *direct, p api.SubmitParams, _ func(api.None) error) ([]fluid.ID, error) {
		var ids []fluid.ID
		err := d.with(true, func(tx *store.Tx) error {
			reqs := submitRequests(p.Jobs, d.uid)
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
	})
	serve(api.Cancel, cancel)
	serve(api.Purge, func(_ context.Context, d *direct, p api.PurgeParams, _ func(api.None) error) (api.PurgeResult, error) {
		var res api.PurgeResult
		var purged []fluid.ID
		var perr error
		err := d.manager(func(tx *store.Tx, jm *jobmgr.Manager) error {
			res, purged, perr = jm.PurgeUpTo(tx, d.uid, p, directPurgeMax)
			return perr
		})
		if err != nil {
			return api.PurgeResult{}, err
		}
		// Committed; a folder that cannot go now goes at the next
		// fluxsched start (its orphan folders).
		_ = state.RemoveJobFolders(filepath.Join(d.dir, state.JobsFolder), purged)
		return res, nil
	})
	serve(api.Urgency, func(_ context.Context, d *direct, p api.UrgencyParams, _ func(api.None) error) (api.None, error) {
		var uerr error
		err := d.manager(func(tx *store.Tx, jm *jobmgr.Manager) error {
			uerr = jm.Urgency(tx, p.ID, d.uid, p.Urgency)
			return nil
		})
		if err == nil {
			err = api.Wire(uerr)
		}
		return api.None{}, err
	})
	serve(api.Events, func(ctx context.Context, d *direct, p api.EventsParams, emit func(eventlog.Event) error) (api.None, error) {
		return api.None{}, d.events(ctx, p.ID, p.Follow, emit)
	})
	serve(api.Wait, func(ctx context.Context, d *direct, p api.IDParams, _ func(api.None) error) (api.JobSummary, error) {
		if err := d.events(ctx, p.ID, true, func(eventlog.Event) error { return nil }); err != nil {
			return api.JobSummary{}, err
		}
		info, err := call(ctx, d, api.Job, p, nil)
		return info.Summary, err
	})
	serve(api.WaitAll, func(ctx context.Context, d *direct, p api.IDsParams, emit func(api.JobSummary) error) (api.None, error) {
		return api.None{}, waitEach(ctx, d, p.IDs, emit)
	})
	serve(api.Reap, func(_ context.Context, d *direct, p api.ReapParams, _ func(api.None) error) ([]fluid.ID, error) {
		var took []fluid.ID
		err := d.with(true, func(tx *store.Tx) error {
			var err error
			took, err = state.Reap(tx, d.uid, p)
			return err
		})
		return took, err
	})
	serve(api.Drain, func(_ context.Context, d *direct, p api.DrainParams, _ func(api.None) error) (api.None, error) {
		return api.None{}, d.with(true, func(tx *store.Tx) error {
			_, err := state.Drain(tx, p.Ranks, p.Reason, p.Force, d.now())
			return err
		})
	})
	serve(api.Undrain, func(_ context.Context, d *direct, p api.DrainParams, _ func(api.None) error) (api.None, error) {
		return api.None{}, d.with(true, func(tx *store.Tx) error {
			_, err := state.Undrain(tx, p.Ranks)
			return err
		})
	})
	serve(api.Queues, func(_ context.Context, d *direct, _ api.None, _ func(api.None) error) (api.QueueInfo, error) {
		return d.queues()
	})
	serve(api.ChangeQueues, func(_ context.Context, d *direct, c api.QueueChange, _ func(api.None) error) (api.QueueInfo, error) {
		var qi *api.QueueInfo
		err := d.with(true, func(tx *store.Tx) error {
			var err error
			qi, err = state.ChangedQueues(tx, c)
			return err
		})
		if err != nil {
			return api.QueueInfo{}, err
		}
		return *qi, nil
	})
	serve(api.WaitQueues, waitQueues)
	serve(api.Reserve, func(context.Context, *direct, api.ReserveParams, func(api.None) error) (api.ReservationView, error) {
		return api.ReservationView{}, ErrNeedsInstance
	})
	serve(api.ToolEvents, func(_ context.Context, d *direct, _ api.ToolEventsParams, emit func(api.ToolEvent) error) (api.None, error) {
		var evs []api.ToolEvent
		err := d.with(false, func(tx *store.Tx) error {
			who, err := d.who(tx)
			if err != nil {
				return err
			}
			evs, err = state.ToolEvents(tx, who.NS.Tool, 0)
			return err
		})
		if err != nil {
			return api.None{}, err
		}
		for _, e := range evs {
			if err := emit(e); err != nil {
				return api.None{}, err
			}
		}
		return api.None{}, nil
	})
	serve(api.AddSpares, func(_ context.Context, d *direct, p api.SpareParams, _ func(api.None) error) ([]string, error) {
		var out []string
		err := d.with(true, func(tx *store.Tx) error {
			var err error
			out, err = state.AddSpareNodes(tx, p)
			return err
		})
		return out, err
	})
	serve(api.RemoveNodes, func(_ context.Context, d *direct, p api.SpareParams, _ func(api.None) error) (api.None, error) {
		return api.None{}, d.with(true, func(tx *store.Tx) error { return state.RemoveSpareNodes(tx, p.Hosts) })
	})
}

// directPurgeMax bounds the jobs one purge removes on the direct path,
// in one transaction: far more than a socket request's batch, since
// every call loads all the jobs, and few enough that the transaction
// keeps the store only briefly from another command.
const directPurgeMax = 10000

// submitRequests makes the requests of the direct path, whose caller is
// the instance owner: only the owner can open the store (it is 0600).
func submitRequests(jobs []api.SubmitJob, uid uint32) []state.SubmitRequest {
	reqs := make([]state.SubmitRequest, len(jobs))
	for i, j := range jobs {
		reqs[i] = state.SubmitRequest{Jobspec: j.Jobspec, UserID: uid, Owner: true, Urgency: j.Urgency}
	}
	return reqs
}

// manager runs fn with a job manager over the store's active jobs, so a
// cancel or an urgency made with no loop running follows the very rules
// the loop's would (the job manager's, which post the events that follow
// from them); what it would tell the scheduler or exec service is for the
// next loop to say, after it loads the jobs.
func (d *direct) manager(fn func(tx *store.Tx, jm *jobmgr.Manager) error) error {
	return d.with(true, func(tx *store.Tx) error {
		jm := jobmgr.New(jobmgr.Config{Owner: uint32(os.Geteuid()), Now: d.now})
		if err := jm.Load(tx); err != nil {
			return err
		}
		return fn(tx, jm)
	})
}

// cancel commits each job's exception, then asks the exec agents to stop
// the processes of those that were running: no fluxsched is there to pass
// the exception on, and the next one only collects their ends.
func cancel(ctx context.Context, d *direct, p api.CancelParams, _ func(api.None) error) (api.CancelResult, error) {
	out := make(api.CancelResult, len(p.IDs))
	var running []fluid.ID
	err := d.manager(func(tx *store.Tx, jm *jobmgr.Manager) error {
		running = running[:0]
		for i, id := range p.IDs {
			out[i] = nil
			rec, lerr := state.Load(tx, id)
			if err := jm.Cancel(tx, id, d.uid, p.Note); err != nil {
				out[i] = api.Encode(err)
			} else if lerr == nil && rec.Job.State&job.Running != 0 && rec.Job.Allocated && !rec.Job.Released {
				running = append(running, id)
			}
		}
		return nil
	})
	if err != nil || len(running) == 0 {
		return out, err
	}
	// The cancel is committed whatever the agents say: an agent that
	// cannot be asked leaves the job to end at the next fluxsched.
	_ = launcher.Cancel(ctx, d.dir, running)
	return out, nil
}

// events reads the job's eventlog, and with follow reads it again between
// naps until the job is inactive.
func (d *direct) events(ctx context.Context, id fluid.ID, follow bool, emit func(eventlog.Event) error) error {
	seen := 0
	for {
		var evs []eventlog.Event
		var done bool
		err := d.with(false, func(tx *store.Tx) error {
			var err error
			evs, done, err = state.NewEvents(tx, id, seen)
			return err
		})
		if err != nil {
			return err
		}
		for _, e := range evs {
			if err := emit(e); err != nil {
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

func (d *direct) queues() (api.QueueInfo, error) {
	var qi *api.QueueInfo
	err := d.with(false, func(tx *store.Tx) error {
		var err error
		qi, err = state.CountedQueues(tx)
		return err
	})
	if err != nil {
		return api.QueueInfo{}, err
	}
	return *qi, nil
}

// waitQueues on the direct path reads the store between naps: nothing
// moves until a loop starts, but one may.
func waitQueues(ctx context.Context, d *direct, w api.QueueWait, emit func(api.QueueCounts) error) (api.QueueCounts, error) {
	for {
		qi, err := d.queues()
		if err != nil {
			return api.QueueCounts{}, err
		}
		names, err := w.Names(qi.Set)
		if err != nil {
			return api.QueueCounts{}, api.Wire(err)
		}
		c := qi.Total(names)
		if err := emit(c); err != nil {
			return c, err
		}
		if w.Done(c) {
			return c, nil
		}
		select {
		case <-ctx.Done():
			return c, ctx.Err()
		case <-time.After(pollInterval):
		}
	}
}
