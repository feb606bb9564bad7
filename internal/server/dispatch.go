package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	gojson "github.com/goccy/go-json"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/gcpace"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
	"github.com/fluxq/fluxq/internal/writes"
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

// handlers answer the methods that are neither plain reads of the store
// nor writes (internal/writes): the streams, and the reads that need the
// loop's counts.
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
	// The faster decoder: a submission's parameters are every job's
	// jobspec, which encoding/json scanned at 63 MB/s against its 360
	// (1,000 jobspecs of 2 KB: 35 ms against 6).
	if err := gojson.Unmarshal(raw, p); err != nil {
		return api.Errorf(api.CodeBadRequest, "%s: bad parameters: %v", method, err)
	}
	return nil
}

// dispatch answers a request by its entry in the table: who may call it,
// then the state function that reads it, the write that changes what it
// asks, or its handler.
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
	c := &caller{peer: who, call: req, as: state.Caller{UID: who.uid, Owner: owner, JobsDir: s.JobsDir, RemoteOutput: s.Output != nil}}
	if r, ok := state.ReaderOf(spec.Name); ok {
		if spec.Name == api.Jobs.Name {
			// A listing's garbage is of the order of the live heap,
			// from its read to the last line sent.
			defer gcpace.Burst()()
		}
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
	if wr, ok := writes.Of(spec.Name); ok {
		if wr.Bursts() {
			defer gcpace.Burst()()
		}
		return s.write(ctx, c, wr, req.Params, w)
	}
	h, ok := handlers[spec.Name]
	if !ok {
		return fmt.Errorf("%s: not served", spec.Name)
	}
	return h(ctx, s, c, req.Params, w)
}

func init() {
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
	handle(api.Queues, func(ctx context.Context, s *Server, c *caller, _ api.None, _ func(api.None) error) (api.QueueInfo, error) {
		qi, err := s.queues(ctx)
		if err != nil {
			return api.QueueInfo{}, err
		}
		return *qi, nil
	})
	handle(api.WaitQueues, waitQueues)
	handle(api.ToolEvents, toolEvents)
}

// write runs a write of the table in one of the loop's turns: its
// parameters decoded and its caller identified before the turn, what it
// leaves for after the commit done before the answer.
func (s *Server) write(ctx context.Context, c *caller, wr *writes.Write, raw json.RawMessage, w *writer) error {
	run, err := wr.Bind(func(p any) error { return decode(wr.Name, raw, p) })
	if err != nil {
		return err
	}
	as := writes.Caller{Caller: c.as, StateDir: filepath.Dir(s.JobsDir)}
	if !c.as.Owner {
		as.MaxActive, as.Room = s.GuestMaxActive, s.guestRoom
	}
	if wr.Identifies(c.call.Job != "" || c.call.AsScheduler) {
		me, err := s.identify(c)
		if err != nil {
			return err
		}
		as.Who = &me
	}
	var turn *writes.Turn
	v, err := s.do(ctx, func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
		turn = &writes.Turn{Tx: tx, JM: jm, Caller: as}
		return run(turn)
	})
	if err != nil {
		return err
	}
	for _, err := range turn.Committed(ctx) {
		s.log().Warn("after "+wr.Name, "err", err)
	}
	w.result(v)
	return nil
}
