package jobmgr_test

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/reservation"
	ops "github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

const (
	owner = uint32(0)
	guest = uint32(65534)
	other = uint32(1)
)

// purgeFixture stores one job per entry of users, and ends each (a cancel
// while pending) a minute after the one before, from t0; the last entry
// of users stays active when keepLast. It returns the store, the ids in
// order, and the clock, which stands an hour after t0.
func purgeFixture(t *testing.T, users []uint32, keepLast bool) (*store.Store, []fluid.ID, *time.Time) {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "fluxq.db"), store.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	js, err := jobspec.FromOptions(jobspec.Options{Command: []string{"true"}, Cwd: "/tmp"})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := js.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1_800_000_000, 0)
	clock := t0
	var ids []fluid.ID
	err = st.Update(func(tx *store.Tx) error {
		var reqs []ops.SubmitRequest
		for _, u := range users {
			reqs = append(reqs, ops.SubmitRequest{Jobspec: raw, UserID: u, Owner: u == owner, Urgency: 0})
		}
		ids, _, err = ops.Submit(tx, t0, reqs, nil)
		if err != nil {
			return err
		}
		jm := jobmgr.New(jobmgr.Config{Owner: owner, Now: func() time.Time { return clock }})
		if err := jm.Load(tx); err != nil {
			return err
		}
		for i, id := range ids {
			if keepLast && i == len(ids)-1 {
				break
			}
			clock = t0.Add(time.Duration(i+1) * time.Minute)
			if err := jm.Cancel(tx, id, owner, ""); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	clock = t0.Add(time.Hour)
	return st, ids, &clock
}

// manager loads a job manager over st whose clock is *clock.
func manager(t *testing.T, tx *store.Tx, clock *time.Time) *jobmgr.Manager {
	t.Helper()
	jm := jobmgr.New(jobmgr.Config{Owner: owner, Now: func() time.Time { return *clock }})
	if err := jm.Load(tx); err != nil {
		t.Fatal(err)
	}
	return jm
}

func TestPurgeSelects(t *testing.T) {
	// Five inactive jobs, ended at 1, 2, 3, 4 and 5 minutes (now is 60):
	// the guest's are the 2nd and 4th.
	users := []uint32{owner, guest, other, guest, owner}
	for _, tc := range []struct {
		name        string
		uid         uint32
		p           api.PurgeParams
		count, left int
		purged      []int // indexes into the fixture's ids, oldest first
	}{
		{"no limit purges nothing", owner, api.PurgeParams{AgeLimit: -1, NumLimit: -1, Force: true}, 0, 5, nil},
		{"count only", owner, api.PurgeParams{AgeLimit: -1, NumLimit: 2}, 3, 5, nil},
		{"num-limit keeps the most recent", owner, api.PurgeParams{AgeLimit: -1, NumLimit: 2, Force: true}, 3, 2, []int{0, 1, 2}},
		{"num-limit 0", owner, api.PurgeParams{AgeLimit: -1, NumLimit: 0, Force: true}, 5, 0, []int{0, 1, 2, 3, 4}},
		{"age-limit", owner, api.PurgeParams{AgeLimit: 57.5 * 60, NumLimit: -1, Force: true}, 2, 3, []int{0, 1}},
		{"age-limit beyond all", owner, api.PurgeParams{AgeLimit: 3600, NumLimit: -1, Force: true}, 0, 5, nil},
		{"either limit", owner, api.PurgeParams{AgeLimit: 58.5 * 60, NumLimit: 3, Force: true}, 2, 3, []int{0, 1}},
		{"batch bounds one request", owner, api.PurgeParams{AgeLimit: 0, NumLimit: -1, Batch: 2, Force: true}, 2, 3, []int{0, 1}},
		{"a guest counts its own", guest, api.PurgeParams{AgeLimit: -1, NumLimit: 0}, 2, 2, nil},
		{"a guest purges its own", guest, api.PurgeParams{AgeLimit: -1, NumLimit: 1, Force: true}, 1, 1, []int{1}},
		{"a guest's age limit", guest, api.PurgeParams{AgeLimit: 0, NumLimit: -1, Force: true}, 2, 0, []int{1, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, ids, clock := purgeFixture(t, users, false)
			var res api.PurgeResult
			var purged []fluid.ID
			err := st.Update(func(tx *store.Tx) error {
				var err error
				res, purged, err = manager(t, tx, clock).Purge(tx, tc.uid, tc.p)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			var want []fluid.ID
			for _, i := range tc.purged {
				want = append(want, ids[i])
			}
			if res.Count != tc.count || res.Inactive != tc.left || !slices.Equal(purged, want) {
				t.Errorf("got count %d, %d left, purged %v; want %d, %d, %v", res.Count, res.Inactive, purged, tc.count, tc.left, want)
			}
			// What was purged is gone from the store, and nothing else.
			st.View(func(tx *store.Tx) error {
				for _, id := range ids {
					if got, gone := tx.HasJob(uint64(id)), slices.Contains(want, id); got == gone {
						t.Errorf("job %s: in the store %v, purged %v", id, got, gone)
					}
				}
				return nil
			})
		})
	}
}

func TestPurgeIDs(t *testing.T) {
	// The guest's two jobs, the owner's and another's: the last, the
	// guest's third, still active.
	st, ids, clock := purgeFixture(t, []uint32{guest, owner, other, guest, guest}, true)
	for _, tc := range []struct {
		name  string
		uid   uint32
		ids   []fluid.ID
		force bool
		count int
		errs  []error // nil where purged
	}{
		{"not without force", guest, []fluid.ID{ids[0]}, false, 1, []error{nil}},
		{"others' refused, own purged", guest, []fluid.ID{ids[1], ids[2], ids[0], ids[0]}, true, 1, []error{ops.ErrPurgeOthers, ops.ErrPurgeOthers, nil, nil}},
		{"once purged, unknown", guest, []fluid.ID{ids[0]}, true, 0, []error{api.ErrUnknownJob}},
		{"active refused", guest, []fluid.ID{ids[4]}, true, 0, []error{ops.ErrPurgeActive}},
		{"a guest learns nothing of another's active job", other, []fluid.ID{ids[4]}, true, 0, []error{ops.ErrPurgeOthers}},
		{"the owner purges anyone's", owner, []fluid.ID{ids[2], ids[3]}, true, 2, []error{nil, nil}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var res api.PurgeResult
			err := st.Update(func(tx *store.Tx) error {
				var err error
				res, _, err = manager(t, tx, clock).Purge(tx, tc.uid, api.PurgeParams{AgeLimit: -1, NumLimit: -1, IDs: tc.ids, Force: tc.force})
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Count != tc.count || len(res.Errors) != len(tc.errs) {
				t.Fatalf("got %+v, want count %d and %d entries", res, tc.count, len(tc.errs))
			}
			for i, want := range tc.errs {
				got := res.Errors[i]
				switch {
				case want == nil && got != nil:
					t.Errorf("%s: %v, want it purged", tc.ids[i], got)
				case want != nil && (got == nil || got.Message != want.Error() && !errors.Is(got, want)):
					t.Errorf("%s: %v, want %v", tc.ids[i], got, want)
				}
			}
		})
	}
}

func TestPurgeRefusesBadRequests(t *testing.T) {
	st, ids, clock := purgeFixture(t, []uint32{owner}, false)
	many := make([]fluid.ID, api.PurgeBatchMax+1)
	for i := range many {
		many[i] = ids[0]
	}
	for _, p := range []api.PurgeParams{
		{AgeLimit: -1, NumLimit: 0, Batch: -1, Force: true},
		{AgeLimit: -1, NumLimit: 0, Batch: api.PurgeBatchMax + 1, Force: true},
		{AgeLimit: posInf(), NumLimit: -1, Force: true},
		{AgeLimit: -1, NumLimit: -1, IDs: many, Force: true},
	} {
		err := st.Update(func(tx *store.Tx) error {
			_, _, err := manager(t, tx, clock).Purge(tx, owner, p)
			return err
		})
		if err == nil {
			t.Errorf("%+v: purged", p)
		}
	}
	st.View(func(tx *store.Tx) error {
		if !tx.HasJob(uint64(ids[0])) {
			t.Error("a refused request purged a job")
		}
		return nil
	})
}

func posInf() float64 { var z float64; return 1 / z }

// Retention purges in bounded batches, oldest first, and says when it is
// next due; a turn whose commit fails puts what it purged back.
func TestRetain(t *testing.T) {
	users := make([]uint32, jobmgr.RetainBatch+20)
	st, ids, clock := purgeFixture(t, users, false)
	var jm *jobmgr.Manager
	st.View(func(tx *store.Tx) error {
		jm = manager(t, tx, clock)
		return nil
	})
	if !jm.RetainDue().IsZero() {
		t.Error("due with no limits")
	}
	jm.SetRetention(jobmgr.Retention{AgeLimit: -1, NumLimit: 10})
	if due := jm.RetainDue(); due.After(*clock) || due.IsZero() {
		t.Errorf("due %v, want now (%v)", due, *clock)
	}

	// A turn whose commit fails: Restore brings the purged jobs back.
	var cp jobmgr.Checkpoint
	errFull := errors.New("the commit fails")
	err := st.Update(func(tx *store.Tx) error {
		jm.Save(&cp)
		if err := jm.Retain(tx); err != nil {
			t.Fatal(err)
		}
		if got := jm.Inactive(); got != len(ids)-jobmgr.RetainBatch {
			t.Errorf("%d inactive after a batch, want %d", got, len(ids)-jobmgr.RetainBatch)
		}
		return errFull
	})
	if err != errFull {
		t.Fatal(err)
	}
	st.View(func(tx *store.Tx) error { return jm.Restore(tx, &cp) })
	if got := jm.Inactive(); got != len(ids) {
		t.Errorf("%d inactive after Restore, want %d", got, len(ids))
	}

	// The first batch, then the rest, oldest first, a turn each.
	var purged [][]fluid.ID
	for range 2 {
		err := st.Update(func(tx *store.Tx) error {
			jm.Save(&cp)
			return jm.Retain(tx)
		})
		if err != nil {
			t.Fatal(err)
		}
		purged = append(purged, jm.Take().Purged)
	}
	if len(purged[0]) != jobmgr.RetainBatch || !slices.Equal(append(purged[0], purged[1]...), ids[:len(ids)-10]) {
		t.Errorf("purged %d then %v, want the oldest %d in order", len(purged[0]), purged[1], len(ids)-10)
	}
	if !jm.RetainDue().IsZero() || jm.Inactive() != 10 {
		t.Errorf("due %v with %d inactive, want never with 10", jm.RetainDue(), jm.Inactive())
	}
	st.View(func(tx *store.Tx) error {
		for i, id := range ids {
			if tx.HasJob(uint64(id)) != (i >= len(ids)-10) {
				t.Errorf("job %d of %d: in the store %v", i, len(ids), tx.HasJob(uint64(id)))
			}
		}
		return nil
	})

	// An age limit: due when the oldest left passes it.
	jm.SetRetention(jobmgr.Retention{AgeLimit: 3600, NumLimit: -1})
	oldest := time.Unix(1_800_000_000, 0).Add(time.Duration(len(ids)-9) * time.Minute)
	if due := jm.RetainDue(); due.Before(oldest.Add(time.Hour)) || due.After(oldest.Add(time.Hour+time.Second)) {
		t.Errorf("due %v, want %v", due, oldest.Add(time.Hour))
	}
}

// A job that ends in the very turn retention runs, its summary still
// deferred, is purged as any other, not skipped and forgotten.
func TestRetainJobEndedThisTurn(t *testing.T) {
	st, ids, clock := purgeFixture(t, []uint32{owner, owner}, true)
	var jm *jobmgr.Manager
	st.View(func(tx *store.Tx) error {
		jm = manager(t, tx, clock)
		return nil
	})
	jm.DeferSummaries()
	jm.SetRetention(jobmgr.Retention{AgeLimit: -1, NumLimit: 0})
	var cp jobmgr.Checkpoint
	err := st.Update(func(tx *store.Tx) error {
		jm.Save(&cp)
		if err := jm.Cancel(tx, ids[1], owner, ""); err != nil {
			return err
		}
		if err := jm.Retain(tx); err != nil {
			return err
		}
		return jm.SaveSummaries(tx)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := jm.Take().Purged; !slices.Equal(got, ids) {
		t.Errorf("purged %v, want %v", got, ids)
	}
	st.View(func(tx *store.Tx) error {
		for _, id := range ids {
			if tx.HasJob(uint64(id)) {
				t.Errorf("job %s is still in the store", id)
			}
		}
		return nil
	})
}

// A job that active jobs were submitted from (at any depth, through jobs
// that ended) is kept while they run: reservations find a job's derived
// children through the chain.
func TestPurgeKeepsAncestorsOfActiveJobs(t *testing.T) {
	// A ended; B, submitted from A, ended; C, submitted from B, runs.
	st, ids, clock := purgeFixture(t, []uint32{owner}, false)
	a := ids[0]
	var b, c fluid.ID
	js, _ := jobspec.FromOptions(jobspec.Options{Command: []string{"true"}, Cwd: "/tmp"})
	raw, _ := js.MarshalJSON()
	from := func(tx *store.Tx, parent fluid.ID) fluid.ID {
		who := reservation.Requester{Class: reservation.Application, NS: reservation.JobNS(parent)}
		got, _, err := ops.Submit(tx, *clock, []ops.SubmitRequest{{Jobspec: raw, UserID: owner, Owner: true, Who: &who}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return got[0]
	}
	err := st.Update(func(tx *store.Tx) error {
		b = from(tx, a)
		c = from(tx, b)
		jm := manager(t, tx, clock)
		return jm.Cancel(tx, b, owner, "")
	})
	if err != nil {
		t.Fatal(err)
	}
	*clock = clock.Add(time.Minute) // B is past any age limit of a minute
	purge := func(p api.PurgeParams) api.PurgeResult {
		var res api.PurgeResult
		err := st.Update(func(tx *store.Tx) error {
			var err error
			res, _, err = manager(t, tx, clock).Purge(tx, owner, p)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := purge(api.PurgeParams{AgeLimit: 0, NumLimit: -1, Force: true}); res.Count != 0 || res.Inactive != 2 {
		t.Errorf("with C active, purged %d, %d left; want 0, 2", res.Count, res.Inactive)
	}
	// Retention keeps them too, and does not look again at every turn.
	st.Update(func(tx *store.Tx) error {
		jm := manager(t, tx, clock)
		jm.SetRetention(jobmgr.Retention{AgeLimit: -1, NumLimit: 0})
		if err := jm.Retain(tx); err != nil {
			t.Fatal(err)
		}
		if got := jm.Take().Purged; len(got) != 0 {
			t.Errorf("retention purged %v", got)
		}
		if due := jm.RetainDue(); !due.After(*clock) {
			t.Errorf("retention due again at %v, now is %v: it would spin", due, *clock)
		}
		return nil
	})
	res := purge(api.PurgeParams{AgeLimit: -1, NumLimit: -1, Force: true, IDs: []fluid.ID{a}})
	if res.Count != 0 || res.Errors[0] == nil || res.Errors[0].Message != jobmgr.ErrPurgeAncestor.Error() {
		t.Errorf("purging A by id with C active: %+v", res)
	}
	err = st.Update(func(tx *store.Tx) error { return manager(t, tx, clock).Cancel(tx, c, owner, "") })
	if err != nil {
		t.Fatal(err)
	}
	*clock = clock.Add(time.Minute)
	if res := purge(api.PurgeParams{AgeLimit: 0, NumLimit: -1, Force: true}); res.Count != 3 || res.Inactive != 0 {
		t.Errorf("once C ended, purged %d, %d left; want 3, 0", res.Count, res.Inactive)
	}
}

// The direct path takes more than a batch at a time, and checks the
// request as the socket's.
func TestPurgeUpTo(t *testing.T) {
	st, _, clock := purgeFixture(t, []uint32{owner, owner, owner, owner, owner}, false)
	err := st.Update(func(tx *store.Tx) error {
		jm := manager(t, tx, clock)
		if _, _, err := jm.PurgeUpTo(tx, owner, api.PurgeParams{AgeLimit: 0, NumLimit: -1, Batch: 101, Force: true}, 1000); err == nil {
			t.Error("a batch of 101 was taken")
		}
		res, ids, err := jm.PurgeUpTo(tx, owner, api.PurgeParams{AgeLimit: 0, NumLimit: -1, Batch: 2, Force: true}, 4)
		if err != nil {
			return err
		}
		if res.Count != 4 || len(ids) != 4 || res.Inactive != 1 {
			t.Errorf("purged %d (%d ids), %d left; want 4, 1", res.Count, len(ids), res.Inactive)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
