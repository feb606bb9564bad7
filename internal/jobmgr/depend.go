package jobmgr

import (
	"slices"
	"time"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/fsd"
	"github.com/fluxq/fluxq/internal/job"
	ops "github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// resolve checks a DEPEND job's outstanding dependencies, removing each
// that is met and raising a dependency exception for one that never can
// be (RFC 21 dependency-remove, exception). progressed reports that an
// event was posted.
func (m *Manager) resolve(tx *store.Tx, e *entry) (progressed bool, err error) {
	for _, desc := range slices.Clone(e.j().Dependencies) {
		d, err := job.ParseDescription(desc)
		if err != nil {
			return true, m.raiseDependency(tx, e, err.Error())
		}
		met := false
		if d.Scheme == job.BeginTime {
			met = m.now() >= d.Time
			if !met && (m.wake == 0 || d.Time < m.wake) {
				m.wake = d.Time
			}
		} else {
			if !slices.Contains(m.waiters[d.Target], e.id()) {
				m.touchWaiters(d.Target)
				m.waiters[d.Target] = append(m.waiters[d.Target], e.id())
			}
			var why string
			met, why = d.Resolve(m.jobOf(tx, d.Target))
			if why != "" {
				return true, m.raiseDependency(tx, e, why)
			}
		}
		if met {
			if err := m.post(tx, e, job.EventDependencyRemove, map[string]any{"description": desc}); err != nil {
				return true, err
			}
			progressed = true
		}
	}
	return progressed, nil
}

func (m *Manager) raiseDependency(tx *store.Tx, e *entry, note string) error {
	return m.post(tx, e, job.EventException, map[string]any{"type": "dependency", "severity": 0, "note": note})
}

// jobOf is any job's state, active or not; nil when there is none.
func (m *Manager) jobOf(tx *store.Tx, id fluid.ID) *job.Job {
	if e, ok := m.active[id]; ok {
		return e.j()
	}
	rec, err := ops.Load(tx, id)
	if err != nil {
		return nil
	}
	return rec.Job
}

// NextWake is when a begin-time dependency next falls due (zero: none).
func (m *Manager) NextWake() time.Time {
	wake := m.wake
	if d := m.res.NextDeadline(); d > 0 && (wake == 0 || d < wake) {
		wake = d
	}
	if wake == 0 {
		return time.Time{}
	}
	// Not time.Unix(0, wake*1e9): past year 2262 it wraps around to a
	// wake in the past, and the loop would spin on it.
	return fsd.Time(wake)
}

// Tick re-checks time dependencies; the loop calls it at NextWake.
func (m *Manager) Tick(tx *store.Tx) error {
	if err := m.reservationTick(tx); err != nil {
		return err
	}
	m.wake = 0
	for _, e := range m.sortedActive() {
		if e.j().State == job.Depend {
			if err := m.advance(tx, e); err != nil {
				return err
			}
		}
	}
	return nil
}
