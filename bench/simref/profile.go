package main

import (
	"slices"
	"sort"
)

// amount is what a job holds of the machine in all: cores and memory
// (bytes; 0 without --memory).
type amount struct {
	cores, mem int64
}

// covers reports whether a holds at least b in both.
func (a amount) covers(b amount) bool { return a.cores >= b.cores && a.mem >= b.mem }

// point is a change point of an availability profile: what is free from t
// until the next point.
type point struct {
	t    int64
	free amount
}

// profile is the free cores and memory over future time as a sorted list
// of change points, so its size follows the number of jobs, not the
// length of time. The first point is now; the last has everything free.
// docs/simulation.md: the profile counts the machine in all, not node by
// node.
type profile struct {
	pts []point
}

// newProfile builds the profile of the running jobs, each holding its cores
// and memory until start + requested time.
func newProfile(now, total, totalMem int64, running []*job) *profile {
	byEnd := make([]*job, len(running))
	copy(byEnd, running)
	end := func(j *job) int64 { return max(j.estEnd(), now+1) }
	sort.Slice(byEnd, func(a, b int) bool { return end(byEnd[a]) < end(byEnd[b]) })
	free := amount{total, totalMem}
	for _, j := range running {
		free.cores -= j.cores
		free.mem -= j.memAll()
	}
	p := &profile{pts: []point{{t: now, free: free}}}
	for _, j := range byEnd {
		free.cores += j.cores
		free.mem += j.memAll()
		if last := &p.pts[len(p.pts)-1]; last.t == end(j) {
			last.free = free
		} else {
			p.pts = append(p.pts, point{t: end(j), free: free})
		}
	}
	return p
}

// fit reports whether a is free for d seconds from point i; if not, it
// returns the index of a point where it is not.
func (p *profile) fit(i int, a amount, d int64) (ok bool, blocked int) {
	end := p.pts[i].t + d
	for j := i; j < len(p.pts) && p.pts[j].t < end; j++ {
		if !p.pts[j].free.covers(a) {
			return false, j
		}
	}
	return true, 0
}

// fitsAt reports whether a is free for d seconds from point i.
func (p *profile) fitsAt(i int, a amount, d int64) bool {
	ok, _ := p.fit(i, a, d)
	return ok
}

// earliest returns the earliest time at which a is free for d seconds.
// Only change points need trying: a job that fits from inside a step also
// fits from the step's start.
func (p *profile) earliest(a amount, d int64) int64 {
	return p.earliestAt(0, a, d)
}

// fitsFrom reports whether a is free for d seconds from time t (not
// before the first point).
func (p *profile) fitsFrom(t int64, a amount, d int64) bool {
	return p.fitsAt(p.split(t), a, d)
}

// earliestFrom is earliest among the times from t on.
func (p *profile) earliestFrom(t int64, a amount, d int64) int64 {
	return p.earliestAt(p.split(t), a, d)
}

// earliestAt is earliest among the times from point i on.
func (p *profile) earliestAt(i int, a amount, d int64) int64 {
	for i < len(p.pts) {
		ok, blocked := p.fit(i, a, d)
		if ok {
			return p.pts[i].t
		}
		// No start at or before a blocking point can contain it.
		i = blocked + 1
	}
	// Unreachable while a fits the machine: everything is free at the
	// last point.
	return p.pts[len(p.pts)-1].t
}

// take holds a over [s, s+d).
func (p *profile) take(s int64, a amount, d int64) {
	x := p.split(s)
	y := p.split(s + d)
	for k := x; k < y; k++ {
		p.pts[k].free.cores -= a.cores
		p.pts[k].free.mem -= a.mem
	}
}

// split makes t a change point (t is never before the first point) and
// returns its index.
func (p *profile) split(t int64) int {
	k := sort.Search(len(p.pts), func(k int) bool { return p.pts[k].t >= t })
	if k < len(p.pts) && p.pts[k].t == t {
		return k
	}
	p.pts = slices.Insert(p.pts, k, point{t: t, free: p.pts[k-1].free})
	return k
}
