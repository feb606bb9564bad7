package fluxsched

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/cli/output"
	"github.com/fluxq/fluxq/internal/cli/progress"
	"github.com/fluxq/fluxq/internal/config"
	"github.com/fluxq/fluxq/internal/daemon"
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

EXAMPLES:
  # First come first served, then EASY backfilling, on the same trace
  $ fluxsched sim --trace jobs.swf --nodes 64 --cores-per-node 8
  $ fluxsched sim --trace jobs.swf --nodes 64 --cores-per-node 8 --policy easy

  # The machine of a config; the schedule and a plot to look at
  $ fluxsched sim --trace jobs.swf --config cluster.toml --schedule-out sched.jsonl --plot util.svg

  # The metrics as JSON
  $ fluxsched sim --trace jobs.swf --nodes 16 --cores-per-node 4 --json`,
		ArgsUsage: " ",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "trace", Usage: "the SWF trace `FILE` (required)"},
			&cli.IntFlag{Name: "nodes", Usage: "`N` nodes in the simulated machine", DefaultText: "none: give it, or --config"},
			&cli.IntFlag{Name: "cores-per-node", Usage: "`N` cores in each node", DefaultText: "none: give it, or --config"},
			&cli.StringFlag{Name: "config", Aliases: []string{"c"}, Usage: "take the machine (and [sched] policy) from this config `FILE` or directory", DefaultText: "none"},
			&cli.StringFlag{Name: "policy", Usage: "queue `POLICY`: fcfs, easy, hybrid or conservative", DefaultText: "fcfs"},
			&cli.IntFlag{Name: "reservation-depth", Usage: "hybrid: `N` jobs that get a reservation per pass", DefaultText: "64"},
			&cli.IntFlag{Name: "queue-depth", Usage: "`N` pending jobs one pass considers", DefaultText: "all"},
			output.JSONFlag(),
			&cli.StringFlag{Name: "schedule-out", Usage: "write one JSON line per started job to `FILE`", DefaultText: "none"},
			&cli.StringFlag{Name: "plot", Usage: "draw utilization and queue length over time to `FILE.svg`", DefaultText: "none"},
			&cli.StringFlag{Name: "cpu-profile", Hidden: true, Usage: "write a Go CPU profile of the simulation to `FILE`"},
		},
		Action: simulate,
	}
}

func simulate(c *cli.Context) error {
	if c.Args().Present() {
		return exitcode.UsageErrorf("sim takes no arguments (got %q)", c.Args().First())
	}
	if !c.IsSet("trace") {
		return exitcode.UsageErrorf("sim needs --trace FILE")
	}
	inv, cfg, err := simMachine(c)
	if err != nil {
		return err
	}
	policy, err := simPolicy(c, cfg)
	if err != nil {
		return err
	}
	f, err := os.Open(c.String("trace"))
	if err != nil {
		return fmt.Errorf("trace: %w", err)
	}
	jobs, _, err := swf.Read(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("trace %s: %w", c.String("trace"), err)
	}
	if path := c.String("cpu-profile"); path != "" {
		stop, err := startProfile(path)
		if err != nil {
			return err
		}
		defer stop()
	}
	line := progress.New(c.App.ErrWriter)
	res, err := sim.Run(sim.Config{Jobs: jobs, Inventory: inv, Policy: policy, Queues: simQueues(cfg), Samples: c.IsSet("plot"), Progress: simProgress(line)})
	line.Done()
	if err != nil {
		return fmt.Errorf("simulation: %w", err)
	}
	if path := c.String("schedule-out"); path != "" {
		if err := writeFile(path, func(w io.Writer) error { return writeSchedule(w, res.Schedule) }); err != nil {
			return err
		}
	}
	if path := c.String("plot"); path != "" {
		title := fmt.Sprintf("%s, %s", filepath.Base(c.String("trace")), policy.Kind)
		if err := writeFile(path, func(w io.Writer) error { return sim.WritePlot(w, res.Samples, title) }); err != nil {
			return err
		}
	}
	p, err := output.FromContext(c)
	if err != nil {
		return err
	}
	return output.PrintObject(p, res.Summary, func(w io.Writer) error { return printSummary(w, res.Summary) })
}

// simProgress shows how far the replay is, on a terminal only:
// "simulating: 3,145 of 10,000 jobs, t=12.3d" (t is virtual time).
func simProgress(l *progress.Line) func(done, total int, now int64) {
	if !l.Enabled() {
		return nil
	}
	return func(done, total int, now int64) {
		l.Set(fmt.Sprintf("simulating: %s of %s jobs, t=%s", progress.Thousands(done), progress.Thousands(total), human(float64(now))))
	}
}

// simMachine is the machine to simulate: --nodes x --cores-per-node, or
// the hosts of --config (this machine when it has none).
func simMachine(c *cli.Context) (*rset.R, *config.Config, error) {
	nodes, cores := c.Int("nodes"), c.Int("cores-per-node")
	sized := c.IsSet("nodes") || c.IsSet("cores-per-node")
	switch {
	case sized && c.IsSet("config"):
		return nil, nil, exitcode.UsageErrorf("give --nodes and --cores-per-node, or --config, not both")
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
	inv, err := sim.Machine(nodes, cores)
	return inv, nil, err
}

// simPolicy is the queue policy to simulate: the flags over the config's
// [sched] table, fcfs without either. The queue depth is unbounded unless
// --queue-depth says otherwise (docs/simulation.md), whatever the config says.
func simPolicy(c *cli.Context, cfg *config.Config) (sched.QueuePolicy, error) {
	t := config.Sched{}
	if cfg != nil {
		t = cfg.Sched
	}
	if err := schedFlags(c, &t); err != nil {
		return sched.QueuePolicy{}, err
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

func printSummary(w io.Writer, s sim.Summary) error {
	rows := [][2]string{
		{"jobs", fmt.Sprintf("%d started, %d skipped, %d denied", s.Jobs, s.Skipped, s.Denied)},
		{"makespan", fmt.Sprintf("%d s (%s)", s.Makespan, human(float64(s.Makespan)))},
		{"utilization", fmt.Sprintf("%.1f%%", 100*s.Utilization)},
		{"mean wait", fmt.Sprintf("%.0f s (%s)", s.MeanWait, human(s.MeanWait))},
		{"max wait", fmt.Sprintf("%d s (%s)", s.MaxWait, human(float64(s.MaxWait)))},
		{"mean bounded slowdown", fmt.Sprintf("%.2f", s.MeanBoundedSlowdown)},
		{"mean turnaround", fmt.Sprintf("%.0f s (%s)", s.MeanTurnaround, human(s.MeanTurnaround))},
	}
	for _, r := range rows {
		if _, err := fmt.Fprintf(w, "%-22s %s\n", r[0]+":", r[1]); err != nil {
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
