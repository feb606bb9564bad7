package fluxres

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/cli/instance"
	"github.com/fluxq/fluxq/internal/cli/output"
	"github.com/fluxq/fluxq/internal/cli/printable"
	"github.com/fluxq/fluxq/internal/constraint"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/hostlist"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/nvml"
	"github.com/fluxq/fluxq/internal/reservation"
	"github.com/fluxq/fluxq/internal/resource"
	"github.com/fluxq/fluxq/internal/rset"
)

// view is the instance's resources, decoded once per command.
type view struct {
	inv, held *rset.R
	drained   idset.Set
	draining  idset.Set
	reasons   map[uint]api.DrainedRank
}

func load(c *cli.Context, open opener) (*view, error) {
	cl, err := open(c)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	res, err := cl.Resources(c.Context)
	if err != nil {
		return nil, err
	}
	v := &view{reasons: map[uint]api.DrainedRank{}}
	if v.inv, err = rset.Parse(res.Inventory); err != nil {
		return nil, err
	}
	if v.held, err = rset.Parse(res.Allocated); err != nil {
		return nil, err
	}
	var ranks []uint
	for _, d := range res.Drained {
		ranks = append(ranks, d.Rank)
		v.reasons[d.Rank] = d
	}
	v.drained = idset.Of(ranks...)
	if v.draining, err = idset.Parse(res.Draining); err != nil {
		return nil, err
	}
	return v, nil
}

// free is what no job holds, drained ranks included (they are shown apart).
func (v *view) free() *rset.R { return v.inv.Difference(v.held) }

// hasMemory reports whether the inventory knows any host's memory: only
// then do the views show memory, so that an instance without it prints
// as it did before memory was a resource.
func (v *view) hasMemory() bool { return v.inv.Memory() > 0 }

// memoryText is a size as every view shows memory.
func memoryText(n uint64) string { return jobspec.FormatMemory(n) }

// group is one line of `fluxres list`: a state and the resources in it.
// Mem says the instance knows memory, so the line shows it.
type group struct {
	State string  `json:"state"`
	R     *rset.R `json:"-"`
	Mem   bool    `json:"-"`
}

func (g group) fields() map[string]any {
	nnodes, ncores, ngpus := g.R.Counts()
	f := map[string]any{"state": g.State, "nnodes": nnodes, "ncores": ncores, "ngpus": ngpus,
		"nodelist": g.R.Nodelist().String(), "ranks": g.R.Ranks().String()}
	if g.Mem {
		f["memory"] = g.R.Memory()
	}
	return f
}

// listTable is the default table of `fluxres list`; a MEMORY column, after
// NGPUS, when the instance knows memory.
func listTable(mem bool) output.Table[group] {
	t := output.Table[group]{
		Description: "STATE NNODES NCORES NGPUS [MEMORY] NODELIST",
		Columns: []output.Column[group]{
			{Header: "STATE", Value: func(g group) string { return g.State }},
			{Header: "NNODES", Align: output.Right, Value: func(g group) string { n, _, _ := g.R.Counts(); return fmt.Sprint(n) }},
			{Header: "NCORES", Align: output.Right, Value: func(g group) string { _, n, _ := g.R.Counts(); return fmt.Sprint(n) }},
			{Header: "NGPUS", Align: output.Right, Value: func(g group) string { _, _, n := g.R.Counts(); return fmt.Sprint(n) }},
		},
	}
	if mem {
		t.Columns = append(t.Columns, output.Column[group]{Header: "MEMORY", Align: output.Right, Value: func(g group) string { return memoryText(g.R.Memory()) }})
	}
	t.Columns = append(t.Columns, output.Column[group]{Header: "NODELIST", Value: func(g group) string { return g.R.Nodelist().String() }})
	return t
}

func listCommand(open opener) *cli.Command {
	list := output.List[group]{
		Tables: map[string]output.Table[group]{output.Default: listTable(false)},
		Doc: func(gs []group) any {
			out := make([]map[string]any, len(gs))
			for i, g := range gs {
				out[i] = g.fields()
			}
			return map[string]any{"resources": out}
		},
		Item:  func(g group) any { return g.fields() },
		Shape: map[string]any{},
		// The fields of an item, a map, as flux resource list names them.
		Fields: []output.Field[group]{
			{Name: "state", Help: "free, allocated or down"},
			{Name: "nnodes", Help: "nodes"},
			{Name: "ncores", Help: "cores"},
			{Name: "ngpus", Help: "GPUs"},
			// --json has bytes, and only where the instance knows memory.
			{Name: "memory", Heading: "MEMORY", Help: "memory, as the MEMORY column shows it (4G, 1.5G); empty where no memory is known (--json: bytes)", Value: func(g group) any {
				if !g.Mem {
					return ""
				}
				return memoryText(g.R.Memory())
			}},
			{Name: "nodelist", Help: "the nodes' names"},
			{Name: "ranks", Help: "the nodes' ranks"},
		},
	}
	return &cli.Command{
		Name:  "list",
		Usage: "resources by state: free, allocated, down",
		Description: `One line per state: STATE NNODES NCORES NGPUS NODELIST, and MEMORY before
NODELIST when the hosts' memory is known. free is what no job holds on
nodes that take work; allocated is what jobs hold; down is drained
nodes. Use it for a quick look at how busy the instance is; status
shows each node's drain reason or reservation.

EXAMPLES:
  # Free, allocated and down resources
  $ fluxres list

  # Only what is free, as JSON
  $ fluxres list -s free --json`,
		Flags: append([]cli.Flag{&cli.StringFlag{Name: "states", Aliases: []string{"s"}, Value: "free,allocated,down", Usage: "only these `STATES`, comma-separated: free, allocated, down"}}, output.ListFlags()...),
		Action: exitcode.Action(func(c *cli.Context) error {
			states, err := parseStates(c.String("states"))
			if err != nil {
				return err
			}
			v, err := load(c, open)
			if err != nil {
				return err
			}
			p, err := output.FromContext(c)
			if err != nil {
				return err
			}
			var gs []group
			down := v.inv.SelectRanks(v.drained)
			mem := v.hasMemory()
			for _, s := range states {
				switch s {
				case "free":
					gs = append(gs, group{s, v.free().Difference(down), mem})
				case "allocated":
					gs = append(gs, group{s, v.held, mem})
				case "down":
					gs = append(gs, group{s, down, mem})
				}
			}
			list.Tables = map[string]output.Table[group]{output.Default: listTable(mem)}
			return output.PrintList(p, list, gs)
		}),
	}
}

func parseStates(s string) ([]string, error) {
	var out []string
	for _, w := range strings.Split(s, ",") {
		switch w = strings.TrimSpace(w); w {
		case "free", "allocated", "down":
			out = append(out, w)
		default:
			return nil, exitcode.UsageErrorf("--states: unknown state %q (want free, allocated, down)", w)
		}
	}
	return out, nil
}

// nodeStatus is one node of `fluxres status`.
type nodeStatus struct {
	Rank     uint   `json:"rank"`
	Hostname string `json:"hostname"`
	State    string `json:"state"` // avail, drained, draining, reserved
	Reason   string `json:"reason,omitempty"`
	// Session is the reservation whose session holds a reserved node.
	Session   string  `json:"session,omitempty"`
	Timestamp float64 `json:"timestamp,omitempty"`
	// Memory is the node's memory in bytes and MemoryFree what no job
	// holds of it, both only where the instance knows memory.
	Memory     uint64  `json:"memory,omitempty"`
	MemoryFree *uint64 `json:"memory_free,omitempty"`
}

func statusCommand(open opener) *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "per node: avail, drained, draining or reserved, with the drain reason or the reservation",
		Description: `Groups the nodes by status: avail (takes work), draining (drained, a job
still runs), drained (drained and empty), offline, reserved (set aside by
a reservation), each with its count, nodes, and the drain reason or the
reservation; when the hosts' memory is known, also the group's memory
and what no job holds of it (MEMORY, MEMFREE). Use it to see why a node
takes no jobs. Where jobs' memory limits are scheduled but not enforced
(no cgroup memory controller for the exec agent), a last line says so,
and why. Hosts that the ssh or command launcher could not use when it
last tried (unreachable, no fluxsched there, or another build of it)
are listed after the nodes, each with the launcher's reason.

EXAMPLES:
  # Every node's status
  $ fluxres status

  # The same, for a script
  $ fluxres status --json`,
		Flags: []cli.Flag{output.JSONFlag()},
		Action: exitcode.Action(func(c *cli.Context) error {
			v, err := load(c, open)
			if err != nil {
				return err
			}
			held, err := reservedNodes(c, open)
			if err != nil {
				return err
			}
			var nodes []nodeStatus
			mem := v.hasMemory()
			for _, n := range v.inv.Nodes() {
				s := nodeStatus{Rank: n.Rank, Hostname: n.Hostname, State: "avail"}
				if mem {
					held, _ := v.held.Node(n.Rank)
					free := n.Memory - min(n.Memory, held.Memory)
					s.Memory, s.MemoryFree = n.Memory, &free
				}
				if d, ok := v.reasons[n.Rank]; ok {
					s.State, s.Reason, s.Timestamp = "drained", d.Reason, d.Timestamp
					if v.draining.Contains(n.Rank) {
						s.State = "draining"
					}
				} else if id, ok := held[n.Hostname]; ok {
					s.State, s.Session = "reserved", id
				}
				nodes = append(nodes, s)
			}
			p, err := output.FromContext(c)
			if err != nil {
				return err
			}
			obj := map[string]any{"nodes": nodes}
			how, whyNot := memoryLimits(c)
			if m := memoryLimitsJSON(how, whyNot); m != nil {
				obj["memory_limits"] = m
			}
			unusable := unusableHosts(c)
			if len(unusable) > 0 {
				obj["hosts_unusable"] = unusable
			}
			return output.PrintObject(p, obj, func(w io.Writer) error {
				if err := printStatus(w, nodes, mem); err != nil {
					return err
				}
				printUnusableHosts(w, unusable)
				printMemoryLimits(w, whyNot)
				return nil
			})
		}),
	}
}

// reservedNodes maps each node in the session of a live non-shared
// reservation to its allocation id: a drain wins over it in status.
func reservedNodes(c *cli.Context, open opener) (map[string]string, error) {
	cl, err := open(c)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	rl, err := cl.Reservations(c.Context, false)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, n := range rl.Nodes {
		if n.Session != "" && n.Session != reservation.DefaultSession {
			out[n.Name] = n.Session
		}
	}
	return out, nil
}

// printStatus groups nodes by state and reason, as flux resource status;
// a reserved node's reason column names its reservation. With mem, each
// group shows its memory and what no job holds of it.
func printStatus(w io.Writer, nodes []nodeStatus, mem bool) error {
	type key struct{ state, reason string }
	groups := map[key][]nodeStatus{}
	var order []key
	for _, n := range nodes {
		k := key{n.State, n.Reason}
		if n.State == "reserved" {
			k.reason = n.Session
		}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], n)
	}
	sort.SliceStable(order, func(a, b int) bool { return order[a].state < order[b].state })
	memCols := func(total, free string) string {
		if !mem {
			return ""
		}
		return fmt.Sprintf(" %7s %7s", total, free)
	}
	fmt.Fprintf(w, "%10s %6s%s %-20s %s\n", "STATE", "NNODES", memCols("MEMORY", "MEMFREE"), "NODELIST", "REASON")
	for _, k := range order {
		var hosts []string
		var total, free uint64
		for _, n := range groups[k] {
			hosts = append(hosts, n.Hostname)
			total = addMemory(total, n.Memory)
			if n.MemoryFree != nil {
				free = addMemory(free, *n.MemoryFree)
			}
		}
		fmt.Fprintf(w, "%10s %6d%s %-20s %s\n", k.state, len(groups[k]), memCols(memoryText(total), memoryText(free)), hostlist.New(hosts...).String(), printable.String(k.reason))
	}
	return nil
}

// addMemory sums sizes without wrapping: a rank's memory is bounded, not
// the sum of a million of them.
func addMemory(a, b uint64) uint64 {
	if a+b < a {
		return ^uint64(0)
	}
	return a + b
}

func infoCommand(open opener) *cli.Command {
	return &cli.Command{
		Name:  "info",
		Usage: `one line: "4 Nodes, 256 Cores, 8 GPUs" (", 64G Memory" when known)`,
		Description: `Prints the size of the instance on one line, as flux resource info
does: its nodes, cores and GPUs, whatever their state, and its memory
(", 64G Memory") when the hosts' memory is known. Use list or status
for what is free.

EXAMPLES:
  # How big is this instance?
  $ fluxres info

  # Only the number of cores, for a script
  $ fluxres info | awk '{print $3}'`,
		Action: exitcode.Action(func(c *cli.Context) error {
			v, err := load(c, open)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(c.App.Writer, counts(v.inv, v.hasMemory()))
			return err
		}),
	}
}

// counts is "4 Nodes, 8 Cores, 2 GPUs", and ", 64G Memory" with mem.
func counts(r *rset.R, mem bool) string {
	n, cores, gpus := r.Counts()
	s := fmt.Sprintf("%s, %s, %s", plural(n, "Node"), plural(cores, "Core"), plural(gpus, "GPU"))
	if mem {
		s += ", " + memoryText(r.Memory()) + " Memory"
	}
	return s
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func drainCommand() *cli.Command {
	return &cli.Command{
		Name:      "drain",
		Usage:     "take nodes out of scheduling (running jobs are untouched)",
		ArgsUsage: "TARGETS [REASON...]",
		Description: `Drains nodes: they take no new job, and a job that needs them waits
(it is not refused); running jobs go on. TARGETS is a hostlist
(node[1-2]) or an idset of ranks (0-3); REASON, shown by status, is the
rest of the line. Use it before maintenance; undrain returns the nodes.

EXAMPLES:
  # Take rank 0 out of scheduling, and say why
  $ fluxres drain 0 disk replacement

  # Two nodes by name; change the reason of those already drained
  $ fluxres drain -f 'node[1-2]' firmware update`,
		Flags: []cli.Flag{&cli.BoolFlag{Name: "force", Aliases: []string{"f"}, Usage: "update the reason of nodes already drained", DisableDefaultText: true}},
		Action: exitcode.Action(func(c *cli.Context) error {
			if c.NArg() < 1 {
				return exitcode.UsageErrorf("drain needs TARGETS (a hostlist or rank idset)")
			}
			cl, err := instance.Open(c)
			if err != nil {
				return err
			}
			defer cl.Close()
			reason := strings.Join(c.Args().Slice()[1:], " ")
			return cl.Drain(c.Context, c.Args().First(), reason, c.Bool("force"))
		}),
	}
}

func undrainCommand() *cli.Command {
	return &cli.Command{
		Name:      "undrain",
		Usage:     "return drained nodes to scheduling",
		ArgsUsage: "TARGETS",
		Description: `Returns drained nodes to scheduling; waiting jobs that need them can
start. TARGETS is a hostlist (node[1-2]) or an idset of ranks (0-3).

EXAMPLES:
  # Rank 0 takes work again
  $ fluxres undrain 0

  # Two nodes by name
  $ fluxres undrain 'node[1-2]'`,
		Action: exitcode.Action(func(c *cli.Context) error {
			if c.NArg() != 1 {
				return exitcode.UsageErrorf("undrain needs TARGETS (a hostlist or rank idset)")
			}
			cl, err := instance.Open(c)
			if err != nil {
				return err
			}
			defer cl.Close()
			return cl.Undrain(c.Context, c.Args().First())
		}),
	}
}

// printR prints an R as JSON (--json) or as Flux's short form; the counts
// name its memory where the instance knows memory (mem) or r has some.
func printR(c *cli.Context, r *rset.R, mem bool) error {
	p, err := output.FromContext(c)
	if err != nil {
		return err
	}
	return output.PrintObject(p, json.RawMessage(mustJSON(r)), func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "%s: %s (%s)\n", r.Nodelist(), r.String(), counts(r, mem || r.Memory() > 0))
		return err
	})
}

func mustJSON(r *rset.R) []byte {
	b, err := r.MarshalJSON()
	if err != nil {
		return []byte("null")
	}
	return b
}

func findCommand(open opener) *cli.Command {
	return &cli.Command{
		Name:      "find",
		Usage:     "resources matching a constraint (RFC 16 Find), in --requires syntax",
		ArgsUsage: "EXPR",
		Description: `Prints the resources on the nodes that EXPR matches, whatever their
state, as one line (NODES: R summary (counts)) or as R with --json. EXPR
is the query syntax of fluxq submit --requires ('fluxres help
constraints'). Use it to check a constraint before submitting a job
with it.

EXAMPLES:
  # Nodes with a GPU
  $ fluxres find gpu

  # Nodes 1 and 2, but not rank 0
  $ fluxres find 'host:node[1-2] -rank:0'`,
		Flags: []cli.Flag{output.JSONFlag()},
		Action: exitcode.Action(func(c *cli.Context) error {
			if c.NArg() < 1 {
				return exitcode.UsageErrorf("find needs a constraint expression, e.g. 'gpu' or 'host:node[1-2]'")
			}
			con, err := constraint.ParseQuery(strings.Join(c.Args().Slice(), " "))
			if err != nil {
				return exitcode.UsageErrorf("find: %v", err)
			}
			v, err := load(c, open)
			if err != nil {
				return err
			}
			return printR(c, resource.NewPool(v.inv).Find(con), v.hasMemory())
		}),
	}
}

func allocatedCommand(open opener) *cli.Command {
	return &cli.Command{
		Name:      "allocated",
		Usage:     "R of one job, or of every job (RFC 16 Allocated)",
		ArgsUsage: "[JOBID]",
		Description: `Prints the resources jobs hold: of JOBID while it runs (nothing once it
has ended), or of every job together. One line (NODES: R summary
(counts)), or R v1 JSON with --json.

EXAMPLES:
  # What all running jobs hold
  $ fluxres allocated

  # The R of one job, as JSON
  $ fluxres allocated --json ƒNH`,
		Flags: []cli.Flag{output.JSONFlag()},
		Action: exitcode.Action(func(c *cli.Context) error {
			if c.NArg() > 1 {
				return exitcode.UsageErrorf("allocated takes at most one JOBID")
			}
			if c.NArg() == 1 {
				id, err := fluid.Parse(c.Args().First())
				if err != nil {
					return exitcode.UsageErrorf("%v", err)
				}
				cl, err := open(c)
				if err != nil {
					return err
				}
				defer cl.Close()
				info, err := cl.Job(c.Context, id)
				if err != nil {
					return err
				}
				r := &rset.R{}
				if len(info.R) > 0 && info.Summary.State&job.Running != 0 {
					if r, err = rset.Parse(info.R); err != nil {
						return err
					}
				}
				return printR(c, r, false)
			}
			v, err := load(c, open)
			if err != nil {
				return err
			}
			return printR(c, v.held, v.hasMemory())
		}),
	}
}

func availableCommand(open opener) *cli.Command {
	return &cli.Command{
		Name:  "available",
		Usage: "R of what no job holds and no drain blocks (RFC 16 Available)",
		Description: `Prints the resources a new job could be given now: not held by any
job and not on a drained node. One line (NODES: R summary (counts)), or
R v1 JSON with --json.

EXAMPLES:
  # What is free right now
  $ fluxres available

  # The same, as R JSON
  $ fluxres available --json`,
		Flags: []cli.Flag{output.JSONFlag()},
		Action: exitcode.Action(func(c *cli.Context) error {
			v, err := load(c, open)
			if err != nil {
				return err
			}
			return printR(c, v.free().Difference(v.inv.SelectRanks(v.drained)), v.hasMemory())
		}),
	}
}

func discoverCommand() *cli.Command {
	return &cli.Command{
		Name:  "discover",
		Usage: "what this machine has, as R and as a [[resource.config]] snippet",
		Description: `Reads what this machine has (hostname, cores from sysfs, GPUs, and
memory: /proc/meminfo's MemTotal less a reserve for the system) as
fluxsched does when its config has no [[resource.config]], and prints it
as a config snippet to start from, or with --json as the machine, its R
and the config entry. --memory-reserve is [resource] memory-reserve, for
a config that sets it. It needs no instance.

Inside a Slurm allocation (SLURM_JOB_NODELIST set), the snippet is for
the allocation's nodes, each taken to be like this one, reached by the
command launcher with srun (--this-machine: this machine alone): a
config for an instance across the allocation.

EXAMPLES:
  # What fluxsched would find here
  $ fluxres discover

  # Start a config from it
  $ fluxres discover > /etc/fluxq/resources.toml

  # Leave 8G of memory to the system, not the default
  $ fluxres discover --memory-reserve 8G

  # Inside a Slurm allocation: a config for its nodes
  $ salloc -N4 fluxres discover > alloc.toml`,
		Flags: []cli.Flag{
			output.JSONFlag(),
			&cli.BoolFlag{Name: "this-machine", Usage: "describe this machine alone, even inside a Slurm allocation", DisableDefaultText: true},
			&cli.StringFlag{Name: "memory-reserve", Usage: "leave `SIZE` of memory to the system, as [resource] memory-reserve does (0: none)", DefaultText: "5% of the memory, at least 512M, at most 4G"},
		},
		Action: exitcode.Action(func(c *cli.Context) error {
			var reserve resource.MemoryReserve
			if c.IsSet("memory-reserve") {
				n, err := jobspec.ParseMemoryOrZero(c.String("memory-reserve"))
				if err != nil {
					return exitcode.UsageErrorf("--memory-reserve: %v", err)
				}
				reserve = resource.MemoryReserve{Bytes: n, Set: true}
			}
			host, err := os.Hostname()
			if err != nil {
				return err
			}
			// FLUXQ_FSROOT reads another machine's /sys, /proc and /dev,
			// as HWLOC_FSROOT does for hwloc; NVML would describe this
			// machine instead, so it is left out then.
			root, gpus := "/", resource.GPULister(nvmlGPUs)
			if dir := os.Getenv("FLUXQ_FSROOT"); dir != "" {
				root, gpus = dir, nil
			}
			m, err := resource.DiscoverMachine(os.DirFS(root), host, gpus)
			if err != nil {
				// The error names discovery for fluxsched's sake; here the
				// command name already does.
				return errors.New(strings.TrimPrefix(err.Error(), "discover: "))
			}
			m.Reserve(reserve)
			p, err := output.FromContext(c)
			if err != nil {
				return err
			}
			doc := discovered{Machine: m, R: json.RawMessage(mustJSON(m.R())), Config: []resource.ConfigEntry{m.ConfigEntry()}}
			alloc, err := slurmAllocation(c)
			if err != nil {
				return err
			}
			if alloc == nil {
				return output.PrintObject(p, doc, m.WriteConfig)
			}
			doc.Config[0].Hosts, doc.Config[0].Launcher = alloc.nodes, "command"
			doc.Exec = alloc.exec()
			return output.PrintObject(p, doc, func(w io.Writer) error {
				fmt.Fprintf(w, "# The %d nodes of Slurm job %s (SLURM_JOB_NODELIST), each taken to be like %s:\n", alloc.count, alloc.job, host)
				if err := m.WriteConfigFor(w, alloc.nodes); err != nil {
					return err
				}
				return alloc.writeExec(w)
			})
		}),
	}
}

// discovered is `fluxres discover --json`: the machine, its R, and the
// [[resource.config]] entry that configures the same R.
type discovered struct {
	*resource.Machine
	R      json.RawMessage        `json:"R"`
	Config []resource.ConfigEntry `json:"config"`
	// Exec is the [exec] table, inside a Slurm allocation.
	Exec *allocExec `json:"exec,omitempty"`
}

// nvmlGPUs asks NVML; a machine without it (or without a loaded driver)
// is no error: discovery reads sysfs instead.
var nvmlGPUs = resource.GPUListerFunc(func() ([]resource.NVMLGPU, error) {
	devs, err := nvml.Devices()
	if errors.Is(err, nvml.ErrNotPresent) {
		return nil, resource.ErrNoGPULibrary
	}
	if err != nil {
		return nil, err
	}
	gpus := make([]resource.NVMLGPU, 0, len(devs))
	for _, d := range devs {
		gpus = append(gpus, resource.NVMLGPU{Name: d.Name, UUID: d.UUID, BusID: d.BusID, MemoryBytes: d.MemoryBytes})
	}
	return gpus, nil
})
