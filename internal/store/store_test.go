package store

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	bolt "go.etcd.io/bbolt"
)

func open(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fluxq.db")
	s, err := Open(path, Options{Timeout: 100 * time.Millisecond, Now: func() time.Time { return time.UnixMilli(1700000000000) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

func TestCreateAndReopen(t *testing.T) {
	s, path := open(t)
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("store file mode = %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	err := s.Update(func(tx *Tx) error {
		if err := tx.SetLastJobID(99); err != nil {
			return err
		}
		return tx.CreateJob(99, map[string][]byte{JobJobspec: []byte(`{"version":1}`)})
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()

	s, err = Open(path, Options{Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.View(func(tx *Tx) error {
		if got := tx.Epoch(); !got.Equal(time.UnixMilli(1700000000000)) {
			t.Errorf("epoch = %v, want the creation time", got)
		}
		if got := tx.LastJobID(); got != 99 {
			t.Errorf("last job id = %d, want 99", got)
		}
		v, err := tx.JobValue(99, JobJobspec)
		if err != nil || string(v) != `{"version":1}` {
			t.Errorf("jobspec = %q, %v", v, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestBusy(t *testing.T) {
	_, path := open(t)
	_, err := Open(path, Options{Timeout: 50 * time.Millisecond})
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("second Open err = %v, want ErrBusy", err)
	}
}

func TestCorrupt(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		content []byte
	}{
		{"garbage", []byte("this is not a bbolt file, it is a story about one")},
		{"zeros", make([]byte, 64*1024)},
		{"short", []byte{1, 2, 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".db")
			if err := os.WriteFile(path, tc.content, 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Open(path, Options{Timeout: 50 * time.Millisecond})
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Open err = %v, want ErrCorrupt", err)
			}
		})
	}
}

func TestSchemaChecks(t *testing.T) {
	s, path := open(t)
	s.Close()
	// A file from a newer fluxq must not be touched.
	raw(t, path, func(tx *bolt.Tx) error {
		b := make([]byte, 8)
		binary.BigEndian.PutUint64(b, SchemaVersion+1)
		return tx.Bucket(bucketMeta).Put(keySchema, b)
	})
	if _, err := Open(path, Options{Timeout: 50 * time.Millisecond}); err == nil {
		t.Fatal("opened a store with a newer schema")
	}
	// A store at the current version missing a bucket is corrupt.
	raw(t, path, func(tx *bolt.Tx) error {
		b := make([]byte, 8)
		binary.BigEndian.PutUint64(b, SchemaVersion)
		if err := tx.Bucket(bucketMeta).Put(keySchema, b); err != nil {
			return err
		}
		return tx.DeleteBucket(bucketQueues)
	})
	if _, err := Open(path, Options{Timeout: 50 * time.Millisecond}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Open of a store without queues/ = %v, want ErrCorrupt", err)
	}
}

// raw edits a closed store with bbolt directly.
func raw(t *testing.T, path string, fn func(*bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
}

func TestJobs(t *testing.T) {
	s, _ := open(t)
	ids := []uint64{300, 1 << 40, 7, 1<<63 + 5}
	err := s.Update(func(tx *Tx) error {
		for _, id := range ids {
			if err := tx.CreateJob(id, map[string][]byte{JobEventlog: []byte("a\n")}); err != nil {
				return err
			}
		}
		if err := tx.AppendJobValue(7, JobEventlog, []byte("b\n")); err != nil {
			return err
		}
		if err := tx.PutJobValue(7, JobR, []byte("{}")); err != nil {
			return err
		}
		if err := tx.CreateJob(7, nil); !errors.Is(err, ErrExists) {
			t.Errorf("CreateJob twice = %v, want ErrExists", err)
		}
		if err := tx.PutJobValue(8, JobR, nil); !errors.Is(err, ErrNotFound) {
			t.Errorf("PutJobValue on unknown job = %v, want ErrNotFound", err)
		}
		if err := tx.AppendJobValue(8, JobEventlog, nil); !errors.Is(err, ErrNotFound) {
			t.Errorf("AppendJobValue on unknown job = %v, want ErrNotFound", err)
		}
		return tx.DeleteJob(300)
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.View(func(tx *Tx) error {
		var got []uint64
		var logs []string
		err := tx.ForEachJob(0, func(id uint64, get func(string) []byte) (bool, error) {
			got = append(got, id)
			logs = append(logs, string(get(JobEventlog)))
			return true, nil
		})
		if err != nil {
			return err
		}
		// Big-endian keys walk in numeric (submit) order.
		if diff := cmp.Diff([]uint64{7, 1 << 40, 1<<63 + 5}, got); diff != "" {
			t.Errorf("ForEachJob order (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"a\nb\n", "a\n", "a\n"}, logs); diff != "" {
			t.Errorf("eventlogs (-want +got):\n%s", diff)
		}
		got = nil
		_ = tx.ForEachJob(8, func(id uint64, _ func(string) []byte) (bool, error) {
			got = append(got, id)
			return false, nil
		})
		if diff := cmp.Diff([]uint64{1 << 40}, got); diff != "" {
			t.Errorf("ForEachJob from 8, stop after one (-want +got):\n%s", diff)
		}
		if _, err := tx.JobValue(300, JobEventlog); !errors.Is(err, ErrNotFound) {
			t.Errorf("deleted job still there: %v", err)
		}
		if v, err := tx.JobValue(7, JobSummary); err != nil || v != nil {
			t.Errorf("absent value = %q, %v; want nil, nil", v, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestUpdateIsAtomic(t *testing.T) {
	s, _ := open(t)
	boom := errors.New("boom")
	err := s.Update(func(tx *Tx) error {
		if err := tx.CreateJob(1, nil); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update err = %v", err)
	}
	_ = s.View(func(tx *Tx) error {
		if tx.HasJob(1) {
			t.Error("a failed transaction left a job behind")
		}
		return nil
	})
}

func TestLastJobIDNeverMovesBack(t *testing.T) {
	s, _ := open(t)
	err := s.Update(func(tx *Tx) error {
		if err := tx.SetLastJobID(10); err != nil {
			return err
		}
		return tx.SetLastJobID(9)
	})
	if err == nil {
		t.Fatal("last job id moved backwards")
	}
}

func TestQueuesAndResources(t *testing.T) {
	s, _ := open(t)
	err := s.Update(func(tx *Tx) error {
		for _, q := range []string{"debug", "batch"} {
			if err := tx.PutQueue(q, []byte(`{"q":"`+q+`"}`)); err != nil {
				return err
			}
		}
		if err := tx.PutQueue("", []byte(`{"q":"anonymous"}`)); err != nil {
			return err
		}
		if err := tx.PutQueueConfig([]byte(`{"queues":{}}`)); err != nil {
			return err
		}
		if err := tx.PutInventory([]byte(`{"version":1}`)); err != nil {
			return err
		}
		if err := tx.PutDrain(3, []byte(`{"reason":"bad fan"}`)); err != nil {
			return err
		}
		if err := tx.PutDrain(1, []byte(`{}`)); err != nil {
			return err
		}
		return tx.PutDrain(1, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.View(func(tx *Tx) error {
		var names []string
		_ = tx.ForEachQueue(func(name string, _ []byte) error { names = append(names, name); return nil })
		if diff := cmp.Diff([]string{"", "batch", "debug"}, names); diff != "" {
			t.Errorf("queues (-want +got):\n%s", diff)
		}
		if got := string(tx.Queue("")); got != `{"q":"anonymous"}` {
			t.Errorf("anonymous queue = %q", got)
		}
		if got := string(tx.QueueConfig()); got != `{"queues":{}}` {
			t.Errorf("queue config = %q", got)
		}
		if got := string(tx.Queue("debug")); got != `{"q":"debug"}` {
			t.Errorf("queue debug = %q", got)
		}
		if tx.Queue("nosuch") != nil {
			t.Error("unknown queue has state")
		}
		if got := string(tx.Inventory()); got != `{"version":1}` {
			t.Errorf("inventory = %q", got)
		}
		var ranks []uint64
		_ = tx.ForEachDrain(func(rank uint64, _ []byte) error { ranks = append(ranks, rank); return nil })
		if diff := cmp.Diff([]uint64{3}, ranks); diff != "" {
			t.Errorf("drained ranks (-want +got):\n%s", diff)
		}
		return nil
	})
}

func TestBootID(t *testing.T) {
	s, _ := open(t)
	_ = s.View(func(tx *Tx) error {
		if got := tx.BootID(); got != "" {
			t.Errorf("new store: BootID() = %q, want none", got)
		}
		return nil
	})
	if err := s.Update(func(tx *Tx) error { return tx.PutBootID("boot-1") }); err != nil {
		t.Fatal(err)
	}
	_ = s.View(func(tx *Tx) error {
		if got := tx.BootID(); got != "boot-1" {
			t.Errorf("BootID() = %q, want boot-1", got)
		}
		return nil
	})
}
