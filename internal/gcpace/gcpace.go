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
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// Headroom is how far the heap may grow past its live part between two
// collections while the live part is smaller than it. 32 MiB cost
// fluxsched 34 MB of resident memory with 1,000 jobs running (bench/rss.sh).
const Headroom = 16 << 20

// Start paces the collector until ctx ends: after every collection, from
// the live heap that collection found. $GOGC, if set, decides instead, as
// it does for any Go program; $GOMEMLIMIT, if set, is the memory limit.
//
// After each collection, not on a timer: the heap goal is set when a
// collection ends, as the live heap times (1 + GOGC/100), so a percent
// chosen for a small heap and left in place while a burst (1,000 jobs
// submitted and allocated at once) made the heap larger let the next goal
// grow to many times the headroom: bench/rss.sh's fluxsched measured
// either about 60 or about 86 MB, depending on whether a one-second tick
// happened to fall inside the burst.
func Start(ctx context.Context) { start(ctx, os.Getenv("GOMEMLIMIT") == "") }

// StartPercent is Start without the memory limit: for a process whose
// live heap only grows until it ends (fluxsched sim, which keeps every
// job's record), where a limit of half the live heap again would collect
// more often than Go's default once the heap is large, and returning
// memory early buys nothing.
func StartPercent(ctx context.Context) { start(ctx, false) }

func start(ctx context.Context, limit bool) {
	if os.Getenv("GOGC") != "" {
		return
	}
	p := &pacer{ctx: ctx, set: 100, limit: limit,
		sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	p.apply()
	p.arm()
	active.Store(p)
}

// active is the pacer Start started, which Burst tells.
var active atomic.Pointer[pacer]

type pacer struct {
	ctx    context.Context
	limit  bool // set the memory limit: $GOMEMLIMIT is not set
	mu     sync.Mutex
	set    int
	bursts int // Bursts under way: the limit is lifted
	sample []metrics.Sample
}

// apply sets the percent for the live heap the last collection found,
// and the limit unless a Burst is under way. It runs on the finalizer
// goroutine, and at a Burst's end.
func (p *pacer) apply() {
	p.mu.Lock()
	defer p.mu.Unlock()
	metrics.Read(p.sample)
	if p.sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	live := p.sample[0].Value.Uint64()
	if pct := Percent(live); pct != p.set {
		p.set = pct
		debug.SetGCPercent(pct)
	}
	if p.limit && p.bursts == 0 {
		debug.SetMemoryLimit(Limit(live))
	}
}

// Burst lifts the memory limit until the function it returns is called
// (then the limit is the live heap's again), for a request whose garbage
// is of the order of the live heap: a listing of 100,000 jobs decodes and
// encodes again every summary, more than the limit leaves above
// fluxsched's 150 MB of pending jobs, and under the limit the collector
// ran over and over and gave the memory back only to fault it in again,
// 30% of fluxsched's CPU for the listing. The percent still paces the
// collector, so a burst's heap grows by what is live, as Go's default
// lets it. Without Start, or with $GOMEMLIMIT set, it does nothing.
func Burst() (end func()) {
	p := active.Load()
	if p == nil || !p.limit || p.ctx.Err() != nil {
		return func() {}
	}
	p.mu.Lock()
	p.bursts++
	debug.SetMemoryLimit(math.MaxInt64)
	p.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			p.bursts--
			p.mu.Unlock()
			p.apply()
		})
	}
}

// arm makes an object that only the next collection frees; its finalizer
// paces the collector and arms the next, until ctx ends.
func (p *pacer) arm() {
	s := &sentinel{}
	runtime.SetFinalizer(s, func(*sentinel) {
		if p.ctx.Err() != nil {
			return
		}
		p.apply()
		p.arm()
	})
}

// sentinel is an object with a finalizer; not zero-sized, so that it has
// an allocation of its own (a finalizer needs one).
type sentinel struct{ _ [16]byte }

// Limit is the soft memory limit for a live heap of live bytes: room for
// the heap goal (live plus Headroom) and as much again. A burst that makes
// the heap outgrow the goal set before it is collected early once it
// passes the limit, and what the collector frees past the limit goes back
// to the system at once, instead of staying resident for minutes. The
// limit follows the live heap after every collection, so a larger
// instance only raises it.
func Limit(live uint64) int64 {
	return int64(live + 2*Headroom + live/2)
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
