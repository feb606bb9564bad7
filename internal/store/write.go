package store

import (
	"errors"
	"fmt"
	"syscall"
)

// WriteError is a transaction the store could not commit: its file could
// not be written, grown or synced (a full or failing filesystem). Nothing
// of the transaction was kept. It unwraps to the system's error, so
// errors.Is(err, syscall.ENOSPC) tells a full filesystem.
type WriteError struct {
	Path string
	Err  error
}

func (e *WriteError) Error() string {
	return fmt.Sprintf("cannot write the store %s: %v", e.Path, e.Err)
}

func (e *WriteError) Unwrap() error { return e.Err }

// writeError words a failed commit once, naming the file: bbolt says
// "write PATH: ..." for a page, and only the errno for a sync.
func writeError(path string, err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		err = errno
	}
	return &WriteError{Path: path, Err: err}
}

// NoSpace reports whether err is a filesystem out of space (or out of the
// user's quota): the kind of failure that clears once space is freed.
func NoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// Wrote reports whether a read-write transaction has written anything
// so far. An Update that wrote nothing is rolled back, not committed: it
// succeeds even while the file cannot be written, so only one that wrote
// shows that the file can be (the loop's recovery is logged on that).
func (t *Tx) Wrote() bool {
	if !t.tx.Writable() {
		return false
	}
	stats := t.tx.Stats()
	return stats.GetNodeCount() > 0
}
