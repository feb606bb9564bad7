package sched

import (
	"cmp"
	"container/heap"
	"math"
	"slices"
	"strings"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/resource"
	"github.com/fluxq/fluxq/internal/rset"
)

// Planning at node granularity. The planner (s.plan) counts the cores and
// GPUs (and memory, when the inventory has some) of the default session's
// up nodes as one pool: right for a job that
// may use any of them, since it can start on whichever are free. A job
// whose constraint or targets narrow it to some nodes (its feasible set)
// needs to know when enough of those nodes are free, so its planned start
// is found here, node by node: each node's free cores and GPUs over time
// (what is free now, plus what running jobs release at their planned end,
// minus what earlier planned starts of the pass claim), the earliest time
// the job fits on the feasible set for its whole requested time, and the
// nodes it would take then. Those nodes' claims are kept for the rest of
// the pass: a later planned start on an overlapping set sees them, and a job
// started now may take of a claimed node only what the claims leave free
// for its whole time (resource.Pool.MatchCapped). The part of a claim on
// the planner's nodes is added to the planner too, so planned starts made
// there still see it. A constraint every planner node satisfies narrows
// nothing: such a job is planned as if it had none.

// release is what a running job gives back on one node at its planned end.
type release struct {
	id          fluid.ID
	end         float64
	cores, gpus int
	mem         int64
}

// claim is what a planned start of the pass holds on one node.
type claim struct {
	start, end  float64
	cores, gpus int
	mem         int64
}

// feasible is the nodes a narrowed job may ever use: those the placement
// chain admits for the usable question (resource.Pool.Usable), computed
// once per layout for each distinct constraint and targets.
type feasible struct {
	ranks []uint
	// wide: they are exactly the planner's nodes, so the planner answers.
	wide bool
}

// maxFeasible bounds the cache of feasible sets; past it the cache starts
// over (jobs of one queue share their set, so it is rarely reached).
const maxFeasible = 4096

// feasibleFor returns p's feasible set, or nil when the planner answers
// for p. The sets are shared by constraint and targets (all of a queue's
// jobs have its requires), so the key is made only for a job being
// planned, not kept with every pending one.
//
// A job asking for memory is always planned node by node: memory, unlike
// cores, is not one pool, since a slot's memory must all be on its node,
// and the planner's sum of every node's free memory could show room that
// no one node has.
func (s *Scheduler) feasibleFor(p *pending) *feasible {
	mem := p.req.MemPerSlot > 0
	if p.inDefault && p.req.Constraint.IsEmpty() && !mem {
		return nil
	}
	if s.feasAt != s.layout || len(s.feas) >= maxFeasible {
		s.feas, s.feasAt = map[string]*feasible{}, s.layout
	}
	c, _ := p.req.Constraint.MarshalJSON() // a parsed constraint always marshals
	key := string(c) + "\x00" + strings.Join(p.req.Targets, ",")
	f, ok := s.feas[key]
	if !ok {
		ranks := s.pool.Usable(p.req)
		f = &feasible{ranks: ranks, wide: p.inDefault && len(ranks) == s.eligCored}
		s.feas[key] = f
	}
	if f.wide && !mem {
		return nil
	}
	return f
}

// plannedEnd is when the planner expects a job holding r to end: end, or
// r's expiration when end is 0, or never without one.
func plannedEnd(r *rset.R, end float64) float64 {
	if end == 0 {
		end = r.Expiration()
	}
	if end <= 0 {
		end = math.Inf(1)
	}
	return end
}

// tracking makes sure every running job's releases are indexed by node.
// The index is built the first time a job is planned node by node and
// kept from then on, so a scheduler that never meets such a job never
// pays for it.
func (s *Scheduler) tracking() {
	if s.rel != nil {
		return
	}
	s.rel = map[uint][]release{}
	// R's expiration is the end hold was given, or the next float after
	// it for a job too short to move the clock: no matter here.
	for id := range s.running {
		r := s.pool.Allocated(id)
		s.addReleases(id, r, plannedEnd(r, 0))
	}
}

// addReleases indexes what r's job gives back on each node at end; each
// node's list is kept in order of end, so a sweep reads it in time order.
func (s *Scheduler) addReleases(id fluid.ID, r *rset.R, end float64) {
	for _, v := range r.Nodes() {
		list := s.rel[v.Rank]
		// After the last with an end <= end: jobs granted in time order
		// with equal limits append.
		i := len(list)
		for i > 0 && list[i-1].end > end {
			i--
		}
		s.rel[v.Rank] = slices.Insert(list, i, release{id: id, end: end, cores: v.Cores.Count(), gpus: v.GPUs.Count(), mem: memAmount(1, v.Memory)})
	}
}

func (s *Scheduler) dropReleases(id fluid.ID, r *rset.R) {
	for rank := range r.Ranks().All() {
		list := slices.DeleteFunc(s.rel[rank], func(x release) bool { return x.id == id })
		if len(list) == 0 {
			delete(s.rel, rank)
		} else {
			s.rel[rank] = list
		}
	}
}

// nodeFree is a node's free cores, GPUs and memory at some time.
type nodeFree struct {
	cores, gpus int
	mem         int64
}

// freeOf is what st has free now.
func freeOf(st resource.NodeState) nodeFree {
	return nodeFree{st.FreeCores, st.FreeGPUs, memAmount(1, st.FreeMemory)}
}

// windowFree is what rank offers over [t, end) with the pass's claims on
// it: the least, over that time, of what is free (base at t, plus what
// running jobs release after t) minus what the claims hold.
func (s *Scheduler) windowFree(ps *pass, rank uint, base nodeFree, t, end float64) nodeFree {
	f := base
	evs := s.steps[:0]
	for _, c := range ps.claims[rank] {
		switch {
		case c.start <= t && t < c.end:
			f.cores -= c.cores
			f.gpus -= c.gpus
			f.mem -= c.mem
			if c.end < end {
				evs = append(evs, step{at: c.end, cores: c.cores, gpus: c.gpus, mem: c.mem})
			}
		case c.start > t && c.start < end:
			evs = append(evs, step{at: c.start, cores: -c.cores, gpus: -c.gpus, mem: -c.mem, falls: true})
			if c.end < end {
				evs = append(evs, step{at: c.end, cores: c.cores, gpus: c.gpus, mem: c.mem})
			}
		}
	}
	least := f
	// Free only falls where a claim begins: the least is at t or there.
	if slices.ContainsFunc(evs, func(e step) bool { return e.falls }) {
		for _, r := range s.rel[rank] {
			if r.end > t && r.end < end {
				evs = append(evs, step{at: r.end, cores: r.cores, gpus: r.gpus, mem: r.mem})
			}
		}
		slices.SortFunc(evs, func(a, b step) int { return cmp.Compare(a.at, b.at) })
		for i := 0; i < len(evs); {
			at, falls := evs[i].at, false
			for ; i < len(evs) && evs[i].at == at; i++ {
				f.cores += evs[i].cores
				f.gpus += evs[i].gpus
				f.mem += evs[i].mem
				falls = falls || evs[i].falls
			}
			if falls {
				least.cores, least.gpus, least.mem = min(least.cores, f.cores), min(least.gpus, f.gpus), min(least.mem, f.mem)
			}
		}
	}
	s.steps = evs[:0]
	return nodeFree{max(least.cores, 0), max(least.gpus, 0), max(least.mem, 0)}
}

// step is a change of a node's free resources at a time, for windowFree;
// falls marks a claim's start.
type step struct {
	at          float64
	cores, gpus int
	mem         int64
	falls       bool
}

// baseFree is what rank has free from now on as far as the planner
// knows: free now, plus what jobs past their planned end still hold.
func (s *Scheduler) baseFree(st resource.NodeState, now float64) nodeFree {
	f := freeOf(st)
	for _, r := range s.rel[st.Rank] {
		if r.end <= now {
			f.cores += r.cores
			f.gpus += r.gpus
			f.mem += r.mem
		}
	}
	return f
}

// share is what one node contributes to req with free f on it: the
// placement chain's room filter (resource.Request.Room) at a time to come.
func share(req resource.Request, st resource.NodeState, f nodeFree) int {
	return req.Room(st.Cores, st.GPUs, f.cores, f.gpus, st.Memory, uint64(max(f.mem, 0)))
}

// sweepNode is one feasible node during a sweep.
type sweepNode struct {
	st      resource.NodeState
	base    nodeFree // free at the sweep's time, claims aside
	claimed bool     // the pass has claims on it: windowFree answers
	share   int      // share of base, for an unclaimed node
	rel     []release
	pos     int // releases before it are in base
}

// planOnNodes finds p's planned start: its earliest start on its feasible
// set f, for dur seconds, where it also fits the planner for the part on
// the planner's nodes; claims the nodes it would take then (placed by policy) and
// returns the start. False: it never fits, as far as the planner knows.
//
// It sweeps time from now over the moments some feasible node gains
// free resources (a running job's planned end, a claim's end), since a
// job that does not fit at one moment cannot fit before the next. The
// shares of unclaimed nodes only grow with time, so their sum is kept as
// the sweep goes; claimed nodes, few, are looked at over the whole window
// at each moment. The nodes' releases are merged in time order (a heap
// of each node's next), so a sweep that ends early reads little of them.
func (s *Scheduler) planOnNodes(ps *pass, policy resource.Policy, p *pending, f *feasible, dur float64) (float64, bool) {
	s.tracking()
	now, req := ps.now, p.req
	nodes := make([]sweepNode, len(f.ranks))
	next := make(releaseHeap, 0, len(f.ranks))
	var claimed []int
	var moments []float64 // claim ends on feasible nodes
	sum := 0
	for i, rank := range f.ranks {
		st, _ := s.pool.State(rank) // f was computed for this layout
		n := &nodes[i]
		n.st, n.base = st, freeOf(st)
		n.rel = s.rel[rank]
		for n.pos < len(n.rel) && n.rel[n.pos].end <= now {
			n.base.cores += n.rel[n.pos].cores // past its planned end
			n.base.gpus += n.rel[n.pos].gpus
			n.base.mem += n.rel[n.pos].mem
			n.pos++
		}
		if n.pos < len(n.rel) && !math.IsInf(n.rel[n.pos].end, 1) {
			next = append(next, nextRelease{t: n.rel[n.pos].end, i: i})
		}
		if cl := ps.claims[rank]; len(cl) > 0 {
			n.claimed = true
			claimed = append(claimed, i)
			for _, c := range cl {
				if c.end > now && !math.IsInf(c.end, 1) {
					moments = append(moments, c.end)
				}
			}
			continue
		}
		n.share = share(req, st, n.base)
		sum += n.share
	}
	heap.Init(&next)
	slices.Sort(moments)
	need := req.NSlots
	if req.NNodes > 0 {
		need = req.NNodes
	}
	t, m := now, 0
	for {
		for len(next) > 0 && next[0].t <= t {
			n := &nodes[next[0].i]
			for n.pos < len(n.rel) && n.rel[n.pos].end <= t {
				n.base.cores += n.rel[n.pos].cores
				n.base.gpus += n.rel[n.pos].gpus
				n.base.mem += n.rel[n.pos].mem
				n.pos++
			}
			if n.pos < len(n.rel) && !math.IsInf(n.rel[n.pos].end, 1) {
				next[0].t = n.rel[n.pos].end
				heap.Fix(&next, 0)
			} else {
				heap.Pop(&next)
			}
			if !n.claimed {
				sum -= n.share
				n.share = share(req, n.st, n.base)
				sum += n.share
			}
		}
		for m < len(moments) && moments[m] <= t {
			m++
		}
		end := max(t+dur, math.Nextafter(t, math.Inf(1)))
		total := sum
		for _, i := range claimed {
			if total >= need {
				break // enough without looking further
			}
			total += share(req, nodes[i].st, s.windowFree(ps, nodes[i].st.Rank, nodes[i].base, t, end))
		}
		if total >= need {
			picks := s.choose(ps, policy, req, nodes, t, end)
			var onPlan []int64
			for _, c := range picks {
				if s.allElig || s.eligible.Contains(c.rank) {
					if onPlan == nil {
						onPlan = make([]int64, s.plan.Dims())
					}
					onPlan[0] += int64(c.cores)
					onPlan[1] += int64(c.gpus)
					if s.memKind {
						onPlan[2] += c.mem
					}
				}
			}
			if onPlan == nil || fits(s.freeDuring(t, end), onPlan) {
				if onPlan != nil {
					id, err := s.plan.Add(t, end, onPlan)
					if err != nil {
						return 0, false // FreeDuring said it fits
					}
					s.planned = append(s.planned, plannedStart{id: id}) // node by node: never taken again
				}
				if ps.claims == nil {
					ps.claims = map[uint][]claim{}
				}
				for _, c := range picks {
					ps.claims[c.rank] = append(ps.claims[c.rank], claim{start: t, end: end, cores: c.cores, gpus: c.gpus, mem: c.mem})
				}
				return t, true
			}
			// The nodes are there but the planner's other planned starts
			// need what they would take: look again when it has room.
			ta, ok := s.plan.EarliestFit(t, dur, onPlan)
			if !ok {
				return 0, false
			}
			if ta > t {
				t = ta
				continue
			}
		}
		switch {
		case len(next) == 0 && m == len(moments):
			return 0, false
		case len(next) == 0:
			t = moments[m]
		case m == len(moments):
			t = next[0].t
		default:
			t = min(next[0].t, moments[m])
		}
	}
}

// nextRelease is a feasible node's next release time in a sweep.
type nextRelease struct {
	t float64
	i int // the node's index in the sweep
}

// releaseHeap orders the feasible nodes by their next release.
type releaseHeap []nextRelease

func (h releaseHeap) Len() int           { return len(h) }
func (h releaseHeap) Less(a, b int) bool { return h[a].t < h[b].t }
func (h releaseHeap) Swap(a, b int)      { h[a], h[b] = h[b], h[a] }
func (h *releaseHeap) Push(x any)        { *h = append(*h, x.(nextRelease)) }
func (h *releaseHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// pick is what a planned start takes of one node.
type pick struct {
	rank        uint
	cores, gpus int
	mem         int64
}

// choose places req on the feasible nodes at t for [t, end), as Match
// would place it on what is free then: the nodes with room, ranked by the
// placement chain's ranker (resource.Policy.Compare) on their free cores,
// ties in rank order, taken until the request is met. The caller knows it
// fits.
func (s *Scheduler) choose(ps *pass, policy resource.Policy, req resource.Request, nodes []sweepNode, t, end float64) []pick {
	type cand struct {
		st   resource.NodeState
		free nodeFree
		n    int // its share
	}
	var cands []cand
	for i := range nodes {
		n := &nodes[i]
		f := n.base
		if n.claimed {
			f = s.windowFree(ps, n.st.Rank, n.base, t, end)
		}
		if sh := share(req, n.st, f); sh > 0 {
			cands = append(cands, cand{st: n.st, free: f, n: sh})
		}
	}
	// One comparator per policy, as resource's rank has them.
	switch policy {
	case resource.WorstFit:
		slices.SortStableFunc(cands, func(a, b cand) int { return resource.WorstFit.Compare(a.free.cores, b.free.cores) })
	case resource.BestFit:
		slices.SortStableFunc(cands, func(a, b cand) int { return resource.BestFit.Compare(a.free.cores, b.free.cores) })
	}
	var out []pick
	if req.NNodes > 0 {
		per := req.PerNode()
		for _, c := range cands[:min(req.NNodes, len(cands))] {
			if req.Exclusive {
				out = append(out, pick{c.st.Rank, c.st.Cores, c.st.GPUs, memAmount(1, c.st.Memory)})
			} else {
				out = append(out, pick{c.st.Rank, per * req.CoresPerSlot, per * req.GPUsPerSlot, memAmount(per, req.MemPerSlot)})
			}
		}
		return out
	}
	left := req.NSlots
	for _, c := range cands {
		k := min(c.n, left)
		out = append(out, pick{c.st.Rank, k * req.CoresPerSlot, k * req.GPUsPerSlot, memAmount(k, req.MemPerSlot)})
		if left -= k; left == 0 {
			break
		}
	}
	return out
}

// caps bounds what a job starting now and ending at end may take of each
// claimed node: what the pass's claims leave free there for its time.
func (s *Scheduler) caps(ps *pass, end float64) map[uint]resource.Cap {
	if len(ps.claims) == 0 {
		return nil
	}
	var out map[uint]resource.Cap
	for rank := range ps.claims {
		st, ok := s.pool.State(rank)
		if !ok || (st.FreeCores == 0 && st.FreeGPUs == 0) {
			continue // nothing free to bound: the common case on a busy machine
		}
		f := s.windowFree(ps, rank, s.baseFree(st, ps.now), ps.now, end)
		if f.cores < st.FreeCores || f.gpus < st.FreeGPUs || uint64(f.mem) < st.FreeMemory {
			if out == nil {
				out = map[uint]resource.Cap{}
			}
			out[rank] = resource.Cap{Cores: f.cores, GPUs: f.gpus, Memory: uint64(f.mem)}
		}
	}
	return out
}
