package sched

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/resource"
	"github.com/fluxq/fluxq/internal/schedproto"
)

// 64 nodes of 32 cores: 2,048 cores, so 1,000 one-core jobs all fit.
func bench64x32(b *testing.B) *Scheduler {
	b.Helper()
	inv, err := resource.FromConfig([]resource.ConfigEntry{{Hosts: "node[0-63]", Cores: "0-31"}})
	if err != nil {
		b.Fatal(err)
	}
	return New(inv, QueuePolicy{}, 0)
}

func queue1000(b *testing.B, s *Scheduler) {
	b.Helper()
	js, err := jobspec.FromOptions(jobspec.Options{Command: []string{"true"}})
	if err != nil {
		b.Fatal(err)
	}
	raw, err := js.MarshalJSON()
	if err != nil {
		b.Fatal(err)
	}
	for id := 1; id <= 1000; id++ {
		if _, err := s.Alloc(schedproto.Alloc{ID: fluid.ID(id), Priority: 16, TSubmit: float64(id), Jobspec: raw}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSchedule1000 is one Schedule pass placing 1,000 queued one-core
// jobs on 64 nodes x 32 cores (the alloc requests are queued untimed).
func BenchmarkSchedule1000(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		s := bench64x32(b)
		queue1000(b, s)
		b.StartTimer()
		if out := s.Schedule(1); len(out) != 1000 {
			b.Fatalf("%d responses", len(out))
		}
	}
}

// BenchmarkAllocSchedule1000 adds the alloc requests themselves (jobspec
// parsing and feasibility) to the pass.
func BenchmarkAllocSchedule1000(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		s := bench64x32(b)
		b.StartTimer()
		queue1000(b, s)
		if out := s.Schedule(1); len(out) != 1000 {
			b.Fatalf("%d responses", len(out))
		}
	}
}

// BenchmarkBlockedPass is a pass over 1,000 waiting jobs whose head does
// not fit and whose annotations are unchanged: what a pass costs when an
// event changes nothing for the queue.
func BenchmarkBlockedPass(b *testing.B) {
	s := bench64x32(b)
	s.SetDown(s.Pool().Inventory().Ranks())
	queue1000(b, s)
	s.Schedule(1)
	b.ResetTimer()
	for b.Loop() {
		s.dirty = true
		s.Schedule(1)
	}
}

// The scale benchmark of issue 6: an instance of 10,000 nodes x 64 cores
// and 1,000,000 pending one-core jobs of one hour, under easy with
// Fluxion's queue depth of 32. "fill" runs passes (1 ms of virtual time
// apart) until the machine is full and reports allocations per second;
// "easy-pass" is then one pass over the full machine: the head gets its
// reservation, the 31 jobs behind it are looked at and none fits. Both
// report the process's peak resident memory. The setup (a million alloc
// requests) takes a while and is not timed: run with -benchtime=1x for
// fill, e.g.
//
//	go test -run='^$' -bench=BenchmarkScale -benchtime=1x ./internal/sched
var scale struct {
	once sync.Once
	s    *Scheduler
	now  float64
	full bool
}

func scaleSetup(b *testing.B) *Scheduler {
	scale.once.Do(func() {
		inv, err := resource.FromConfig([]resource.ConfigEntry{{Hosts: "node[0-9999]", Cores: "0-63"}})
		if err != nil {
			b.Fatal(err)
		}
		s := New(inv, QueuePolicy{Kind: EASY, QueueDepth: DefaultQueueDepth}, 0)
		js, err := jobspec.FromOptions(jobspec.Options{Command: []string{"true"}, Duration: 3600})
		if err != nil {
			b.Fatal(err)
		}
		raw, err := js.MarshalJSON()
		if err != nil {
			b.Fatal(err)
		}
		for id := 1; id <= 1_000_000; id++ {
			if _, err := s.Alloc(schedproto.Alloc{ID: fluid.ID(id), Priority: 16, TSubmit: float64(id), Jobspec: raw}); err != nil {
				b.Fatal(err)
			}
		}
		scale.s, scale.now = s, 1e9
	})
	if scale.s == nil {
		b.Fatal("setup failed")
	}
	return scale.s
}

func BenchmarkScale(b *testing.B) {
	s := scaleSetup(b)
	b.Run("fill", func(b *testing.B) {
		if scale.full {
			b.Skip("the machine is full already (run with -benchtime=1x)")
		}
		granted := 0
		start := time.Now()
		for b.Loop() {
			for {
				scale.now += 0.001
				n := 0
				for _, r := range s.Schedule(scale.now) {
					if r.Type == schedproto.Success {
						n++
					}
				}
				if n == 0 {
					break
				}
				granted += n
			}
		}
		scale.full = true
		elapsed := time.Since(start)
		if granted != 640_000 {
			b.Fatalf("granted %d jobs, want 640000", granted)
		}
		b.ReportMetric(float64(granted)/elapsed.Seconds(), "allocs/s")
		b.ReportMetric(peakRSS(b), "MiB-peak-rss")
	})
	b.Run("easy-pass", func(b *testing.B) {
		if !scale.full {
			b.Skip("needs fill first")
		}
		for b.Loop() {
			s.dirty = true
			if out := s.Schedule(scale.now); len(out) > 1 {
				b.Fatalf("%d responses on a full machine", len(out))
			}
		}
		b.ReportMetric(peakRSS(b), "MiB-peak-rss")
	})
	// The same pass made to look at all 32 jobs, as after a change of
	// sessions or priorities, when no reason can be taken as settled.
	b.Run("easy-pass-all-32", func(b *testing.B) {
		if !scale.full {
			b.Skip("needs fill first")
		}
		seen := 0
		for b.Loop() {
			s.dirty, s.unsettled = true, true
			s.Schedule(scale.now)
			seen = s.lastSeen
		}
		if seen != DefaultQueueDepth {
			b.Fatalf("the pass looked at %d jobs, want %d", seen, DefaultQueueDepth)
		}
		b.ReportMetric(peakRSS(b), "MiB-peak-rss")
	})
}

// peakRSS is the process's peak resident set (VmHWM) in MiB.
func peakRSS(b *testing.B) float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			if err == nil {
				return float64(kb) / 1024
			}
		}
	}
	return 0
}

// The scale benchmark for a constrained queue (issue 13): 2,000 nodes x
// 64 cores, half of them with property a, and 200,000 pending one-core
// jobs of one hour that require a, under easy with a queue depth of 32.
// Their feasible set is the 1,000 nodes with a, so every reservation is
// planned node by node. "fill" runs passes until those nodes are full
// (64,000 jobs); "easy-pass" is then one pass: the head is reserved on
// the nodes with a when their first jobs end, and the 31 behind it are
// looked at (none fits). Run with -benchtime=1x for fill, e.g.
//
//	go test -run='^$' -bench=BenchmarkScaleConstrained -benchtime=100x ./internal/sched
var scaleC struct {
	once sync.Once
	s    *Scheduler
	now  float64
	full bool
}

func scaleConstrainedSetup(b *testing.B) *Scheduler {
	scaleC.once.Do(func() {
		inv, err := resource.FromConfig([]resource.ConfigEntry{
			{Hosts: "node[0-999]", Cores: "0-63", Properties: []string{"a"}},
			{Hosts: "node[1000-1999]", Cores: "0-63"},
		})
		if err != nil {
			b.Fatal(err)
		}
		s := New(inv, QueuePolicy{Kind: EASY, QueueDepth: DefaultQueueDepth}, 0)
		js, err := jobspec.FromOptions(jobspec.Options{Command: []string{"true"}, Duration: 3600, Constraints: map[string]any{"properties": []string{"a"}}})
		if err != nil {
			b.Fatal(err)
		}
		raw, err := js.MarshalJSON()
		if err != nil {
			b.Fatal(err)
		}
		for id := 1; id <= 200_000; id++ {
			if _, err := s.Alloc(schedproto.Alloc{ID: fluid.ID(id), Priority: 16, TSubmit: float64(id), Jobspec: raw}); err != nil {
				b.Fatal(err)
			}
		}
		scaleC.s, scaleC.now = s, 1e9
	})
	if scaleC.s == nil {
		b.Fatal("setup failed")
	}
	return scaleC.s
}

func BenchmarkScaleConstrained(b *testing.B) {
	s := scaleConstrainedSetup(b)
	b.Run("fill", func(b *testing.B) {
		if scaleC.full {
			b.Skip("the nodes are full already (run with -benchtime=1x)")
		}
		granted := 0
		start := time.Now()
		for b.Loop() {
			for {
				scaleC.now += 0.001
				n := 0
				for _, r := range s.Schedule(scaleC.now) {
					if r.Type == schedproto.Success {
						n++
					}
				}
				if n == 0 {
					break
				}
				granted += n
			}
		}
		scaleC.full = true
		elapsed := time.Since(start)
		if granted != 64_000 {
			b.Fatalf("granted %d jobs, want 64000", granted)
		}
		b.ReportMetric(float64(granted)/elapsed.Seconds(), "allocs/s")
	})
	b.Run("easy-pass", func(b *testing.B) {
		if !scaleC.full {
			b.Skip("needs fill first")
		}
		for b.Loop() {
			s.dirty = true
			if out := s.Schedule(scaleC.now); len(out) > 1 {
				b.Fatalf("%d responses on full nodes", len(out))
			}
		}
	})
	b.Run("easy-pass-all-32", func(b *testing.B) {
		if !scaleC.full {
			b.Skip("needs fill first")
		}
		for b.Loop() {
			s.dirty, s.unsettled = true, true
			s.Schedule(scaleC.now)
		}
	})
}
