package resource

import (
	"slices"

	"github.com/fluxq/fluxq/internal/rset"
)

// Placement is the chain of chain.go: feasibility filters, a ranker (the
// policy's order), then a selector that takes nodes in that order until
// the request is met.

// Feasible reports whether req could ever be placed on the inventory,
// ignoring current allocations, down ranks and sessions (nodes outside the
// instance included: they may join it); the error says why not, in
// flux-core's words (ErrUnsatisfiable, ErrNoMatch,
// ErrUnsatisfiableConstrained), or what is malformed.
func (p *Pool) Feasible(req Request) error {
	if err := req.Validate(); err != nil {
		return err
	}
	// librlist checks the job-wide total against the whole inventory
	// before it looks at constraints.
	var cores, gpus int
	var mem uint64
	for _, g := range p.grouped() {
		n := &p.nodes[g.rep]
		cores = satAdd(cores, need(g.count, n.ncores))
		gpus = satAdd(gpus, need(g.count, n.ngpus))
		mem = satAddMem(mem, needMem(g.count, n.mem))
	}
	if need(req.NSlots, req.CoresPerSlot) > cores || need(req.NSlots, req.GPUsPerSlot) > gpus ||
		needMem(req.NSlots, req.MemPerSlot) > mem {
		return ErrUnsatisfiable
	}
	constrained := !req.Constraint.IsEmpty()
	// matched: nodes the chain admits; room: what they hold, idle, in
	// slots (no node count) or nodes (with one).
	matched, room := 0, 0
	add := func(n *poolNode, count int) {
		matched = satAdd(matched, count)
		room = satAdd(room, need(count, req.room(n.ncores, n.ngpus, n.ncores, n.ngpus, n.mem, n.mem)))
	}
	if c := p.ask(ever, req, nil, false); c.summarised {
		for _, g := range p.admittedGroups(c) {
			add(&p.nodes[g.rep], g.count)
		}
	} else {
		for _, i := range p.admitted(c) {
			add(&p.nodes[i], 1) // without making a group of each
		}
	}
	if constrained && matched == 0 {
		return ErrNoMatch
	}
	if (req.NNodes == 0 && room < req.NSlots) || (req.NNodes > 0 && room < req.NNodes) {
		if constrained {
			return ErrUnsatisfiableConstrained
		}
		return ErrUnsatisfiable
	}
	return nil
}

// Match places req on what is free now on up ranks of the sessions it
// targets, by policy, and returns the R to allocate (hostnames, cores, GPUs
// and properties of the chosen ranks, nslots set); false when it does not
// fit now. Match does not allocate: pass the result to Allocate.
func (p *Pool) Match(req Request, policy Policy) (*rset.R, bool) {
	return p.MatchCapped(req, policy, nil)
}

// Cap bounds what Match may take of one node: a scheduler's reservation
// holds the rest of it for part of the new job's time. Memory bounds only
// a request that asks for memory.
type Cap struct {
	Cores, GPUs int
	Memory      uint64
}

// MatchCapped is Match taking at most caps[rank] of each rank caps names.
// Nodes are still ranked by what is free on them, capped or not. A capped
// node is never taken whole by an exclusive request unless its cap is the
// whole node.
func (p *Pool) MatchCapped(req Request, policy Policy, caps map[uint]Cap) (*rset.R, bool) {
	if req.Validate() != nil {
		return nil, false
	}
	// Every session's nodes are placeable ones, so a request needing more
	// than all of them hold is refused before any node is looked at: what
	// a scheduler pays for each waiting job while the machine is full.
	if need(req.NSlots, req.CoresPerSlot) > p.free.cores || need(req.NSlots, req.GPUsPerSlot) > p.free.gpus ||
		needMem(req.NSlots, req.MemPerSlot) > p.free.mem {
		return nil, false
	}
	if p.free.on && req.NNodes == 0 && !req.Exclusive && req.Constraint.IsEmpty() {
		return p.matchFast(req, policy, caps)
	}
	return p.matchSlow(req, policy, caps)
}

// usable is what n offers a request now: its free cores, GPUs and
// memory, within its cap if caps has one.
func (n *poolNode) usable(caps map[uint]Cap) (cores, gpus int, mem uint64) {
	cores, gpus, mem = n.nfreeCores, n.nfreeGPUs, n.freeMem
	if c, ok := caps[n.target.Rank]; ok {
		cores, gpus, mem = max(min(cores, c.Cores), 0), max(min(gpus, c.GPUs), 0), min(mem, c.Memory)
	}
	return cores, gpus, mem
}

// matchFast is matchSlow's answer for the common request (no node count,
// exclusivity or constraint), from the index: nodes come in the policy's
// order already, and since slots are packed greedily, the walk can stop as
// soon as the request is met; if it runs out first, matchSlow's total
// would have been short too.
//
// The nodes go through the chain a batch at a time, in the index's order:
// the first batch is as large as the slots needed (each node the index
// yields has room for one, unless a cap or its GPUs say otherwise), and
// each next one twice the last, so a request met by its first nodes costs
// a look at few more.
func (p *Pool) matchFast(req Request, policy Policy, caps map[uint]Cap) (*rset.R, bool) {
	c := p.ask(now, req, caps, true)
	views := p.scratchViews[:0]
	left := req.NSlots
	batch, idx := min(left, 1024), p.scratch[:0]
	place := func() {
		for _, i := range c.run(p.nodes, idx) {
			n := &p.nodes[i]
			fc, fg, fm := n.usable(caps)
			k := min(req.room(n.ncores, n.ngpus, fc, fg, n.mem, fm), left)
			views = append(views, n.take(k, &req))
			if left -= k; left == 0 {
				return
			}
		}
		idx, batch = idx[:0], min(batch*2, 1024)
	}
	for i := range p.free.inOrder(policy, req.CoresPerSlot) {
		if idx = append(idx, i); len(idx) >= batch {
			if place(); left == 0 {
				break
			}
		}
	}
	if left > 0 && len(idx) > 0 {
		place()
	}
	p.scratch = idx[:0]
	var r *rset.R
	if left == 0 {
		r = rset.NewWithNSlots(views, req.NSlots) // New copies the views
	}
	clear(views) // what they point to is the grant's, not the pool's
	p.scratchViews = views[:0]
	return r, left == 0
}

// matchSlow places any request by filtering every node and sorting the
// candidates by policy; Match's answer is always this one's.
func (p *Pool) matchSlow(req Request, policy Policy, caps map[uint]Cap) (*rset.R, bool) {
	if req.Validate() != nil {
		return nil, false
	}
	cands := p.candidates(req, caps)
	if req.NNodes > 0 {
		if len(cands) < req.NNodes {
			return nil, false
		}
	} else {
		total := 0
		for _, c := range cands {
			total = satAdd(total, c.slots)
		}
		if total < req.NSlots {
			return nil, false
		}
	}
	rank(cands, policy)
	views := make([]rset.Node, 0, min(len(cands), max(req.NNodes, 1)))
	if req.NNodes > 0 {
		per := req.perNode()
		for _, c := range cands[:req.NNodes] {
			n := &p.nodes[c.i]
			if req.Exclusive {
				// The whole node, its memory too: nothing else may
				// start there while the job runs.
				views = append(views, n.view(n.cores, n.gpus, n.mem))
				continue
			}
			views = append(views, n.take(per, &req))
		}
	} else {
		left := req.NSlots
		for _, c := range cands {
			k := min(c.slots, left)
			views = append(views, p.nodes[c.i].take(k, &req))
			if left -= k; left == 0 {
				break
			}
		}
	}
	return rset.NewWithNSlots(views, req.NSlots), true
}

// candidate is a node that can take part of a request now.
type candidate struct {
	i     int // index in Pool.nodes
	rank  uint
	free  int // free cores, the policies' sort key
	slots int // slots of the request that fit on it now
}

// candidates are the nodes the chain admits for the now question, with
// their room.
func (p *Pool) candidates(req Request, caps map[uint]Cap) []candidate {
	var idx []int
	if p.free.on {
		// The index holds exactly the nodes that pass up and in the
		// instance and have free cores for a slot, which room needs:
		// on a busy machine, far fewer than all.
		idx = p.scratch[:0]
		for i := range p.free.inOrder(FirstFit, req.CoresPerSlot) {
			idx = append(idx, i) // in rank order
		}
		p.scratch = idx
		idx = p.ask(now, req, caps, true).run(p.nodes, idx)
	} else {
		idx = p.admitted(p.ask(now, req, caps, false))
	}
	out := make([]candidate, 0, len(idx))
	for _, i := range idx {
		n := &p.nodes[i]
		fc, fg, fm := n.usable(caps)
		out = append(out, candidate{i: i, rank: n.target.Rank, free: n.nfreeCores, slots: req.room(n.ncores, n.ngpus, fc, fg, n.mem, fm)})
	}
	return out
}

// rank orders candidates by the chain's ranker, ties by rank (they arrive
// in rank order and the sort is stable).
func rank(cands []candidate, policy Policy) {
	// One comparator per policy, each Compare with a constant policy, so
	// that the switch in Compare folds away in the sort's many calls.
	switch policy {
	case WorstFit:
		slices.SortStableFunc(cands, func(a, b candidate) int { return WorstFit.Compare(a.free, b.free) })
	case BestFit:
		slices.SortStableFunc(cands, func(a, b candidate) int { return BestFit.Compare(a.free, b.free) })
	}
}

// take returns k of req's slots on the node: its lowest free cores and
// GPUs, as many as they need (flux-core's rnode_alloc takes ids in
// order), and their memory, k x MemPerSlot, which is what the job's R
// records as granted there.
func (n *poolNode) take(k int, req *Request) rset.Node {
	return n.view(n.freeCores.FirstN(k*req.CoresPerSlot), n.freeGPUs.FirstN(k*req.GPUsPerSlot), uint64(k)*req.MemPerSlot)
}

// perNode is the slot count each node gets with a node count.
func (r Request) perNode() int {
	if r.NNodes <= 0 {
		return 0
	}
	return r.NSlots / r.NNodes
}

// capacity is how many slots of cps cores, gps GPUs and mps bytes of
// memory fit in cores, gpus and mem.
func capacity(cores, gpus int, mem uint64, cps, gps int, mps uint64) int {
	if cps <= 0 {
		return 0
	}
	c := cores / cps
	if gps > 0 {
		c = min(c, gpus/gps)
	}
	if mps > 0 {
		c = min(c, int(min(mem/mps, uint64(maxInt))))
	}
	return c
}

// need is slots*per without overflow (counts are at most MaxInt32 each, so
// the product fits in 64 bits; saturate anyway for 32-bit ints).
func need(slots, per int) int {
	if slots <= 1 {
		return slots * per // spares a division per node where counts are 1
	}
	if per != 0 && slots > maxInt/per {
		return maxInt
	}
	return slots * per
}

const maxInt = int(^uint(0) >> 1)

// needMem is slots x per bytes, saturating.
func needMem(slots int, per uint64) uint64 {
	if slots <= 0 || per == 0 {
		return 0
	}
	if per > ^uint64(0)/uint64(slots) {
		return ^uint64(0)
	}
	return uint64(slots) * per
}

func satAddMem(a, b uint64) uint64 {
	if a+b < a {
		return ^uint64(0)
	}
	return a + b
}

func satAdd(a, b int) int {
	if a > maxInt-b {
		return maxInt
	}
	return a + b
}
