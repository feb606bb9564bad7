package shell

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/fluid"
)

// Names of the files in a job folder (see the package doc).
const (
	SpecFile      = "spec.json"
	PIDFile       = "shell.pid"
	LogFile       = "shell.log"
	StdoutFile    = "stdout"
	StderrFile    = "stderr"
	ExceptionFile = "exception"
	StatusFile    = "status"
)

// LockFD is the descriptor on which the exec service hands the shell the
// job folder, open and locked.
const LockFD = 3

// SpecVersion is the version of spec.json this package writes and reads.
const SpecVersion = 1

// Spec is spec.json: what the exec service knows of the job when it
// launches the shell.
type Spec struct {
	Version int             `json:"version"`
	ID      fluid.ID        `json:"id"`
	UserID  uint32          `json:"userid"`
	Jobspec json.RawMessage `json:"jobspec"`
	R       json.RawMessage `json:"R"`
	// Launched is when the exec service launched the shell, in seconds
	// since the epoch: the start of the time limit when R has no times.
	Launched float64 `json:"t_launch"`
}

// Exception is the exception file: a fatal error of the shell, raised by
// the exec service as a job exception (RFC 21).
type Exception struct {
	Type     string `json:"type"`
	Severity int    `json:"severity"`
	Note     string `json:"note"`
}

// WriteSpec writes spec.json into dir. It is not synced: a crash of the
// machine ends the shell too, and a spec that did not survive it means no
// task ran.
func WriteSpec(dir string, s Spec) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return writeFileAtomic(dir, SpecFile, append(b, '\n'), false)
}

// ReadSpec reads spec.json from dir.
func ReadSpec(dir string) (Spec, error) {
	var s Spec
	b, err := ReadFolderFile(dir, SpecFile)
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("%s: %w", SpecFile, err)
	}
	if s.Version != SpecVersion {
		return s, fmt.Errorf("%s: version %d is not %d", SpecFile, s.Version, SpecVersion)
	}
	return s, nil
}

// WritePID records the shell's pid in dir.
func WritePID(dir string, pid int) error {
	return writeFileAtomic(dir, PIDFile, []byte(strconv.Itoa(pid)+"\n"), false)
}

// ReadPID returns the shell pid recorded in dir.
func ReadPID(dir string) (int, error) {
	b, err := ReadFolderFile(dir, PIDFile)
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("%s: not a pid: %q", PIDFile, b)
	}
	return pid, nil
}

// ReadStatus returns the wait status the shell recorded in dir; ok is false
// when there is none yet.
func ReadStatus(dir string) (status int, ok bool, err error) {
	b, err := ReadFolderFile(dir, StatusFile)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	status, err = strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || status < 0 {
		return 0, false, fmt.Errorf("%s: not a wait status: %q", StatusFile, b)
	}
	return status, true, nil
}

// ReadException returns the exception the shell recorded in dir, or nil.
func ReadException(dir string) (*Exception, error) {
	b, err := ReadFolderFile(dir, ExceptionFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var e Exception
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, fmt.Errorf("%s: %w", ExceptionFile, err)
	}
	return &e, nil
}

// writeException records the shell's fatal error, durably, before the
// status that follows it.
func writeException(dir string, e *Exception) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return writeFileAtomic(dir, ExceptionFile, append(b, '\n'), true)
}

// Running reports whether a shell of the job in dir is alive: whether the
// job's lock, a flock(2) of the folder itself, is held. It takes the lock
// for an instant when it is free.
func Running(dir string) (bool, error) {
	f, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("locking %s: %w", dir, err)
	}
	return false, nil // closing f drops the lock
}

// Lock takes the job's lock, failing if a shell of the job holds it. The
// exec service takes it before launching a shell and hands the shell the
// open folder on LockFD.
func Lock(dir string) (*os.File, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, errors.New(msgAlreadyRunning)
		}
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	return f, nil
}

// writeFileAtomic replaces dir/name with data so that a reader sees the old
// file or the new one, never a part. durable also syncs the file and the
// folder, so that the new content survives a crash of the machine.
func writeFileAtomic(dir, name string, data []byte, durable bool) error {
	f, err := os.CreateTemp(dir, "."+name+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil && durable {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(tmp)
		// Named by the file it was to be, not the temporary one.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		var le *os.LinkError
		if errors.As(err, &le) {
			err = le.Err
		}
		return fmt.Errorf("writing %s: %w", filepath.Join(dir, name), err)
	}
	if durable {
		d, err := os.Open(dir)
		if err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
		err = d.Sync()
		d.Close()
		if err != nil {
			return fmt.Errorf("writing %s: syncing the folder: %w", name, err)
		}
	}
	return nil
}

// maxFolderFile bounds what is read of one file of a job folder.
const maxFolderFile = 1 << 20

// ReadFolderFile reads a small file of a job folder. A guest's job folder
// belongs to the guest, who could replace a file with a FIFO (a read would
// block the exec service forever), a symlink or something huge: only a
// regular file is read, never through a symlink, and at most 1 MiB of it.
func ReadFolderFile(dir, name string) ([]byte, error) {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", name)
	}
	return io.ReadAll(io.LimitReader(f, maxFolderFile))
}
