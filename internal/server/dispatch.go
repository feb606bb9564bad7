package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/state"
	_ "github.com/fluxq/fluxq/internal/state/jobkinds" // the job manager's errors keep their kinds on the wire
	"github.com/fluxq/fluxq/internal/store"
)

// caller is one request's caller and call.
type caller struct {
	peer
	call api.Call
	as   state.Caller
}

// errGone ends a stream with no final line: its caller hung up, or the
// server is stopping (a follower then carries on by the other path).
var errGone = errors.New("the caller is gone")

// handler answers one method: it decodes the parameters and writes the
// final line (or returns an error for dispatch to write).
type handler func(ctx context.Context, s *Server, c *caller, params json.RawMessage, w *writer) error

// handlers answer the methods that are not plain reads of the store:
// those that change something, in the loop, and the streams.
var handlers = map[string]handler{}

// handle binds a table entry to what answers it, with its types: emit
// sends a stream line.
func handle[P, R, S any](m api.Method[P, R, S], fn func(ctx context.Context, s *Server, c *caller, p P, emit func(S) error) (R, error)) {
	handlers[m.Name] = func(ctx context.Context, s *Server, c *caller, raw json.RawMessage, w *writer) error {
		var p P
		if err := decode(m.Name, raw, &p); err != nil {
			return err
		}
		emit := func(v S) error {
			line, err := api.StreamLine(v)
			if err != nil {
				return err
			}
			if line.Event != nil {
				err = w.send(line)
			} else {
				// Progress is json.Marshal's output, compact and
				// HTML-escaped already: the line json.Encoder would
				// write, without its second scan of it.
				err = w.sendLine(api.AppendProgressLine(nil, line.Progress), false)
			}
			if err != nil {
				return errGone
			}
			return nil
		}
		r, err := fn(ctx, s, c, p, emit)
		if err != nil {
			return err
		}
		w.result(r)
		return nil
	}
}

func decode(method string, raw json.RawMessage, p any) error {
	if len(raw) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, p); err != nil {
		return api.Errorf(api.CodeBadRequest, "%s: bad parameters: %v", method, err)
	}
	return nil
}

// dispatch answers a request by its entry in the table: who may call it,
// then the state function that reads it, or its handler.
func (s *Server) dispatch(ctx context.Context, who peer, req api.Call, w *writer) {
	err := s.answer(ctx, who, req, w)
	if err != nil && !errors.Is(err, errGone) {
		w.fail(err)
	}
}

func (s *Server) answer(ctx context.Context, who peer, req api.Call, w *writer) error {
	spec, ok := api.Lookup(req.Method)
	if !ok {
		return api.Errorf(api.CodeBadRequest, "unknown method %q", req.Method)
	}
	owner := who.uid == s.Owner
	if err := spec.Access.Check(owner); err != nil {
		return err
	}
	c := &caller{peer: who, call: req, as: state.Caller{UID: who.uid, Owner: owner, JobsDir: s.JobsDir}}
	if r, ok := state.ReaderOf(spec.Name); ok {
		var v any
		err := s.Store.View(func(tx *store.Tx) error {
			var err error
			v, err = r.Run(tx, c.as, func(p any) error { return decode(spec.Name, req.Params, p) })
			return err
		})
		if err != nil {
			return err
		}
		w.result(v)
		return nil
	}
	h, ok := handlers[spec.Name]
	if !ok {
		return fmt.Errorf("%s: not served", spec.Name)
	}
	return h(ctx, s, c, req.Params, w)
}

func init() {
	handle(api.Submit, submit)
	handle(api.Cancel, func(ctx context.Context, s *Server, c *caller, p api.CancelParams, _ func(api.None) error) (api.CancelResult, error) {
		out := make(api.CancelResult, len(p.IDs))
		_, err := s.do(ctx, func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
			for i, id := range p.IDs {
				if err := jm.Cancel(tx, id, c.uid, p.Note); err != nil {
					out[i] = api.Encode(err)
				}
			}
			return nil, nil
		})
		return out, err
	})
	handle(api.Purge, func(ctx context.Context, s *Server, c *caller, p api.PurgeParams, _ func(api.None) error) (api.PurgeResult, error) {
		var purged []fluid.ID
		v, err := s.do(ctx, func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
			res, ids, err := jm.Purge(tx, c.uid, p)
			purged = ids
			return res, err
		})
		if err != nil {
			return api.PurgeResult{}, err
		}
		// Committed: the folders go before the answer, so that what the
		// caller sees next is what the purge left. One that cannot go is
		// logged; the next start removes it (daemon, orphan folders).
		if err := state.RemoveJobFolders(s.JobsDir, purged); err != nil && s.Log != nil {
			s.Log.Warn("removing purged job folders", "err", err)
		}
		return v.(api.PurgeResult), nil
	})
	handle(api.Urgency, func(ctx context.Context, s *Server, c *caller, p api.UrgencyParams, _ func(api.None) error) (api.None, error) {
		_, err := s.do(ctx, func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
			return nil, jm.Urgency(tx, p.ID, c.uid, p.Urgency)
		})
		return api.None{}, err
	})
	handle(api.Events, func(ctx context.Context, s *Server, c *caller, p api.EventsParams, emit func(eventlog.Event) error) (api.None, error) {
		return api.None{}, s.follow(ctx, c, p.ID, p.Follow, emit)
	})
	handle(api.Wait, func(ctx context.Context, s *Server, c *caller, p api.IDParams, _ func(api.None) error) (api.JobSummary, error) {
		return s.wait(ctx, c, p.ID)
	})
	// Its stream lines are the store's encoding of api.JobSummary, written
	// as they are (waitAll): not through handle, which encodes each value.
	handlers[api.WaitAll.Name] = func(ctx context.Context, s *Server, c *caller, raw json.RawMessage, w *writer) error {
		var p api.IDsParams
		if err := decode(api.WaitAll.Name, raw, &p); err != nil {
			return err
		}
		if err := s.waitAll(ctx, c, p.IDs, w); err != nil {
			return err
		}
		w.result(api.None{})
		return nil
	}
	handle(api.Reap, func(ctx context.Context, s *Server, c *caller, p api.ReapParams, _ func(api.None) error) ([]fluid.ID, error) {
		// The job manager holds no inactive job: the mark is the store's.
		v, err := s.do(ctx, func(tx *store.Tx, _ *jobmgr.Manager) (any, error) {
			return state.Reap(tx, c.uid, p)
		})
		if err != nil {
			return nil, err
		}
		return v.([]fluid.ID), nil
	})
	handle(api.Drain, func(ctx context.Context, s *Server, c *caller, p api.DrainParams, _ func(api.None) error) (api.None, error) {
		return api.None{}, s.drain(ctx, func(tx *store.Tx, jm *jobmgr.Manager) error {
			_, err := state.Drain(tx, p.Ranks, p.Reason, p.Force, jm.Now())
			return err
		})
	})
	handle(api.Undrain, func(ctx context.Context, s *Server, c *caller, p api.DrainParams, _ func(api.None) error) (api.None, error) {
		return api.None{}, s.drain(ctx, func(tx *store.Tx, _ *jobmgr.Manager) error {
			_, err := state.Undrain(tx, p.Ranks)
			return err
		})
	})
	handle(api.Queues, func(ctx context.Context, s *Server, c *caller, _ api.None, _ func(api.None) error) (api.QueueInfo, error) {
		qi, err := s.queues(ctx)
		if err != nil {
			return api.QueueInfo{}, err
		}
		return *qi, nil
	})
	handle(api.ChangeQueues, func(ctx context.Context, s *Server, c *caller, ch api.QueueChange, _ func(api.None) error) (api.QueueInfo, error) {
		v, err := s.do(ctx, func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
			qi, err := state.ChangedQueues(tx, ch)
			if err != nil {
				return nil, err
			}
			jm.SetQueues(qi.Set, qi.States)
			return countQueues(qi, jm), nil
		})
		if err != nil {
			return api.QueueInfo{}, err
		}
		return *v.(*api.QueueInfo), nil
	})
	handle(api.WaitQueues, waitQueues)
	handle(api.Reserve, reserve)
	handle(api.ToolEvents, toolEvents)
	handle(api.AddSpares, func(ctx context.Context, s *Server, c *caller, p api.SpareParams, _ func(api.None) error) ([]string, error) {
		v, err := s.do(ctx, func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
			return jm.AddSpares(tx, p.Hosts, p.Cores, p.GPUs)
		})
		if err != nil {
			return nil, err
		}
		names, _ := v.([]string)
		return names, nil
	})
	handle(api.RemoveNodes, func(ctx context.Context, s *Server, c *caller, p api.SpareParams, _ func(api.None) error) (api.None, error) {
		_, err := s.do(ctx, func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
			names, err := state.ExpandHosts(p.Hosts)
			if err != nil {
				return nil, err
			}
			return nil, jm.RemoveSpares(tx, names)
		})
		return api.None{}, err
	})
}
