package planner

import (
	"fmt"
	"math"
	"slices"
)

// refPlanner is the naive reference: a list of spans, every answer computed
// from scratch.
type refPlanner struct {
	total []int64
	spans map[SpanID]refSpan
}

type refSpan struct {
	start, end float64
	amount     []int64
}

func newRef(total []int64) *refPlanner {
	return &refPlanner{total: slices.Clone(total), spans: map[SpanID]refSpan{}}
}

func (r *refPlanner) freeAt(t float64) []int64 {
	out := slices.Clone(r.total)
	for _, s := range r.spans {
		if s.start <= t && t < s.end {
			for k, a := range s.amount {
				out[k] -= a
			}
		}
	}
	return out
}

// freeDuring takes the minimum of freeAt at start and at every span start or
// end inside (start, end): the only places the free amount can change.
func (r *refPlanner) freeDuring(start, end float64) []int64 {
	out := r.freeAt(start)
	if start == end {
		return out
	}
	for _, s := range r.spans {
		for _, x := range []float64{s.start, s.end} {
			if start < x && x < end {
				for k, v := range r.freeAt(x) {
					out[k] = min(out[k], v)
				}
			}
		}
	}
	return out
}

func covers(free, amount []int64) bool {
	for k, a := range amount {
		if free[k] < a {
			return false
		}
	}
	return true
}

// earliestFit tries at and every finite span start and end after it, a
// superset of the candidates the planner relies on (at and span ends), so
// it also checks that claim.
func (r *refPlanner) earliestFit(at, dur float64, amount []int64) (float64, bool) {
	cands := []float64{at}
	for _, s := range r.spans {
		for _, x := range []float64{s.start, s.end} {
			if x > at && !math.IsInf(x, 1) {
				cands = append(cands, x)
			}
		}
	}
	slices.Sort(cands)
	for _, t := range cands {
		if covers(r.freeDuring(t, t+dur), amount) {
			return t, true
		}
	}
	return 0, false
}

// verify checks the tree against its own span table: search order, heap
// order, subtree aggregates, reference counts, and every point's free
// amounts recomputed from the spans.
func (p *Planner) verify() error {
	refs := map[float64]int64{}
	live := 0
	for slot, s := range p.spans {
		if slot == 0 || !s.live {
			continue
		}
		live++
		if s.start < s.end {
			refs[s.start]++
			refs[s.end]++
		}
	}
	if live != p.live {
		return fmt.Errorf("live spans %d, Len %d", live, p.live)
	}
	if len(refs) != p.points {
		return fmt.Errorf("distinct points %d, Points %d", len(refs), p.points)
	}
	d := p.dims
	var keys []float64
	var walk func(n int32, acc []int64, parentPrio uint32) (mn, mx []int64, err error)
	walk = func(n int32, acc []int64, parentPrio uint32) ([]int64, []int64, error) {
		if n == 0 {
			return nil, nil, nil
		}
		nd := p.nodes[n]
		if nd.prio > parentPrio {
			return nil, nil, fmt.Errorf("point %g: heap order broken", nd.key)
		}
		o := p.off(n)
		own := make([]int64, d)
		lz := make([]int64, d)
		for k := range d {
			own[k] = p.vec[o+k] + acc[k]
			lz[k] = acc[k] + p.vec[o+3*d+k]
		}
		lmn, lmx, err := walk(nd.left, lz, nd.prio)
		if err != nil {
			return nil, nil, err
		}
		keys = append(keys, nd.key)
		if nd.refs != refs[nd.key] {
			return nil, nil, fmt.Errorf("point %g: refs %d, want %d", nd.key, nd.refs, refs[nd.key])
		}
		want := slices.Clone(p.total)
		for slot, s := range p.spans {
			if slot != 0 && s.live && s.start <= nd.key && nd.key < s.end {
				for k := range d {
					want[k] -= p.amounts[slot*d+k]
				}
			}
		}
		if !slices.Equal(own, want) {
			return nil, nil, fmt.Errorf("point %g: free %v, want %v", nd.key, own, want)
		}
		rmn, rmx, err := walk(nd.right, lz, nd.prio)
		if err != nil {
			return nil, nil, err
		}
		mn, mx := slices.Clone(own), slices.Clone(own)
		for k := range d {
			if lmn != nil {
				mn[k], mx[k] = min(mn[k], lmn[k]), max(mx[k], lmx[k])
			}
			if rmn != nil {
				mn[k], mx[k] = min(mn[k], rmn[k]), max(mx[k], rmx[k])
			}
			if p.vec[o+d+k]+acc[k] != mn[k] || p.vec[o+2*d+k]+acc[k] != mx[k] {
				return nil, nil, fmt.Errorf("point %g: stale aggregates", nd.key)
			}
		}
		return mn, mx, nil
	}
	if _, _, err := walk(p.root, make([]int64, d), math.MaxUint32); err != nil {
		return err
	}
	if !slices.IsSorted(keys) || len(slices.Compact(slices.Clone(keys))) != len(keys) {
		return fmt.Errorf("points out of order: %v", keys)
	}
	return nil
}

// source yields the bytes that drive a random session.
type source interface{ next() byte }

type byteSource struct {
	b []byte
	i int
}

func (s *byteSource) next() byte {
	if s.i >= len(s.b) {
		return 0
	}
	s.i++
	return s.b[s.i-1]
}

func (s *byteSource) done() bool { return s.i >= len(s.b) }

// session runs a planner and the reference side by side.
type session struct {
	p       *Planner
	r       *refPlanner
	ids     []SpanID
	removed []SpanID
	src     source
}

func newSession(src source) *session {
	dims := 1 + int(src.next()%3)
	total := make([]int64, dims)
	for k := range total {
		total[k] = int64(src.next() % 8)
	}
	p, err := New(total)
	if err != nil {
		panic(err) // totals are valid by construction
	}
	return &session{p: p, r: newRef(total), src: src}
}

// time gives small integral times, some halves, and a few negative ones.
func (s *session) time() float64 {
	b := s.src.next()
	switch {
	case b >= 240:
		return -float64(b % 3)
	case b >= 200:
		return float64(b%40) + 0.5
	default:
		return float64(b % 40)
	}
}

// dur gives durations, including 0 and +Inf.
func (s *session) dur() float64 {
	b := s.src.next()
	switch {
	case b >= 250:
		return math.Inf(1)
	case b >= 240:
		return 0
	default:
		return float64(b % 20)
	}
}

func (s *session) amount() []int64 {
	a := make([]int64, s.p.dims)
	for k := range a {
		a[k] = int64(s.src.next()) % (s.p.total[k] + 2)
	}
	return a
}

// step runs one operation and compares both sides.
func (s *session) step() error {
	switch op := s.src.next() % 8; op {
	case 0, 1, 2, 3:
		start := s.time()
		end := start + s.dur()
		amt := s.amount()
		unchecked := op == 3
		var id SpanID
		var err error
		if unchecked {
			id, err = s.p.AddUnchecked(start, end, amt)
		} else {
			id, err = s.p.Add(start, end, amt)
		}
		fits := start == end || covers(s.r.freeDuring(start, end), amt)
		if ok := unchecked || fits; ok != (err == nil) {
			return fmt.Errorf("add [%g, %g) %v unchecked=%v: err %v, reference fits %v", start, end, amt, unchecked, err, fits)
		}
		if err == nil {
			if _, dup := s.r.spans[id]; dup || id == 0 {
				return fmt.Errorf("add: id %d reused while live", id)
			}
			s.r.spans[id] = refSpan{start, end, amt}
			s.ids = append(s.ids, id)
		}
	case 4, 5:
		b := s.src.next()
		if len(s.ids) == 0 || b >= 240 {
			bogus := SpanID(b)
			if len(s.removed) > 0 {
				bogus = s.removed[int(b)%len(s.removed)]
			}
			if _, live := s.r.spans[bogus]; !live {
				if err := s.p.Remove(bogus); err == nil {
					return fmt.Errorf("remove of unknown id %d succeeded", bogus)
				}
			}
			break
		}
		i := int(b) % len(s.ids)
		id := s.ids[i]
		want := s.r.spans[id]
		start, end, amt, ok := s.p.Span(id)
		if !ok || start != want.start || end != want.end || !slices.Equal(amt, want.amount) {
			return fmt.Errorf("span %d: got [%g, %g) %v %v, want [%g, %g) %v", id, start, end, amt, ok, want.start, want.end, want.amount)
		}
		if err := s.p.Remove(id); err != nil {
			return fmt.Errorf("remove %d: %v", id, err)
		}
		delete(s.r.spans, id)
		s.ids = slices.Delete(s.ids, i, i+1)
		s.removed = append(s.removed, id)
	default:
		t, dur := s.time(), s.dur()
		if got, want := s.p.FreeAt(t), s.r.freeAt(t); !slices.Equal(got, want) {
			return fmt.Errorf("FreeAt(%g) = %v, want %v", t, got, want)
		}
		if got, want := s.p.FreeDuring(t, t+dur), s.r.freeDuring(t, t+dur); !slices.Equal(got, want) {
			return fmt.Errorf("FreeDuring(%g, %g) = %v, want %v", t, t+dur, got, want)
		}
		amt := s.amount()
		gt, gok := s.p.EarliestFit(t, dur, amt)
		wt, wok := s.r.earliestFit(t, dur, amt)
		if gok != wok || gt != wt {
			return fmt.Errorf("EarliestFit(%g, %g, %v) = %g, %v; want %g, %v", t, dur, amt, gt, gok, wt, wok)
		}
	}
	if s.p.Len() != len(s.r.spans) {
		return fmt.Errorf("Len = %d, want %d", s.p.Len(), len(s.r.spans))
	}
	return nil
}
