// Package planner tracks how much of each resource kind is free over time,
// so that backfill policies can ask "when could this job start?".
//
// It follows the idea of Fluxion's planner (flux-sched resource/planner):
// a planner holds spans, each taking an amount of every resource kind over a
// half-open interval [start, end), and answers availability questions about
// the resulting profile. The profile is kept as an augmented treap over the
// distinct time points (span starts and ends, reference counted). Each point
// carries the free amounts from it to the next point; a subtree carries the
// minimum and maximum of those per kind and a pending (lazy) addition for its
// children. Adding a span is a range addition over the points in
// [start, end), so every operation is logarithmic in the number of distinct
// time points, not in the number of spans.
//
// Times are float64 seconds and are only ever compared, never rebuilt by
// arithmetic, so integral times stay exact. A Planner is not safe for
// concurrent use: even queries push pending additions down the tree.
package planner

import (
	"fmt"
	"math"
	"slices"
)

// SpanID names a span held by a planner; the zero SpanID is never issued.
type SpanID uint64

// node is one distinct time point of the profile.
type node struct {
	key         float64
	refs        int64 // span starts and ends at key; the point goes at zero
	left, right int32
	prio        uint32
}

// span is one slot of the span table; its amounts live in Planner.amounts.
type span struct {
	start, end float64
	gen        uint32 // bumped on removal, so a stale SpanID is refused
	live       bool
}

// Limits that keep indexes in range; far beyond any real machine.
const (
	maxNodes = math.MaxInt32 - 1
	maxSpans = math.MaxUint32 - 1
)

// Planner holds spans over a fixed set of resource kinds and answers when
// and how much of each kind is free.
type Planner struct {
	dims  int
	total []int64

	// Tree nodes; index 0 is the nil sentinel. Per node, vec holds 4*dims
	// values: free over [key, next key), then subtree min, subtree max, and
	// the addition still owed to both children. Flat arrays instead of four
	// small slices per point keep the tree free of per-point allocations.
	nodes     []node
	vec       []int64
	freeNodes []int32
	root      int32
	points    int

	// Span table; slot 0 is unused so that SpanID 0 is never valid. A SpanID
	// is gen<<32 | slot, so no map is needed to find a span.
	spans     []span
	amounts   []int64
	freeSpans []uint32
	live      int

	rng uint64

	// Scratch vectors, so that the hot paths do not allocate.
	buf, delta []int64
}

// New returns an empty planner with the given total capacity per resource
// kind; there must be at least one kind and no capacity may be negative.
func New(total []int64) (*Planner, error) {
	if len(total) == 0 {
		return nil, fmt.Errorf("planner: no resource kinds given")
	}
	for k, v := range total {
		if v < 0 {
			return nil, fmt.Errorf("planner: total of kind %d is %d, must be >= 0", k, v)
		}
	}
	d := len(total)
	p := &Planner{
		dims:  d,
		total: append([]int64(nil), total...),
		nodes: make([]node, 1),
		vec:   make([]int64, 4*d),
		spans: make([]span, 1),
		// Slot 0 of amounts mirrors the unused span slot 0.
		amounts: make([]int64, d),
		rng:     0x9e3779b97f4a7c15,
		buf:     make([]int64, d),
		delta:   make([]int64, d),
	}
	// The sentinel's min and max must never win a comparison in pull.
	for k := range d {
		p.vec[d+k] = math.MaxInt64
		p.vec[2*d+k] = math.MinInt64
	}
	return p, nil
}

// Total returns a copy of the capacity per resource kind.
func (p *Planner) Total() []int64 { return append([]int64(nil), p.total...) }

// Dims returns the number of resource kinds.
func (p *Planner) Dims() int { return p.dims }

// Len returns the number of spans held.
func (p *Planner) Len() int { return p.live }

// Points returns the number of distinct time points in the profile.
func (p *Planner) Points() int { return p.points }

// Add records a span taking amount of each kind over [start, end), unless
// that would make the free amount of some kind negative at some time; on any
// error nothing changes. end may be +Inf; start == end is accepted and
// covers nothing.
func (p *Planner) Add(start, end float64, amount []int64) (SpanID, error) {
	return p.add(start, end, amount, true)
}

// AddUnchecked records a span like Add but allows overcommit (free may go
// negative), so that a scheduler can record running jobs as they are.
func (p *Planner) AddUnchecked(start, end float64, amount []int64) (SpanID, error) {
	return p.add(start, end, amount, false)
}

func (p *Planner) add(start, end float64, amount []int64, checked bool) (SpanID, error) {
	switch {
	case math.IsNaN(start) || math.IsNaN(end):
		return 0, fmt.Errorf("planner: span [%g, %g): time is NaN", start, end)
	case math.IsInf(start, 0):
		return 0, fmt.Errorf("planner: span [%g, %g): start must be finite", start, end)
	case end < start:
		return 0, fmt.Errorf("planner: span [%g, %g): end before start", start, end)
	}
	if err := p.checkAmount(amount); err != nil {
		return 0, fmt.Errorf("planner: span [%g, %g): %w", start, end, err)
	}
	if start < end {
		minFree := p.buf
		p.minDuring(start, end, minFree)
		for k, a := range amount {
			if checked && minFree[k] < a {
				return 0, fmt.Errorf("planner: span [%g, %g): kind %d needs %d but only %d is free", start, end, k, a, minFree[k])
			}
			if minFree[k] < math.MinInt64+a {
				return 0, fmt.Errorf("planner: span [%g, %g): free amount of kind %d would overflow", start, end, k)
			}
		}
		if len(p.nodes)+2 > maxNodes && len(p.freeNodes) < 2 {
			return 0, fmt.Errorf("planner: span [%g, %g): too many time points", start, end)
		}
	}
	if len(p.freeSpans) == 0 && len(p.spans) > maxSpans {
		return 0, fmt.Errorf("planner: span [%g, %g): too many spans", start, end)
	}

	var slot uint32
	if n := len(p.freeSpans); n > 0 {
		slot = p.freeSpans[n-1]
		p.freeSpans = p.freeSpans[:n-1]
	} else {
		slot = uint32(len(p.spans))
		p.spans = append(p.spans, span{})
		p.amounts = append(p.amounts, make([]int64, p.dims)...)
	}
	s := &p.spans[slot]
	s.start, s.end, s.live = start, end, true
	copy(p.amounts[int(slot)*p.dims:], amount)
	p.live++

	if start < end {
		p.acquire(start)
		p.acquire(end)
		for k, a := range amount {
			p.delta[k] = -a
		}
		p.addRange(p.root, start, end, p.delta, false, false)
	}
	return SpanID(uint64(s.gen)<<32 | uint64(slot)), nil
}

func (p *Planner) checkAmount(amount []int64) error {
	if len(amount) != p.dims {
		return fmt.Errorf("amount has %d kinds, planner has %d", len(amount), p.dims)
	}
	for k, a := range amount {
		if a < 0 {
			return fmt.Errorf("amount of kind %d is %d, must be >= 0", k, a)
		}
	}
	return nil
}

// lookup returns the live span slot named by id, or false.
func (p *Planner) lookup(id SpanID) (uint32, bool) {
	slot := uint32(id)
	if slot == 0 || int(slot) >= len(p.spans) {
		return 0, false
	}
	s := p.spans[slot]
	if !s.live || s.gen != uint32(id>>32) {
		return 0, false
	}
	return slot, true
}

// Remove drops a span, giving its amounts back; an unknown id is an error
// and changes nothing.
func (p *Planner) Remove(id SpanID) error {
	slot, ok := p.lookup(id)
	if !ok {
		return fmt.Errorf("planner: remove: no span with id %d", id)
	}
	s := &p.spans[slot]
	start, end := s.start, s.end
	s.live = false
	s.gen++
	p.freeSpans = append(p.freeSpans, slot)
	p.live--
	if start < end {
		amt := p.amounts[int(slot)*p.dims : int(slot+1)*p.dims]
		p.addRange(p.root, start, end, amt, false, false)
		// Only now may the points go: with the amounts given back, each
		// point that loses its last reference carries the same free amounts
		// as the point before it, so dropping it loses nothing.
		p.release(start)
		p.release(end)
	}
	return nil
}

// Span returns the interval and a copy of the amounts of a span, or ok false
// if id names no span.
func (p *Planner) Span(id SpanID) (start, end float64, amount []int64, ok bool) {
	slot, ok := p.lookup(id)
	if !ok {
		return 0, 0, nil, false
	}
	s := p.spans[slot]
	amount = append([]int64(nil), p.amounts[int(slot)*p.dims:int(slot+1)*p.dims]...)
	return s.start, s.end, amount, true
}

// FreeAt returns the free amount of each kind at instant t (nil if t is NaN).
func (p *Planner) FreeAt(t float64) []int64 {
	if math.IsNaN(t) {
		return nil
	}
	out := make([]int64, p.dims)
	p.freeAt(t, out)
	return out
}

// FreeDuring returns the minimum free amount of each kind over
// [start, end), or FreeAt(start) when start == end; nil if a bound is NaN
// or end < start.
func (p *Planner) FreeDuring(start, end float64) []int64 {
	return p.AppendFreeDuring(nil, start, end)
}

// AppendFreeDuring appends FreeDuring(start, end) to dst and returns the
// extended slice (dst unchanged if a bound is NaN or end < start): a
// caller asking for every job it looks at reuses one buffer instead of
// allocating an answer each time.
func (p *Planner) AppendFreeDuring(dst []int64, start, end float64) []int64 {
	if math.IsNaN(start) || math.IsNaN(end) || end < start {
		return dst
	}
	if dst == nil {
		dst = make([]int64, 0, p.dims)
	}
	dst = slices.Grow(dst, p.dims)
	out := dst[len(dst) : len(dst)+p.dims]
	dst = dst[:len(dst)+p.dims]
	if start == end {
		p.freeAt(start, out)
	} else {
		p.minDuring(start, end, out)
	}
	return dst
}

// EarliestFit returns the earliest t >= at such that FreeDuring(t, t+dur)
// covers amount in every kind, or false if there is none: amount exceeds
// the total, or some span that never ends keeps it from ever fitting. dur
// may be 0 or +Inf. Invalid arguments (at not finite, dur NaN or negative,
// wrong number of kinds, a negative amount) also give false.
//
// The answer is at or the end of some span, since free amounts only grow at
// span ends, so it is exact. Each round checks the window [t, t+dur); if a
// point in it lacks room, t jumps to the first point with room after the
// last such point. A round is O(log n) in the number of distinct points for
// one kind (with several kinds, finding a point with room in all of them at
// once may have to backtrack). Every round steps over a whole run of
// consecutive points without room, so the worst case is O((r+1) log n) for
// r such runs after at, at most O(n log n).
func (p *Planner) EarliestFit(at, dur float64, amount []int64) (float64, bool) {
	if math.IsNaN(at) || math.IsInf(at, 0) || math.IsNaN(dur) || dur < 0 || p.checkAmount(amount) != nil {
		return 0, false
	}
	for k, a := range amount {
		if a > p.total[k] {
			return 0, false
		}
	}
	t := at
	for {
		end := t + dur
		pr := p.pred(t)
		var fail int32
		if end == t {
			if pr != 0 && !p.fits(pr, amount) {
				fail = pr
			}
		} else {
			lo := t
			if pr != 0 {
				lo = p.nodes[pr].key
			}
			fail = p.lastFail(p.root, lo, end, amount, false, false)
		}
		if fail == 0 {
			return t, true
		}
		next := p.firstFit(p.root, p.nodes[fail].key, amount, false)
		// The last point always has the whole capacity free, so next is 0
		// only if something is badly wrong; +Inf means a span never ends.
		if next == 0 || math.IsInf(p.nodes[next].key, 1) {
			return 0, false
		}
		t = p.nodes[next].key
	}
}

// freeAt writes the free amounts at instant t into out.
func (p *Planner) freeAt(t float64, out []int64) {
	if n := p.pred(t); n != 0 {
		copy(out, p.val(n))
		return
	}
	copy(out, p.total)
}

// minDuring writes the minimum free amounts over [start, end), start < end,
// into out. The segment holding start begins at the last point <= start.
func (p *Planner) minDuring(start, end float64, out []int64) {
	copy(out, p.total) // every point has at most the total free
	lo := start
	if n := p.pred(start); n != 0 {
		lo = p.nodes[n].key
	}
	p.minIn(p.root, lo, end, false, false, out)
}

// Tree layout helpers.

func (p *Planner) off(n int32) int { return int(n) * 4 * p.dims }

func (p *Planner) val(n int32) []int64 {
	o := p.off(n)
	return p.vec[o : o+p.dims]
}

func (p *Planner) fits(n int32, amount []int64) bool {
	o := p.off(n)
	for k, a := range amount {
		if p.vec[o+k] < a {
			return false
		}
	}
	return true
}

// apply adds delta to every point of n's subtree. Sums may wrap around in
// lazy slots after heavy overcommit; two's complement makes the final
// values right anyway, and only final values are ever compared.
func (p *Planner) apply(n int32, delta []int64) {
	d := p.dims
	v := p.vec[p.off(n) : p.off(n)+4*d]
	for k, x := range delta {
		v[k] += x
		v[d+k] += x
		v[2*d+k] += x
		v[3*d+k] += x
	}
}

// push hands n's pending addition to its children, so that their stored
// values become exact.
func (p *Planner) push(n int32) {
	d := p.dims
	o := p.off(n) + 3*d
	lz := p.vec[o : o+d]
	zero := true
	for _, x := range lz {
		if x != 0 {
			zero = false
			break
		}
	}
	if zero {
		return
	}
	if l := p.nodes[n].left; l != 0 {
		p.apply(l, lz)
	}
	if r := p.nodes[n].right; r != 0 {
		p.apply(r, lz)
	}
	clear(lz)
}

// pull recomputes n's subtree min and max from its value and children.
func (p *Planner) pull(n int32) {
	d := p.dims
	o, lo, ro := p.off(n), p.off(p.nodes[n].left), p.off(p.nodes[n].right)
	v := p.vec
	for k := range d {
		mn, mx := v[o+k], v[o+k]
		mn = min(mn, v[lo+d+k], v[ro+d+k])
		mx = max(mx, v[lo+2*d+k], v[ro+2*d+k])
		v[o+d+k] = mn
		v[o+2*d+k] = mx
	}
}

func (p *Planner) nextPrio() uint32 {
	// splitmix64: deterministic, so a planner behaves the same every run.
	p.rng += 0x9e3779b97f4a7c15
	z := p.rng
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return uint32((z ^ z>>31) >> 32)
}

func (p *Planner) newNode(key float64, free []int64) int32 {
	var n int32
	if k := len(p.freeNodes); k > 0 {
		n = p.freeNodes[k-1]
		p.freeNodes = p.freeNodes[:k-1]
	} else {
		n = int32(len(p.nodes))
		p.nodes = append(p.nodes, node{})
		p.vec = append(p.vec, make([]int64, 4*p.dims)...)
	}
	p.nodes[n] = node{key: key, refs: 1, prio: p.nextPrio()}
	d := p.dims
	o := p.off(n)
	copy(p.vec[o:o+d], free)
	copy(p.vec[o+d:o+2*d], free)
	copy(p.vec[o+2*d:o+3*d], free)
	clear(p.vec[o+3*d : o+4*d])
	p.points++
	return n
}

// find returns the point at key, or 0; keys do not depend on pending
// additions, so it need not push.
func (p *Planner) find(key float64) int32 {
	n := p.root
	for n != 0 {
		switch k := p.nodes[n].key; {
		case key < k:
			n = p.nodes[n].left
		case key > k:
			n = p.nodes[n].right
		default:
			return n
		}
	}
	return 0
}

// pred returns the last point with key <= t, or 0, pushing along the way so
// that its stored value is exact.
func (p *Planner) pred(t float64) int32 {
	best := int32(0)
	n := p.root
	for n != 0 {
		p.push(n)
		if p.nodes[n].key <= t {
			best = n
			n = p.nodes[n].right
		} else {
			n = p.nodes[n].left
		}
	}
	return best
}

// acquire adds a reference to the point at key, creating it with the free
// amounts already in force there.
func (p *Planner) acquire(key float64) {
	if n := p.find(key); n != 0 {
		p.nodes[n].refs++
		return
	}
	p.freeAt(key, p.buf)
	x := p.newNode(key, p.buf)
	p.root = p.insert(p.root, x)
}

// release drops a reference to the point at key, and the point with it.
func (p *Planner) release(key float64) {
	n := p.find(key)
	if n == 0 {
		return
	}
	p.nodes[n].refs--
	if p.nodes[n].refs <= 0 {
		p.root = p.erase(p.root, key)
	}
}

func (p *Planner) insert(n, x int32) int32 {
	if n == 0 {
		return x
	}
	if p.nodes[x].prio > p.nodes[n].prio {
		l, r := p.split(n, p.nodes[x].key)
		p.nodes[x].left, p.nodes[x].right = l, r
		p.pull(x)
		return x
	}
	p.push(n)
	if p.nodes[x].key < p.nodes[n].key {
		c := p.insert(p.nodes[n].left, x)
		p.nodes[n].left = c
	} else {
		c := p.insert(p.nodes[n].right, x)
		p.nodes[n].right = c
	}
	p.pull(n)
	return n
}

// split cuts n's subtree into keys < key and keys >= key.
func (p *Planner) split(n int32, key float64) (int32, int32) {
	if n == 0 {
		return 0, 0
	}
	p.push(n)
	if p.nodes[n].key < key {
		l, r := p.split(p.nodes[n].right, key)
		p.nodes[n].right = l
		p.pull(n)
		return n, r
	}
	l, r := p.split(p.nodes[n].left, key)
	p.nodes[n].left = r
	p.pull(n)
	return l, n
}

// merge joins two subtrees where every key of a is below every key of b.
func (p *Planner) merge(a, b int32) int32 {
	if a == 0 {
		return b
	}
	if b == 0 {
		return a
	}
	if p.nodes[a].prio > p.nodes[b].prio {
		p.push(a)
		c := p.merge(p.nodes[a].right, b)
		p.nodes[a].right = c
		p.pull(a)
		return a
	}
	p.push(b)
	c := p.merge(a, p.nodes[b].left)
	p.nodes[b].left = c
	p.pull(b)
	return b
}

func (p *Planner) erase(n int32, key float64) int32 {
	if n == 0 {
		return 0
	}
	p.push(n)
	switch k := p.nodes[n].key; {
	case key < k:
		c := p.erase(p.nodes[n].left, key)
		p.nodes[n].left = c
	case key > k:
		c := p.erase(p.nodes[n].right, key)
		p.nodes[n].right = c
	default:
		m := p.merge(p.nodes[n].left, p.nodes[n].right)
		p.nodes[n] = node{}
		p.freeNodes = append(p.freeNodes, n)
		p.points--
		return m
	}
	p.pull(n)
	return n
}

// The range walks below visit points with lo <= key < hi. geLo and ltHi say
// that every key of n's subtree is already known to be >= lo or < hi; a
// subtree known to be inside on both sides is answered from its aggregates,
// so only the two boundary paths are walked: O(log n).

func (p *Planner) addRange(n int32, lo, hi float64, delta []int64, geLo, ltHi bool) {
	if n == 0 {
		return
	}
	if geLo && ltHi {
		p.apply(n, delta)
		return
	}
	p.push(n)
	key := p.nodes[n].key
	inLo := geLo || key >= lo
	inHi := ltHi || key < hi
	if inLo && inHi {
		o := p.off(n)
		for k, x := range delta {
			p.vec[o+k] += x
		}
	}
	if inLo {
		p.addRange(p.nodes[n].left, lo, hi, delta, geLo, inHi)
	}
	if inHi {
		p.addRange(p.nodes[n].right, lo, hi, delta, inLo, ltHi)
	}
	p.pull(n)
}

func (p *Planner) minIn(n int32, lo, hi float64, geLo, ltHi bool, out []int64) {
	if n == 0 {
		return
	}
	d := p.dims
	if geLo && ltHi {
		o := p.off(n) + d
		for k := range out {
			out[k] = min(out[k], p.vec[o+k])
		}
		return
	}
	p.push(n)
	key := p.nodes[n].key
	inLo := geLo || key >= lo
	inHi := ltHi || key < hi
	if inLo && inHi {
		o := p.off(n)
		for k := range out {
			out[k] = min(out[k], p.vec[o+k])
		}
	}
	if inLo {
		p.minIn(p.nodes[n].left, lo, hi, geLo, inHi, out)
	}
	if inHi {
		p.minIn(p.nodes[n].right, lo, hi, inLo, ltHi, out)
	}
}

// lastFail returns the last point in [lo, hi) lacking amount in some kind,
// or 0. A subtree whose minima cover amount in every kind holds no such
// point, whatever the range, so it is skipped in O(1); a subtree that is not
// skipped surely holds one, which keeps the descent to O(log n).
func (p *Planner) lastFail(n int32, lo, hi float64, amount []int64, geLo, ltHi bool) int32 {
	if n == 0 {
		return 0
	}
	o := p.off(n) + p.dims
	short := false
	for k, a := range amount {
		if p.vec[o+k] < a {
			short = true
			break
		}
	}
	if !short {
		return 0
	}
	p.push(n)
	key := p.nodes[n].key
	inLo := geLo || key >= lo
	inHi := ltHi || key < hi
	if inHi {
		if f := p.lastFail(p.nodes[n].right, lo, hi, amount, inLo, ltHi); f != 0 {
			return f
		}
	}
	if inLo && inHi && !p.fits(n, amount) {
		return n
	}
	if inLo {
		return p.lastFail(p.nodes[n].left, lo, hi, amount, geLo, inHi)
	}
	return 0
}

// firstFit returns the first point with key > after that has amount free in
// every kind, or 0. A subtree whose maximum lacks amount in some kind is
// skipped. With one kind a subtree that is not skipped surely holds such a
// point, so the walk is O(log n); with several kinds the maxima may come
// from different points and the walk may backtrack.
func (p *Planner) firstFit(n int32, after float64, amount []int64, gt bool) int32 {
	if n == 0 {
		return 0
	}
	o := p.off(n) + 2*p.dims
	for k, a := range amount {
		if p.vec[o+k] < a {
			return 0
		}
	}
	p.push(n)
	in := gt || p.nodes[n].key > after
	if in {
		if f := p.firstFit(p.nodes[n].left, after, amount, gt); f != 0 {
			return f
		}
		if p.fits(n, amount) {
			return n
		}
	}
	return p.firstFit(p.nodes[n].right, after, amount, in)
}
