package state

import (
	"slices"
	"testing"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/store"
)

// TestReap: a job is taken by its submitter's wait once it has ended, and
// only once; an active job, another user's, an unknown id and a job
// stored before waitable marks were are passed over.
func TestReap(t *testing.T) {
	// purgeStore's job i belongs to user i; all but job 2 have ended.
	// Job 3 had no mark, as a job stored before marks were.
	st, ids := purgeStore(t, 4, func(i int) bool { return i != 2 })
	if err := st.Update(func(tx *store.Tx) error { return tx.DeleteJobValue(uint64(ids[3]), store.JobWaitable) }); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		uid  uint32
		p    api.ReapParams
		want []fluid.ID
	}{
		{"another user's", 1, api.ReapParams{IDs: []fluid.ID{ids[0]}}, nil},
		{"active", 2, api.ReapParams{All: true}, nil},
		{"unknown and twice", 0, api.ReapParams{IDs: []fluid.ID{123456789, ids[0], ids[0]}}, []fluid.ID{ids[0]}},
		{"taken already", 0, api.ReapParams{All: true}, nil},
		{"all", 1, api.ReapParams{All: true}, []fluid.ID{ids[1]}},
		{"no mark", 3, api.ReapParams{All: true}, nil},
	}
	for _, tt := range tests {
		var got []fluid.ID
		err := st.Update(func(tx *store.Tx) error {
			var err error
			got, err = Reap(tx, tt.uid, tt.p)
			return err
		})
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("%s: Reap = %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
}
