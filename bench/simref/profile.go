package main

import (
	"slices"
	"sort"
)

// point is a change point of an availability profile: free cores from t
// until the next point.
type point struct {
	t    int64
	free int64
}

// profile is the free cores over future time as a sorted list of change
// points, so its size follows the number of jobs, not the length of time.
// The first point is now; the last has every core free.
type profile struct {
	pts []point
}

// newProfile builds the profile of the running jobs, each holding its cores
// until start + requested time.
func newProfile(now, total int64, running []*job) *profile {
	byEnd := make([]*job, len(running))
	copy(byEnd, running)
	end := func(j *job) int64 { return max(j.estEnd(), now+1) }
	sort.Slice(byEnd, func(a, b int) bool { return end(byEnd[a]) < end(byEnd[b]) })
	free := total
	for _, j := range running {
		free -= j.cores
	}
	p := &profile{pts: []point{{t: now, free: free}}}
	for _, j := range byEnd {
		free += j.cores
		if last := &p.pts[len(p.pts)-1]; last.t == end(j) {
			last.free = free
		} else {
			p.pts = append(p.pts, point{t: end(j), free: free})
		}
	}
	return p
}

// fit reports whether c cores are free for d seconds from point i; if not,
// it returns the index of a point where they are not.
func (p *profile) fit(i int, c, d int64) (ok bool, blocked int) {
	end := p.pts[i].t + d
	for j := i; j < len(p.pts) && p.pts[j].t < end; j++ {
		if p.pts[j].free < c {
			return false, j
		}
	}
	return true, 0
}

// fitsAt reports whether c cores are free for d seconds from point i.
func (p *profile) fitsAt(i int, c, d int64) bool {
	ok, _ := p.fit(i, c, d)
	return ok
}

// earliest returns the earliest time at which c cores are free for d
// seconds. Only change points need trying: a job that fits from inside a
// step also fits from the step's start.
func (p *profile) earliest(c, d int64) int64 {
	for i := 0; i < len(p.pts); {
		ok, blocked := p.fit(i, c, d)
		if ok {
			return p.pts[i].t
		}
		// No start at or before a blocking point can contain it.
		i = blocked + 1
	}
	// Unreachable while c <= total: every core is free at the last point.
	return p.pts[len(p.pts)-1].t
}

// take holds c cores over [s, s+d).
func (p *profile) take(s, c, d int64) {
	a := p.split(s)
	b := p.split(s + d)
	for k := a; k < b; k++ {
		p.pts[k].free -= c
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
