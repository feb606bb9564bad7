package sched

import (
	"testing"

	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/resource"
)

const gib = 1 << 30

// memJob is n one-core slots of mem bytes each, for seconds.
func memJob(n int, mem uint64, seconds float64) jobspec.Options {
	return jobspec.Options{NTasks: n, Duration: seconds, MemPerSlot: mem}
}

func memHarness(t *testing.T, kind Kind, depth int, config ...resource.ConfigEntry) *harness {
	if len(config) == 0 {
		config = []resource.ConfigEntry{{Hosts: "node0", Cores: "0-3", Memory: "4G"}}
	}
	h := newHarness(t, resource.WorstFit, config...)
	h.s.def = QueuePolicy{Kind: kind, ReservationDepth: depth}
	return h
}

// Memory in every policy, on 4 cores and 4G. Job 1 (3G, 100 s) runs to
// 5100. Job 2 (4G) has cores but not memory: it waits with the memory
// reason, planned at 5100 by the backfilling policies. Job 3 (1G, 500 s)
// fits now, cores and memory, but would hold 1G past 5100, when job 2
// needs all 4G: every backfilling policy holds it (a memory-blind
// backfill would start it and delay job 2). Job 4 (1G, 50 s) ends before
// 5100 and backfills; fcfs stops at job 2.
func TestMemoryPolicies(t *testing.T) {
	queue := do(alloc(1, memJob(1, 3*gib, 100)), alloc(2, memJob(1, 4*gib, 100)), alloc(3, memJob(1, 1*gib, 500)), alloc(4, memJob(1, 1*gib, 50)))
	tests := []struct {
		kind  Kind
		depth int
		want  []string
	}{
		{FCFS, 0, []string{
			"1 SUCCESS rank0/core0",
			"2 ANNOTATE insufficient memory: needs 4G, 1G free on node0",
			"3 ANNOTATE insufficient resources",
			"4 ANNOTATE insufficient resources",
		}},
		{EASY, 0, []string{
			"1 SUCCESS rank0/core0",
			"2 ANNOTATE insufficient memory: needs 4G, 1G free on node0 eta=5100",
			"3 ANNOTATE insufficient resources",
			"4 SUCCESS rank0/core1",
		}},
		{Conservative, 0, []string{
			"1 SUCCESS rank0/core0",
			"2 ANNOTATE insufficient memory: needs 4G, 1G free on node0 eta=5100",
			"3 ANNOTATE insufficient resources eta=5200",
			"4 SUCCESS rank0/core1",
		}},
		{Hybrid, 2, []string{
			"1 SUCCESS rank0/core0",
			"2 ANNOTATE insufficient memory: needs 4G, 1G free on node0 eta=5100",
			"3 ANNOTATE insufficient resources eta=5200",
			"4 SUCCESS rank0/core1",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.kind.String(), func(t *testing.T) {
			h := memHarness(t, tc.kind, tc.depth)
			h.run(queue, tc.want...)
		})
	}
}

// When the memory comes back the waiting job starts; its R holds the
// memory granted.
func TestMemoryStartsWhenFreed(t *testing.T) {
	h := memHarness(t, FCFS, 0)
	h.run(do(alloc(1, memJob(1, 3*gib, 0)), alloc(2, memJob(1, 3*gib, 0))),
		"1 SUCCESS rank0/core0",
		"2 ANNOTATE insufficient memory: needs 3G, 1G free on node0",
	)
	h.run(do(free(1)), "1 FREE", "2 SUCCESS rank0/core0")
	if got := h.s.pool.Allocated(2).Memory(); got != 3*gib {
		t.Errorf("job 2 holds %d bytes, want 3G", got)
	}
}

// A job no node could ever hold is denied; one that cores could hold on
// no node is denied too.
func TestMemoryInfeasible(t *testing.T) {
	h := memHarness(t, EASY, 0)
	h.run(do(alloc(1, memJob(1, 5*gib, 10))), "1 DENY unsatisfiable request")
	none := memHarness(t, EASY, 0, resource.ConfigEntry{Hosts: "node0", Cores: "0-3"})
	none.run(do(alloc(1, memJob(1, 1, 10)), alloc(2, cores(1, 10))), "1 DENY unsatisfiable request", "2 SUCCESS rank0/core0")
}

// On two nodes the memory reservation is node by node. Job 1 (3G) can
// only run on node1 (4G; node0 has 2G), and so can job 2 (4G), planned
// when job 1 ends. Job 3 (2G, long) starts on node0, which job 2 never
// needs. Job 4 (1G, long) would fit on node1 now, but would hold memory
// job 2 is planned to take there: it waits (node0's memory is all held).
func TestMemoryPlannedOnNodes(t *testing.T) {
	h := memHarness(t, EASY, 0,
		resource.ConfigEntry{Hosts: "node0", Cores: "0-3", Memory: "2G"},
		resource.ConfigEntry{Hosts: "node1", Cores: "0-3", Memory: "4G"})
	h.run(do(alloc(1, memJob(1, 3*gib, 100)), alloc(2, memJob(1, 4*gib, 100)), alloc(3, memJob(1, 2*gib, 1000)), alloc(4, memJob(1, 1*gib, 1000))),
		"1 SUCCESS rank1/core0",
		"2 ANNOTATE insufficient memory: needs 4G, 2G free on node0 eta=5100",
		"3 SUCCESS rank0/core0",
		"4 ANNOTATE insufficient memory: needs 1G, 0B free on node0",
	)
	h.run(do(at(5100), free(1)), "1 FREE", "2 SUCCESS rank1/core0",
		"4 ANNOTATE insufficient memory: needs 1G, 0B free on node0 eta=5200")
}
