// Package client is the one way the commands reach an instance: over
// fluxsched's socket while the loop runs, or straight to the store while
// it does not ("submit now, schedule later"). A command never knows which
// it got: both transports serve every entry of the api table, the direct
// one with the very state functions the server calls, and both return
// errors in the form the socket gives them (api.Wire).
package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/fluid"
)

// Client is an instance, as the commands see it. Every method is one
// entry of the api table; identities come from the connection (the
// socket's peer credentials, or the process's own uid on the direct
// path), never from an argument.
type Client interface {
	// Submit stores jobs (all or none) and returns their ids.
	Submit(ctx context.Context, jobs []api.SubmitJob) ([]fluid.ID, error)
	// Jobs lists job summaries, newest first within each group.
	Jobs(ctx context.Context, q api.JobsQuery) ([]api.JobSummary, error)
	// Job returns one job whole.
	Job(ctx context.Context, id fluid.ID) (*api.JobInfo, error)
	// Cancel raises a cancel exception on each job; the result has one
	// entry per id (nil when it worked).
	Cancel(ctx context.Context, ids []fluid.ID, note string) ([]error, error)
	// Urgency sets a pending job's urgency.
	Urgency(ctx context.Context, id fluid.ID, urgency int) error
	// Events calls fn with each event of the job's eventlog in order; with
	// follow it then waits for more until the job is inactive (or fn
	// returns an error, or ctx ends).
	Events(ctx context.Context, id fluid.ID, follow bool, fn func(eventlog.Event) error) error
	// Wait blocks until the job is inactive and returns its summary.
	Wait(ctx context.Context, id fluid.ID) (*api.JobSummary, error)
	// Stats counts jobs per state and per result (fluxq stats).
	Stats(ctx context.Context) (*api.JobCounts, error)

	// Resources returns the instance's resources and their status.
	Resources(ctx context.Context) (*api.ResourceInfo, error)
	// Drain takes ranks out of scheduling with a reason (fluxres drain);
	// force replaces the reason of ranks already drained.
	Drain(ctx context.Context, ranks string, reason string, force bool) error
	// Undrain returns ranks to scheduling.
	Undrain(ctx context.Context, ranks string) error

	// Queues returns the queues: configuration, state and job counts.
	Queues(ctx context.Context) (*api.QueueInfo, error)
	// ChangeQueues enables, disables, starts or stops queues (instance
	// owner only) and returns their state after.
	ChangeQueues(ctx context.Context, c api.QueueChange) (*api.QueueInfo, error)
	// WaitQueues waits for a queue, or the instance, to drain or become
	// idle; progress hears the counts as they change.
	WaitQueues(ctx context.Context, w api.QueueWait, progress func(api.QueueCounts)) (api.QueueCounts, error)

	// Reserve serves a reservation request (create, extend, release,
	// reclaim); rejections are *reservation.Error with their PMIx status.
	Reserve(ctx context.Context, p api.ReserveParams) (*api.ReservationView, error)
	// Reservations lists live reservations (all of them with all) and
	// every node's session.
	Reservations(ctx context.Context, all bool) (*api.ReservationList, error)
	// ToolEvents calls fn with the timeout warnings directed to the
	// calling tool, then, with follow, with each new one until ctx ends.
	ToolEvents(ctx context.Context, follow bool, fn func(api.ToolEvent) error) error
	// AddSpares registers spare nodes; RemoveNodes takes them out of the
	// scheduler's pool.
	AddSpares(ctx context.Context, p api.SpareParams) ([]string, error)
	RemoveNodes(ctx context.Context, hosts string) error

	// Close releases the connection or the store.
	Close() error
}

// Errors every transport returns the same way.
var (
	// ErrUnavailable: the instance could not be reached within the
	// timeout (exit 69).
	ErrUnavailable = api.ErrUnavailable
	// ErrNeedsInstance: reservations are answered by the scheduler, which
	// runs in fluxsched.
	ErrNeedsInstance = api.ErrNeedsInstance
	// ErrOwnersSocket: the socket cannot be reached by this user (it is
	// 0600, or in a folder closed to it): the instance lets no guest in,
	// running or not, and nothing was sent.
	ErrOwnersSocket = api.Errorf(api.CodePermission, "permission denied: only the instance owner can use this instance (fluxsched lets no guest in, or is not running)")
	// ErrOwnersStore: no fluxsched serves the instance, and the store,
	// the only other way in, is the instance owner's alone (0600): a
	// guest can do nothing until fluxsched runs again. Said so, rather
	// than as the file's EACCES, which reads as a broken installation.
	ErrOwnersStore = api.Errorf(api.CodePermission, "fluxsched is not running, and until it does only the instance owner can use this instance (its store is theirs alone: permission denied)")
)

// transport is one way to the instance: it carries one exchange.
type transport interface {
	roundTrip(ctx context.Context, x *exchange) error
}

// exchange is one call of a table entry, its types erased: params is the
// entry's P, result a *R to fill, and line receives each stream line (an
// S from the direct path, an *api.Reply from the socket).
type exchange struct {
	spec   api.Spec
	params any
	result any
	line   func(any) error
}

// call makes one call of entry m through t.
func call[P, R, S any](ctx context.Context, t transport, m api.Method[P, R, S], p P, each func(S) error) (R, error) {
	var r R
	x := &exchange{spec: m.Spec, params: p, result: &r, line: func(v any) error {
		var s S
		switch v := v.(type) {
		case S:
			s = v
		case *api.Reply:
			var err error
			if s, err = api.StreamValue[S](v); err != nil {
				return err
			}
		default:
			return errors.New("bad stream line")
		}
		if each == nil {
			return nil
		}
		return each(s)
	}}
	err := t.roundTrip(ctx, x)
	return r, err
}

// conn is a Client over a transport (auto, in every command).
type conn struct{ t transport }

func (c *conn) Submit(ctx context.Context, jobs []api.SubmitJob) ([]fluid.ID, error) {
	return call(ctx, c.t, api.Submit, api.SubmitParams{Jobs: jobs}, nil)
}

func (c *conn) Jobs(ctx context.Context, q api.JobsQuery) ([]api.JobSummary, error) {
	return call(ctx, c.t, api.Jobs, q, nil)
}

func (c *conn) Job(ctx context.Context, id fluid.ID) (*api.JobInfo, error) {
	return ptr(call(ctx, c.t, api.Job, api.IDParams{ID: id}, nil))
}

func (c *conn) Cancel(ctx context.Context, ids []fluid.ID, note string) ([]error, error) {
	res, err := call(ctx, c.t, api.Cancel, api.CancelParams{IDs: ids, Note: note}, nil)
	if err != nil {
		return nil, err
	}
	errs := make([]error, len(ids))
	for i := range ids {
		if i < len(res) && res[i] != nil {
			errs[i] = api.Decode(res[i])
		}
	}
	return errs, nil
}

func (c *conn) Urgency(ctx context.Context, id fluid.ID, urgency int) error {
	_, err := call(ctx, c.t, api.Urgency, api.UrgencyParams{ID: id, Urgency: urgency}, nil)
	return err
}

func (c *conn) Events(ctx context.Context, id fluid.ID, follow bool, fn func(eventlog.Event) error) error {
	_, err := call(ctx, c.t, api.Events, api.EventsParams{ID: id, Follow: follow}, fn)
	return err
}

func (c *conn) Wait(ctx context.Context, id fluid.ID) (*api.JobSummary, error) {
	return ptr(call(ctx, c.t, api.Wait, api.IDParams{ID: id}, nil))
}

func (c *conn) Stats(ctx context.Context) (*api.JobCounts, error) {
	return ptr(call(ctx, c.t, api.Stats, api.None{}, nil))
}

func (c *conn) Resources(ctx context.Context) (*api.ResourceInfo, error) {
	return ptr(call(ctx, c.t, api.Resources, api.None{}, nil))
}

func (c *conn) Drain(ctx context.Context, ranks, reason string, force bool) error {
	_, err := call(ctx, c.t, api.Drain, api.DrainParams{Ranks: ranks, Reason: reason, Force: force}, nil)
	return err
}

func (c *conn) Undrain(ctx context.Context, ranks string) error {
	_, err := call(ctx, c.t, api.Undrain, api.DrainParams{Ranks: ranks}, nil)
	return err
}

func (c *conn) Queues(ctx context.Context) (*api.QueueInfo, error) {
	return ptr(call(ctx, c.t, api.Queues, api.None{}, nil))
}

func (c *conn) ChangeQueues(ctx context.Context, ch api.QueueChange) (*api.QueueInfo, error) {
	return ptr(call(ctx, c.t, api.ChangeQueues, ch, nil))
}

func (c *conn) WaitQueues(ctx context.Context, w api.QueueWait, progress func(api.QueueCounts)) (api.QueueCounts, error) {
	var last api.QueueCounts
	final, err := call(ctx, c.t, api.WaitQueues, w, func(qc api.QueueCounts) error {
		last = qc
		if progress != nil {
			progress(qc)
		}
		return nil
	})
	if err != nil {
		return last, err
	}
	return final, nil
}

func (c *conn) Reserve(ctx context.Context, p api.ReserveParams) (*api.ReservationView, error) {
	return ptr(call(ctx, c.t, api.Reserve, p, nil))
}

func (c *conn) Reservations(ctx context.Context, all bool) (*api.ReservationList, error) {
	return ptr(call(ctx, c.t, api.Reservations, api.ReservationsParams{All: all}, nil))
}

func (c *conn) ToolEvents(ctx context.Context, follow bool, fn func(api.ToolEvent) error) error {
	_, err := call(ctx, c.t, api.ToolEvents, api.ToolEventsParams{Follow: follow}, fn)
	return err
}

func (c *conn) AddSpares(ctx context.Context, p api.SpareParams) ([]string, error) {
	return call(ctx, c.t, api.AddSpares, p, nil)
}

func (c *conn) RemoveNodes(ctx context.Context, hosts string) error {
	_, err := call(ctx, c.t, api.RemoveNodes, api.SpareParams{Hosts: hosts}, nil)
	return err
}

func (c *conn) Close() error { return nil }

// ptr is a result by pointer, nil with an error, as the commands expect.
func ptr[R any](r R, err error) (*R, error) {
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// Call calls any entry of the table through c: a request added to the
// table needs no method of its own on Client. A Client that is not one
// of this package's (a command's test fake) serves its methods, and the
// entries its Serve method answers, if it has one (EntryServer).
func Call[P, R, S any](ctx context.Context, c Client, m api.Method[P, R, S], p P, each func(S) error) (R, error) {
	var r R
	switch c := c.(type) {
	case *conn:
		return call(ctx, c.t, m, p, each)
	case EntryServer:
		v, err := c.Serve(ctx, m.Spec, p, func(line any) error {
			if each == nil {
				return nil
			}
			return each(line.(S))
		})
		if v != nil {
			r, _ = v.(R)
		}
		return r, err
	}
	return r, fmt.Errorf("%s: not served by this client", m.Name)
}

// EntryServer is a Client of a command's tests that answers entries of
// the table by name: params of the entry's type in, stream lines and the
// result out.
type EntryServer interface {
	Serve(ctx context.Context, spec api.Spec, params any, each func(line any) error) (any, error)
}
