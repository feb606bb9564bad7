package server

import (
	"context"
	"fmt"
	"syscall"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/diskspace"
	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/reservation"
	"github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
	"github.com/fluxq/fluxq/internal/writes"
)

// The answers that need the loop but change nothing: streams, which wait
// for its turns, and the queues' counts, which the job manager keeps.
// Changes are internal/writes', run in the loop's turns (dispatch.go).

// follow streams a job's events, with follow until it is inactive,
// reading the store after every turn that posted events.
func (s *Server) follow(ctx context.Context, c *caller, id fluid.ID, follow bool, emit func(eventlog.Event) error) error {
	if err := s.Store.View(func(tx *store.Tx) error { return state.MayFollow(tx, c.as, id) }); err != nil {
		return err
	}
	seen := 0
	for {
		changed := s.Loop.JobChanged(id)
		var evs []eventlog.Event
		var done bool
		err := s.Store.View(func(tx *store.Tx) error {
			var err error
			evs, done, err = state.NewEvents(tx, id, seen)
			return err
		})
		if err != nil {
			return err
		}
		seen += len(evs)
		for _, e := range evs {
			if err := emit(e); err != nil {
				return err
			}
		}
		if done || !follow {
			return nil
		}
		select {
		case <-ctx.Done():
			return errGone
		case <-changed:
		}
	}
}

// wait answers a job's summary once it is inactive, asking after every
// turn that touched it.
func (s *Server) wait(ctx context.Context, c *caller, id fluid.ID) (api.JobSummary, error) {
	if err := s.Store.View(func(tx *store.Tx) error { return state.MayFollow(tx, c.as, id) }); err != nil {
		return api.JobSummary{}, err
	}
	for {
		changed := s.Loop.JobChanged(id)
		var done bool
		err := s.Store.View(func(tx *store.Tx) error {
			var err error
			done, err = state.Ended(tx, id)
			return err
		})
		if err != nil {
			return api.JobSummary{}, err
		}
		if done {
			break
		}
		select {
		case <-ctx.Done():
			return api.JobSummary{}, errGone
		case <-changed:
		}
	}
	var sum *api.JobSummary
	err := s.Store.View(func(tx *store.Tx) error {
		var err error
		sum, err = state.EndSummary(tx, id)
		return err
	})
	if err != nil {
		return api.JobSummary{}, err
	}
	return *sum, nil
}

// waitAll streams each job's summary once it is inactive, in the order
// given. It waits on the first job not yet ended and, each time that one
// changes, sends every job ended from there on in one read and one write:
// jobs that end in order cost one read between them, not a request each.
// A line carries the stored summary's bytes as they are, never decoded to
// be encoded again.
func (s *Server) waitAll(ctx context.Context, c *caller, ids []fluid.ID, w *writer) error {
	err := s.Store.View(func(tx *store.Tx) error {
		for _, id := range ids {
			if err := state.MayFollow(tx, c.as, id); err != nil {
				return fmt.Errorf("%s: %w", id, err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	var lines []byte
	for i := 0; i < len(ids); {
		changed := s.Loop.JobChanged(ids[i])
		first := i
		lines = lines[:0]
		err := s.Store.View(func(tx *store.Tx) error {
			for ; i < len(ids); i++ {
				done, err := state.Ended(tx, ids[i])
				if err != nil || !done {
					return err
				}
				if lines, err = state.AppendEndLine(tx, ids[i], lines); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(lines) > 0 && w.sendLine(lines, false) != nil {
			return errGone
		}
		if i > first {
			continue // ask again at once: the next one may have ended too
		}
		select {
		case <-ctx.Done():
			return errGone
		case <-changed:
		}
	}
	return nil
}

// queues reads the queues with the job manager's counts, which know the
// alloc requests outstanding.
func (s *Server) queues(ctx context.Context) (*api.QueueInfo, error) {
	v, err := s.do(ctx, func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
		qi, err := state.LoadQueues(tx)
		if err != nil {
			return nil, err
		}
		return writes.CountQueues(qi, jm), nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*api.QueueInfo), nil
}

// waitQueues answers flux queue drain and idle: a progress line whenever
// the counts change, and the final counts once the wait is satisfied.
func waitQueues(ctx context.Context, s *Server, _ *caller, q api.QueueWait, emit func(api.QueueCounts) error) (api.QueueCounts, error) {
	// Only a restart changes the configuration: the names are resolved
	// once, not at every turn the wait sees.
	var names []string
	err := s.Store.View(func(tx *store.Tx) error {
		set, err := state.QueueSet(tx)
		if err == nil {
			names, err = q.Names(set)
		}
		return err
	})
	if err != nil {
		return api.QueueCounts{}, err
	}
	var last *api.QueueCounts
	for {
		changed := s.Loop.Changed()
		v, err := s.do(ctx, func(_ *store.Tx, jm *jobmgr.Manager) (any, error) {
			return api.QueueCounts(jm.Counts(names)), nil
		})
		if err != nil {
			return api.QueueCounts{}, err
		}
		c := v.(api.QueueCounts)
		if q.Done(c) {
			return c, nil
		}
		if last == nil || *last != c {
			if err := emit(c); err != nil {
				return c, err
			}
			last = &c
		}
		select {
		case <-ctx.Done():
			return c, errGone
		case <-changed:
		}
	}
}

// identify says who the caller is for the reservation rules, from its
// credentials: a FLUXQ_JOB_ID claim counts only if the caller's process
// session is that job's shell. It reads /proc, the job's folder and the
// user database, so it runs in a read transaction of its own, outside
// the loop's turns.
func (s *Server) identify(c *caller) (reservation.Requester, error) {
	var me reservation.Requester
	err := s.Store.View(func(tx *store.Tx) error {
		var err error
		me, err = state.Identify(tx, s.JobsDir, c.uid, int(c.pid), c.call.Job, c.call.AsScheduler, c.as.Owner)
		return err
	})
	return me, err
}

// toolEvents streams the warnings directed to the calling tool.
func toolEvents(ctx context.Context, s *Server, c *caller, p api.ToolEventsParams, emit func(api.ToolEvent) error) (api.None, error) {
	me, err := s.identify(c)
	if err != nil {
		return api.None{}, err
	}
	user := me.NS.Tool
	var seen uint64
	for {
		changed := s.Loop.Changed()
		var evs []api.ToolEvent
		err := s.Store.View(func(tx *store.Tx) error {
			var err error
			evs, err = state.ToolEvents(tx, user, seen)
			return err
		})
		if err != nil {
			return api.None{}, err
		}
		for _, e := range evs {
			if err := emit(e); err != nil {
				return api.None{}, err
			}
			seen = e.Seq
		}
		if !p.Follow {
			return api.None{}, nil
		}
		select {
		case <-ctx.Done():
			return api.None{}, errGone
		case <-changed:
		}
	}
}

// guestRoom refuses a guest's submission that would leave the store's
// filesystem less than its reserve (internal/diskspace): fluxsched
// stores a guest's jobs with root's rights, and a guest must not fill
// the state directory's filesystem through it (a guest may hold 10,000
// jobs of up to 1 MiB of jobspec each). The estimate is generous: the
// jobspecs twice (bbolt copies a page it changes) and a page per job for
// its eventlog and summary. A no-space error: exit 74, as a full store.
func (s *Server) guestRoom(jobspecs uint64, jobs int) error {
	if s.Store == nil {
		return nil
	}
	if ok, reserve := diskspace.RoomPath(s.Store.Path(), 2*jobspecs+4096*uint64(jobs)); !ok {
		return &api.Error{Code: api.CodeSystem, Errno: int(syscall.ENOSPC),
			Message: fmt.Sprintf("the filesystem of the store %s keeps %s free for the instance: a guest's jobs are not stored until there is room", s.Store.Path(), jobspec.FormatSize(reserve))}
	}
	return nil
}
