package loop_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// Retention runs as the loop runs, a bounded batch per turn, and the loop
// tells OnPurged of each batch only once its turn has committed: while
// commits fail nothing is purged, and nothing is reported.
func TestRetentionInBatches(t *testing.T) {
	h := newHarness(t)
	h.jm.SetRetention(jobmgr.Retention{AgeLimit: -1, NumLimit: 0})
	var mu sync.Mutex
	var batches [][]fluid.ID
	h.l.OnPurged(func(ids []fluid.ID) {
		mu.Lock()
		batches = append(batches, append([]fluid.ID(nil), ids...))
		mu.Unlock()
	})
	reported := func() (n, most, count int) {
		mu.Lock()
		defer mu.Unlock()
		for _, b := range batches {
			n += len(b)
			most = max(most, len(b))
		}
		return n, most, len(batches)
	}
	h.fail.Store(true)
	h.run()

	// 250 jobs held, then canceled: inactive at once.
	js, err := jobspec.FromOptions(jobspec.Options{Command: []string{"true"}, Cwd: "/tmp"})
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := js.MarshalJSON()
	reqs := make([]state.SubmitRequest, 250)
	for i := range reqs {
		reqs[i] = state.SubmitRequest{Jobspec: spec, UserID: 100, Owner: true, Urgency: 0}
	}
	endAll := func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
		ids, recs, err := state.Submit(tx, jm.Now(), reqs, nil)
		if err != nil {
			return nil, err
		}
		if err := jm.Submitted(tx, recs); err != nil {
			return nil, err
		}
		for _, id := range ids {
			if err := jm.Cancel(tx, id, 100, ""); err != nil {
				return nil, err
			}
		}
		return ids, nil
	}
	if _, err := h.l.Do(context.Background(), endAll); err == nil {
		t.Fatal("a turn committed while commits fail")
	}
	h.fail.Store(false)
	v, err := h.l.Do(context.Background(), endAll)
	if err != nil {
		t.Fatal(err)
	}
	ids := v.([]fluid.ID)

	deadline := time.Now().Add(30 * time.Second)
	for {
		if n, _, _ := reported(); n >= len(ids) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	n, most, count := reported()
	if n != len(ids) || most > jobmgr.RetainBatch || count < 3 {
		t.Errorf("reported %d purged jobs in %d batches of at most %d; want %d in batches of at most %d", n, count, most, len(ids), jobmgr.RetainBatch)
	}
	h.st.View(func(tx *store.Tx) error {
		for _, id := range ids {
			if tx.HasJob(uint64(id)) {
				t.Errorf("job %s is still in the store", id)
				break
			}
		}
		return nil
	})
}
