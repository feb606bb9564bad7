package store

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// fillJobs stores n jobs of size bytes each, then deletes those for which
// del says so.
func fillJobs(t *testing.T, s *Store, n, size int, del func(i int) bool) {
	t.Helper()
	val := bytes.Repeat([]byte("x"), size)
	for start := 0; start < n; start += 500 {
		err := s.Update(func(tx *Tx) error {
			for i := start; i < min(start+500, n); i++ {
				if err := tx.CreateJob(uint64(i+1), map[string][]byte{JobEventlog: val}); err != nil {
					return err
				}
			}
			return tx.SetLastJobID(uint64(min(start+500, n)))
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	err := s.Update(func(tx *Tx) error {
		for i := 0; i < n; i++ {
			if del(i) {
				if err := tx.DeleteJob(uint64(i + 1)); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCompactIfSparse(t *testing.T) {
	for _, tc := range []struct {
		name      string
		n         int
		del       func(i int) bool
		compacted bool
	}{
		{"most purged", 4000, func(i int) bool { return i%10 != 0 }, true},
		{"few purged", 4000, func(i int) bool { return i%10 == 0 }, false},
		{"small file", 50, func(int) bool { return true }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "fluxq.db")
			s, err := Open(path, Options{Timeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			fillJobs(t, s, tc.n, 1024, tc.del)
			var kept int
			s.View(func(tx *Tx) error {
				return tx.ForEachJob(0, func(uint64, func(string) []byte) (bool, error) { kept++; return true, nil })
			})
			s, c, err := CompactIfSparse(s, Options{Timeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			if got := c.After < c.Before; got != tc.compacted {
				t.Errorf("compacted %v (%d -> %d bytes), want %v", got, c.Before, c.After, tc.compacted)
			}
			if tc.compacted && c.After > c.Before/2 {
				t.Errorf("compacted %d -> %d bytes: less than half saved", c.Before, c.After)
			}
			if _, err := os.Stat(path + ".compact"); !os.IsNotExist(err) {
				t.Errorf("the copy is left beside the store: %v", err)
			}
			// Every record is still there, and the meta with them.
			s, err = Open(path, Options{Timeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var after int
			err = s.View(func(tx *Tx) error {
				if tx.LastJobID() != uint64(tc.n) {
					t.Errorf("last job id %d, want %d", tx.LastJobID(), tc.n)
				}
				return tx.ForEachJob(0, func(id uint64, get func(string) []byte) (bool, error) {
					after++
					if len(get(JobEventlog)) != 1024 {
						t.Errorf("job %d: eventlog of %d bytes", id, len(get(JobEventlog)))
					}
					return true, nil
				})
			})
			if err != nil || after != kept {
				t.Errorf("after compaction %d jobs (%v), want %d", after, err, kept)
			}
		})
	}
}

// A process that opened the old file and waited for its lock while a
// compaction replaced it opens the new one, never writes the old.
func TestOpenAfterCompactionReplacedTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fluxq.db")
	s, err := Open(path, Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	fillJobs(t, s, 4000, 1024, func(i int) bool { return i > 0 })
	s.Close()

	hold, err := Open(path, Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	opened := make(chan *Store, 1)
	go func() {
		s, err := Open(path, Options{Timeout: 10 * time.Second})
		if err != nil {
			t.Error(err)
		}
		opened <- s
	}()
	time.Sleep(100 * time.Millisecond) // it waits on the old file's lock
	// As CompactIfSparse does, while holding the lock: a new file renamed
	// over the old.
	tmp := path + ".new"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	hold.Close()
	s2 := <-opened
	if s2 == nil {
		return
	}
	defer s2.Close()
	if err := s2.Update(func(tx *Tx) error { return tx.SetLastJobID(9999) }); err != nil {
		t.Fatal(err)
	}
	s2.Close()
	s3, err := Open(path, Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s3.Close()
	s3.View(func(tx *Tx) error {
		if tx.LastJobID() != 9999 {
			t.Errorf("the write went to the replaced file: last job id %d", tx.LastJobID())
		}
		return nil
	})
}
