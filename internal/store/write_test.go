package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// On a full filesystem a commit fails with an error that names the store
// and is ENOSPC; nothing of it is kept, the store stays usable, and once
// space is freed the same writes commit and everything before is intact.
// The filesystem is a small tmpfs, which only root may mount.
func TestFullFilesystem(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	path := filepath.Join(dir, "fluxq.db")
	s, err := Open(path, Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	put := func(id uint64) error {
		return s.Update(func(tx *Tx) error {
			return tx.CreateJob(id, map[string][]byte{JobJobspec: make([]byte, 16<<10)})
		})
	}
	if err := put(1); err != nil {
		t.Fatal(err)
	}
	filler := filepath.Join(dir, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	for err == nil {
		_, err = f.Write(make([]byte, 64<<10))
	}
	f.Close()
	// Free pages inside the file may take a few writes first.
	var id uint64 = 2
	for ; id < 200; id++ {
		if err = put(id); err != nil {
			break
		}
	}
	var we *WriteError
	if !errors.As(err, &we) || !errors.Is(err, syscall.ENOSPC) || err.Error() != fmt.Sprintf("cannot write the store %s: no space left on device", path) {
		t.Fatalf("commit on a full filesystem: %v (%T), want the store's ENOSPC naming %s", err, err, path)
	}
	if err := s.View(func(tx *Tx) error {
		if tx.HasJob(id) {
			return fmt.Errorf("job %d was kept", id)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	os.Remove(filler)
	if err := put(id); err != nil {
		t.Fatalf("after freeing space: %v", err)
	}
	err = s.View(func(tx *Tx) error {
		for i := uint64(1); i <= id; i++ {
			if !tx.HasJob(i) {
				return fmt.Errorf("job %d is missing", i)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// FailCommit fails a commit as a full disk would, and an operation's own
// error is returned as it is.
func TestFailCommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fluxq.db")
	s, err := Open(path, Options{Timeout: time.Second, FailCommit: func() error { return syscall.ENOSPC }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.Update(func(tx *Tx) error { return tx.CreateJob(1, nil) })
	if !errors.Is(err, syscall.ENOSPC) || err.Error() != "cannot write the store "+path+": no space left on device" {
		t.Errorf("failed commit: %v", err)
	}
	mine := errors.New("refused")
	if err := s.Update(func(tx *Tx) error { return mine }); err != mine {
		t.Errorf("operation error = %v, want it unchanged", err)
	}
}

// An Update that only reads commits nothing, so it works on a full
// filesystem; one that writes anything commits.
func TestReadOnlyUpdateNeedsNoDisk(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fluxq.db")
	commits := 0
	s, err := Open(path, Options{Timeout: time.Second, FailCommit: func() error {
		commits++
		return syscall.ENOSPC
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.Update(func(tx *Tx) error {
		tx.HasJob(1)
		tx.Queue("")
		_ = tx.ForEachJob(0, func(uint64, func(string) []byte) (bool, error) { return true, nil })
		return nil
	})
	if err != nil || commits != 0 {
		t.Errorf("read-only update: err %v after %d commits, want nil after none", err, commits)
	}
	for name, write := range map[string]func(tx *Tx) error{
		"job":        func(tx *Tx) error { return tx.CreateJob(1, nil) },
		"sequence":   func(tx *Tx) error { _, err := tx.AppendToolEvent("u", []byte("{}")); return err },
		"last jobid": func(tx *Tx) error { return tx.SetLastJobID(7) },
		"drain":      func(tx *Tx) error { return tx.PutDrain(3, []byte("{}")) },
	} {
		commits = 0
		if err := s.Update(write); !errors.Is(err, syscall.ENOSPC) || commits != 1 {
			t.Errorf("%s: err %v after %d commits, want ENOSPC after one", name, err, commits)
		}
	}
}
