package client

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/fluid"
)

// auto picks the path for every call: the socket while a loop serves it,
// else the store. A loop that is starting holds the store before its
// socket answers, so a busy store is retried — through whichever path
// opens first — until the timeout.
type auto struct {
	sock    *socket
	direct  *direct
	timeout time.Duration
	// unserved: the last call was answered by the store, no loop serving
	// (see Unserved).
	unserved atomic.Bool
}

// lockWait is how long one direct attempt waits for the store's lock
// before checking the socket again.
const lockWait = 100 * time.Millisecond

func (a *auto) roundTrip(ctx context.Context, x *exchange) error {
	switch x.spec.Name {
	case api.Events.Name:
		return a.events(ctx, x)
	case api.Wait.Name:
		return a.wait(ctx, x)
	case api.WaitAll.Name:
		return a.waitAll(ctx, x)
	}
	return a.pick(ctx, x)
}

func (a *auto) pick(ctx context.Context, x *exchange) error {
	deadline := time.Now().Add(a.timeout)
	for {
		// Try the socket first: when no loop listens, the dial fails
		// before anything is sent, and the store is used instead.
		err := a.sock.roundTrip(ctx, x)
		if !errors.Is(err, errNotServing) {
			a.unserved.Store(false)
			return err
		}
		d := *a.direct
		d.timeout = lockWait
		err = d.roundTrip(ctx, x)
		if !errors.Is(err, ErrUnavailable) {
			a.unserved.Store(true)
			return err
		}
		if time.Now().After(deadline) {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// events follows through whichever path serves, and switches path when a
// loop starts or stops, without repeating an event.
func (a *auto) events(ctx context.Context, x *exchange) error {
	follow := x.params.(api.EventsParams).Follow
	seen, done := 0, 0
	line := x.line
	y := *x
	y.line = func(v any) error {
		seen++
		if seen <= done {
			return nil
		}
		return line(v)
	}
	for {
		done = seen
		seen = 0
		err := a.pick(ctx, &y)
		// A loop that stopped or started mid-follow: carry on by the
		// other path. One that does not answer is not waited for again.
		var silent *NoAnswerError
		if follow && errors.Is(err, ErrUnavailable) && !errors.As(err, &silent) && ctx.Err() == nil {
			continue
		}
		return err
	}
}

// wait asks a loop to wait (one request, answered with the summary),
// and when none serves, or the one that did stops meanwhile, follows the
// job's events by whichever path serves, then reads the job.
func (a *auto) wait(ctx context.Context, x *exchange) error {
	err := a.sock.roundTrip(ctx, x)
	var silent *NoAnswerError
	if err == nil || errors.As(err, &silent) || ctx.Err() != nil ||
		!errors.Is(err, errNotServing) && !errors.Is(err, ErrUnavailable) {
		return err
	}
	id := x.params.(api.IDParams).ID
	if _, err := call(ctx, a, api.Events, api.EventsParams{ID: id, Follow: true}, func(eventlog.Event) error { return nil }); err != nil {
		return err
	}
	info, err := call(ctx, a, api.Job, api.IDParams{ID: id}, nil)
	if err != nil {
		return err
	}
	reflect.ValueOf(x.result).Elem().Set(reflect.ValueOf(info.Summary))
	return nil
}

// waitAll asks a loop to wait for all the jobs (one request, a summary
// streamed as each ends), and when none serves, or the one that did
// stops meanwhile, waits for those not yet heard of one by one, by
// whichever path serves.
func (a *auto) waitAll(ctx context.Context, x *exchange) error {
	ids := x.params.(api.IDsParams).IDs
	heard := 0
	y := *x
	y.line = func(v any) error {
		heard++
		return x.line(v)
	}
	err := a.sock.roundTrip(ctx, &y)
	var silent *NoAnswerError
	if err == nil || errors.As(err, &silent) || ctx.Err() != nil ||
		!errors.Is(err, errNotServing) && !errors.Is(err, ErrUnavailable) {
		return err
	}
	return waitEach(ctx, a, ids[heard:], func(s api.JobSummary) error { return x.line(s) })
}

// waitEach waits for the jobs one after another, in order.
func waitEach(ctx context.Context, t transport, ids []fluid.ID, emit func(api.JobSummary) error) error {
	for _, id := range ids {
		s, err := call(ctx, t, api.Wait, api.IDParams{ID: id}, nil)
		if err != nil {
			return fmt.Errorf("%s: %w", id, err)
		}
		if err := emit(s); err != nil {
			return err
		}
	}
	return nil
}
