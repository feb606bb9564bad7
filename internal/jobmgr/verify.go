package jobmgr

import (
	"fmt"
	"reflect"

	"github.com/fluxq/fluxq/internal/fluid"
)

// verifyRestore makes Save copy the whole manager and Restore check its
// work against that copy, panicking on a difference: tests set it, so a
// change that forgets to touch what it changes is caught.
var verifyRestore = false

type fullCopy struct {
	entries map[fluid.ID]savedEntry
	waiters map[fluid.ID][]fluid.ID
}

func (m *Manager) copyAll() *fullCopy {
	f := &fullCopy{entries: map[fluid.ID]savedEntry{}, waiters: map[fluid.ID][]fluid.ID{}}
	for id, e := range m.active {
		f.entries[id] = savedEntry{e: e, v: *e, rec: *e.rec, job: *e.rec.Job}
	}
	for id, w := range m.waiters {
		f.waiters[id] = append([]fluid.ID(nil), w...)
	}
	return f
}

func (f *fullCopy) check(m *Manager) {
	now := m.copyAll()
	if len(now.entries) != len(f.entries) {
		panic(fmt.Sprintf("jobmgr: restore: %d active jobs, want %d", len(now.entries), len(f.entries)))
	}
	for id, want := range f.entries {
		got, ok := now.entries[id]
		if !ok || got.e != want.e {
			panic(fmt.Sprintf("jobmgr: restore: job %s is not the same entry", id))
		}
		got.v.saved, want.v.saved = 0, 0
		// The SCHED queue derives its marks anew after a Restore
		// (schedQueue.rebuild); checkListed checks them.
		got.v.listed, want.v.listed = false, false
		if !reflect.DeepEqual(got.v, want.v) || !reflect.DeepEqual(got.rec, want.rec) || !reflect.DeepEqual(got.job, want.job) {
			panic(fmt.Sprintf("jobmgr: restore: job %s differs:\n got %+v %+v %+v\nwant %+v %+v %+v", id, got.v, got.rec, got.job, want.v, want.rec, want.job))
		}
	}
	perUser := map[uint32]int{}
	for _, e := range m.active {
		perUser[e.j().UserID]++
	}
	if len(m.perUser) != len(perUser) || len(perUser) > 0 && !reflect.DeepEqual(perUser, m.perUser) {
		panic(fmt.Sprintf("jobmgr: restore: active jobs per user %v, want %v", m.perUser, perUser))
	}
	if !reflect.DeepEqual(now.waiters, f.waiters) {
		panic(fmt.Sprintf("jobmgr: restore: waiters %v, want %v", now.waiters, f.waiters))
	}
}

// checkListed panics unless the SCHED queue's list holds every job in
// SCHED that asks for nothing, each once, and every listed job has its
// mark: Save calls it when verifyRestore is set, so a move that forgets
// to relist a job that may be offered again is caught at the next turn.
func (m *Manager) checkListed() {
	q := &m.queue
	if q.unsorted {
		return // derived anew at the next waiting
	}
	in := map[*entry]bool{}
	for _, e := range q.list {
		if in[e] || !e.listed {
			panic(fmt.Sprintf("jobmgr: SCHED list holds job %s twice, or without its mark", e.id()))
		}
		in[e] = true
	}
	for _, e := range q.in {
		if e.alloc == allocIdle && !in[e] {
			panic(fmt.Sprintf("jobmgr: job %s is in SCHED asking nothing, but not listed", e.id()))
		}
	}
}

// checkHeld panics unless heldOn lists exactly the jobs on each rank that
// a derivation from the active jobs lists: Save calls it when
// verifyRestore is set, so a move that forgets to keep heldOn is caught at
// the next turn.
func (m *Manager) checkHeld() {
	want := map[uint]map[fluid.ID]bool{}
	for _, e := range m.active {
		if !e.alloc.holds() || e.rec.R == nil {
			continue
		}
		for rank := range e.rec.R.Ranks().All() {
			if want[rank] == nil {
				want[rank] = map[fluid.ID]bool{}
			}
			want[rank][e.id()] = true
		}
	}
	got := map[uint]map[fluid.ID]bool{}
	m.heldOn.all(func(rank uint, es []*entry) {
		got[rank] = map[fluid.ID]bool{}
		for _, e := range es {
			if got[rank][e.id()] {
				panic(fmt.Sprintf("jobmgr: heldOn lists job %s twice on rank %d", e.id(), rank))
			}
			got[rank][e.id()] = true
		}
	})
	if !reflect.DeepEqual(got, want) {
		panic(fmt.Sprintf("jobmgr: heldOn %v, want %v", got, want))
	}
}
