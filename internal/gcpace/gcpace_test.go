package gcpace

import (
	"context"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	for _, tc := range []struct {
		live uint64
		want int
	}{
		{0, 1600},
		{1 << 20, 1600},       // 16 MiB of room past 1 MiB is 1,600%
		{512 << 10, 1600},     // capped
		{4 << 20, 400},        // 16 MiB past 4 MiB
		{8 << 20, 200},        // 16 MiB past 8 MiB
		{16 << 20, 100},       // the default from here on
		{1 << 30, 100},        // never below the default
		{(16 << 20) / 3, 300}, // rounds down
	} {
		if got := Percent(tc.live); got != tc.want {
			t.Errorf("Percent(%d) = %d, want %d", tc.live, got, tc.want)
		}
	}
}

func TestLimit(t *testing.T) {
	for _, tc := range []struct {
		live uint64
		want int64
	}{
		{0, 32 << 20},             // the goal's headroom, and as much again
		{8 << 20, 44 << 20},       // plus the live heap and half again
		{1 << 30, 3<<29 + 32<<20}, // a large instance only raises it
	} {
		if got := Limit(tc.live); got != tc.want {
			t.Errorf("Limit(%d) = %d, want %d", tc.live, got, tc.want)
		}
	}
}

// After a collection, the collector is paced from the live heap it found:
// the percent, and the soft memory limit that returns what a burst left
// to the system.
func TestStartPacesAfterCollections(t *testing.T) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("$GOGC or $GOMEMLIMIT is set: Start leaves that to them")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	Start(ctx)
	keep := make([][]byte, 64)
	for i := range keep {
		keep[i] = make([]byte, 1<<20) // 64 MiB live: Percent is 100
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		cur := debug.SetGCPercent(-1)
		debug.SetGCPercent(cur)
		limit := debug.SetMemoryLimit(-1)
		if cur == 100 && limit >= Limit(64<<20) && limit <= Limit(96<<20) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after collections with 64 MiB live: GOGC %d, memory limit %d; want 100 and a limit between %d and %d", cur, limit, Limit(64<<20), Limit(96<<20))
		}
		time.Sleep(time.Millisecond)
	}
	runtime.KeepAlive(keep)
}

// $GOMEMLIMIT, if set, stays the memory limit; the percent is still paced.
func TestStartKeepsGOMEMLIMIT(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("$GOGC is set: Start leaves the collector alone")
	}
	t.Setenv("GOMEMLIMIT", "1TiB")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(1 << 40))
	Start(ctx)
	keep := make([][]byte, 64)
	for i := range keep {
		keep[i] = make([]byte, 1<<20)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		cur := debug.SetGCPercent(-1)
		debug.SetGCPercent(cur)
		if cur == 100 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GOGC %d after collections with 64 MiB live, want 100", cur)
		}
		time.Sleep(time.Millisecond)
	}
	if limit := debug.SetMemoryLimit(-1); limit != 1<<40 {
		t.Errorf("memory limit %d with $GOMEMLIMIT set, want it kept (%d)", limit, int64(1<<40))
	}
	runtime.KeepAlive(keep)
}

// A Burst lifts the memory limit, through collections, until the last
// one under way ends; then the limit is the live heap's again.
func TestBurst(t *testing.T) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("$GOGC or $GOMEMLIMIT is set: Start leaves that to them")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	Start(ctx)
	runtime.GC()
	limit := func() int64 { return debug.SetMemoryLimit(-1) }
	end1 := Burst()
	end2 := Burst()
	for range 3 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // the finalizer's apply
	}
	if got := limit(); got != math.MaxInt64 {
		t.Errorf("during two bursts and collections: limit %d, want none", got)
	}
	end1()
	end1() // a second call changes nothing
	if got := limit(); got != math.MaxInt64 {
		t.Errorf("one burst of two ended: limit %d, want none", got)
	}
	end2()
	if got := limit(); got == math.MaxInt64 || got > Limit(1<<30) {
		t.Errorf("both bursts ended: limit %d, want the live heap's", got)
	}
	cancel()
	end := Burst()
	defer end()
	if got := limit(); got == math.MaxInt64 {
		t.Errorf("a burst after the pacer stopped lifted the limit")
	}
}
