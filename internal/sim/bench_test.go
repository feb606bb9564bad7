package sim

import (
	"testing"

	"github.com/fluxq/fluxq/internal/resource"
	"github.com/fluxq/fluxq/internal/sched"
)

// BenchmarkReplay replays the repository's traces as bench/simcheck.sh
// does (without the process around it): the per-job cost of the job
// manager and scheduler in a replay (issue 28).
func BenchmarkReplay(b *testing.B) {
	for _, c := range []struct {
		name         string
		trace        string
		nodes, cores int
		policy       string
	}{
		{"hpc2n/fcfs", "../../testdata/swf/hpc2n-excerpt.swf", 120, 2, "fcfs"},
		{"hpc2n/easy", "../../testdata/swf/hpc2n-excerpt.swf", 120, 2, "easy"},
		{"hpc2n/conservative", "../../testdata/swf/hpc2n-excerpt.swf", 120, 2, "conservative"},
		{"lublin/fcfs", "../../testdata/swf/lublin_256.swf", 256, 1, "fcfs"},
		{"lublin/easy", "../../testdata/swf/lublin_256.swf", 256, 1, "easy"},
		{"lublin/conservative", "../../testdata/swf/lublin_256.swf", 256, 1, "conservative"},
	} {
		b.Run(c.name, func(b *testing.B) {
			jobs := readTrace(b, c.trace)
			inv, err := Machine(c.nodes, c.cores, 0)
			if err != nil {
				b.Fatal(err)
			}
			kind, err := sched.ParseKind(c.policy)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := Run(Config{Jobs: jobs, Inventory: inv, Policy: sched.QueuePolicy{Kind: kind, Match: resource.WorstFit}, TempDir: b.TempDir()}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(jobs)), "µs/job")
		})
	}
}
