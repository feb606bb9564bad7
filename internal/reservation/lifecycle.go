package reservation

import (
	"fmt"
	"math"
	"slices"

	"github.com/fluxq/fluxq/internal/fluid"
)

// Warning is a PMIX_ALLOC_TIMEOUT_WARNING to relay to the requester of
// an allocation, and to it alone.
type Warning struct {
	AllocID       string    `json:"alloc_id"`
	ReqID         string    `json:"req_id,omitempty"`
	TimeRemaining uint32    `json:"time_remaining"`
	To            Namespace `json:"to"`
	Time          float64   `json:"time"`
}

// NextDeadline is the earliest time at which Tick has something to do:
// a warning falls due or a reservation expires; 0 for never. It may be in
// the past: a warning asked for more seconds than remained is due at once.
func (s *State) NextDeadline() float64 {
	next, found := 0.0, false
	for _, id := range s.order {
		r := s.res[id]
		if !r.Live() || r.Expires == 0 {
			continue
		}
		t := r.Expires
		if w, ok := s.warnAt(r); ok {
			t = w
		}
		if !found || t < next {
			next, found = t, true
		}
	}
	return next
}

// warnAt is when r's warning falls due, and whether one is owed. The time
// may be zero or negative when the warning asked for more seconds than
// the allocation has (it is due at once), so it is no sentinel.
func (s *State) warnAt(r *Reservation) (float64, bool) {
	if r.Warn == 0 || r.Warned || r.Expires == 0 || !s.Support.Has(AttrAllocWarnTimeout) {
		return 0, false
	}
	return r.Expires - float64(r.Warn), true
}

// Tick does what is due at now: the warnings whose threshold has come
// (the scheduler's PMIX_ALLOC_TIMEOUT_WARNING, for the caller to relay)
// and the expiries, each a scheduler reclaim that returns the nodes
// (docs/reservations.md decision 11). A warning changes nothing else.
func (s *State) Tick(now float64) ([]Warning, Change) {
	var warns []Warning
	var ch Change
	for _, id := range s.order {
		r := s.res[id]
		if !r.Live() || r.Expires == 0 {
			continue
		}
		if r.Expires <= now {
			ch.merge(s.end(r, EndExpired, true, now))
			continue
		}
		if w, ok := s.warnAt(r); ok && w <= now {
			r.Warned = true
			left := uint32(math.Ceil(r.Expires - now))
			warns = append(warns, Warning{AllocID: r.ID, ReqID: r.ReqID, TimeRemaining: left, To: r.Requester, Time: now})
			s.markRes(r)
		}
	}
	return warns, ch
}

// Delivered records in r's history where a warning went: to its
// requester, or nowhere because the requester is gone.
func (s *State) Delivered(w Warning, ok bool) {
	r, found := s.res[w.AllocID]
	if !found {
		return
	}
	name := "warned"
	if !ok {
		name = "warning-undeliverable"
	}
	r.record(w.Time, name, map[string]any{"to": w.To.String(), "time_remaining": w.TimeRemaining})
	s.markRes(r)
}

// JobEnded applies the namespace-termination dispositions for job id,
// which has just reached INACTIVE (docs/reservations.md decision 9); jobs says
// which other jobs are still alive. A NONE or DEFAULT reservation ends
// at its owning namespace's end; a CHILD or CHILD_DEFAULT one once the
// owner has ended and no derived child is alive (a tool owner never ends,
// so there only the children count, and only once there were any).
func (s *State) JobEnded(id fluid.ID, jobs Jobs, now float64) Change {
	var ch Change
	ns := JobNS(id)
	for _, rid := range s.order {
		r := s.res[rid]
		if !r.Live() {
			continue
		}
		isOwner := r.Owner == ns
		isChild := slices.Contains(r.Children, id)
		if !isOwner && !isChild {
			continue
		}
		if isOwner {
			r.OwnerEnded = true
			s.markRes(r)
		}
		inh := r.Inheritance
		if !inh.AwaitsChildren() {
			if isOwner {
				ch.merge(s.end(r, EndOwnerExit, inh.Returns(), now))
			}
			continue
		}
		ownerGone := r.OwnerEnded || (!r.Owner.IsJob() && len(r.Children) > 0)
		if ownerGone && !anyAlive(r.Children, id, jobs) {
			ch.merge(s.end(r, EndDrained, inh.Returns(), now))
		}
	}
	return ch
}

// anyAlive reports whether a job of ids other than ended is alive.
func anyAlive(ids []fluid.ID, ended fluid.ID, jobs Jobs) bool {
	for _, c := range ids {
		if c != ended && jobs.Alive(c) {
			return true
		}
	}
	return false
}

// LiveChildren returns r's derived children that are alive.
func LiveChildren(r *Reservation, jobs Jobs) []fluid.ID {
	var out []fluid.ID
	for _, c := range r.Children {
		if jobs.Alive(c) {
			out = append(out, c)
		}
	}
	return out
}

// Teardown ends every live reservation with the instance (unconditional
// trigger 2) and sends every spare node back to the scheduler's pool.
func (s *State) Teardown(now float64) Change {
	var ch Change
	for _, id := range s.order {
		if r := s.res[id]; r.Live() {
			ch.merge(s.end(r, EndTeardown, true, now))
		}
	}
	for i := range s.nodes {
		if n := &s.nodes[i]; n.Origin == Spare && n.In {
			n.In = false
			ch.Departed = append(ch.Departed, n.Name)
			s.markNode(i)
			ch.Sessions = true
		}
	}
	return ch
}

// AddSpares puts hosts into the scheduler's pool outside the instance,
// and returns them (with their ranks) in order. A host removed before gets
// its old rank back; a new one the next rank after every known node.
func (s *State) AddSpares(names []string) ([]Node, error) {
	seen := map[string]bool{}
	for _, name := range names {
		if seen[name] {
			return nil, fmt.Errorf("node %s is named twice", name)
		}
		seen[name] = true
		if i, ok := s.byName[name]; ok && !s.nodes[i].Removed {
			return nil, fmt.Errorf("node %s is already a %s node", name, s.nodes[i].Origin)
		}
	}
	next := uint(0)
	if len(s.nodes) > 0 {
		next = s.nodes[len(s.nodes)-1].Rank + 1
	}
	var out []Node
	for _, name := range names {
		if i, ok := s.byName[name]; ok {
			s.nodes[i].Removed = false
			s.markNode(i)
			out = append(out, s.nodes[i])
			continue
		}
		s.byName[name] = len(s.nodes)
		s.nodes = append(s.nodes, Node{Name: name, Rank: next, Origin: Spare})
		s.markNode(len(s.nodes) - 1)
		out = append(out, s.nodes[len(s.nodes)-1])
		next++
	}
	return out, nil
}

// RemoveNodes takes spare hosts out of the scheduler's pool. A spare that
// stayed in the instance after its reservation was unreserved leaves it
// (its jobs are killed, as for any departure); one a live reservation
// holds cannot be removed until it is released; startup nodes never leave.
func (s *State) RemoveNodes(names []string) (Change, error) {
	var idx []int
	for _, name := range names {
		i, ok := s.byName[name]
		if !ok || s.nodes[i].Removed {
			return Change{}, fmt.Errorf("node %s is not a spare node", name)
		}
		n := &s.nodes[i]
		switch {
		case n.Origin == Startup:
			return Change{}, fmt.Errorf("node %s is a startup node: only spare nodes can be removed", name)
		case n.Holder != "":
			return Change{}, fmt.Errorf("node %s is held by %s: release it first", name, n.Holder)
		case slices.Contains(idx, i):
			return Change{}, fmt.Errorf("node %s is named twice", name)
		}
		idx = append(idx, i)
	}
	var ch Change
	for _, i := range idx {
		n := &s.nodes[i]
		if n.In {
			n.In = false
			ch.Departed = append(ch.Departed, n.Name)
			ch.Sessions = true
		}
		n.Removed = true
		s.markNode(i)
	}
	return ch, nil
}
