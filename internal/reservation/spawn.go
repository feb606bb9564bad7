package reservation

import (
	"slices"

	"github.com/fluxq/fluxq/internal/fluid"
)

// Spawn is a job submission as the targeting rules see it.
type Spawn struct {
	// Targets is PMIX_SPAWN_TARGET: allocation ids and "default"; nil when
	// absent.
	Targets []string
	// ParentTargets are the targets of the requesting job, for an
	// application's untargeted job (docs/reservations.md decision 6).
	ParentTargets []string
}

// Target checks a submission's targets left to right and resolves them
// (spec "Spawn targeting behavior", "Ownership model"). Every entry must
// name the default session, a live session whose owner set holds the
// requester, or come from the scheduler; one that does not rejects the
// whole submission, never narrowing it. It returns the sessions the job
// may map onto ("default" for the default session; a shared allocation's
// nodes are in the default session, so naming it resolves there) and the
// reservations the job is spawned into, whose owner sets it joins.
//
// Without targets a tool's job uses the default session, and an
// application's its parent's first live reservation (joining its owner
// set), else the default session.
func (s *State) Target(sp Spawn, who Requester) (sessions []string, into []string, err error) {
	targets := sp.Targets
	if !s.Support.Has(AttrSpawnTarget) {
		targets = nil
	}
	if len(targets) == 0 {
		if who.Class == Application && len(sp.ParentTargets) > 0 {
			if r, ok := s.res[sp.ParentTargets[0]]; ok && r.Live() {
				return []string{s.sessionOf(r)}, []string{r.ID}, nil
			}
		}
		return nil, nil, nil
	}
	for _, t := range targets {
		if t == DefaultSession {
			continue
		}
		r, ok := s.res[t]
		if !ok {
			return nil, nil, reject(NotFound, "allocation %q does not exist", t)
		}
		if !r.Live() {
			return nil, nil, reject(NotFound, "allocation %q ended (%s)", t, r.EndReason)
		}
		if err := mayAct(r, who); err != nil {
			return nil, nil, err
		}
	}
	for _, t := range targets {
		if t != DefaultSession {
			into = append(into, t)
			t = s.sessionOf(s.res[t])
		}
		if !slices.Contains(sessions, t) {
			sessions = append(sessions, t)
		}
	}
	if len(sessions) == 1 && sessions[0] == DefaultSession {
		sessions = nil // only the default session: as if untargeted
	}
	return sessions, into, nil
}

// sessionOf is the session r's nodes are in.
func (s *State) sessionOf(r *Reservation) string {
	if r.Share {
		return DefaultSession
	}
	return r.ID
}

// Accepted records a submitted job: it joins the owner set of every
// reservation it was spawned into (ownership is not transitive: only
// those), and becomes a derived child of every live reservation whose
// owning namespace or derived child is its parent, or that it was spawned
// into (docs/reservations.md decisions 4 and 5). parent is 0 for a tool's job.
func (s *State) Accepted(id, parent fluid.ID, into []string) {
	for _, rid := range s.order {
		r := s.res[rid]
		if !r.Live() {
			continue
		}
		changed := false
		if slices.Contains(into, rid) {
			changed = r.addOwner(JobNS(id))
			changed = r.addChild(id) || changed
		} else if parent != 0 && (r.Owner == JobNS(parent) || slices.Contains(r.Children, parent)) {
			changed = r.addChild(id)
		}
		if changed {
			s.markRes(r)
		}
	}
}

// TargetsLost reports whether a pending job whose sessions are targets
// can never run: every reservation it targets has ended and it does not
// also target the default session (docs/reservations.md decision 8).
func (s *State) TargetsLost(targets []string) bool {
	if len(targets) == 0 {
		return false
	}
	for _, t := range targets {
		if t == DefaultSession {
			return false
		}
		if r, ok := s.res[t]; ok && r.Live() {
			return false
		}
	}
	return true
}
