package api

import (
	"fmt"
	"math"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/hostlist"
	"github.com/fluxq/fluxq/internal/reservation"
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

// Alloc turns the parameters into the rules' request; errors are
// PMIX_ERR_BAD_PARAM.
func (p ReserveParams) Alloc() (reservation.Request, error) {
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

// ReservationsParams asks for live reservations, or all with All.
type ReservationsParams struct {
	All bool `json:"all"`
}

// ToolEventsParams asks for the caller's warnings, and more as they come
// with Follow.
type ToolEventsParams struct {
	Follow bool `json:"follow"`
}

func (p ToolEventsParams) Following() bool { return p.Follow }

// ToolEvent is a timeout warning kept for a tool to read
// (`fluxres reservation events`).
type ToolEvent struct {
	Seq uint64 `json:"seq"`
	reservation.Warning
}

// SpareParams registers spare nodes (empty Cores take the shape of the
// instance's first node), or names the nodes to remove (Hosts only).
type SpareParams struct {
	Hosts string `json:"hosts"`
	Cores string `json:"cores,omitempty"`
	GPUs  string `json:"gpus,omitempty"`
}
