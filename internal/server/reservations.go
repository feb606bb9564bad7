package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/fluxq/fluxq/internal/client"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/reservation"
	"github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// identify says who the caller is for the reservation rules, from its
// credentials: a FLUXQ_JOB_ID claim counts only if the caller's process
// session is that job's shell. It reads /proc, the job's folder and the
// user database, so it runs in a read transaction of its own, outside
// the loop's turns.
func (s *Server) identify(who peer, req client.Request) (reservation.Requester, error) {
	var me reservation.Requester
	err := s.Store.View(func(tx *store.Tx) error {
		var err error
		me, err = state.Identify(tx, s.JobsDir, who.uid, int(who.pid), req.Job, req.AsScheduler, who.uid == s.Owner)
		return err
	})
	return me, err
}

// reserve serves create, extend, release and reclaim, in one loop turn:
// it validates completely before it changes anything.
func (s *Server) reserve(ctx context.Context, who peer, req client.Request, w *writer) error {
	p, err := decode[client.ReserveParams](req)
	if err != nil {
		return err
	}
	rr, err := p.Request()
	if err != nil {
		return err
	}
	me, err := s.identify(who, req)
	if err != nil {
		return err
	}
	v, err := s.do(ctx, func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
		r, err := jm.Reserve(tx, rr, me, who.uid)
		if err != nil {
			return nil, err
		}
		return client.View(jm.Reservations(), r, jm.Alive), nil
	})
	if err != nil {
		return err
	}
	w.result(v)
	return nil
}

func (s *Server) reservations(req client.Request, w *writer) error {
	p, err := decode[client.ReservationsParams](req)
	if err != nil {
		return err
	}
	var out *client.ReservationList
	err = s.Store.View(func(tx *store.Tx) error {
		out, err = client.LoadReservations(tx, p.All)
		return err
	})
	if err != nil {
		return err
	}
	w.result(out)
	return nil
}

// toolEvents streams the warnings directed to the calling tool.
func (s *Server) toolEvents(ctx context.Context, who peer, req client.Request, w *writer) error {
	p, err := decode[client.ToolEventsParams](req)
	if err != nil {
		return err
	}
	me, err := s.identify(who, req)
	if err != nil {
		return err
	}
	user := me.NS.Tool
	var seen uint64
	for {
		changed := s.Loop.Changed()
		var evs []state.ToolEvent
		err := s.Store.View(func(tx *store.Tx) error {
			var err error
			evs, err = state.ToolEvents(tx, user, seen)
			return err
		})
		if err != nil {
			return err
		}
		for _, e := range evs {
			raw, err := json.Marshal(e)
			if err != nil {
				return err
			}
			if err := w.send(client.Response{Progress: raw}); err != nil {
				return nil // the client is gone
			}
			seen = e.Seq
		}
		if !p.Follow {
			break
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		}
	}
	w.result(nil)
	return nil
}

// spares adds or removes spare nodes: node administration is the
// owner's.
func (s *Server) spares(ctx context.Context, who peer, req client.Request, w *writer) error {
	if who.uid != s.Owner {
		return fmt.Errorf("permission denied: only the instance owner may add or remove nodes")
	}
	p, err := decode[client.SpareParams](req)
	if err != nil {
		return err
	}
	v, err := s.do(ctx, func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
		if req.Method == client.MethodNodeRemove {
			names, err := client.ExpandHosts(p.Hosts)
			if err != nil {
				return nil, err
			}
			return nil, jm.RemoveSpares(tx, names)
		}
		return jm.AddSpares(tx, p.Hosts, p.Cores, p.GPUs)
	})
	if err != nil {
		return err
	}
	w.result(v)
	return nil
}

// statusOf is the PMIx status of a rejected reservation request, 0 for
// other errors.
func statusOf(err error) int {
	var re *reservation.Error
	if errors.As(err, &re) {
		return int(re.Status)
	}
	return 0
}
