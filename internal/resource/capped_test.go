package resource

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/constraint"
	"github.com/fluxq/fluxq/internal/idset"
)

// MatchCapped takes no more than a cap of a capped node, by the fast
// index walk and by the full filter alike, and never takes a partly
// capped node whole.
func TestMatchCapped(t *testing.T) {
	p := NewPool(uniform(3, 4))
	caps := map[uint]Cap{0: {Cores: 1}, 1: {Cores: 0}}
	tests := []struct {
		desc   string
		req    Request
		policy Policy
		want   string // "" for no match
	}{
		{"first-fit takes 1 of rank 0, none of 1, the rest of 2", Request{NSlots: 5, CoresPerSlot: 1}, FirstFit, "rank0/core0 rank2/core[0-3]"},
		{"more than the caps leave", Request{NSlots: 6, CoresPerSlot: 1}, FirstFit, ""},
		// Ties of free cores go in rank order, caps aside.
		{"worst-fit ranks by free cores", Request{NSlots: 2, CoresPerSlot: 1}, WorstFit, "rank[0,2]/core0"},
		{"a node count skips nodes capped below a share", Request{NNodes: 2, NSlots: 2, CoresPerSlot: 1}, FirstFit, "rank[0,2]/core0"},
		{"exclusive takes only uncapped nodes", Request{NNodes: 2, NSlots: 2, CoresPerSlot: 1, Exclusive: true}, FirstFit, ""},
		{"exclusive on one node", Request{NNodes: 1, NSlots: 1, CoresPerSlot: 1, Exclusive: true}, FirstFit, "rank2/core[0-3]"},
	}
	for _, tc := range tests {
		r, ok := p.MatchCapped(tc.req, tc.policy, caps)
		got := ""
		if ok {
			got = r.String()
		}
		if got != tc.want {
			t.Errorf("%s: MatchCapped = %q, want %q", tc.desc, got, tc.want)
		}
	}
	// Without caps it is Match.
	r, ok := p.MatchCapped(Request{NSlots: 6, CoresPerSlot: 1}, FirstFit, nil)
	if !ok || r.String() != "rank0/core[0-3] rank1/core[0-1]" {
		t.Errorf("MatchCapped without caps = %v, %v", r, ok)
	}
}

// Usable lists the nodes a request may ever use: up, in the instance, in
// its sessions, satisfying its constraint.
func TestUsable(t *testing.T) {
	p := NewPool(uniform(5, 2))
	p.SetDown(idset.MustParse("4"))
	p.SetSessions(map[string]idset.Set{"r1": idset.MustParse("2")}, idset.MustParse("3"))
	ranks, err := constraint.ParseJSON([]byte(`{"ranks": ["0-2"]}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		desc string
		req  Request
		want []uint
	}{
		{"default session", Request{}, []uint{0, 1}},
		{"a reservation", Request{Targets: []string{"r1"}}, []uint{2}},
		{"both, with a constraint", Request{Targets: []string{"r1", "default"}, Constraint: ranks}, []uint{0, 1, 2}},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, p.Usable(tc.req)); diff != "" {
			t.Errorf("%s: (-want +got):\n%s", tc.desc, diff)
		}
	}
	if st, ok := p.State(1); !ok || st != (NodeState{Rank: 1, Cores: 2, FreeCores: 2}) {
		t.Errorf("State(1) = %+v, %v", st, ok)
	}
	if _, ok := p.State(9); ok {
		t.Error("State(9) found a rank not in the inventory")
	}
}
