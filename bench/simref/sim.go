package main

import (
	"errors"
	"fmt"
	"sort"
)

// job is one trace job on its way through the simulated machine; times are
// relative to time zero.
type job struct {
	pos    int
	id     int64
	submit int64
	run    int64
	req    int64
	cores  int64
	mem    int64 // bytes per processor (per slot) with --memory, else 0
	denied bool

	started bool
	start   int64
	end     int64 // start + min(run, req): the job is killed at its requested time
	on      []slots
}

// slots is part of where a job runs: so many of its processors on a node.
type slots struct {
	node int
	n    int64
}

// memAll is the memory the whole job asks for.
func (j *job) memAll() int64 { return j.mem * j.cores }

// estEnd is when the scheduler believes the job ends: it knows only the
// requested time, never the run time.
func (j *job) estEnd() int64 { return j.start + j.req }

// hold is how long a job occupies its cores in an availability profile:
// a job with requested time 0 still holds its cores at the instant it
// starts, so it must not share them with another job placed at that instant.
func (j *job) hold() int64 { return max(j.req, 1) }

// Policy names accepted by --policy.
const (
	policyFCFS         = "fcfs"
	policyEASY         = "easy"
	policyHybrid       = "hybrid"
	policyConservative = "conservative"
)

// unbounded is the reservation depth of conservative: every job that cannot
// start now gets a reservation.
const unbounded = -1

// node is one node's free cores and memory.
type node struct {
	cores, mem int64
}

// machine is the simulated state: the cores (and memory), node by node and
// in all, the queue and the running jobs. Without --memory the machine is
// one node of all the cores: docs/simulation.md has only the number of
// free cores decide then.
type machine struct {
	total    int64
	free     int64
	totalMem int64
	freeMem  int64
	nodes    []node
	now      int64
	queue    []*job // in queue order: submit, job number, trace position
	running  []*job
	policy   string
	depth    int // reservation depth for hybrid (and unbounded for conservative)
	match    string
}

// Match policies (--match-policy): the order nodes are tried in by their
// free cores, ties by rank.
const (
	matchWorstFit = "worst-fit" // most free cores first
	matchBestFit  = "best-fit"  // fewest first
	matchFirstFit = "first-fit" // rank order
)

// before reports whether a node with a free cores comes before one with b
// under the match policy (a stable sort keeps ties in rank order).
func (m *machine) before(a, b int64) bool {
	switch m.match {
	case matchBestFit:
		return a < b
	case matchFirstFit:
		return false
	}
	return a > b
}

// simulate replays the jobs (not skipped, in trace order, times relative to
// time zero) on a machine and fills in their start and end.
func simulate(jobs []*job, spec machineSpec, policy string, depth int) error {
	m := &machine{policy: policy, depth: depth, match: spec.match}
	for range spec.count() {
		m.nodes = append(m.nodes, node{cores: spec.coresPer(), mem: spec.memory})
	}
	m.total, m.free = spec.cores(), spec.cores()
	m.totalMem, m.freeMem = spec.memory*spec.count(), spec.memory*spec.count()
	switch policy {
	case policyFCFS, policyEASY, policyHybrid:
	case policyConservative:
		m.depth = unbounded
	default:
		return fmt.Errorf("unknown policy %q (want fcfs, easy, hybrid or conservative)", policy)
	}
	if policy == policyHybrid && depth < 0 {
		return fmt.Errorf("reservation depth %d is negative", depth)
	}

	arrivals := make([]*job, len(jobs))
	copy(arrivals, jobs)
	sort.SliceStable(arrivals, func(a, b int) bool { return arrivals[a].submit < arrivals[b].submit })

	next := 0
	for next < len(arrivals) || len(m.running) > 0 {
		t, ok := m.nextEnd()
		if next < len(arrivals) && (!ok || arrivals[next].submit < t) {
			t = arrivals[next].submit
		}
		m.now = t
		// docs/simulation.md: at one instant, ends first, then submissions, then
		// one pass.
		ended := m.freeEnded()
		var batch []*job
		for next < len(arrivals) && arrivals[next].submit == t {
			if !arrivals[next].denied {
				batch = append(batch, arrivals[next])
			}
			next++
		}
		sort.SliceStable(batch, func(a, b int) bool { return batch[a].id < batch[b].id })
		m.queue = append(m.queue, batch...)
		// docs/simulation.md: a denied job leaves no mark, so an instant
		// where nothing but its submission happens makes no pass (with
		// memory, a pass later in time can decide otherwise).
		if !ended && len(batch) == 0 {
			continue
		}
		// A job with run time 0 ends as it starts, and its freed cores earn
		// another pass at the same instant.
		for m.pass() {
			m.freeEnded()
		}
	}
	if len(m.queue) > 0 {
		return errors.New("internal error: jobs left in the queue on an idle machine")
	}
	return nil
}

// nextEnd returns the earliest actual end among the running jobs.
func (m *machine) nextEnd() (int64, bool) {
	if len(m.running) == 0 {
		return 0, false
	}
	t := m.running[0].end
	for _, j := range m.running[1:] {
		t = min(t, j.end)
	}
	return t, true
}

// freeEnded returns the cores of every running job that has ended by now,
// and reports whether there was one.
func (m *machine) freeEnded() bool {
	n := len(m.running)
	kept := m.running[:0]
	for _, j := range m.running {
		if j.end <= m.now {
			m.free += j.cores
			m.freeMem += j.memAll()
			for _, s := range j.on {
				m.nodes[s.node].cores += s.n
				m.nodes[s.node].mem += s.n * j.mem
			}
			j.on = nil
		} else {
			kept = append(kept, j)
		}
	}
	clear(m.running[len(kept):])
	m.running = kept
	return len(kept) < n
}

// place returns where j fits now, docs/simulation.md's "Memory": the nodes
// in worst-fit order (most free cores first, ties by rank), each taking as
// many of its processors as it holds (free cores, and free memory / its
// memory per processor), until all are placed.
func (m *machine) place(j *job) ([]slots, bool) {
	if j.cores > m.free || j.memAll() > m.freeMem {
		return nil, false
	}
	if len(m.nodes) == 1 && j.mem == 0 {
		return []slots{{node: 0, n: j.cores}}, true
	}
	order := make([]int, len(m.nodes))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return m.before(m.nodes[order[a]].cores, m.nodes[order[b]].cores) })
	var on []slots
	left := j.cores
	for _, i := range order {
		room := m.nodes[i].cores
		if j.mem > 0 {
			room = min(room, m.nodes[i].mem/j.mem)
		}
		if k := min(room, left); k > 0 {
			on = append(on, slots{node: i, n: k})
			left -= k
		}
		if left == 0 {
			return on, true
		}
	}
	return nil, false
}

// startJob starts a queued job now on the nodes place gave; the caller
// removes it from the queue.
func (m *machine) startJob(j *job, on []slots) {
	j.started = true
	j.start = m.now
	j.end = m.now + min(j.run, j.req)
	j.on = on
	m.free -= j.cores
	m.freeMem -= j.memAll()
	for _, s := range on {
		n := &m.nodes[s.node]
		n.cores -= s.n
		n.mem -= s.n * j.mem
		if n.cores < 0 || n.mem < 0 {
			// place never gives more than a node has: a bug here would
			// otherwise show only as a schedule that disagrees.
			panic(fmt.Sprintf("internal error: job %d overfills node %d", j.id, s.node))
		}
	}
	m.running = append(m.running, j)
}

// pass makes one scheduling pass and reports whether a job that ends at
// once (run time 0) was started.
func (m *machine) pass() bool {
	var started []*job
	switch m.policy {
	case policyFCFS:
		started = m.passFCFS()
	case policyEASY:
		if m.totalMem > 0 {
			// docs/simulation.md, "Memory": easy is hybrid with D = 1;
			// the shadow-time wording is its case without memory.
			started = m.passProfile(1)
		} else {
			started = m.passEASY()
		}
	default:
		started = m.passProfile(m.depth)
	}
	if len(started) == 0 {
		return false
	}
	kept := m.queue[:0]
	for _, j := range m.queue {
		if !j.started {
			kept = append(kept, j)
		}
	}
	clear(m.queue[len(kept):])
	m.queue = kept
	for _, j := range started {
		if j.end == m.now {
			return true
		}
	}
	return false
}

// passFCFS starts jobs from the head of the queue while they fit and stops
// at the first that does not.
func (m *machine) passFCFS() []*job {
	var started []*job
	for _, j := range m.queue {
		on, ok := m.place(j)
		if !ok {
			break
		}
		m.startJob(j, on)
		started = append(started, j)
	}
	return started
}

// passEASY is EASY backfilling worded as docs/simulation.md words it: the head's
// shadow time and extra cores (and memory), then one scan of the rest of
// the queue.
func (m *machine) passEASY() []*job {
	var started []*job
	i := 0
	for ; i < len(m.queue); i++ {
		on, ok := m.place(m.queue[i])
		if !ok {
			break
		}
		m.startJob(m.queue[i], on)
		started = append(started, m.queue[i])
	}
	if i == len(m.queue) {
		return started
	}
	head := m.queue[i]
	shadow, extra, extraMem := m.shadow(head.cores, head.memAll())
	for _, j := range m.queue[i+1:] {
		on, ok := m.place(j)
		if !ok {
			continue
		}
		switch {
		case m.now+j.req <= shadow:
			// Tried first: a job done by the shadow time takes nothing
			// from the extra cores or memory.
		case j.cores <= extra && j.memAll() <= extraMem:
			extra -= j.cores
			extraMem -= j.memAll()
		default:
			continue
		}
		m.startJob(j, on)
		started = append(started, j)
	}
	return started
}

// shadow returns the earliest time at which need cores and needMem memory
// are free on the machine in all (not node by node), counting each running
// job as ending at start + requested time, and the cores and memory free
// then beyond the need.
func (m *machine) shadow(need, needMem int64) (shadow, extra, extraMem int64) {
	byEnd := make([]*job, len(m.running))
	copy(byEnd, m.running)
	sort.Slice(byEnd, func(a, b int) bool { return byEnd[a].estEnd() < byEnd[b].estEnd() })
	avail, availMem := m.free, m.freeMem
	shadow = m.now
	for _, j := range byEnd {
		if avail >= need && availMem >= needMem {
			break
		}
		avail += j.cores
		availMem += j.memAll()
		shadow = max(shadow, j.estEnd())
	}
	// The extra cores count every running job whose estimated end is at or
	// before the shadow time, including those that end at the same second
	// as the one that made the head fit.
	avail, availMem = m.free, m.freeMem
	for _, j := range byEnd {
		if j.estEnd() <= shadow {
			avail += j.cores
			availMem += j.memAll()
		}
	}
	return shadow, avail - need, availMem - needMem
}

// passProfile is conservative (depth unbounded) and hybrid backfilling:
// walk the queue in order over an availability profile of the running jobs
// and the reservations made so far; a job that fits now for its whole
// requested time starts, the first depth jobs that do not get the earliest
// start where they fit, the others are passed over.
//
// With memory (docs/simulation.md, "Memory"), a job asking for memory is
// reserved node by node (planOnNodes) and its reservation holds cores and
// memory on those nodes (claims) as well as in the profile; a job starting
// now may take of a node with claims only what they leave it for its whole
// requested time.
func (m *machine) passProfile(depth int) []*job {
	p := newProfile(m.now, m.total, m.totalMem, m.running)
	claims := make([][]claim, len(m.nodes))
	var started []*job
	reserved := 0
	for _, j := range m.queue {
		a := amount{j.cores, j.memAll()}
		if p.fitsAt(0, a, j.hold()) {
			if on, ok := m.placeCapped(j, claims); ok {
				p.take(m.now, a, j.hold())
				m.startJob(j, on)
				started = append(started, j)
				continue
			}
		}
		if depth != unbounded && reserved >= depth {
			continue
		}
		reserved++
		if j.mem == 0 {
			p.take(p.earliest(a, j.hold()), a, j.hold())
			continue
		}
		t, picks := m.planOnNodes(p, claims, j)
		var on amount
		for _, pk := range picks {
			claims[pk.node] = append(claims[pk.node], claim{start: t, end: t + j.hold(), free: amount{pk.n, pk.n * j.mem}})
			on.cores += pk.n
			on.mem += pk.n * j.mem
		}
		p.take(t, on, j.hold())
	}
	return started
}

// claim is what a reservation of the pass holds on one node over
// [start, end).
type claim struct {
	start, end int64
	free       amount // what it holds
}

// freeAt is what node n has free at time t >= now as far as the scheduler
// knows: free now, plus what running jobs give back there by their
// estimated end (start + requested time) at or before t.
func (m *machine) freeAt(n int, t int64) amount {
	f := amount{m.nodes[n].cores, m.nodes[n].mem}
	for _, j := range m.running {
		if j.estEnd() > t {
			continue
		}
		for _, s := range j.on {
			if s.node == n {
				f.cores += s.n
				f.mem += s.n * j.mem
			}
		}
	}
	return f
}

// offers is what node n offers a job over [t, end): without claims, what
// is free at t (it only grows later); with claims, the least over that
// time of what is free less what the claims hold, which can only fall
// where a claim starts.
func (m *machine) offers(n int, cl []claim, t, end int64) amount {
	if len(cl) == 0 {
		return m.freeAt(n, t)
	}
	least := amount{-1, -1}
	for _, x := range append([]int64{t}, claimStarts(cl, t, end)...) {
		f := m.freeAt(n, x)
		for _, c := range cl {
			if c.start <= x && x < c.end {
				f.cores -= c.free.cores
				f.mem -= c.free.mem
			}
		}
		if least.cores < 0 || f.cores < least.cores {
			least.cores = f.cores
		}
		if least.mem < 0 || f.mem < least.mem {
			least.mem = f.mem
		}
	}
	return amount{max(least.cores, 0), max(least.mem, 0)}
}

// claimStarts are the starts of claims strictly inside (t, end).
func claimStarts(cl []claim, t, end int64) []int64 {
	var out []int64
	for _, c := range cl {
		if c.start > t && c.start < end {
			out = append(out, c.start)
		}
	}
	return out
}

// room is how many of j's processors f holds.
func room(j *job, f amount) int64 {
	r := f.cores
	if j.mem > 0 {
		r = min(r, f.mem/j.mem)
	}
	return r
}

// placeCapped is place within the claims: nodes are still ordered by their
// free cores now, but each holds only what it offers over the job's
// requested time (offers).
func (m *machine) placeCapped(j *job, claims [][]claim) ([]slots, bool) {
	claimed := false
	for _, cl := range claims {
		claimed = claimed || len(cl) > 0
	}
	if !claimed {
		return m.place(j)
	}
	if j.cores > m.free || j.memAll() > m.freeMem {
		return nil, false
	}
	order := make([]int, len(m.nodes))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return m.before(m.nodes[order[a]].cores, m.nodes[order[b]].cores) })
	var on []slots
	left := j.cores
	for _, i := range order {
		f := amount{m.nodes[i].cores, m.nodes[i].mem}
		if len(claims[i]) > 0 {
			f = m.offers(i, claims[i], m.now, m.now+j.hold())
		}
		if k := min(room(j, f), left); k > 0 {
			on = append(on, slots{node: i, n: k})
			left -= k
		}
		if left == 0 {
			return on, true
		}
	}
	return nil, false
}

// planOnNodes is the reservation of a job asking for memory: the earliest
// time t, trying now and then each estimated end of a running job and each
// end of a claim, at which the nodes offer it room for all its processors
// over [t, t + requested); it is placed as place would place it then
// (worst-fit on what each node offers, ties by rank), and the profile must
// hold what it takes over that time too, or t moves on to the profile's
// earliest time for that and is tried again.
func (m *machine) planOnNodes(p *profile, claims [][]claim, j *job) (int64, []slots) {
	var moments []int64
	for _, r := range m.running {
		moments = append(moments, r.estEnd())
	}
	for _, cl := range claims {
		for _, c := range cl {
			moments = append(moments, c.end)
		}
	}
	sort.Slice(moments, func(a, b int) bool { return moments[a] < moments[b] })
	t := m.now
	for {
		end := t + j.hold()
		offer := make([]amount, len(m.nodes))
		var total int64
		for i := range m.nodes {
			offer[i] = m.offers(i, claims[i], t, end)
			total += room(j, offer[i])
		}
		if total >= j.cores {
			order := make([]int, len(m.nodes))
			for i := range order {
				order[i] = i
			}
			sort.SliceStable(order, func(a, b int) bool { return m.before(offer[order[a]].cores, offer[order[b]].cores) })
			var picks []slots
			var need amount
			left := j.cores
			for _, i := range order {
				if k := min(room(j, offer[i]), left); k > 0 {
					picks = append(picks, slots{node: i, n: k})
					need.cores += k
					need.mem += k * j.mem
					left -= k
				}
				if left == 0 {
					break
				}
			}
			if p.fitsFrom(t, need, j.hold()) {
				return t, picks
			}
			if ta := p.earliestFrom(t, need, j.hold()); ta > t {
				t = ta
				continue
			}
		}
		k := sort.Search(len(moments), func(k int) bool { return moments[k] > t })
		if k == len(moments) {
			// Everything is free after the last moment: a job the
			// machine can hold (it is not denied) fits there.
			panic(fmt.Sprintf("internal error: job %d fits at no time", j.id))
		}
		t = moments[k]
	}
}
