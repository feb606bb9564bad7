package reservation

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/fsd"
)

// Op is the allocation directive of a request.
type Op int

// The directives fluxq serves.
const (
	OpNew     Op = iota // PMIX_ALLOC_NEW
	OpExtend            // PMIX_ALLOC_EXTEND
	OpRelease           // PMIX_ALLOC_RELEASE
	OpReclaim           // a scheduler-driven release (unconditional trigger 3)
)

var opNames = []string{"create", "extend", "release", "reclaim"}

func (o Op) String() string {
	if o < 0 || int(o) >= len(opNames) {
		return fmt.Sprintf("op(%d)", int(o))
	}
	return opNames[o]
}

// Request is one allocation request with the attributes it carried; a nil
// pointer is an absent attribute.
type Request struct {
	Op    Op
	ID    string // PMIX_ALLOC_ID: the allocation to extend or release
	ReqID string // PMIX_ALLOC_REQ_ID: the requester's own id
	// Count asks for that many nodes; Names asks for these nodes.
	Count int
	Names []string
	// Time is the allocation's lifetime in seconds from now on create, and
	// the time added on extend; 0 for none.
	Time float64
	Warn *uint32 // PMIX_ALLOC_WARN_TIMEOUT, seconds
	// Share is PMIX_ALLOC_SHARE, Target PMIX_ALLOC_TARGET, Inherit
	// PMIX_ALLOC_INHERITANCE.
	Share   *bool
	Target  *Namespace
	Inherit *Inheritance
	// Idle reports whether a rank may be taken from the default session:
	// no job holds anything on it and it is not drained.
	Idle func(rank uint) bool
	// TargetAlive reports whether a Target job exists and is alive; nil
	// means every job is.
	TargetAlive func(Namespace) (exists, alive bool)
	// Descendants are the live descendants, at any depth, that the owning
	// job already has when a reservation is created: they are derived
	// children from the start (spec "any namespace reachable by following
	// the spawn relationship from the owning namespace"), which Accepted,
	// seeing only later submissions, cannot know. Ignored for a tool
	// owner and on other directives.
	Descendants []fluid.ID
	// Quota limits a requester who is not the instance owner (fluxq's
	// policy, checked with ownership); nil for the owner and the
	// scheduler.
	Quota *Quota
}

// Change is what a request did, for the caller to act on.
type Change struct {
	// Reservation is the one created, extended or ended by the request.
	Reservation *Reservation
	// Ended lists every reservation that ended, with its reason.
	Ended []*Reservation
	// Joined are spare nodes that entered the instance.
	Joined []string
	// Departed are spare nodes that left the instance: the jobs on them
	// must be killed with an exception of type node-departed, before the
	// nodes leave (spec "Ending a reservation while jobs are still
	// mapped").
	Departed []string
	// Sessions reports that the scheduler's view of sessions changed.
	Sessions bool
}

func (c *Change) merge(o Change) {
	c.Ended = append(c.Ended, o.Ended...)
	c.Joined = append(c.Joined, o.Joined...)
	c.Departed = append(c.Departed, o.Departed...)
	c.Sessions = c.Sessions || o.Sessions
}

// Allocate serves an allocation request from who at time now. It checks
// everything first, in docs/reservations.md decision 7's order (unsupported
// inheritance, an application naming a target, an extend or release that
// names nothing, an unknown allocation, a requester that is not an owner,
// too few nodes), so a rejection changes nothing and its status is the
// first failure's.
func (s *State) Allocate(req Request, who Requester, now float64) (Change, error) {
	// Backward compatibility: an attribute the host lacks is not seen.
	if !s.Support.Has(AttrAllocTarget) {
		req.Target = nil
	}
	if !s.Support.Has(AttrAllocShare) {
		req.Share = nil
	}
	if !s.Support.Has(AttrAllocWarnTimeout) {
		req.Warn = nil
	}
	// Inheritance is honoured on new and extend and ignored otherwise;
	// a non-default value the host cannot honour is refused, never
	// ignored, so the requester is not misled about its lifetime.
	if req.Op == OpRelease || req.Op == OpReclaim {
		req.Inherit = nil
	}
	if req.Inherit != nil && *req.Inherit != InheritDefault && !s.Support.Has(AttrAllocInheritance) {
		return Change{}, reject(NotSupported, "inheritance '%s' is not supported by this instance", *req.Inherit)
	}
	switch req.Op {
	case OpNew:
		return s.create(req, who, now)
	case OpExtend:
		return s.extend(req, who, now)
	case OpRelease, OpReclaim:
		return s.release(req, who, now)
	}
	return Change{}, reject(BadParam, "unknown allocation directive %d", int(req.Op))
}

func (s *State) create(req Request, who Requester, now float64) (Change, error) {
	owner := who.NS
	if req.Target != nil {
		// Spec: PMIX_ALLOC_TARGET is honoured only from a tool; an
		// application that supplies it is rejected.
		if who.Class == Application {
			return Change{}, reject(NoPermissions, "an application may not name a target namespace (job %s asked for %s)", who.NS, *req.Target)
		}
		owner = *req.Target
		if owner.IsJob() && req.TargetAlive != nil {
			exists, alive := req.TargetAlive(owner)
			if !exists {
				return Change{}, reject(NotFound, "job %s does not exist", owner)
			}
			if !alive {
				return Change{}, reject(BadParam, "job %s is inactive", owner)
			}
		}
	}
	if req.Count <= 0 && len(req.Names) == 0 {
		return Change{}, reject(BadParam, "create needs a node count (-N) or a node list")
	}
	if req.Time < 0 || math.IsNaN(req.Time) {
		return Change{}, reject(BadParam, "invalid time %g", req.Time)
	}
	if err := checkTime(req.Time); err != nil {
		return Change{}, err
	}
	if err := req.Quota.checkTarget(owner); err != nil {
		return Change{}, err
	}
	if err := req.Quota.checkLife(req.Time); err != nil {
		return Change{}, err
	}
	if err := s.checkNodes(req.Quota, req.asked()); err != nil {
		return Change{}, err
	}
	picked, err := s.pick(req)
	if err != nil {
		return Change{}, err
	}
	s.last++
	r := &Reservation{
		ID:             "r" + strconv.FormatUint(s.last, 10),
		ReqID:          req.ReqID,
		Owner:          owner,
		Owners:         []Namespace{owner},
		Requester:      who.NS,
		RequesterClass: who.Class,
		Share:          req.Share != nil && *req.Share,
		Created:        now,
	}
	if req.Inherit != nil {
		r.Inheritance = *req.Inherit
	}
	if req.Time > 0 && !math.IsInf(req.Time, 1) {
		r.Expires = now + req.Time
	}
	if req.Warn != nil {
		r.Warn = *req.Warn
	}
	if owner.IsJob() {
		for _, id := range req.Descendants {
			if id != 0 && id != owner.Job {
				r.addChild(id)
			}
		}
	}
	s.res[r.ID] = r
	s.order = append(s.order, r.ID)
	ch := Change{Reservation: r, Sessions: true}
	ch.Joined = s.take(r, picked)
	detail := map[string]any{"nodes": slices.Clone(r.Nodes), "owner": owner.String(), "requester": who.NS.String(), "inheritance": r.Inheritance.String(), "share": r.Share}
	if r.Expires > 0 {
		detail["expires"] = r.Expires
	}
	r.record(now, "created", detail)
	s.markRes(r)
	return ch, nil
}

// find resolves the allocation a request names, by id or by request id.
func (s *State) find(req Request, who Requester) (*Reservation, error) {
	if req.ID == "" && req.ReqID == "" {
		return nil, reject(BadParam, "%s needs an allocation id or --req-id", req.Op)
	}
	if req.ID != "" {
		r, ok := s.res[req.ID]
		if !ok {
			return nil, reject(NotFound, "allocation %q does not exist", req.ID)
		}
		if !r.Live() {
			return nil, reject(NotFound, "allocation %q ended (%s)", req.ID, r.EndReason)
		}
		return r, nil
	}
	// A request id is the requester's own: prefer the caller's live
	// reservation, then any live one carrying it.
	var found *Reservation
	for _, id := range s.order {
		r := s.res[id]
		if !r.Live() || r.ReqID != req.ReqID {
			continue
		}
		if r.Requester == who.NS {
			return r, nil
		}
		if found == nil {
			found = r
		}
	}
	if found == nil {
		return nil, reject(NotFound, "no live allocation has request id %q", req.ReqID)
	}
	return found, nil
}

// mayAct reports whether who may extend or release r: an owner, or the
// scheduler, the implicit owner of every session.
func mayAct(r *Reservation, who Requester) error {
	if who.Class == Scheduler || r.Owns(who.NS) {
		return nil
	}
	if who.NS.IsJob() {
		return reject(NoPermissions, "job %s is not an owner of %s", who.NS, r.ID)
	}
	return reject(NoPermissions, "%s is not an owner of %s", who.NS, r.ID)
}

func (s *State) extend(req Request, who Requester, now float64) (Change, error) {
	r, err := s.find(req, who)
	if err != nil {
		return Change{}, err
	}
	if err := mayAct(r, who); err != nil {
		return Change{}, err
	}
	if req.Time < 0 || math.IsNaN(req.Time) {
		return Change{}, reject(BadParam, "invalid time %g", req.Time)
	}
	if err := checkTime(req.Time); err != nil {
		return Change{}, err
	}
	// Extensions add up: each within the bound, their sum may not be.
	if r.Expires > 0 && !math.IsInf(req.Time, 1) && r.Expires+req.Time > fsd.LatestTime {
		return Change{}, reject(BadParam, "%s would end after %s, the latest time allowed", r.ID, fsd.LatestTimeText)
	}
	if err := req.Quota.checkExtend(r, req.Time, now); err != nil {
		return Change{}, err
	}
	if err := s.checkNodes(req.Quota, req.asked()); err != nil {
		return Change{}, err
	}
	var picked []int
	if req.Count > 0 || len(req.Names) > 0 {
		if picked, err = s.pick(req); err != nil {
			return Change{}, err
		}
	}
	ch := Change{Reservation: r}
	detail := map[string]any{"requester": who.NS.String()}
	if len(picked) > 0 {
		before := len(r.Nodes)
		ch.Joined = s.take(r, picked)
		detail["nodes"] = slices.Clone(r.Nodes[before:])
		ch.Sessions = true
	}
	if req.Time > 0 && r.Expires > 0 {
		if math.IsInf(req.Time, 1) {
			r.Expires = 0
		} else {
			r.Expires += req.Time
		}
		r.Warned = false
		detail["expires"] = r.Expires
	}
	if req.Warn != nil {
		r.Warn, r.Warned = *req.Warn, false
	}
	if req.Inherit != nil {
		r.Inheritance = *req.Inherit
		detail["inheritance"] = r.Inheritance.String()
	}
	if req.ReqID != "" && req.ID != "" {
		r.ReqID = req.ReqID
	}
	// The most recent requester is the one warnings now go to.
	r.Requester, r.RequesterClass = who.NS, who.Class
	r.record(now, "extended", detail)
	s.markRes(r)
	return ch, nil
}

func (s *State) release(req Request, who Requester, now float64) (Change, error) {
	r, err := s.find(req, who)
	if err != nil {
		return Change{}, err
	}
	reason := EndReleased
	if req.Op == OpReclaim {
		if who.Class != Scheduler {
			return Change{}, reject(NoPermissions, "only the scheduler may reclaim %s", r.ID)
		}
		reason = EndReclaimed
	} else if err := mayAct(r, who); err != nil {
		return Change{}, err
	}
	// An explicit release returns the nodes to the scheduler.
	ch := s.end(r, reason, true, now)
	ch.Reservation = r
	return ch, nil
}

// pick chooses the nodes a request gets (docs/reservations.md decision 2):
// named ones, or free spares first, then idle default-session nodes, in
// rank order. The first startup node never leaves the default session.
func (s *State) pick(req Request) ([]int, error) {
	usable := func(i int) (bool, string) {
		n := &s.nodes[i]
		switch {
		case n.Removed:
			return false, "was removed"
		case n.Holder != "":
			return false, "is held by " + n.Holder
		case n.Origin == Startup && n.Rank == 0:
			return false, "is the instance's first node"
		case !n.In:
			return true, ""
		case req.Idle != nil && !req.Idle(n.Rank):
			return false, "is busy or drained"
		}
		return true, ""
	}
	if len(req.Names) > 0 {
		var out []int
		for _, name := range req.Names {
			i, ok := s.byName[name]
			if !ok {
				return nil, reject(NotFound, "node %s does not exist", name)
			}
			if slices.Contains(out, i) {
				return nil, reject(BadParam, "node %s is named twice", name)
			}
			if ok, why := usable(i); !ok {
				return nil, reject(OutOfResource, "node %s is not available: it %s", name, why)
			}
			out = append(out, i)
		}
		return out, nil
	}
	var spare, idle []int
	avail := 0 // idle nodes in the instance, for the message
	for i := range s.nodes {
		if ok, _ := usable(i); !ok {
			continue
		}
		if !s.nodes[i].In {
			spare = append(spare, i)
		} else if len(idle) < req.Count {
			// Spares come first, so no more idle nodes than asked for
			// can be needed; counting the rest is enough.
			idle = append(idle, i)
		}
		if s.nodes[i].In {
			avail++
		}
		if len(spare) >= req.Count {
			break
		}
	}
	all := append(spare, idle...)
	if len(all) < req.Count {
		return nil, reject(OutOfResource, "need %d nodes, %d available", req.Count, len(spare)+avail)
	}
	return all[:req.Count], nil
}

// take gives r the nodes at picked and returns the spares that joined.
func (s *State) take(r *Reservation, picked []int) (joined []string) {
	for _, i := range picked {
		n := &s.nodes[i]
		if !n.In {
			n.In = true
			joined = append(joined, n.Name)
		}
		n.Holder = r.ID
		s.markNode(i)
		r.Nodes = append(r.Nodes, n.Name)
	}
	slices.SortFunc(r.Nodes, func(a, b string) int { return int(s.nodes[s.byName[a]].Rank) - int(s.nodes[s.byName[b]].Rank) })
	return joined
}

// end ends r for reason. Returning the nodes to the scheduler makes its
// spares leave the instance and its startup nodes revert to the default
// session; otherwise every node stays, unreserved, in the default session.
func (s *State) end(r *Reservation, reason string, returned bool, now float64) Change {
	ch := Change{Ended: []*Reservation{r}, Sessions: true}
	for _, name := range r.Nodes {
		i := s.byName[name]
		n := &s.nodes[i]
		if n.Holder != r.ID {
			continue
		}
		n.Holder = ""
		if returned && n.Origin == Spare && n.In {
			n.In = false
			ch.Departed = append(ch.Departed, n.Name)
		}
		s.markNode(i)
	}
	r.Ended, r.EndReason = now, reason
	detail := map[string]any{"reason": reason}
	if returned {
		detail["nodes"] = "returned"
	} else {
		detail["nodes"] = "unreserved"
	}
	r.record(now, "ended", detail)
	s.markRes(r)
	return ch
}

// checkTime holds a reservation's time to fsd's bound on durations (the
// CLI checks it first, in the user's words; this is the edge for any
// client): past it, the reservation's end would be a time no record can
// encode.
func checkTime(t float64) error {
	if err := fsd.CheckDuration(fsd.FormatExact(t), t); err != nil {
		return reject(BadParam, "%v", err)
	}
	return nil
}
