package sched

import (
	"testing"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/resource"
	"github.com/fluxq/fluxq/internal/schedproto"
)

// 64 nodes of 32 cores: 2,048 cores, so 1,000 one-core jobs all fit.
func bench64x32(b *testing.B) *Simple {
	b.Helper()
	inv, err := resource.FromConfig([]resource.ConfigEntry{{Hosts: "node[0-63]", Cores: "0-31"}})
	if err != nil {
		b.Fatal(err)
	}
	return NewSimple(inv, resource.WorstFit, 0)
}

func queue1000(b *testing.B, s *Simple) {
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
