package sim

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/resource"
	"github.com/fluxq/fluxq/internal/swf"
)

// SIMULATION.md, "Input": a job with cores <= 0 or submit < 0 is skipped,
// and so is one with run time < 0; one breaking several rules is counted
// under the first.
func TestSkipReason(t *testing.T) {
	tests := []struct {
		name string
		job  swf.Job
		want string
	}{
		{"takes part", swf.Job{Submit: 0, Run: 10, Procs: 2, ReqProcs: 2}, ""},
		{"allocated processors stand in for requested", swf.Job{Run: 10, Procs: 2, ReqProcs: -1}, ""},
		{"no processors", swf.Job{Run: 10, Procs: -1, ReqProcs: -1}, SkipNoCores},
		{"zero processors", swf.Job{Run: 10, Procs: 0, ReqProcs: 0}, SkipNoCores},
		{"negative submit", swf.Job{Submit: -5, Run: 10, Procs: 1}, SkipNegativeSubmit},
		{"no run time", swf.Job{Run: -1, Procs: 1}, SkipNoRunTime},
		{"run time 0 takes part", swf.Job{Run: 0, Procs: 1}, ""},
		{"every rule broken: the first", swf.Job{Submit: -1, Run: -1, Procs: -1, ReqProcs: -1}, SkipNoCores},
		{"submit and run: submit", swf.Job{Submit: -1, Run: -1, Procs: 1}, SkipNegativeSubmit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := skipReason(tt.job); got != tt.want {
				t.Errorf("skipReason = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDenyReason(t *testing.T) {
	tests := []struct{ note, want string }{
		{resource.ReasonUnsatisfiable, "unsatisfiable request: more cores than the machine has"},
		{resource.ReasonUnsatisfiableConstrained, "unsatisfiable constrained request: more cores than the nodes the queue's requires allow"},
		{resource.ReasonNoMatch, "no resources satisfy provided constraints: the queue's requires match no node"},
		{"some other note", "some other note"},
		{"", "denied by the scheduler"},
	}
	for _, tt := range tests {
		if got := denyReason(tt.note); got != tt.want {
			t.Errorf("denyReason(%q) = %q, want %q", tt.note, got, tt.want)
		}
	}
}

// Reasons list the most common first (ties by name), count every job and
// name the first MaxExamples in the order added.
func TestTally(t *testing.T) {
	tl := tally{}
	if got := tl.list(); got == nil || len(got) != 0 {
		t.Errorf("empty tally lists %#v, want an empty non-nil slice (JSON [])", got)
	}
	for i := range int64(7) {
		tl.add("b", 10+i)
	}
	tl.add("c", 1)
	tl.add("a", 2)
	tl.add("z", 3)
	tl.add("z", 4)
	want := []Reason{
		{Reason: "b", Count: 7, Examples: []int64{10, 11, 12, 13, 14}},
		{Reason: "z", Count: 2, Examples: []int64{3, 4}},
		{Reason: "a", Count: 1, Examples: []int64{2}},
		{Reason: "c", Count: 1, Examples: []int64{1}},
	}
	if diff := cmp.Diff(want, tl.list()); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}
}

// A replay says why each job took no part: the skips by SWF rule, the
// denials in the scheduler's words with their cause, job numbers in trace
// order, counts adding up to Summary's.
func TestRunReasons(t *testing.T) {
	// "skips" on 2 cores: 1 has no processors, 2 a negative submit, 3 no
	// run time; 7 asks for 3 cores. Two more denials here, 8 and 9.
	text := skips + trace(job(8, 70, 5, 4, 5), rec(9, 80, 5, -1, 6, 5), rec(10, 90, -1, -1, -1, 5))
	res := simulate(t, text, machine(t, 1, 2), fcfs, false)
	wantSkipped := []Reason{
		{Reason: SkipNoCores, Count: 2, Examples: []int64{1, 10}},
		{Reason: SkipNegativeSubmit, Count: 1, Examples: []int64{2}},
		{Reason: SkipNoRunTime, Count: 1, Examples: []int64{3}},
	}
	wantDenied := []Reason{
		{Reason: "unsatisfiable request: more cores than the machine has", Count: 3, Examples: []int64{7, 8, 9}},
	}
	if diff := cmp.Diff(wantSkipped, res.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantDenied, res.Denied); diff != "" {
		t.Errorf("denied (-want +got):\n%s", diff)
	}
	if res.Summary.Skipped != 4 || res.Summary.Denied != 3 {
		t.Errorf("summary counts %d skipped, %d denied; want 4 and 3", res.Summary.Skipped, res.Summary.Denied)
	}
}

// With a queue whose requires narrow the machine, a job that fits the
// machine but not the queue's nodes is denied for that.
func TestRunReasonsQueue(t *testing.T) {
	inv := hostsOf(t,
		resource.ConfigEntry{Hosts: "node[0-1]", Cores: "0-1", Properties: []string{"batch"}},
		resource.ConfigEntry{Hosts: "node[2-3]", Cores: "0-1"},
	)
	// 8 cores in all, 4 of them batch: 1 runs, 2 (5) fits only the
	// machine, 3 (9) neither.
	text := trace(job(1, 0, 10, 4, 10), job(2, 1, 10, 5, 10), job(3, 2, 10, 9, 10))
	res := simulateIn(t, text, inv, easy, batchQueue(t))
	want := []Reason{
		{Reason: "unsatisfiable constrained request: more cores than the nodes the queue's requires allow", Count: 1, Examples: []int64{2}},
		{Reason: "unsatisfiable request: more cores than the machine has", Count: 1, Examples: []int64{3}},
	}
	if diff := cmp.Diff(want, res.Denied); diff != "" {
		t.Errorf("denied (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Reason{}, res.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
}
