package client

import (
	"errors"
	"syscall"
)

// Errno is the system error number behind err, 0 for none: what the
// socket carries beside a message so the caller can tell a full
// filesystem from a refusal.
func Errno(err error) int {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return int(errno)
	}
	return 0
}

// remoteError is an error the instance answered: its message, and the
// system error behind it, if any, for errors.Is.
func remoteError(msg string, errno int) error {
	if errno == 0 {
		return errors.New(msg)
	}
	return &sysError{msg: msg, errno: syscall.Errno(errno)}
}

type sysError struct {
	msg   string
	errno syscall.Errno
}

func (e *sysError) Error() string { return e.msg }
func (e *sysError) Unwrap() error { return e.errno }
