// Package diskspace is the room guests leave free on a filesystem, for
// the instance: its store, the exec agent's journal, the owner's work.
//
// What the instance writes for a guest (a guest job's output, copied by
// the exec agent; a guest's jobs, stored by fluxsched) is written with
// root's rights, which may use the blocks a filesystem keeps for root.
// So it is written only while the filesystem keeps Reserve free for
// unprivileged writers (statfs f_bavail): a guest never fills the state
// directory's filesystem through the instance.
package diskspace

import "golang.org/x/sys/unix"

// The reserve: 5% of the filesystem, at most 1G, in whole KiB.
const (
	Percent = 5
	Max     = 1 << 30
)

// Reserve is the room kept on a filesystem of this statfs.
func Reserve(st *unix.Statfs_t) uint64 {
	return min(st.Blocks*uint64(st.Bsize)*Percent/100, Max) &^ 1023
}

// roomFor reports whether n more bytes leave the reserve.
func roomFor(st *unix.Statfs_t, n uint64) (bool, uint64) {
	reserve := Reserve(st)
	avail := st.Bavail * uint64(st.Bsize)
	return avail >= reserve && avail-reserve >= n, reserve
}

// RoomFD reports whether n more bytes written for a guest to the file fd
// leave its filesystem the reserve, and what the reserve is. When the
// filesystem cannot be asked, it says yes: the write tells what happens.
func RoomFD(fd int, n uint64) (bool, uint64) {
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil {
		return true, 0
	}
	return roomFor(&st, n)
}

// RoomPath is RoomFD for the filesystem holding path.
func RoomPath(path string, n uint64) (bool, uint64) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return true, 0
	}
	return roomFor(&st, n)
}
