package runner

import (
	"testing"

	"golang.org/x/sys/unix"
)

func TestMarkTopDir(t *testing.T) {
	dir := t.TempDir()
	markTopDir(dir)
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	flags, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS)
	if err != nil {
		t.Skipf("no inode flags on this filesystem: %v", err)
	}
	var st unix.Statfs_t
	if unix.Fstatfs(fd, &st) != nil || st.Type != unix.EXT4_SUPER_MAGIC {
		t.Skip("not ext2/3/4: the flag may mean nothing here")
	}
	if flags&0x00020000 == 0 {
		t.Errorf("flags of %s = %#x: no FS_TOPDIR_FL", dir, flags)
	}
	// Again: nothing changes, nothing fails.
	markTopDir(dir)
}
