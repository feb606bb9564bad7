package shell

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// ReserveFile keeps room in the job folder for the shell's last records.
// A job often ends because its filesystem filled up (its output is in the
// folder by default, the state directory shares a disk with others); the
// exception saying so and the wait status must still be written, or the
// job would end as "job shell failed" with the reason lost. The shell
// takes the room when it starts, and gives it back just before it writes
// them.
const ReserveFile = ".reserve"

// reserveSize holds an exception and a status, with room to spare, on
// filesystems of blocks (or pages) up to 8 KiB; it is small because every
// running job keeps one.
const reserveSize = 16 << 10

// reserve allocates the reserve file, best effort: a filesystem already
// full at the start gives nothing to keep.
func reserve(dir string) {
	f, err := os.OpenFile(filepath.Join(dir, ReserveFile), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	err = unix.Fallocate(int(f.Fd()), 0, 0, reserveSize)
	if errors.Is(err, unix.EOPNOTSUPP) {
		// Written zeros hold blocks as well.
		_, err = f.Write(make([]byte, reserveSize))
	}
	if err != nil {
		os.Remove(f.Name())
	}
}

// unreserve gives the room back for the records that follow.
func unreserve(dir string) { os.Remove(filepath.Join(dir, ReserveFile)) }
