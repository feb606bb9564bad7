package jobmgr_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/jobspec"
	ops "github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// submitRetry submits a job with attributes.system.retry = n.
func (h *harness) submitRetry(n int) fluid.ID {
	h.t.Helper()
	js, err := jobspec.FromOptions(jobspec.Options{Command: []string{"false"}, Extra: map[string]any{}})
	if err != nil {
		h.t.Fatal(err)
	}
	js.Attributes.System.Extra = map[string]any{jobspec.RetryKey: n}
	b, _ := js.MarshalJSON()
	return h.do(func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
		ids, recs, err := ops.Submit(tx, time.Now(), []ops.SubmitRequest{{Jobspec: b, UserID: 100, Owner: true, Urgency: 16}}, nil)
		if err != nil {
			return nil, err
		}
		return ids[0], jm.Submitted(tx, recs)
	}).(fluid.ID)
}

// jobIDs lists the store's jobs.
func jobIDs(t *testing.T, h *harness) []fluid.ID {
	t.Helper()
	var ids []fluid.ID
	if err := h.st.View(func(tx *store.Tx) error {
		return tx.ForEachJob(0, func(id uint64, _ func(string) []byte) (bool, error) {
			ids = append(ids, fluid.ID(id))
			return true, nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	return ids
}

// A failed run's retry is made in the turn that posts its clean: while
// that turn cannot commit (a full store, as a crash before the commit)
// there is neither a clean nor a retry, and once it commits there are
// both, the retry once, linked both ways, and allocated only after the
// failed run is inactive. The last retry's failure ends the chain.
func TestRetryCommittedWithClean(t *testing.T) {
	var full atomic.Bool
	h := newFullHarness(t, &full)
	h.start()
	first := h.submitRetry(1)
	h.handshake(limited8)
	h.execHello()
	h.expectAlloc(first)
	h.succeed(first)
	h.expectStart(first, false)
	h.execRespond(first, "start", nil)
	wantEvents(t, h, first, "submit", "validate", "depend", "priority", "alloc", "start")

	h.finishJob(first, 256) // exit 1
	// The free is asked once finish and release are committed; its
	// answer's turn, which cleans, finds the store full.
	wantEvents(t, h, first, "submit", "validate", "depend", "priority", "alloc", "start", "finish", "release")
	full.Store(true)
	h.expectFree(first)
	time.Sleep(600 * time.Millisecond) // the free's turn fails, a retry or two
	if got := stored(t, h, first); got[len(got)-1] == "clean" {
		t.Fatalf("clean committed on a full store: %v", got)
	}
	if ids := jobIDs(t, h); len(ids) != 1 {
		t.Fatalf("jobs while the clean cannot commit = %v, want only %s", ids, first)
	}
	full.Store(false)
	wantEvents(t, h, first, "submit", "validate", "depend", "priority", "alloc", "start", "finish", "release", "free", "memo", "clean")
	ids := jobIDs(t, h)
	if len(ids) != 2 {
		t.Fatalf("jobs after the clean = %v, want the first and one retry", ids)
	}
	retry := ids[1]
	rec := h.record(first)
	if got := rec.Job.RetriedAs(); got != retry {
		t.Errorf("first run's retried_as = %s, want %s", got, retry)
	}
	if r := rec.Job.Result; r != job.Failed {
		t.Errorf("first run's result = %s, want FAILED", r)
	}
	next := h.record(retry).Job
	if next.AgainOf != first || next.Retry != 1 || next.UserID != 100 {
		t.Errorf("retry: again_of %s retry %d user %d; want %s, 1, 100", next.AgainOf, next.Retry, next.UserID, first)
	}

	// The retry runs, fails, and is the chain's last: no third job.
	h.expectAlloc(retry)
	h.succeed(retry)
	h.expectStart(retry, false)
	h.execRespond(retry, "start", nil)
	h.finishJob(retry, 256)
	h.expectFree(retry)
	wantEvents(t, h, retry, "submit", "validate", "depend", "priority", "alloc", "start", "finish", "release", "free", "clean")
	if ids := jobIDs(t, h); !cmp.Equal(ids, []fluid.ID{first, retry}) {
		t.Errorf("jobs after the last retry = %v, want %v", ids, []fluid.ID{first, retry})
	}
	h.sched.quiet(h)
}
