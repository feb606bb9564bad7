package runner

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/user"
	"runtime"
	"strconv"
	"syscall"
)

// Notes of the exceptions raised on a job that is not ours to run.
const (
	noteNoUser  = "cannot run the job as uid %d: %v"
	noteNotRoot = "cannot run a job of uid %d: fluxsched is not running as root"
)

// errNoSuchID is returned for the id -1, which the set*id calls read as
// "leave unchanged": with it a thread meant to drop root would keep it.
var errNoSuchID = errors.New("uid or gid 4294967295 is no identity")

// credentialFor decides as whom a job of uid is run by a runner with
// effective uid euid: nil, as the runner itself, when uid is its own; the
// user's uid and groups (found by lookup) when the runner is root;
// otherwise nobody, with the note of the exception to raise. A guest's job
// never runs as the owner.
func credentialFor(euid, uid uint32, lookup func(uint32) (*syscall.Credential, error)) (*syscall.Credential, string) {
	if uid == euid {
		return nil, ""
	}
	if euid != 0 {
		return nil, fmt.Sprintf(noteNotRoot, uid)
	}
	if uid == math.MaxUint32 {
		return nil, fmt.Sprintf(noteNoUser, uid, errNoSuchID)
	}
	cred, err := lookup(uid)
	if err != nil {
		return nil, fmt.Sprintf(noteNoUser, uid, err)
	}
	if cred.Uid != uid || cred.Gid == math.MaxUint32 {
		return nil, fmt.Sprintf(noteNoUser, uid, errNoSuchID)
	}
	return cred, ""
}

// lookupUser returns the credential of the user uid: its primary group and
// the groups it belongs to, as login would give them.
func lookupUser(uid uint32) (*syscall.Credential, error) {
	u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10))
	if err != nil {
		return nil, err
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("user %s: primary group %q: %w", u.Username, u.Gid, err)
	}
	ids, err := u.GroupIds()
	if err != nil {
		return nil, fmt.Errorf("user %s: groups: %w", u.Username, err)
	}
	groups := make([]uint32, 0, len(ids))
	for _, id := range ids {
		g, err := strconv.ParseUint(id, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("user %s: group %q: %w", u.Username, id, err)
		}
		groups = append(groups, uint32(g))
	}
	return &syscall.Credential{Uid: uid, Gid: uint32(gid), Groups: groups}, nil
}

// giveFolder hands the new job folder, still empty, to the job's user:
// from then on the user may change anything in it, and the runner writes
// nothing there but with the user's rights. Lchown, though nothing there
// is the user's yet, so that no symlink is ever followed.
func giveFolder(dir string, cred *syscall.Credential) error {
	return os.Lchown(dir, int(cred.Uid), int(cred.Gid))
}

// asUser runs f with the rights of uid and gid alone, no supplementary
// groups: what the runner opens or looks up for a guest's job (its output
// files, its command, its working directory) it must reach with no more
// rights than the guest has.
//
// Linux keeps credentials per thread, and Go's own set*id calls change
// every thread's; so f runs on a thread of its own that drops to uid with
// raw system calls, and is never unlocked: it ends with f, and no other
// goroutine ever runs with those credentials.
func asUser(uid, gid uint32, f func()) error {
	if uid == math.MaxUint32 || gid == math.MaxUint32 {
		return errNoSuchID
	}
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := dropThread(uid, gid); err != nil {
			done <- err
			return
		}
		f()
		done <- nil
	}()
	return <-done
}

// dropThread gives the calling thread alone the identity uid and gid, for
// good: real, effective and saved ids alike, so that it cannot come back.
func dropThread(uid, gid uint32) error {
	if _, _, e := syscall.RawSyscall(sysSetgroups, 0, 0, 0); e != 0 {
		return fmt.Errorf("setgroups: %w", e)
	}
	if _, _, e := syscall.RawSyscall(sysSetresgid, uintptr(gid), uintptr(gid), uintptr(gid)); e != 0 {
		return fmt.Errorf("setresgid %d: %w", gid, e)
	}
	if _, _, e := syscall.RawSyscall(sysSetresuid, uintptr(uid), uintptr(uid), uintptr(uid)); e != 0 {
		return fmt.Errorf("setresuid %d: %w", uid, e)
	}
	return nil
}
