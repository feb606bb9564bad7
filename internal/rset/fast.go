package rset

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/fluxq/fluxq/internal/hostlist"
	"github.com/fluxq/fluxq/internal/idset"
)

// Every job's R is parsed twice (fluxsched stores it, the exec agent runs
// it), and parseFull, which decodes each level into a map of raw values and
// then each value again, costs about a hundred allocations for a one-rank
// R. parseFast reads the shape MarshalJSON writes, in any key order, in one
// pass straight into typed values, and declines (ok false) on anything
// else: an unknown or repeated key (parseFull ignores the one and keeps the
// last of the other), a scheduling key, a value of another type or null, a
// string with an escape or a non-ASCII byte (encoding/json decodes or
// replaces those), and every value parseFull would refuse. Parse then runs
// parseFull, so every error and every special case stays parseFull's; what
// parseFast accepts it builds with parseFull's own helpers, so the R is
// the same (TestParseFastSameAsFull, FuzzParseFast).
func parseFast(data []byte) (*R, bool) {
	p := scanner{s: string(data)}
	f := fastR{p: &p}
	var seen uint
	p.object(func(key string) {
		switch key {
		case "version":
			p.once(&seen, 1)
			if p.number() != "1" {
				p.bad = true
			}
		case "execution":
			p.once(&seen, 2)
			f.execution()
		default:
			p.bad = true
		}
	})
	p.space()
	if p.bad || p.i != len(p.s) || seen != 3 {
		return nil, false
	}
	return f.build()
}

// fastR holds what parseFast has read so far.
type fastR struct {
	p           *scanner
	es          entries
	kids        []pair // scratch for one R_lite entry's children
	hosts       hostlist.Hostlist
	hasNodelist bool
	props       []pair
	start, exp  float64
	nslots      int
}

type pair struct{ key, val string }

func (f *fastR) execution() {
	p := f.p
	var seen uint
	p.object(func(key string) {
		switch key {
		case "R_lite":
			p.once(&seen, 1)
			p.array(f.entry)
		case "nodelist":
			p.once(&seen, 2)
			f.hasNodelist = true
			p.array(func() {
				h, err := hostlist.Parse(p.str())
				if err != nil {
					p.bad = true
				}
				f.hosts = f.hosts.Append(h)
			})
		case "properties":
			p.once(&seen, 4)
			p.object(func(name string) { f.props = append(f.props, pair{name, p.str()}) })
		case "starttime":
			p.once(&seen, 8)
			f.start = p.time()
		case "expiration":
			p.once(&seen, 16)
			f.exp = p.time()
		case "nslots":
			p.once(&seen, 32)
			lit := p.number()
			n, err := strconv.ParseInt(lit, 10, 64)
			// A real (kindOf) or an out of range count is parseFull's to refuse.
			if err != nil || strings.ContainsAny(lit, ".eE") || n < 0 || n > math.MaxInt32 {
				p.bad = true
			}
			f.nslots = int(n)
		default:
			p.bad = true
		}
	})
	if seen&1 == 0 {
		p.bad = true // no R_lite
	}
}

// entry reads one R_lite element and adds it to f.es.
func (f *fastR) entry() {
	p := f.p
	var rank string
	var seen uint
	var mem uint64
	kids := f.kids[:0]
	p.object(func(key string) {
		switch key {
		case "rank":
			p.once(&seen, 1)
			rank = p.str()
		case "children":
			p.once(&seen, 2)
			p.object(func(name string) { kids = append(kids, pair{name, p.str()}) })
		case "memory":
			p.once(&seen, 4)
			n, err := memoryValue(p.number())
			if err != nil {
				p.bad = true // a real, a negative or too large: parseFull's to refuse
			}
			mem = n
		default: // such as "slots", which parseFull ignores
			p.bad = true
		}
	})
	f.kids = kids
	if p.bad || seen&3 != 3 {
		p.bad = true
		return
	}
	ranks, err := idset.Parse(rank)
	if err != nil {
		p.bad = true
		return
	}
	en := entry{ranks: ranks, kids: make([]child, 0, len(kids)), mem: mem}
	slices.SortFunc(kids, func(a, b pair) int { return strings.Compare(a.key, b.key) })
	for i, k := range kids {
		if k.key == "" || i > 0 && kids[i-1].key == k.key {
			p.bad = true
			return
		}
		ids, err := idset.Parse(k.val)
		if err != nil {
			p.bad = true
			return
		}
		if !ids.IsEmpty() {
			en.kids = append(en.kids, child{childName(k.key), ids})
			en.ranges += ids.RangeCount()
		}
	}
	if f.es.add(en) != nil {
		p.bad = true
	}
}

// childName returns name without holding on to the document it is a
// substring of.
func childName(name string) string {
	switch name {
	case CoreKey:
		return CoreKey
	case GPUKey:
		return GPUKey
	}
	return strings.Clone(name)
}

// build finishes the R as parseFull would, declining where it would fail.
func (f *fastR) build() (*R, bool) {
	nodes, err := f.es.nodes()
	if err != nil {
		return nil, false
	}
	r := &R{nodes: nodes, ranks: ranksOf(nodes), start: f.start, expiration: f.exp, nslots: f.nslots}
	if f.hasNodelist && assignHosts(f.hosts, nodes) != nil {
		return nil, false
	}
	if len(f.props) > 0 {
		slices.SortFunc(f.props, func(a, b pair) int { return strings.Compare(a.key, b.key) })
		names := make([]string, len(f.props))
		sets := make([]idset.Set, len(f.props))
		for i, pr := range f.props {
			if checkPropertyName(pr.key) != nil || i > 0 && f.props[i-1].key == pr.key {
				return nil, false
			}
			if sets[i], err = idset.Parse(pr.val); err != nil {
				return nil, false
			}
			names[i] = strings.Clone(pr.key) // a map key: keep no substring of the document
		}
		if r.props, err = propsOf(names, sets, r.ranks); err != nil {
			return nil, false
		}
	}
	if checkTimes(r.start, r.expiration) != nil {
		return nil, false
	}
	return r, true
}

// scanner reads JSON from s. Once bad is set every read fails, so the
// callers check it once at the end.
type scanner struct {
	s   string
	i   int
	bad bool
}

func (p *scanner) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// next consumes c, after any space, if it comes next.
func (p *scanner) next(c byte) bool {
	p.space()
	if !p.bad && p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *scanner) want(c byte) {
	if !p.next(c) {
		p.bad = true
	}
}

// once fails when bit is already in *seen: a repeated key.
func (p *scanner) once(seen *uint, bit uint) {
	if *seen&bit != 0 {
		p.bad = true
	}
	*seen |= bit
}

// object reads an object; member reads the value of each key.
func (p *scanner) object(member func(key string)) {
	p.want('{')
	if p.next('}') {
		return
	}
	for !p.bad {
		key := p.str()
		p.want(':')
		member(key)
		if !p.next(',') {
			p.want('}')
			return
		}
	}
}

// array reads an array; elem reads each element.
func (p *scanner) array(elem func()) {
	p.want('[')
	if p.next(']') {
		return
	}
	for !p.bad {
		elem()
		if !p.next(',') {
			p.want(']')
			return
		}
	}
}

// str reads a string of ASCII without escapes, which reads the same
// whoever decodes it; it is a substring of s.
func (p *scanner) str() string {
	p.want('"')
	for start := p.i; !p.bad && p.i < len(p.s); p.i++ {
		switch c := p.s[p.i]; {
		case c == '"':
			p.i++
			return p.s[start : p.i-1]
		case c < 0x20 || c == '\\' || c >= 0x80:
			p.bad = true
		}
	}
	p.bad = true
	return ""
}

// skip consumes c if it comes next.
func (p *scanner) skip(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *scanner) digits() int {
	n := 0
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
		n++
	}
	return n
}

// number reads a JSON number and returns its text.
func (p *scanner) number() string {
	p.space()
	start := p.i
	p.skip('-')
	if !p.skip('0') && p.digits() == 0 {
		p.bad = true
	}
	if p.skip('.') && p.digits() == 0 {
		p.bad = true
	}
	if p.skip('e') || p.skip('E') {
		_ = p.skip('+') || p.skip('-')
		if p.digits() == 0 {
			p.bad = true
		}
	}
	if p.bad {
		return ""
	}
	return p.s[start:p.i]
}

// time reads starttime or expiration as parseTime does.
func (p *scanner) time() float64 {
	t, err := strconv.ParseFloat(p.number(), 64)
	if err != nil || checkTime(t, "") != nil {
		p.bad = true
		return 0
	}
	return t + 0 // -0 reads as 0, so it is written as 0
}
