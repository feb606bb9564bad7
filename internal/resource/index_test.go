package resource

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/constraint"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/rset"
)

// matchResult is what Match answers, with the R's summary alongside so
// that a difference reads as ranks and cores; cmp compares R by its Equal
// method: ranks, hostnames, cores, GPUs, properties and nslots.
type matchResult struct {
	OK      bool
	Summary string
	R       *rset.R
}

func resultOf(r *rset.R, ok bool) matchResult {
	if !ok {
		return matchResult{}
	}
	return matchResult{OK: true, Summary: r.String(), R: r}
}

// randomNodes makes n nodes of mixed sizes, ranks from first up with gaps,
// core ids with holes, GPUs on some, property "a" on about half.
func randomNodes(rng *rand.Rand, first uint, n int) []rset.Node {
	nodes := make([]rset.Node, 0, n)
	rank := first
	for range n {
		rank += uint(rng.IntN(3))
		ncores := []int{0, 1, 2, 3, 4, 8, 8, 12}[rng.IntN(8)]
		var cores []uint
		for id := uint(0); len(cores) < ncores; id++ {
			if rng.IntN(5) > 0 {
				cores = append(cores, id)
			}
		}
		var gpus idset.Set
		if rng.IntN(3) == 0 {
			gpus = idset.FromRange(0, uint(rng.IntN(4)))
		}
		var props []string
		if rng.IntN(2) == 0 {
			props = []string{"a"}
		}
		// Memory on most nodes, 0 to 3G, in steps a request's slots
		// divide unevenly.
		var mem uint64
		if rng.IntN(4) > 0 {
			mem = uint64(rng.IntN(7)) << 29
		}
		nodes = append(nodes, rset.Node{Rank: rank, Hostname: fmt.Sprintf("n%d", rank), Cores: idset.Of(cores...), GPUs: gpus, Properties: props, Memory: mem})
		rank++
	}
	return nodes
}

// randomRanks picks ranks up to top, each with probability 1/k.
func randomRanks(rng *rand.Rand, top uint, k int) idset.Set {
	var ids []uint
	for r := range top + 1 {
		if rng.IntN(k) == 0 {
			ids = append(ids, r)
		}
	}
	return idset.Of(ids...)
}

// randomRequest is mostly the fast path's kind of request, sometimes one
// the old path keeps (with constraint c), sometimes too large for the pool.
func randomRequest(rng *rand.Rand, c constraint.Constraint) Request {
	req := Request{NSlots: 1 + rng.IntN(6), CoresPerSlot: 1 + rng.IntN(4)}
	if rng.IntN(4) == 0 {
		req.GPUsPerSlot = 1 + rng.IntN(2)
	}
	if rng.IntN(3) == 0 {
		req.MemPerSlot = uint64(1+rng.IntN(3)) << 28
	}
	switch rng.IntN(12) {
	case 0:
		req.NNodes = 1 + rng.IntN(3)
		req.NSlots = req.NNodes * (1 + rng.IntN(2))
	case 1:
		req.NNodes = 1 + rng.IntN(2)
		req.NSlots = req.NNodes
		req.Exclusive = true
	case 2:
		req.Constraint = c
	case 3:
		req.NSlots = 100 + rng.IntN(1000)
	}
	switch rng.IntN(6) {
	case 0:
		req.Targets = []string{"r1"}
	case 1:
		req.Targets = []string{"default", "r2"}
	}
	return req
}

// TestMatchFastEquivalence drives random pools through random placements,
// releases, drains, sessions and growth, and checks after every step that
// Match answers exactly as the old filter-and-sort path does and that the
// index agrees with the nodes.
func TestMatchFastEquivalence(t *testing.T) {
	for _, policy := range []Policy{WorstFit, BestFit, FirstFit} {
		for seed := range uint64(12) {
			t.Run(fmt.Sprintf("%s/seed%d", policy, seed), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, uint64(policy)))
				// Up to 200 nodes, so buckets span several words.
				nodes := randomNodes(rng, uint(rng.IntN(3)), 1+rng.IntN(200))
				p := NewPool(rset.New(nodes))
				top := nodes[len(nodes)-1].Rank + 10
				var held []fluid.ID
				next := fluid.ID(1)
				fast := 0
				onA := mustQuery(t, "a")
				for step := range 400 {
					req := randomRequest(rng, onA)
					// The reference scans every node: with the index off,
					// matchSlow's candidates do not come from it.
					on := p.free.on
					p.free.on = false
					want := resultOf(p.matchSlow(req, policy, nil))
					p.free.on = on
					got := resultOf(p.Match(req, policy))
					if diff := cmp.Diff(want, got); diff != "" {
						t.Fatalf("step %d: Match(%+v) (-want +got):\n%s", step, req, diff)
					}
					if p.free.on && req.NNodes == 0 && req.Constraint.IsEmpty() {
						fast++
					}
					switch op := rng.IntN(20); {
					case op < 10 && got.OK:
						if err := p.Allocate(next, got.R); err != nil {
							t.Fatalf("step %d: Allocate(%s): %v", step, got.Summary, err)
						}
						held = append(held, next)
						next++
					case op < 15 && len(held) > 0:
						k := rng.IntN(len(held))
						id := held[k]
						var part *rset.R // nil: all of it
						if mine := p.Allocated(id).Nodes(); len(mine) > 1 && rng.IntN(2) == 0 {
							part = rset.New(mine[:1])
						}
						if err := p.Release(id, part); err != nil {
							t.Fatalf("step %d: Release: %v", step, err)
						}
						if p.Allocated(id).IsEmpty() {
							held = append(held[:k], held[k+1:]...)
						}
					case op < 17:
						p.SetDown(randomRanks(rng, top, 8))
					case op < 19:
						p.SetUp(randomRanks(rng, top, 3))
					case rng.IntN(2) == 0:
						if rng.IntN(3) == 0 {
							p.SetSessions(nil, idset.Set{})
						} else {
							p.SetSessions(map[string]idset.Set{"r1": randomRanks(rng, top, 6), "r2": randomRanks(rng, top, 6)}, randomRanks(rng, top, 10))
						}
					default:
						// Grow by ranks in the gaps and above, so node
						// indices shift under the index.
						var fresh []rset.Node
						for _, v := range randomNodes(rng, 0, 3) {
							v.Rank = uint(rng.IntN(int(top) + 5))
							if _, ok := p.index[v.Rank]; !ok {
								fresh = append(fresh, v)
							}
						}
						if err := p.Grow(rset.New(fresh)); err != nil {
							t.Fatalf("step %d: Grow: %v", step, err)
						}
						top += 5
					}
					checkIndex(t, p)
				}
				if fast < 100 {
					t.Errorf("only %d of 400 requests took the fast path", fast)
				}
			})
		}
	}
}

// indexState is what the index holds, for comparison with what the nodes
// say it should.
type indexState struct {
	Cores, GPUs int
	Mem         uint64
	Buckets     map[int][]int // free cores -> node indices
}

// checkIndex compares the pool's index with one derived from the nodes.
func checkIndex(t *testing.T, p *Pool) {
	t.Helper()
	want := indexState{Buckets: map[int][]int{}}
	for i := range p.nodes {
		n := &p.nodes[i]
		if n.down || n.outside {
			continue
		}
		want.Cores += n.nfreeCores
		want.GPUs += n.nfreeGPUs
		want.Mem += n.freeMem
		if p.free.on && n.nfreeCores > 0 {
			want.Buckets[n.nfreeCores] = append(want.Buckets[n.nfreeCores], i)
		}
	}
	x := &p.free
	got := indexState{Cores: x.cores, GPUs: x.gpus, Mem: x.mem, Buckets: map[int][]int{}}
	for c, b := range x.buckets {
		var in []int
		b.each(func(i int) bool { in = append(in, i); return true })
		if len(in) > 0 {
			got.Buckets[c] = in
		}
		if x.sizes[c] != len(in) || (x.filled.next(c) == c) != (len(in) > 0) {
			t.Fatalf("bucket %d: size %d, filled %v, holds %d nodes", c, x.sizes[c], x.filled.next(c) == c, len(in))
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("index (-want +got):\n%s", diff)
	}
}

// The free totals, and Match's refusal of a request that needs more than
// they hold, follow every change of what is free, down or in the instance.
func TestFreeCoresAndRejection(t *testing.T) {
	huge := rset.New([]rset.Node{{Rank: 0, Cores: idset.FromRange(0, 2999999), GPUs: idset.FromRange(0, 1)}})
	tests := []struct {
		name    string
		inv     *rset.R // nil: testInventory, 4 x 4 cores, 2 GPUs on ranks 2-3
		setup   func(p *Pool) error
		req     Request
		policy  Policy
		want    [2]int // FreeCores after setup
		wantR   string // Match of req, "" = none
		indexed bool   // whether the buckets are kept
	}{
		{name: "idle pool, all of it", req: Request{NSlots: 16, CoresPerSlot: 1},
			want: [2]int{16, 4}, wantR: "rank[0-3]/core[0-3]", indexed: true},
		{name: "idle pool, one core too many", req: Request{NSlots: 17, CoresPerSlot: 1},
			want: [2]int{16, 4}, indexed: true},
		{name: "one gpu too many", req: Request{NSlots: 5, CoresPerSlot: 1, GPUsPerSlot: 1},
			want: [2]int{16, 4}, indexed: true},
		{name: "allocation counts", setup: func(p *Pool) error { return p.Allocate(1, summary(t, "rank0/core[0-1] rank2/gpu0")) },
			req: Request{NSlots: 15, CoresPerSlot: 1}, want: [2]int{14, 3}, indexed: true},
		{name: "allocation leaves the rest", setup: func(p *Pool) error { return p.Allocate(1, summary(t, "rank0/core[0-1] rank2/gpu0")) },
			req: Request{NSlots: 7, CoresPerSlot: 2}, policy: FirstFit, want: [2]int{14, 3}, wantR: "rank0/core[2-3] rank[1-3]/core[0-3]", indexed: true},
		{name: "release gives back", setup: func(p *Pool) error {
			if err := p.Allocate(1, summary(t, "rank[0-3]/core[0-3]")); err != nil {
				return err
			}
			return p.Release(1, summary(t, "rank3/core[2-3]"))
		}, req: Request{NSlots: 1, CoresPerSlot: 2}, want: [2]int{2, 4}, wantR: "rank3/core[2-3]", indexed: true},
		{name: "full pool", setup: func(p *Pool) error { return p.Allocate(1, summary(t, "rank[0-3]/core[0-3]")) },
			req: Request{NSlots: 1, CoresPerSlot: 1}, want: [2]int{0, 4}, indexed: true},
		{name: "down ranks do not count", setup: func(p *Pool) error { p.SetDown(idset.MustParse("1,3,7")); return nil },
			req: Request{NSlots: 3, CoresPerSlot: 1, GPUsPerSlot: 1}, want: [2]int{8, 2}, indexed: true},
		{name: "down twice, up once", setup: func(p *Pool) error {
			p.SetDown(idset.MustParse("1"))
			p.SetDown(idset.MustParse("1-2"))
			p.SetUp(idset.MustParse("1"))
			return nil
		}, req: Request{NSlots: 12, CoresPerSlot: 1}, want: [2]int{12, 2}, wantR: "rank[0-1,3]/core[0-3]", indexed: true},
		{name: "held on a down rank, released, then up", setup: func(p *Pool) error {
			p.SetDown(idset.MustParse("0"))
			if err := p.Allocate(1, summary(t, "rank0/core0")); err != nil {
				return err
			}
			if err := p.Release(1, nil); err != nil {
				return err
			}
			p.SetUp(idset.MustParse("0"))
			return nil
		}, req: Request{NSlots: 16, CoresPerSlot: 1}, want: [2]int{16, 4}, wantR: "rank[0-3]/core[0-3]", indexed: true},
		{name: "outside ranks do not count", setup: func(p *Pool) error { p.SetSessions(nil, idset.MustParse("2-3")); return nil },
			req: Request{NSlots: 1, CoresPerSlot: 1, GPUsPerSlot: 1}, want: [2]int{8, 0}, indexed: true},
		{name: "reserved ranks count, the default session cannot use them", setup: func(p *Pool) error {
			p.SetSessions(map[string]idset.Set{"r1": idset.MustParse("0-1")}, idset.Set{})
			return nil
		}, req: Request{NSlots: 9, CoresPerSlot: 1}, want: [2]int{16, 4}, indexed: true},
		{name: "a reservation's own nodes", setup: func(p *Pool) error {
			p.SetSessions(map[string]idset.Set{"r1": idset.MustParse("0-1")}, idset.Set{})
			return nil
		}, req: Request{NSlots: 5, CoresPerSlot: 1, Targets: []string{"r1"}}, want: [2]int{16, 4}, wantR: "rank0/core[0-3] rank1/core0", indexed: true},
		{name: "sessions lifted", setup: func(p *Pool) error {
			p.SetSessions(nil, idset.MustParse("0-3"))
			p.SetSessions(nil, idset.Set{})
			return nil
		}, req: Request{NSlots: 4, CoresPerSlot: 1, GPUsPerSlot: 1}, want: [2]int{16, 4}, wantR: "rank[2-3]/core[0-1],gpu[0-1]", indexed: true},
		{name: "grown nodes count", setup: func(p *Pool) error { return p.Grow(summary(t, "rank9/core[0-7],gpu0")) },
			req: Request{NSlots: 1, CoresPerSlot: 5}, want: [2]int{24, 5}, wantR: "rank9/core[0-4]", indexed: true},
		{name: "constrained request over the total", req: Request{NSlots: 17, CoresPerSlot: 1, Constraint: mustQuery(t, "batch")},
			want: [2]int{16, 4}, indexed: true},
		{name: "node count over the total", req: Request{NNodes: 2, NSlots: 2, CoresPerSlot: 9},
			want: [2]int{16, 4}, indexed: true},
		{name: "counts that overflow", req: Request{NSlots: math.MaxInt32, CoresPerSlot: math.MaxInt32, GPUsPerSlot: math.MaxInt32},
			want: [2]int{16, 4}, indexed: true},
		// A node of three million cores would need buckets of 23 MiB:
		// placement falls back to the filter and sort.
		{name: "huge node, no buckets", inv: huge, req: Request{NSlots: 3, CoresPerSlot: 2},
			want: [2]int{3000000, 2}, wantR: "rank0/core[0-5]"},
		{name: "huge node, too much", inv: huge, req: Request{NSlots: 3, CoresPerSlot: 1000000, GPUsPerSlot: 1},
			want: [2]int{3000000, 2}},
		{name: "empty pool", inv: rset.New(nil), req: Request{NSlots: 1, CoresPerSlot: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inv := tc.inv
			if inv == nil {
				inv = testInventory(t)
			}
			p := NewPool(inv)
			if tc.setup != nil {
				if err := tc.setup(p); err != nil {
					t.Fatal(err)
				}
			}
			cores, gpus := p.FreeCores()
			if diff := cmp.Diff(tc.want, [2]int{cores, gpus}); diff != "" {
				t.Errorf("FreeCores (-want +got):\n%s", diff)
			}
			if p.free.on != tc.indexed {
				t.Errorf("buckets kept = %v, want %v", p.free.on, tc.indexed)
			}
			r, ok := p.Match(tc.req, tc.policy)
			if diff := cmp.Diff(tc.wantR, resultOf(r, ok).Summary); diff != "" {
				t.Errorf("Match (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBitset(t *testing.T) {
	b := make(bitset, 3) // ids 0-191
	for _, i := range []int{0, 5, 63, 64, 130, 191} {
		b.set(i)
	}
	b.set(7)
	b.unset(7)
	tests := []struct {
		name       string
		at         int
		next, prev int
	}{
		{"below the set", -3, 0, -1},
		{"on a member", 5, 5, 5},
		{"between members in a word", 6, 63, 5},
		{"word boundary", 64, 64, 64},
		{"across an empty word", 65, 130, 64},
		{"last id", 191, 191, 191},
		{"past the end", 500, -1, 191},
		{"unset member", 7, 63, 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := [2]int{b.next(tc.at), b.prev(tc.at)}
			if diff := cmp.Diff([2]int{tc.next, tc.prev}, got); diff != "" {
				t.Errorf("[next, prev](%d) (-want +got):\n%s", tc.at, diff)
			}
		})
	}
	var all []int
	b.each(func(i int) bool { all = append(all, i); return true })
	if diff := cmp.Diff([]int{0, 5, 63, 64, 130, 191}, all); diff != "" {
		t.Errorf("each (-want +got):\n%s", diff)
	}
	var empty bitset
	if got := [2]int{empty.next(0), empty.prev(10)}; got != [2]int{-1, -1} {
		t.Errorf("empty: [next, prev] = %v, want [-1 -1]", got)
	}
}
