package ops

import (
	"encoding/json"
	"fmt"
	"time"

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
	UserID  uint32 // the submitter, from the caller's credentials
	Owner   bool   // the submitter is the instance owner
	Urgency int
	Flags   int
	// Who is the requester for session targeting (reservations); nil is
	// the submitting user as a tool.
	Who *reservation.Requester
}

// ErrGuestUrgency refuses a guest's submission above the default
// urgency (flux-core's job-ingest refuses it too).
var ErrGuestUrgency = fmt.Errorf("permission denied: only the instance owner may submit with urgency above %d", job.UrgencyGuestMax)

// Submit validates and stores new jobs, each with its submit and validate
// events (RFC 21), and returns their ids in order. It is all or nothing:
// one invalid request rejects the batch and nothing is stored, because the
// caller's transaction is rolled back on error.
//
// st is the reservation state to check targets against and to record new
// owners and derived children in; nil reads it from the store when a
// request needs it.
func Submit(tx *store.Tx, now time.Time, reqs []SubmitRequest, st *reservation.State) ([]fluid.ID, []*Record, error) {
	gen, err := fluid.NewGenerator(tx.Epoch(), 0, fluid.ID(tx.LastJobID()))
	if err != nil {
		return nil, nil, fmt.Errorf("job id generator: %w", err)
	}
	// Check every request before writing anything, so a refused batch
	// leaves nothing behind even inside a larger transaction.
	set, err := QueueSet(tx)
	if err != nil {
		return nil, nil, err
	}
	states, err := QueueStates(tx, set)
	if err != nil {
		return nil, nil, err
	}
	users := map[uint32]queue.User{}
	specs := make([]*jobspec.Jobspec, len(reqs))
	canons := make([][]byte, len(reqs))
	deps := make([][]job.Dependency, len(reqs))
	spawns := make([]spawned, len(reqs))
	names := map[uint32]string{} // user names, looked up once per batch
	for i, req := range reqs {
		if req.Urgency < job.UrgencyMin || req.Urgency > job.UrgencyMax {
			return nil, nil, fmt.Errorf("urgency value is out of range")
		}
		if req.Urgency > job.UrgencyGuestMax && !req.Owner {
			return nil, nil, ErrGuestUrgency
		}
		js, err := jobspec.Parse(req.Jobspec)
		if err != nil {
			return nil, nil, err
		}
		if spawns[i], err = target(tx, &st, js, req, names); err != nil {
			return nil, nil, err
		}
		// RFC 33: the queue is assigned, its defaults applied and its
		// limits and access checked here, the one place both the socket
		// and the direct path submit through; what is stored is the
		// jobspec as admitted.
		if canons[i], err = set.AdmitCanonical(js, states, submitter(set, req.UserID, req.Owner, users)); err != nil {
			return nil, nil, err
		}
		specs[i] = js
		if deps[i], err = dependencies(tx, js); err != nil {
			return nil, nil, err
		}
	}
	ids := make([]fluid.ID, 0, len(reqs))
	recs := make([]*Record, 0, len(reqs))
	ts := Timestamp(now)
	for i, req := range reqs {
		id, err := gen.Next(now)
		if id == 0 && err == nil {
			// A FLUID of 0 (the first millisecond of a new store) is
			// valid, but reads as "no job" everywhere: skip it.
			id, err = gen.Next(now)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("job id generator: %w", err)
		}
		if err := tx.CreateJob(uint64(id), map[string][]byte{store.JobJobspec: canons[i]}); err != nil {
			return nil, nil, err
		}
		rec := &Record{Job: &job.Job{ID: id}, Jobspec: specs[i], Raw: canons[i]}
		submit := eventlog.Event{Timestamp: ts, Name: "submit", Context: map[string]any{
			"urgency": req.Urgency, "userid": req.UserID, "flags": req.Flags, "version": EventlogVersion,
		}}
		if p := spawns[i].parent; p != 0 {
			submit.Context["parent"] = p.String()
		}
		events := []eventlog.Event{submit, {Timestamp: ts, Name: "validate"}}
		// Dependencies are recorded as the job is validated, as Flux's
		// dependency plugins do; the job manager removes each when met.
		for _, d := range deps[i] {
			events = append(events, eventlog.Event{Timestamp: ts, Name: "dependency-add", Context: map[string]any{"description": d.Description()}})
		}
		for _, ev := range events {
			if err := Append(tx, rec, ev); err != nil {
				return nil, nil, err
			}
		}
		if err := SaveSummary(tx, rec); err != nil {
			return nil, nil, err
		}
		ids = append(ids, id)
		recs = append(recs, rec)
		if spawns[i].track {
			st.Accepted(id, spawns[i].parent, spawns[i].into)
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
			sp.ParentTargets, _ = prec.Jobspec.Targets()
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
