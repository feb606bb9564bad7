package runner

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// statFields returns the fields of /proc/PID/stat from field 3 (state) on:
// the command name (field 2) may hold anything, so they are read after its
// last ')'. Field N is at index N-3; at least n of them are there.
func statFields(pid, n int) ([][]byte, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndexByte(b, ')')
	var f [][]byte
	if i >= 0 {
		f = bytes.Fields(b[i+1:])
	}
	if len(f) < n {
		return nil, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	return f, nil
}

// startTime returns field 22 of /proc/PID/stat: when the process started,
// in clock ticks since boot, which tells a process from a later one that
// got its pid.
func startTime(pid int) (uint64, error) {
	f, err := statFields(pid, 20)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(string(f[19]), 10, 64)
}

// orphans returns the children of this process that are no task: the
// processes that jobs left behind, reparented to us, the subreaper. It
// reads every process's parent from /proc rather than the per-thread
// children lists, which miss a child while it moves to another thread
// (a Go thread that ends hands its children on).
func orphans() []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var out []int
	reaper.mu.Lock()
	defer reaper.mu.Unlock()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || reaper.tasks[pid] != nil {
			continue
		}
		if ppid, err := parentOf(pid); err == nil && ppid == self {
			out = append(out, pid)
		}
	}
	return out
}

// parentOf returns field 4 of /proc/PID/stat.
func parentOf(pid int) (int, error) {
	f, err := statFields(pid, 2)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(string(f[1]))
}

// groupAndSession returns fields 5 and 6 of /proc/PID/stat.
func groupAndSession(pid int) (pgrp, sid int, err error) {
	f, err := statFields(pid, 4)
	if err != nil {
		return 0, 0, err
	}
	pgrp, err = strconv.Atoi(string(f[2]))
	if err == nil {
		sid, err = strconv.Atoi(string(f[3]))
	}
	return pgrp, sid, err
}

// orphanOf reports whether the orphan pid belongs to the job: it is in the
// process group or session of one of its tasks, or it carries the job's
// FLUXQ_JOB_ID, as every process a task starts does unless it clears its
// environment. A process could claim another job's id, but an orphan is
// always some job's, so the claim can only get the claimant's own process
// killed. sure is false when the process could not be read (it may be
// between fork and exec, or exiting): the caller asks again later rather
// than guess either way.
func (j *job) orphanOf(pid int) (ours, sure bool) {
	if pgrp, sid, err := groupAndSession(pid); err == nil {
		for _, t := range j.tasks {
			if pgrp == t.pid || sid == t.pid {
				return true, true
			}
		}
	}
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		// Gone: nothing to kill. Else unreadable for now (an exec in
		// progress replaces what this reads).
		return false, errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ESRCH)
	}
	for _, kv := range bytes.Split(env, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte("FLUXQ_JOB_ID=")); ok {
			return string(v) == j.id.String() || string(v) == j.plainID(), true
		}
	}
	return false, true
}
