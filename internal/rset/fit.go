package rset

import (
	"strings"

	"github.com/fluxq/fluxq/internal/idset"
)

// Lack is one thing an R names that another does not hold: a rank it
// lacks (Missing), a hostname other than its own for a rank (Host, beside
// Have), ids of one child kind on a rank (Kind and IDs), or more memory on
// a rank than the receiver has there (Memory, beside HaveMemory); Have is
// then the rank's hostname, "" when unknown.
type Lack struct {
	Rank    uint
	Missing bool      // the rank itself is not there
	Host    string    // the hostname named for Rank, when it is not Have
	Have    string    // the receiver's hostname for Rank
	Kind    string    // a child kind: "core", "gpu", or another R_lite name
	IDs     idset.Set // the ids of Kind not held on Rank
	// Memory is the memory named for Rank when it is more than the
	// receiver's HaveMemory there; 0 otherwise. Memory is not a child
	// kind (an R_lite child may be called "memory"), hence its own field.
	Memory, HaveMemory uint64
}

// Lacks returns the first part of o that r does not hold, in rank order:
// a rank r lacks, a hostname o names for a rank that differs from r's
// (compared only when both name one), ids of a child kind r does not
// hold on that rank, or more memory there than r has. It reports false when r holds all of o. The cost is
// o's ranks times a binary search in r, so a small o is cheap to check
// against a large r.
func (r *R) Lacks(o *R) (Lack, bool) {
	for _, n := range o.nodeList() {
		i := r.find(n.rank)
		if i < 0 {
			return Lack{Rank: n.rank, Missing: true, Host: n.host}, true
		}
		have := r.nodes[i]
		if n.host != "" && have.host != "" && n.host != have.host {
			return Lack{Rank: n.rank, Host: n.host, Have: have.host}, true
		}
		for _, k := range n.kids {
			hk := kidOf(have.kids, k.name)
			if miss := k.ids.Difference(hk); !miss.IsEmpty() {
				return Lack{Rank: n.rank, Have: have.host, Kind: k.name, IDs: miss}, true
			}
		}
		if n.mem > have.mem {
			return Lack{Rank: n.rank, Have: have.host, Memory: n.mem, HaveMemory: have.mem}, true
		}
	}
	return Lack{}, false
}

// SharedOn returns the children that r and o both hold on rank, in
// words ("core 0-1", "core 1, gpu 0"); "" when they share none there.
// Memory is never shared in this sense: it is a quantity that several
// jobs' grants on one host divide, not ids that two of them could hold.
func (r *R) SharedOn(o *R, rank uint) string {
	i, j := r.find(rank), o.find(rank)
	if i < 0 || j < 0 {
		return ""
	}
	var b strings.Builder
	for _, k := range intersectKids(r.nodes[i].kids, o.nodes[j].kids) {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k.name)
		b.WriteByte(' ')
		b.WriteString(k.ids.String())
	}
	return b.String()
}

// Hostname returns the hostname r gives rank ("" when r names none), and
// false when r does not hold rank; unlike Node it builds no view.
func (r *R) Hostname(rank uint) (string, bool) {
	i := r.find(rank)
	if i < 0 {
		return "", false
	}
	return r.nodes[i].host, true
}

// kidOf returns the ids of child name in kids (sorted by name), empty
// when there is none.
func kidOf(kids []child, name string) idset.Set {
	for _, k := range kids {
		if k.name == name {
			return k.ids
		}
	}
	return idset.Set{}
}
