package state

import (
	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/store"
)

// waitable is the value of a job's store.JobWaitable key.
var waitable = []byte{1}

// Reap takes uid's waitable jobs that have ended, as Flux's job manager
// hands a zombie to one waiter: it deletes their waitable marks and
// returns their ids in submit order. With p.All it takes every one of
// uid's; otherwise those of p.IDs (an id that is not uid's, not ended,
// already taken or unknown is passed over: a wait that reports a job
// takes it if it can, and was answered whether or not it could).
//
// A job is waitable by its submitter only, from its submission: a wait
// by the instance owner on a guest's job leaves it for the guest.
func Reap(tx *store.Tx, uid uint32, p api.ReapParams) ([]fluid.ID, error) {
	var took []fluid.ID
	take := func(id uint64, get func(string) []byte) error {
		if get(store.JobWaitable) == nil {
			return nil
		}
		var s struct {
			State  job.State `json:"state"`
			UserID uint32    `json:"userid"`
		}
		if err := decodeSummary(fluid.ID(id), get, &s); err != nil {
			return err
		}
		if s.UserID != uid || s.State != job.Inactive {
			return nil
		}
		took = append(took, fluid.ID(id))
		return nil
	}
	if p.All {
		err := tx.ForEachJob(0, func(id uint64, get func(string) []byte) (bool, error) {
			return true, take(id, get)
		})
		if err != nil {
			return nil, err
		}
		return took, unmark(tx, took)
	}
	seen := make(map[fluid.ID]bool, len(p.IDs))
	for _, id := range p.IDs {
		if seen[id] {
			continue
		}
		seen[id] = true
		get := func(key string) []byte {
			v, _ := tx.JobValue(uint64(id), key)
			return v
		}
		if !tx.HasJob(uint64(id)) {
			continue
		}
		if err := take(uint64(id), get); err != nil {
			return nil, err
		}
	}
	return took, unmark(tx, took)
}

// unmark deletes the jobs' waitable marks, once the walk that found them
// is over: a small job's bucket is stored inline in the jobs bucket, and
// changing it under a cursor of that bucket could move the cursor.
func unmark(tx *store.Tx, ids []fluid.ID) error {
	for _, id := range ids {
		if err := tx.DeleteJobValue(uint64(id), store.JobWaitable); err != nil {
			return err
		}
	}
	return nil
}
