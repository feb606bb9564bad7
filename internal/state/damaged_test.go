package state

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/store"
)

// TestListDamagedSummary: a summary that does not decode, names another
// job, or fails its sum (a flipped userid digit) never hides its job
// from a listing: the job is listed from its eventlog. A job whose
// eventlog cannot be read either makes the listing fail, naming it.
func TestListDamagedSummary(t *testing.T) {
	for _, tc := range []struct {
		name    string
		damage  func(tx *store.Tx, id fluid.ID, sum []byte) error
		wantErr string // "" : listed as it should be
	}{
		{"not JSON", func(tx *store.Tx, id fluid.ID, sum []byte) error {
			return rawPut(tx, id, store.JobSummary, sum[:len(sum)/2])
		}, ""},
		{"another job's id", func(tx *store.Tx, id fluid.ID, sum []byte) error {
			return tx.PutJobValue(uint64(id), store.JobSummary, bytes.Replace(sum, []byte(`"id":`), []byte(`"id":1`), 1))
		}, ""},
		{"flipped userid", func(tx *store.Tx, id fluid.ID, sum []byte) error {
			return rawPut(tx, id, store.JobSummary, bytes.Replace(sum, []byte(`"userid":5`), []byte(`"userid":7`), 1))
		}, ""},
		{"absent", func(tx *store.Tx, id fluid.ID, sum []byte) error {
			return rawPut(tx, id, store.JobSummary, nil)
		}, ""},
		{"eventlog too", func(tx *store.Tx, id fluid.ID, sum []byte) error {
			if err := rawPut(tx, id, store.JobSummary, sum[:3]); err != nil {
				return err
			}
			return rawPut(tx, id, store.JobEventlog, []byte("{\"timest"))
		}, "cannot be read from the store"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, ids := readStore(t)
			err := st.Update(func(tx *store.Tx) error {
				sum, err := tx.JobValue(uint64(ids[0]), store.JobSummary)
				if err != nil {
					return err
				}
				return tc.damage(tx, ids[0], sum)
			})
			if err != nil {
				t.Fatal(err)
			}
			var got []api.JobSummary
			err = st.View(func(tx *store.Tx) error {
				var err error
				got, err = ListJobs(tx, 5, api.JobsQuery{States: job.Pending | job.Running | job.Inactive})
				return err
			})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), ids[0].String()) || !errors.Is(err, &api.Error{Code: api.CodeStoreDamaged}) {
					t.Fatalf("ListJobs = %v, want a store-damaged error naming %s", err, ids[0])
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var listed []fluid.ID
			for _, s := range got {
				listed = append(listed, s.ID)
				if s.ID == ids[0] && (s.UserID != 5 || s.Name != "a") {
					t.Errorf("job %s listed as %+v", ids[0], s)
				}
			}
			if !slices.Contains(listed, ids[0]) || !slices.Contains(listed, ids[1]) || len(listed) != 2 {
				t.Errorf("user 5's jobs listed: %v, want %v", listed, ids[:2])
			}
			// And counted, by fluxq stats and the queues' counts.
			err = st.View(func(tx *store.Tx) error {
				c, err := CountJobs(tx)
				if err == nil && (c.Total != 3 || c.States["SCHED"]+c.States["DEPEND"]+c.States["PRIORITY"] != 2) {
					t.Errorf("counts %+v, want 3 jobs, 2 pending", c)
				}
				if err != nil {
					return err
				}
				q, err := CountedQueues(tx)
				if err == nil && q.Total(nil).Active != 2 {
					t.Errorf("queue counts %+v, want 2 active", q.Counts)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// rawPut writes a job's value as damage would: without the summary's
// sum.
func rawPut(tx *store.Tx, id fluid.ID, key string, v []byte) error {
	sum, _ := tx.JobValue(uint64(id), store.JobSummarySum)
	if err := tx.PutJobValue(uint64(id), key, v); err != nil {
		return err
	}
	if key == store.JobSummary && sum != nil {
		// PutJobValue wrote the new value's sum: put the old one back.
		return tx.PutJobValue(uint64(id), store.JobSummarySum, sum)
	}
	return nil
}
