package resource

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/jobspec"
)

// Sessions are the node-reservation specification's partition of the
// instance: the default session (every node no reservation holds) and one
// session per reservation. A request may be placed only on the union of the
// sessions it targets (the specification's conformance item 1), and never
// on a node outside the instance.

// SetSessions says which reservation holds each node and which nodes are
// outside the instance, replacing what was set before: reserved maps
// allocation ids to their ranks, every other node is in the default
// session, and outside is every node that is not in the instance now.
// Ranks not in the pool are ignored, and so is a key naming the default
// session. Reservations should be disjoint; a rank given to several goes to
// the id that sorts first, so the outcome does not depend on map order.
func (p *Pool) SetSessions(reserved map[string]idset.Set, outside idset.Set) {
	for i := range p.nodes {
		p.nodes[i].session = ""
		p.nodes[i].outside = false
	}
	ids := make([]string, 0, len(reserved))
	for id := range reserved {
		if id != "" && id != jobspec.DefaultSession {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	restricted := false
	for _, id := range ids {
		p.each(reserved[id], func(n *poolNode) {
			if n.session == "" {
				n.session = id
				restricted = true
			}
		})
	}
	p.each(outside, func(n *poolNode) {
		n.outside = true
		restricted = true
	})
	p.restricted = restricted
	p.groups = nil
	p.reindex()
}

// Sessions returns what SetSessions set, as it applies to the pool: the
// ranks of each reservation holding any, and the ranks outside.
func (p *Pool) Sessions() (reserved map[string]idset.Set, outside idset.Set) {
	byID := map[string][]uint{}
	var out []uint
	for i := range p.nodes {
		n := &p.nodes[i]
		if n.session != "" {
			byID[n.session] = append(byID[n.session], n.target.Rank)
		}
		if n.outside {
			out = append(out, n.target.Rank)
		}
	}
	reserved = make(map[string]idset.Set, len(byID))
	for id, ranks := range byID {
		reserved[id] = idset.Of(ranks...)
	}
	return reserved, idset.Of(out...)
}

// each calls fn on the pool's nodes whose ranks are in ranks, walking the
// ranges rather than the ids, so a set like 0-4294967294 costs no more than
// the pool.
func (p *Pool) each(ranks idset.Set, fn func(*poolNode)) {
	for _, r := range ranks.Ranges() {
		i := sort.Search(len(p.nodes), func(i int) bool { return p.nodes[i].target.Rank >= r.First })
		for ; i < len(p.nodes) && p.nodes[i].target.Rank <= r.Last; i++ {
			fn(&p.nodes[i])
		}
	}
}

// sessionFilter is the session part of a request's feasibility filter.
type sessionFilter struct {
	// on is false when every node in the instance passes: nothing is
	// reserved or outside and the request targets the default session.
	on bool
	// def says whether the default session is targeted.
	def bool
	// targets are the request's targets; "default" among them never
	// equals a node's session, which is "" for the default session.
	targets []string
}

func (p *Pool) sessionFilter(req Request) sessionFilter {
	def := req.Targets == nil || slices.Contains(req.Targets, jobspec.DefaultSession)
	return sessionFilter{on: p.restricted || !def, def: def, targets: req.Targets}
}

// admits reports whether a request may be placed on n.
func (f *sessionFilter) admits(n *poolNode) bool {
	switch {
	case n.outside:
		return false
	case n.session == "":
		return f.def
	}
	return slices.Contains(f.targets, n.session)
}

// FitsTargets reports whether req could be placed on the union of the
// sessions it targets if every node there were up and free; outside nodes
// do not count. Unlike Feasible, a failure here need not be final, since
// reservations grow and end, so the error is a reason to show a waiting
// job's owner, in one of these forms:
//
//	target r3 has 2 nodes, needs 3
//	targets r1,default have 5 nodes, needs 6
//	target r3 has 8 cores, needs 12
//	target r3 has 0 gpus, needs 2
//	target r3 has 1 nodes with 4 cores, needs 2
//	target r3 has room for 3 slots of 4 cores, needs 4
//
// where a constrained request counts "matching" nodes, cores or gpus, and
// an untargeted request's target is "default".
func (p *Pool) FitsTargets(req Request) error {
	if err := req.Validate(); err != nil {
		return err
	}
	constrained := !req.Constraint.IsEmpty()
	f := fit{req: req, per: req.perNode()}
	// A scheduler asks again for every waiting job whenever sessions
	// change; by groups, unless a constraint looks at more than sizes,
	// this does not grow with the pool.
	for _, g := range p.admittedGroups(p.ask(targets, req, nil, false)) {
		f.add(p.nodes[g.rep].ncores, p.nodes[g.rep].ngpus, p.nodes[g.rep].mem, g.count)
	}
	short := func(format string, args ...any) error {
		return fmt.Errorf("%s "+format, append([]any{targetLabel(req.Targets)}, args...)...)
	}
	m := matching(constrained)
	switch needNodes := max(req.NNodes, 1); {
	case f.nodes < needNodes:
		return short("%d %snodes, needs %d", f.nodes, m, needNodes)
	case f.cores < need(req.NSlots, req.CoresPerSlot):
		return short("%d %scores, needs %d", f.cores, m, need(req.NSlots, req.CoresPerSlot))
	case f.gpus < need(req.NSlots, req.GPUsPerSlot):
		return short("%d %sgpus, needs %d", f.gpus, m, need(req.NSlots, req.GPUsPerSlot))
	case f.mem < needMem(req.NSlots, req.MemPerSlot):
		return short("%s of %smemory, needs %s", jobspec.FormatMemory(f.mem), m, jobspec.FormatMemory(needMem(req.NSlots, req.MemPerSlot)))
	case req.NNodes > 0 && f.roomy < req.NNodes:
		return short("%d %snodes with %s, needs %d", f.roomy, m, size(f.per*req.CoresPerSlot, f.per*req.GPUsPerSlot, uint64(f.per)*req.MemPerSlot), req.NNodes)
	case req.NNodes == 0 && f.slots < req.NSlots:
		return short("room for %d slots of %s, needs %d", f.slots, size(req.CoresPerSlot, req.GPUsPerSlot, req.MemPerSlot), req.NSlots)
	}
	return nil
}

// targetLabel is the subject of a FitsTargets reason, with its verb:
// "target r3 has", "targets r1,default have".
func targetLabel(targets []string) string {
	switch len(targets) {
	case 0:
		return "target " + jobspec.DefaultSession + " has"
	case 1:
		return "target " + targets[0] + " has"
	}
	return "targets " + strings.Join(targets, ",") + " have"
}

// size words a slot or a node's share: "4 cores", "4 cores and 1 gpus",
// "4 cores and 3G memory", "4 cores, 1 gpus and 3G memory".
func size(cores, gpus int, mem uint64) string {
	switch {
	case gpus > 0 && mem > 0:
		return fmt.Sprintf("%d cores, %d gpus and %s memory", cores, gpus, jobspec.FormatMemory(mem))
	case gpus > 0:
		return fmt.Sprintf("%d cores and %d gpus", cores, gpus)
	case mem > 0:
		return fmt.Sprintf("%d cores and %s memory", cores, jobspec.FormatMemory(mem))
	}
	return fmt.Sprintf("%d cores", cores)
}

func matching(constrained bool) string {
	if constrained {
		return "matching "
	}
	return ""
}

// fit adds up what a set of nodes offers a request, for FitsTargets.
type fit struct {
	req                              Request
	per                              int // slots per node with a node count
	nodes, cores, gpus, slots, roomy int // roomy: nodes that hold per slots
	mem                              uint64
}

// add counts count nodes of ncores cores and ngpus GPUs. As in Feasible, a
// node without cores holds no slot, so its GPUs cannot be used either.
func (f *fit) add(ncores, ngpus int, mem uint64, count int) {
	if ncores == 0 || count == 0 {
		return
	}
	c := capacity(ncores, ngpus, mem, f.req.CoresPerSlot, f.req.GPUsPerSlot, f.req.MemPerSlot)
	f.mem = satAddMem(f.mem, needMem(count, mem))
	f.nodes = satAdd(f.nodes, count)
	f.cores = satAdd(f.cores, need(count, ncores))
	f.gpus = satAdd(f.gpus, need(count, ngpus))
	f.slots = satAdd(f.slots, need(count, c))
	if f.req.NNodes > 0 && c >= f.per {
		f.roomy = satAdd(f.roomy, count)
	}
}
