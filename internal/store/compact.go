package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
)

// compactMin is the smallest file worth compacting: below it the room a
// copy saves is less than bbolt's own growth steps.
const compactMin = 1 << 20

// compactTxMax bounds each transaction of the copy, so a large store is
// copied in steps rather than held whole in memory.
const compactTxMax = 64 << 20

// Compacted is what CompactIfSparse did: the file's size before and
// after (equal when it was left as it was).
type Compacted struct {
	Before, After int64
}

// CompactIfSparse compacts the open store s when most of its file is free
// pages, and returns the store to use from then on: s itself when it was
// left as it was, else s's file compacted and opened anew (s is closed).
// bbolt reuses the room that deleted records (purged jobs) leave, but
// never gives it back, so after a large purge the file is copied, record
// by record (bbolt's Compact), into a new file beside it, which is synced
// and renamed over the old one while s still holds the old one's lock: no
// other process can write the old file meanwhile, and one that opened it
// and waited for its lock finds, on taking it, that the path names
// another file, and opens again (Open). On a failure of the copy the old
// file is kept as it was, and s with it. opts are those s was opened
// with, for the new open.
func CompactIfSparse(s *Store, opts Options) (*Store, Compacted, error) {
	path := s.Path()
	fi, err := os.Stat(path)
	if err != nil {
		return s, Compacted{}, err
	}
	c := Compacted{Before: fi.Size(), After: fi.Size()}
	// Free room is the pages on the freelist, out of those in use up to
	// the last (bbolt also grows the file ahead of its use, in steps of
	// up to 16 MiB: room a copy would take again at its next growth).
	st := s.db.Stats()
	free := int64(st.FreePageN+st.PendingPageN) * int64(s.db.Info().PageSize)
	var used int64
	s.db.View(func(tx *bolt.Tx) error {
		used = tx.Size()
		return nil
	})
	if used < compactMin || 2*free <= used {
		return s, c, nil
	}
	tmp := path + ".compact"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return s, c, fmt.Errorf("compacting %s: %w", path, err)
	}
	dst, err := bolt.Open(tmp, 0o600, &bolt.Options{Timeout: opts.Timeout})
	if err != nil {
		return s, c, fmt.Errorf("compacting %s: %w", path, err)
	}
	err = bolt.Compact(dst, s.db, compactTxMax)
	if err == nil {
		err = dst.Sync()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return s, c, fmt.Errorf("compacting %s: %w", path, writeError(path, err))
	}
	// The rename is durable once the folder is synced.
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	if fi, err := os.Stat(path); err == nil {
		c.After = fi.Size()
	}
	s.Close()
	n, err := Open(path, opts)
	return n, c, err
}
