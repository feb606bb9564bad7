package rset

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strings"

	"github.com/fluxq/fluxq/internal/hostlist"
	"github.com/fluxq/fluxq/internal/idset"
)

// MaxRanks is the most ranks Parse accepts: each rank costs a record, so an
// idset like "0-4000000000" must be refused before it is expanded.
const MaxRanks = 1_000_000

// MaxMemory is the most memory Parse accepts on one rank, 1 EiB: the
// jobspec's bound, and far below where sums of it could overflow.
const MaxMemory = 1 << 60

// MaxRanges is the most child idset ranges Parse accepts, summed over every
// rank: a rank costs work in proportion to its ranges, and one short entry
// can give a million ranks the same long core list.
const MaxRanges = 10_000_000

// Child resource names RFC 20 defines.
const (
	CoreKey = "core"
	GPUKey  = "gpu"
)

// Node is the view of one rank of an R.
type Node struct {
	Rank     uint
	Hostname string // "" when the R has no nodelist
	Cores    idset.Set
	GPUs     idset.Set
	// Extra holds R_lite children other than core and gpu, by name; nil
	// when there are none.
	Extra map[string]idset.Set
	// Properties are the RFC 20 properties naming this rank, sorted; nil
	// when there are none.
	Properties []string
	// Memory is bytes of memory on the rank, 0 for none known: in an
	// inventory what may be scheduled there, in a job's R what the job
	// was granted there. R_lite carries it as the entry key "memory".
	Memory uint64
}

// R is an RFC 20 version 1 resource set. The zero value and nil are empty.
type R struct {
	nodes      []node               // sorted by rank, ranks unique, none empty
	ranks      idset.Set            // the ranks of nodes
	props      map[string]idset.Set // property -> ranks, each non-empty and within ranks
	start      float64              // 0: unset
	expiration float64              // 0: unset
	nslots     int                  // 0: unset
	scheduling json.RawMessage      // compacted; nil when absent
}

// node is one rank; kids never share a name, are sorted by name and are
// never empty. Kids slices are shared between nodes and never mutated. A
// node holds at least one child; memory rides on them.
type node struct {
	rank uint
	host string
	kids []child
	mem  uint64
}

// empty reports whether n holds no child, so that no R keeps it: memory
// alone is nothing a job could run on (every slot needs a core), and
// flux-core never encodes a rank without children.
func (n node) empty() bool { return len(n.kids) == 0 }

// addMem sums two memory sizes, saturating rather than wrapping: each is
// at most MaxMemory when parsed, but New and Union take any size.
func addMem(a, b uint64) uint64 {
	if a+b < a {
		return ^uint64(0)
	}
	return a + b
}

type child struct {
	name string
	ids  idset.Set
}

// New builds an R from per-rank views. Ranks should be unique; a rank given
// more than once is merged as Union would (children united, memory
// summed), its first hostname winning. Nodes holding no children (memory
// alone included), and ranks above idset.MaxID, are dropped.
func New(nodes []Node) *R {
	ns := make([]node, 0, len(nodes))
	var props map[string][]idset.Range // made by the first property: a grant's views have none
	// The children of views without Extra (all a pool makes) share one
	// array, each node its own part of it, rather than one array a node:
	// a grant of many nodes is then two allocations, not one a node.
	buf := make([]child, 0, plainKids(nodes))
	var last []child // the previous view's children, when it had no Extra
	for i, v := range nodes {
		var kids []child
		switch {
		case likeLast(nodes, i):
			kids = last
		case len(v.Extra) == 0:
			kids, buf = plainKidsOf(v, buf)
		default:
			kids = kidsOf(v)
		}
		last = kids
		if v.Rank > idset.MaxID {
			continue
		}
		n := node{rank: v.Rank, host: v.Hostname, kids: kids, mem: v.Memory}
		if n.empty() && n.mem == 0 {
			continue
		}
		ns = append(ns, n) // memory alone may join another view's children
		for _, p := range v.Properties {
			if props == nil {
				props = map[string][]idset.Range{}
			}
			props[p] = append(props[p], idset.Range{First: v.Rank, Last: v.Rank})
		}
	}
	byRank := func(a, b node) int { return cmpUint(a.rank, b.rank) }
	if !slices.IsSortedFunc(ns, byRank) { // a pool's views come in rank order
		slices.SortStableFunc(ns, byRank)
	}
	out := ns[:0]
	for _, n := range ns {
		if k := len(out) - 1; k >= 0 && out[k].rank == n.rank {
			out[k].kids = unionKids(out[k].kids, n.kids)
			out[k].mem = addMem(out[k].mem, n.mem)
			if out[k].host == "" {
				out[k].host = n.host
			}
			continue
		}
		out = append(out, n)
	}
	out = slices.DeleteFunc(out, node.empty)
	r := &R{nodes: out}
	r.ranks = ranksOf(out)
	for p, rs := range props {
		if r.props == nil {
			r.props = map[string]idset.Set{}
		}
		r.props[p] = idset.FromRanges(rs)
	}
	return r
}

// plainKids counts the children of the views without Extra: a core set
// and a GPU set each, when not empty, and none for a view whose sets
// are the previous view's (likeLast), which shares its children.
func plainKids(nodes []Node) int {
	n := 0
	for i := range nodes {
		if v := &nodes[i]; len(v.Extra) == 0 && !likeLast(nodes, i) {
			if !v.Cores.IsEmpty() {
				n++
			}
			if !v.GPUs.IsEmpty() {
				n++
			}
		}
	}
	return n
}

// likeLast reports whether view i and the one before it are both without
// Extra and hold the same cores and GPUs: i's children are then the
// ones made for the view before (kids are never changed once made). A
// grant of many like nodes, the one core 0 of each, is so one child and
// not one a node; that was a third of what a grant's R took.
func likeLast(nodes []Node, i int) bool {
	if i == 0 {
		return false
	}
	v, u := &nodes[i], &nodes[i-1]
	return len(v.Extra) == 0 && len(u.Extra) == 0 && v.Cores.Equal(u.Cores) && v.GPUs.Equal(u.GPUs)
}

// plainKidsOf is kidsOf for a view without Extra, its children appended
// to buf; the slice returned is capped at its own length, so that nothing
// appended to it could reach the next node's.
func plainKidsOf(v Node, buf []child) (kids, rest []child) {
	at := len(buf)
	if !v.Cores.IsEmpty() {
		buf = append(buf, child{CoreKey, v.Cores})
	}
	if !v.GPUs.IsEmpty() {
		buf = append(buf, child{GPUKey, v.GPUs})
	}
	if len(buf) == at {
		return nil, buf
	}
	return buf[at:len(buf):len(buf)], buf
}

// NewWithNSlots is New(nodes).WithNSlots(n) without the copy: the R a
// scheduler grants.
func NewWithNSlots(nodes []Node, n int) *R {
	r := New(nodes)
	r.nslots = max(n, 0)
	return r
}

// kidsOf gathers a view's children, sorted and without empty sets.
func kidsOf(v Node) []child {
	if len(v.Extra) == 0 {
		// Cores and GPUs alone, the views a pool makes: already in name
		// order ("core" < "gpu"), without the map.
		n := 0
		if !v.Cores.IsEmpty() {
			n++
		}
		if !v.GPUs.IsEmpty() {
			n++
		}
		if n == 0 {
			return nil
		}
		kids := make([]child, 0, n)
		if !v.Cores.IsEmpty() {
			kids = append(kids, child{CoreKey, v.Cores})
		}
		if !v.GPUs.IsEmpty() {
			kids = append(kids, child{GPUKey, v.GPUs})
		}
		return kids
	}
	m := map[string]idset.Set{}
	add := func(name string, ids idset.Set) {
		if !ids.IsEmpty() {
			m[name] = m[name].Union(ids)
		}
	}
	add(CoreKey, v.Cores)
	add(GPUKey, v.GPUs)
	for name, ids := range v.Extra {
		add(name, ids)
	}
	kids := make([]child, 0, len(m))
	for name, ids := range m {
		kids = append(kids, child{name, ids})
	}
	sortKids(kids)
	return kids
}

func sortKids(kids []child) {
	slices.SortFunc(kids, func(a, b child) int { return strings.Compare(a.name, b.name) })
}

func cmpUint(a, b uint) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ranksOf builds the rank set of nodes sorted by rank, one range per run.
func ranksOf(nodes []node) idset.Set {
	// The runs are counted first, so that the ranges take one allocation
	// rather than one for each time append would grow them (every grant
	// makes its R's ranks).
	runs := 0
	for i, n := range nodes {
		if i == 0 || nodes[i-1].rank+1 != n.rank {
			runs++
		}
	}
	rs := make([]idset.Range, 0, runs)
	for _, n := range nodes {
		if k := len(rs) - 1; k >= 0 && rs[k].Last+1 == n.rank {
			rs[k].Last = n.rank
			continue
		}
		rs = append(rs, idset.Range{First: n.rank, Last: n.rank})
	}
	return idset.FromSortedRanges(rs) // sorted, disjoint, and rs is not kept
}

// derive returns an R holding nodes, with the receiver's properties
// restricted to them and its times; the scheduling key rides along only
// when something is left, as flux-core's rlist_copy_* do.
func (r *R) derive(nodes []node) *R {
	out := &R{nodes: nodes, ranks: ranksOf(nodes)}
	if r == nil {
		return out
	}
	out.start, out.expiration = r.start, r.expiration
	if len(nodes) > 0 {
		out.scheduling = r.scheduling
	}
	out.props = restrictProps(r.props, out.ranks)
	return out
}

func restrictProps(props map[string]idset.Set, ranks idset.Set) map[string]idset.Set {
	var out map[string]idset.Set
	for p, ids := range props {
		ids = ids.Intersection(ranks)
		if ids.IsEmpty() {
			continue
		}
		if out == nil {
			out = map[string]idset.Set{}
		}
		out[p] = ids
	}
	return out
}

func (r *R) nodeList() []node {
	if r == nil {
		return nil
	}
	return r.nodes
}

// find returns the index of rank in r's nodes, or -1.
func (r *R) find(rank uint) int {
	ns := r.nodeList()
	if rank < uint(len(ns)) && ns[rank].rank == rank {
		return int(rank) // ranks 0 to n-1, an inventory's: no search
	}
	i := sort.Search(len(ns), func(i int) bool { return ns[i].rank >= rank })
	if i < len(ns) && ns[i].rank == rank {
		return i
	}
	return -1
}

// view expands node n into its public form; names are r's property names,
// sorted.
func (r *R) view(n node, names []string) Node {
	v := Node{Rank: n.rank, Hostname: n.host, Memory: n.mem}
	for _, k := range n.kids {
		switch k.name {
		case CoreKey:
			v.Cores = k.ids
		case GPUKey:
			v.GPUs = k.ids
		default:
			if v.Extra == nil {
				v.Extra = map[string]idset.Set{}
			}
			v.Extra[k.name] = k.ids
		}
	}
	for _, p := range names {
		if r.props[p].Contains(n.rank) {
			v.Properties = append(v.Properties, p)
		}
	}
	return v
}

// Nodes returns the per-rank views in rank order.
func (r *R) Nodes() []Node {
	ns := r.nodeList()
	names := r.Properties()
	out := make([]Node, len(ns))
	for i, n := range ns {
		out[i] = r.view(n, names)
	}
	return out
}

// Part is what a pool counts of one rank of an R: its cores, GPUs and
// memory, without what a Node adds (hostname, properties, other
// children), which a grant's Allocate and Release never read.
type Part struct {
	Rank   uint
	Cores  idset.Set
	GPUs   idset.Set
	Memory uint64
}

// NumNodes is the number of ranks r holds, for PartAt.
func (r *R) NumNodes() int { return len(r.nodeList()) }

// PartAt is the part of the i-th rank of r, in rank order (0 <=
// i < NumNodes). A pool's Allocate and Release look at every node of
// every grant twice: a Node's view there (its properties looked up, a
// struct twice the size copied) was a tenth of a replay's time.
func (r *R) PartAt(i int) Part {
	n := &r.nodes[i]
	p := Part{Rank: n.rank, Memory: n.mem}
	for _, k := range n.kids {
		switch k.name {
		case CoreKey:
			p.Cores = k.ids
		case GPUKey:
			p.GPUs = k.ids
		}
	}
	return p
}

// Node returns the view of rank, or false when r does not hold it.
func (r *R) Node(rank uint) (Node, bool) {
	i := r.find(rank)
	if i < 0 {
		return Node{}, false
	}
	return r.view(r.nodes[i], r.Properties()), true
}

// Ranks returns the set of ranks r holds.
func (r *R) Ranks() idset.Set {
	if r == nil {
		return idset.Set{}
	}
	return r.ranks
}

// Nodelist returns the hostnames in rank order; ranks without a hostname
// are skipped.
func (r *R) Nodelist() hostlist.Hostlist {
	hosts := make([]string, 0, len(r.nodeList()))
	for _, n := range r.nodeList() {
		if n.host != "" {
			hosts = append(hosts, n.host)
		}
	}
	return hostlist.New(hosts...)
}

// Counts returns the number of ranks, cores and GPUs in r.
func (r *R) Counts() (nnodes, ncores, ngpus int) {
	for _, n := range r.nodeList() {
		for _, k := range n.kids {
			switch k.name {
			case CoreKey:
				ncores += k.ids.Count()
			case GPUKey:
				ngpus += k.ids.Count()
			}
		}
	}
	return len(r.nodeList()), ncores, ngpus
}

// Memory returns the bytes of memory r holds, summed over its ranks; 0
// when it records none.
func (r *R) Memory() uint64 {
	var sum uint64
	for _, n := range r.nodeList() {
		sum = addMem(sum, n.mem)
	}
	return sum
}

// IsEmpty reports whether r holds no ranks.
func (r *R) IsEmpty() bool { return len(r.nodeList()) == 0 }

// StartTime returns the time from which r is valid, in seconds since the
// Unix epoch; 0 means unset.
func (r *R) StartTime() float64 {
	if r == nil {
		return 0
	}
	return r.start
}

// Expiration returns the time at which r expires, in seconds since the
// Unix epoch; 0 means unset.
func (r *R) Expiration() float64 {
	if r == nil {
		return 0
	}
	return r.expiration
}

// WithTimes returns a copy of r with the given start and expiration times
// (0 for unset); MarshalJSON refuses an expiration not after the start.
func (r *R) WithTimes(start, expiration float64) *R {
	c := r.Copy()
	c.start, c.expiration = start, expiration
	return c
}

// NSlots returns the number of task slots recorded in r by the scheduler
// that built it (flux-core's execution.nslots); 0 means unset.
func (r *R) NSlots() int {
	if r == nil {
		return 0
	}
	return r.nslots
}

// WithNSlots returns a copy of r recording n task slots; n <= 0 unsets it.
func (r *R) WithNSlots(n int) *R {
	c := r.Copy()
	c.nslots = max(n, 0)
	return c
}

// Scheduling returns a copy of the opaque scheduling value, or nil.
func (r *R) Scheduling() json.RawMessage {
	if r == nil || r.scheduling == nil {
		return nil
	}
	return slices.Clone(r.scheduling)
}

// WithScheduling returns a copy of r carrying the opaque scheduling value
// raw (nil or JSON null removes it); raw must be valid JSON.
func (r *R) WithScheduling(raw json.RawMessage) (*R, error) {
	s, err := compactScheduling(raw)
	if err != nil {
		return nil, err
	}
	c := r.Copy()
	c.scheduling = s
	return c, nil
}

func compactScheduling(raw []byte) (json.RawMessage, error) {
	if raw == nil || kindOf(raw) == "null" {
		return nil, nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, wrapf(err, "scheduling")
	}
	return json.RawMessage(b.Bytes()), nil
}

// Copy returns a copy of r; an R is never changed in place, so this is only
// needed to hand out a distinct pointer.
func (r *R) Copy() *R {
	if r == nil {
		return &R{}
	}
	// The nodes and the properties are shared: neither is changed once
	// an R is made, and cloning them cost the scheduler two copies of
	// every node of every grant (WithNSlots, then WithTimes).
	c := *r
	return &c
}

// Properties returns the names of the properties r holds, sorted.
func (r *R) Properties() []string {
	if r == nil || len(r.props) == 0 {
		return nil
	}
	names := make([]string, 0, len(r.props))
	for p := range r.props {
		names = append(names, p)
	}
	slices.Sort(names)
	return names
}

// HasProperty reports whether any rank of r has property name.
func (r *R) HasProperty(name string) bool {
	return !r.RanksWithProperty(name).IsEmpty()
}

// RanksWithProperty returns the ranks of r that have property name.
func (r *R) RanksWithProperty(name string) idset.Set {
	if r == nil {
		return idset.Set{}
	}
	return r.props[name]
}
