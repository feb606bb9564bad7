package jobmgr

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	ops "github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// BenchmarkSaveSummariesAfterBurst is a loop turn's summaries once a burst
// of 4,000 submissions has come and gone: each turn a few jobs changed.
func BenchmarkSaveSummariesAfterBurst(b *testing.B) {
	st, err := store.Open(filepath.Join(b.TempDir(), "fluxq.db"), store.Options{Timeout: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	es := make([]*entry, 4000)
	for i := range es {
		id := fluid.ID(i + 1)
		es[i] = &entry{rec: &ops.Record{Job: &job.Job{ID: id, State: job.Run, TSubmit: 1764196464.5}}}
	}
	m := &Manager{}
	m.DeferSummaries()
	err = st.Update(func(tx *store.Tx) error {
		for _, e := range es {
			if err := tx.CreateJob(uint64(e.id()), nil); err != nil {
				return err
			}
			if err := m.saveSummary(tx, e); err != nil {
				return err
			}
		}
		if err := m.SaveSummaries(tx); err != nil {
			return err
		}
		b.ReportAllocs()
		b.ResetTimer()
		i := 0
		for b.Loop() {
			for range 3 {
				if err := m.saveSummary(tx, es[i%len(es)]); err != nil {
					return err
				}
				i++
			}
			if err := m.SaveSummaries(tx); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}
