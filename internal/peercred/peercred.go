// Package peercred reads who is at the other end of a unix socket
// (SO_PEERCRED): the kernel's word, which a client cannot forge, and the
// only thing the server and the exec agent decide access on.
package peercred

import (
	"net"

	"golang.org/x/sys/unix"
)

// Of returns the credentials of c's peer as they were when it connected.
func Of(c *net.UnixConn) (*unix.Ucred, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return nil, err
	}
	return cred, cerr
}
