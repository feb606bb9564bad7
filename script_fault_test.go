package fluxq_test

import (
	"os"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"
)

// cmdTmpfs mounts a tmpfs of the given size on a directory (created if
// needed), for tests of a full filesystem, and unmounts it when the
// script ends. It needs root: scripts using it start with
// `[!root] skip`.
//
//	tmpfs $WORK/state 2m
func cmdTmpfs(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: tmpfs DIR SIZE")
	}
	dir := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(dir, 0o755))
	ts.Check(unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+args[1]))
	// Deferred calls run last first: the agents of a state directory on
	// this filesystem are stopped before it goes, while their pid files
	// can still be read. Detached, so that a process still holding a
	// file there cannot keep it mounted.
	ts.Defer(func() {
		stopAgents(ts.Logf, ts.Getenv("WORK"))
		unix.Unmount(dir, unix.MNT_DETACH)
	})
}
