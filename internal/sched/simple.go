// Package sched is fluxq's first scheduler, the behaviour of flux-core's
// sched-simple: it answers the job manager's RFC 27 requests from an RFC 16
// resource pool, strictly first come first served.
//
// Simple is the pure core: it takes RFC 27 inputs and returns the
// responses to send, so tests drive it without a connection. Run is the
// driver that speaks the conversation on a wire.Conn.
//
// Behaviour follows sched-simple, with these decisions where it and the
// RFC are silent:
//   - The queue is ordered by priority (high first), then submit time, then
//     job id. Scheduling walks it in order and stops at the first job that
//     does not fit: no backfill, so a big job is never starved by small ones.
//   - Each named queue (RFC 33, attributes.system.queue) is its own FIFO:
//     a job that does not fit blocks only the jobs behind it in its queue,
//     and jobs_ahead counts only its queue. A queue may have its own match
//     policy (its policy.scheduler.match-policy).
//   - A request that could never fit the configured inventory is denied as
//     soon as it arrives, with librlist's note ("unsatisfiable request",
//     "no resources satisfy provided constraints", "unsatisfiable
//     constrained request"); sched-simple only notices when the job reaches
//     the head of the queue. Down (drained) ranks still count as configured,
//     so a job that needs them waits instead.
//   - Waiting jobs are annotated with reason_pending and jobs_ahead (their
//     place in the queue, from 0), as sched-simple does under its
//     DEBUG_ANNOTATE_REASON_PENDING flag, but always, and only when the
//     annotation changed. SUCCESS deletes both with JSON null (RFC 27).
//   - GPUs are scheduled (sched-simple refuses them).
//   - Without a duration, a job's R expires when the instance's does, as
//     sched-simple does, else never (0).
//
// Node reservations (the node-reservation specification) add a session
// filter, fed by fluxq's extension of resource.acquire (see
// schedproto.Acquire): a job is placed only on the union of the sessions it
// targets (attributes.system.targets; the default session when absent),
// never on a node another reservation holds or one outside the instance.
//   - Outside nodes still count when a job arrives, so a job that could fit
//     only with spare nodes waits rather than being denied.
//   - A waiting job whose targets could not hold it even if all their nodes
//     were free and up is annotated with why (resource.Pool.FitsTargets:
//     "target r1 has 1 nodes, needs 2") instead of "insufficient
//     resources".
//   - Such a job does not block the jobs behind it in its queue: it cannot
//     start until a reservation changes, and blocking the whole queue
//     behind a too-small reservation would starve everyone. FIFO is strict
//     otherwise, for targeted and untargeted jobs alike.
//   - Growing the inventory or changing sessions retries waiting jobs.
package sched

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/jobspec"
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

// Simple is the sched-simple core: a resource pool and a queue of pending
// alloc requests. It is not safe for concurrent use.
type Simple struct {
	pool    *resource.Pool
	policy  resource.Policy
	qpolicy map[string]resource.Policy // per-queue match policies
	limit   int
	queue   []*pending // in scheduling order
	pending map[fluid.ID]*pending
	// dirty is set by anything that can change what Schedule would do, so
	// that a pass with nothing new costs nothing.
	dirty bool
	// layout counts changes of the inventory and of sessions, the only
	// things FitsTargets depends on, so its answer for a waiting job is
	// kept until the next one.
	layout int
	// reserved and outside are the sessions last set; Grow applies them
	// to the nodes that join, which they may already name.
	reserved map[string]idset.Set
	outside  idset.Set
}

// pending is one outstanding sched.alloc request.
type pending struct {
	// What every pass reads comes first, together, so that a pass over
	// many waiting jobs touches one cache line of each.
	queue string // attributes.system.queue
	// The last annotation sent: jobs_ahead, or -1 for none yet, and why
	// the job waited (see why).
	ahead   int
	sentWhy error
	// why is this pass's reason_pending: nil for ReasonInsufficient, else
	// fitsErr. An error, not its text, so that a pass compares two words
	// per waiting job, not two strings (FitsTargets' errors are pointers,
	// so comparing them cannot panic).
	why error
	// fitsErr is FitsTargets' answer at layout fitsAt.
	fitsAt  int
	fitsErr error

	id       fluid.ID
	priority int64
	tsubmit  float64
	req      resource.Request
}

// NewSimple returns a scheduler over inventory with every rank up. limit is
// the number of concurrent alloc requests it asks the job manager for in
// sched-ready; 0 means unlimited.
func NewSimple(inventory *rset.R, policy resource.Policy, limit int) *Simple {
	return &Simple{
		pool:    resource.NewPool(inventory),
		policy:  policy,
		limit:   limit,
		pending: map[fluid.ID]*pending{},
		layout:  1, // a new pending job's fitsAt (0) is stale
	}
}

// SetQueuePolicy gives a queue a match policy of its own.
func (s *Simple) SetQueuePolicy(queue string, p resource.Policy) {
	if s.qpolicy == nil {
		s.qpolicy = map[string]resource.Policy{}
	}
	s.qpolicy[queue] = p
}

// Pool returns the resource pool, for inspection.
func (s *Simple) Pool() *resource.Pool { return s.pool }

// Pending returns the number of alloc requests waiting.
func (s *Simple) Pending() int { return len(s.queue) }

// Ready returns the job-manager.sched-ready request for the configured
// limit.
func (s *Simple) Ready() schedproto.Ready {
	if s.limit <= 0 {
		return schedproto.Ready{Mode: schedproto.ModeUnlimited}
	}
	return schedproto.Ready{Mode: schedproto.ModeLimited, Limit: min(s.limit, schedproto.LimitMax)}
}

// SetDown marks ranks down (drained or offline): jobs that need them wait.
func (s *Simple) SetDown(ranks idset.Set) {
	s.pool.SetDown(ranks)
	s.dirty = true
}

// SetUp marks ranks up again.
func (s *Simple) SetUp(ranks idset.Set) {
	s.pool.SetUp(ranks)
	s.dirty = true
}

// Grow adds nodes that joined the inventory (spare nodes), up, in the
// sessions last set; their ranks must be new, and on error nothing
// changes.
func (s *Simple) Grow(r *rset.R) error {
	if err := s.pool.Grow(r); err != nil {
		return err
	}
	s.pool.SetSessions(s.reserved, s.outside)
	s.layout++
	s.dirty = true
	return nil
}

// SetSessions replaces the sessions: the ranks each reservation holds (by
// allocation id) and the ranks outside the instance; every other rank is
// in the default session.
func (s *Simple) SetSessions(reserved map[string]idset.Set, outside idset.Set) {
	s.reserved, s.outside = reserved, outside
	s.pool.SetSessions(reserved, outside)
	s.layout++
	s.dirty = true
}

// Hello marks the resources of a job the job manager replays as allocated
// (RFC 27 hello). If its R clashes with the inventory or with another
// job, the part that can be marked is, and the error says what could not:
// sched-simple would raise an exception on the job, which this protocol
// cannot, and marking less than the job holds is the lesser harm.
func (s *Simple) Hello(h schedproto.HelloJob) error {
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
		return fmt.Errorf("hello: job %s: %v (marked %s allocated)", h.ID, err, part)
	}
	return nil
}

// ErrDuplicate is returned by Alloc for a job that already has a pending
// request or holds resources: RFC 27 allows one sched.alloc per job.
var ErrDuplicate = errors.New("job already has an alloc request or resources")

// Alloc takes a sched.alloc request. A request that could never be
// satisfied is answered at once with DENY; any other waits for Schedule.
// The error is for protocol violations, which deserve an error response.
func (s *Simple) Alloc(a schedproto.Alloc) ([]schedproto.AllocResponse, error) {
	if _, ok := s.pending[a.ID]; ok || !s.pool.Allocated(a.ID).IsEmpty() {
		return nil, fmt.Errorf("sched.alloc: job %s: %w", a.ID, ErrDuplicate)
	}
	deny := func(note string) []schedproto.AllocResponse {
		return []schedproto.AllocResponse{{ID: a.ID, Type: schedproto.Deny, Note: note}}
	}
	js, err := jobspec.Parse(a.Jobspec)
	if err != nil {
		return deny(err.Error()), nil
	}
	req, err := resource.RequestFromJobspec(js)
	if err != nil {
		return deny(err.Error()), nil
	}
	if err := s.pool.Feasible(req); err != nil {
		return deny(err.Error()), nil
	}
	p := &pending{id: a.ID, priority: a.Priority, tsubmit: a.TSubmit, queue: js.Attributes.System.Queue, req: req, ahead: -1}
	i, _ := slices.BinarySearchFunc(s.queue, p, compare)
	s.queue = slices.Insert(s.queue, i, p)
	s.pending[a.ID] = p
	s.dirty = true
	return nil, nil
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
func (s *Simple) Cancel(id fluid.ID) []schedproto.AllocResponse {
	p, ok := s.pending[id]
	if !ok {
		return nil
	}
	s.remove(p)
	return []schedproto.AllocResponse{{ID: id, Type: schedproto.Cancel}}
}

func (s *Simple) remove(p *pending) {
	if i, ok := slices.BinarySearchFunc(s.queue, p, compare); ok {
		s.queue = slices.Delete(s.queue, i, i+1)
	}
	delete(s.pending, p.id)
	s.dirty = true
}

// Prioritize applies new priorities (sched.prioritize); ids without a
// pending request are ignored, as RFC 27 allows.
func (s *Simple) Prioritize(p schedproto.Prioritize) {
	changed := false
	for _, pair := range p.Jobs {
		if j, ok := s.pending[fluid.ID(pair[0])]; ok && j.priority != int64(pair[1]) {
			j.priority = int64(pair[1])
			changed = true
		}
	}
	if changed {
		slices.SortFunc(s.queue, compare)
		s.dirty = true
	}
}

// Free releases everything job id holds (sched.free) and returns the
// response. A job that holds nothing is answered all the same, since what
// the job manager asks for (the job holds nothing) is true; the error
// reports it.
func (s *Simple) Free(id fluid.ID) (schedproto.JobID, error) {
	resp := schedproto.JobID{ID: id}
	if s.pool.Allocated(id).IsEmpty() {
		return resp, fmt.Errorf("sched.free: job %s holds no resources", id)
	}
	s.dirty = true
	return resp, s.pool.Release(id, nil)
}

// Schedule walks the queue in order, allocating each job that fits now;
// a job that does not fit blocks every job behind it in its own queue
// (strict FIFO per queue, as sched-simple), unless its targets are too
// small for it. now is the start time written into R. It returns the
// SUCCESS, DENY and ANNOTATE responses to send, in order.
func (s *Simple) Schedule(now float64) []schedproto.AllocResponse {
	if !s.dirty {
		return nil
	}
	s.dirty = false
	var out []schedproto.AllocResponse
	var blocked map[string]bool // queues whose head did not fit
	kept := s.queue[:0]
	for _, p := range s.queue {
		isBlocked := blocked[p.queue]
		// A job known not to fit its targets cannot match: skip the walk.
		if !isBlocked && (p.fitsAt != s.layout || p.fitsErr == nil) {
			if r, ok := s.pool.Match(p.req, s.policyOf(p.queue)); ok {
				out = append(out, s.grant(p, r, now))
				delete(s.pending, p.id)
				continue
			}
		}
		// A job its targets could never hold blocks nothing.
		if p.why = s.fitsTargets(p); p.why == nil && !isBlocked {
			if blocked == nil {
				blocked = map[string]bool{}
			}
			blocked[p.queue] = true
		}
		kept = append(kept, p)
	}
	clear(s.queue[len(kept):])
	s.queue = kept
	// Jobs of a queue mostly come in runs (often there is one queue), so
	// the count of the current run's queue is kept aside: a map operation
	// per run, not two per job.
	var ahead map[string]int
	run, n := "", 0
	for k, p := range s.queue {
		if k == 0 || p.queue != run {
			if k > 0 {
				if ahead == nil {
					ahead = map[string]int{}
				}
				ahead[run] = n
			}
			run, n = p.queue, ahead[p.queue]
		}
		i := n
		n++
		if p.ahead == i && sameWhy(p.sentWhy, p.why) {
			continue
		}
		p.ahead, p.sentWhy = i, p.why
		reason := ReasonInsufficient
		if p.why != nil {
			reason = p.why.Error()
		}
		out = append(out, schedproto.AllocResponse{ID: p.id, Type: schedproto.Annotate, Annotations: waiting(i, reason)})
	}
	return out
}

// sameWhy is a == b without a runtime call when either is nil, the case of
// nearly every waiting job.
func sameWhy(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a == b
}

// fitsTargets is Pool.FitsTargets for p, computed once per layout. An
// answer worded as before keeps the old error, so the job is not
// annotated again.
func (s *Simple) fitsTargets(p *pending) error {
	if p.fitsAt == s.layout { // small enough to inline: every pass asks
		return p.fitsErr
	}
	return s.refit(p)
}

func (s *Simple) refit(p *pending) error {
	err := s.pool.FitsTargets(p.req)
	if err != nil && p.fitsErr != nil && err.Error() == p.fitsErr.Error() {
		err = p.fitsErr
	}
	p.fitsAt, p.fitsErr = s.layout, err
	return err
}

func (s *Simple) policyOf(queue string) resource.Policy {
	if p, ok := s.qpolicy[queue]; ok {
		return p
	}
	return s.policy
}

// grant allocates r to p and returns its SUCCESS response, or a DENY if
// its R cannot be written (nothing is then allocated).
func (s *Simple) grant(p *pending, r *rset.R, now float64) schedproto.AllocResponse {
	expiration := 0.0
	if p.req.Duration > 0 {
		expiration = now + p.req.Duration
	} else if e := s.pool.Inventory().Expiration(); e > now {
		expiration = e
	}
	r = r.WithTimes(now, expiration)
	raw, err := r.MarshalJSON()
	if err == nil {
		err = s.pool.Allocate(p.id, r)
	}
	if err != nil {
		return schedproto.AllocResponse{ID: p.id, Type: schedproto.Deny, Note: NoteInternalR}
	}
	return schedproto.AllocResponse{ID: p.id, Type: schedproto.Success, R: raw, Annotations: granted(r.String())}
}

// granted is the SUCCESS annotation: the summary, and null for the keys a
// waiting job had (RFC 27: null deletes).
func granted(summary string) json.RawMessage {
	q, _ := json.Marshal(summary) // a string always marshals
	b := make([]byte, 0, 80+len(q))
	b = append(b, `{"sched":{"resource_summary":`...)
	b = append(b, q...)
	b = append(b, `,"reason_pending":null,"jobs_ahead":null}}`...)
	return b
}

// waiting is the ANNOTATE annotation of a job with ahead jobs before it,
// waiting for reason.
func waiting(ahead int, reason string) json.RawMessage {
	b := make([]byte, 0, 96)
	if reason == ReasonInsufficient {
		b = append(b, `{"sched":{"reason_pending":"`+ReasonInsufficient+`","jobs_ahead":`...)
	} else {
		q, _ := json.Marshal(reason) // a string always marshals
		b = append(b, `{"sched":{"reason_pending":`...)
		b = append(b, q...)
		b = append(b, `,"jobs_ahead":`...)
	}
	b = strconv.AppendInt(b, int64(ahead), 10)
	b = append(b, `}}`...)
	return b
}
