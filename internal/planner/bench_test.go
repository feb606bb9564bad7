package planner

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
)

const (
	benchSpans  = 1_000_000
	benchStarts = 5_000 // starts at 0..4999, ends at 5000..9999: 10,000 points
)

// benchTotal leaves 10% headroom over the peak use of benchSpan.
var benchTotal = []int64{1_100_000, 250_000}

// benchSpan is span i of the big profile: one core each, every fifth with a
// GPU, starting in [0, 5000) and ending in [5000, 10000).
func benchSpan(i int) (start, end float64, amount []int64) {
	gpu := int64(0)
	if i%5 == 0 {
		gpu = 1
	}
	return float64(i % benchStarts), float64(benchStarts + (i*7919)%benchStarts), []int64{1, gpu}
}

func buildBig(tb testing.TB) *Planner {
	p, err := New(benchTotal)
	if err != nil {
		tb.Fatal(err)
	}
	for i := range benchSpans {
		s, e, a := benchSpan(i)
		if _, err := p.Add(s, e, a); err != nil {
			tb.Fatal(err)
		}
	}
	return p
}

// bigPlanner is built once and shared; benchmarks leave it as they found it.
var bigPlanner = sync.OnceValue(func() *Planner { return buildBig(nil) })

func big(b *testing.B) *Planner {
	p := bigPlanner()
	if p.Len() != benchSpans || p.Points() != 2*benchStarts {
		b.Fatalf("big planner has %d spans over %d points", p.Len(), p.Points())
	}
	return p
}

// BenchmarkAddRemove adds and removes a span on existing points of the
// 1,000,000-span profile.
func BenchmarkAddRemove(b *testing.B) {
	p := big(b)
	r := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s := float64(r.IntN(benchStarts))
		id, err := p.Add(s, s+float64(benchStarts), []int64{1, 1})
		if err != nil {
			b.Fatal(err)
		}
		if err := p.Remove(id); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAddRemoveNewPoints adds and removes a span whose start and end
// are new points, so both are inserted and deleted in the tree.
func BenchmarkAddRemoveNewPoints(b *testing.B) {
	p := big(b)
	r := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s := float64(r.IntN(2*benchStarts)) + 0.5
		id, err := p.Add(s, s+100, []int64{1, 1})
		if err != nil {
			b.Fatal(err)
		}
		if err := p.Remove(id); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFreeDuring(b *testing.B) {
	p := big(b)
	r := rand.New(rand.NewPCG(3, 4))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s := float64(r.IntN(2 * benchStarts))
		p.FreeDuring(s, s+float64(r.IntN(5000)))
	}
}

// BenchmarkEarliestFit asks for random jobs of up to a third of the machine
// on the 1,000,000-span profile.
func BenchmarkEarliestFit(b *testing.B) {
	p := big(b)
	r := rand.New(rand.NewPCG(5, 6))
	b.ReportAllocs()
	b.ResetTimer()
	amt := make([]int64, 2)
	for b.Loop() {
		at := float64(r.IntN(2 * benchStarts))
		dur := float64(1 + r.IntN(3000))
		amt[0], amt[1] = int64(r.IntN(400_000)), int64(r.IntN(80_000))
		if _, ok := p.EarliestFit(at, dur, amt); !ok {
			b.Fatal("no fit")
		}
	}
}

// BenchmarkEarliestFitBlockingRuns asks for a job whose answer lies 1,000
// blocking runs away: each run is ten back-to-back spans taking the whole
// machine over 90 s, with 10 s gaps, and the job needs 20 s.
func BenchmarkEarliestFitBlockingRuns(b *testing.B) {
	p, err := New([]int64{64, 4})
	if err != nil {
		b.Fatal(err)
	}
	for run := range 1000 {
		for j := range 10 {
			s := float64(100*run + 9*j)
			if _, err := p.Add(s, s+9, []int64{64, 4}); err != nil {
				b.Fatal(err)
			}
		}
	}
	amt := []int64{1, 0}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if t, ok := p.EarliestFit(0, 20, amt); !ok || t != 99_990 {
			b.Fatalf("EarliestFit = %v, %v; want 99990", t, ok)
		}
	}
}

// BenchmarkBuild1M builds the 1,000,000-span profile; B/op divided by the
// spans is the memory a span costs, and live-B/span is what stays on the
// heap once built.
func BenchmarkBuild1M(b *testing.B) {
	b.ReportAllocs()
	var live float64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		p := buildBig(b)
		runtime.GC()
		runtime.ReadMemStats(&after)
		live = float64(after.HeapAlloc-before.HeapAlloc) / benchSpans
		runtime.KeepAlive(p)
	}
	b.ReportMetric(live, "live-B/span")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchSpans, "ns/span")
}
