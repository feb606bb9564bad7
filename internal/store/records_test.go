package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Drain records are kept per rank, undrained by a nil record, and walked
// in rank order.
func TestDrain(t *testing.T) {
	s, _ := open(t)
	err := s.Update(func(tx *Tx) error {
		for _, r := range []uint64{300, 2, 17} {
			if err := tx.PutDrain(r, []byte{byte(r)}); err != nil {
				return err
			}
		}
		return tx.PutDrain(17, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.View(func(tx *Tx) error {
		if got := tx.Drain(2); !cmp.Equal(got, []byte{2}) {
			t.Errorf("Drain(2) = %v", got)
		}
		if got := tx.Drain(17); got != nil {
			t.Errorf("undrained rank 17 = %v, want nil", got)
		}
		var ranks []uint64
		err := tx.ForEachDrain(func(r uint64, _ []byte) error { ranks = append(ranks, r); return nil })
		if diff := cmp.Diff([]uint64{2, 300}, ranks); diff != "" {
			t.Errorf("drained ranks (-want +got):\n%s", diff)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Reservations are kept by number, walked in number order, and the last
// number issued never moves back.
func TestReservations(t *testing.T) {
	s, _ := open(t)
	err := s.Update(func(tx *Tx) error {
		if n := tx.LastAlloc(); n != 0 {
			t.Errorf("LastAlloc of a new store = %d", n)
		}
		for _, n := range []uint64{5, 300, 7} {
			if err := tx.PutReservation(n, []byte{byte(n)}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.View(func(tx *Tx) error {
		if n := tx.LastAlloc(); n != 300 {
			t.Errorf("LastAlloc = %d, want 300", n)
		}
		var got []uint64
		err := tx.ForEachReservation(func(n uint64, rec []byte) error {
			if rec[0] != byte(n) {
				t.Errorf("reservation %d holds %v", n, rec)
			}
			got = append(got, n)
			return nil
		})
		if diff := cmp.Diff([]uint64{5, 7, 300}, got); diff != "" {
			t.Errorf("reservations (-want +got):\n%s", diff)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Spare nodes are kept by name, walked in name order; a nameless one is
// refused.
func TestSpares(t *testing.T) {
	s, _ := open(t)
	err := s.Update(func(tx *Tx) error {
		for _, n := range []string{"node9", "node10", "a"} {
			if err := tx.PutSpare(n, []byte(n)); err != nil {
				return err
			}
		}
		if err := tx.PutSpare("", []byte("x")); err == nil {
			t.Error("a spare node without a name was kept")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = s.View(func(tx *Tx) error {
		return tx.ForEachSpare(func(n string, rec []byte) error {
			if string(rec) != n {
				t.Errorf("spare %s holds %q", n, rec)
			}
			got = append(got, n)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "node10", "node9"}, got); diff != "" {
		t.Errorf("spares (-want +got):\n%s", diff)
	}
}

// Tool events are numbered per user from 1 and read back after a given
// number; a user without events reads none, and a nameless user is
// refused.
func TestToolEvents(t *testing.T) {
	s, _ := open(t)
	err := s.Update(func(tx *Tx) error {
		for i, u := range []string{"alice", "bob", "alice", "alice"} {
			seq, err := tx.AppendToolEvent(u, []byte{byte(i)})
			if err != nil {
				return err
			}
			want := map[int]uint64{0: 1, 1: 1, 2: 2, 3: 3}[i]
			if seq != want {
				t.Errorf("event %d of %s: sequence %d, want %d", i, u, seq, want)
			}
		}
		if _, err := tx.AppendToolEvent("", nil); err == nil {
			t.Error("a tool event without a user was kept")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	read := func(user string, after uint64) (seqs []uint64) {
		err := s.View(func(tx *Tx) error {
			return tx.ForEachToolEvent(user, after, func(seq uint64, _ []byte) error { seqs = append(seqs, seq); return nil })
		})
		if err != nil {
			t.Fatal(err)
		}
		return seqs
	}
	for _, tc := range []struct {
		user  string
		after uint64
		want  []uint64
	}{
		{"alice", 0, []uint64{1, 2, 3}},
		{"alice", 1, []uint64{2, 3}},
		{"alice", 3, nil},
		{"bob", 0, []uint64{1}},
		{"carol", 0, nil},
		{"", 0, nil},
	} {
		if diff := cmp.Diff(tc.want, read(tc.user, tc.after)); diff != "" {
			t.Errorf("events of %q after %d (-want +got):\n%s", tc.user, tc.after, diff)
		}
	}
	// An error of fn ends the walk and is returned.
	stop := errors.New("stop")
	n := 0
	err = s.View(func(tx *Tx) error {
		return tx.ForEachToolEvent("alice", 0, func(uint64, []byte) error { n++; return stop })
	})
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("walk ended after %d events with %v, want 1 and the callback's error", n, err)
	}
}

// A job's record can be deleted whole; deleting one that is not there
// says so.
func TestDeleteJob(t *testing.T) {
	s, _ := open(t)
	err := s.Update(func(tx *Tx) error {
		if !tx.Writable() {
			t.Error("an Update's transaction is not writable")
		}
		if err := tx.CreateJob(7, map[string][]byte{"jobspec": []byte("{}")}); err != nil {
			return err
		}
		return tx.DeleteJob(7)
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Update(func(tx *Tx) error { return tx.DeleteJob(7) })
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("deleting a missing job: %v, want ErrNotFound", err)
	}
	s.View(func(tx *Tx) error {
		if tx.Writable() {
			t.Error("a View's transaction is writable")
		}
		return nil
	})
}

// JobValues gives what JobValue gives key by key, job by job, nil for a
// value a job lacks (or a summary that fails its sum), whatever the
// order of the ids and the gaps between them (its walks step over a few
// and search past more, and go back by searching); a job that is not
// there, or a key no record has, is an error.
func TestJobValues(t *testing.T) {
	s, _ := open(t)
	keys := []string{JobJobspec, JobEventlog, JobR, JobSummary, JobUsage}
	err := s.Update(func(tx *Tx) error {
		var all []uint64
		for id := uint64(1); id <= 60; id++ {
			if id%7 == 3 {
				continue // a gap
			}
			vals := map[string][]byte{JobJobspec: []byte(fmt.Sprintf(`{"j":%d}`, id)), JobEventlog: []byte(fmt.Sprintf("e%d\n", id))}
			if id%2 == 0 {
				vals[JobSummary] = []byte(fmt.Sprintf(`{"id":%d}`, id))
			}
			if id%5 == 0 {
				vals[JobR] = []byte("{}")
			}
			if err := tx.CreateJob(id, vals); err != nil {
				return err
			}
			all = append(all, id)
		}
		// A summary that fails its sum reads as none.
		if err := tx.kindBucket(kindSummary).Put(u64(10), []byte(`{"id":11}`)); err != nil {
			return err
		}
		var gapped []uint64
		for i, id := range all {
			if i%9 < 3 {
				gapped = append(gapped, id)
			}
		}
		for _, ids := range [][]uint64{all, {5}, gapped, {50, 40, 2, 2, 58, 1}} {
			got := make([][]byte, len(ids)*len(keys))
			if err := tx.JobValues(ids, keys, got); err != nil {
				return err
			}
			for i, id := range ids {
				for j, key := range keys {
					want, err := tx.JobValue(id, key)
					if err != nil {
						return err
					}
					if diff := cmp.Diff(want, got[i*len(keys)+j]); diff != "" {
						t.Errorf("job %d %s (-JobValue +JobValues):\n%s", id, key, diff)
					}
				}
			}
		}
		got := make([][]byte, 3*len(keys))
		if err := tx.JobValues([]uint64{1, 3, 4}, keys, got); !errors.Is(err, ErrNotFound) {
			t.Errorf("a missing job: %v, want ErrNotFound", err)
		}
		if err := tx.JobValues([]uint64{1}, []string{"nosuch"}, got[:1]); err == nil {
			t.Error("a key no record has was read")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A store that cannot be opened says why, naming the file: a missing
// directory, or one it may not enter.
func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "no", "fluxq.db")
	if _, err := Open(path, Options{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a store in a missing directory: %v, want ErrNotExist", err)
	}
	if os.Geteuid() != 0 {
		locked := filepath.Join(dir, "locked")
		os.Mkdir(locked, 0)
		if _, err := Open(filepath.Join(locked, "fluxq.db"), Options{}); !errors.Is(err, os.ErrPermission) {
			t.Errorf("a store in a directory it may not enter: %v, want ErrPermission", err)
		}
	}
}
