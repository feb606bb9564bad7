package client

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/queue"
	"github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// QueueCounts are one queue's jobs (flux queue status -v).
type QueueCounts = jobmgr.QueueCounts

// QueueInfo is the instance's queues: configuration, state and jobs.
type QueueInfo struct {
	Set    *queue.Set             `json:"config"`
	States map[string]queue.State `json:"states"`
	// Counts has an entry for every queue ("" is the anonymous one).
	Counts map[string]QueueCounts `json:"counts"`
	// Changed names the queues a change applied to.
	Changed []string `json:"changed,omitempty"`
}

// QueueWait is flux queue drain (until no job is active) or idle (until
// none runs and no alloc is pending), for one queue or, with Queue empty,
// the whole instance.
type QueueWait struct {
	Queue string `json:"queue,omitempty"`
	Idle  bool   `json:"idle,omitempty"`
}

// Names resolves the queues waited on; nil means every job of the
// instance.
func (w QueueWait) Names(set *queue.Set) ([]string, error) {
	if w.Queue == "" {
		return nil, nil
	}
	return set.Lookup(w.Queue, false)
}

// Done reports whether counts satisfy the wait.
func (w QueueWait) Done(c QueueCounts) bool {
	if w.Idle {
		return c.Running == 0 && c.Pending == 0
	}
	return c.Active == 0
}

// LoadQueues reads the queues' configuration and states from the store,
// with every count zero: the loop fills them from the job manager, which
// knows the alloc requests outstanding; the direct path with CountQueues.
func LoadQueues(tx *store.Tx) (*QueueInfo, error) {
	set, err := state.QueueSet(tx)
	if err != nil {
		return nil, err
	}
	states, err := state.QueueStates(tx, set)
	if err != nil {
		return nil, err
	}
	return NewQueueInfo(set, states), nil
}

// NewQueueInfo is the queues with every count zero.
func NewQueueInfo(set *queue.Set, states map[string]queue.State) *QueueInfo {
	counts := make(map[string]QueueCounts, len(set.Names()))
	for _, n := range set.Names() {
		counts[n] = QueueCounts{}
	}
	return &QueueInfo{Set: set, States: states, Counts: counts}
}

// countQueues counts active jobs per queue from their stored summaries,
// for the direct path (no alloc request is outstanding without a loop).
func countQueues(tx *store.Tx, qi *QueueInfo) error {
	return tx.ForEachJob(0, func(_ uint64, get func(string) []byte) (bool, error) {
		var s struct {
			State string `json:"state"`
			Queue string `json:"queue"`
		}
		if err := json.Unmarshal(get(store.JobSummary), &s); err != nil {
			return false, err
		}
		st, err := job.ParseStates(s.State)
		if err != nil || st == job.Inactive {
			return true, nil
		}
		c := qi.Counts[s.Queue]
		c.Add(st, false)
		qi.Counts[s.Queue] = c
		return true, nil
	})
}

// Total adds the counts of the named queues (all when names is nil).
func (qi *QueueInfo) Total(names []string) QueueCounts {
	var t QueueCounts
	for n, c := range qi.Counts {
		if names != nil && !slices.Contains(names, n) {
			continue
		}
		t.Queued += c.Queued
		t.Pending += c.Pending
		t.Running += c.Running
		t.Active += c.Active
		t.Waiting += c.Waiting
	}
	return t
}

func (d *direct) Queues(context.Context) (*QueueInfo, error) {
	var qi *QueueInfo
	err := d.with(false, func(tx *store.Tx) error {
		var err error
		if qi, err = LoadQueues(tx); err != nil {
			return err
		}
		return countQueues(tx, qi)
	})
	return qi, err
}

func (d *direct) ChangeQueues(_ context.Context, c state.QueueChange) (*QueueInfo, error) {
	var qi *QueueInfo
	err := d.with(true, func(tx *store.Tx) error {
		names, set, states, err := state.ChangeQueues(tx, c)
		if err != nil {
			return err
		}
		qi = NewQueueInfo(set, states)
		qi.Changed = names
		return nil
	})
	return qi, err
}

// WaitQueues on the direct path reads the store between naps: nothing
// moves until a loop starts, but one may.
func (d *direct) WaitQueues(ctx context.Context, w QueueWait, progress func(QueueCounts)) (QueueCounts, error) {
	for {
		qi, err := d.Queues(ctx)
		if err != nil {
			return QueueCounts{}, err
		}
		names, err := w.Names(qi.Set)
		if err != nil {
			return QueueCounts{}, err
		}
		c := qi.Total(names)
		if progress != nil {
			progress(c)
		}
		if w.Done(c) {
			return c, nil
		}
		select {
		case <-ctx.Done():
			return c, ctx.Err()
		case <-time.After(pollInterval):
		}
	}
}

func (s *socket) Queues(ctx context.Context) (*QueueInfo, error) {
	var qi QueueInfo
	if _, err := s.call(ctx, MethodQueues, nil, &qi, nil); err != nil {
		return nil, err
	}
	return &qi, nil
}

func (s *socket) ChangeQueues(ctx context.Context, c state.QueueChange) (*QueueInfo, error) {
	var qi QueueInfo
	if _, err := s.call(ctx, MethodQueueSet, c, &qi, nil); err != nil {
		return nil, err
	}
	return &qi, nil
}

func (s *socket) WaitQueues(ctx context.Context, w QueueWait, progress func(QueueCounts)) (QueueCounts, error) {
	var last QueueCounts
	st := &stream{long: true, progress: func(raw json.RawMessage) error {
		if err := json.Unmarshal(raw, &last); err != nil {
			return err
		}
		if progress != nil {
			progress(last)
		}
		return nil
	}}
	var final QueueCounts
	if _, err := s.call(ctx, MethodQueueWait, w, &final, st); err != nil {
		return last, err
	}
	return final, nil
}

func (a *auto) Queues(ctx context.Context) (*QueueInfo, error) {
	return pick(ctx, a, func(s *socket) (*QueueInfo, error) { return s.Queues(ctx) },
		func(d *direct) (*QueueInfo, error) { return d.Queues(ctx) })
}

func (a *auto) ChangeQueues(ctx context.Context, c state.QueueChange) (*QueueInfo, error) {
	return pick(ctx, a, func(s *socket) (*QueueInfo, error) { return s.ChangeQueues(ctx, c) },
		func(d *direct) (*QueueInfo, error) { return d.ChangeQueues(ctx, c) })
}

func (a *auto) WaitQueues(ctx context.Context, w QueueWait, progress func(QueueCounts)) (QueueCounts, error) {
	return pick(ctx, a, func(s *socket) (QueueCounts, error) { return s.WaitQueues(ctx, w, progress) },
		func(d *direct) (QueueCounts, error) { return d.WaitQueues(ctx, w, progress) })
}
