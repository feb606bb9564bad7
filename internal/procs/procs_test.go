package procs

import (
	"runtime"
	"sync"
	"testing"
)

// reset undoes Narrow for the next test: the package's state is the
// process's.
func reset(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	t.Cleanup(func() {
		mu.Lock()
		narrow, wide, all = false, 0, 0
		mu.Unlock()
		runtime.GOMAXPROCS(before)
	})
}

func TestSplitWithoutNarrow(t *testing.T) {
	reset(t)
	runtime.GOMAXPROCS(3)
	for _, c := range []struct{ want, n int }{{0, 1}, {1, 1}, {2, 2}, {3, 3}, {100, 3}} {
		n, release := Split(c.want)
		if n != c.n {
			t.Errorf("Split(%d) = %d, want %d", c.want, n, c.n)
		}
		if got := runtime.GOMAXPROCS(0); got != 3 {
			t.Errorf("Split(%d) set GOMAXPROCS to %d; a process not narrowed keeps its own", c.want, got)
		}
		release()
	}
}

func TestNarrowAndSplit(t *testing.T) {
	reset(t)
	t.Setenv("GOMAXPROCS", "") // Narrow decides only when it is unset
	runtime.GOMAXPROCS(4)
	Narrow()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Fatalf("after Narrow: GOMAXPROCS %d, want 1", got)
	}
	if got := Max(); got != 4 {
		t.Errorf("after Narrow: Max() = %d, want 4 (the Ps before it)", got)
	}
	// One piece of work needs no second P.
	if n, release := Split(1); n != 1 || runtime.GOMAXPROCS(0) != 1 {
		t.Errorf("Split(1) = %d with GOMAXPROCS %d, want 1 and 1", n, runtime.GOMAXPROCS(0))
	} else {
		release()
	}
	// Two at once: the Ps stay raised until both are released, and a
	// release called twice counts once.
	n1, release1 := Split(10)
	n2, release2 := Split(2)
	if n1 != 4 || n2 != 2 {
		t.Errorf("Split(10), Split(2) = %d, %d; want 4, 2 (the Ps before Narrow)", n1, n2)
	}
	if got := runtime.GOMAXPROCS(0); got != 4 {
		t.Errorf("during a Split: GOMAXPROCS %d, want 4", got)
	}
	release1()
	release1()
	if got := runtime.GOMAXPROCS(0); got != 4 {
		t.Errorf("one Split of two released (twice): GOMAXPROCS %d, want 4", got)
	}
	release2()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("every Split released: GOMAXPROCS %d, want 1", got)
	}
}

func TestNarrowLeavesGOMAXPROCSSet(t *testing.T) {
	reset(t)
	t.Setenv("GOMAXPROCS", "3")
	runtime.GOMAXPROCS(3)
	Narrow()
	if got := runtime.GOMAXPROCS(0); got != 3 {
		t.Errorf("with $GOMAXPROCS=3, Narrow left %d Ps", got)
	}
	if n, release := Split(8); n != 3 {
		t.Errorf("Split(8) = %d, want 3", n)
	} else {
		release()
	}
}

// Splits from many goroutines at once end with the process on one P.
func TestConcurrentSplits(t *testing.T) {
	reset(t)
	t.Setenv("GOMAXPROCS", "")
	runtime.GOMAXPROCS(4)
	Narrow()
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				_, release := Split(4)
				if got := runtime.GOMAXPROCS(0); got != 4 {
					t.Errorf("during a Split: GOMAXPROCS %d, want 4", got)
				}
				release()
			}
		}()
	}
	wg.Wait()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("after every Split: GOMAXPROCS %d, want 1", got)
	}
}
