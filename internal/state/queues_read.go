package state

import (
	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/store"
)

// LoadQueues reads the queues' configuration and states from the store,
// with every count zero: the loop fills them from the job manager, which
// knows the alloc requests outstanding; the direct path with CountQueues.
func LoadQueues(tx *store.Tx) (*api.QueueInfo, error) {
	set, err := QueueSet(tx)
	if err != nil {
		return nil, err
	}
	states, err := QueueStates(tx, set)
	if err != nil {
		return nil, err
	}
	return api.NewQueueInfo(set, states), nil
}

// CountedQueues is the queues with their active jobs counted from the
// stored summaries, as the direct path answers them: no alloc request is
// outstanding without a loop.
func CountedQueues(tx *store.Tx) (*api.QueueInfo, error) {
	qi, err := LoadQueues(tx)
	if err != nil {
		return nil, err
	}
	err = tx.ForEachJob(0, func(id uint64, get func(string) []byte) (bool, error) {
		var s struct {
			State job.State `json:"state"`
			Queue string    `json:"queue"`
		}
		if err := decodeSummary(fluid.ID(id), get, &s); err != nil {
			return false, err
		}
		if s.State == job.Inactive {
			return true, nil
		}
		c := qi.Counts[s.Queue]
		countJob(&c, s.State)
		qi.Counts[s.Queue] = c
		return true, nil
	})
	return qi, err
}

// countJob counts one active job in state st with no alloc request
// outstanding, as the job manager's QueueCounts.Add does.
func countJob(c *api.QueueCounts, st job.State) {
	c.Active++
	if st == job.Sched {
		c.Queued++
	}
	if st&(job.Run|job.Cleanup) != 0 {
		c.Running++
	}
	if st&(job.Pending|job.New) != 0 {
		c.Waiting++
	}
}

// ChangedQueues applies a queue change and answers the queues after it,
// counts zero (the loop fills them).
func ChangedQueues(tx *store.Tx, c QueueChange) (*api.QueueInfo, error) {
	names, set, states, err := ChangeQueues(tx, c)
	if err != nil {
		return nil, err
	}
	qi := api.NewQueueInfo(set, states)
	qi.Changed = names
	return qi, nil
}
