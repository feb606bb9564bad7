package client

import (
	"context"
	"errors"
	"time"

	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/state"
)

// auto picks the path for every call: the socket while a loop serves it,
// else the store. A loop that is starting holds the store before its
// socket answers, so a busy store is retried — through whichever path
// opens first — until the timeout.
type auto struct {
	sock    *socket
	direct  *direct
	timeout time.Duration
}

// lockWait is how long one direct attempt waits for the store's lock
// before checking the socket again.
const lockWait = 100 * time.Millisecond

func pick[T any](ctx context.Context, a *auto, viaSocket func(*socket) (T, error), viaDirect func(*direct) (T, error)) (T, error) {
	deadline := time.Now().Add(a.timeout)
	for {
		// Try the socket first: when no loop listens, the dial fails
		// before anything is sent, and the store is used instead.
		v, err := viaSocket(a.sock)
		if !errors.Is(err, errNotServing) {
			return v, err
		}
		d := *a.direct
		d.timeout = lockWait
		v, err = viaDirect(&d)
		if !errors.Is(err, ErrUnavailable) || time.Now().After(deadline) {
			return v, err
		}
		if ctx.Err() != nil {
			return v, ctx.Err()
		}
	}
}

func (a *auto) Submit(ctx context.Context, jobs []SubmitJob) ([]fluid.ID, error) {
	return pick(ctx, a, func(s *socket) ([]fluid.ID, error) { return s.Submit(ctx, jobs) },
		func(d *direct) ([]fluid.ID, error) { return d.Submit(ctx, jobs) })
}

func (a *auto) Jobs(ctx context.Context, q JobsQuery) ([]state.Summary, error) {
	return pick(ctx, a, func(s *socket) ([]state.Summary, error) { return s.Jobs(ctx, q) },
		func(d *direct) ([]state.Summary, error) { return d.Jobs(ctx, q) })
}

func (a *auto) Job(ctx context.Context, id fluid.ID) (*JobInfo, error) {
	return pick(ctx, a, func(s *socket) (*JobInfo, error) { return s.Job(ctx, id) },
		func(d *direct) (*JobInfo, error) { return d.Job(ctx, id) })
}

func (a *auto) Cancel(ctx context.Context, ids []fluid.ID, note string) ([]error, error) {
	return pick(ctx, a, func(s *socket) ([]error, error) { return s.Cancel(ctx, ids, note) },
		func(d *direct) ([]error, error) { return d.Cancel(ctx, ids, note) })
}

func (a *auto) Urgency(ctx context.Context, id fluid.ID, urgency int) error {
	_, err := pick(ctx, a, func(s *socket) (struct{}, error) { return struct{}{}, s.Urgency(ctx, id, urgency) },
		func(d *direct) (struct{}, error) { return struct{}{}, d.Urgency(ctx, id, urgency) })
	return err
}

// Events follows through whichever path serves, and switches path when a
// loop starts or stops, without repeating an event.
func (a *auto) Events(ctx context.Context, id fluid.ID, follow bool, fn func(eventlog.Event) error) error {
	seen, done := 0, 0
	skip := func(e eventlog.Event) error {
		seen++
		if seen <= done {
			return nil
		}
		return fn(e)
	}
	for {
		done = seen
		seen = 0
		_, err := pick(ctx, a, func(s *socket) (struct{}, error) { return struct{}{}, s.Events(ctx, id, follow, skip) },
			func(d *direct) (struct{}, error) { return struct{}{}, d.Events(ctx, id, follow, skip) })
		// A loop that stopped or started mid-follow: carry on by the
		// other path. One that does not answer is not waited for again.
		var silent *NoAnswerError
		if follow && errors.Is(err, ErrUnavailable) && !errors.As(err, &silent) && ctx.Err() == nil {
			continue
		}
		return err
	}
}

// Wait asks a loop to wait (one request, answered with the summary),
// and when none serves, or the one that did stops meanwhile, follows the
// job's events by whichever path serves, then reads the job.
func (a *auto) Wait(ctx context.Context, id fluid.ID) (*state.Summary, error) {
	s, err := a.sock.Wait(ctx, id)
	var silent *NoAnswerError
	if err == nil || errors.As(err, &silent) || ctx.Err() != nil ||
		!errors.Is(err, errNotServing) && !errors.Is(err, ErrUnavailable) {
		return s, err
	}
	if err := a.Events(ctx, id, true, func(eventlog.Event) error { return nil }); err != nil {
		return nil, err
	}
	info, err := a.Job(ctx, id)
	if err != nil {
		return nil, err
	}
	return &info.Summary, nil
}

func (a *auto) Stats(ctx context.Context) (*Stats, error) {
	return pick(ctx, a, func(s *socket) (*Stats, error) { return s.Stats(ctx) },
		func(d *direct) (*Stats, error) { return d.Stats(ctx) })
}

func (a *auto) Resources(ctx context.Context) (*Resources, error) {
	return pick(ctx, a, func(s *socket) (*Resources, error) { return s.Resources(ctx) },
		func(d *direct) (*Resources, error) { return d.Resources(ctx) })
}

func (a *auto) Drain(ctx context.Context, ranks, reason string, force bool) error {
	_, err := pick(ctx, a, func(s *socket) (struct{}, error) { return struct{}{}, s.Drain(ctx, ranks, reason, force) },
		func(d *direct) (struct{}, error) { return struct{}{}, d.Drain(ctx, ranks, reason, force) })
	return err
}

func (a *auto) Undrain(ctx context.Context, ranks string) error {
	_, err := pick(ctx, a, func(s *socket) (struct{}, error) { return struct{}{}, s.Undrain(ctx, ranks) },
		func(d *direct) (struct{}, error) { return struct{}{}, d.Undrain(ctx, ranks) })
	return err
}

func (a *auto) Close() error { return nil }
