package store

import (
	"golang.org/x/sys/unix"

	bolt "go.etcd.io/bbolt"
)

// DropMapped lets go of the store's pages that reads have mapped into this
// process, as resident memory: bbolt reads the file through a shared,
// read-only mapping, and every page a read touches stays in the process's
// resident set (RssFile) until memory runs short. One `fluxq stats` over
// 100,000 jobs reads every job's bucket, and left fluxsched 420 MB larger
// for good (bench/rss_pending.sh). The pages stay in the kernel's page
// cache, so the next read that needs one maps it again without I/O.
//
// It runs inside a read transaction, which holds bbolt's mapping in place
// (a remap waits for every open transaction): the range advised is the
// mapping itself, never memory that replaced it. Other readers are not
// disturbed: a shared file mapping whose page tables are dropped reads the
// same bytes, from the page cache, at its next touch.
func (s *Store) DropMapped() error {
	return s.db.View(func(tx *bolt.Tx) error {
		data, size := s.db.Info().Data, tx.Size()
		if data == 0 || size <= 0 {
			return nil
		}
		_, _, errno := unix.Syscall(unix.SYS_MADVISE, data, uintptr(size), unix.MADV_DONTNEED)
		if errno != 0 {
			return errno
		}
		return nil
	})
}
