package resource

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/idset"
)

// Each question runs the filters that take part in it and can refuse a
// node for the request; a walk of the free index leaves out those the
// index answers already.
func TestChainFilters(t *testing.T) {
	onA := mustQuery(t, "a")
	plain := Request{NSlots: 1, CoresPerSlot: 1}
	constrained := Request{NSlots: 1, CoresPerSlot: 1, Constraint: onA}
	targeted := Request{NSlots: 1, CoresPerSlot: 1, Targets: []string{"r1"}}
	tests := []struct {
		name      string
		q         question
		req       Request
		fromIndex bool
		want      []string
	}{
		{"ever, plain", ever, plain, false, []string{"has a core"}},
		{"ever, constrained", ever, constrained, false, []string{"has a core", "constraint"}},
		{"targets, plain", targets, plain, false, []string{"in the instance", "has a core"}},
		{"targets, targeted", targets, targeted, false, []string{"in the instance", "node reservation targets", "has a core"}},
		{"usable, constrained", usable, constrained, false, []string{"up", "in the instance", "has a core", "constraint"}},
		{"now, plain", now, plain, false, []string{"up", "in the instance", "room"}},
		{"now, plain, from the index", now, plain, true, []string{"room"}},
		{"now, targeted and constrained, from the index", now, Request{NSlots: 1, CoresPerSlot: 1, Targets: []string{"r1"}, Constraint: onA}, true,
			[]string{"node reservation targets", "room", "constraint"}},
	}
	p := NewPool(uniform(2, 2))
	for _, tc := range tests {
		c := p.ask(tc.q, tc.req, nil, tc.fromIndex)
		var got []string
		for _, f := range c.tests {
			got = append(got, f.name)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: (-want +got):\n%s", tc.name, diff)
		}
	}
	// A node reservation anywhere turns the session filter on for every
	// request, since an untargeted one must keep off reserved nodes.
	p.SetSessions(map[string]idset.Set{"r1": idset.MustParse("1")}, idset.Set{})
	if c := p.ask(now, plain, nil, true); len(c.tests) != 2 || c.tests[0].name != "node reservation targets" {
		t.Errorf("now, plain, with a node reservation: %d filters", len(c.tests))
	}
}

// Room is the room filter's measure: slots without a node count, else
// whether the node can be one of the request's nodes.
func TestRoom(t *testing.T) {
	tests := []struct {
		name                            string
		req                             Request
		cores, gpus, freeCores, freeGPU int
		want                            int
		mem, freeMem                    uint64
	}{
		{"slots of 2 cores in 5 free", Request{NSlots: 9, CoresPerSlot: 2}, 8, 0, 5, 0, 2, 0, 0},
		{"gpus bound the slots", Request{NSlots: 9, CoresPerSlot: 1, GPUsPerSlot: 1}, 8, 2, 8, 1, 1, 0, 0},
		{"a node's share fits", Request{NNodes: 2, NSlots: 4, CoresPerSlot: 2}, 8, 0, 4, 0, 1, 0, 0},
		{"a node's share does not", Request{NNodes: 2, NSlots: 4, CoresPerSlot: 2}, 8, 0, 3, 0, 0, 0, 0},
		{"exclusive on an idle node", Request{NNodes: 1, NSlots: 1, CoresPerSlot: 1, Exclusive: true}, 4, 1, 4, 1, 1, 0, 0},
		{"exclusive on a busy node", Request{NNodes: 1, NSlots: 1, CoresPerSlot: 1, Exclusive: true}, 4, 1, 4, 0, 0, 0, 0},
		{"memory bounds the slots", Request{NSlots: 9, CoresPerSlot: 1, MemPerSlot: 3 << 30}, 8, 0, 8, 0, 2, 8 << 30, 7 << 30},
		{"no memory asked, none known", Request{NSlots: 9, CoresPerSlot: 1}, 8, 0, 8, 0, 8, 0, 0},
		{"memory asked, none known", Request{NSlots: 9, CoresPerSlot: 1, MemPerSlot: 1}, 8, 0, 8, 0, 0, 0, 0},
		{"a node's share of memory fits", Request{NNodes: 2, NSlots: 4, CoresPerSlot: 1, MemPerSlot: 1 << 30}, 8, 0, 8, 0, 1, 4 << 30, 2 << 30},
		{"a node's share of memory does not", Request{NNodes: 2, NSlots: 4, CoresPerSlot: 1, MemPerSlot: 1 << 30}, 8, 0, 8, 0, 0, 4 << 30, 1 << 30},
		{"exclusive where memory is held", Request{NNodes: 1, NSlots: 1, CoresPerSlot: 1, Exclusive: true}, 4, 0, 4, 0, 0, 4 << 30, 3 << 30},
	}
	for _, tc := range tests {
		if got := tc.req.Room(tc.cores, tc.gpus, tc.freeCores, tc.freeGPU, tc.mem, tc.freeMem); got != tc.want {
			t.Errorf("%s: Room = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// Compare is the ranker: worst-fit puts the node with more free cores
// first, best-fit the one with fewer, first-fit leaves rank order.
func TestCompare(t *testing.T) {
	if WorstFit.Compare(4, 2) >= 0 || BestFit.Compare(4, 2) <= 0 || FirstFit.Compare(4, 2) != 0 || WorstFit.Compare(3, 3) != 0 {
		t.Error("Compare does not order as the policies say")
	}
}

// One entry in filters reaches every question and both walks: a filter
// that keeps odd ranks off is honoured by Feasible, FitsTargets, Usable
// and Match, packed (the index walk) or by node count (the scan).
func TestOneFilterReachesEveryPath(t *testing.T) {
	saved := filters
	t.Cleanup(func() {
		filters = saved
		asked = listAsked() // after filters is restored: it reads them
	})
	filters = append(append([]filter(nil), saved...), filter{
		name: "even ranks", asks: ever | targets | usable | now,
		keep: func(_ *chain, ns []poolNode, idx []int) []int {
			return keep(ns, idx, func(n *poolNode) bool { return n.target.Rank%2 == 0 })
		},
	})
	asked = listAsked()

	p := NewPool(uniform(4, 2))
	if diff := cmp.Diff([]uint{0, 2}, p.Usable(Request{})); diff != "" {
		t.Errorf("Usable (-want +got):\n%s", diff)
	}
	if err := p.Feasible(Request{NNodes: 3, NSlots: 3, CoresPerSlot: 1}); err != ErrUnsatisfiable {
		t.Errorf("Feasible of 3 nodes = %v, want %v", err, ErrUnsatisfiable)
	}
	if err := p.FitsTargets(Request{NSlots: 5, CoresPerSlot: 1}); err == nil || err.Error() != "target default has 4 cores, needs 5" {
		t.Errorf("FitsTargets of 5 cores = %v", err)
	}
	for _, policy := range []Policy{WorstFit, FirstFit, BestFit} {
		if r, ok := p.Match(Request{NSlots: 4, CoresPerSlot: 1}, policy); !ok || r.String() != "rank[0,2]/core[0-1]" {
			t.Errorf("%s: packed Match = %v, %v", policy, r, ok)
		}
		if r, ok := p.Match(Request{NNodes: 2, NSlots: 2, CoresPerSlot: 2}, policy); !ok || r.String() != "rank[0,2]/core[0-1]" {
			t.Errorf("%s: Match by node count = %v, %v", policy, r, ok)
		}
	}
}
