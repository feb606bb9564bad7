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
	"github.com/fluxq/fluxq/internal/reservation"
	"github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
	"github.com/fluxq/fluxq/internal/writes"
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

// roundTrip answers an exchange with the function of its entry that the
// server runs too: a read (state.ReaderOf) or a write (writes.Of); or else
// with the direct path's own answer (locals).
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
	} else if w, ok := writes.Of(x.spec.Name); ok {
		v, err = d.write(ctx, w, x.params)
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

// local is the direct path's answer to an entry that is neither a read
// of the store nor a write: a stream with no loop to wait for, or the
// queues counted from the store rather than by a loop's job manager.
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
	serve(api.Queues, func(_ context.Context, d *direct, _ api.None, _ func(api.None) error) (api.QueueInfo, error) {
		return d.queues()
	})
	serve(api.WaitQueues, waitQueues)
	// Only a running fluxsched's exec service reaches the agents of other
	// machines; here a job's output is read from its folder.
	serve(api.JobOutput, func(context.Context, *direct, api.OutputParams, func(api.None) error) (api.Outputs, error) {
		return api.Outputs{}, api.ErrOutputLocal
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
}

// write runs a write of the table in a store transaction of its own, with
// an offline job manager of its own (writes.Write.Manager), then what the
// write left for after the commit. What fails after it (a folder, an exec
// agent that cannot be asked) is left to the next fluxsched start.
func (d *direct) write(ctx context.Context, w *writes.Write, params any) (any, error) {
	if w.NeedsLoop() {
		return nil, ErrNeedsInstance
	}
	run, err := w.Bind(func(p any) error {
		reflect.ValueOf(p).Elem().Set(reflect.ValueOf(params))
		return nil
	})
	if err != nil {
		return nil, err
	}
	var v any
	var turn *writes.Turn
	err = d.with(true, func(tx *store.Tx) error {
		jm, err := w.Manager(tx, uint32(os.Geteuid()), d.now)
		if err != nil {
			return err
		}
		c := writes.Caller{Caller: d.caller(), StateDir: d.dir}
		if w.Identifies(d.claim != "" || d.asScheduler) {
			who, err := d.who(tx)
			if err != nil {
				return err
			}
			c.Who = &who
		}
		turn = &writes.Turn{Tx: tx, JM: jm, Caller: c}
		if v, err = run(turn); err != nil {
			return err
		}
		return jm.SaveSummaries(tx)
	})
	if err != nil {
		return nil, err
	}
	_ = turn.Committed(ctx)
	return v, nil
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
