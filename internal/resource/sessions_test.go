package resource

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/rset"
)

// sessionsOf parses {"r1": "0-1"} into what SetSessions takes.
func sessionsOf(t testing.TB, m map[string]string) map[string]idset.Set {
	t.Helper()
	if m == nil {
		return nil
	}
	out := make(map[string]idset.Set, len(m))
	for id, ranks := range m {
		out[id] = mustIDs(t, ranks)
	}
	return out
}

// errText is err's text, "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Node-reservation specification, conformance item 1: "A job's candidate
// nodes are exactly the union of the sessions it is permitted to target,
// and never include a reserved node it does not own." Six nodes of two
// cores; first-fit, so the lowest admissible ranks show.
func TestMatchSessions(t *testing.T) {
	tests := []struct {
		name     string
		reserved map[string]string
		outside  string
		down     string
		req      Request
		want     string // "" when it does not fit now
	}{
		{name: "default only, nothing reserved", req: Request{NSlots: 1, CoresPerSlot: 1}, want: "rank0/core0"},
		{name: "default only, all nodes", req: Request{NNodes: 6, NSlots: 6, CoresPerSlot: 2, Exclusive: true},
			want: "rank[0-5]/core[0-1]"},
		{name: "explicit default is the same", req: Request{NSlots: 1, CoresPerSlot: 1, Targets: []string{"default"}}, want: "rank0/core0"},
		{name: "untargeted never on a reserved node", reserved: map[string]string{"r1": "0-1"},
			req: Request{NSlots: 1, CoresPerSlot: 1}, want: "rank2/core0"},
		{name: "untargeted fits the default session exactly", reserved: map[string]string{"r1": "0-1"},
			req: Request{NNodes: 4, NSlots: 4, CoresPerSlot: 2, Exclusive: true}, want: "rank[2-5]/core[0-1]"},
		{name: "untargeted needs a reserved node", reserved: map[string]string{"r1": "0-1"},
			req: Request{NNodes: 5, NSlots: 5, CoresPerSlot: 1}},
		{name: "single reservation", reserved: map[string]string{"r1": "3-4", "r2": "0"},
			req: Request{NSlots: 4, CoresPerSlot: 1, Targets: []string{"r1"}}, want: "rank[3-4]/core[0-1]"},
		{name: "single reservation too small", reserved: map[string]string{"r1": "3-4", "r2": "0"},
			req: Request{NSlots: 5, CoresPerSlot: 1, Targets: []string{"r1"}}},
		{name: "another's reservation is never used", reserved: map[string]string{"r1": "3-4", "r2": "0"},
			req: Request{NNodes: 3, NSlots: 3, CoresPerSlot: 1, Targets: []string{"r2"}}},
		{name: "union of reservations", reserved: map[string]string{"r1": "3-4", "r2": "0"},
			req: Request{NNodes: 3, NSlots: 3, CoresPerSlot: 1, Targets: []string{"r1", "r2"}}, want: "rank[0,3-4]/core0"},
		{name: "union with default", reserved: map[string]string{"r1": "3-4", "r2": "0"},
			req: Request{NNodes: 5, NSlots: 5, CoresPerSlot: 1, Targets: []string{"r1", "default"}}, want: "rank[1-5]/core0"},
		{name: "union with default leaves others out", reserved: map[string]string{"r1": "3-4", "r2": "0"},
			req: Request{NNodes: 6, NSlots: 6, CoresPerSlot: 1, Targets: []string{"default", "r1"}}},
		{name: "unknown reservation has no nodes", reserved: map[string]string{"r1": "3-4"},
			req: Request{NSlots: 1, CoresPerSlot: 1, Targets: []string{"r9"}}},
		{name: "reservation target while nothing is reserved", req: Request{NSlots: 1, CoresPerSlot: 1, Targets: []string{"r1"}}},
		{name: "outside nodes are never used", outside: "0,5",
			req: Request{NSlots: 8, CoresPerSlot: 1}, want: "rank[1-4]/core[0-1]"},
		{name: "outside nodes are never used, even to fit", outside: "0,5",
			req: Request{NSlots: 9, CoresPerSlot: 1}},
		{name: "outside nodes are never used by a targeted job", reserved: map[string]string{"r1": "1-2"}, outside: "0,5",
			req: Request{NSlots: 8, CoresPerSlot: 1, Targets: []string{"default", "r1"}}, want: "rank[1-4]/core[0-1]"},
		{name: "down nodes in a reservation", reserved: map[string]string{"r1": "1-2"}, down: "1",
			req: Request{NSlots: 1, CoresPerSlot: 1, Targets: []string{"r1"}}, want: "rank2/core0"},
		{name: "constraint within the target", reserved: map[string]string{"r1": "1-3"},
			req: Request{NSlots: 1, CoresPerSlot: 1, Targets: []string{"r1"}, Constraint: mustQuery(t, "rank:3")}, want: "rank3/core0"},
		{name: "constraint outside the target", reserved: map[string]string{"r1": "1-3"},
			req: Request{NSlots: 1, CoresPerSlot: 1, Targets: []string{"r1"}, Constraint: mustQuery(t, "rank:4")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPool(uniform(6, 2))
			p.SetSessions(sessionsOf(t, tc.reserved), mustIDs(t, tc.outside))
			p.SetDown(mustIDs(t, tc.down))
			got := ""
			if r, ok := p.Match(tc.req, FirstFit); ok {
				got = r.String()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Match (-want +got):\n%s", diff)
			}
			// Feasibility looks at the whole inventory: sessions and
			// outside nodes change, so none of these is denied.
			if err := p.Feasible(tc.req); err != nil {
				t.Errorf("Feasible = %v", err)
			}
		})
	}
}

// Every policy honours the filter, and so does packing without a node
// count: worst-fit would pick the emptiest node, which is reserved.
func TestMatchSessionsPolicies(t *testing.T) {
	for _, policy := range []Policy{FirstFit, WorstFit, BestFit} {
		t.Run(policy.String(), func(t *testing.T) {
			p := NewPool(uniform(3, 4))
			if err := p.Allocate(1, summary(t, "rank1/core[0-2]")); err != nil {
				t.Fatal(err)
			}
			p.SetSessions(sessionsOf(t, map[string]string{"r1": "0,2"}), idset.Set{})
			var got []string
			for i := range 3 {
				r, ok := p.Match(Request{NSlots: 1, CoresPerSlot: 1}, policy)
				if !ok {
					got = append(got, "-")
					continue
				}
				got = append(got, r.String())
				if err := p.Allocate(fluid.ID(10+i), r); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff([]string{"rank1/core3", "-", "-"}, got); diff != "" {
				t.Errorf("untargeted placements (-want +got):\n%s", diff)
			}
		})
	}
}

// FitsTargets explains a job that waits on sessions too small for it; it
// ignores what is down or allocated, and outside nodes never count.
func TestFitsTargets(t *testing.T) {
	// node0: 2 cores; node1: 6 cores; node2-3: 3 cores and 1 gpu; node4-5:
	// 4 cores.
	inv, err := FromConfig([]ConfigEntry{
		{Hosts: "node0", Cores: "0-1"},
		{Hosts: "node1", Cores: "0-5"},
		{Hosts: "node[2-3]", Cores: "0-2", GPUs: "0", Properties: []string{"gpu"}},
		{Hosts: "node[4-5]", Cores: "0-3"},
	})
	if err != nil {
		t.Fatal(err)
	}
	reserved := map[string]string{"r1": "0-1", "r2": "2-3", "r3": "4"}
	tests := []struct {
		name     string
		reserved map[string]string
		outside  string
		req      Request
		want     string
	}{
		{name: "untargeted, nothing reserved", req: Request{NNodes: 6, NSlots: 6, CoresPerSlot: 2}},
		{name: "untargeted, default too small", reserved: reserved,
			req: Request{NNodes: 2, NSlots: 2, CoresPerSlot: 1}, want: "target default has 1 nodes, needs 2"},
		{name: "untargeted fits the default", reserved: reserved, req: Request{NSlots: 4, CoresPerSlot: 1}},
		{name: "one target, too few nodes", reserved: reserved,
			req: Request{NNodes: 3, NSlots: 3, CoresPerSlot: 1, Targets: []string{"r2"}}, want: "target r2 has 2 nodes, needs 3"},
		{name: "union, too few nodes", reserved: reserved,
			req:  Request{NNodes: 6, NSlots: 6, CoresPerSlot: 1, Targets: []string{"r1", "default", "r3"}},
			want: "targets r1,default,r3 have 4 nodes, needs 6"},
		{name: "union fits", reserved: reserved,
			req: Request{NNodes: 4, NSlots: 4, CoresPerSlot: 1, Targets: []string{"r1", "default", "r3"}}},
		{name: "target without nodes", reserved: reserved,
			req: Request{NSlots: 1, CoresPerSlot: 1, Targets: []string{"r7"}}, want: "target r7 has 0 nodes, needs 1"},
		{name: "too few cores", reserved: reserved,
			req: Request{NSlots: 9, CoresPerSlot: 1, Targets: []string{"r1"}}, want: "target r1 has 8 cores, needs 9"},
		{name: "too few gpus", reserved: reserved,
			req: Request{NSlots: 3, CoresPerSlot: 1, GPUsPerSlot: 1, Targets: []string{"r2"}}, want: "target r2 has 2 gpus, needs 3"},
		{name: "no gpus at all", reserved: reserved,
			req: Request{NSlots: 1, CoresPerSlot: 1, GPUsPerSlot: 1, Targets: []string{"r1"}}, want: "target r1 has 0 gpus, needs 1"},
		{name: "enough cores, not per node", reserved: reserved,
			req: Request{NNodes: 2, NSlots: 2, CoresPerSlot: 4, Targets: []string{"r1"}}, want: "target r1 has 1 nodes with 4 cores, needs 2"},
		{name: "enough cores, not per node, with gpus", reserved: reserved,
			req:  Request{NNodes: 1, NSlots: 2, CoresPerSlot: 1, GPUsPerSlot: 1, Targets: []string{"r2", "r3"}},
			want: "targets r2,r3 have 0 nodes with 2 cores and 2 gpus, needs 1"},
		{name: "enough cores, not per slot", reserved: reserved,
			req: Request{NSlots: 2, CoresPerSlot: 3, Targets: []string{"r2", "r3"}}, want: ""},
		{name: "slots too big for the nodes", reserved: reserved,
			req: Request{NSlots: 3, CoresPerSlot: 2, Targets: []string{"r2"}}, want: "target r2 has room for 2 slots of 2 cores, needs 3"},
		{name: "constrained counts matching nodes", reserved: reserved,
			req:  Request{NNodes: 2, NSlots: 2, CoresPerSlot: 1, Targets: []string{"r1", "r2"}, Constraint: mustQuery(t, "gpu")},
			want: ""},
		{name: "constrained, too few matching nodes", reserved: reserved,
			req:  Request{NNodes: 3, NSlots: 3, CoresPerSlot: 1, Targets: []string{"r1", "r2"}, Constraint: mustQuery(t, "gpu")},
			want: "targets r1,r2 have 2 matching nodes, needs 3"},
		{name: "outside nodes never count", reserved: map[string]string{"r1": "0-1"}, outside: "4-5",
			req: Request{NNodes: 3, NSlots: 3, CoresPerSlot: 1}, want: "target default has 2 nodes, needs 3"},
		{name: "outside nodes never count for a union", reserved: map[string]string{"r1": "0-1"}, outside: "4-5",
			req: Request{NNodes: 4, NSlots: 4, CoresPerSlot: 1, Targets: []string{"default", "r1"}}},
		{name: "malformed request", req: Request{NSlots: 0, CoresPerSlot: 1}, want: "Unable to determine slot count"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPool(inv)
			p.SetSessions(sessionsOf(t, tc.reserved), mustIDs(t, tc.outside))
			// Neither down nor allocated changes the answer.
			p.SetDown(mustIDs(t, "0-5"))
			if err := p.Allocate(1, summary(t, "rank[0-5]/core[0-1]")); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, errText(p.FitsTargets(tc.req))); diff != "" {
				t.Errorf("FitsTargets (-want +got):\n%s", diff)
			}
			// An unconstrained request is answered from per-session
			// summaries; a constraint every node meets walks the nodes
			// instead, and must come to the same answer.
			if tc.req.Constraint.IsEmpty() && tc.req.Validate() == nil {
				all := tc.req
				all.Constraint = mustQuery(t, "rank:0-5")
				got := strings.ReplaceAll(errText(p.FitsTargets(all)), "matching ", "")
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("FitsTargets by walking the nodes (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// SetSessions replaces the previous sessions outright; ranks outside the
// pool and a "default" key are ignored; overlapping reservations resolve
// the same way whatever the map order.
func TestSetSessions(t *testing.T) {
	type state struct {
		Reserved map[string]string
		Outside  string
	}
	tests := []struct {
		name     string
		steps    []state // applied in order to one pool of four nodes
		want     state   // what Sessions reports after the last
		untarget string  // where an untargeted exclusive job of every default node lands
	}{
		{name: "nothing", steps: []state{{}}, want: state{Reserved: map[string]string{}}, untarget: "rank[0-3]/core[0-1]"},
		{name: "replace a previous map",
			steps: []state{{Reserved: map[string]string{"r1": "0-1", "r2": "2"}, Outside: "3"}, {Reserved: map[string]string{"r2": "1"}}},
			want:  state{Reserved: map[string]string{"r2": "1"}}, untarget: "rank[0,2-3]/core[0-1]"},
		{name: "empty map clears all",
			steps: []state{{Reserved: map[string]string{"r1": "0-1"}, Outside: "2"}, {Reserved: map[string]string{}}},
			want:  state{Reserved: map[string]string{}}, untarget: "rank[0-3]/core[0-1]"},
		{name: "unknown ranks and default ignored",
			steps: []state{{Reserved: map[string]string{"r1": "3-9", "default": "0", "r5": "100"}, Outside: "1,50-4000000000"}},
			want:  state{Reserved: map[string]string{"r1": "3"}, Outside: "1"}, untarget: "rank[0,2]/core[0-1]"},
		{name: "overlap goes to the first id",
			steps: []state{{Reserved: map[string]string{"r2": "1-2", "r10": "2-3", "r1": "0-1"}}},
			want:  state{Reserved: map[string]string{"r1": "0-1", "r10": "2-3"}}, untarget: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPool(uniform(4, 2))
			for _, s := range tc.steps {
				p.SetSessions(sessionsOf(t, s.Reserved), mustIDs(t, s.Outside))
			}
			reserved, outside := p.Sessions()
			got := state{Reserved: map[string]string{}, Outside: outside.String()}
			for id, ranks := range reserved {
				got.Reserved[id] = ranks.String()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Sessions (-want +got):\n%s", diff)
			}
			nodes := 0
			for i := range p.nodes {
				if p.nodes[i].session == "" && !p.nodes[i].outside {
					nodes++
				}
			}
			gotR := ""
			if r, ok := p.Match(Request{NNodes: max(nodes, 1), NSlots: max(nodes, 1), CoresPerSlot: 2, Exclusive: true}, FirstFit); ok {
				gotR = r.String()
			}
			if diff := cmp.Diff(tc.untarget, gotR); diff != "" {
				t.Errorf("untargeted Match (-want +got):\n%s", diff)
			}
		})
	}
}

// Grow adds spare nodes: up, free, in the default session, merged in rank
// order; a rank already there is refused and nothing changes.
func TestGrow(t *testing.T) {
	tests := []struct {
		name    string
		start   string // summary of the starting inventory
		grow    string
		wantErr string
		want    string // the inventory after
		first   string // first-fit placement of a one-core job per node
	}{
		{name: "append", start: "rank[0-1]/core[0-1]", grow: "rank[2-3]/core[0-3]",
			want: "rank[0-1]/core[0-1] rank[2-3]/core[0-3]", first: "rank[0-3]/core0"},
		{name: "in between", start: "rank0/core0 rank3/core0", grow: "rank[1-2]/core[0-1],gpu0",
			want: "rank[0,3]/core0 rank[1-2]/core[0-1],gpu0", first: "rank[0-3]/core0"},
		{name: "empty", start: "rank0/core0", grow: "", want: "rank0/core0", first: "rank0/core0"},
		{name: "rank already there", start: "rank[0-1]/core[0-1]", grow: "rank2/core0 rank1/core2",
			wantErr: "rank 1 is already in the inventory", want: "rank[0-1]/core[0-1]", first: "rank[0-1]/core0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPool(summary(t, tc.start))
			p.SetDown(p.Inventory().Ranks())
			if diff := cmp.Diff(tc.wantErr, errText(p.Grow(summary(t, tc.grow)))); diff != "" {
				t.Errorf("Grow (-want +got):\n%s", diff)
			}
			if got := p.Inventory().String(); got != tc.want {
				t.Errorf("inventory %q, want %q", got, tc.want)
			}
			p.SetUp(p.Inventory().Ranks())
			n, _, _ := p.Inventory().Counts()
			r, ok := p.Match(Request{NNodes: n, NSlots: n, CoresPerSlot: 1}, FirstFit)
			if !ok {
				t.Fatal("no placement on the grown pool")
			}
			if got := r.String(); got != tc.first {
				t.Errorf("placement %q, want %q", got, tc.first)
			}
			if err := p.Allocate(1, r); err != nil {
				t.Fatal(err)
			}
		})
	}
	// Grown nodes are up, and take the sessions set afterwards.
	p := NewPool(summary(t, "rank0/core0"))
	if err := p.Grow(summary(t, "rank1/core0")); err != nil {
		t.Fatal(err)
	}
	if r, ok := p.Match(Request{NNodes: 2, NSlots: 2, CoresPerSlot: 1}, FirstFit); !ok || r.String() != "rank[0-1]/core0" {
		t.Errorf("grown node not up: %v %v", r, ok)
	}
	p.SetSessions(map[string]idset.Set{"r1": idset.Of(1)}, idset.Set{})
	if r, ok := p.Match(Request{NSlots: 1, CoresPerSlot: 1, Targets: []string{"r1"}}, FirstFit); !ok || r.String() != "rank1/core0" {
		t.Errorf("grown node not in r1: %v %v", r, ok)
	}
	var nilR *rset.R
	if err := p.Grow(nilR); err != nil {
		t.Errorf("Grow(nil) = %v", err)
	}
}
