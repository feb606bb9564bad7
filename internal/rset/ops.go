package rset

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/fluxq/fluxq/internal/idset"
)

// Union returns the resources in r or o. A rank in both gets the union of
// its children and of its properties and the sum of its memory (memory is
// a quantity, not a set of ids: two jobs' grants on a host add up); its hostname is whichever is set,
// and it is an error for the two to differ. Times come from r; the
// scheduling key is r's, or o's when r has none.
func (r *R) Union(o *R) (*R, error) {
	a, b := r.nodeList(), o.nodeList()
	out := make([]node, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j >= len(b) || (i < len(a) && a[i].rank < b[j].rank):
			out = append(out, a[i])
			i++
		case i >= len(a) || b[j].rank < a[i].rank:
			out = append(out, b[j])
			j++
		default:
			x, y := a[i], b[j]
			if x.host != "" && y.host != "" && x.host != y.host {
				return nil, fmt.Errorf("rank %d: hostname %q differs from %q", x.rank, x.host, y.host)
			}
			if x.host == "" {
				x.host = y.host
			}
			x.kids = unionKids(x.kids, y.kids)
			x.mem = addMem(x.mem, y.mem)
			out = append(out, x)
			i++
			j++
		}
	}
	res := r.derive(out)
	for p, ids := range o.propMap() {
		if res.props == nil {
			res.props = map[string]idset.Set{}
		}
		res.props[p] = res.props[p].Union(ids)
	}
	if res.scheduling == nil && len(out) > 0 && o != nil {
		res.scheduling = o.scheduling
	}
	return res, nil
}

// Difference returns r without o's resources: each rank of r loses the
// cores, GPUs and other children o holds on the same rank and o's memory
// there (down to 0), and a rank left with no children is dropped, as
// flux-core's rlist_diff does, whatever memory it had left: memory alone
// runs nothing. Hostnames are not
// compared. Properties and times come from r, and so does the scheduling
// key unless nothing is left.
func (r *R) Difference(o *R) *R {
	a, b := r.nodeList(), o.nodeList()
	out := make([]node, 0, len(a))
	j := 0
	for _, x := range a {
		for j < len(b) && b[j].rank < x.rank {
			j++
		}
		if j < len(b) && b[j].rank == x.rank {
			x.kids = diffKids(x.kids, b[j].kids)
			x.mem -= min(x.mem, b[j].mem)
			if x.empty() {
				continue
			}
		}
		out = append(out, x)
	}
	return r.derive(out)
}

// Intersection returns the resources both r and o hold, memory the lesser
// of the two on each rank. A rank whose
// hostnames are both set and differ is not shared, as in flux-core's
// rlist_intersect. Properties and times come from r, and so does the
// scheduling key unless nothing is left.
func (r *R) Intersection(o *R) *R {
	a, b := r.nodeList(), o.nodeList()
	var out []node
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		x, y := a[i], b[j]
		switch {
		case x.rank < y.rank:
			i++
			continue
		case y.rank < x.rank:
			j++
			continue
		}
		i++
		j++
		if x.host != "" && y.host != "" && x.host != y.host {
			continue
		}
		if x.host == "" {
			x.host = y.host
		}
		x.kids = intersectKids(x.kids, y.kids)
		x.mem = min(x.mem, y.mem)
		if !x.empty() {
			out = append(out, x)
		}
	}
	return r.derive(out)
}

// SelectRanks returns the part of r on the given ranks, with their
// properties; ranks r does not hold are ignored.
func (r *R) SelectRanks(ranks idset.Set) *R {
	var out []node
	for _, n := range r.nodeList() {
		if ranks.Contains(n.rank) {
			out = append(out, n)
		}
	}
	return r.derive(out)
}

// Equal reports whether r and o hold the same ranks, hostnames, children,
// memory, properties, times, nslots and scheduling key.
func (r *R) Equal(o *R) bool {
	a, b := r.nodeList(), o.nodeList()
	if len(a) != len(b) || r.StartTime() != o.StartTime() ||
		r.Expiration() != o.Expiration() || r.NSlots() != o.NSlots() {
		return false
	}
	if !bytes.Equal(r.schedulingRaw(), o.schedulingRaw()) {
		return false
	}
	for i := range a {
		if a[i].rank != b[i].rank || a[i].host != b[i].host || a[i].mem != b[i].mem || !equalKids(a[i].kids, b[i].kids) {
			return false
		}
	}
	pa, pb := r.propMap(), o.propMap()
	if len(pa) != len(pb) {
		return false
	}
	for p, ids := range pa {
		other, ok := pb[p]
		if !ok || !ids.Equal(other) {
			return false
		}
	}
	return true
}

func (r *R) propMap() map[string]idset.Set {
	if r == nil {
		return nil
	}
	return r.props
}

func (r *R) schedulingRaw() []byte {
	if r == nil {
		return nil
	}
	return r.scheduling
}

func equalKids(a, b []child) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].name != b[i].name || !a[i].ids.Equal(b[i].ids) {
			return false
		}
	}
	return true
}

// unionKids merges two sorted child lists; it never modifies either.
func unionKids(a, b []child) []child {
	if len(b) == 0 {
		return a
	}
	if len(a) == 0 {
		return b
	}
	out := make([]child, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		var c int
		switch {
		case j >= len(b):
			c = -1
		case i >= len(a):
			c = 1
		default:
			c = strings.Compare(a[i].name, b[j].name)
		}
		switch {
		case c < 0:
			out = append(out, a[i])
			i++
		case c > 0:
			out = append(out, b[j])
			j++
		default:
			out = append(out, child{a[i].name, a[i].ids.Union(b[j].ids)})
			i++
			j++
		}
	}
	return out
}

// diffKids removes b's ids from a, dropping children left empty.
func diffKids(a, b []child) []child {
	var out []child // most often empty: allocate only what is kept
	j := 0
	for _, x := range a {
		for j < len(b) && b[j].name < x.name {
			j++
		}
		if j < len(b) && b[j].name == x.name {
			x.ids = x.ids.Difference(b[j].ids)
		}
		if !x.ids.IsEmpty() {
			if out == nil {
				out = make([]child, 0, len(a))
			}
			out = append(out, x)
		}
	}
	return out
}

// intersectKids keeps the ids a and b share, dropping empty children.
func intersectKids(a, b []child) []child {
	var out []child
	j := 0
	for _, x := range a {
		for j < len(b) && b[j].name < x.name {
			j++
		}
		if j < len(b) && b[j].name == x.name {
			if ids := x.ids.Intersection(b[j].ids); !ids.IsEmpty() {
				out = append(out, child{x.name, ids})
			}
		}
	}
	return out
}
