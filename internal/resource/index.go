package resource

import (
	"iter"
	"math/bits"
)

// Placement at scale: at 10,000 nodes, filtering and sorting every node
// for every request costs about a millisecond, so a scheduler could place
// only a thousand jobs a second. The pool therefore keeps, as allocations
// and node states change, the free totals (to refuse a request that cannot
// fit at once) and the placeable nodes bucketed by free cores (to visit
// nodes in a policy's order without sorting, stopping as soon as the
// request is met).

// maxIndexWords bounds the memory of the buckets, (most cores on a node +
// 1) x words per bucket, to 16 MiB; a pool beyond it (nodes of a million
// cores) places by the full filter and sort, which is correct at any size.
const maxIndexWords = 1 << 21

// freeIndex is what is free on placeable nodes (up and in the instance;
// any session), summed and bucketed by free cores. It holds node indices in
// Pool.nodes, so it is rebuilt whenever those shift.
type freeIndex struct {
	// cores, gpus and mem are the free totals.
	cores, gpus int
	mem         uint64
	// on says whether the buckets are kept; the totals always are.
	on bool
	// buckets[c] holds the nodes with exactly c free cores, c >= 1; nil
	// until a node first has c free. A node with none is in no bucket:
	// it can take no slot.
	buckets []bitset
	// filled has bit c set while buckets[c] holds a node, so a walk skips
	// empty buckets a word at a time.
	filled bitset
	// sizes[c] is how many nodes buckets[c] holds.
	sizes []int
	words int // length of each bucket
}

// placeable reports whether n may take new work in some session.
func (n *poolNode) placeable() bool { return !n.down && !n.outside }

// reindex rebuilds the index from the nodes, reusing the buckets when the
// pool's shape allows.
func (p *Pool) reindex() {
	x := &p.free
	most := 0
	for i := range p.nodes {
		most = max(most, p.nodes[i].ncores)
	}
	words := (len(p.nodes) + 63) / 64
	x.cores, x.gpus, x.mem = 0, 0, 0
	x.on = words > 0 && most < maxIndexWords/words
	if !x.on {
		x.buckets, x.filled, x.sizes, x.words = nil, nil, nil, 0
	} else if words != x.words || most+1 != len(x.buckets) {
		x.buckets = make([]bitset, most+1)
		x.filled = make(bitset, most/64+1)
		x.sizes = make([]int, most+1)
		x.words = words
	} else {
		for c, b := range x.buckets {
			clear(b)
			x.sizes[c] = 0
		}
		clear(x.filled)
	}
	for i := range p.nodes {
		x.add(i, &p.nodes[i])
	}
}

// add counts node i's free resources, n its state; callers pair it with
// remove around every change of what is free, down or outside.
func (x *freeIndex) add(i int, n *poolNode) {
	if !n.placeable() {
		return
	}
	x.cores += n.nfreeCores
	x.gpus += n.nfreeGPUs
	x.mem += n.freeMem
	c := n.nfreeCores
	if !x.on || c == 0 {
		return
	}
	if x.buckets[c] == nil {
		x.buckets[c] = make(bitset, x.words)
	}
	x.buckets[c].set(i)
	if x.sizes[c]++; x.sizes[c] == 1 {
		x.filled.set(c)
	}
}

// remove undoes add for node i in state n.
func (x *freeIndex) remove(i int, n *poolNode) {
	if !n.placeable() {
		return
	}
	x.cores -= n.nfreeCores
	x.gpus -= n.nfreeGPUs
	x.mem -= n.freeMem
	c := n.nfreeCores
	if !x.on || c == 0 {
		return
	}
	x.buckets[c].unset(i)
	if x.sizes[c]--; x.sizes[c] == 0 {
		x.filled.unset(c)
	}
}

// inOrder yields the indices of placeable nodes with at least least free
// cores (least >= 1) in the order policy ranks them, the order rank's
// stable sort gives: worst-fit by free cores descending, best-fit
// ascending, ties and first-fit in rank order. The index must be on and
// must not change during the walk.
func (x *freeIndex) inOrder(policy Policy, least int) iter.Seq[int] {
	return func(yield func(int) bool) {
		// No node has room for a slot: first-fit would otherwise look at
		// every word to find that out.
		if least >= len(x.buckets) || x.filled.next(least) < 0 {
			return
		}
		switch policy {
		case WorstFit:
			for c := x.filled.prev(len(x.buckets) - 1); c >= least; c = x.filled.prev(c - 1) {
				if !x.buckets[c].each(yield) {
					return
				}
			}
		case BestFit:
			for c := x.filled.next(least); c >= 0; c = x.filled.next(c + 1) {
				if !x.buckets[c].each(yield) {
					return
				}
			}
		default:
			// First-fit merges the buckets a word at a time, so nodes
			// too small for a slot cost nothing, however many there are.
			for w := range x.words {
				var m uint64
				for c := x.filled.next(least); c >= 0; c = x.filled.next(c + 1) {
					m |= x.buckets[c][w]
				}
				for ; m != 0; m &= m - 1 {
					if !yield(w*64 + bits.TrailingZeros64(m)) {
						return
					}
				}
			}
		}
	}
}

// bitset is a set of small non-negative integers, one bit each.
type bitset []uint64

func (b bitset) set(i int)   { b[i/64] |= 1 << (i % 64) }
func (b bitset) unset(i int) { b[i/64] &^= 1 << (i % 64) }

// next returns the smallest member >= i, or -1.
func (b bitset) next(i int) int {
	if i < 0 {
		i = 0
	}
	w := i / 64
	if w >= len(b) {
		return -1
	}
	if m := b[w] >> (i % 64); m != 0 {
		return i + bits.TrailingZeros64(m)
	}
	for w++; w < len(b); w++ {
		if b[w] != 0 {
			return w*64 + bits.TrailingZeros64(b[w])
		}
	}
	return -1
}

// prev returns the largest member <= i, or -1.
func (b bitset) prev(i int) int {
	if i < 0 || len(b) == 0 {
		return -1
	}
	w := i / 64
	if w >= len(b) {
		w, i = len(b)-1, len(b)*64-1
	}
	if m := b[w] << (63 - i%64); m != 0 {
		return i - bits.LeadingZeros64(m)
	}
	for w--; w >= 0; w-- {
		if b[w] != 0 {
			return w*64 + 63 - bits.LeadingZeros64(b[w])
		}
	}
	return -1
}

// each yields the members in ascending order; false if yield stopped it.
func (b bitset) each(yield func(int) bool) bool {
	for w, m := range b {
		for ; m != 0; m &= m - 1 {
			if !yield(w*64 + bits.TrailingZeros64(m)) {
				return false
			}
		}
	}
	return true
}
