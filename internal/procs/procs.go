// Package procs runs a process on one P while its work is hand-offs
// between goroutines, and on every core while it has work split across
// them.
//
// fluxsched run's work per job is short steps handed from goroutine to
// goroutine: a message read by the exec service's reader, passed to the
// loop, to the scheduler and back. With a second P each hand-off wakes
// another thread to run the goroutine readied (a futex wake, then a spin
// looking for more before it sleeps again); on one P the goroutine
// readied runs next on the same thread. With 8 slots of `true` jobs on
// 2 cores, where the cores are the bound, fluxsched spent about a tenth
// less CPU per job on one P (docs/architecture.md, "Where a short job's
// time goes"). A blocking system call still hands the P on, as for any
// Go program. What fluxsched splits across goroutines to finish sooner
// (a long listing's JSON, a large submission's jobspecs) asks for the
// machine's Ps with Split for as long as it runs.
package procs

import (
	"os"
	"runtime"
	"sync"
)

var (
	mu     sync.Mutex
	narrow bool // Narrow was called: the process runs on one P between Splits
	all    int  // the Ps before Narrow: what a Split may use
	wide   int  // Splits under way
)

// Narrow sets the process to one P, Split raising it for split work.
// $GOMAXPROCS, if set, decides instead, and Narrow does nothing.
func Narrow() {
	if os.Getenv("GOMAXPROCS") != "" {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	if narrow {
		return
	}
	all = runtime.GOMAXPROCS(0)
	narrow = true
	if wide == 0 {
		runtime.GOMAXPROCS(1)
	}
}

// Max is how many goroutines a Split may give: the Ps before Narrow in a
// narrowed process, else GOMAXPROCS.
func Max() int {
	mu.Lock()
	defer mu.Unlock()
	if narrow {
		return all
	}
	return runtime.GOMAXPROCS(0)
}

// Split returns how many goroutines to split work of want pieces across
// (want, at most the Ps the process may use, at least 1) and a release
// to call once they are done. In a narrowed process, the Ps are raised to
// all of them until every Split given more than one goroutine has been
// released.
func Split(want int) (int, func()) {
	mu.Lock()
	defer mu.Unlock()
	n := runtime.GOMAXPROCS(0)
	if narrow {
		n = all
	}
	n = max(1, min(want, n))
	if !narrow || n == 1 {
		return n, func() {}
	}
	if wide == 0 {
		runtime.GOMAXPROCS(all)
	}
	wide++
	var once sync.Once
	return n, func() {
		once.Do(func() {
			mu.Lock()
			defer mu.Unlock()
			wide--
			if wide == 0 && narrow {
				runtime.GOMAXPROCS(1)
			}
		})
	}
}
