package resource

import (
	"testing"

	"github.com/fluxq/fluxq/internal/fluid"
)

// BenchmarkMatchAllocate places and allocates one-core jobs on 64 nodes x
// 32 cores until full, then releases them all: the scheduler's hot path.
func BenchmarkMatchAllocate(b *testing.B) {
	inv, err := FromConfig([]ConfigEntry{{Hosts: "node[0-63]", Cores: "0-31"}})
	if err != nil {
		b.Fatal(err)
	}
	p := NewPool(inv)
	req := Request{NSlots: 1, CoresPerSlot: 1}
	id := fluid.ID(0)
	for b.Loop() {
		r, ok := p.Match(req, WorstFit)
		if !ok {
			for j := range id + 1 {
				_ = p.Release(j, nil)
			}
			id = 0
			continue
		}
		id++
		if err := p.Allocate(id, r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFeasible checks a constrained request against 1,024 nodes.
func BenchmarkFeasible(b *testing.B) {
	inv, err := FromConfig([]ConfigEntry{{Hosts: "node[0-1023]", Cores: "0-31", Properties: []string{"batch"}}})
	if err != nil {
		b.Fatal(err)
	}
	p := NewPool(inv)
	req := Request{NNodes: 512, NSlots: 512, CoresPerSlot: 32, Constraint: mustQueryB(b, "batch")}
	for b.Loop() {
		if err := p.Feasible(req); err != nil {
			b.Fatal(err)
		}
	}
}
