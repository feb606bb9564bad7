package sched

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/planner"
	"github.com/fluxq/fluxq/internal/resource"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/schedproto"
)

// A pass walks the pending jobs of every queue merged in scheduling order
// and decides, for each job it considers, whether it starts now, gets a
// planned start, or waits (see the policies on Kind). It can stop after any
// job and go on later: Step.
type pass struct {
	now    float64
	queues []*walk // one per queue with pending jobs when the pass began
	// granted and cut: the pass started a job, and it left jobs of some
	// queue unseen (queue-depth). Both together make another pass due,
	// for the jobs that move up within the depth.
	granted, cut bool
	// settled: every reason was looked at by a whole pass since the
	// layout or the order last changed (see Scheduler.unsettled).
	settled bool
	// claims are what the pass's node-granular planned starts hold, by
	// rank (nodes.go); nil while there are none.
	claims map[uint][]claim
}

// walk is a pass's progress through one queue.
type walk struct {
	name   string
	q      *queue
	policy QueuePolicy
	// cursor is where the walk resumes, after it: the last job
	// considered or passed over, or another queue's job it was brought up
	// to (see next). It may have left the queue: it is a key.
	cursor *pending
	// head is the next job to consider, found when stale is false: the
	// first after cursor that the pass cannot pass over (see nextFor).
	head  *pending
	raw   *pending // the first job after cursor, found with head
	stale bool
	// seen counts jobs considered, planned the planned starts made (a job
	// that could get no start time counts too) and estimates those with a
	// start time.
	seen, planned, estimates int
	// blocked: an fcfs queue stopped at a job that did not fit. starved:
	// a job got no planned start because jobs without a time limit hold
	// what it needs, so nothing without a limit may start behind it, or
	// it might never start.
	blocked, starved bool
	// starvedOn: the same for a job planned node by node, on these
	// ranks only: nothing without a limit may start on them.
	starvedOn []uint
	done      bool // nothing more to consider in this pass
}

// held is a job holding resources, and its span in the planner if it has
// one (it has none while the planner waits to be rebuilt, or when it holds
// nothing the planner covers).
type held struct {
	span    planner.SpanID
	planned bool
	end     float64 // the span's end, when planned
}

// asPlanned is the last pass's planned start of the job place is
// placing, taken out of the planner in its stead (startsAsPlanned):
// the span it held there, which the job's own span must equal for the
// planned starts after it to stay (hold). Or, with fitted, the span
// over which place found the job's amount free in the planner as the
// pass has made it, none of the last pass's planned starts left: a
// span within it keeps the pass's planned starts as they are, each
// still fitting where it is and none earlier (hold).
type asPlanned struct {
	ok, fitted bool
	start, end float64
	amount     []int64
}

// Schedule runs a whole pass at now, the start time written into R, and
// returns the SUCCESS, DENY and ANNOTATE responses to send, in order. A
// pass paused by Step is finished first; with nothing new since the last
// pass it returns nothing.
func (s *Scheduler) Schedule(now float64) []schedproto.AllocResponse {
	out, _ := s.Step(now, 0)
	return out
}

// Busy reports whether a pass is in progress or something changed since
// the last one: the driver should Step again.
func (s *Scheduler) Busy() bool { return s.cur != nil || s.dirty }

// Step goes on with the pass in progress, or begins one if anything
// changed since the last, considering at most budget jobs (0: no bound);
// the jobs it passes over (see next) cost a few steps of their queue's
// tree however many they are, and do not count. It returns the
// responses to send and whether the pass is finished.
//
// Between two Steps the scheduler takes any input. A new request, a cancel
// or a free leaves the pass going (a new job behind the cursor is seen by
// this pass, one ahead of it or in a new queue by the next; freed
// resources only help); a change of order or capacity (priorities,
// policies, sessions, down ranks, nodes joining) drops it, and the next
// Step starts again from the head. now should not go backwards.
func (s *Scheduler) Step(now float64, budget int) ([]schedproto.AllocResponse, bool) {
	return s.appendStep(nil, now, budget)
}

// appendStep is Step with the responses appended to out: the engine
// passes the last Step's, which it has done with, so that a pass's
// responses are not a slice grown anew every pass.
func (s *Scheduler) appendStep(out []schedproto.AllocResponse, now float64, budget int) ([]schedproto.AllocResponse, bool) {
	if s.cur == nil {
		if !s.dirty {
			return out, true
		}
		s.begin(now)
	}
	ps := s.cur
	ps.now = now
	for _, w := range ps.queues {
		w.stale = true // input since the last Step may have moved heads
	}
	for n := 0; budget <= 0 || n < budget; n++ {
		w := s.next(ps)
		if w == nil {
			s.finish(ps)
			return out, true
		}
		p := w.head
		w.cursor, w.stale = p, true
		r, ok := s.consider(ps, w, p)
		if ok {
			out = append(out, r)
		}
		if ok && r.Type != schedproto.Annotate {
			// Granted, or denied for an R it could not write: it leaves
			// the queue, which by itself makes no new pass due.
			dirty := s.dirty
			s.remove(p)
			s.dirty = dirty
			ps.granted = true
			continue
		}
		s.classify(w.q, p)
	}
	return out, false
}

// classify records in p's queue whether a pass may pass over p (see
// nextFor), after consider looked at it: when it has been announced
// with the reason its targets give it (none, or why they cannot hold
// it) and without an estimate, looking at it again while it can neither
// start nor be planned would send nothing and change nothing.
func (s *Scheduler) classify(q *queue, p *pending) {
	loud := !p.announced || !math.IsNaN(p.sentEst) || !sameWhy(p.sentWhy, p.fitsErr)
	try := p.fitsErr == nil
	if loud != p.loud || try != p.try {
		p.loud, p.try = loud, try
		q.refresh(p)
	}
}

// finish ends the pass: another is due if it started jobs and left some
// unseen, and the reasons are settled if it looked at every job.
func (s *Scheduler) finish(ps *pass) {
	s.cur = nil
	s.dropStale() // planned starts this pass did not make again
	s.lastSeen = 0
	for _, w := range ps.queues {
		s.lastSeen += w.seen
	}
	if ps.granted && ps.cut {
		s.dirty = true
	}
	if ps.settled && !ps.cut {
		s.unsettled = false // it looked at every job
	}
}

// next returns the queue whose next job to consider comes first in
// scheduling order, among those with more to consider, with that job in
// its head; nil when none has.
//
// The jobs before it that consider would leave as they are (those
// nextFor passes over, in every walk) are passed over as consider would
// have looked at them one by one: each counts toward queue-depth, and
// the settle rule is asked after the first, since looking at such a job
// changes nothing it reads. What they cost is a few descents of their
// queue, not their number. They do not count toward Step's budget.
func (s *Scheduler) next(ps *pass) *walk {
	for {
		var best *walk
		for _, w := range ps.queues {
			if w.done {
				continue
			}
			if w.stale {
				s.nextFor(w)
			}
			if w.head != nil && (best == nil || compare(w.head, best.head) < 0) {
				best = w
			}
		}
		var bound *pending // every walk is passed over up to it
		if best != nil {
			bound = best.head
		}
		for _, w := range ps.queues {
			if !w.done {
				s.passOver(ps, w, bound, w == best)
			}
		}
		if best == nil || !best.done {
			return best
		}
		// best settled (or reached its depth) on a job it passed over:
		// the next is another queue's.
	}
}

// nextFor finds w's head, the first job after its cursor that the pass
// cannot pass over: one whose annotation would change (loud: never
// announced, an estimate to withdraw, a reason other than its targets'),
// or, if its targets can hold it, one that might start or be planned. No
// job can start in an fcfs queue that is blocked, nor one that asks for
// more cores or GPUs than are free, and none can be planned once the
// queue's planned starts are made. While the reasons are unsettled every
// job is looked at. It also finds w.raw, the first job after the cursor,
// which is the head unless some are passed over: most often it is, and
// one descent of the tree finds both.
func (s *Scheduler) nextFor(w *walk) {
	w.stale = false
	w.raw = w.q.after(w.cursor)
	w.head = w.raw
	if w.raw == nil || s.unsettled || s.lookAtAll {
		return
	}
	cores, gpus := int64(-1), int64(-1) // loud jobs only
	if !w.blocked {
		if q := w.policy; q.Kind == FCFS || w.planned < q.planDepth() {
			cores, gpus = math.MaxInt64, math.MaxInt64
		} else {
			c, g := s.pool.FreeCores()
			cores, gpus = int64(c), int64(g)
		}
	}
	if p := w.raw; !p.loud && !(p.try && p.amount[0] <= cores && p.amount[1] <= gpus) {
		w.head = w.q.find(p, cores, gpus)
	}
}

// passOver passes over w's jobs after its cursor and before bound (to its
// end for nil): what consider would do with each of them, which nextFor
// knows is nothing but counting it and asking the settle rule. head says
// bound is w's own head, which is considered next; else w resumes after
// bound.
func (s *Scheduler) passOver(ps *pass, w *walk, bound *pending, head bool) {
	some := w.raw != nil && (bound == nil || compare(w.raw, bound) < 0)
	q := w.policy
	switch {
	case !some:
		if bound == nil {
			w.done = true
		}
		return
	case s.settles(w):
		// It would settle after the first of them.
		w.seen++
		if q.QueueDepth > 0 && w.seen >= q.QueueDepth {
			ps.cut = true
		}
		w.done = true
		return
	}
	k := w.q.between(w.cursor, bound)
	if q.QueueDepth > 0 && w.seen+k >= q.QueueDepth {
		w.seen = q.QueueDepth
		ps.cut = true
		w.done = true
		return
	}
	w.seen += k
	switch {
	case bound == nil:
		w.done = true
	case !head:
		// Its head, after bound, still is; the jobs between are not
		// known, so they are found again.
		w.cursor, w.stale = bound, true
	}
}

// plannedStart is a planned start a pass made: its span in the planner,
// and, for one made in the planner alone (not node by node: again), the
// job, its start, the duration it was planned for and the epoch it was
// made in.
type plannedStart struct {
	id    planner.SpanID
	p     *pending
	t     float64
	dur   float64
	epoch uint64
	again bool
}

// replan takes the last pass's planned start of p again when it would be
// made the same: p is the next of them (every one before was taken
// again, so the planner holds what it held when p's was made), nothing
// else changed since (epoch: no running job started or ended, no
// rebuild, no restart), it was made in the planner alone for the same
// duration, and it is not before now. The planner's answer would then
// be the same start: it was the earliest from the last pass's now, and
// no earlier time from this pass's now, which is later, could fit where
// none did from the earlier now. p could not start now either: the
// pool is as it was, and place refused p on it before the planner was
// asked (a job that gets past the pool drops the rest, dropStale). Else
// the last pass's remaining planned starts are removed, and p is
// planned anew.
func (s *Scheduler) replan(ps *pass, p *pending, dur float64) (float64, bool) {
	if s.staleAt < len(s.stale) {
		st := s.stale[s.staleAt]
		if st.again && st.p == p && s.current(st, ps.now) && st.dur == dur && st.t >= ps.now {
			s.staleAt++
			s.planned = append(s.planned, st)
			return st.t, true
		}
	}
	s.dropStale()
	return 0, false
}

// current reports whether nothing a planned start of the last passes
// was made from has changed, as the planner reads from now on: the
// epoch is the same, once the running jobs' spans removed since it was
// last asked are counted. A span that ended by now (a job that ran
// until its planned end, or was killed then) changes nothing from now
// on, so it leaves the epoch as it is; one that would have run past now
// changes it.
func (s *Scheduler) current(st plannedStart, now float64) bool {
	if s.freed {
		s.freed = false
		if s.freedTo > now {
			s.epoch++
		}
	}
	return st.epoch == s.epoch
}

// startsAsPlanned is place's shortcut for the next of the last pass's
// planned starts when it is p's, for the same duration, made from what
// the planner still holds (current), in the planner alone, and p is
// placed as a plain job (not exclusive, not on nodes outside the
// planner). At now, p may start: its planned start alone is taken out,
// and the rest stay (asPlanned; hold puts them back in force if p's
// span is the one taken out, else the epoch drops them). After now, p
// cannot start: the planner, as it was when that start was made, had no
// room for p's time from any instant before it, now included; ok is
// false and place refuses p without reading the planner. Else handled
// is false, and place drops the rest as before.
func (s *Scheduler) startsAsPlanned(ps *pass, q QueuePolicy, p *pending, dur float64) (handled, ok bool) {
	if q.Kind == FCFS || s.staleAt >= len(s.stale) || p.req.Exclusive || (p.onDefault && !p.inDefault) || !p.inDefault {
		return false, false
	}
	st := s.stale[s.staleAt]
	end := ps.now + dur
	if !st.again || st.p != p || st.dur != dur || st.t < ps.now || !(end > ps.now) || !s.current(st, ps.now) {
		return false, false
	}
	if st.t > ps.now {
		return true, false
	}
	_ = s.plan.Remove(st.id) // the last pass added it
	s.staleAt++
	s.swap = asPlanned{ok: true, start: st.t, end: max(st.t+dur, math.Nextafter(st.t, math.Inf(1))), amount: s.amount(p)}
	return true, true
}

// unswap drops the planned starts after the one startsAsPlanned took
// out, when no job took its place.
func (s *Scheduler) unswap() {
	if s.swap.ok {
		s.dropStale()
	}
	s.swap = asPlanned{}
}

// dropStale removes from the planner the last pass's planned starts that
// this pass has not taken again.
func (s *Scheduler) dropStale() {
	if s.staleAt == len(s.stale) {
		return
	}
	for _, st := range s.stale[s.staleAt:] {
		_ = s.plan.Remove(st.id) // each was added by the last pass
	}
	s.stale, s.staleAt = s.stale[:0], 0
}

// planless reports whether the policy of no queue a pass walks plans
// (each is fcfs, which neither backfills nor makes planned starts): the
// pass then asks nothing of the planner. A queue made later (its first
// job) makes a new pass, which asks again. With no queue (every one is
// empty, and gone) the planner stays as it is, kept or not: a queue that
// empties under a backfilling policy must not cost a rebuild.
func (s *Scheduler) planless() bool {
	if len(s.queues) == 0 {
		return s.plan == nil
	}
	for name := range s.queues {
		if s.policyOf(name).Kind != FCFS {
			return false
		}
	}
	return true
}

// begin starts a pass: the last pass's planned starts are dropped (every
// pass makes them anew) and the planner is rebuilt if the capacity
// changed.
func (s *Scheduler) begin(now float64) {
	s.dirty = false
	switch {
	case s.planless():
		// No queue plans: the planner is not kept (hold adds no running
		// job to it), and is made anew, with every running job, by the
		// first pass whose policies plan again.
		s.plan = nil
		s.stale, s.staleAt = s.stale[:0], 0
	case s.plan == nil || s.planAt != s.layout:
		s.rebuild()
		s.stale, s.staleAt = s.stale[:0], 0
	default:
		// The last pass's planned starts stay in the planner, to be taken
		// again or removed as this pass goes (replan, dropStale).
		s.dropStale() // those of a pass that did not finish
		s.stale, s.planned = s.planned, s.stale[:0]
		s.staleAt = 0
		if s.noReplan {
			s.dropStale()
		}
	}
	s.planned = s.planned[:0]
	ps := s.lastPass
	if ps == nil {
		ps = &pass{}
	}
	*ps = pass{now: now, settled: s.unsettled, queues: ps.queues[:0]}
	walks := s.lastWalks[:0]
	for name, tree := range s.queues {
		walks = append(walks, walk{name: name, q: tree, policy: s.policyOf(name), stale: true})
	}
	clear(ps.queues[:cap(ps.queues)]) // the last pass's, if walks moved
	for i := range walks {
		ps.queues = append(ps.queues, &walks[i])
	}
	s.cur, s.lastPass, s.lastWalks = ps, ps, walks
}

// consider decides one job's fate in the pass and returns the response to
// send for it, if any (ok). By value: a pointer put every grant's
// response on the heap, to be copied into the pass's responses.
func (s *Scheduler) consider(ps *pass, w *walk, p *pending) (resp schedproto.AllocResponse, ok bool) {
	q := w.policy
	w.seen++
	if q.QueueDepth > 0 && w.seen >= q.QueueDepth {
		w.done = true // this is the last one it looks at
		ps.cut = true
	}
	est := math.NaN()
	// A job known not to fit its targets cannot match: skip the walk.
	// why is this pass's reason_pending: nil for ReasonInsufficient, else
	// fitsErr or memErr. An error, not its text, so that a pass compares
	// two words per waiting job, not two strings.
	why := s.fitsTargets(p)
	if why == nil && !w.blocked {
		dur := math.Inf(1)
		if p.req.Duration > 0 {
			dur = p.req.Duration
		}
		if r, ok := s.place(ps, w, p, dur); ok {
			resp := s.grant(p, r, ps.now)
			s.unswap() // not granted: the planner lacks p's planned start
			return resp, true
		}
		s.unswap()
		if p.req.MemPerSlot > 0 {
			why = s.memoryShort(p, q.Match)
		}
		switch {
		case q.Kind == FCFS:
			w.blocked = true
		case w.planned < q.planDepth():
			// The job takes one of the pass's planned starts even when
			// it gets no start time, as the head does under easy.
			w.planned++
			if t, ok := s.replan(ps, p, dur); ok {
				w.estimates++
				est = t
				break
			}
			if f := s.feasibleFor(p); f != nil {
				t, ok := s.planOnNodes(ps, q.Match, p, f, dur)
				if !ok {
					w.starvedOn = append(w.starvedOn, f.ranks...)
					break
				}
				w.estimates++
				est = t
				break
			}
			t, ok := s.plan.EarliestFit(ps.now, dur, s.amount(p))
			if !ok {
				w.starved = true
				break
			}
			// A planned start holds the job's start instant at least, even
			// for a duration too small to move the clock.
			if id, err := s.plan.Add(t, max(t+dur, math.Nextafter(t, math.Inf(1))), s.amount(p)); err == nil {
				s.planned = append(s.planned, plannedStart{id: id, p: p, t: t, dur: dur, epoch: s.epoch, again: true})
				w.estimates++
				est = t
			}
		}
	}
	defer s.settle(ps, w)
	if p.announced && sameWhy(p.sentWhy, why) && sameEst(p.sentEst, est) {
		return schedproto.AllocResponse{}, false
	}
	clear := !math.IsNaN(p.sentEst) && math.IsNaN(est)
	if !p.announced {
		s.fresh[p.queue]--
	}
	if had, has := !math.IsNaN(p.sentEst), !math.IsNaN(est); had != has {
		if has {
			s.estimated[p.queue]++
		} else {
			s.estimated[p.queue]--
		}
	}
	p.announced, p.sentWhy, p.sentEst = true, why, est
	reason := ReasonInsufficient
	if why != nil {
		reason = why.Error()
	}
	resp = schedproto.AllocResponse{ID: p.id, Type: schedproto.Annotate, Annotations: waiting(reason, est, clear)}
	if s.typed {
		resp.Annotated = waitingValue(reason, est, clear)
	}
	return resp, true
}

// place returns where p starts now, if it does.
func (s *Scheduler) place(ps *pass, w *walk, p *pending, dur float64) (*rset.R, bool) {
	q := w.policy
	if math.IsInf(dur, 1) && w.starved {
		return nil, false // see walk.starved
	}
	// The free totals answer first for the many jobs that cannot fit now.
	if cores, gpus := s.pool.FreeCores(); p.amount[0] > int64(cores) || p.amount[1] > int64(gpus) {
		return nil, false
	}
	if p.amount[2] > 0 && uint64(p.amount[2]) > s.pool.FreeMemory() {
		return nil, false
	}
	// It may start now: what follows reads the planner as this pass has
	// made it, without the last pass's planned starts (or, when p is the
	// next of them, with those after p: startsAsPlanned).
	if handled, ok := s.startsAsPlanned(ps, q, p, dur); !handled {
		s.dropStale()
	} else if !ok {
		return nil, false
	}
	// Backfilling policies start a job only if it also fits the planner
	// for its whole time, and on claimed nodes only what the claims
	// leave, so that nothing a planned start counts on is taken.
	// A job too short to move the clock takes nothing from it (it ends
	// as it starts).
	end := ps.now + dur
	guard := q.Kind != FCFS && end > ps.now
	if guard && p.inDefault {
		if !fits(s.freeDuring(ps.now, end), s.amount(p)) {
			return nil, false
		}
		if !s.swap.ok && s.staleAt == len(s.stale) {
			s.swap = asPlanned{fitted: true, start: ps.now, end: end, amount: s.amount(p)}
		}
	}
	var caps map[uint]resource.Cap
	if guard {
		caps = s.caps(ps, end)
		if math.IsInf(dur, 1) && len(w.starvedOn) > 0 {
			if caps == nil {
				caps = make(map[uint]resource.Cap, len(w.starvedOn))
			}
			for _, rank := range w.starvedOn {
				caps[rank] = resource.Cap{} // see walk.starvedOn
			}
		}
	}
	r, ok := s.pool.MatchCapped(p.req, q.Match, caps)
	if !ok || !guard || !(p.req.Exclusive || (p.onDefault && !p.inDefault)) {
		return r, ok
	}
	// What it takes of the planner's nodes is known only now: whole
	// nodes when exclusive, and any of them when it may also run
	// elsewhere.
	on := r
	if !s.allElig {
		on = r.SelectRanks(s.eligible)
	}
	if fits(s.freeDuring(ps.now, end), s.kinds(on)) {
		return r, true
	}
	if p.req.Exclusive && p.inDefault {
		return nil, false
	}
	// It would take what the planner's planned starts count on: it may
	// still fit on its other targets alone.
	req := p.req
	req.Targets = slices.DeleteFunc(slices.Clone(req.Targets), func(t string) bool { return t == jobspec.DefaultSession })
	return s.pool.MatchCapped(req, q.Match, caps)
}

// settle ends a queue's walk early once looking further could change
// nothing: no job can start (every job needs a core, and none is free, or
// fcfs is blocked), no planned start can be made, and every job behind has
// been annotated with its reason and has no estimate to withdraw. On a
// full machine this makes a pass cost what its head costs, not what the
// queue is long.
func (s *Scheduler) settle(ps *pass, w *walk) {
	if !w.done && s.settles(w) {
		w.done = true
	}
}

// settles is settle's rule: whether looking further in w could change
// nothing.
func (s *Scheduler) settles(w *walk) bool {
	if s.unsettled || s.fresh[w.name] > 0 || s.estimated[w.name] != w.estimates {
		return false
	}
	if !w.blocked {
		if cores, _ := s.pool.FreeCores(); cores > 0 || w.planned < w.policy.planDepth() {
			return false
		}
	}
	return true
}

// kinds is what r holds in the planner's kinds: cores, GPUs, and memory
// when the planner counts it.
func (s *Scheduler) kinds(r *rset.R) []int64 {
	_, cores, gpus := r.Counts()
	if !s.memKind {
		return []int64{int64(cores), int64(gpus)}
	}
	return []int64{int64(cores), int64(gpus), memAmount(1, r.Memory())}
}

// amount is the part of p's amount the planner counts.
func (s *Scheduler) amount(p *pending) []int64 {
	if !s.memKind {
		return p.amount[:2]
	}
	return p.amount[:]
}

// maxMemAmount bounds memory in the planner, whose sums are int64: a
// quarter of the range, far beyond any machine.
const maxMemAmount = math.MaxInt64 / 4

// memAmount is slots x per bytes as a planner amount, saturating.
func memAmount(slots int, per uint64) int64 {
	if slots <= 0 || per == 0 {
		return 0
	}
	if per > maxMemAmount/uint64(slots) {
		return maxMemAmount
	}
	return int64(uint64(slots) * per)
}

// memoryShort is the reason p, which asks for memory and did not start,
// waits when memory is what it lacks: placed as if it asked for none, it
// fits now, but some node it would take has less memory free than its
// slots there need. Nil when cores or GPUs are short too, or when it is
// something else that keeps it (a planned start it must not take).
func (s *Scheduler) memoryShort(p *pending, policy resource.Policy) error {
	req := p.req
	req.MemPerSlot = 0
	r, ok := s.pool.Match(req, policy)
	if !ok {
		return nil
	}
	for _, v := range r.Nodes() {
		st, ok := s.pool.State(v.Rank)
		if !ok {
			continue
		}
		slots := uint64(v.Cores.Count() / req.CoresPerSlot)
		if req.Exclusive {
			slots = uint64(req.PerNode())
		}
		needs := slots * p.req.MemPerSlot
		if needs <= st.FreeMemory {
			continue
		}
		where := v.Hostname
		if where == "" {
			where = fmt.Sprintf("rank %d", v.Rank)
		}
		why := fmt.Sprintf("insufficient memory: needs %s, %s free on %s", jobspec.FormatMemory(needs), jobspec.FormatMemory(st.FreeMemory), where)
		if p.memErr == nil || p.memErr.Error() != why {
			p.memErr = errors.New(why)
		}
		return p.memErr
	}
	return nil
}

// freeDuring is the planner's FreeDuring in a buffer of the scheduler's,
// valid until the next call: place asks it for most jobs it looks at.
func (s *Scheduler) freeDuring(start, end float64) []int64 {
	s.free = s.plan.AppendFreeDuring(s.free[:0], start, end)
	return s.free
}

// fits reports whether free covers amount in every kind.
func fits(free, amount []int64) bool {
	for k := range amount {
		if free[k] < amount[k] {
			return false
		}
	}
	return true
}

// hold records that a job holds r, and its span in the planner: from R's
// start until end, or until R expires when end is 0 (forever without an
// expiration).
//
// The job's span changes what planned starts are made from (the epoch),
// unless it is exactly the planned start place took out for it
// (startsAsPlanned): the planner is then as it was. Or unless place
// found the job's amount free for its whole time with none of the last
// pass's planned starts left (asPlanned.fitted): each planned start of
// this pass still fits where it is, and none could be earlier.
// TestStartAsPlannedShorterThanPlanned holds the epoch moving for a
// swap that is not fitted and not the same span.
func (s *Scheduler) hold(id fluid.ID, r *rset.R, end float64) {
	swap := s.swap
	s.swap = asPlanned{}
	end = plannedEnd(r, end)
	if s.rel != nil {
		s.addReleases(id, r, end)
	}
	if s.plan == nil || s.planAt != s.layout {
		s.epoch++
		s.running[id] = held{} // the next pass rebuilds the planner, with this job
		return
	}
	h, start, amount := s.plans(r, end)
	s.running[id] = h
	same := swap.ok && swap.start == start && swap.end == end
	// A fitted swap needs no check of the span or of the planned starts
	// left: place made it only with none of the last pass's left, over
	// [now, now + duration), or [now, forever) without a duration, and
	// grant calls hold at once (nothing between drops or takes a planned
	// start) with R starting now and ending at now + duration, or at its
	// expiration, which is no later. Outside a pass (hello) there is no
	// swap: consider clears it after every job (unswap).
	if !h.planned || !(same || swap.fitted) || !slices.Equal(swap.amount, amount) {
		s.epoch++
	}
}

// plans adds a running job's span to the planner, until its planned end
// (see hold), and returns it with the span's start and amounts.
func (s *Scheduler) plans(r *rset.R, end float64) (held, float64, []int64) {
	if !s.allElig {
		r = r.SelectRanks(s.eligible)
	}
	amount := s.kinds(r)
	if !slices.ContainsFunc(amount, func(n int64) bool { return n != 0 }) {
		return held{}, 0, nil
	}
	start := min(r.StartTime(), end)
	// A running job is recorded as it is, even over a planned start it was
	// not counted against (an fcfs queue's, or a job replayed at hello).
	span, err := s.plan.AddUnchecked(start, end, amount)
	return held{span: span, planned: err == nil, end: end}, start, amount
}

// rebuild makes the planner anew over the cores and GPUs of the up nodes
// of the default session, with every running job's span.
func (s *Scheduler) rebuild() {
	inv := s.pool.Inventory()
	elig := inv.Ranks().Difference(s.pool.Down())
	for _, ranks := range s.nodeResv {
		elig = elig.Difference(ranks)
	}
	elig = elig.Difference(s.outside)
	s.allElig = elig.Equal(inv.Ranks())
	s.eligible = elig
	// Memory is a kind of the planner only where the inventory has some,
	// so that an instance without memory plans exactly as before.
	on := inv.SelectRanks(elig)
	s.memKind = inv.Memory() > 0
	s.plan, _ = planner.New(s.kinds(on)) // counts are never negative
	s.epoch++
	s.stale, s.staleAt = s.stale[:0], 0 // they were in the planner replaced
	s.planAt = s.layout
	s.planned = s.planned[:0]
	s.eligCored = 0
	for rank := range elig.All() {
		if st, ok := s.pool.State(rank); ok && st.Cores > 0 {
			s.eligCored++
		}
	}
	for id := range s.running {
		r := s.pool.Allocated(id)
		s.running[id], _, _ = s.plans(r, plannedEnd(r, 0))
	}
}
