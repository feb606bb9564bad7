package fluxsched

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/cli/output"
	"github.com/fluxq/fluxq/internal/cli/progress"
	"github.com/fluxq/fluxq/internal/config"
	"github.com/fluxq/fluxq/internal/daemon"
	"github.com/fluxq/fluxq/internal/fsd"
	"github.com/fluxq/fluxq/internal/gcpace"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/queue"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/sched"
	"github.com/fluxq/fluxq/internal/sim"
	"github.com/fluxq/fluxq/internal/swf"
)

func simCommand() *cli.Command {
	return &cli.Command{
		Name:  "sim",
		Usage: "replay a Standard Workload Format trace in virtual time and report how the policy did",
		Description: `Replays a Standard Workload Format trace in virtual time and reports
makespan, utilization, mean and max wait, and mean bounded slowdown. Use
it to compare scheduling policies on a workload before choosing one. The
trace's jobs go through the same job manager and scheduler as fluxsched
run, with a simulated exec service that ends each job after its run
time (or kills it at its requested time). The machine is --nodes x
--cores-per-node, or the hosts of --config; with a config, the jobs go
to its default queue (its requires apply) and every queue is started.
Without --queue-depth the scheduler sees the whole queue.

--memory gives each node of --nodes that much memory (512M, 4G; a bare
number is MB), and each job then asks for the memory of the trace's field
10 (requested memory per processor, KB) on every processor; so does a
config whose [[resource.config]] hosts give memory. Otherwise field 10 is
ignored. A job no set of nodes can hold is denied.

Jobs that take no part are counted by reason, with their first job
numbers: skipped (no processor count, a negative submit time, no run
time) or denied (more cores than the machine, or the queue's nodes,
have, more memory than its nodes can hold, or over a limit of its
queue: a duration or job-size limit refuses the job as fluxq submit
would, and the replay goes on without it). --json prints the
figures, these reasons (skipped_reasons, denied_reasons) and what was
simulated: policy, machine (nodes, cores, gpus, memory in bytes when
given, and from: flags, config or this host) and trace (path,
jobs_read).

--compare replays the trace under each of several policies and prints a
row per policy; with --json, an array of the objects --policy prints.

--plot draws utilization over time, its moving mean over it, above the
queue length; the title names the trace, the policy and the machine, and
gives the figures. The mean's window is the plot's span / 50, rounded
down to 1, 2, 5, 10, 15 or 30 s or min, 1, 2, 3, 6 or 12 h, 1 or 2 d,
or whole weeks (at least 1 s); --plot-window sets it. With --compare,
each policy's moving mean and queue length are lines of its colour on
the same axes, and its figures are in the legend.

EXAMPLES:
  # First come first served, then EASY backfilling, on the same trace
  $ fluxsched sim --trace jobs.swf --nodes 64 --cores-per-node 8
  $ fluxsched sim --trace jobs.swf --nodes 64 --cores-per-node 8 --policy easy

  # Three policies side by side, and on one plot
  $ fluxsched sim --trace jobs.swf --nodes 64 --cores-per-node 8 --compare fcfs,easy,conservative --plot util.png

  # The machine of a config; the schedule and a plot to look at
  $ fluxsched sim --trace jobs.swf --config cluster.toml --schedule-out sched.jsonl --plot util.svg

  # The metrics as JSON, with memory scheduled too (the trace's field 10)
  $ fluxsched sim --trace jobs.swf --nodes 16 --cores-per-node 4 --memory 64G --json`,
		ArgsUsage: " ",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "trace", Usage: "the SWF trace `FILE` (required)"},
			&cli.IntFlag{Name: "nodes", Usage: "`N` nodes in the simulated machine", DefaultText: "none: give it, or --config"},
			&cli.IntFlag{Name: "cores-per-node", Usage: "`N` cores in each node", DefaultText: "none: give it, or --config"},
			&cli.StringFlag{Name: "memory", Usage: "`SIZE` of memory in each node (512M, 4G; bare is MB): jobs ask for the trace's field 10", DefaultText: "none: field 10 is ignored"},
			&cli.StringFlag{Name: "config", Aliases: []string{"c"}, Usage: "take the machine (and [sched] policy) from this config `FILE` or directory", DefaultText: "none"},
			&cli.StringFlag{Name: "policy", Usage: "queue `POLICY`: fcfs, easy, hybrid or conservative", DefaultText: "fcfs"},
			&cli.StringSliceFlag{Name: "compare", Usage: "replay under each of these `POLICIES` (two or more: fcfs,easy) and compare them", DefaultText: "none"},
			&cli.IntFlag{Name: "reservation-depth", Usage: "hybrid: `N` jobs that get a reservation per pass", DefaultText: "64"},
			&cli.IntFlag{Name: "queue-depth", Usage: "`N` pending jobs one pass considers", DefaultText: "all"},
			output.JSONFlag(),
			&cli.StringFlag{Name: "schedule-out", Usage: "write one JSON line per started job to `FILE`", DefaultText: "none"},
			&cli.StringFlag{Name: "plot", Usage: "draw utilization, its moving mean and queue length over time to `FILE` (.png: a PNG, else an SVG)", DefaultText: "none"},
			&cli.StringFlag{Name: "plot-window", Usage: "the moving mean's window, a `DURATION` (10m, 2h)", DefaultText: "the plot's span / 50, rounded down"},
			&cli.StringFlag{Name: "cpu-profile", Hidden: true, Usage: "write a Go CPU profile of the simulation to `FILE`"},
		},
		Action: simulate,
	}
}

var simPace sync.Once

func simulate(c *cli.Context) error {
	if c.Args().Present() {
		return exitcode.UsageErrorf("sim takes no arguments (got %q)", c.Args().First())
	}
	if !c.IsSet("trace") {
		return exitcode.UsageErrorf("sim needs --trace FILE")
	}
	inv, cfg, machine, err := simMachine(c)
	if err != nil {
		return err
	}
	// The collector paced as fluxsched run's is while the heap is small
	// (a trace of a few thousand jobs keeps a few MiB live, and by Go's
	// default collected every few hundred jobs); a large replay's heap
	// is paced as Go's default would.
	// Once a process: tests run many replays in theirs.
	simPace.Do(func() { gcpace.StartPercent(context.Background()) })
	// docs/simulation.md, "Memory": field 10 is read when the machine's
	// memory is given, by --memory or by the config's hosts.
	withMemory := machine.Memory > 0
	policies, err := simPolicies(c, cfg)
	if err != nil {
		return err
	}
	if len(policies) > 1 && c.IsSet("schedule-out") {
		return exitcode.UsageErrorf("--schedule-out writes one policy's schedule: give --policy, not --compare")
	}
	plotFormat, window, err := simPlotFlags(c)
	if err != nil {
		return err
	}
	for _, flag := range []string{"schedule-out", "plot"} {
		if err := checkOutDir(flag, c.String(flag)); err != nil {
			return err
		}
	}
	p, err := output.FromContext(c)
	if err != nil {
		return err
	}
	tracePath := c.String("trace")
	f, err := os.Open(tracePath)
	if err != nil {
		return fmt.Errorf("trace: %w", err)
	}
	jobs, _, err := swf.Read(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("trace %s: %w", tracePath, err)
	}
	if path := c.String("cpu-profile"); path != "" {
		stop, err := startProfile(path)
		if err != nil {
			return err
		}
		defer stop()
	}
	reports := make([]*simReport, len(policies))
	for i, policy := range policies {
		label := ""
		if len(policies) > 1 {
			label = " " + policy.Kind.String()
		}
		line := progress.New(c.App.ErrWriter)
		res, err := sim.Run(sim.Config{Jobs: jobs, Inventory: inv, Policy: policy, Queues: simQueues(cfg), Memory: withMemory, Samples: c.IsSet("plot"), Progress: simProgress(line, label)})
		line.Done()
		if err != nil {
			if len(policies) > 1 {
				return fmt.Errorf("simulation under %s: %w", policy.Kind, err)
			}
			return fmt.Errorf("simulation: %w", err)
		}
		reports[i] = &simReport{
			Summary: res.Summary, SkippedReasons: res.Skipped, DeniedReasons: res.Denied,
			Policy: policyInfo(policy), Machine: machine, Trace: simTraceInfo{Path: tracePath, Jobs: len(jobs)},
			samples: res.Samples, schedule: res.Schedule,
		}
	}
	if path := c.String("schedule-out"); path != "" {
		if err := writeFile(path, func(w io.Writer) error { return writeSchedule(w, reports[0].schedule) }); err != nil {
			return err
		}
	}
	if path := c.String("plot"); path != "" {
		pl := simPlot(reports, window)
		pl.Format = plotFormat
		if err := writeFile(path, pl.Write); err != nil {
			return err
		}
	}
	if len(reports) > 1 {
		return output.PrintObject(p, reports, func(w io.Writer) error { return printComparison(w, reports) })
	}
	return output.PrintObject(p, reports[0], func(w io.Writer) error { return printReport(w, reports[0]) })
}

// simPlotFlags checks --plot and --plot-window before the replay, so a
// mistake costs nothing: the plot's format, and its moving mean's window
// in seconds (0: chosen from the span).
func simPlotFlags(c *cli.Context) (sim.Format, float64, error) {
	if !c.IsSet("plot") {
		if c.IsSet("plot-window") {
			return sim.SVG, 0, exitcode.UsageErrorf("--plot-window needs --plot FILE")
		}
		return sim.SVG, 0, nil
	}
	format, err := sim.FormatOf(c.String("plot"))
	if err != nil {
		return format, 0, exitcode.UsageErrorf("--plot: %v", err)
	}
	if !c.IsSet("plot-window") {
		return format, 0, nil
	}
	w, err := fsd.ParseBounded(c.String("plot-window"))
	switch {
	case err != nil:
		return format, 0, exitcode.UsageErrorf("--plot-window: %v", err)
	case !(w > 0):
		return format, 0, exitcode.UsageErrorf("--plot-window: must be more than 0, not %s", c.String("plot-window"))
	case w > maxPlotWindow:
		return format, 0, exitcode.UsageErrorf("--plot-window: %s is longer than any trace (1000 years at most)", c.String("plot-window"))
	}
	return format, w, nil
}

// checkOutDir checks, before a replay that may take minutes, that the
// directory of an output file exists, so a mistyped path fails at once.
func checkOutDir(flag, path string) error {
	if path == "" {
		return nil
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return fmt.Errorf("--%s: %s: no such directory %s", flag, path, dir)
	case !fi.IsDir():
		return fmt.Errorf("--%s: %s: %s is not a directory", flag, path, dir)
	}
	return nil
}

// maxPlotWindow bounds --plot-window: a thousand years is past any trace,
// and well within what the plot can draw.
const maxPlotWindow = 1000 * 365 * 86400

// simProgress shows how far the replay is, on a terminal only:
// "simulating: 3,145 of 10,000 jobs, t=12.3d" (t is virtual time).
// With --compare, label names the policy: "simulating easy: ...".
func simProgress(l *progress.Line, label string) func(done, total int, now int64) {
	if !l.Enabled() {
		return nil
	}
	return func(done, total int, now int64) {
		l.Set(fmt.Sprintf("simulating%s: %s of %s jobs, t=%s", label, progress.Thousands(done), progress.Thousands(total), human(float64(now))))
	}
}

// simMachine is the machine to simulate: --nodes x --cores-per-node, or
// the hosts of --config (this machine when it has none), with its size
// and how it was given.
func simMachine(c *cli.Context) (*rset.R, *config.Config, simMachineInfo, error) {
	inv, cfg, err := simInventory(c)
	if err != nil {
		return nil, nil, simMachineInfo{}, err
	}
	m := simMachineInfo{From: machineFromFlags, flags: fmt.Sprintf("--nodes %d --cores-per-node %d", c.Int("nodes"), c.Int("cores-per-node"))}
	if cfg != nil {
		m.From, m.Config = machineFromConfig, c.String("config")
		if len(cfg.Resource.Config) == 0 {
			m.From = machineFromHost
		}
	}
	if c.IsSet("memory") {
		m.flags += " --memory " + c.String("memory")
	}
	m.Nodes, m.Cores, m.GPUs = inv.Counts()
	if m.From != machineFromHost {
		// This host's discovered memory is not the trace's machine's:
		// only memory given (--memory, the config's hosts) is simulated.
		m.Memory = inv.Memory()
	}
	return inv, cfg, m, nil
}

// simInventory reads the machine's flags or config.
func simInventory(c *cli.Context) (*rset.R, *config.Config, error) {
	nodes, cores := c.Int("nodes"), c.Int("cores-per-node")
	sized := c.IsSet("nodes") || c.IsSet("cores-per-node")
	switch {
	case sized && c.IsSet("config"):
		return nil, nil, exitcode.UsageErrorf("give --nodes and --cores-per-node, or --config, not both")
	case c.IsSet("memory") && c.IsSet("config"):
		return nil, nil, exitcode.UsageErrorf("--memory goes with --nodes and --cores-per-node; a config gives its hosts' memory (memory = \"64G\" in [[resource.config]])")
	case c.IsSet("config"):
		cfg, err := config.Load(c.String("config"))
		if err != nil {
			return nil, nil, err
		}
		inv, err := daemon.Inventory(cfg)
		return inv, cfg, err
	case !c.IsSet("nodes") || !c.IsSet("cores-per-node"):
		return nil, nil, exitcode.UsageErrorf("sim needs --nodes N and --cores-per-node C, or --config FILE")
	case nodes < 1 || nodes > 1<<20:
		return nil, nil, exitcode.UsageErrorf("--nodes: must be from 1 to %d, not %d", 1<<20, nodes)
	case cores < 1 || cores > 1<<16:
		return nil, nil, exitcode.UsageErrorf("--cores-per-node: must be from 1 to %d, not %d", 1<<16, cores)
	}
	var memory uint64
	if c.IsSet("memory") {
		m, err := jobspec.ParseMemory(c.String("memory"))
		if err != nil {
			return nil, nil, exitcode.UsageErrorf("--memory: %v", err)
		}
		// Sums of memory over the machine stay far inside a uint64.
		if m > jobspec.MaxMemory/uint64(nodes) {
			return nil, nil, exitcode.UsageErrorf("--memory: %d nodes of %s is more than 1E in all", nodes, c.String("memory"))
		}
		memory = m
	}
	inv, err := sim.Machine(nodes, cores, memory)
	return inv, nil, err
}

// simPolicies are the policies to simulate: --compare's, else the one of
// simPolicy.
func simPolicies(c *cli.Context, cfg *config.Config) ([]sched.QueuePolicy, error) {
	if !c.IsSet("compare") {
		p, err := simPolicy(c, cfg)
		return []sched.QueuePolicy{p}, err
	}
	if c.IsSet("policy") {
		return nil, exitcode.UsageErrorf("give --policy or --compare, not both")
	}
	var out []sched.QueuePolicy
	for _, name := range c.StringSlice("compare") {
		name = strings.TrimSpace(name)
		if name == "" {
			return nil, exitcode.UsageErrorf("--compare: a policy name is empty (give them as fcfs,easy)")
		}
		k, err := sched.ParseKind(name)
		if err != nil {
			return nil, exitcode.UsageErrorf("--compare: %v", err)
		}
		if slices.ContainsFunc(out, func(p sched.QueuePolicy) bool { return p.Kind == k }) {
			return nil, exitcode.UsageErrorf("--compare: %s is named twice", k)
		}
		p, err := simPolicyOf(c, cfg, k.String())
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if len(out) < 2 {
		return nil, exitcode.UsageErrorf("--compare: give two or more policies, as fcfs,easy")
	}
	return out, nil
}

// simPolicy is the queue policy to simulate: the flags over the config's
// [sched] table, fcfs without either. The queue depth is unbounded unless
// --queue-depth says otherwise (docs/simulation.md), whatever the config says.
func simPolicy(c *cli.Context, cfg *config.Config) (sched.QueuePolicy, error) {
	return simPolicyOf(c, cfg, "")
}

// simPolicyOf is simPolicy with kind ("" for the flags' or config's) as
// the policy.
func simPolicyOf(c *cli.Context, cfg *config.Config, kind string) (sched.QueuePolicy, error) {
	t := config.Sched{}
	if cfg != nil {
		t = cfg.Sched
	}
	if err := schedFlags(c, &t); err != nil {
		return sched.QueuePolicy{}, err
	}
	if kind != "" {
		t.Policy = kind
	}
	all := 0
	if !c.IsSet("queue-depth") {
		t.QueueDepth = &all
	}
	p, _, err := (&config.Config{Sched: t}).Policies()
	return p, err
}

// simQueues are the config's queues, if any.
func simQueues(cfg *config.Config) *queue.Set {
	if cfg == nil {
		return nil
	}
	return cfg.QueueSet
}

// writeFile writes a file through fill, reporting the path on error.
func writeFile(path string, fill func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	err = fill(bw)
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func writeSchedule(w io.Writer, entries []sim.Entry) error {
	enc := json.NewEncoder(w)
	for _, e := range entries {
		if err := enc.Encode(e); err != nil {
			return err
		}
	}
	return nil
}

// human writes seconds the way Flux's durations read: 90s, 1.5h, 2.3d.
func human(sec float64) string {
	switch {
	case sec < 60:
		return fmt.Sprintf("%.0fs", sec)
	case sec < 3600:
		return fmt.Sprintf("%.1fm", sec/60)
	case sec < 86400:
		return fmt.Sprintf("%.1fh", sec/3600)
	}
	return fmt.Sprintf("%.1fd", sec/86400)
}
