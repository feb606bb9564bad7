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
	if len(m.staleIDs) == 0 {
		return nil
	}
	recs := make([]*ops.Record, len(m.staleIDs))
	for i, id := range m.staleIDs {
		recs[i] = m.stale[id]
	}
	// On an error every one stays stale: saved again, they are the same.
	if err := m.records.SaveSummaries(tx, recs); err != nil {
		return err
	}
	for _, id := range m.staleIDs {
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
	return m.records.SaveSummaries(tx, []*ops.Record{e.rec})
}
