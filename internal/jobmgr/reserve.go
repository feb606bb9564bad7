package jobmgr

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/reservation"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/schedproto"
	ops "github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// Exception types raised by the reservation rules (docs/reservations.md
// decisions 1 and 8).
const (
	ExceptionNodeDeparted = "node-departed"
	ExceptionAllocGone    = "alloc-gone"
	// EventTimeoutWarning is the event an application requester gets in
	// its own eventlog (decision 10).
	EventTimeoutWarning = "alloc-timeout-warning"
)

// Reservations is the instance's reservation state, which the manager
// keeps in memory and saves in the turn that changes it.
func (m *Manager) Reservations() *reservation.State { return m.res }

// Alive reports whether a job has not reached INACTIVE: the manager holds
// every job that has not.
func (m *Manager) Alive(id fluid.ID) bool {
	_, ok := m.active[id]
	return ok
}

// Reserve serves an allocation request (create, extend, release,
// reclaim) from who, a process of user uid, and acts on what it changed.
// A user other than the instance owner reserves within the Guests
// limits, and only for its own namespaces.
func (m *Manager) Reserve(tx *store.Tx, req reservation.Request, who reservation.Requester, uid uint32) (*reservation.Reservation, error) {
	if uid != m.cfg.Owner {
		req.Quota = m.quota(tx, uid)
	}
	req.Idle = m.idleRanks()
	if req.Op == reservation.OpNew {
		owner := who.NS
		if req.Target != nil {
			owner = *req.Target
		}
		if owner.IsJob() {
			req.Descendants = m.descendants(tx, owner.Job)
		}
	}
	req.TargetAlive = func(ns reservation.Namespace) (bool, bool) {
		if m.Alive(ns.Job) {
			return true, true
		}
		return tx.HasJob(uint64(ns.Job)), false
	}
	ch, err := m.res.Allocate(req, who, m.now())
	if err != nil {
		return nil, err
	}
	return ch.Reservation, m.applyReservations(tx, ch)
}

// quota is the reservation quota of user uid: the Guests limits, over
// its tool namespace and its jobs.
func (m *Manager) quota(tx *store.Tx, uid uint32) *reservation.Quota {
	name := ops.UserName(uid)
	return &reservation.Quota{Limits: m.cfg.Guests, User: name, Owns: func(ns reservation.Namespace) bool {
		if !ns.IsJob() {
			return ns.Tool == name
		}
		if e, ok := m.active[ns.Job]; ok {
			return e.j().UserID == uid
		}
		rec, err := ops.Load(tx, ns.Job)
		return err == nil && rec.Job.UserID == uid
	}}
}

// descendants are the live jobs submitted from inside id, at any depth:
// derived children from the start of a reservation made for id. A chain
// may pass through jobs that already ended, which the store still knows.
func (m *Manager) descendants(tx *store.Tx, id fluid.ID) []fluid.ID {
	parents := map[fluid.ID]fluid.ID{}
	parentOf := func(j fluid.ID) fluid.ID {
		if p, ok := parents[j]; ok {
			return p
		}
		var p fluid.ID
		if e, ok := m.active[j]; ok {
			p = e.j().Parent
		} else if rec, err := ops.Load(tx, j); err == nil {
			p = rec.Job.Parent
		}
		parents[j] = p
		return p
	}
	var out []fluid.ID
	for _, e := range m.active {
		// Parents are submitted before their children, so a chain is
		// never longer than the jobs there are.
		for p, n := e.j().Parent, 0; p != 0 && n <= len(m.active); p, n = parentOf(p), n+1 {
			if p == id {
				out = append(out, e.id())
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// AddSpares puts hosts in the scheduler's pool, outside the instance
// until a reservation takes them.
func (m *Manager) AddSpares(tx *store.Tx, hosts, cores, gpus string) ([]string, error) {
	r, err := ops.AddSpares(tx, m.res, hosts, cores, gpus)
	if err != nil {
		return nil, err
	}
	// A host added again after a removal is already known to the
	// scheduler; only new ranks grow its inventory.
	grow := r.SelectRanks(r.Ranks().Difference(m.inv.Ranks()))
	if !grow.IsEmpty() {
		inv, err := m.inv.Union(grow)
		if err != nil {
			return nil, err
		}
		m.inv = inv
		if m.sched.acquire {
			raw, err := grow.MarshalJSON()
			if err != nil {
				return nil, err
			}
			m.respondSched(m.sched.acquireReq, schedproto.Acquire{Resources: raw})
		}
	}
	m.sendSessions()
	return r.Nodelist().Expand(), nil
}

// RemoveSpares takes spare hosts out of the scheduler's pool. An offline
// manager refuses a node in the instance: its jobs could not be stopped.
func (m *Manager) RemoveSpares(tx *store.Tx, names []string) error {
	ch, err := m.res.RemoveNodes(names)
	if err != nil {
		return err
	}
	if m.cfg.Offline && len(ch.Departed) > 0 {
		// The state changed in memory only; the caller's transaction and
		// this manager go with the error.
		return fmt.Errorf("node %s is in the instance: remove it while fluxsched runs, so its jobs can be stopped", strings.Join(ch.Departed, ","))
	}
	return m.applyReservations(tx, ch)
}

// Teardown ends every reservation and sends every spare node back
// (fluxsched run --purge).
func (m *Manager) Teardown(tx *store.Tx) error {
	return m.applyReservations(tx, m.res.Teardown(m.now()))
}

// idleRanks is what a reservation may take from the default session:
// ranks no active job holds anything on, and that are not drained.
func (m *Manager) idleRanks() func(uint) bool {
	busy := map[uint]bool{}
	for _, e := range m.active {
		if r := e.rec.R; r != nil && e.alloc.holds() && e.exec != execReleased {
			for rank := range r.Ranks().All() {
				busy[rank] = true
			}
		}
	}
	return func(rank uint) bool { return !busy[rank] && !m.down.Contains(rank) }
}

// jobEnded applies the namespace-termination dispositions for a job that
// just reached INACTIVE.
func (m *Manager) jobEnded(tx *store.Tx, id fluid.ID) error {
	if m.res == nil {
		return nil
	}
	return m.applyReservations(tx, m.res.JobEnded(id, m, m.now()))
}

// reservationTick relays the warnings that fell due and ends the
// reservations that expired.
func (m *Manager) reservationTick(tx *store.Tx) error {
	if m.res == nil {
		return nil
	}
	warns, ch := m.res.Tick(m.now())
	for _, w := range warns {
		ok, err := m.deliver(tx, w)
		if err != nil {
			return err
		}
		m.res.Delivered(w, ok)
	}
	return m.applyReservations(tx, ch)
}

// deliver relays a timeout warning to the requester alone: an event in
// an application's own eventlog, or a tool's event list. It reports false
// when the requester is gone.
func (m *Manager) deliver(tx *store.Tx, w reservation.Warning) (bool, error) {
	if w.To.IsJob() {
		e, ok := m.active[w.To.Job]
		if !ok {
			return false, nil
		}
		ctx := map[string]any{"alloc_id": w.AllocID, "time_remaining": w.TimeRemaining}
		if w.ReqID != "" {
			ctx["req_id"] = w.ReqID
		}
		return true, m.post(tx, e, EventTimeoutWarning, ctx)
	}
	raw, err := json.Marshal(w)
	if err != nil {
		return false, err
	}
	if _, err := tx.AppendToolEvent(w.To.Tool, raw); err != nil {
		return false, err
	}
	m.out.Reservations = true
	return true, nil
}

// applyReservations saves what a reservation change did and acts on it:
// the scheduler hears of the new sessions, jobs on departed nodes are
// killed, and pending jobs whose every target ended fail.
func (m *Manager) applyReservations(tx *store.Tx, ch reservation.Change) error {
	if err := ops.SaveReservations(tx, m.res); err != nil {
		return err
	}
	m.out.Reservations = true
	if ch.Sessions || len(ch.Departed) > 0 || len(ch.Joined) > 0 {
		m.sendSessions()
	}
	if len(ch.Departed) > 0 {
		var ranks []uint
		for _, name := range ch.Departed {
			if n, ok := m.res.Node(name); ok {
				ranks = append(ranks, n.Rank)
			}
		}
		gone := idset.Of(ranks...)
		hit := m.matching(func(e *entry) bool {
			r := e.rec.R
			return r != nil && !e.j().Exception.Fatal() && !r.Ranks().Intersection(gone).IsEmpty()
		})
		for _, e := range hit {
			note := fmt.Sprintf("node %s left the instance", strings.Join(hostsOf(e.rec.R, e.rec.R.Ranks().Intersection(gone)), ","))
			if err := m.raise(tx, e, ExceptionNodeDeparted, note); err != nil {
				return err
			}
		}
	}
	if len(ch.Ended) > 0 {
		lost := m.matching(func(e *entry) bool {
			j := e.j()
			if j.Allocated || j.State&(job.Pending|job.New) == 0 || j.Exception.Fatal() {
				return false
			}
			return m.res.TargetsLost(e.rec.Spec.Targets)
		})
		for _, e := range lost {
			targets := e.rec.Spec.Targets
			note := fmt.Sprintf("every reservation it targets has ended (%s)", strings.Join(targets, ","))
			if err := m.raise(tx, e, ExceptionAllocGone, note); err != nil {
				return err
			}
		}
	}
	return nil
}

// matching returns the active jobs for which keep holds, in the order
// jobs are served, sorting only those.
func (m *Manager) matching(keep func(*entry) bool) []*entry {
	var out []*entry
	for _, e := range m.active {
		if keep(e) {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, k int) bool { return before(out[i], out[k]) })
	return out
}

// raise posts a fatal exception on behalf of the instance.
func (m *Manager) raise(tx *store.Tx, e *entry, typ, note string) error {
	if err := m.post(tx, e, job.EventException, map[string]any{"type": typ, "severity": 0, "note": note}); err != nil {
		return err
	}
	return m.advance(tx, e)
}

func hostsOf(r *rset.R, ranks idset.Set) []string {
	var out []string
	for rank := range ranks.All() {
		if n, ok := r.Node(rank); ok && n.Hostname != "" {
			out = append(out, n.Hostname)
		} else {
			out = append(out, fmt.Sprintf("rank %d", rank))
		}
	}
	return out
}

// sendSessions tells the scheduler which ranks each reservation holds
// and which are outside the instance.
func (m *Manager) sendSessions() {
	if !m.sched.acquire || m.res == nil {
		return
	}
	sessions, outside := m.sessions()
	m.respondSched(m.sched.acquireReq, schedproto.Acquire{Sessions: sessions, Outside: &outside})
	m.dirty = true
}

func (m *Manager) sessions() (map[string]idset.Set, idset.Set) {
	out := map[string]idset.Set{}
	if m.res == nil {
		return out, idset.Set{}
	}
	reserved, outside := m.res.Sessions()
	for id, ranks := range reserved {
		out[id] = idset.Of(ranks...)
	}
	return out, idset.Of(outside...)
}
