package resource

import (
	"fmt"

	"github.com/fluxq/fluxq/internal/constraint"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/rset"
)

// Pool is a scheduler's view of its inventory (RFC 16): which cores,
// GPUs and memory each job holds, what is free, and which ranks are down (drained or
// offline: they keep their jobs but take no new ones). It records
// allocations only for currently running work, so RFC 16's "job allocation
// array" has size 1. A Pool is not safe for concurrent use.
type Pool struct {
	inv   *rset.R
	nodes []poolNode   // in rank order
	index map[uint]int // rank -> index in nodes
	jobs  map[fluid.ID]*rset.R
	// restricted is set when some node is reserved or outside, so that
	// placement of an untargeted request skips the session filter when
	// nothing is reserved, the common case.
	restricted bool
	// groups caches grouped; nil when it must be recomputed.
	groups []group
	// free is kept in step with every change of what is free, down or
	// outside, so that Match need not look at every node.
	free freeIndex
	// chain is the placement chain last asked for (chain.go), and
	// scratch the node indices it filters, kept so that asking allocates
	// nothing.
	chain         chain
	scratch       []int
	scratchGroups []group
	// scratchViews holds matchFast's views until rset.New has copied
	// them: a grant's nodes, a slice the size of the job each time.
	scratchViews []rset.Node
}

// poolNode is one rank: its inventory and what of it is free.
type poolNode struct {
	target      constraint.Node // what a constraint sees: rank, hostname, properties
	cores, gpus idset.Set
	ncores      int
	ngpus       int
	freeCores   idset.Set
	freeGPUs    idset.Set
	nfreeCores  int
	nfreeGPUs   int
	// mem and freeMem are the node's memory in bytes and what of it no
	// job holds; 0 when the inventory gives the node none.
	mem, freeMem uint64
	down         bool
	// session is the reservation (allocation id) holding the node, ""
	// for the default session.
	session string
	// outside marks a node the scheduler knows but the instance does not
	// hold now (a spare node): never placed on, but part of the inventory.
	outside bool
}

// indexOf is the index of rank in nodes. Ranks are most often 0 to n-1,
// each at its own index: that is checked first, without the map (two
// lookups a node of every grant, one of every release).
func (p *Pool) indexOf(rank uint) (int, bool) {
	if rank < uint(len(p.nodes)) && p.nodes[rank].target.Rank == rank {
		return int(rank), true
	}
	i, ok := p.index[rank]
	return i, ok
}

// idle reports whether no job holds anything on the node.
func (n *poolNode) idle() bool {
	return n.nfreeCores == n.ncores && n.nfreeGPUs == n.ngpus && n.freeMem == n.mem
}

// NewPool returns a pool over inventory with every rank up and nothing
// allocated.
func NewPool(inventory *rset.R) *Pool {
	if inventory == nil {
		inventory = rset.New(nil)
	}
	views := inventory.Nodes()
	p := &Pool{
		inv:   inventory,
		nodes: make([]poolNode, len(views)),
		index: make(map[uint]int, len(views)),
		jobs:  map[fluid.ID]*rset.R{},
	}
	for i, v := range views {
		p.nodes[i] = newPoolNode(v)
		p.index[v.Rank] = i
	}
	p.reindex()
	return p
}

// newPoolNode is v up, free and in the default session.
func newPoolNode(v rset.Node) poolNode {
	nc, ng := v.Cores.Count(), v.GPUs.Count()
	return poolNode{
		target:     constraint.Node{Rank: v.Rank, Hostname: v.Hostname, Properties: v.Properties},
		cores:      v.Cores,
		gpus:       v.GPUs,
		ncores:     nc,
		ngpus:      ng,
		freeCores:  v.Cores,
		freeGPUs:   v.GPUs,
		nfreeCores: nc,
		nfreeGPUs:  ng,
		mem:        v.Memory,
		freeMem:    v.Memory,
	}
}

// Grow adds r's nodes to the inventory, up, free and in the default
// session: spare nodes that joined after the pool was made. Every rank of
// r must be new; on error nothing changes. Times of the inventory stay as
// they were.
func (p *Pool) Grow(r *rset.R) error {
	if r == nil || r.IsEmpty() {
		return nil
	}
	views := r.Nodes()
	for _, v := range views {
		if _, ok := p.index[v.Rank]; ok {
			return fmt.Errorf("rank %d is already in the inventory", v.Rank)
		}
	}
	inv, err := p.inv.Union(r)
	if err != nil {
		return err
	}
	// Merge by rank: spare ranks usually come after the startup ones, but
	// nothing requires it.
	nodes := make([]poolNode, 0, len(p.nodes)+len(views))
	i := 0
	for _, v := range views {
		for i < len(p.nodes) && p.nodes[i].target.Rank < v.Rank {
			nodes = append(nodes, p.nodes[i])
			i++
		}
		nodes = append(nodes, newPoolNode(v))
	}
	nodes = append(nodes, p.nodes[i:]...)
	p.inv, p.nodes, p.groups = inv, nodes, nil
	for i := range p.nodes {
		p.index[p.nodes[i].target.Rank] = i
	}
	p.reindex()
	return nil
}

// Inventory returns every resource of the pool, allocated or not, up or
// down (RFC 16 Load).
func (p *Pool) Inventory() *rset.R { return p.inv }

// SetDown marks ranks down: nothing new is placed there and Available
// leaves them out; jobs already there keep their resources. Ranks outside
// the inventory are ignored, as flux-core's rlist_mark_down ignores them.
func (p *Pool) SetDown(ranks idset.Set) { p.mark(ranks, true) }

// SetUp marks ranks up again.
func (p *Pool) SetUp(ranks idset.Set) { p.mark(ranks, false) }

func (p *Pool) mark(ranks idset.Set, down bool) {
	for i := range p.nodes {
		n := &p.nodes[i]
		if n.down != down && ranks.Contains(n.target.Rank) {
			p.free.remove(i, n)
			n.down = down
			p.free.add(i, n)
		}
	}
}

// FreeCores returns the free cores and GPUs on up nodes in the instance,
// in any session: no request needing more can be placed now.
func (p *Pool) FreeCores() (cores, gpus int) { return p.free.cores, p.free.gpus }

// FreeMemory returns the free memory on up nodes in the instance, in any
// session, in bytes.
func (p *Pool) FreeMemory() uint64 { return p.free.mem }

// Down returns the ranks that are down.
func (p *Pool) Down() idset.Set {
	var ids []uint
	for i := range p.nodes {
		if p.nodes[i].down {
			ids = append(ids, p.nodes[i].target.Rank)
		}
	}
	return idset.Of(ids...)
}

// Find returns the inventory nodes that satisfy c, whole (RFC 16 Find);
// the empty constraint finds everything.
func (p *Pool) Find(c constraint.Constraint) *rset.R {
	if c.IsEmpty() {
		return p.inv
	}
	var ids []uint
	for i := range p.nodes {
		if c.Match(p.nodes[i].target) {
			ids = append(ids, p.nodes[i].target.Rank)
		}
	}
	return p.inv.SelectRanks(idset.Of(ids...))
}

// Allocate records that job id holds r's cores, GPUs and memory (RFC 16
// Allocate). It fails, changing nothing, if r names a rank, core or GPU
// the inventory lacks or one that is already held (RFC 16 "no two jobs
// SHALL be allocated the same resource unit"), or more memory on a rank
// than is free there. A job may be given more later; its
// allocation is the union. Down ranks are accepted, so that running jobs
// on a drained node can be replayed after a restart.
func (p *Pool) Allocate(id fluid.ID, r *rset.R) error {
	nn := r.NumNodes()
	for k := range nn {
		v := r.PartAt(k)
		i, ok := p.indexOf(v.Rank)
		if !ok {
			return fmt.Errorf("rank %d is not in the inventory", v.Rank)
		}
		n := &p.nodes[i]
		if err := checkHeld(v.Rank, "core", v.Cores, n.cores, n.freeCores); err != nil {
			return err
		}
		if err := checkHeld(v.Rank, "gpu", v.GPUs, n.gpus, n.freeGPUs); err != nil {
			return err
		}
		if v.Memory > n.freeMem {
			return fmt.Errorf("rank %d: memory %s is more than the %s free", v.Rank, jobspec.FormatMemory(v.Memory), jobspec.FormatMemory(n.freeMem))
		}
	}
	held := p.jobs[id]
	if held != nil {
		u, err := held.Union(r)
		if err != nil {
			return err
		}
		held = u
	} else {
		// An R is never changed in place (rset), so the caller's is
		// kept as it is: a copy would cost the scheduler's hot path an
		// allocation of every node for nothing.
		held = r
	}
	for k := range nn {
		v := r.PartAt(k)
		i, _ := p.indexOf(v.Rank)
		n := &p.nodes[i]
		p.free.remove(i, n)
		n.freeCores = n.freeCores.Difference(v.Cores)
		n.freeGPUs = n.freeGPUs.Difference(v.GPUs)
		n.nfreeCores -= v.Cores.Count()
		n.nfreeGPUs -= v.GPUs.Count()
		n.freeMem -= v.Memory
		p.free.add(i, n)
	}
	if !held.IsEmpty() {
		p.jobs[id] = held
	}
	return nil
}

// checkHeld reports ids that are unknown or not free.
func checkHeld(rank uint, what string, ids, all, free idset.Set) error {
	if ids.IsEmpty() {
		return nil
	}
	if extra := ids.Difference(all); !extra.IsEmpty() {
		return fmt.Errorf("rank %d: %s %s is not in the inventory", rank, what, extra)
	}
	if busy := ids.Difference(free); !busy.IsEmpty() {
		return fmt.Errorf("rank %d: %s %s is already allocated", rank, what, busy)
	}
	return nil
}

// Release frees what job id holds of r, or all it holds when r is nil
// (RFC 16 Release); a partial release leaves the rest held. It fails,
// changing nothing, when r names anything the job does not hold.
func (p *Pool) Release(id fluid.ID, r *rset.R) error {
	held, ok := p.jobs[id]
	if !ok {
		if r == nil || r.IsEmpty() {
			return nil
		}
		return fmt.Errorf("job %s holds no resources", id)
	}
	whole := r == nil || r == held // all it holds (sched.free): nothing to check
	if whole {
		r = held
	}
	var buf [8]uint64 // most releases name a few ranks: no allocation
	mems := buf[:0]   // memory each view gives back
	nn := r.NumNodes()
	for k := 0; k < nn && !whole; k++ {
		v := r.PartAt(k)
		h, ok := held.Node(v.Rank)
		if !ok {
			return fmt.Errorf("job %s holds nothing on rank %d", id, v.Rank)
		}
		if extra := v.Cores.Difference(h.Cores); !extra.IsEmpty() {
			return fmt.Errorf("job %s does not hold rank %d core %s", id, v.Rank, extra)
		}
		if extra := v.GPUs.Difference(h.GPUs); !extra.IsEmpty() {
			return fmt.Errorf("job %s does not hold rank %d gpu %s", id, v.Rank, extra)
		}
		if v.Memory > h.Memory {
			return fmt.Errorf("job %s holds %s of memory on rank %d, not %s", id, jobspec.FormatMemory(h.Memory), v.Rank, jobspec.FormatMemory(v.Memory))
		}
		give := v.Memory
		if h.Memory > give && h.Cores.Difference(v.Cores).IsEmpty() && h.GPUs.Difference(v.GPUs).IsEmpty() {
			// Nothing left there: its memory goes too, as the job's R
			// keeps no rank without children.
			give = h.Memory
		}
		mems = append(mems, give)
	}
	for k := range nn {
		v := r.PartAt(k)
		i, _ := p.indexOf(v.Rank)
		n := &p.nodes[i]
		p.free.remove(i, n)
		n.freeCores = n.freeCores.Union(v.Cores)
		n.freeGPUs = n.freeGPUs.Union(v.GPUs)
		n.nfreeCores += v.Cores.Count()
		n.nfreeGPUs += v.GPUs.Count()
		if whole {
			n.freeMem += v.Memory
		} else {
			n.freeMem += mems[k]
		}
		p.free.add(i, n)
	}
	if whole { // nothing is left to work out
		delete(p.jobs, id)
	} else if left := held.Difference(r); left.IsEmpty() {
		delete(p.jobs, id)
	} else {
		p.jobs[id] = left
	}
	return nil
}

// Holds reports whether job id holds anything: Allocated(id) is not
// empty. No R is made for a job that holds nothing, as Allocated makes
// one, which the scheduler asked for every request it was sent.
func (p *Pool) Holds(id fluid.ID) bool {
	_, ok := p.jobs[id] // a job whose R would be empty is not kept
	return ok
}

// Allocated returns what job id holds (RFC 16 Allocated); empty if nothing.
func (p *Pool) Allocated(id fluid.ID) *rset.R {
	if r, ok := p.jobs[id]; ok {
		return r
	}
	return rset.New(nil)
}

// Jobs returns how many jobs hold resources.
func (p *Pool) Jobs() int { return len(p.jobs) }

// AllocatedAll returns everything any job holds, with the inventory's
// hostnames and properties (RFC 16 Allocated, for all jobs).
func (p *Pool) AllocatedAll() *rset.R {
	return p.build(func(n *poolNode) (idset.Set, idset.Set, uint64, bool) {
		return n.cores.Difference(n.freeCores), n.gpus.Difference(n.freeGPUs), n.mem - n.freeMem, true
	})
}

// Available returns what no job holds on ranks that are up (RFC 16
// Available).
func (p *Pool) Available() *rset.R {
	return p.build(func(n *poolNode) (idset.Set, idset.Set, uint64, bool) {
		return n.freeCores, n.freeGPUs, n.freeMem, !n.down
	})
}

// build makes an R of the cores, GPUs and memory pick chooses on each
// node.
func (p *Pool) build(pick func(*poolNode) (cores, gpus idset.Set, mem uint64, ok bool)) *rset.R {
	var views []rset.Node
	for i := range p.nodes {
		n := &p.nodes[i]
		cores, gpus, mem, ok := pick(n)
		if !ok || (cores.IsEmpty() && gpus.IsEmpty() && mem == 0) {
			continue
		}
		views = append(views, n.view(cores, gpus, mem))
	}
	return rset.New(views)
}

func (n *poolNode) view(cores, gpus idset.Set, mem uint64) rset.Node {
	return rset.Node{Rank: n.target.Rank, Hostname: n.target.Hostname, Cores: cores, GPUs: gpus, Properties: n.target.Properties, Memory: mem}
}

// NodeState is one node as a planner of future placements sees it.
type NodeState struct {
	Rank                uint
	Cores, GPUs         int // all the node has
	FreeCores, FreeGPUs int // what no job holds now
	// Memory and FreeMemory are the node's memory and what no job holds
	// of it now, in bytes.
	Memory, FreeMemory uint64
}

// Usable returns the ranks req could be placed on if nothing were
// allocated, as down ranks and sessions stand now: up, in the instance, in
// a session req targets, with a core, and satisfying its constraint; in
// rank order. Whether a node is big enough for req's slots is left to the
// caller, who weighs it against what is free over time.
func (p *Pool) Usable(req Request) []uint {
	var out []uint
	for _, i := range p.admitted(p.ask(usable, req, nil, false)) {
		out = append(out, p.nodes[i].target.Rank)
	}
	return out
}

// State returns rank's size and what is free on it now; false for a rank
// not in the inventory.
func (p *Pool) State(rank uint) (NodeState, bool) {
	i, ok := p.indexOf(rank)
	if !ok {
		return NodeState{}, false
	}
	n := &p.nodes[i]
	return NodeState{Rank: rank, Cores: n.ncores, GPUs: n.ngpus, FreeCores: n.nfreeCores, FreeGPUs: n.nfreeGPUs,
		Memory: n.mem, FreeMemory: n.freeMem}, true
}
