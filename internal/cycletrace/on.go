//go:build cycletrace

package cycletrace

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Enabled says that this build marks the cycle.
const Enabled = true

// The marks, in room allocated once: a mark costs a clock read and an
// atomic add, no lock and no allocation, so the cycle it times is not the
// cycle it slows.
var (
	marks [1 << 20]Mark
	n     atomic.Int64
)

// At marks step s of job or turn id now.
func At(s Step, id uint64) {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	i := n.Add(1) - 1
	if i < int64(len(marks)) {
		marks[i] = Mark{Step: s, ID: id, T: ts.Nano()}
	}
}

// Dump writes this process's marks into $FLUXQ_CYCLETRACE, as
// NAME.PID.marks; nothing when it is not set.
func Dump(name string) {
	dir := os.Getenv("FLUXQ_CYCLETRACE")
	if dir == "" {
		return
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s.%d.marks", name, os.Getpid())))
	if err != nil {
		return
	}
	defer f.Close()
	write(f, marks[:min(n.Load(), int64(len(marks)))])
}
