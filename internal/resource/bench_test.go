package resource

import (
	"testing"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/rset"
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

// pool10k is issue 6's scale: 10,000 nodes x 64 cores.
func pool10k(b *testing.B) *Pool {
	b.Helper()
	inv, err := FromConfig([]ConfigEntry{{Hosts: "node[0-9999]", Cores: "0-63"}})
	if err != nil {
		b.Fatal(err)
	}
	return NewPool(inv)
}

// benchFill places and allocates one-core jobs on 10,000 nodes x 64 cores
// until full, one per op; a full pool is replaced off the clock, since
// releasing 640,000 jobs is not what is measured.
func benchFill(b *testing.B, policy Policy) {
	p := pool10k(b)
	req := Request{NSlots: 1, CoresPerSlot: 1}
	id := fluid.ID(0)
	for b.Loop() {
		r, ok := p.Match(req, policy)
		if !ok {
			b.StopTimer()
			p, id = pool10k(b), 0
			b.StartTimer()
			continue
		}
		id++
		if err := p.Allocate(id, r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMatchAllocate10k is worst-fit, sched-simple's default.
func BenchmarkMatchAllocate10k(b *testing.B) { benchFill(b, WorstFit) }

// BenchmarkMatchAllocate10kBestFit packs nodes one after another.
func BenchmarkMatchAllocate10kBestFit(b *testing.B) { benchFill(b, BestFit) }

// BenchmarkMatchAllocate10kFirstFit fills nodes in rank order.
func BenchmarkMatchAllocate10kFirstFit(b *testing.B) { benchFill(b, FirstFit) }

// BenchmarkMatchFull10k asks a full 10,000-node pool for one core: what a
// scheduler pays for every pending job it looks at when nothing fits.
func BenchmarkMatchFull10k(b *testing.B) {
	p := pool10k(b)
	for i, v := range p.Inventory().Nodes() {
		if err := p.Allocate(fluid.ID(i+1), rset.New([]rset.Node{v})); err != nil {
			b.Fatal(err)
		}
	}
	req := Request{NSlots: 1, CoresPerSlot: 1}
	for b.Loop() {
		if r, ok := p.Match(req, WorstFit); ok {
			b.Fatalf("Match = %v on a full pool", r)
		}
	}
}

// BenchmarkAllocateReleaseWide allocates and releases a grant of 32
// one-core nodes, as a replay of lublin_256 (256 nodes of one core) does
// for every job: Allocate and Release look at each node twice.
func BenchmarkAllocateReleaseWide(b *testing.B) {
	inv, err := FromConfig([]ConfigEntry{{Hosts: "node[0-255]", Cores: "0"}})
	if err != nil {
		b.Fatal(err)
	}
	p := NewPool(inv)
	r, ok := p.Match(Request{NSlots: 32, CoresPerSlot: 1}, WorstFit)
	if !ok {
		b.Fatal("no match")
	}
	for b.Loop() {
		if err := p.Allocate(1, r); err != nil {
			b.Fatal(err)
		}
		if err := p.Release(1, nil); err != nil {
			b.Fatal(err)
		}
	}
}
