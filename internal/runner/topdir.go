package runner

import (
	"golang.org/x/sys/unix"
)

// markTopDir asks ext2/3/4 to place the folders made in dir (the job
// folders) as it places the folders of its root: spread over the block
// groups with the most free inodes (the Orlov allocator), instead of in
// dir's own group. A job folder and its files are new inodes (made only
// when the job writes: see folder), and ext4 skips every inode of a group
// deleted in the last minutes when it allocates one, at a cost per skipped
// inode: in the group of a busy /tmp or of the folders of purged jobs,
// allocating took 0.4-0.8 ms of kernel time per job on this machine's
// ext4, in a group of its own about 0.25 ms (three creations each). The
// job folder's files follow the folder to its group. Best effort: other
// filesystems have no such flag (the ioctl fails, or the flag means
// nothing to them).
func markTopDir(dir string) {
	const topDir = 0x00020000 // FS_TOPDIR_FL, linux/fs.h
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	flags, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS)
	if err != nil || flags&topDir != 0 {
		return
	}
	unix.IoctlSetPointerInt(fd, unix.FS_IOC_SETFLAGS, int(flags|topDir))
}
