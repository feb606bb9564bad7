package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/hostlist"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/reservation"
	"github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// ReserveParams is one allocation request as the CLI gives it.
type ReserveParams struct {
	Op       string  `json:"op"` // create, extend, release, reclaim
	ID       string  `json:"alloc_id,omitempty"`
	ReqID    string  `json:"req_id,omitempty"`
	Count    int     `json:"count,omitempty"`
	Nodelist string  `json:"nodelist,omitempty"` // a hostlist
	Time     float64 `json:"time,omitempty"`     // seconds; +Inf is "inf"
	TimeInf  bool    `json:"time_inf,omitempty"`
	Warn     *uint32 `json:"warn,omitempty"`
	Share    *bool   `json:"share,omitempty"`
	Target   string  `json:"target,omitempty"` // a job id
	Inherit  string  `json:"inherit,omitempty"`
}

// Request turns the parameters into the rules' request; errors are
// PMIX_ERR_BAD_PARAM.
func (p ReserveParams) Request() (reservation.Request, error) {
	bad := func(format string, a ...any) error {
		return &reservation.Error{Status: reservation.BadParam, Msg: fmt.Sprintf(format, a...)}
	}
	var req reservation.Request
	switch p.Op {
	case "create":
		req.Op = reservation.OpNew
	case "extend":
		req.Op = reservation.OpExtend
	case "release":
		req.Op = reservation.OpRelease
	case "reclaim":
		req.Op = reservation.OpReclaim
	default:
		return req, bad("unknown operation %q", p.Op)
	}
	req.ID, req.ReqID, req.Count, req.Warn, req.Share = p.ID, p.ReqID, p.Count, p.Warn, p.Share
	if p.Count < 0 {
		return req, bad("node count %d is negative", p.Count)
	}
	if p.Nodelist != "" {
		hl, err := hostlist.Parse(p.Nodelist)
		if err != nil || hl.IsEmpty() {
			return req, bad("invalid node list %q", p.Nodelist)
		}
		if hl.Count() > 1<<20 {
			return req, bad("node list %q is too long", p.Nodelist)
		}
		req.Names = hl.Expand()
		if p.Count > 0 {
			return req, bad("give -N or --nodelist, not both")
		}
	}
	req.Time = p.Time
	if p.TimeInf {
		req.Time = math.Inf(1)
	}
	if p.Target != "" {
		id, err := fluid.Parse(p.Target)
		if err != nil || id == 0 {
			return req, bad("target %q is not a job id", p.Target)
		}
		ns := reservation.JobNS(id)
		req.Target = &ns
	}
	if p.Inherit != "" {
		inh, err := reservation.ParseInheritance(p.Inherit)
		if err != nil {
			return req, bad("%v", err)
		}
		req.Inherit = &inh
	}
	return req, nil
}

// ReservationView is a reservation as `fluxres reservation show` explains
// it: the record, its state, each node's origin and the live derived
// children.
type ReservationView struct {
	reservation.Reservation
	State        string            `json:"state"` // active or ended
	Origins      map[string]string `json:"origins"`
	LiveChildren []fluid.ID        `json:"live_children"`
}

// NodeView is one node of the instance or the scheduler's pool.
type NodeView struct {
	reservation.Node
	// Session is "default", the allocation id whose session holds it, or
	// "" when it is outside the instance.
	Session string `json:"session"`
}

// ReservationList is `fluxres reservation list --json`: the reservations
// and every node with its session.
type ReservationList struct {
	Reservations []ReservationView `json:"reservations"`
	Nodes        []NodeView        `json:"nodes"`
}

// ListReservations describes st; alive says which jobs are alive.
func ListReservations(st *reservation.State, all bool, alive func(fluid.ID) bool) *ReservationList {
	out := &ReservationList{Reservations: []ReservationView{}, Nodes: []NodeView{}}
	for _, r := range st.All(all) {
		out.Reservations = append(out.Reservations, View(st, r, alive))
	}
	for _, n := range st.Nodes() {
		if n.Origin == reservation.Spare && n.Removed {
			continue
		}
		out.Nodes = append(out.Nodes, NodeView{Node: n, Session: st.Session(n.Name)})
	}
	return out
}

// View describes one reservation.
func View(st *reservation.State, r *reservation.Reservation, alive func(fluid.ID) bool) ReservationView {
	v := ReservationView{Reservation: *r, State: "active", Origins: map[string]string{}, LiveChildren: []fluid.ID{}}
	if !r.Live() {
		v.State = "ended"
	}
	for _, name := range r.Nodes {
		if n, ok := st.Node(name); ok {
			v.Origins[name] = string(n.Origin)
		}
	}
	for _, c := range r.Children {
		if alive(c) {
			v.LiveChildren = append(v.LiveChildren, c)
		}
	}
	return v
}

// ErrNeedsInstance: reservations are answered by the scheduler, which
// runs in fluxsched.
var ErrNeedsInstance = errors.New("reservation requests are served by the running instance: start fluxsched first")

// aliveInStore says which jobs the store holds as not inactive, from
// their summaries (an eventlog replay per child would be much dearer).
func aliveInStore(tx *store.Tx) func(fluid.ID) bool {
	return func(id fluid.ID) bool {
		raw, err := tx.JobValue(uint64(id), store.JobSummary)
		if err != nil {
			return false
		}
		var s struct {
			State string `json:"state"`
		}
		return json.Unmarshal(raw, &s) == nil && s.State != job.Inactive.String()
	}
}

// LoadReservations lists reservations as the store holds them. The loop
// saves the reservation state in every turn that changes it, so a read
// transaction sees what the last committed turn did, without taking a
// turn of the loop.
func LoadReservations(tx *store.Tx, all bool) (*ReservationList, error) {
	st, err := state.ReservationsOrEmpty(tx)
	if err != nil {
		return nil, err
	}
	return ListReservations(st, all, aliveInStore(tx)), nil
}

func (d *direct) Reserve(context.Context, ReserveParams) (*ReservationView, error) {
	return nil, ErrNeedsInstance
}

func (d *direct) Reservations(_ context.Context, all bool) (*ReservationList, error) {
	var out *ReservationList
	err := d.with(false, func(tx *store.Tx) error {
		var err error
		out, err = LoadReservations(tx, all)
		return err
	})
	return out, err
}

func (d *direct) ToolEvents(_ context.Context, _ bool, fn func(state.ToolEvent) error) error {
	var evs []state.ToolEvent
	err := d.with(false, func(tx *store.Tx) error {
		who, err := d.who(tx)
		if err != nil {
			return err
		}
		evs, err = state.ToolEvents(tx, who.NS.Tool, 0)
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
	return nil
}

func (d *direct) AddSpares(_ context.Context, p SpareParams) ([]string, error) {
	var out []string
	err := d.with(true, func(tx *store.Tx) error {
		st, err := state.ReservationsOrEmpty(tx)
		if err != nil {
			return err
		}
		r, err := state.AddSpares(tx, st, p.Hosts, p.Cores, p.GPUs)
		if err != nil {
			return err
		}
		out = r.Nodelist().Expand()
		return nil
	})
	return out, err
}

func (d *direct) RemoveNodes(_ context.Context, hosts string) error {
	return d.with(true, func(tx *store.Tx) error {
		st, err := state.ReservationsOrEmpty(tx)
		if err != nil {
			return err
		}
		names, err := ExpandHosts(hosts)
		if err != nil {
			return err
		}
		ch, err := st.RemoveNodes(names)
		if err != nil {
			return err
		}
		if len(ch.Departed) > 0 {
			return fmt.Errorf("node %s is in the instance: remove it while fluxsched runs, so its jobs can be stopped", strings.Join(ch.Departed, ","))
		}
		return state.SaveReservations(tx, st)
	})
}

func ExpandHosts(hosts string) ([]string, error) {
	hl, err := hostlist.Parse(hosts)
	if err != nil || hl.IsEmpty() {
		return nil, fmt.Errorf("invalid hostlist %q", hosts)
	}
	if hl.Count() > 1<<20 {
		return nil, fmt.Errorf("hostlist %q is too long", hosts)
	}
	return hl.Expand(), nil
}

// SpareParams registers spare nodes; empty Cores take the shape of the
// instance's first node (state.AddSpares).
type SpareParams struct {
	Hosts string `json:"hosts"`
	Cores string `json:"cores,omitempty"`
	GPUs  string `json:"gpus,omitempty"`
}

func (s *socket) Reserve(ctx context.Context, p ReserveParams) (*ReservationView, error) {
	var v ReservationView
	_, err := s.call(ctx, MethodReserve, p, &v, nil)
	if err != nil {
		return nil, err
	}
	return &v, nil
}

func (s *socket) Reservations(ctx context.Context, all bool) (*ReservationList, error) {
	var v ReservationList
	if _, err := s.call(ctx, MethodReservations, ReservationsParams{All: all}, &v, nil); err != nil {
		return nil, err
	}
	return &v, nil
}

// ReservationsParams asks for live reservations, or all with All.
type ReservationsParams struct {
	All bool `json:"all"`
}

// ToolEventsParams asks for the caller's warnings, and more as they come
// with Follow.
type ToolEventsParams struct {
	Follow bool `json:"follow"`
}

func (s *socket) ToolEvents(ctx context.Context, follow bool, fn func(state.ToolEvent) error) error {
	st := &stream{progress: func(raw json.RawMessage) error {
		var e state.ToolEvent
		if err := json.Unmarshal(raw, &e); err != nil {
			return fmt.Errorf("bad response from the instance: %w", err)
		}
		return fn(e)
	}, long: follow}
	_, err := s.call(ctx, MethodToolEvents, ToolEventsParams{Follow: follow}, nil, st)
	return err
}

func (s *socket) AddSpares(ctx context.Context, p SpareParams) ([]string, error) {
	var out []string
	_, err := s.call(ctx, MethodSpareAdd, p, &out, nil)
	return out, err
}

func (s *socket) RemoveNodes(ctx context.Context, hosts string) error {
	_, err := s.call(ctx, MethodNodeRemove, SpareParams{Hosts: hosts}, nil, nil)
	return err
}

func (a *auto) Reserve(ctx context.Context, p ReserveParams) (*ReservationView, error) {
	return pick(ctx, a, func(s *socket) (*ReservationView, error) { return s.Reserve(ctx, p) },
		func(d *direct) (*ReservationView, error) { return d.Reserve(ctx, p) })
}

func (a *auto) Reservations(ctx context.Context, all bool) (*ReservationList, error) {
	return pick(ctx, a, func(s *socket) (*ReservationList, error) { return s.Reservations(ctx, all) },
		func(d *direct) (*ReservationList, error) { return d.Reservations(ctx, all) })
}

func (a *auto) ToolEvents(ctx context.Context, follow bool, fn func(state.ToolEvent) error) error {
	_, err := pick(ctx, a, func(s *socket) (struct{}, error) { return struct{}{}, s.ToolEvents(ctx, follow, fn) },
		func(d *direct) (struct{}, error) { return struct{}{}, d.ToolEvents(ctx, follow, fn) })
	return err
}

func (a *auto) AddSpares(ctx context.Context, p SpareParams) ([]string, error) {
	return pick(ctx, a, func(s *socket) ([]string, error) { return s.AddSpares(ctx, p) },
		func(d *direct) ([]string, error) { return d.AddSpares(ctx, p) })
}

func (a *auto) RemoveNodes(ctx context.Context, hosts string) error {
	_, err := pick(ctx, a, func(s *socket) (struct{}, error) { return struct{}{}, s.RemoveNodes(ctx, hosts) },
		func(d *direct) (struct{}, error) { return struct{}{}, d.RemoveNodes(ctx, hosts) })
	return err
}
