package fluxres

import (
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/cli/output"
	"github.com/fluxq/fluxq/internal/hostlist"
	"github.com/fluxq/fluxq/internal/idset"
)

// Flag names of fluxres node add.
const (
	flagSpare = "spare"
	flagCores = "cores"
	flagGPUs  = "gpus"
)

func nodeCommand(open opener) *cli.Command {
	return &cli.Command{
		Name:      "node",
		Usage:     "the scheduler's pool of spare nodes, outside the instance until reserved",
		ArgsUsage: "COMMAND",
		Description: `Manages the scheduler's pool of spare nodes: nodes outside the instance
that a reservation can bring in (reservation create takes spare nodes
before idle nodes of the instance). list shows every node, from startup
or spare, with the session it is in and who holds it.

EXAMPLES:
  # Two spare nodes for reservations
  $ fluxres node add --spare 'spare[1-2]'

  # Every node and who holds it
  $ fluxres node list`,
		Subcommands: []*cli.Command{
			nodeAddCommand(open),
			nodeRemoveCommand(open),
			nodeListCommand(open),
		},
	}
}

func nodeAddCommand(open opener) *cli.Command {
	return &cli.Command{
		Name:      "add",
		Usage:     "add spare nodes to the scheduler's pool",
		ArgsUsage: " ",
		Description: `Adds the nodes of --spare to the scheduler's pool, outside the instance:
they run no job until a reservation brings them in. Each gets the cores
and GPUs of the instance's first node unless --cores and --gpus say
otherwise.

EXAMPLES:
  # Four spare nodes shaped like the instance's first node
  $ fluxres node add --spare 'spare[0-3]'

  # Two spare nodes with 16 cores and 2 GPUs each
  $ fluxres node add --spare 'big[1-2]' --cores 0-15 --gpus 0-1`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: flagSpare, Usage: "the spare nodes: a `HOSTLIST` (required)"},
			&cli.StringFlag{Name: flagCores, Usage: "each node's cores: an `IDSET`", DefaultText: "those of the instance's first node"},
			&cli.StringFlag{Name: flagGPUs, Usage: "each node's GPUs: an `IDSET`", DefaultText: "those of the instance's first node"},
			asSchedulerFlag(),
		},
		Action: exitcode.Action(func(c *cli.Context) error {
			if c.NArg() > 0 {
				return exitcode.UsageErrorf("add takes no arguments, got %q (spare nodes go in --spare HOSTS)", c.Args().First())
			}
			p, err := spareParams(c)
			if err != nil {
				return err
			}
			cl, err := open(c)
			if err != nil {
				return err
			}
			defer cl.Close()
			_, err = cl.AddSpares(c.Context, p)
			return err
		}),
	}
}

// spareParams reads node add's options; a malformed one is a usage error.
func spareParams(c *cli.Context) (api.SpareParams, error) {
	var p api.SpareParams
	if !c.IsSet(flagSpare) || c.String(flagSpare) == "" {
		return p, exitcode.UsageErrorf("add needs --spare HOSTS")
	}
	p.Hosts = c.String(flagSpare)
	if hl, err := hostlist.Parse(p.Hosts); err != nil || hl.IsEmpty() {
		return p, exitcode.UsageErrorf("--spare: invalid hostlist %q", p.Hosts)
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{flagCores, &p.Cores}, {flagGPUs, &p.GPUs}} {
		if !c.IsSet(f.name) {
			continue
		}
		s := c.String(f.name)
		if _, err := idset.Parse(s); err != nil {
			return p, exitcode.UsageErrorf("--%s: %v", f.name, err)
		}
		*f.dst = s
	}
	return p, nil
}

func nodeRemoveCommand(open opener) *cli.Command {
	return &cli.Command{
		Name:      "remove",
		Usage:     "take spare nodes out of the scheduler's pool",
		ArgsUsage: "HOSTS",
		Description: `Takes spare nodes, a hostlist, out of the scheduler's pool. A node a
reservation has brought into the instance is removed only while
fluxsched runs, so that its jobs can be stopped.

EXAMPLES:
  # Two spare nodes leave the pool
  $ fluxres node remove 'spare[2-3]'

  # Check what is left
  $ fluxres node remove spare1 && fluxres node list`,
		Flags: []cli.Flag{asSchedulerFlag()},
		Action: exitcode.Action(func(c *cli.Context) error {
			if c.NArg() != 1 {
				return exitcode.UsageErrorf("remove needs HOSTS (a hostlist)")
			}
			cl, err := open(c)
			if err != nil {
				return err
			}
			defer cl.Close()
			return cl.RemoveNodes(c.Context, c.Args().First())
		}),
	}
}

// orDash is s, or "-" when s is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func nodeListCommand(open opener) *cli.Command {
	list := output.List[api.NodeView]{
		Tables: map[string]output.Table[api.NodeView]{output.Default: {
			Description: "NAME RANK ORIGIN SESSION HOLDER",
			Columns: []output.Column[api.NodeView]{
				{Header: "NAME", Value: func(n api.NodeView) string { return n.Name }},
				{Header: "RANK", Align: output.Right, Value: func(n api.NodeView) string { return strconv.FormatUint(uint64(n.Rank), 10) }},
				{Header: "ORIGIN", Value: func(n api.NodeView) string { return string(n.Origin) }},
				{Header: "SESSION", Value: func(n api.NodeView) string { return orDash(n.Session) }},
				{Header: "HOLDER", Value: func(n api.NodeView) string { return orDash(n.Holder) }},
			},
		}},
		Doc:   func(ns []api.NodeView) any { return map[string]any{"nodes": ns} },
		Item:  func(n api.NodeView) any { return n },
		Shape: api.NodeView{},
	}
	return &cli.Command{
		Name:  "list",
		Usage: "every node: its rank, origin (startup or spare), session and holder",
		Description: `One line per node: NAME, RANK, ORIGIN (startup: from the config or
discovery; spare: added with node add), SESSION (default, the reservation
it is in, or - while outside the instance) and HOLDER (who holds it).

EXAMPLES:
  # Every node
  $ fluxres node list

  # Spare nodes only, by name
  $ fluxres node list -n -o '{{.name}} {{.origin}}' | grep spare`,
		Flags: append([]cli.Flag{asSchedulerFlag()}, output.ListFlags()...),
		Action: exitcode.Action(func(c *cli.Context) error {
			if c.NArg() > 0 {
				return exitcode.UsageErrorf("list takes no arguments, got %q", c.Args().First())
			}
			p, cl, err := open.printing(c)
			if err != nil {
				return err
			}
			defer cl.Close()
			rl, err := cl.Reservations(c.Context, false)
			if err != nil {
				return err
			}
			return output.PrintList(p, list, rl.Nodes)
		}),
	}
}
