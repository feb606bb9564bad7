package store

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"
)

// Precheck decides whether the file at path may be given to bbolt: a
// missing file may (bbolt makes a new store); an existing one must pass
// CheckMeta, and CheckFile's full walk with opts.FullCheck. The check
// runs under a shared lock of the file, so that no writer (a running
// fluxsched) changes it while it is read: a busy store waits up to
// opts.Timeout, then is ErrBusy, as bbolt's own lock would be.
func Precheck(path string, opts Options) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		// bbolt reports it (a permission denied) as it always has.
		return nil
	}
	defer f.Close()
	if err := lockShared(f, opts.Timeout); err != nil {
		return openError(path, err)
	}
	fi, err := f.Stat()
	for tries := 0; err == nil && fi.Size() == 0 && tries < 10; tries++ {
		// bbolt creates a new file before it locks it to write its first
		// pages: an empty file may be a store another command is making
		// this very moment. Give it a moment before calling it damaged.
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		time.Sleep(100 * time.Millisecond)
		if err = lockShared(f, opts.Timeout); err == nil {
			fi, err = f.Stat()
		}
	}
	if err != nil {
		return openError(path, err)
	}
	var rep *Report
	if opts.FullCheck {
		rep, err = checkOpen(f, fi.Size())
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	} else {
		rep, _ = CheckMeta(f, fi.Size())
	}
	if opts.Checked != nil {
		opts.Checked(rep)
	}
	return rep.Err(path)
}

// checkOpen is CheckFile on an open file.
func checkOpen(f *os.File, size int64) (*Report, error) {
	rep, m := CheckMeta(f, size)
	if !rep.OK() {
		return rep, nil
	}
	return rep, walkFile(f, m, rep, nil)
}

// lockShared takes a shared flock of f, trying again until timeout (zero:
// forever), as bbolt does for its own lock.
func lockShared(f *os.File, timeout time.Duration) error {
	start := time.Now()
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB)
		if err == nil {
			return nil
		}
		if err != unix.EWOULDBLOCK {
			return err
		}
		if timeout > 0 && time.Since(start) > timeout {
			return bolt.ErrTimeout
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// openBolt is bolt.Open with its faults and panics on a damaged file
// turned into a *DamagedError: the second line of defence behind
// Precheck, for damage that appears between the check and the open.
func openBolt(path string, o *bolt.Options) (db *bolt.DB, err error) {
	defer guard(path, &err)()
	return bolt.Open(path, 0o600, o)
}

// guard turns a fault or a panic raised inside bbolt, reading a damaged
// page, into a *DamagedError in *err, so that no Go trace reaches a user.
// Call it as `defer guard(path, &err)()`. debug.SetPanicOnFault makes a
// fault on the mapped file (SIGBUS past its end) a panic of this
// goroutine, which bbolt's reads run on. A panic raised outside bbolt
// (a bug of ours) is not damage, and goes on.
func guard(path string, err *error) func() {
	old := debug.SetPanicOnFault(true)
	return func() {
		r := recover()
		debug.SetPanicOnFault(old)
		if r == nil {
			return
		}
		if !inBolt(r) {
			panic(r)
		}
		*err = &DamagedError{Path: path, Problem: "bbolt could not read a page: " + strings.TrimPrefix(fmt.Sprint(r), "assertion failed: ")}
	}
}

// inBolt reports whether the panic r being recovered is damage met by
// bbolt: raised in bbolt's own code (its assertions, an index past a
// page), or a fault on an address that is not a nil pointer's while
// bbolt is on the stack (a value it handed out points past the file's
// end). The panicking frames are still on the stack under the deferred
// call that recovers.
func inBolt(r any) bool {
	pcs := make([]uintptr, 100)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	innermost, onStack := true, false
	for {
		fr, more := frames.Next()
		fn := fr.Function
		isBolt := strings.HasPrefix(fn, "go.etcd.io/bbolt.") || strings.HasPrefix(fn, "go.etcd.io/bbolt/")
		if innermost && !strings.HasPrefix(fn, "runtime.") && fn != "" {
			if isBolt {
				return true
			}
			innermost = false
		}
		onStack = onStack || isBolt
		if !more {
			break
		}
	}
	type fault interface{ Addr() uintptr }
	f, ok := r.(fault)
	return ok && onStack && f.Addr() >= 1<<16
}
