package reservation

import (
	"math"

	"github.com/fluxq/fluxq/internal/fsd"
)

// Limits are what the instance owner lets each other user hold in
// reservations ([access] guest-reserved-nodes and guest-reservation-time).
// The specification leaves quotas out of its scope; without them a guest
// could take every idle node for ever, or reserve for another user's job
// and leave a reservation nobody but the scheduler can release.
type Limits struct {
	// Nodes is the most nodes one user's namespaces may own in live
	// reservations at once; 0 forbids reserving.
	Nodes int
	// Time is the longest a reservation of the user's may last from the
	// request on, in seconds; 0 for no bound.
	Time float64
}

// Quota is Limits applied to one requester who is not the instance
// owner.
type Quota struct {
	Limits
	User string // the requester's user name, for messages
	// Owns reports whether a namespace is the user's: its tool, or one of
	// its jobs. A guest may reserve only for those.
	Owns func(Namespace) bool
}

// Names of the config keys, as the messages name them.
const (
	keyNodes = "[access] guest-reserved-nodes"
	keyTime  = "[access] guest-reservation-time"
)

// checkTarget refuses a reservation for a namespace that is not the
// user's: only the owner reserves for others.
func (q *Quota) checkTarget(ns Namespace) error {
	if q == nil || q.Owns(ns) {
		return nil
	}
	if ns.IsJob() {
		return reject(NoPermissions, "job %s belongs to another user: a guest may reserve only for its own jobs", ns)
	}
	return reject(NoPermissions, "%s is another user's: a guest may reserve only for its own namespaces", ns)
}

// checkNodes refuses a request for more nodes than the user may still
// hold, counting the nodes of every live reservation it owns.
func (s *State) checkNodes(q *Quota, asked int) error {
	if q == nil || asked <= 0 {
		return nil
	}
	if q.Nodes <= 0 {
		return reject(NoPermissions, "user %s may not hold reserved nodes: %s is 0", q.User, keyNodes)
	}
	held := 0
	for _, id := range s.order {
		if r := s.res[id]; r.Live() && q.Owns(r.Owner) {
			held += len(r.Nodes)
		}
	}
	if held+asked > q.Nodes {
		return reject(NoPermissions, "user %s may hold %d reserved nodes at most (%s): it holds %d and asks for %d", q.User, q.Nodes, keyNodes, held, asked)
	}
	return nil
}

// checkLife refuses a new reservation that would last longer than the
// user may hold one: life is its lifetime from now in seconds, 0 or +Inf
// for none.
func (q *Quota) checkLife(life float64) error {
	if q == nil || q.Time <= 0 {
		return nil
	}
	if life <= 0 || math.IsInf(life, 1) || life > q.Time {
		t := fsd.Format(q.Time)
		return reject(NoPermissions, "a guest's reservation may last %s at most (%s): give --time %s or less", t, keyTime, t)
	}
	return nil
}

// checkExtend refuses an extension that would leave r with more than the
// user's lifetime ahead of it.
func (q *Quota) checkExtend(r *Reservation, add, now float64) error {
	if q == nil || q.Time <= 0 || add <= 0 || r.Expires <= 0 {
		return nil
	}
	if math.IsInf(add, 1) || r.Expires+add-now > q.Time {
		return reject(NoPermissions, "%s would last more than %s from now (%s)", r.ID, fsd.Format(q.Time), keyTime)
	}
	return nil
}

// asked is how many nodes a request asks for.
func (req Request) asked() int {
	if len(req.Names) > 0 {
		return len(req.Names)
	}
	return req.Count
}
