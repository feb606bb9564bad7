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

// scaleFixture is a large instance filled with pending one-core jobs of
// one hour under easy with Fluxion's queue depth of 32, built once per
// benchmark binary: "fill" runs passes (1 ms of virtual time apart) until
// the nodes the jobs may use are full and reports allocations per second;
// "easy-pass" is then one pass over the full machine (the head gets its
// planned start, the 31 behind it are looked at and none fits);
// "easy-pass-all-32" is the same pass made to look at all 32 jobs, as
// after a change of sessions or priorities, when no reason can be taken
// as settled. Each reports the process's peak resident memory. The setup
// is not timed: run with -benchtime=1x for fill, e.g.
//
//	go test -run='^$' -bench=BenchmarkScale -benchtime=1x ./internal/sched
type scaleFixture struct {
	hosts       []resource.ConfigEntry
	jobs        int            // pending jobs
	constraints map[string]any // of every job
	fits        int            // jobs that fill the nodes they may use

	once sync.Once
	s    *Scheduler
	now  float64
	full bool
}

func (f *scaleFixture) setup(b *testing.B) *Scheduler {
	f.once.Do(func() {
		inv, err := resource.FromConfig(f.hosts)
		if err != nil {
			b.Fatal(err)
		}
		s := New(inv, QueuePolicy{Kind: EASY, QueueDepth: DefaultQueueDepth}, 0)
		js, err := jobspec.FromOptions(jobspec.Options{Command: []string{"true"}, Duration: 3600, Constraints: f.constraints})
		if err != nil {
			b.Fatal(err)
		}
		raw, err := js.MarshalJSON()
		if err != nil {
			b.Fatal(err)
		}
		for id := 1; id <= f.jobs; id++ {
			if _, err := s.Alloc(schedproto.Alloc{ID: fluid.ID(id), Priority: 16, TSubmit: float64(id), Jobspec: raw}); err != nil {
				b.Fatal(err)
			}
		}
		f.s, f.now = s, 1e9
	})
	if f.s == nil {
		b.Fatal("setup failed")
	}
	return f.s
}

func (f *scaleFixture) run(b *testing.B) {
	s := f.setup(b)
	b.Run("fill", func(b *testing.B) {
		if f.full {
			b.Skip("the machine is full already (run with -benchtime=1x)")
		}
		granted := 0
		start := time.Now()
		for b.Loop() {
			for {
				f.now += 0.001
				n := 0
				for _, r := range s.Schedule(f.now) {
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
		f.full = true
		elapsed := time.Since(start)
		if granted != f.fits {
			b.Fatalf("granted %d jobs, want %d", granted, f.fits)
		}
		b.ReportMetric(float64(granted)/elapsed.Seconds(), "allocs/s")
		b.ReportMetric(peakRSS(b), "MiB-peak-rss")
	})
	b.Run("easy-pass", func(b *testing.B) {
		if !f.full {
			b.Skip("needs fill first")
		}
		for b.Loop() {
			s.dirty = true
			if out := s.Schedule(f.now); len(out) > 1 {
				b.Fatalf("%d responses on a full machine", len(out))
			}
		}
		b.ReportMetric(peakRSS(b), "MiB-peak-rss")
	})
	b.Run("easy-pass-all-32", func(b *testing.B) {
		if !f.full {
			b.Skip("needs fill first")
		}
		seen := 0
		for b.Loop() {
			s.dirty, s.unsettled = true, true
			s.Schedule(f.now)
			seen = s.lastSeen
		}
		if seen != DefaultQueueDepth {
			b.Fatalf("the pass looked at %d jobs, want %d", seen, DefaultQueueDepth)
		}
		b.ReportMetric(peakRSS(b), "MiB-peak-rss")
	})
}

// The scale benchmark of issue 6: 10,000 nodes x 64 cores and 1,000,000
// pending jobs.
var scale = &scaleFixture{
	hosts: []resource.ConfigEntry{{Hosts: "node[0-9999]", Cores: "0-63"}},
	jobs:  1_000_000,
	fits:  640_000,
}

func BenchmarkScale(b *testing.B) { scale.run(b) }

// The scale benchmark for a constrained queue (issue 13): 2,000 nodes x 64
// cores, half of them with property a, and 200,000 pending jobs that
// require a. Their feasible set is the 1,000 nodes with a, so every
// planned start is found node by node.
var scaleConstrained = &scaleFixture{
	hosts: []resource.ConfigEntry{
		{Hosts: "node[0-999]", Cores: "0-63", Properties: []string{"a"}},
		{Hosts: "node[1000-1999]", Cores: "0-63"},
	},
	jobs:        200_000,
	constraints: map[string]any{"properties": []string{"a"}},
	fits:        64_000,
}

func BenchmarkScaleConstrained(b *testing.B) { scaleConstrained.run(b) }

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

// longQueue is 256 nodes of 1 core, 250 of them held by one-hour jobs, a
// head that needs 252 cores (so it waits: fcfs blocks on it, easy plans
// its start at the hour), and n jobs of 1 to 64 cores and 1 to 4 hours
// behind it, all annotated by setup passes. It is lublin_256 under a long
// queue, the simulator's slowest case (issue 28).
func longQueue(b *testing.B, kind Kind, n int) *Scheduler {
	b.Helper()
	inv, err := resource.FromConfig([]resource.ConfigEntry{{Hosts: "node[0-255]", Cores: "0"}})
	if err != nil {
		b.Fatal(err)
	}
	s := New(inv, QueuePolicy{Kind: kind, Match: resource.WorstFit}, 0)
	id := fluid.ID(0)
	alloc := func(cores int, dur float64) {
		id++
		js, err := jobspec.FromOptions(jobspec.Options{Command: []string{"true"}, NTasks: cores, Duration: dur})
		if err != nil {
			b.Fatal(err)
		}
		raw, err := js.MarshalJSON()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Alloc(schedproto.Alloc{ID: id, Priority: 16, TSubmit: float64(id), Jobspec: raw}); err != nil {
			b.Fatal(err)
		}
	}
	for range 250 {
		alloc(1, 3600)
	}
	if out := s.Schedule(0); len(out) != 250 {
		b.Fatalf("%d responses, want 250 starts", len(out))
	}
	alloc(252, 3600)
	for i := range n {
		alloc(1+(i*37)%64, float64(3600*(1+i%4)))
	}
	for s.Busy() {
		s.Schedule(1)
	}
	return s
}

// BenchmarkLongQueuePass is what a pass costs when a job arrives at the
// tail of a long waiting queue (longQueue: 4,000 jobs behind a head that
// does not fit), as every submission in a replay of lublin_256 makes one:
// the new job is annotated, nothing starts, and it is cancelled
// (so the queue keeps its length). "fcfs-blocked" is the blocked head
// under fcfs, "easy" the head's planned start and no job able to backfill.
func BenchmarkLongQueuePass(b *testing.B) {
	for _, c := range []struct {
		name string
		kind Kind
	}{{"fcfs-blocked", FCFS}, {"easy", EASY}} {
		b.Run(c.name, func(b *testing.B) {
			s := longQueue(b, c.kind, 4000)
			js, err := jobspec.FromOptions(jobspec.Options{Command: []string{"true"}, NTasks: 8, Duration: 3600})
			if err != nil {
				b.Fatal(err)
			}
			raw, err := js.MarshalJSON()
			if err != nil {
				b.Fatal(err)
			}
			id := fluid.ID(1 << 20)
			before := s.Pending()
			b.ReportAllocs()
			for b.Loop() {
				id++
				if _, err := s.Alloc(schedproto.Alloc{ID: id, Priority: 16, TSubmit: float64(id), Jobspec: raw}); err != nil {
					b.Fatal(err)
				}
				if out := s.Schedule(2); len(out) != 1 || out[0].Type != schedproto.Annotate {
					b.Fatalf("%d responses, want the new job's annotation", len(out))
				}
				s.Cancel(id)
			}
			if s.Pending() != before {
				b.Fatalf("%d pending, want %d", s.Pending(), before)
			}
		})
	}
}
