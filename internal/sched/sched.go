// Package sched is fluxq's scheduler: it answers the job manager's RFC 27
// requests from an RFC 16 resource pool, under a queue policy per queue:
// fcfs (flux-core's sched-simple), or the backfilling policies of
// Fluxion's qmanager: easy, hybrid and conservative.
//
// Scheduler is the pure core: it takes RFC 27 inputs and returns the
// responses to send, so tests and the simulator drive it without a
// connection. Engine speaks the conversation as messages, and Run is the
// driver that carries them over a wire.Conn.
//
// Two things are called reservations in the sources fluxq follows, and
// they are kept apart here by name:
//   - A node reservation (the node-reservation specification; fluxres,
//     internal/reservation) is made by an administrator: a session of
//     nodes only the jobs targeting it may use. In this package: nodeResv,
//     SetSessions, the session filter of the placement chain.
//   - A planned start is the scheduler's own promise to a blocked job,
//     what EASY and conservative backfilling call a reservation: the
//     earliest time the job fits, held in the planner so that backfilled
//     jobs cannot delay it. Slurm's backfill scheduler calls a node kept
//     for it PLANNED and keeps the word reservation for the admin kind;
//     Fluxion's qmanager calls it a reservation, whence the configuration
//     key reservation-depth (QueuePolicy.ReservationDepth), which counts
//     planned starts. In this package: planned, planDepth, planOnNodes,
//     claims; a job with one is annotated with its t_estimate.
//
// Decisions where flux-core, Fluxion and the RFC are silent:
//   - The queue is ordered by priority (high first), then submit time, then
//     job id. Each named queue (RFC 33, attributes.system.queue) is
//     scheduled by its own policy: a job that does not fit blocks (fcfs)
//     or gets a planned start ahead of (the others) only jobs of its own
//     queue.
//   - A pass considers at most a queue's queue-depth pending jobs, in
//     order (Fluxion's default 32), and can pause after any number of
//     them and resume later, so a huge queue never keeps the driver from
//     its input (see Step).
//   - A pass costs what the jobs it can change cost, not what the queue
//     is long: behind an fcfs head that blocks, or once a queue's planned
//     starts are made, a waiting job already annotated with the reason
//     it still has would only be looked at to be left as it is, and the
//     pass goes past such jobs in one step of its queue's tree (queue.go,
//     Scheduler.next), counting them toward queue-depth and asking the
//     settle rule as if it had looked at each. A job that could start
//     (it asks no more cores and GPUs than are free) or be planned is
//     still looked at.
//   - Backfill decisions use a planner (internal/planner) of the cores and
//     GPUs of the default session's up nodes over time: each running job
//     holds its resources until its R expires (start + requested time,
//     forever without a limit), and each planned start made in a pass
//     holds the job's cores and GPUs from its earliest start for its
//     requested time. Planned starts are recomputed at every pass: one
//     made in the planner alone is taken again as it was (replan) while
//     nothing it was made from has changed, which is the answer the
//     planner would give again, and the others are made anew. A job
//     starts when it fits now both on the nodes (resource.Pool.Match) and
//     in the planner for its whole requested time, so no backfilled job
//     takes what a planned start counts on. The planner counts cores and
//     GPUs, not their nodes, so the estimate of an unconstrained job that
//     needs whole nodes or several cores on one node can be early; it is
//     never a promise.
//   - A job whose constraint or targets narrow the nodes it may use (its
//     feasible set: a constraint some planner node fails, a queue's
//     requires, or a node reservation's session) gets its planned start on
//     exactly those nodes, planned node by node (nodes.go): at the
//     earliest time enough of them are free for its whole requested time,
//     on nodes chosen by the queue's match policy, which the pass then
//     claims. A later planned start sees those claims on the nodes it
//     shares with them, and a job started now may take of a claimed node
//     only what the claims leave free for its whole time. A constraint
//     that every planner node satisfies narrows nothing: the job is
//     planned as if it had none.
//   - A request that could never fit the configured inventory is denied as
//     soon as it arrives, with librlist's note ("unsatisfiable request",
//     "no resources satisfy provided constraints", "unsatisfiable
//     constrained request"). Down (drained) ranks still count as
//     configured, so a job that needs them waits instead.
//   - A waiting job a pass looks at is annotated with reason_pending, and
//     with t_estimate while it has a planned start (null once it has
//     not); only when they change. SUCCESS deletes both with JSON null
//     (RFC 27). sched-simple's debug annotation jobs_ahead is not kept:
//     it changes for every waiting job whenever one leaves the queue.
//   - GPUs are scheduled (sched-simple refuses them).
//   - Without a duration, a job's R expires when the instance's does, as
//     sched-simple does, else never (0).
//
// Node reservations (the node-reservation specification) add a session
// filter, fed by fluxq's extension of resource.acquire (see
// schedproto.Acquire): a job is placed only on the union of the sessions it
// targets (attributes.system.targets; the default session when absent),
// never on a node another node reservation holds or one outside the
// instance.
//   - Outside nodes still count when a job arrives, so a job that could fit
//     only with spare nodes waits rather than being denied.
//   - A waiting job whose targets could not hold it even if all their nodes
//     were free and up is annotated with why (resource.Pool.FitsTargets:
//     "target r1 has 1 nodes, needs 2") instead of "insufficient
//     resources", and it blocks nothing: it cannot start until a node
//     reservation changes.
//   - Growing the inventory or changing sessions retries waiting jobs.
package sched

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	json "github.com/goccy/go-json"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/planner"
	"github.com/fluxq/fluxq/internal/resource"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/schedproto"
)

// Reasons and notes shown to users, as sched-simple words them.
const (
	// ReasonInsufficient is sched.reason_pending of a job that waits.
	ReasonInsufficient = "insufficient resources"
	// NoteInternalR denies a job whose R could not be written.
	NoteInternalR = "internal scheduler error generating R"
)

// Scheduler is the scheduling core: a resource pool, a planner of it over
// time, and a queue of pending alloc requests. It is not safe for
// concurrent use.
type Scheduler struct {
	pool *resource.Pool
	// typed: a SUCCESS carries its R as a value, not encoded
	// (Options.Typed).
	typed bool
	def   QueuePolicy
	qpol  map[string]QueuePolicy
	limit int
	// queues holds each queue's pending jobs in scheduling order; a
	// pass merges them in that order.
	queues map[string]*queue
	byID   map[fluid.ID]*pending
	njobs  int
	// Per queue: pending jobs never annotated, and pending jobs with a
	// t_estimate sent. A pass may stop looking at a queue where nothing
	// can start or be planned only when neither has a job it has not
	// seen (see settle).
	fresh, estimated map[string]int
	// unsettled: the layout or the order changed since the last whole
	// pass, so every job's reason must be looked at again.
	unsettled bool
	// dirty is set by anything that can change what a pass would do, so
	// that a pass with nothing new costs nothing.
	dirty bool
	// layout counts changes of the inventory, of sessions and of down
	// ranks: FitsTargets and the planner's capacity depend on them.
	layout int
	// nodeResv (the ranks each node reservation holds, by allocation id)
	// and outside are the sessions last set; Grow applies them to the
	// nodes that join, which they may already name.
	nodeResv map[string]idset.Set
	outside  idset.Set

	plan     *planner.Planner
	memKind  bool              // the planner counts memory, its third kind
	planAt   int               // the layout plan was built for
	running  map[fluid.ID]held // jobs holding resources
	eligible idset.Set         // the ranks plan covers
	allElig  bool              // every rank is eligible
	cur      *pass             // the pass in progress, if any
	// lastPass and lastWalks are the last pass begun and its walks, made
	// again by the next begin (one pass and a walk a queue are otherwise
	// made for every pass): nothing keeps them once the pass is not cur.
	lastPass  *pass
	lastWalks []walk
	// lookAtAll makes a pass look at every job it would pass over
	// (next): for tests, which compare the two.
	lookAtAll bool
	// noReplan makes every pass remove the last pass's planned starts as
	// it begins and make them all anew (replan): for tests, which compare
	// the two.
	noReplan bool
	lastSeen int            // jobs the last whole pass looked at
	planned  []plannedStart // the planned starts of the pass, in the order made
	// stale are the last pass's planned starts, still in the planner,
	// from staleAt on: a pass takes each again while nothing it was made
	// from has changed (replan), and removes the rest before it reads
	// the planner (dropStale).
	stale   []plannedStart
	staleAt int
	// epoch counts the changes of what planned starts are made from
	// besides the pass's own: a running job's span added or removed
	// (hold, Free), the planner rebuilt, the order restarted.
	epoch uint64
	// freed: running jobs' spans were removed since current last
	// looked, the last of them ending at freedTo.
	freed   bool
	freedTo float64
	swap    asPlanned // see startsAsPlanned
	// eligCored counts the planner's nodes that have a core: a job whose
	// feasible set is that large is planned as if unconstrained.
	eligCored int

	// Node-granular planning (nodes.go): each node's releases by running
	// jobs (nil until first needed), and the feasible sets of narrowed
	// jobs, for layout feasAt.
	rel    map[uint][]release
	feas   map[string]*feasible
	feasAt int
	steps  []step  // windowFree's scratch
	free   []int64 // freeDuring's answer
}

// pending is one outstanding sched.alloc request.
type pending struct {
	queue    string // attributes.system.queue
	id       fluid.ID
	priority int64
	tsubmit  float64
	req      resource.Request
	// amount is the cores, GPUs and memory the planner counts for it;
	// the planner has the memory kind only when the inventory has memory
	// (Scheduler.amount gives the part it counts).
	amount [3]int64
	// inDefault: the job runs in the default session only, which the
	// planner covers; onDefault: the default session is among its
	// targets.
	inDefault, onDefault bool
	// loud and try are its class in its queue (Scheduler.classify,
	// queue.go): a pass cannot pass over it, and its targets can hold it.
	loud, try bool

	// The last annotation sent: announced once reason_pending was, why
	// it waited (see why), and the t_estimate sent (NaN for none).
	announced bool
	sentWhy   error
	sentEst   float64
	// memErr is the last "insufficient memory" reason made for it, kept
	// so that the same words are the same error and announced once.
	memErr error
	// fitsErr is FitsTargets' answer at layout fitsAt.
	fitsAt  int
	fitsErr error

	node node // its place in its queue (queue.go)
}

// New returns a scheduler over inventory with every rank up, scheduling
// every queue by def unless SetQueuePolicy says otherwise. limit is the
// number of concurrent alloc requests it asks the job manager for in
// sched-ready; 0 means unlimited.
func New(inventory *rset.R, def QueuePolicy, limit int) *Scheduler {
	return &Scheduler{
		pool:      resource.NewPool(inventory),
		def:       def,
		limit:     limit,
		queues:    map[string]*queue{},
		byID:      map[fluid.ID]*pending{},
		fresh:     map[string]int{},
		estimated: map[string]int{},
		running:   map[fluid.ID]held{},
		layout:    1, // a new pending job's fitsAt (0) is stale
	}
}

// SetQueuePolicy gives a queue a policy of its own.
func (s *Scheduler) SetQueuePolicy(queue string, p QueuePolicy) {
	if s.qpol == nil {
		s.qpol = map[string]QueuePolicy{}
	}
	s.qpol[queue] = p
	s.restart()
}

func (s *Scheduler) policyOf(queue string) QueuePolicy {
	if p, ok := s.qpol[queue]; ok {
		return p
	}
	return s.def
}

// Pool returns the resource pool, for inspection.
func (s *Scheduler) Pool() *resource.Pool { return s.pool }

// Pending returns the number of alloc requests waiting.
func (s *Scheduler) Pending() int { return s.njobs }

// Ready returns the job-manager.sched-ready request for the configured
// limit.
func (s *Scheduler) Ready() schedproto.Ready {
	if s.limit <= 0 {
		return schedproto.Ready{Mode: schedproto.ModeUnlimited}
	}
	return schedproto.Ready{Mode: schedproto.ModeLimited, Limit: min(s.limit, schedproto.LimitMax)}
}

// SetDown marks ranks down (drained or offline): jobs that need them wait.
func (s *Scheduler) SetDown(ranks idset.Set) {
	s.pool.SetDown(ranks)
	s.layout++
	s.restart()
}

// SetUp marks ranks up again.
func (s *Scheduler) SetUp(ranks idset.Set) {
	s.pool.SetUp(ranks)
	s.layout++
	s.restart()
}

// Grow adds nodes that joined the inventory (spare nodes), up, in the
// sessions last set; their ranks must be new, and on error nothing
// changes.
func (s *Scheduler) Grow(r *rset.R) error {
	if err := s.pool.Grow(r); err != nil {
		return err
	}
	s.pool.SetSessions(s.nodeResv, s.outside)
	s.layout++
	s.restart()
	return nil
}

// SetSessions replaces the sessions: the ranks each node reservation holds
// (by allocation id) and the ranks outside the instance; every other rank
// is in the default session.
func (s *Scheduler) SetSessions(nodeResv map[string]idset.Set, outside idset.Set) {
	s.nodeResv, s.outside = nodeResv, outside
	s.pool.SetSessions(nodeResv, outside)
	s.layout++
	s.restart()
}

// Hello marks the resources of a job the job manager replays as allocated
// (RFC 27 hello). If its R clashes with the inventory or with another
// job, the part that can be marked is, and the error says what could not:
// sched-simple would raise an exception on the job, which this protocol
// cannot, and marking less than the job holds is the lesser harm.
func (s *Scheduler) Hello(h schedproto.HelloJob) error {
	if len(h.R) == 0 {
		return fmt.Errorf("hello: job %s: no R", h.ID)
	}
	r, err := rset.Parse(h.R)
	if err != nil {
		return fmt.Errorf("hello: job %s: %w", h.ID, err)
	}
	s.dirty = true
	if err := s.pool.Allocate(h.ID, r); err != nil {
		part := r.Intersection(s.pool.Inventory()).Difference(s.pool.AllocatedAll())
		if perr := s.pool.Allocate(h.ID, part); perr != nil {
			return fmt.Errorf("hello: job %s: %v", h.ID, perr)
		}
		s.hold(h.ID, part, 0)
		return fmt.Errorf("hello: job %s: %v (marked %s allocated)", h.ID, err, part)
	}
	s.hold(h.ID, r, 0)
	return nil
}

// ErrDuplicate is returned by Alloc for a job that already has a pending
// request or holds resources: RFC 27 allows one sched.alloc per job.
var ErrDuplicate = errors.New("job already has an alloc request or resources")

// Alloc takes a sched.alloc request. A request that could never be
// satisfied is answered at once with DENY; any other waits for a pass.
// The error is for protocol violations, which deserve an error response.
func (s *Scheduler) Alloc(a schedproto.Alloc) ([]schedproto.AllocResponse, error) {
	if _, ok := s.byID[a.ID]; ok || s.pool.Holds(a.ID) {
		return nil, fmt.Errorf("sched.alloc: job %s: %w", a.ID, ErrDuplicate)
	}
	deny := func(note string) []schedproto.AllocResponse {
		return []schedproto.AllocResponse{{ID: a.ID, Type: schedproto.Deny, Note: note}}
	}
	js := a.Parsed
	if js == nil {
		var err error
		if js, err = jobspec.Parse(a.Jobspec); err != nil {
			return deny(err.Error()), nil
		}
	}
	req, err := resource.RequestFromJobspec(js)
	if err != nil {
		return deny(err.Error()), nil
	}
	if err := s.pool.Feasible(req); err != nil {
		return deny(err.Error()), nil
	}
	p := &pending{
		id: a.ID, priority: a.Priority, tsubmit: a.TSubmit, queue: js.Attributes.System.Queue, req: req,
		amount:    [3]int64{int64(req.NSlots) * int64(req.CoresPerSlot), int64(req.NSlots) * int64(req.GPUsPerSlot), memAmount(req.NSlots, req.MemPerSlot)},
		inDefault: defaultOnly(req.Targets),
		onDefault: req.Targets == nil || slices.Contains(req.Targets, jobspec.DefaultSession),
		sentEst:   math.NaN(),
	}
	p.loud, p.try = true, true // never annotated
	s.queueOf(p.queue).insert(p)
	s.byID[a.ID] = p
	s.njobs++
	s.fresh[p.queue]++
	s.dirty = true
	return nil, nil
}

// defaultOnly reports whether targets name the default session alone.
func defaultOnly(targets []string) bool {
	return len(targets) == 0 || (len(targets) == 1 && targets[0] == jobspec.DefaultSession)
}

// compare orders the queue: priority descending, then submit time, then
// id, so the order is total and does not depend on arrival.
func compare(a, b *pending) int {
	switch {
	case a.priority != b.priority:
		if a.priority > b.priority {
			return -1
		}
		return 1
	case a.tsubmit != b.tsubmit:
		if a.tsubmit < b.tsubmit {
			return -1
		}
		return 1
	case a.id != b.id:
		if a.id < b.id {
			return -1
		}
		return 1
	}
	return 0
}

// Cancel withdraws a pending alloc request (sched.cancel) and returns its
// CANCEL response; a job without one is ignored, as RFC 27 says.
func (s *Scheduler) Cancel(id fluid.ID) []schedproto.AllocResponse {
	p, ok := s.byID[id]
	if !ok {
		return nil
	}
	s.remove(p)
	return []schedproto.AllocResponse{{ID: id, Type: schedproto.Cancel}}
}

func (s *Scheduler) remove(p *pending) {
	q := s.queues[p.queue]
	q.remove(p)
	if q.Len() == 0 {
		delete(s.queues, p.queue)
	}
	delete(s.byID, p.id)
	s.njobs--
	if !p.announced {
		s.fresh[p.queue]--
	}
	if !math.IsNaN(p.sentEst) {
		s.estimated[p.queue]--
	}
	s.dirty = true
}

// queueOf returns a queue, made on first use.
func (s *Scheduler) queueOf(name string) *queue {
	q, ok := s.queues[name]
	if !ok {
		q = &queue{}
		s.queues[name] = q
	}
	return q
}

// Prioritize applies new priorities (sched.prioritize); ids without a
// pending request are ignored, as RFC 27 allows.
func (s *Scheduler) Prioritize(p schedproto.Prioritize) {
	changed := false
	for _, pair := range p.Jobs {
		if j, ok := s.byID[fluid.ID(pair[0])]; ok && j.priority != int64(pair[1]) {
			q := s.queues[j.queue]
			q.remove(j) // the key changes: out, then in again
			j.priority = int64(pair[1])
			q.insert(j)
			changed = true
		}
	}
	if changed {
		s.restart()
	}
}

// Free releases everything job id holds (sched.free) and returns the
// response. A job that holds nothing is answered all the same, since what
// the job manager asks for (the job holds nothing) is true; the error
// reports it.
func (s *Scheduler) Free(id fluid.ID) (schedproto.JobID, error) {
	resp := schedproto.JobID{ID: id}
	if !s.pool.Holds(id) {
		return resp, fmt.Errorf("sched.free: job %s holds no resources", id)
	}
	s.dirty = true
	if s.rel != nil {
		s.dropReleases(id, s.pool.Allocated(id))
	}
	if h, ok := s.running[id]; ok {
		delete(s.running, id)
		if h.planned && s.plan != nil && s.planAt == s.layout {
			_ = s.plan.Remove(h.span) // the span was added with the job
			// Whether it changes the epoch depends on when the planner
			// is next read (current).
			if !s.freed || h.end > s.freedTo {
				s.freed, s.freedTo = true, h.end
			}
		} else {
			s.epoch++
		}
	}
	return resp, s.pool.Release(id, nil)
}

// restart drops the pass in progress: what it was walking changed under
// it in a way it cannot follow (order, capacity). The next Step begins a
// new pass.
func (s *Scheduler) restart() {
	s.cur = nil
	s.epoch++
	s.dirty = true
	s.unsettled = true
}

// fitsTargets is Pool.FitsTargets for p, computed once per layout. An
// answer worded as before keeps the old error, so the job is not
// annotated again.
func (s *Scheduler) fitsTargets(p *pending) error {
	if p.fitsAt == s.layout { // small enough to inline: every pass asks
		return p.fitsErr
	}
	return s.refit(p)
}

func (s *Scheduler) refit(p *pending) error {
	err := s.pool.FitsTargets(p.req)
	if err != nil && p.fitsErr != nil && err.Error() == p.fitsErr.Error() {
		err = p.fitsErr
	}
	p.fitsAt, p.fitsErr = s.layout, err
	return err
}

// grant allocates r to p and returns its SUCCESS response, or a DENY if
// its R cannot be written (nothing is then allocated).
func (s *Scheduler) grant(p *pending, r *rset.R, now float64) schedproto.AllocResponse {
	expiration, end := 0.0, 0.0
	if p.req.Duration > 0 {
		end = now + p.req.Duration
		// A duration too small to move the clock (the simulator's zero
		// seconds) ends the job now for the planner; R's expiration must
		// still be after its start (RFC 20).
		expiration = max(end, math.Nextafter(now, math.Inf(1)))
	} else if e := s.pool.Inventory().Expiration(); e > now {
		expiration = e
	}
	r = r.WithTimes(now, expiration)
	resp := schedproto.AllocResponse{ID: p.id, Type: schedproto.Success}
	var err error
	if s.typed {
		// R goes as a value, checked as its encoding would be.
		resp.Granted, err = r, r.Check()
	} else {
		resp.R, err = r.MarshalJSON()
	}
	if err == nil {
		err = s.pool.Allocate(p.id, r)
	}
	if err != nil {
		return schedproto.AllocResponse{ID: p.id, Type: schedproto.Deny, Note: NoteInternalR}
	}
	s.hold(p.id, r, end)
	summary := r.String()
	resp.Annotations = granted(summary)
	if s.typed {
		resp.Annotated = grantedValue(summary)
	}
	return resp
}

// grantedValue is what granted(summary) decodes to, for a typed message
// (schedproto.AllocResponse.Annotated); TestAnnotatedDecodes holds the
// two equal.
func grantedValue(summary string) map[string]any {
	return map[string]any{"sched": map[string]any{"resource_summary": summary, "reason_pending": nil, "t_estimate": nil}}
}

// waitingValue is what waiting(reason, est, clear) decodes to.
func waitingValue(reason string, est float64, clear bool) map[string]any {
	sched := map[string]any{"reason_pending": reason}
	switch {
	case !math.IsNaN(est):
		sched["t_estimate"] = est
	case clear:
		sched["t_estimate"] = nil
	}
	return map[string]any{"sched": sched}
}

// granted is the SUCCESS annotation: the summary, and null for the keys a
// waiting job had (RFC 27: null deletes).
func granted(summary string) json.RawMessage {
	b := make([]byte, 0, 82+len(summary))
	b = append(b, `{"sched":{"resource_summary":`...)
	b = appendJSONString(b, summary)
	b = append(b, `,"reason_pending":null,"t_estimate":null}}`...)
	return b
}

// appendJSONString appends s as a JSON string: as it is, quoted, when it
// is plain ASCII that needs no escape (a summary always is: rank and
// child names, idsets), else as encoding it gives.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// waiting is the ANNOTATE annotation of a job waiting for reason: with its
// estimated start est, or null for it when clear (a job that had one and
// has none now), or neither.
func waiting(reason string, est float64, clear bool) json.RawMessage {
	b := make([]byte, 0, 96)
	if reason == ReasonInsufficient {
		b = append(b, `{"sched":{"reason_pending":"`+ReasonInsufficient+`"`...)
	} else {
		q, _ := json.Marshal(reason) // a string always marshals
		b = append(b, `{"sched":{"reason_pending":`...)
		b = append(b, q...)
	}
	switch {
	case !math.IsNaN(est):
		b = append(b, `,"t_estimate":`...)
		b = strconv.AppendFloat(b, est, 'f', -1, 64)
	case clear:
		b = append(b, `,"t_estimate":null`...)
	}
	b = append(b, `}}`...)
	return b
}

// sameWhy is a == b without a runtime call when either is nil, the case of
// nearly every waiting job.
func sameWhy(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a == b
}

// sameEst compares estimates, NaN (none) equal to NaN.
func sameEst(a, b float64) bool {
	return a == b || (math.IsNaN(a) && math.IsNaN(b))
}
