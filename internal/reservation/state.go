package reservation

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fluxq/fluxq/internal/fluid"
)

// Origin is where a node comes from (docs/reservations.md decision 1).
type Origin string

// The two origins.
const (
	// Startup nodes are configured in the instance; they only ever move
	// between sessions.
	Startup Origin = "startup"
	// Spare nodes are the scheduler's pool outside the instance: they
	// join it when reserved and leave it when returned.
	Spare Origin = "spare"
)

// Node is one host as the reservation rules see it.
type Node struct {
	Name   string `json:"name"`
	Rank   uint   `json:"rank"`
	Origin Origin `json:"origin"`
	// In reports whether the node is in the instance now: always for a
	// startup node; for a spare, between joining and departing.
	In bool `json:"in_instance"`
	// Removed marks a spare taken out of the scheduler's pool; it keeps
	// its rank so that a host added again gets the same one.
	Removed bool `json:"removed,omitempty"`
	// Holder is the allocation id of the live reservation holding the
	// node, "" for none.
	Holder string `json:"holder,omitempty"`
}

// Why a reservation ended (docs/reservations.md "What a user sees").
const (
	EndReleased  = "released"   // an owner released it
	EndReclaimed = "reclaimed"  // the scheduler reclaimed it
	EndExpired   = "expired"    // its --time ran out: a scheduler reclaim
	EndOwnerExit = "owner-exit" // NONE or DEFAULT, at the owning namespace's end
	EndDrained   = "drained"    // CHILD or CHILD_DEFAULT, after the last derived child
	EndTeardown  = "teardown"   // the instance was torn down (--purge)
)

// Event is one line of a reservation's history.
type Event struct {
	Time float64 `json:"time"`
	Name string  `json:"name"` // created, extended, warned, warning-undeliverable, ended
	// Detail is the event's context, e.g. the nodes added or the reason.
	Detail map[string]any `json:"detail,omitempty"`
}

// Reservation is one allocation, live or ended. Shared allocations have a
// record too (docs/reservations.md decision 3), though their nodes are in the
// default session.
type Reservation struct {
	ID    string `json:"alloc_id"`
	ReqID string `json:"req_id,omitempty"`
	// Owner is the owning namespace, fixed for the reservation's life: its
	// termination drives the disposition.
	Owner Namespace `json:"owner"`
	// Owners is the owner set (authorization), seeded with Owner and grown
	// by every job spawned into the reservation.
	Owners []Namespace `json:"owners"`
	// Requester made the most recent create or extend request: timeout
	// warnings go to it alone.
	Requester      Namespace   `json:"requester"`
	RequesterClass Class       `json:"requester_class"`
	Share          bool        `json:"share"`
	Inheritance    Inheritance `json:"inheritance"`
	Nodes          []string    `json:"nodes"` // in rank order
	Created        float64     `json:"created"`
	// Expires is when the scheduler reclaims it (0: never); Warn is how
	// many seconds before that the requester is warned (0: not at all).
	Expires float64 `json:"expires,omitempty"`
	Warn    uint32  `json:"warn,omitempty"`
	Warned  bool    `json:"warned,omitempty"` // the warning for this Expires is out
	// Children are the derived children, in the order they appeared.
	Children   []fluid.ID `json:"children,omitempty"`
	OwnerEnded bool       `json:"owner_ended,omitempty"`
	Ended      float64    `json:"ended,omitempty"`
	EndReason  string     `json:"end_reason,omitempty"`
	History    []Event    `json:"history"`
}

// Live reports whether the reservation has not ended.
func (r *Reservation) Live() bool { return r.Ended == 0 }

// Owns reports whether ns is in the owner set.
func (r *Reservation) Owns(ns Namespace) bool { return slices.Contains(r.Owners, ns) }

func (r *Reservation) addOwner(ns Namespace) bool {
	if r.Owns(ns) {
		return false
	}
	r.Owners = append(r.Owners, ns)
	return true
}

func (r *Reservation) addChild(id fluid.ID) bool {
	if slices.Contains(r.Children, id) {
		return false
	}
	r.Children = append(r.Children, id)
	return true
}

func (r *Reservation) record(now float64, name string, detail map[string]any) {
	r.History = append(r.History, Event{Time: now, Name: name, Detail: detail})
}

// Jobs is what the rules need to know about jobs.
type Jobs interface {
	// Alive reports whether a job has not yet reached INACTIVE (pending
	// jobs count as alive, docs/reservations.md decision 5).
	Alive(id fluid.ID) bool
}

// State is every node and reservation of one instance.
type State struct {
	Support Support
	nodes   []Node         // by rank
	byName  map[string]int // name -> index in nodes
	res     map[string]*Reservation
	order   []string // allocation ids, in creation order
	last    uint64   // the last allocation number issued
	// dirty names what changed since the caller last persisted.
	dirtyRes   map[string]bool
	dirtyNodes map[string]bool
}

// New returns a State over the startup nodes (in rank order), the spare
// nodes and the reservations a store held, and the last allocation number
// issued. It checks that they agree.
func New(support Support, startup []string, spares []Node, res []*Reservation, last uint64) (*State, error) {
	s := &State{Support: support, byName: make(map[string]int, len(startup)+len(spares)), res: make(map[string]*Reservation, len(res)), last: last}
	s.clean()
	add := func(n Node) error {
		if _, dup := s.byName[n.Name]; dup {
			return fmt.Errorf("node %s is listed twice", n.Name)
		}
		s.byName[n.Name] = len(s.nodes)
		s.nodes = append(s.nodes, n)
		return nil
	}
	for i, name := range startup {
		if err := add(Node{Name: name, Rank: uint(i), Origin: Startup, In: true}); err != nil {
			return nil, err
		}
	}
	for _, n := range spares {
		n.Origin, n.Holder = Spare, ""
		if n.Rank < uint(len(startup)) {
			return nil, fmt.Errorf("spare node %s has rank %d, a startup node's", n.Name, n.Rank)
		}
		if n.Removed && n.In {
			return nil, fmt.Errorf("spare node %s was removed but is in the instance", n.Name)
		}
		if err := add(n); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(s.nodes, func(a, b Node) int { return int(a.Rank) - int(b.Rank) })
	for i := range s.nodes {
		if i > 0 && s.nodes[i].Rank == s.nodes[i-1].Rank {
			return nil, fmt.Errorf("nodes %s and %s share rank %d", s.nodes[i-1].Name, s.nodes[i].Name, s.nodes[i].Rank)
		}
		s.byName[s.nodes[i].Name] = i
	}
	for _, r := range res {
		if _, dup := s.res[r.ID]; dup {
			return nil, fmt.Errorf("allocation %s is listed twice", r.ID)
		}
		if n, ok := idNumber(r.ID); !ok || n > last {
			return nil, fmt.Errorf("allocation id %q was never issued", r.ID)
		}
		s.res[r.ID] = r
		s.order = append(s.order, r.ID)
		if !r.Live() {
			continue
		}
		for _, name := range r.Nodes {
			i, ok := s.byName[name]
			if !ok {
				return nil, fmt.Errorf("allocation %s holds unknown node %s", r.ID, name)
			}
			if h := s.nodes[i].Holder; h != "" {
				return nil, fmt.Errorf("node %s is held by both %s and %s", name, h, r.ID)
			}
			if !s.nodes[i].In {
				return nil, fmt.Errorf("allocation %s holds node %s, which is outside the instance", r.ID, name)
			}
			s.nodes[i].Holder = r.ID
		}
	}
	slices.SortFunc(s.order, func(a, b string) int {
		x, _ := idNumber(a)
		y, _ := idNumber(b)
		return int(x) - int(y)
	})
	return s, nil
}

// idNumber reads the N of an allocation id rN.
func idNumber(id string) (uint64, bool) {
	digits, ok := strings.CutPrefix(id, "r")
	if !ok || digits == "" || digits[0] == '0' {
		return 0, false
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	return n, err == nil
}

func (s *State) clean() {
	s.dirtyRes = map[string]bool{}
	s.dirtyNodes = map[string]bool{}
}

// Dirty returns the reservations and the spare nodes changed since the
// last call, for the caller to persist, and forgets them.
func (s *State) Dirty() (res []*Reservation, spares []Node) {
	// Walk what changed, not everything: the caller asks after every
	// submission, on instances of many thousands of nodes.
	if len(s.dirtyRes) == 0 && len(s.dirtyNodes) == 0 {
		return nil, nil
	}
	for id := range s.dirtyRes {
		res = append(res, s.res[id])
	}
	slices.SortFunc(res, func(a, b *Reservation) int {
		x, _ := idNumber(a.ID)
		y, _ := idNumber(b.ID)
		return cmp.Compare(x, y)
	})
	for name := range s.dirtyNodes {
		if n := s.nodes[s.byName[name]]; n.Origin == Spare {
			spares = append(spares, n)
		}
	}
	slices.SortFunc(spares, func(a, b Node) int { return cmp.Compare(a.Rank, b.Rank) })
	s.clean()
	return res, spares
}

// Last is the last allocation number issued.
func (s *State) Last() uint64 { return s.last }

// Nodes returns every node, in rank order.
func (s *State) Nodes() []Node { return slices.Clone(s.nodes) }

// HasSpares reports whether any node is a spare. Without one every node
// is a startup node, always in the instance. Spares have the ranks after
// the startup nodes' and nodes are kept in rank order, so the last node
// says.
func (s *State) HasSpares() bool {
	return s != nil && len(s.nodes) > 0 && s.nodes[len(s.nodes)-1].Origin != Startup
}

// Node returns the node called name.
func (s *State) Node(name string) (Node, bool) {
	i, ok := s.byName[name]
	if !ok {
		return Node{}, false
	}
	return s.nodes[i], true
}

// Get returns the reservation with allocation id id, live or ended.
func (s *State) Get(id string) (*Reservation, bool) {
	r, ok := s.res[id]
	return r, ok
}

// All returns every reservation in creation order; live only unless all.
func (s *State) All(all bool) []*Reservation {
	out := make([]*Reservation, 0, len(s.order))
	for _, id := range s.order {
		if r := s.res[id]; all || r.Live() {
			out = append(out, r)
		}
	}
	return out
}

// Sessions is what the scheduler must know to filter nodes: the ranks of
// each live non-shared reservation, and the ranks outside the instance
// (spare nodes in the scheduler's pool, and removed ones). Every other
// rank is in the default session.
func (s *State) Sessions() (reserved map[string][]uint, outside []uint) {
	reserved = map[string][]uint{}
	for i := range s.nodes {
		n := &s.nodes[i]
		switch {
		case !n.In:
			outside = append(outside, n.Rank)
		case n.Holder != "" && !s.res[n.Holder].Share:
			reserved[n.Holder] = append(reserved[n.Holder], n.Rank)
		}
	}
	return reserved, outside
}

// Session names the session a node is in: "default", an allocation id,
// or "" when the node is outside the instance.
func (s *State) Session(name string) string {
	i, ok := s.byName[name]
	if !ok || !s.nodes[i].In {
		return ""
	}
	if h := s.nodes[i].Holder; h != "" && !s.res[h].Share {
		return h
	}
	return DefaultSession
}

// DefaultSession names the default session in a target list, standing
// for the specification's invalid namespace.
const DefaultSession = "default"

func (s *State) markNode(i int) {
	if s.nodes[i].Origin == Spare {
		s.dirtyNodes[s.nodes[i].Name] = true
	}
}

func (s *State) markRes(r *Reservation) { s.dirtyRes[r.ID] = true }
