package resource

// Placement is one chain, whatever is asked of it: feasibility filters,
// then one ranker. It has the shape of Nomad's scheduler (a chain of
// feasibility checkers, then rank iterators) and of the Kubernetes
// scheduler framework (Filter plugins, then Score plugins): each filter is
// a small test of one node against a request that admits or refuses it;
// the nodes every filter admits are then ordered by the policy
// (Policy.Compare) and taken in that order.
//
// Four questions walk the chain, each with the filters that take part in
// it:
//
//   - ever: could the request run on the inventory if nothing were
//     allocated and every node up and in the instance? (Feasible)
//   - targets: could the sessions it targets hold it, every node there up
//     and free? (FitsTargets)
//   - usable: which nodes may it ever use as down ranks and sessions stand?
//     The scheduler's backfill planning finds a planned start on these,
//     node by node, with Request.Room at future times and Policy.Compare.
//     (Usable)
//   - now: where does it fit on what is free now? (Match: the common
//     request walks the free index, which holds the placeable nodes with
//     cores for a slot in the ranker's order already, and stops once it
//     is met; any other takes every such node the chain admits, in rank
//     order, then ranks them)
//
// A filter that cannot refuse any node for a request (the constraint
// filter for an unconstrained one, the session filter when no node is
// reserved or outside) is left out of the chain asked for it, so the
// common request pays only for its room. The filters run one after
// another over a list of nodes, each with its test inlined into its loop,
// so a node costs no call. Adding a filter is one entry in filters; its
// flags default to the safe side (looked at on every walk, and node by
// node).

// question is a set of the questions placement asks.
type question uint8

const (
	ever question = 1 << iota
	targets
	usable
	now
)

// filter is one feasibility test of the chain.
type filter struct {
	name string
	// asks are the questions it takes part in.
	asks question
	// applies, if not nil, reports whether it can refuse any node for the
	// request c asks about; when it cannot, it is left out of the chain.
	applies func(c *chain) bool
	// keep drops from idx (indices in ns, in order) the nodes it
	// refuses for c's request, in place, and returns what is left. Each
	// is written as a call of keep with its test on one node, so the test
	// is inlined into the loop: a node costs no call, the chain one call
	// per filter.
	keep func(c *chain, ns []poolNode, idx []int) []int
	// placeable: it refuses only nodes that are down or outside the
	// instance, which the free index never holds, so a walk of the index
	// skips it.
	placeable bool
	// summarised: whether it admits a node depends only on the node's
	// session, whether it is outside and its size, so a question whose
	// filters all are may be answered for one node of each group of such
	// nodes (grouped) instead of every node.
	summarised bool
}

// filters is the chain, in the order the tests run: the cheap ones first,
// the constraint, which may look at every property of a node, last.
var filters = []filter{
	{
		name: "up", asks: usable | now, placeable: true,
		keep: func(_ *chain, ns []poolNode, idx []int) []int {
			return keep(ns, idx, func(n *poolNode) bool { return !n.down })
		},
	},
	{
		name: "in the instance", asks: targets | usable | now, placeable: true, summarised: true,
		keep: func(_ *chain, ns []poolNode, idx []int) []int {
			return keep(ns, idx, func(n *poolNode) bool { return !n.outside })
		},
	},
	{
		// The node-reservation specification's conformance item 1: a job
		// runs only on the union of the sessions it targets.
		name: "node reservation targets", asks: targets | usable | now, summarised: true,
		applies: func(c *chain) bool { return c.sessions.on },
		keep: func(c *chain, ns []poolNode, idx []int) []int {
			return keep(ns, idx, func(n *poolNode) bool { return c.sessions.admits(n) })
		},
	},
	{
		// A node without cores holds no slot, so its GPUs cannot be
		// used either; room says as much for the now question.
		name: "has a core", asks: ever | targets | usable, summarised: true,
		keep: func(_ *chain, ns []poolNode, idx []int) []int {
			return keep(ns, idx, func(n *poolNode) bool { return n.ncores > 0 })
		},
	},
	{
		// Free cores, GPUs and memory now, within the caller's cap:
		// room for a slot, or with a node count for the node's share,
		// the whole idle node when exclusive.
		name: "room", asks: now,
		keep: func(c *chain, ns []poolNode, idx []int) []int {
			return keep(ns, idx, func(n *poolNode) bool {
				fc, fg, fm := n.usable(c.caps)
				return c.req.room(n.ncores, n.ngpus, fc, fg, n.mem, fm) > 0
			})
		},
	},
	{
		// RFC 31: the job's constraint, which holds its queue's
		// requires too (internal/queue ands them into it on submit).
		name: "constraint", asks: ever | targets | usable | now,
		applies: func(c *chain) bool { return !c.req.Constraint.IsEmpty() },
		keep: func(c *chain, ns []poolNode, idx []int) []int {
			return keep(ns, idx, func(n *poolNode) bool { return c.req.Constraint.Match(n.target) })
		},
	},
}

// chain is the filters one question about one request runs, and what they
// need to know. The pool keeps one and reuses it, so asking allocates
// nothing.
type chain struct {
	req      Request
	sessions sessionFilter
	caps     map[uint]Cap
	tests    []*filter
	// summarised: every test in it is (see filter).
	summarised bool
}

// ask makes the pool's chain for question q about req, with caps bounding
// what it may take of each node now; fromIndex leaves out the filters the
// free index answers already.
func (p *Pool) ask(q question, req Request, caps map[uint]Cap, fromIndex bool) *chain {
	c := &p.chain
	c.req, c.sessions, c.caps = req, p.sessionFilter(req), caps
	c.tests, c.summarised = c.tests[:0], true
	for _, f := range asked[b2i(fromIndex)][q] {
		if f.applies == nil || f.applies(c) {
			c.tests = append(c.tests, f)
			c.summarised = c.summarised && f.summarised
		}
	}
	return c
}

// asked lists, for each source (every node, the free index) and each
// question, the filters that take part in it, so that asking looks only at
// those.
var asked = listAsked()

func listAsked() (m [2][now + 1][]*filter) {
	for src := range m {
		for q := range m[src] {
			for i := range filters {
				f := &filters[i]
				if f.asks&question(q) != 0 && !(src == 1 && f.placeable) {
					m[src][q] = append(m[src][q], f)
				}
			}
		}
	}
	return m
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// run keeps the nodes of ns in idx that every filter of the chain admits,
// in order, in place.
func (c *chain) run(ns []poolNode, idx []int) []int {
	for _, f := range c.tests {
		if len(idx) == 0 {
			break
		}
		idx = f.keep(c, ns, idx)
	}
	return idx
}

// keep is the loop of every filter: the indices in idx whose node passes
// test, in order, in place. It is small enough to be inlined with test.
func keep(ns []poolNode, idx []int, test func(n *poolNode) bool) []int {
	out := idx[:0]
	for _, i := range idx {
		if test(&ns[i]) {
			out = append(out, i)
		}
	}
	return out
}

// group is nodes every summarised filter treats alike: in the same
// session, outside or not, of the same size; rep is the first of them.
type group struct{ rep, count int }

// grouped returns the pool's nodes as groups, in the order of their first
// node, computed once per change of sessions or inventory.
func (p *Pool) grouped() []group {
	if p.groups != nil {
		return p.groups
	}
	type key struct {
		session       string
		outside       bool
		ncores, ngpus int
		mem           uint64
	}
	at := map[key]int{}
	out := []group{}
	for i := range p.nodes {
		n := &p.nodes[i]
		k := key{n.session, n.outside, n.ncores, n.ngpus, n.mem}
		if j, ok := at[k]; ok {
			out[j].count++
		} else {
			at[k] = len(out)
			out = append(out, group{rep: i, count: 1})
		}
	}
	p.groups = out
	return out
}

// admittedGroups returns the nodes c admits as groups: the groups whose
// first node it admits when every filter of c is summarised, else each
// node it admits as a group of one. The slice is the pool's scratch,
// valid until the next question.
func (p *Pool) admittedGroups(c *chain) []group {
	out := p.scratchGroups[:0]
	if !c.summarised {
		for _, i := range p.admitted(c) {
			out = append(out, group{rep: i, count: 1})
		}
	} else {
		gs := p.grouped()
		idx := p.scratch[:0]
		for _, g := range gs {
			idx = append(idx, g.rep)
		}
		p.scratch = idx
		j := 0
		for _, i := range c.run(p.nodes, idx) {
			for gs[j].rep != i {
				j++
			}
			out = append(out, gs[j])
		}
	}
	p.scratchGroups = out
	return out
}

// admitted returns the indices of the pool's nodes c admits, in rank
// order, in the pool's scratch slice: valid until the next question.
func (p *Pool) admitted(c *chain) []int {
	idx := p.scratch[:0]
	for i := range p.nodes {
		idx = append(idx, i)
	}
	p.scratch = idx
	return c.run(p.nodes, idx)
}

// Room is the room filter's measure: what a node of cores, gpus and mem
// bytes of memory, with freeCores, freeGPUs and freeMem of them free,
// offers r. Without a node count it is how many of r's slots fit (cores,
// GPUs and memory all allowing); with one, 1 if the node can be one of
// r's nodes (it holds its share of slots, and is whole and idle when r is
// exclusive), else 0. A planner asks it with what will be free later.
func (r Request) Room(cores, gpus, freeCores, freeGPUs int, mem, freeMem uint64) int {
	return r.room(cores, gpus, freeCores, freeGPUs, mem, freeMem)
}

// room is Room without copying the request, and cheap enough to inline
// into the loops that ask it of every node.
func (r *Request) room(cores, gpus, freeCores, freeGPUs int, mem, freeMem uint64) int {
	slots := capacity(freeCores, freeGPUs, freeMem, r.CoresPerSlot, r.GPUsPerSlot, r.MemPerSlot)
	if r.NNodes == 0 {
		return slots
	}
	// Not its share, or (exclusive) not idle or partly held for a
	// planned start.
	if slots < r.NSlots/r.NNodes || (r.Exclusive && (freeCores != cores || freeGPUs != gpus || freeMem != mem)) {
		return 0
	}
	return 1
}

// Compare is the chain's ranker, the order policy tries two nodes in by
// their free cores: negative when the node with freeA comes first. Ties,
// and every pair under first-fit, are left to rank order: callers sort
// stably nodes that are in rank order. The free index yields nodes in
// this order without sorting.
func (policy Policy) Compare(freeA, freeB int) int {
	switch policy {
	case WorstFit:
		return freeB - freeA
	case BestFit:
		return freeA - freeB
	}
	return 0
}
