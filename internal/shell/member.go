package shell

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// SessionOf returns the session id of process pid, from /proc/PID/stat.
func SessionOf(pid int) (int, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces or
	// parentheses itself: the fields that follow start after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	f := bytes.Fields(b[i+1:])
	// After the name: state, ppid, pgrp, session.
	if len(f) < 4 {
		return 0, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	return strconv.Atoi(string(f[3]))
}

// InJob reports whether process pid runs inside the job whose folder is
// dir: the job shell is a session leader (exec starts it with setsid) and
// its tasks stay in its session, so a process whose session is the
// shell's pid belongs to the job. A job's environment variable alone
// proves nothing; this is what the instance checks it against.
func InJob(dir string, pid int) bool {
	if pid <= 0 {
		return false
	}
	shellPID, err := ReadPID(dir)
	if err != nil || shellPID <= 0 {
		return false
	}
	sid, err := SessionOf(pid)
	return err == nil && sid == shellPID
}
