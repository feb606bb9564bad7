package shell

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// OpenOutput opens a file of the job folder dir (its stdout or stderr)
// for a reader such as `fluxq output` or `attach`, for a job of user uid.
// A guest's folder is the guest's to change, and the reader may be root:
// so the file is opened never through a symlink and without blocking on
// a FIFO, and kept only if it is a regular file that, unless the reader is the job's user, the job's user
// owns, which a hard link to someone else's file is not. What the job's
// user could not have read is thus never read for it. A missing file is
// fs.ErrNotExist: nothing written yet.
func OpenOutput(dir, name string, uid uint32) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW|syscall.O_NOCTTY, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s is a symbolic link: not followed", name)
	}
	if err != nil {
		return nil, err
	}
	if err := checkOutput(f, name, uid, uint32(os.Geteuid())); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// checkOutput is OpenOutput's check of the open file, for a reader of
// effective uid euid.
func checkOutput(f *os.File, name string, uid, euid uint32) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (%s): not read", name, kind(fi.Mode()))
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("%s: cannot tell its owner: not read", name)
	}
	if euid != uid && st.Uid != uid {
		return fmt.Errorf("%s belongs to uid %d, not to the job's user %d: not read", name, st.Uid, uid)
	}
	return nil
}

// kind names a file type that is not a regular file.
func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "of type " + m.Type().String()
}
