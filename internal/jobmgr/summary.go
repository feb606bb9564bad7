package jobmgr

import (
	"github.com/fluxq/fluxq/internal/fluid"
	ops "github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// DeferSummaries makes the manager save a changed job's listing summary
// once per transaction instead of once per event: a job commonly gets
// three to five events in one loop turn, and its summary is encoded and
// stored anew for each. The caller must then call SaveSummaries before
// every commit, and before anything in the transaction reads summaries
// from the store. The loop does.
func (m *Manager) DeferSummaries() {
	m.deferSummaries = true
	if m.stale == nil {
		m.stale = map[fluid.ID]*ops.Record{}
	}
}

// SaveSummaries stores the summaries of the jobs changed since it was
// last called (with DeferSummaries).
func (m *Manager) SaveSummaries(tx *store.Tx) error {
	for i, id := range m.staleIDs {
		if err := m.records.SaveSummary(tx, m.stale[id]); err != nil {
			m.staleIDs = m.staleIDs[i:]
			return err
		}
		delete(m.stale, id)
	}
	m.staleIDs = m.staleIDs[:0]
	return nil
}

// saveSummary stores e's summary now, or marks it to be saved with the
// others of the transaction.
func (m *Manager) saveSummary(tx *store.Tx, e *entry) error {
	if m.deferSummaries {
		if _, ok := m.stale[e.id()]; !ok {
			m.staleIDs = append(m.staleIDs, e.id())
		}
		m.stale[e.id()] = e.rec
		return nil
	}
	return m.records.SaveSummary(tx, e.rec)
}
