package loop_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/loop"
	"github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// startThree submits three one-core jobs on the harness's two cores and
// waits until the first two run (committed); it returns the three ids.
func startThree(t *testing.T, h *harness) []fluid.ID {
	t.Helper()
	v, err := h.l.Do(context.Background(), submitOp(t, 3))
	if err != nil {
		t.Fatal(err)
	}
	ids := v.([]fluid.ID)
	for _, want := range ids[:2] {
		if got := h.waitStarted(t); got != want {
			t.Fatalf("started %s, want %s", got, want)
		}
		h.waitFor(t, want, func(rec *state.Record) bool { return rec.Job.Started })
	}
	return ids
}

// endTogether ends job id (its finish and release) while the loop is held
// in a request, so that one turn takes both however slowly the machine
// runs (between two turns, a turn waits only 5 ms for more input); then
// meanwhile, if not nil, runs before the loop goes on. It returns the
// commits made before that turn.
func (h *harness) endTogether(t *testing.T, id fluid.ID, then func()) int64 {
	t.Helper()
	var before int64
	running, release := make(chan struct{}), make(chan struct{})
	hold := func(*store.Tx, *jobmgr.Manager) (any, error) {
		before = h.commits.Load() // the loop commits nothing meanwhile
		close(running)
		<-release
		return nil, nil
	}
	held := make(chan loop.Result, 1)
	if err := h.l.Enqueue(context.Background(), loop.Call{Op: hold, Reply: held}); err != nil {
		t.Fatal(err)
	}
	<-running
	h.exec.end(id, 0)
	time.Sleep(50 * time.Millisecond) // for the loop's reader to queue both
	if then != nil {
		then()
	}
	close(release)
	<-held
	return before
}

func (h *harness) startCommit(id fluid.ID) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.startCommits[id]
}

// With the scheduler of this process, a job's end, the free of its
// cores, the allocation of the next job and that job's start request
// take one commit: the loop exchanges with the scheduler inside the turn.
func TestExchangeOneCommit(t *testing.T) {
	h := newHarnessWith(t, true, 8)
	h.run()
	ids := startThree(t, h)
	before := h.endTogether(t, ids[0], nil)
	if got := h.waitStarted(t); got != ids[2] {
		t.Fatalf("started %s, want %s", got, ids[2])
	}
	if n := h.startCommit(ids[2]) - before; n != 1 {
		t.Errorf("%d commits from a job's end to the next job's start request, want 1", n)
	}
	rec := h.waitInactive(t, ids[0])
	if rec.Job.Result != job.Completed {
		t.Errorf("job %s: %v, want completed", ids[0], rec.Job.Result)
	}
	h.waitFor(t, ids[2], func(rec *state.Record) bool { return rec.Job.Started })
	for _, id := range ids[1:] {
		h.exec.end(id, 0)
		h.waitInactive(t, id)
	}
}

// A commit that fails after the scheduler heard of the turn (it freed the
// ended job's cores and allocated them again) puts the scheduler back in
// step: it is replaced, and learns the committed state from hello. When
// the store can be written again every job ends once, each allocated and
// started exactly once.
func TestExchangeFailedCommit(t *testing.T) {
	h := newHarnessWith(t, true, 8)
	h.run()
	ids := startThree(t, h)

	before := h.endTogether(t, ids[0], func() { h.fail.Store(true) })
	for h.commits.Load() < before+2 {
		time.Sleep(10 * time.Millisecond)
	}
	if n := h.active(t); n != 3 {
		t.Errorf("%d jobs active while the end cannot be committed, want 3", n)
	}
	select {
	case id := <-h.exec.started:
		t.Fatalf("job %s started by a turn whose commit failed", id)
	default:
	}
	h.fail.Store(false)
	if got := h.waitStarted(t); got != ids[2] {
		t.Fatalf("started %s, want %s", got, ids[2])
	}
	h.waitFor(t, ids[2], func(rec *state.Record) bool { return rec.Job.Started })
	for _, id := range ids[1:] {
		h.exec.end(id, 0)
	}
	for _, id := range ids {
		rec := h.waitInactive(t, id)
		count := map[string]int{}
		for _, e := range rec.Events {
			count[e.Name]++
		}
		if rec.Job.Result != job.Completed || count["alloc"] != 1 || count["start"] != 1 || count["finish"] != 1 || count["free"] != 1 {
			t.Errorf("job %s: %v, events %v; want completed, one alloc, start, finish and free", id, rec.Job.Result, count)
		}
	}
	if n := h.schedStarts.Load(); n < 2 {
		t.Errorf("%d schedulers started, want a second after the failed commit", n)
	}
	select {
	case id := <-h.exec.started:
		t.Errorf("job %s started again", id)
	default:
	}
}

// A burst of messages for the scheduler (a submission of many jobs, with
// a scheduler that takes every request) is not exchanged inside the turn:
// the turn commits first and the allocations come in the next, so no turn
// holds both. A few messages are exchanged.
func TestExchangeNotForBursts(t *testing.T) {
	for _, tc := range []struct {
		jobs      int
		exchanged bool
	}{{3, true}, {100, false}} {
		h := newHarnessWith(t, true, 0)
		var mu sync.Mutex
		var atCommit []int64 // alloc requests sent at each commit
		h.onCommit = func() {
			mu.Lock()
			atCommit = append(atCommit, h.allocs.Load())
			mu.Unlock()
		}
		h.run()
		// A first job, started: the scheduler is ready.
		if _, err := h.l.Do(context.Background(), submitOp(t, 1)); err != nil {
			t.Fatal(err)
		}
		h.waitStarted(t)
		submit := submitOp(t, tc.jobs)
		var allocsBefore int64
		var commitIndex int
		op := func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
			mu.Lock()
			commitIndex = len(atCommit) // the index of this turn's commit
			mu.Unlock()
			allocsBefore = h.allocs.Load()
			return submit(tx, jm)
		}
		if _, err := h.l.Do(context.Background(), op); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		sent := atCommit[commitIndex] - allocsBefore
		mu.Unlock()
		if got := sent > 0; got != tc.exchanged {
			t.Errorf("%d jobs: %d alloc requests sent before the submission's commit; exchanged %v, want %v", tc.jobs, sent, got, tc.exchanged)
		}
		h.stop(t)
	}
}
