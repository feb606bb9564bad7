// Package gcpace sets how often the garbage collector of fluxsched run
// runs: seldom while the live heap is small, as Go's default would while
// it is large.
//
// Go's default (GOGC=100) lets the heap grow by as much as is live
// before collecting again. The loop and the agent keep a few MiB live and
// allocate briskly per job (messages, events), so by default they collect
// every few jobs: about a tenth of their CPU per job went to the
// collector and its write barriers (bench/throughput.sh). A fixed
// headroom instead — the heap may grow by Headroom past what is live,
// and never by less than the live heap itself — costs at most Headroom
// of memory, and is the default's pace once the live heap is larger than
// Headroom.
package gcpace

import (
	"context"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// Headroom is how far the heap may grow past its live part between two
// collections while the live part is smaller than it. 32 MiB cost
// fluxsched 34 MB of resident memory with 1,000 jobs running (bench/rss.sh).
const Headroom = 16 << 20

// every is how often the live heap is looked at.
const every = time.Second

// Start paces the collector until ctx ends. $GOGC, if set, decides
// instead, as it does for any Go program.
func Start(ctx context.Context) {
	if os.Getenv("GOGC") != "" {
		return
	}
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	set := 100
	apply := func() {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return
		}
		if p := Percent(sample[0].Value.Uint64()); p != set {
			set = p
			debug.SetGCPercent(p)
		}
	}
	apply()
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				apply()
			}
		}
	}()
}

// Percent is the GOGC that lets a heap with live bytes live grow by
// Headroom, or by live itself once that is more: never below Go's
// default of 100, and at most 1,600 (a heap that is all but empty).
func Percent(live uint64) int {
	if live == 0 {
		return 1600
	}
	p := uint64(Headroom) * 100 / live
	return int(min(max(p, 100), 1600))
}
