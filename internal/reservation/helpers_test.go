package reservation

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/fluxq/fluxq/internal/fluid"
)

// The test instance: startup nodes h0..h3 (ranks 0-3; h0 never leaves) and
// spare nodes s4, s5 (ranks 4, 5) in the scheduler's pool.
var (
	testStartup = []string{"h0", "h1", "h2", "h3"}
	testSpares  = []Node{{Name: "s4", Rank: 4}, {Name: "s5", Rank: 5}}
)

func newTestState(t testing.TB, sup Support) *State {
	t.Helper()
	s, err := New(sup, testStartup, testSpares, nil, 0)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

func ptr[T any](v T) *T { return &v }

// Job ids are small numbers: they are opaque to the rules.
const (
	jobA fluid.ID = 101
	jobB fluid.ID = 102
	jobC fluid.ID = 103
	jobD fluid.ID = 104
	jobE fluid.ID = 105
)

var (
	alice     = Requester{Class: Tool, NS: ToolNS("alice")}
	bob       = Requester{Class: Tool, NS: ToolNS("bob")}
	scheduler = Requester{Class: Scheduler, NS: ToolNS("root")}
)

func app(id fluid.ID) Requester { return Requester{Class: Application, NS: JobNS(id)} }

// alive is a Jobs whose alive jobs are the keys set to true.
type alive map[fluid.ID]bool

func (a alive) Alive(id fluid.ID) bool { return a[id] }

func statusOf(err error) Status {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	if err != nil {
		return -1
	}
	return 0
}

// snapshot is everything observable about a State, deep-copied as JSON.
func snapshot(t testing.TB, s *State) string {
	t.Helper()
	b, err := json.Marshal(struct {
		Nodes []Node
		Res   []*Reservation
		Last  uint64
	}{s.Nodes(), s.All(true), s.Last()})
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	return string(b)
}

// mustAlloc serves a request that must succeed.
func mustAlloc(t testing.TB, s *State, req Request, who Requester, now float64) Change {
	t.Helper()
	ch, err := s.Allocate(req, who, now)
	if err != nil {
		t.Fatalf("Allocate(%v by %v): %v", req.Op, who.NS, err)
	}
	return ch
}

// sessionsOf names the session of each node, "" outside the instance.
func sessionsOf(s *State) map[string]string {
	out := map[string]string{}
	for _, n := range s.Nodes() {
		out[n.Name] = s.Session(n.Name)
	}
	return out
}

// inOf lists the nodes in the instance.
func inOf(s *State) []string {
	var out []string
	for _, n := range s.Nodes() {
		if n.In {
			out = append(out, n.Name)
		}
	}
	return out
}

// checkConsistent checks what must hold of any State: every node has at
// most one live holder, which lists it; a held node is in the instance;
// Session and Sessions agree with Nodes.
func checkConsistent(s *State) error {
	reserved, outside := s.Sessions()
	nodes := s.Nodes()
	for _, n := range nodes {
		if n.Holder != "" {
			r, ok := s.Get(n.Holder)
			if !ok || !r.Live() {
				return fmt.Errorf("node %s is held by %q, not a live reservation", n.Name, n.Holder)
			}
			if !slices.Contains(r.Nodes, n.Name) {
				return fmt.Errorf("node %s is held by %s, which does not list it", n.Name, r.ID)
			}
			if !n.In {
				return fmt.Errorf("node %s is held by %s but outside the instance", n.Name, r.ID)
			}
		}
		if n.Origin == Startup && !n.In {
			return fmt.Errorf("startup node %s left the instance", n.Name)
		}
		want := ""
		switch {
		case !n.In:
			if !slices.Contains(outside, n.Rank) {
				return fmt.Errorf("node %s is outside but not in Sessions' outside", n.Name)
			}
		case n.Holder != "":
			want = DefaultSession
			if r, _ := s.Get(n.Holder); !r.Share {
				want = n.Holder
			}
		default:
			want = DefaultSession
		}
		if got := s.Session(n.Name); got != want {
			return fmt.Errorf("Session(%s) = %q, want %q", n.Name, got, want)
		}
		if want != "" && want != DefaultSession && !slices.Contains(reserved[want], n.Rank) {
			return fmt.Errorf("node %s is in %s but Sessions does not say so", n.Name, want)
		}
	}
	count := len(outside)
	for id, ranks := range reserved {
		count += len(ranks)
		for _, rank := range ranks {
			if n := nodes[slices.IndexFunc(nodes, func(n Node) bool { return n.Rank == rank })]; s.Session(n.Name) != id {
				return fmt.Errorf("Sessions puts rank %d in %s, Session says %q", rank, id, s.Session(n.Name))
			}
		}
	}
	nonDefault := 0
	for _, n := range nodes {
		if sess := s.Session(n.Name); sess != DefaultSession {
			nonDefault++
		}
	}
	if count != nonDefault {
		return fmt.Errorf("Sessions covers %d ranks, %d nodes are not in the default session", count, nonDefault)
	}
	for _, r := range s.All(false) {
		if !r.Owns(r.Owner) {
			return fmt.Errorf("%s: owner %s is not in its owner set", r.ID, r.Owner)
		}
		for _, name := range r.Nodes {
			if n, _ := s.Node(name); n.Holder != r.ID {
				return fmt.Errorf("%s lists %s, held by %q", r.ID, name, n.Holder)
			}
		}
	}
	return nil
}
