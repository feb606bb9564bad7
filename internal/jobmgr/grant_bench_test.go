package jobmgr

import (
	"fmt"
	"testing"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/schedproto"
	ops "github.com/fluxq/fluxq/internal/state"
)

// BenchmarkCheckGrant is what checking one SUCCESS costs the loop, the
// parse of R included (which storing it needed before the check): a
// one-node R on an instance where every node but one core is held by
// running jobs, so the check walks every job on that node.
func BenchmarkCheckGrant(b *testing.B) {
	for _, c := range []struct{ nodes, cores, jobsPerNode int }{{4, 2, 1}, {1024, 64, 16}} {
		b.Run(fmt.Sprintf("nodes=%d,jobs=%d", c.nodes, c.nodes*c.jobsPerNode), func(b *testing.B) {
			var inv []rset.Node
			for i := range c.nodes {
				inv = append(inv, rset.Node{Rank: uint(i), Hostname: fmt.Sprintf("node%d", i), Cores: idset.FromRanges([]idset.Range{{First: 0, Last: uint(c.cores - 1)}})})
			}
			m := New(Config{Inventory: rset.New(inv)})
			id := fluid.ID(1)
			per := (c.cores - 1) / c.jobsPerNode // each job's cores; the last core stays free
			for rank := range c.nodes {
				for k := range c.jobsPerNode {
					r := rset.New([]rset.Node{{Rank: uint(rank), Hostname: fmt.Sprintf("node%d", rank),
						Cores: idset.FromRanges([]idset.Range{{First: uint(k * per), Last: uint(k*per + per - 1)}})}})
					e := &entry{rec: &ops.Record{Job: &job.Job{ID: id}, R: r}, alloc: allocHeld}
					m.active[id] = e
					m.hold(e, true)
					id++
				}
			}
			last := uint(c.cores - 1)
			raw, err := rset.New([]rset.Node{{Rank: uint(c.nodes / 2), Hostname: fmt.Sprintf("node%d", c.nodes/2),
				Cores: idset.Of(last)}}).WithTimes(1796179522.395490, 1796183122.395490).MarshalJSON()
			if err != nil {
				b.Fatal(err)
			}
			e := &entry{rec: &ops.Record{Job: &job.Job{ID: id}}, alloc: allocAsked}
			b.ReportAllocs()
			for b.Loop() {
				if _, why := m.checkGrant(e, schedproto.AllocResponse{R: raw}); why != "" {
					b.Fatal(why)
				}
			}
		})
	}
}

// BenchmarkParseR is the parse alone, which storing a SUCCESS's R cost
// before the check: the rest of BenchmarkCheckGrant is the check's own.
func BenchmarkParseR(b *testing.B) {
	raw, err := rset.New([]rset.Node{{Rank: 512, Hostname: "node512", Cores: idset.Of(63)}}).WithTimes(1796179522.395490, 1796183122.395490).MarshalJSON()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rset.Parse(raw); err != nil {
			b.Fatal(err)
		}
	}
}
