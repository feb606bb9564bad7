package rset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/fluxq/fluxq/internal/hostlist"
	"github.com/fluxq/fluxq/internal/idset"
)

// group is one R_lite entry: ranks sharing identical children and memory.
type group struct {
	ranks []idset.Range
	kids  []child
	mem   uint64
}

// groups merges ranks with identical children and memory into R_lite
// entries ordered by their first rank, as flux-core's rlist_compressed
// does; withMem false merges by children alone (String, which has no word
// for memory).
func (r *R) groups(withMem bool) []group {
	var gs []group
	// Until there are linearGroups groups a node's is looked for among
	// them, as sameKids compares (a grant's R is commonly one or two, and
	// the maps were most of what String made); then by key.
	var index map[string]int
	// Nodes decoded from one entry share a kids slice: key it once.
	var memo map[*child]string
	prev := -1 // the previous node's group
	var prevNode node
	for _, n := range r.nodeList() {
		if prev >= 0 && (!withMem || n.mem == prevNode.mem) && sameKids(n.kids, prevNode.kids) {
			// The common case, a rank like the one before it: its
			// group, without a key.
			g := &gs[prev]
			if k := len(g.ranks) - 1; g.ranks[k].Last+1 == n.rank {
				g.ranks[k].Last = n.rank
			} else {
				g.ranks = append(g.ranks, idset.Range{First: n.rank, Last: n.rank})
			}
			prevNode = n
			continue
		}
		mem := uint64(0)
		if withMem {
			mem = n.mem
		}
		gi := -1
		if index == nil && len(gs) >= linearGroups {
			index, memo = map[string]int{}, map[*child]string{}
			for i := range gs {
				index[groupKey(gs[i].kids, gs[i].mem, memo)] = i
			}
		}
		if index == nil {
			for i := range gs {
				if gs[i].mem == mem && sameKids(gs[i].kids, n.kids) {
					gi = i
					break
				}
			}
		} else {
			key := groupKey(n.kids, mem, memo)
			if i, ok := index[key]; ok {
				gi = i
			} else {
				index[key] = len(gs)
			}
		}
		if gi < 0 {
			gi = len(gs)
			gs = append(gs, group{kids: n.kids, mem: mem})
		}
		g := &gs[gi]
		if k := len(g.ranks) - 1; k >= 0 && g.ranks[k].Last+1 == n.rank {
			g.ranks[k].Last = n.rank
		} else {
			g.ranks = append(g.ranks, idset.Range{First: n.rank, Last: n.rank})
		}
		prev, prevNode = gi, n
	}
	return gs
}

// linearGroups is how many groups groups compares a node with, one by
// one, before it keys them.
const linearGroups = 8

// groupKey is the key of a group of kids and mem (0 for none, or when
// memory is not told apart): equal exactly when sameKids and the memory
// are.
func groupKey(kids []child, mem uint64, memo map[*child]string) string {
	var key string
	if len(kids) > 0 {
		k, ok := memo[&kids[0]]
		if !ok {
			k = kidsKey(kids)
			memo[&kids[0]] = k
		}
		key = k
	}
	if mem != 0 {
		// '#' is in no idset string, so the key stays unambiguous;
		// memory-less ranks keep exactly the key they had before.
		key += "#" + strconv.FormatUint(mem, 10)
	}
	return key
}

// sameKids reports whether two child lists are equal, names and ids, so
// that they have the same kidsKey.
func sameKids(a, b []child) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) > 0 && &a[0] == &b[0] {
		return true
	}
	for i := range a {
		if a[i].name != b[i].name || !a[i].ids.Equal(b[i].ids) {
			return false
		}
	}
	return true
}

// kidsKey is an unambiguous string for a child list: names are length
// prefixed and idset strings hold only digits, '-' and ','.
func kidsKey(kids []child) string {
	var b strings.Builder
	for _, k := range kids {
		b.WriteString(strconv.Itoa(len(k.name)))
		b.WriteByte(':')
		b.WriteString(k.name)
		b.WriteString(k.ids.String())
		b.WriteByte(';')
	}
	return b.String()
}

// MarshalJSON encodes r canonically: R_lite compressed as flux-core does
// (ranks merge only when both children and memory are equal; an entry's
// "memory" key, integer bytes, is written only when not 0, so an R without
// memory encodes exactly as flux-core's would),
// the nodelist as one compressed hostlist, properties and all object keys
// sorted, starttime and expiration always present (0 when unset). It fails
// for an R that Parse would refuse, such as one where only some ranks have
// a hostname or a property name has a forbidden character.
func (r *R) MarshalJSON() ([]byte, error) {
	nodelist, err := r.encodeNodelist()
	if err != nil {
		return nil, err
	}
	if err := r.check(); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(`{"execution":{"R_lite":[`)
	for i, g := range r.groups(true) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"children":{`)
		for j, k := range g.kids {
			if j > 0 {
				b.WriteByte(',')
			}
			writeString(&b, k.name)
			b.WriteByte(':')
			writeString(&b, k.ids.String())
		}
		b.WriteByte('}')
		if g.mem != 0 {
			b.WriteString(`,"memory":`)
			b.WriteString(strconv.FormatUint(g.mem, 10))
		}
		b.WriteString(`,"rank":`)
		writeString(&b, idset.FromRanges(g.ranks).String())
		b.WriteByte('}')
	}
	b.WriteString(`],"expiration":`)
	writeFloat(&b, r.Expiration())
	if nodelist != nil {
		b.WriteString(`,"nodelist":[`)
		if len(r.nodeList()) > 0 {
			writeString(&b, *nodelist)
		}
		b.WriteByte(']')
	}
	if n := r.NSlots(); n > 0 {
		b.WriteString(`,"nslots":`)
		b.WriteString(strconv.Itoa(n))
	}
	if names := r.Properties(); len(names) > 0 {
		b.WriteString(`,"properties":{`)
		for i, p := range names {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(&b, p)
			b.WriteByte(':')
			writeString(&b, r.props[p].String())
		}
		b.WriteByte('}')
	}
	b.WriteString(`,"starttime":`)
	writeFloat(&b, r.StartTime())
	b.WriteByte('}')
	if s := r.schedulingRaw(); s != nil {
		b.WriteString(`,"scheduling":`)
		b.Write(s)
	}
	b.WriteString(`,"version":1}`)
	return b.Bytes(), nil
}

// check refuses what Parse would refuse in an R built by New or With*.
// Check reports what MarshalJSON would refuse of r, but for host names
// that do not encode as a hostlist: the check of an R made of a parsed
// R's nodes (a scheduler's grant, whose host names are the inventory's),
// without encoding it.
func (r *R) Check() error {
	ns := r.nodeList()
	for _, n := range ns {
		if (n.host == "") != (ns[0].host == "") {
			for _, m := range ns {
				if m.host == "" {
					return fmt.Errorf("nodelist: rank %d has no hostname while others do", m.rank)
				}
			}
		}
	}
	return r.check()
}

func (r *R) check() error {
	if len(r.nodeList()) > MaxRanks {
		return fmt.Errorf("execution.R_lite: more than %d ranks", MaxRanks)
	}
	ranges := 0
	// Nodes decoded from one entry share a kids slice, and come one after
	// another: its ranges are counted once and reused while it is shared.
	// (A map of them cost every grant of more than 64 nodes, whose nodes
	// share nothing, a map for nothing.)
	var last *child
	lastCount := 0
	for _, n := range r.nodeList() {
		if n.mem > MaxMemory {
			return fmt.Errorf("rank %d: memory %d is more than %d bytes", n.rank, n.mem, uint64(MaxMemory))
		}
		if len(n.kids) == 0 {
			continue // memory alone: no ranges
		}
		c := lastCount
		if &n.kids[0] != last {
			c = 0
			for _, k := range n.kids {
				if k.name == "" {
					return fmt.Errorf("rank %d: empty resource name", n.rank)
				}
				c += k.ids.RangeCount()
			}
			last, lastCount = &n.kids[0], c
		}
		if ranges += c; ranges > MaxRanges {
			return fmt.Errorf("execution.R_lite: more than %d child idset ranges over all ranks", MaxRanges)
		}
	}
	for _, p := range r.Properties() {
		if err := checkPropertyName(p); err != nil {
			return err
		}
	}
	if err := checkTime(r.StartTime(), "execution.starttime"); err != nil {
		return err
	}
	if err := checkTime(r.Expiration(), "execution.expiration"); err != nil {
		return err
	}
	return checkTimes(r.StartTime(), r.Expiration())
}

// encodeNodelist returns the compressed hostlist of r's hostnames, or nil
// when no rank has one. A hostlist only some ranks are named in cannot be
// written, since a nodelist maps every rank by position.
func (r *R) encodeNodelist() (*string, error) {
	ns := r.nodeList()
	hosts := make([]string, 0, len(ns))
	missing := -1
	for i, n := range ns {
		if n.host == "" {
			if missing < 0 {
				missing = i
			}
			continue
		}
		hosts = append(hosts, n.host)
	}
	switch {
	case len(ns) == 0:
		empty := ""
		return &empty, nil
	case len(hosts) == 0:
		return nil, nil
	case missing >= 0:
		return nil, fmt.Errorf("nodelist: rank %d has no hostname while others do", ns[missing].rank)
	}
	hl := hostlist.New(hosts...)
	// New drops names that are not host names, so a short list means one
	// was dropped: find it for the message.
	if hl.Count() != len(hosts) {
		for i, h := range hosts {
			if one, err := hostlist.Parse(h); err != nil || one.Count() != 1 {
				return nil, fmt.Errorf("nodelist: rank %d: invalid hostname %q", ns[i].rank, h)
			}
		}
	}
	s := hl.String()
	if back, err := hostlist.Parse(s); err != nil || !back.Equal(hl) || hl.Count() != len(hosts) {
		return nil, fmt.Errorf("nodelist: hostnames do not encode as a hostlist: %q", s)
	}
	return &s, nil
}

// String returns r in flux-core's rlist_dumps form, such as
// "rank[0-1]/core[0-3],gpu0 rank2/core[0-1]"; "" when empty. Memory is
// left out, as rlist_dumps knows none: it is the sched annotation's
// resource_summary, which Flux's tools read. A rank holding memory alone
// shows as "rank0/".
func (r *R) String() string {
	if kids, ok := r.sharedKids(); ok {
		// Every rank holds the same children (a grant of like nodes,
		// whose views share them: New): one group, whose ranks are r's.
		var b strings.Builder
		b.Grow(32)
		b.WriteString("rank")
		r.ranks.WriteBracketed(&b)
		b.WriteByte('/')
		writeKids(&b, kids)
		return b.String()
	}
	return r.groupsString()
}

// groupsString is String for any R: its ranks grouped by their children.
func (r *R) groupsString() string {
	var b strings.Builder
	gs := r.groups(false)
	b.Grow(32 * len(gs))
	for i, g := range gs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("rank")
		// A group's ranks are ascending and merged, as a set's are.
		idset.WriteRangesBracketed(&b, g.ranks)
		b.WriteByte('/')
		writeKids(&b, g.kids)
	}
	return b.String()
}

// sharedKids returns the children every node of r holds, when they are
// one slice shared by all (not merely equal: that is groups' to find).
func (r *R) sharedKids() ([]child, bool) {
	ns := r.nodeList()
	if len(ns) == 0 || len(ns[0].kids) == 0 {
		return nil, false
	}
	first := ns[0].kids
	for _, n := range ns[1:] {
		if len(n.kids) != len(first) || &n.kids[0] != &first[0] {
			return nil, false
		}
	}
	return first, true
}

// writeKids writes a group's children as String does: flux-core lists
// core first, then the others by name.
func writeKids(b *strings.Builder, kids []child) {
	first := true
	for pass := range 2 {
		for _, k := range kids {
			if (k.name == CoreKey) != (pass == 0) {
				continue
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			b.WriteString(k.name)
			k.ids.WriteBracketed(b)
		}
	}
}

// writeString writes s as a JSON string, quickly for the plain ASCII that
// idsets and most names are.
func writeString(b *bytes.Buffer, s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			enc, _ := json.Marshal(s) // a string always marshals
			b.Write(enc)
			return
		}
	}
	b.WriteByte('"')
	b.WriteString(s)
	b.WriteByte('"')
}

// writeFloat writes f as encoding/json does; check has refused NaN and
// infinities.
func writeFloat(b *bytes.Buffer, f float64) {
	enc, err := json.Marshal(f)
	if err != nil {
		enc = []byte("0")
	}
	b.Write(enc)
}
