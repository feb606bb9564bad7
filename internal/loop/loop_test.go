package loop_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	ops "github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// A job's stored summary is what its eventlog says after every commit,
// though the loop saves it once per turn rather than once per event:
// listings read the summaries alone.
func TestSummariesFollowEvents(t *testing.T) {
	in := newInstance(t, 0)
	defer in.stop(t)
	ids := in.submit(t, 50)
	deadline := time.After(30 * time.Second)
	for {
		changed := in.l.Changed()
		if inactive := checkSummaries(t, in.st, ids); inactive == len(ids) {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatal("the jobs did not end within 30s")
		}
	}
}

// checkSummaries compares each job's stored summary with its eventlog's,
// in one snapshot, and counts the inactive jobs.
func checkSummaries(t *testing.T, st *store.Store, ids []fluid.ID) (inactive int) {
	t.Helper()
	err := st.View(func(tx *store.Tx) error {
		for _, id := range ids {
			rec, err := ops.Load(tx, id)
			if err != nil {
				return err
			}
			raw, err := tx.JobValue(uint64(id), store.JobSummary)
			if err != nil {
				return err
			}
			var got ops.Summary
			if err := json.Unmarshal(raw, &got); err != nil {
				return err
			}
			want := ops.Summarize(rec)
			if got.State == job.Inactive {
				inactive++
			}
			if diff := cmp.Diff(*want, got); diff != "" {
				t.Fatalf("job %s: stored summary differs from its eventlog's (-want +got):\n%s", id, diff)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return inactive
}
