package state

import (
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/queue"
	"github.com/fluxq/fluxq/internal/reservation"
	"github.com/fluxq/fluxq/internal/store"
)

// SubmitRequest is one job to submit.
type SubmitRequest struct {
	Jobspec []byte // V1 jobspec, JSON or YAML
	// Parsed, when set, is the jobspec already built and validated
	// (jobspec.FromOptions), and Jobspec is not read: a simulation makes
	// every job's this way, and encoding each to parse it again was a
	// tenth of a replay. Submit takes it over (admission fills in its
	// queue's defaults): the caller must not use it again.
	Parsed  *jobspec.Jobspec
	UserID  uint32 // the submitter, from the caller's credentials
	Owner   bool   // the submitter is the instance owner
	Urgency int
	Flags   int
	// Who is the requester for session targeting (reservations); nil is
	// the submitting user as a tool.
	Who *reservation.Requester
	// Unjudged leaves to the scheduler whether the resources could ever
	// satisfy the job: a simulation replays a trace's denials as the
	// scheduler's, rather than refusing the trace.
	Unjudged bool
	// MaxActive caps the active jobs the submitter may hold once the
	// batch is stored ([access] guest-max-active-jobs, for a guest; 0 is
	// no cap), and Active is how many it holds now (the job manager's
	// count: the store is not walked per submission).
	MaxActive, Active int
	// Again names the job this one is made again from (fluxq resubmit, a
	// retry), 0 for none; Retry is which retry of its chain it is (0: no
	// retry). Both go in the submit event's context (job.CtxAgainOf).
	Again fluid.ID
	Retry int
}

// ErrGuestUrgency refuses a guest's submission above the default
// urgency (flux-core's job-ingest refuses it too).
var ErrGuestUrgency = api.Errorf(api.CodePermission, "permission denied: only the instance owner may submit with urgency above %d", job.UrgencyGuestMax)

// Submit validates and stores new jobs, each with its submit and validate
// events (RFC 21), and returns their ids in order. It is all or nothing:
// one invalid request rejects the batch and nothing is stored, because the
// caller's transaction is rolled back on error.
//
// st is the reservation state to check targets against and to record new
// owners and derived children in; nil reads it from the store when a
// request needs it.
func Submit(tx *store.Tx, now time.Time, reqs []SubmitRequest, st *reservation.State) ([]fluid.ID, []*Record, error) {
	return submit(tx, now, reqs, st, true, nil)
}

// SubmitUnstored is Submit for a job manager whose records go to a sink
// (jobmgr.Config.Records, the simulator's): the same checks, the same ids
// and the same records, each holding its jobspec as admitted (Raw, and
// parsed in Parsed), and
// nothing of the jobs stored but the last id given, so that ids go on.
//
// qs are the queues' configuration and states as QueueSet and QueueStates
// read them from tx: the caller's, read once, when nothing changes them
// between its submissions (a replay has no administrator). Reading and
// compiling them for each batch was a tenth of a replay's allocation,
// when most of its batches are one job.
func SubmitUnstored(tx *store.Tx, now time.Time, reqs []SubmitRequest, st *reservation.State, qs Queues) ([]fluid.ID, []*Record, error) {
	return submit(tx, now, reqs, st, false, &qs)
}

// Queues are the queues' configuration and states, as a submission
// checks them.
type Queues struct {
	Set    *queue.Set
	States map[string]queue.State
}

func submit(tx *store.Tx, now time.Time, reqs []SubmitRequest, st *reservation.State, stored bool, qs *Queues) ([]fluid.ID, []*Record, error) {
	gen, err := fluid.NewGenerator(tx.Epoch(), 0, fluid.ID(tx.LastJobID()))
	if err != nil {
		return nil, nil, fmt.Errorf("job id generator: %w", err)
	}
	// First, and for the batch whole: a guest over its cap is refused
	// before 50,000 jobspecs are parsed.
	if err := checkActiveCap(reqs); err != nil {
		return nil, nil, err
	}
	// Check every request before writing anything, so a refused batch
	// leaves nothing behind even inside a larger transaction.
	if qs == nil {
		set, err := QueueSet(tx)
		if err != nil {
			return nil, nil, err
		}
		states, err := QueueStates(tx, set)
		if err != nil {
			return nil, nil, err
		}
		qs = &Queues{Set: set, States: states}
	}
	set, states := qs.Set, qs.States
	users := map[uint32]queue.User{}
	specs := make([]*jobspec.Jobspec, len(reqs))
	us := make([]queue.User, len(reqs))
	// What each request gathers on the way, in one array for the batch
	// (a replay submits a few jobs at a time, and each slice made for a
	// batch was an allocation for every job or two).
	per := make([]requestState, len(reqs))
	names := map[uint32]string{} // user names, looked up once per batch
	parsed := parseAll(reqs)
	// A request's checks come in this order: urgency, jobspec, targets,
	// queue, resources, dependencies; and the refusal returned is the first in
	// request order, as if each request were checked whole in turn. The
	// queue's admission, which is most of the work and needs nothing
	// shared, runs for all the requests at once, between the checks in
	// order before it and those after: bad is the first refused so far.
	bad, badErr := len(reqs), error(nil)
	for i, req := range reqs {
		if err := checkRequest(req, parsed[i]); err != nil {
			bad, badErr = i, err
			break
		}
		js := parsed[i].js
		var err error
		if per[i].spawn, err = target(tx, &st, js, req, names); err != nil {
			bad, badErr = i, err
			break
		}
		specs[i] = js
		us[i] = submitter(set, req.UserID, req.Owner, users)
	}
	// RFC 33: the queue is assigned, its defaults applied and its
	// limits and access checked here, the one place both the socket
	// and the direct path submit through; what is stored is the
	// jobspec as admitted.
	canons, i, err := admitAll(set, states, specs[:bad], us)
	if err != nil {
		bad, badErr = i, err
	}
	feas := newFeasibility(tx)
	for i := range bad {
		// After admission: the queue's requires are constraints now.
		if !reqs[i].Unjudged {
			if err := feas.check(specs[i]); err != nil {
				bad, badErr = i, err
				break
			}
		}
		if per[i].deps, err = dependencies(tx, specs[i]); err != nil {
			bad, badErr = i, err
			break
		}
	}
	if badErr != nil {
		return nil, nil, badErr
	}
	ids := make([]fluid.ID, len(reqs))
	for i := range reqs {
		id, err := gen.Next(now)
		if id == 0 && err == nil {
			// A FLUID of 0 (the first millisecond of a new store) is
			// valid, but reads as "no job" everywhere: skip it.
			id, err = gen.Next(now)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("job id generator: %w", err)
		}
		ids[i] = id
	}
	// Each job's record is made on its own (a large batch on every
	// core), then stored whole, in order: jobspec, eventlog and summary.
	ts := Timestamp(now)
	recs := make([]*Record, len(reqs))
	each(len(reqs), func(i int) {
		req := reqs[i]
		// The record and its job in one allocation: they live as long.
		both := &recordJob{j: job.Job{ID: ids[i]}}
		both.rec = Record{Job: &both.j, Spec: SpecOf(specs[i]), Raw: canons[i]}
		rec := &both.rec
		if !stored {
			rec.Parsed = specs[i]
		}
		// The parsed jobspec is done with: the record keeps its Spec, the
		// store its canonical bytes. Let go of it now rather than when
		// Submit returns, so that the collector can take a batch's parsed
		// jobspecs back (about 50 MB for 10,000) while the batch is stored
		// and committed: the peak of a burst is lower.
		specs[i], parsed[i].js = nil, nil
		submit := eventlog.Event{Timestamp: ts, Name: job.EventSubmit, Context: map[string]any{
			"urgency": req.Urgency, "userid": req.UserID, "flags": req.Flags, "version": EventlogVersion,
		}}
		if p := per[i].spawn.parent; p != 0 {
			submit.Context["parent"] = p.String()
		}
		if req.Again != 0 {
			submit.Context[job.CtxAgainOf] = req.Again.String()
		}
		if req.Retry > 0 {
			submit.Context[job.CtxRetry] = req.Retry
		}
		events := []eventlog.Event{submit, {Timestamp: ts, Name: job.EventValidate}}
		// Dependencies are recorded as the job is validated, as Flux's
		// dependency plugins do; the job manager removes each when met.
		for _, d := range per[i].deps {
			events = append(events, eventlog.Event{Timestamp: ts, Name: job.EventDependencyAdd, Context: map[string]any{"description": d.Description()}})
		}
		if !stored {
			for _, ev := range events {
				if per[i].err = Apply(rec, ev); per[i].err != nil {
					return
				}
			}
			recs[i] = rec
			return
		}
		var log []byte
		for _, ev := range events {
			line, err := apply(rec, ev)
			if err != nil {
				per[i].err = err
				return
			}
			log = append(log, line...)
		}
		sum, err := summary(rec)
		if err != nil {
			per[i].err = err
			return
		}
		recs[i] = rec
		per[i].values = map[string][]byte{store.JobJobspec: canons[i], store.JobEventlog: log, store.JobSummary: sum, store.JobWaitable: waitable}
	})
	for i := range reqs {
		if per[i].err != nil {
			return nil, nil, per[i].err
		}
		if stored {
			if err := tx.CreateJob(uint64(ids[i]), per[i].values); err != nil {
				return nil, nil, err
			}
		}
		if per[i].spawn.track {
			st.Accepted(ids[i], per[i].spawn.parent, per[i].spawn.into)
		}
	}
	if st != nil {
		if err := SaveReservations(tx, st); err != nil {
			return nil, nil, err
		}
	}
	if len(ids) > 0 {
		if err := tx.SetLastJobID(uint64(ids[len(ids)-1])); err != nil {
			return nil, nil, err
		}
	}
	return ids, recs, nil
}

// recordJob is a new job's Record and the Job it points to, made together.
type recordJob struct {
	rec Record
	j   job.Job
}

// requestState is what submit gathers for one request of a batch.
type requestState struct {
	spawn  spawned
	deps   []job.Dependency
	err    error
	values map[string][]byte // what is stored, when it is
}

// checkActiveCap refuses a batch that would take a submitter past its
// cap of active jobs ([access] guest-max-active-jobs): the jobs of one
// user in the batch are counted together, so a --cc submission is taken
// or refused whole.
func checkActiveCap(reqs []SubmitRequest) error {
	var batch map[uint32]int
	for _, req := range reqs {
		if req.MaxActive <= 0 {
			continue
		}
		if batch == nil {
			batch = map[uint32]int{}
		}
		batch[req.UserID]++
	}
	for _, req := range reqs {
		n, ok := batch[req.UserID]
		if !ok {
			continue
		}
		delete(batch, req.UserID) // said once per user
		if total := req.Active + n; total > req.MaxActive {
			jobs := "1 job"
			if n != 1 {
				jobs = fmt.Sprintf("%d jobs", n)
			}
			return fmt.Errorf("%s would give user %s %d active jobs, over [access] guest-max-active-jobs = %d", jobs, UserName(req.UserID), total, req.MaxActive)
		}
	}
	return nil
}

// checkRequest is a request's first checks: its urgency, its jobspec,
// the bounds on its times and its output limit.
func checkRequest(req SubmitRequest, p parsed) error {
	if req.Urgency < job.UrgencyMin || req.Urgency > job.UrgencyMax {
		return fmt.Errorf("urgency value is out of range")
	}
	if req.Urgency > job.UrgencyGuestMax && !req.Owner {
		return ErrGuestUrgency
	}
	if p.err != nil {
		return p.err
	}
	// The edge for a hostile raw jobspec: beyond the bounds, a job's
	// expiration is past what its record can encode.
	if err := p.js.CheckBounds(); err != nil {
		return err
	}
	if _, err := p.js.Retries(); err != nil {
		return err
	}
	return checkOutputLimit(p.js, req.Owner)
}

// checkOutputLimit refuses a shell option output.limit that is not a size,
// or that would let a guest's job keep more output in the state directory
// than jobspec.GuestOutputLimit (the exec agent holds a guest's job to it
// whatever the jobspec says; a refusal at submission says so in time).
func checkOutputLimit(js *jobspec.Jobspec, owner bool) error {
	n, set, err := jobspec.OutputLimit(js.Attributes.System.Shell.Options)
	if err != nil || !set || owner || n <= jobspec.GuestOutputLimit {
		return err
	}
	return fmt.Errorf("output.limit: %v is over the 10M of output a guest's job may keep", jobspec.FormatSize(n))
}

// admitAll admits each jobspec to its queue and returns them as
// admitted, in canonical JSON; or the first refusal and its index. A
// large batch is admitted on every core: each jobspec stands alone, and
// the set and states are only read.
func admitAll(set *queue.Set, states map[string]queue.State, specs []*jobspec.Jobspec, us []queue.User) ([][]byte, int, error) {
	canons := make([][]byte, len(specs))
	if serial(len(specs)) {
		// In order, without the closure each would be given (made on
		// the heap for every batch, as each may hand it to goroutines):
		// the first refusal is the same.
		for i := range specs {
			var err error
			if canons[i], err = set.AdmitCanonical(specs[i], states, us[i]); err != nil {
				return nil, i, err
			}
		}
		return canons, len(specs), nil
	}
	errs := make([]error, len(specs))
	each(len(specs), func(i int) {
		canons[i], errs[i] = set.AdmitCanonical(specs[i], states, us[i])
	})
	for i, err := range errs {
		if err != nil {
			return nil, i, err
		}
	}
	return canons, len(specs), nil
}

// serial reports whether each would call fn for n in this goroutine: a
// caller with a small batch (a replay's, a submission's) loops itself,
// and makes no closure for each.
func serial(n int) bool { return eachWorkers(n) == 1 }

// eachWorkers is how many goroutines each runs n calls on.
func eachWorkers(n int) int { return min(runtime.GOMAXPROCS(0), max(1, n/256)) }

// each calls fn for 0..n-1, a large n on every core.
func each(n int, fn func(i int)) {
	workers := eachWorkers(n)
	if workers == 1 {
		// Here: a goroutine of its own would grow its stack anew for
		// each small batch (copystack was 3% of a replay, which submits
		// a few jobs at a time).
		for i := range n {
			fn(i)
		}
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				fn(i)
			}
		}()
	}
	wg.Wait()
}

// parsed is one request's jobspec, parsed.
type parsed struct {
	js  *jobspec.Jobspec
	err error
}

// parseAll parses the requests' jobspecs, a large batch on every core:
// parsing is much of the work of storing a job, and each jobspec stands
// alone. The caller looks at the errors in order.
func parseAll(reqs []SubmitRequest) []parsed {
	out := make([]parsed, len(reqs))
	if serial(len(reqs)) { // see admitAll
		for i := range reqs {
			out[i] = parseOne(&reqs[i])
		}
		return out
	}
	each(len(reqs), func(i int) { out[i] = parseOne(&reqs[i]) })
	return out
}

// parseOne is a request's jobspec, parsed unless it comes parsed.
func parseOne(req *SubmitRequest) parsed {
	if js := req.Parsed; js != nil {
		return parsed{js: js}
	}
	js, err := jobspec.Parse(req.Jobspec)
	return parsed{js: js, err: err}
}

// dependencies reads a jobspec's RFC 26 dependencies; a job named as a
// target must exist.
func dependencies(tx *store.Tx, js *jobspec.Jobspec) ([]job.Dependency, error) {
	var out []job.Dependency
	for _, jd := range js.Attributes.System.Dependencies {
		d, err := job.ParseDependency(jd.Scheme, jd.Value)
		if err != nil {
			return nil, err
		}
		if d.Scheme != job.BeginTime && !tx.HasJob(uint64(d.Target)) {
			return nil, fmt.Errorf("dependency %s:%s: %w", jd.Scheme, jd.Value, ErrUnknownJob)
		}
		out = append(out, d)
	}
	return out, nil
}

// spawned is what session targeting decided for one submission.
type spawned struct {
	track  bool     // the reservation state must record the job
	parent fluid.ID // the requesting job, for a job submitted from inside one
	into   []string // the reservations it was spawned into
}

// target applies the node-reservation specification's targeting rules to
// a submission: its attributes.system.targets (PMIX_SPAWN_TARGET) are
// checked for ownership and replaced by the sessions they resolve to,
// which is what the scheduler filters on. A job submitted from inside a
// job has that job as its parent. *st is loaded on first need.
func target(tx *store.Tx, st **reservation.State, js *jobspec.Jobspec, req SubmitRequest, names map[uint32]string) (spawned, error) {
	targets, err := js.Targets()
	if err != nil {
		return spawned{}, err
	}
	app := req.Who != nil && req.Who.Class == reservation.Application
	if targets == nil && !app {
		return spawned{}, nil
	}
	if *st == nil {
		if *st, err = ReservationsOrEmpty(tx); err != nil {
			return spawned{}, err
		}
	}
	var who reservation.Requester
	if req.Who != nil {
		who = *req.Who
	} else {
		name, ok := names[req.UserID]
		if !ok {
			name = UserName(req.UserID)
			names[req.UserID] = name
		}
		who = reservation.Requester{Class: reservation.Tool, NS: reservation.ToolNS(name)}
	}
	sp := reservation.Spawn{Targets: targets}
	out := spawned{track: true}
	if app {
		out.parent = who.NS.Job
		if prec, err := Load(tx, out.parent); err == nil {
			sp.ParentTargets = prec.Spec.Targets
		}
	}
	sessions, into, err := (*st).Target(sp, who)
	if err != nil {
		return spawned{}, err
	}
	out.into = into
	if sessions == nil {
		delete(js.Attributes.System.Extra, jobspec.TargetsKey)
	} else {
		if js.Attributes.System.Extra == nil {
			js.Attributes.System.Extra = map[string]any{}
		}
		list := make([]any, len(sessions))
		for i, s := range sessions {
			list[i] = s
		}
		js.Attributes.System.Extra[jobspec.TargetsKey] = list
	}
	return out, nil
}

// ReservationsOrEmpty reads the reservation state, or an empty one when
// no instance has run yet (no inventory: no reservation can exist).
func ReservationsOrEmpty(tx *store.Tx) (*reservation.State, error) {
	support, err := ReservationSupport(tx)
	if err != nil {
		return nil, err
	}
	if tx.Inventory() == nil {
		return reservation.New(support, nil, nil, nil, tx.LastAlloc())
	}
	return LoadReservations(tx, support)
}

// ReservationSupport reads the [reservation] unsupported switches the
// loop last saved.
func ReservationSupport(tx *store.Tx) (reservation.Support, error) {
	raw := tx.ReservationConfig()
	if raw == nil {
		return reservation.Support{}, nil
	}
	var cfg struct {
		Unsupported []string `json:"unsupported"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return reservation.Support{}, fmt.Errorf("stored [reservation] config: %w", err)
	}
	return reservation.ParseUnsupported(cfg.Unsupported)
}
