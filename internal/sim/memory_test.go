package sim

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/queue"
	"github.com/fluxq/fluxq/internal/resource"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/sched"
	"github.com/fluxq/fluxq/internal/swf"
)

// memRec is job with field 10, the requested memory per processor in KB.
func memRec(number, submit, run, cores, requested, kb int64) string {
	return fmt.Sprintf("%d %d -1 %d %d -1 -1 %d %d %d -1 -1 -1 -1 -1 -1 -1 -1",
		number, submit, run, cores, cores, requested, kb)
}

// gb is n GB in SWF's KB.
func gb(n int64) int64 { return n << 20 }

// memMachine is nodes hosts of cores cores and memory bytes each.
func memMachine(t testing.TB, nodes, cores int, memory uint64) *rset.R {
	t.Helper()
	inv, err := Machine(nodes, cores, memory)
	if err != nil {
		t.Fatalf("machine %dx%d: %v", nodes, cores, err)
	}
	return inv
}

// runMemory reads text as SWF and runs it with Config.Memory.
func runMemory(t testing.TB, text string, inv *rset.R, memory bool) *Result {
	t.Helper()
	jobs, _, err := swf.Read(strings.NewReader(text))
	if err != nil {
		t.Fatalf("trace: %v", err)
	}
	res, err := Run(Config{Jobs: jobs, Inventory: inv, Policy: fcfs, Memory: memory, TempDir: t.TempDir()})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func TestMachineMemory(t *testing.T) {
	inv := memMachine(t, 2, 4, 3<<30)
	for _, n := range inv.Nodes() {
		if n.Memory != 3<<30 {
			t.Errorf("node %s has %d bytes, want 3G", n.Hostname, n.Memory)
		}
	}
	if got := inv.Memory(); got != 6<<30 {
		t.Errorf("machine memory %d, want 6G", got)
	}
	if got := memMachine(t, 2, 4, 0).Memory(); got != 0 {
		t.Errorf("machine without memory has %d bytes", got)
	}
}

// docs/simulation.md, "Memory": without Config.Memory field 10 is ignored,
// however large; with it, a job over 1E per processor or in all is denied
// without being submitted, and says why.
func TestRunMemoryField10(t *testing.T) {
	tr := trace(memRec(1, 0, 10, 2, 10, 1<<51), memRec(2, 0, 10, 2, 10, gb(1)), memRec(3, 0, 10, 2, 10, 1<<49+1))
	bare := trace(job(1, 0, 10, 2, 10), job(2, 0, 10, 2, 10), job(3, 0, 10, 2, 10))
	inv := memMachine(t, 1, 2, 4<<30)
	without, plain := runMemory(t, tr, inv, false), runMemory(t, bare, inv, false)
	if diff := cmp.Diff(plain.Schedule, without.Schedule); diff != "" {
		t.Errorf("field 10 changed the schedule without Memory (-plain +with field 10):\n%s", diff)
	}
	res := runMemory(t, tr, inv, true)
	want := []Reason{{Reason: DenyTooMuchMemory, Count: 2, Examples: []int64{1, 3}}}
	if diff := cmp.Diff(want, res.Denied); diff != "" {
		t.Errorf("denied (-want +got):\n%s", diff)
	}
	if res.Summary.Jobs != 1 || res.Summary.Denied != 2 {
		t.Errorf("summary %+v, want 1 job and 2 denied", res.Summary)
	}
}

func TestDenyMemoryReason(t *testing.T) {
	tests := []struct{ note, want string }{
		{resource.ReasonUnsatisfiable, "unsatisfiable request: its memory per processor does not fit on the machine's nodes"},
		{resource.ReasonUnsatisfiableConstrained, "unsatisfiable constrained request: its memory per processor does not fit on the nodes the queue's requires allow"},
		{resource.ReasonNoMatch, "no resources satisfy provided constraints: the queue's requires match no node"},
	}
	for _, tt := range tests {
		if got := denyMemoryReason(tt.note); got != tt.want {
			t.Errorf("denyMemoryReason(%q) = %q, want %q", tt.note, got, tt.want)
		}
	}
}

// docs/simulation.md, "Memory": the schedules bench/simref's
// TestReplayMemory works out by hand, through the real scheduler.
func TestRunMemorySchedule(t *testing.T) {
	// 1 node x 4 cores x 4G: 2 waits for 1's memory with 3 cores free.
	waits := trace(memRec(1, 0, 10, 1, 10, gb(3)), memRec(2, 1, 10, 1, 10, gb(3)))
	// 2 nodes x 2 cores x 4G: 1 takes a core and 1G of node0 (worst-fit
	// ties go to node0); 2 (2 x 2G) goes whole to node1, which has more
	// free cores, so node0's 3G is left for 3.
	worst := trace(memRec(1, 0, 100, 1, 100, gb(1)), memRec(2, 1, 100, 2, 100, gb(2)), memRec(3, 2, 10, 1, 10, gb(3)))
	// 1 node x 4 cores x 4G: 2 (3G) waits for 1's 2G until 100 and is
	// reserved then; 3 (2G, 200 s) fits now but would take the memory 2's
	// reservation holds, so it waits; 4 (1G, 200 s) does not and starts.
	backfill := trace(memRec(1, 0, 100, 1, 100, gb(2)), memRec(2, 1, 10, 1, 10, gb(3)), memRec(3, 1, 200, 1, 200, gb(2)), memRec(4, 1, 200, 1, 200, gb(1)))
	tests := []struct {
		name        string
		trace       string
		nodes, core int
		memory      uint64
		policy      string
		want        []Entry
	}{
		{"fcfs waits for memory with cores free", waits, 1, 4, 4 << 30, "fcfs",
			[]Entry{{1, 0, 0, 10, 1}, {2, 1, 10, 20, 1}}},
		{"worst-fit keeps a node's memory whole", worst, 2, 2, 4 << 30, "fcfs",
			[]Entry{{1, 0, 0, 100, 1}, {2, 1, 1, 101, 2}, {3, 2, 2, 12, 1}}},
		{"easy backfills only what leaves the reserved memory", backfill, 1, 4, 4 << 30, "easy",
			[]Entry{{1, 0, 0, 100, 1}, {2, 1, 100, 110, 1}, {3, 1, 110, 310, 1}, {4, 1, 1, 201, 1}}},
		{"conservative too", backfill, 1, 4, 4 << 30, "conservative",
			[]Entry{{1, 0, 0, 100, 1}, {2, 1, 100, 110, 1}, {3, 1, 110, 310, 1}, {4, 1, 1, 201, 1}}},
	}
	policies := map[string]sched.QueuePolicy{"fcfs": fcfs, "easy": easy, "conservative": conservative}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jobs, _, err := swf.Read(strings.NewReader(tt.trace))
			if err != nil {
				t.Fatal(err)
			}
			res, err := Run(Config{Jobs: jobs, Inventory: memMachine(t, tt.nodes, tt.core, tt.memory), Policy: policies[tt.policy], Memory: true, TempDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, res.Schedule); diff != "" {
				t.Errorf("schedule (-want +got):\n%s", diff)
			}
		})
	}
}

// A queue's default memory reaches the trace's jobs that ask none; on
// hosts without memory it has them denied, and the reason says memory,
// not cores (the machine has the cores).
func TestRunDefaultMemoryDenied(t *testing.T) {
	mem := "3G"
	set, err := queue.Compile(queue.Tables{Policy: queue.Policy{Jobspec: queue.JobspecPolicy{Defaults: queue.JobspecDefaults{System: queue.SystemDefaults{Memory: &mem}}}}})
	if err != nil {
		t.Fatal(err)
	}
	jobs, _, err := swf.Read(strings.NewReader(trace(job(1, 0, 10, 1, 10))))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(Config{Jobs: jobs, Inventory: memMachine(t, 1, 2, 0), Policy: fcfs, Queues: set, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	want := []Reason{{Reason: "unsatisfiable request: its memory per processor does not fit on the machine's nodes", Count: 1, Examples: []int64{1}}}
	if diff := cmp.Diff(want, res.Denied); diff != "" {
		t.Errorf("denied (-want +got):\n%s", diff)
	}
}
