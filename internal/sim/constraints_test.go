package sim

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/queue"
	"github.com/fluxq/fluxq/internal/resource"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/sched"
	"github.com/fluxq/fluxq/internal/swf"
)

// Replays whose jobs go to a queue with requires (issue 13, item 1): a
// constraint narrows where a job's reservation may be, never whether it
// gets one.

// batchQueue is a config's queues: one queue, batch, the default, whose
// jobs need property batch.
func batchQueue(t testing.TB) *queue.Set {
	t.Helper()
	name := "batch"
	set, err := queue.Compile(queue.Tables{
		Policy: queue.Policy{Jobspec: queue.JobspecPolicy{Defaults: queue.JobspecDefaults{System: queue.SystemDefaults{Queue: &name}}}},
		Queues: map[string]queue.Config{"batch": {Requires: []string{"batch"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// hostsOf is a machine of config entries.
func hostsOf(t testing.TB, entries ...resource.ConfigEntry) *rset.R {
	t.Helper()
	inv, err := resource.FromConfig(entries)
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

func simulateIn(t testing.TB, text string, inv *rset.R, policy sched.QueuePolicy, queues *queue.Set) *Result {
	t.Helper()
	jobs, _, err := swf.Read(strings.NewReader(text))
	if err != nil {
		t.Fatalf("trace: %v", err)
	}
	res, err := Run(Config{Jobs: jobs, Inventory: inv, Policy: policy, Queues: queues, TempDir: t.TempDir()})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

// Hand-worked, on 4 nodes x 1 core, all with property batch, in queue
// batch. The trace is "reservations": 1 (2 cores, 10 s) runs first; 2 (3
// cores) and 3 (4 cores) wait behind it; 4 (1 core, 25 s) arrives at 2.
// easy: 2 is reserved at 10, extra 1, so 4 backfills 2..27 and 3 runs
// after it, 27..37. conservative: 3 is reserved at 20..30 too, so 4 waits
// until 30. Without the queue the schedules are the same; before issue 13
// the queue's requires left every job without a reservation, and easy
// started 4 at 2 and 3 after it all the same, but conservative started 4
// at 2 as well (30 -> 2) and pushed 3 back to 27.
func TestQueueRequiresSchedule(t *testing.T) {
	inv := hostsOf(t, resource.ConfigEntry{Hosts: "node[0-3]", Cores: "0", Properties: []string{"batch"}})
	tests := []struct {
		name   string
		policy sched.QueuePolicy
		want   []Entry
	}{
		{"easy", easy, []Entry{{1, 0, 0, 10, 2}, {2, 1, 10, 20, 3}, {3, 1, 27, 37, 4}, {4, 2, 2, 27, 1}}},
		{"hybrid-1", hybrid1, []Entry{{1, 0, 0, 10, 2}, {2, 1, 10, 20, 3}, {3, 1, 27, 37, 4}, {4, 2, 2, 27, 1}}},
		{"hybrid-2", hybrid2, []Entry{{1, 0, 0, 10, 2}, {2, 1, 10, 20, 3}, {3, 1, 20, 30, 4}, {4, 2, 30, 55, 1}}},
		{"conservative", conservative, []Entry{{1, 0, 0, 10, 2}, {2, 1, 10, 20, 3}, {3, 1, 20, 30, 4}, {4, 2, 30, 55, 1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := simulateIn(t, reservations, inv, tc.policy, batchQueue(t))
			if diff := cmp.Diff(tc.want, got.Schedule); diff != "" {
				t.Errorf("schedule with requires (-want +got):\n%s", diff)
			}
			plain := simulateIn(t, reservations, inv, tc.policy, nil)
			if diff := cmp.Diff(plain.Schedule, got.Schedule); diff != "" {
				t.Errorf("schedule with requires differs from without (-without +with):\n%s", diff)
			}
		})
	}
}

// A queue whose requires every node satisfies schedules as if it had
// none: every shared trace, every backfilling policy, 2 nodes x 2 cores
// and 3 x 2.
func TestQueueRequiresSameAsNone(t *testing.T) {
	traces := map[string]string{
		"blocked": blocked, "reservations": reservations, "depths": depths,
		// easy: 3 would delay 2, so it waits for it.
		"long": trace(job(1, 0, 10, 3, 10), job(2, 1, 5, 4, 5), job(3, 2, 20, 1, 20)),
	}
	policies := map[string]sched.QueuePolicy{"easy": easy, "hybrid-1": hybrid1, "hybrid-2": hybrid2, "conservative": conservative}
	for tname, text := range traces {
		for pname, policy := range policies {
			for _, hosts := range []string{"node[0-1]", "node[0-2]"} {
				t.Run(tname+"/"+pname+"/"+hosts, func(t *testing.T) {
					inv := hostsOf(t, resource.ConfigEntry{Hosts: hosts, Cores: "0-1", Properties: []string{"batch"}})
					plain := simulateIn(t, text, inv, policy, nil)
					got := simulateIn(t, text, inv, policy, batchQueue(t))
					if diff := cmp.Diff(plain.Schedule, got.Schedule); diff != "" {
						t.Errorf("(-without +with requires):\n%s", diff)
					}
				})
			}
		}
	}
}

// A queue whose requires only some nodes satisfy: its jobs see a smaller
// machine. On 4 nodes x 1 core where nodes 0-1 have batch, the batch
// queue's jobs are scheduled node by node as on a machine of those 2
// nodes alone.
func TestQueueRequiresNarrows(t *testing.T) {
	inv := hostsOf(t,
		resource.ConfigEntry{Hosts: "node[0-1]", Cores: "0", Properties: []string{"batch"}},
		resource.ConfigEntry{Hosts: "node[2-3]", Cores: "0"})
	// 2 nodes: 1 (1 core, 10 s) runs; 2 (2 cores) is reserved at 10; 3
	// (1 core, 5 s) ends by 10 and backfills 2..7; 4 (1 core, 20 s)
	// would end after 10 with no extra core: it waits for 2 (10..15)
	// under easy, and is reserved after it under conservative.
	text := trace(job(1, 0, 10, 1, 10), job(2, 1, 5, 2, 5), job(3, 2, 5, 1, 5), job(4, 2, 20, 1, 20))
	want := []Entry{{1, 0, 0, 10, 1}, {2, 1, 10, 15, 2}, {3, 2, 2, 7, 1}, {4, 2, 15, 35, 1}}
	small := hostsOf(t, resource.ConfigEntry{Hosts: "node[0-1]", Cores: "0"})
	for pname, policy := range map[string]sched.QueuePolicy{"easy": easy, "hybrid-1": hybrid1, "conservative": conservative} {
		t.Run(pname, func(t *testing.T) {
			got := simulateIn(t, text, inv, policy, batchQueue(t))
			if diff := cmp.Diff(want, got.Schedule); diff != "" {
				t.Errorf("schedule (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(simulateIn(t, text, small, policy, nil).Schedule, got.Schedule); diff != "" {
				t.Errorf("differs from the 2-node machine (-2 nodes +4 with requires):\n%s", diff)
			}
		})
	}
}
