//go:build linux && !386 && !arm

package runner

import "syscall"

// The system calls that set one thread's ids. On 386 and arm these names
// take 16-bit ids (the 32-bit calls end in 32), so the package is left
// unbuilt there rather than truncate a uid.
const (
	sysSetgroups = syscall.SYS_SETGROUPS
	sysSetresgid = syscall.SYS_SETRESGID
	sysSetresuid = syscall.SYS_SETRESUID
)
