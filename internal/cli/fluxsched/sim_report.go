package fluxsched

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/fluxq/fluxq/internal/cli/output"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/sched"
	"github.com/fluxq/fluxq/internal/sim"
)

// simReport is what `fluxsched sim --json` prints: SIMULATION.md's object,
// then why jobs took no part, then what was simulated (so a saved report
// says what it measured).
type simReport struct {
	sim.Summary
	SkippedReasons []sim.Reason   `json:"skipped_reasons"`
	DeniedReasons  []sim.Reason   `json:"denied_reasons"`
	Policy         simPolicyInfo  `json:"policy"`
	Machine        simMachineInfo `json:"machine"`
	Trace          simTraceInfo   `json:"trace"`
	samples        []sim.Sample   // for the plot
	schedule       []sim.Entry    // for --schedule-out
}

// simPolicyInfo names the queue policy, with the depths that shaped it:
// the reservation depth of hybrid, and the queue depth when --queue-depth
// bounds it (SIMULATION.md: unbounded otherwise).
type simPolicyInfo struct {
	Name             string `json:"name"`
	ReservationDepth int    `json:"reservation_depth,omitempty"`
	QueueDepth       int    `json:"queue_depth,omitempty"`
}

func policyInfo(p sched.QueuePolicy) simPolicyInfo {
	info := simPolicyInfo{Name: p.Kind.String(), QueueDepth: p.QueueDepth}
	if p.Kind == sched.Hybrid {
		info.ReservationDepth = p.ReservationDepth
		if info.ReservationDepth == 0 {
			info.ReservationDepth = sched.DefaultReservationDepth
		}
	}
	return info
}

// String is the policy for people: "hybrid (reservation depth 4)".
func (p simPolicyInfo) String() string {
	var depths []string
	if p.ReservationDepth > 0 {
		depths = append(depths, fmt.Sprintf("reservation depth %d", p.ReservationDepth))
	}
	if p.QueueDepth > 0 {
		depths = append(depths, fmt.Sprintf("queue depth %d", p.QueueDepth))
	}
	if len(depths) == 0 {
		return p.Name
	}
	return p.Name + " (" + strings.Join(depths, ", ") + ")"
}

// How the machine was given (simMachineInfo.From).
const (
	machineFromFlags  = "flags"     // --nodes and --cores-per-node
	machineFromConfig = "config"    // the hosts of --config
	machineFromHost   = "this host" // --config without [[resource.config]]
)

// simMachineInfo is the simulated machine's size and where it came from.
type simMachineInfo struct {
	Nodes int `json:"nodes"`
	Cores int `json:"cores"`
	GPUs  int `json:"gpus"`
	// Memory is the machine's memory in all, in bytes, when it is given
	// (--memory, or the config's hosts): jobs then ask for field 10.
	Memory uint64 `json:"memory,omitempty"`
	From   string `json:"from"`
	Config string `json:"config,omitempty"` // the --config path, as given
	flags  string // the flags as given, for people
}

// size is the machine's size for people: "2 nodes, 4 cores, 2 GPUs".
func (m simMachineInfo) size() string {
	s := plural(m.Nodes, "node") + ", " + plural(m.Cores, "core")
	if m.GPUs > 0 {
		s += ", " + plural(m.GPUs, "GPU")
	}
	if m.Memory > 0 {
		s += ", " + jobspec.FormatMemory(m.Memory) + " of memory"
	}
	return s
}

// String is the machine for people, with how it was given.
func (m simMachineInfo) String() string {
	switch m.From {
	case machineFromConfig:
		return fmt.Sprintf("%s (config %s)", m.size(), m.Config)
	case machineFromHost:
		return fmt.Sprintf("%s (this host: config %s has no [[resource.config]])", m.size(), m.Config)
	}
	return fmt.Sprintf("%s (%s)", m.size(), m.flags)
}

// simTraceInfo is the trace: its path as given, and how many job records
// it held (started, skipped and denied add up to it).
type simTraceInfo struct {
	Path string `json:"path"`
	Jobs int    `json:"jobs_read"`
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// printReport writes one simulation for people.
func printReport(w io.Writer, r *simReport) error {
	rows := [][2]string{{"policy", r.Policy.String()}}
	rows = append(rows, aboutRows(r)...)
	s := r.Summary
	rows = append(rows,
		[2]string{"makespan", fmt.Sprintf("%d s (%s)", s.Makespan, human(float64(s.Makespan)))},
		[2]string{"utilization", fmt.Sprintf("%.1f%%", 100*s.Utilization)},
		[2]string{"mean wait", fmt.Sprintf("%.0f s (%s)", s.MeanWait, human(s.MeanWait))},
		[2]string{"max wait", fmt.Sprintf("%d s (%s)", s.MaxWait, human(float64(s.MaxWait)))},
		[2]string{"mean bounded slowdown", fmt.Sprintf("%.2f", s.MeanBoundedSlowdown)},
		[2]string{"mean turnaround", fmt.Sprintf("%.0f s (%s)", s.MeanTurnaround, human(s.MeanTurnaround))},
	)
	return writeRows(w, rows)
}

// aboutRows are the rows every policy of one run shares: the machine, the
// trace, the job counts and why jobs were skipped or denied. (A denial
// depends on the job and the machine alone, so it is the same under
// every policy.)
func aboutRows(r *simReport) [][2]string {
	s := r.Summary
	rows := [][2]string{
		{"machine", r.Machine.String()},
		{"trace", fmt.Sprintf("%s, %s read", r.Trace.Path, plural(r.Trace.Jobs, "job"))},
		{"jobs", fmt.Sprintf("%d started, %d skipped, %d denied", s.Jobs, s.Skipped, s.Denied)},
	}
	for _, group := range []struct {
		key     string
		reasons []sim.Reason
	}{{"skipped", r.SkippedReasons}, {"denied", r.DeniedReasons}} {
		for i, why := range group.reasons {
			key := ""
			if i == 0 {
				key = group.key
			}
			rows = append(rows, [2]string{key, fmt.Sprintf("%d %s (%s)", why.Count, why.Reason, examples(why))})
		}
	}
	return rows
}

// examples lists a reason's job numbers: "job 5", "jobs 2, 6, …" when
// there are more than it holds.
func examples(r sim.Reason) string {
	nums := make([]string, len(r.Examples))
	for i, n := range r.Examples {
		nums[i] = fmt.Sprint(n)
	}
	s := strings.Join(nums, ", ")
	if r.Count > len(r.Examples) {
		s += ", …"
	}
	if r.Count == 1 {
		return "job " + s
	}
	return "jobs " + s
}

// writeRows writes key: value lines, the values aligned; a row with an
// empty key continues the one above.
func writeRows(w io.Writer, rows [][2]string) error {
	for _, r := range rows {
		key := ""
		if r[0] != "" {
			key = r[0] + ":"
		}
		if _, err := fmt.Fprintf(w, "%-22s %s\n", key, r[1]); err != nil {
			return err
		}
	}
	return nil
}

// compareTable is --compare's table: a row per policy.
var compareTable = output.Table[*simReport]{Columns: []output.Column[*simReport]{
	{Header: "POLICY", Value: func(r *simReport) string { return r.Policy.String() }},
	{Header: "MAKESPAN", Align: output.Right, Value: func(r *simReport) string { return human(float64(r.Makespan)) }},
	{Header: "UTILIZATION", Align: output.Right, Value: func(r *simReport) string { return fmt.Sprintf("%.1f%%", 100*r.Utilization) }},
	{Header: "MEAN WAIT", Align: output.Right, Value: func(r *simReport) string { return human(r.MeanWait) }},
	{Header: "MAX WAIT", Align: output.Right, Value: func(r *simReport) string { return human(float64(r.MaxWait)) }},
	{Header: "MEAN SLOWDOWN", Align: output.Right, Value: func(r *simReport) string { return fmt.Sprintf("%.2f", r.MeanBoundedSlowdown) }},
	{Header: "MEAN TURNAROUND", Align: output.Right, Value: func(r *simReport) string { return human(r.MeanTurnaround) }},
}}

// printComparison writes several simulations of one trace for people:
// what they share, then a row per policy.
func printComparison(w io.Writer, reports []*simReport) error {
	if len(reports) == 0 {
		return nil
	}
	if err := writeRows(w, aboutRows(reports[0])); err != nil {
		return err
	}
	if _, err := fmt.Fprintln(w); err != nil {
		return err
	}
	return compareTable.Render(w, reports, output.RenderOptions{Header: true})
}

// figures are a simulation's headline figures, for a plot.
func figures(s sim.Summary) string {
	return fmt.Sprintf("makespan %s, mean wait %s, utilization %.1f%%", human(float64(s.Makespan)), human(s.MeanWait), 100*s.Utilization)
}

// jobCounts is "4 jobs (1 skipped, 1 denied)", the parentheses only when
// some were.
func jobCounts(s sim.Summary) string {
	var left []string
	if s.Skipped > 0 {
		left = append(left, fmt.Sprintf("%d skipped", s.Skipped))
	}
	if s.Denied > 0 {
		left = append(left, fmt.Sprintf("%d denied", s.Denied))
	}
	out := plural(s.Jobs, "job")
	if len(left) > 0 {
		out += " (" + strings.Join(left, ", ") + ")"
	}
	return out
}

// simPlot is the plot of one or more simulations of a trace: the title
// names the trace, the policies and the machine; with one policy it gives
// the figures too, with several each legend entry gives its policy's.
func simPlot(reports []*simReport, window float64) sim.Plot {
	p := sim.Plot{Window: window}
	names := make([]string, len(reports))
	for i, r := range reports {
		names[i] = r.Policy.String()
		p.Series = append(p.Series, sim.Series{Label: names[i] + ": " + figures(r.Summary), Samples: r.samples})
	}
	first := reports[0]
	p.Title = []string{fmt.Sprintf("%s: %s on %s", filepath.Base(first.Trace.Path), strings.Join(names, ", "), first.Machine.size())}
	if len(reports) == 1 {
		p.Title = append(p.Title, jobCounts(first.Summary)+", "+figures(first.Summary))
	} else {
		p.Title = append(p.Title, fmt.Sprintf("%s; moving means over %s", jobCounts(first.Summary), sim.FormatWindow(p.MeanWindow())))
	}
	return p
}
