package fluxsched

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/sched"
	"github.com/fluxq/fluxq/internal/sim"
)

func TestExamples(t *testing.T) {
	tests := []struct {
		r    sim.Reason
		want string
	}{
		{sim.Reason{Count: 1, Examples: []int64{5}}, "job 5"},
		{sim.Reason{Count: 2, Examples: []int64{2, 6}}, "jobs 2, 6"},
		{sim.Reason{Count: 9, Examples: []int64{1, 2, 3, 4, 5}}, "jobs 1, 2, 3, 4, 5, …"},
	}
	for _, tt := range tests {
		if got := examples(tt.r); got != tt.want {
			t.Errorf("examples(%+v) = %q, want %q", tt.r, got, tt.want)
		}
	}
}

func TestPolicyInfo(t *testing.T) {
	tests := []struct {
		p     sched.QueuePolicy
		want  simPolicyInfo
		human string
	}{
		{sched.QueuePolicy{Kind: sched.FCFS}, simPolicyInfo{Name: "fcfs"}, "fcfs"},
		{sched.QueuePolicy{Kind: sched.EASY, QueueDepth: 8}, simPolicyInfo{Name: "easy", QueueDepth: 8}, "easy (queue depth 8)"},
		// Hybrid's depth is shown as it applies: the default when unset.
		{sched.QueuePolicy{Kind: sched.Hybrid}, simPolicyInfo{Name: "hybrid", ReservationDepth: sched.DefaultReservationDepth}, "hybrid (reservation depth 64)"},
		{sched.QueuePolicy{Kind: sched.Hybrid, ReservationDepth: 3, QueueDepth: 10}, simPolicyInfo{Name: "hybrid", ReservationDepth: 3, QueueDepth: 10}, "hybrid (reservation depth 3, queue depth 10)"},
		// Only hybrid has a reservation depth of its own to report.
		{sched.QueuePolicy{Kind: sched.Conservative, ReservationDepth: 3}, simPolicyInfo{Name: "conservative"}, "conservative"},
	}
	for _, tt := range tests {
		got := policyInfo(tt.p)
		if got != tt.want {
			t.Errorf("policyInfo(%+v) = %+v, want %+v", tt.p, got, tt.want)
		}
		if s := got.String(); s != tt.human {
			t.Errorf("%+v.String() = %q, want %q", got, s, tt.human)
		}
	}
}

func TestMachineInfo(t *testing.T) {
	tests := []struct {
		m    simMachineInfo
		want string
	}{
		{simMachineInfo{Nodes: 1, Cores: 1, From: machineFromFlags, flags: "--nodes 1 --cores-per-node 1"}, "1 node, 1 core (--nodes 1 --cores-per-node 1)"},
		{simMachineInfo{Nodes: 2, Cores: 4, GPUs: 1, From: machineFromConfig, Config: "m.toml"}, "2 nodes, 4 cores, 1 GPU (config m.toml)"},
		{simMachineInfo{Nodes: 1, Cores: 8, GPUs: 2, From: machineFromHost, Config: "q.toml"}, "1 node, 8 cores, 2 GPUs (this host: config q.toml has no [[resource.config]])"},
	}
	for _, tt := range tests {
		if got := tt.m.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

// --json: SIMULATION.md's object first, as it always was, then the
// reasons, policy, machine and trace; the flags as given stay out.
func TestSimReportJSON(t *testing.T) {
	r := simReport{
		Summary:        sim.Summary{Jobs: 1, Makespan: 10, Utilization: 0.5},
		SkippedReasons: []sim.Reason{}, DeniedReasons: []sim.Reason{{Reason: "x", Count: 1, Examples: []int64{3}}},
		Policy:  simPolicyInfo{Name: "easy"},
		Machine: simMachineInfo{Nodes: 1, Cores: 2, From: machineFromFlags, flags: "--nodes 1 --cores-per-node 2"},
		Trace:   simTraceInfo{Path: "t.swf", Jobs: 2},
		samples: []sim.Sample{{T: 1}},
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"jobs":1,"skipped":0,"denied":0,"makespan":10,"utilization":0.5,"mean_wait":0,"max_wait":0,"mean_bounded_slowdown":0,"mean_turnaround":0,` +
		`"skipped_reasons":[],"denied_reasons":[{"reason":"x","count":1,"examples":[3]}],` +
		`"policy":{"name":"easy"},"machine":{"nodes":1,"cores":2,"gpus":0,"from":"flags"},"trace":{"path":"t.swf","jobs_read":2}}`
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("JSON (-want +got):\n%s", diff)
	}
}

func TestJobCounts(t *testing.T) {
	tests := []struct {
		s    sim.Summary
		want string
	}{
		{sim.Summary{Jobs: 1}, "1 job"},
		{sim.Summary{Jobs: 4, Skipped: 1}, "4 jobs (1 skipped)"},
		{sim.Summary{Jobs: 4, Denied: 2}, "4 jobs (2 denied)"},
		{sim.Summary{Jobs: 0, Skipped: 1, Denied: 1}, "0 jobs (1 skipped, 1 denied)"},
	}
	for _, tt := range tests {
		if got := jobCounts(tt.s); got != tt.want {
			t.Errorf("jobCounts(%+v) = %q, want %q", tt.s, got, tt.want)
		}
	}
}

// The plot's title: trace, policies and machine; then the figures (one
// policy) or the moving means' window (several, whose figures are in the
// legend).
func TestSimPlot(t *testing.T) {
	machine := simMachineInfo{Nodes: 2, Cores: 4, From: machineFromFlags}
	trace := simTraceInfo{Path: "/data/t.swf", Jobs: 6}
	easy := &simReport{
		Summary: sim.Summary{Jobs: 4, Skipped: 1, Makespan: 37, MeanWait: 8.75, Utilization: 0.777},
		Policy:  simPolicyInfo{Name: "easy"}, Machine: machine, Trace: trace,
		samples: []sim.Sample{{T: 0}, {T: 37}},
	}
	fcfs := &simReport{
		Summary: sim.Summary{Jobs: 4, Skipped: 1, Makespan: 5000, MeanWait: 14, Utilization: 0.523},
		Policy:  simPolicyInfo{Name: "fcfs"}, Machine: machine, Trace: trace,
		samples: []sim.Sample{{T: 0}, {T: 5000}},
	}
	one := simPlot([]*simReport{easy}, 0)
	if diff := cmp.Diff([]string{"t.swf: easy on 2 nodes, 4 cores", "4 jobs (1 skipped), makespan 37s, mean wait 9s, utilization 77.7%"}, one.Title); diff != "" {
		t.Errorf("one policy's title (-want +got):\n%s", diff)
	}
	two := simPlot([]*simReport{fcfs, easy}, 0)
	// 5000 s / 50 = 100 s: 1m.
	if diff := cmp.Diff([]string{"t.swf: fcfs, easy on 2 nodes, 4 cores", "4 jobs (1 skipped); moving means over 1m"}, two.Title); diff != "" {
		t.Errorf("two policies' title (-want +got):\n%s", diff)
	}
	labels := []string{two.Series[0].Label, two.Series[1].Label}
	want := []string{"fcfs: makespan 1.4h, mean wait 14s, utilization 52.3%", "easy: makespan 37s, mean wait 9s, utilization 77.7%"}
	if diff := cmp.Diff(want, labels); diff != "" {
		t.Errorf("legend labels (-want +got):\n%s", diff)
	}
	if got := simPlot([]*simReport{fcfs, easy}, 600).Title[1]; !strings.HasSuffix(got, "over 10m") {
		t.Errorf("with a window of 600 s the title says %q", got)
	}
}

// --compare's human form: what the runs share once, then a row each.
func TestPrintComparison(t *testing.T) {
	machine := simMachineInfo{Nodes: 2, Cores: 4, From: machineFromFlags, flags: "--nodes 2 --cores-per-node 2"}
	trace := simTraceInfo{Path: "t.swf", Jobs: 6}
	reports := []*simReport{
		{Summary: sim.Summary{Jobs: 6, Makespan: 55, Utilization: 0.5227, MeanWait: 14, MaxWait: 28, MeanBoundedSlowdown: 1.98, MeanTurnaround: 27.75}, Policy: simPolicyInfo{Name: "fcfs"}, Machine: machine, Trace: trace},
		{Summary: sim.Summary{Jobs: 6, Makespan: 37, Utilization: 0.777, MeanWait: 8.75, MaxWait: 26, MeanBoundedSlowdown: 1.875, MeanTurnaround: 22.5}, Policy: simPolicyInfo{Name: "easy"}, Machine: machine, Trace: trace},
	}
	var buf bytes.Buffer
	if err := printComparison(&buf, reports); err != nil {
		t.Fatal(err)
	}
	want := `machine:               2 nodes, 4 cores (--nodes 2 --cores-per-node 2)
trace:                 t.swf, 6 jobs read
jobs:                  6 started, 0 skipped, 0 denied

POLICY MAKESPAN UTILIZATION MEAN WAIT MAX WAIT MEAN SLOWDOWN MEAN TURNAROUND
fcfs        55s       52.3%       14s      28s          1.98             28s
easy        37s       77.7%        9s      26s          1.88             22s
`
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}
