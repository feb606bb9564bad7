package fluxres

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/cli/fluxq"
	"github.com/fluxq/fluxq/internal/cli/instance"
	"github.com/fluxq/fluxq/internal/cli/output"
	"github.com/fluxq/fluxq/internal/cli/printable"
	"github.com/fluxq/fluxq/internal/client"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/fsd"
	"github.com/fluxq/fluxq/internal/hostlist"
	"github.com/fluxq/fluxq/internal/reservation"
)

// opener connects a command to the instance: instance.Open, or an
// instance in memory in tests.
type opener func(c *cli.Context) (client.Client, error)

// printing is how a command that prints what the instance says begins:
// its printer, then the instance (the caller closes the client).
func (open opener) printing(c *cli.Context) (*output.Printer, client.Client, error) {
	p, err := output.FromContext(c)
	if err != nil {
		return nil, nil, err
	}
	cl, err := open(c)
	if err != nil {
		return nil, nil, err
	}
	return p, cl, nil
}

// Flag names of the reservation commands, where they are read more than
// once.
const (
	flagNodes    = "nodes"
	flagNodelist = "nodelist"
	flagTime     = "time"
	flagWarn     = "warn"
	flagReqID    = "req-id"
	flagShare    = "share"
	flagTarget   = "target"
	flagInherit  = "inherit"
	flagAll      = "all"
	flagFollow   = "follow"
)

func asSchedulerFlag() cli.Flag {
	return &cli.BoolFlag{Name: instance.FlagAsScheduler, Usage: "act as the scheduler (instance owner only)", DisableDefaultText: true}
}

// shapeFlags are the options of create and extend that say how many nodes,
// for how long and what happens at the owner's end.
func shapeFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: flagNodes, Aliases: []string{"N"}, Usage: "`K` nodes (spare nodes first, then idle default-session ones)", DefaultText: "0: give -N or --nodelist"},
		&cli.StringFlag{Name: flagNodelist, Usage: "these nodes: a `HOSTLIST` (node[1-2])", DefaultText: "as -N chooses"},
		&cli.StringFlag{Name: flagWarn, Usage: "warn the requester `SECONDS` before --time runs out (see events)", DefaultText: "no warning"},
		&cli.StringFlag{Name: flagReqID, Usage: "the request's `ID`, for extend and release to name it by", DefaultText: "none"},
		&cli.StringFlag{Name: flagInherit, Usage: "what becomes of the nodes when the owner ends, `HOW`: none (they return to the scheduler), default (they join the default session), child, child-default (the same, once the owner's last child has ended too)", DefaultText: "default"},
		output.JSONFlag(),
		asSchedulerFlag(),
	}
}

func reservationCommand(open opener) *cli.Command {
	return &cli.Command{
		Name:      "reservation",
		Usage:     "set nodes aside for a job and its children, and direct jobs onto them",
		ArgsUsage: "COMMAND",
		Description: `Sets nodes aside in a session of their own, owned by a job (or by you,
as a tool) and its children, and directs jobs onto them with target or
fluxq submit --target. Requests and their rejections follow the
node-reservation specification: a rejection exits with its PMIx status
(23 no permission, 27 bad parameter, 29 out of resources, 46 not found,
47 not supported) and changes nothing.

EXAMPLES:
  # Reserve two nodes for an hour; prints the allocation ID, e.g. r1
  $ fluxres reservation create -N 2 --time 1h

  # Run a job on them, then give them back
  $ fluxres reservation target r1 -n 4 ./sim
  $ fluxres reservation release r1`,
		Subcommands: []*cli.Command{
			createCommand(open),
			extendCommand(open),
			releaseCommand(open),
			reclaimCommand(open),
			targetCommand(open),
			resListCommand(open),
			showCommand(open),
			eventsCommand(open),
		},
	}
}

func createCommand(open opener) *cli.Command {
	return &cli.Command{
		Name:      "create",
		Usage:     "reserve nodes; print the allocation id (and the request id)",
		ArgsUsage: " ",
		Description: `Reserves -N nodes (spare nodes first, then idle nodes of the default
session) or those of --nodelist, and prints the allocation ID (r1, r2,
...), followed by the request ID when --req-id was given. The owner is
the calling job, or the job of --target; from outside any job, you as a
tool. Too few free nodes exit 29 and change nothing. A guest targets only
its own jobs, within the [access] guest-reserved-nodes and
guest-reservation-time limits of fluxq.toml(5) (else exit 23).

EXAMPLES:
  # Two nodes for an hour, named by a request ID of your choice
  $ fluxres reservation create -N 2 --time 1h --req-id sweep

  # Node node3 for job ƒNH and its children, warned 5 minutes before the end
  $ fluxres reservation create --nodelist node3 --target ƒNH --time 2h --warn 300

  # One node that stays in the default session, shared
  $ fluxres reservation create -N 1 --share --json`,
		Flags: append(shapeFlags(),
			&cli.StringFlag{Name: flagTime, Usage: "reclaim the nodes after `FSD` (e.g. 30m, 2h, inf; a bare number means seconds)", DefaultText: "never"},
			&cli.BoolFlag{Name: flagShare, Usage: "leave the nodes in the default session, shared", DisableDefaultText: true},
			&cli.StringFlag{Name: flagTarget, Usage: "reserve for job `JOBID` (PMIX_ALLOC_TARGET)", DefaultText: "the caller"},
		),
		Action: exitcode.Action(func(c *cli.Context) error {
			if c.NArg() > 0 {
				return exitcode.UsageErrorf("create takes no arguments, got %q", c.Args().First())
			}
			p, err := reserveParams(c, "create")
			if err != nil {
				return err
			}
			return reserve(c, open, p, func(w io.Writer, v *api.ReservationView) {
				if v.ReqID != "" {
					fmt.Fprintf(w, "%s %s\n", v.ID, printable.String(v.ReqID))
					return
				}
				fmt.Fprintln(w, v.ID)
			})
		}),
	}
}

func extendCommand(open opener) *cli.Command {
	return &cli.Command{
		Name:      "extend",
		Usage:     "add nodes or time to a reservation; print its allocation id",
		ArgsUsage: "[ALLOC_ID]",
		Description: `Adds -N or --nodelist nodes, or --time, to the reservation ALLOC_ID
(or the one created with --req-id), and prints its allocation ID. Only
an owner may extend it; the extender becomes the requester, who gets
the timeout warnings. Without ALLOC_ID or --req-id it exits 27.

EXAMPLES:
  # One more node for r1
  $ fluxres reservation extend r1 -N 1

  # Thirty more minutes for the reservation requested as sweep
  $ fluxres reservation extend --req-id sweep --time +30m`,
		Flags: append(shapeFlags(),
			&cli.StringFlag{Name: flagTime, Usage: "add `+FSD` to its time, e.g. +30m, +2h (the + is optional)", DefaultText: "no more time"},
		),
		Action: exitcode.Action(func(c *cli.Context) error {
			p, err := reserveParams(c, "extend")
			if err != nil {
				return err
			}
			return reserve(c, open, p, func(w io.Writer, v *api.ReservationView) { fmt.Fprintln(w, v.ID) })
		}),
	}
}

func releaseCommand(open opener) *cli.Command {
	return &cli.Command{
		Name:      "release",
		Usage:     "give a reservation's nodes back",
		ArgsUsage: "ALLOC_ID | --req-id ID",
		Description: `Ends a reservation and returns its nodes: spare nodes leave the
instance (a job still on one ends with a node-departed exception), and
startup nodes go back to the default session. Only an owner may release
it; anyone else gets exit 23.

EXAMPLES:
  # Give r1 back
  $ fluxres reservation release r1

  # By the request ID given at create
  $ fluxres reservation release --req-id sweep`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: flagReqID, Usage: "the reservation's request `ID`", DefaultText: "none: name ALLOC_ID"},
			asSchedulerFlag(),
		},
		Action: exitcode.Action(func(c *cli.Context) error {
			p, err := reserveParams(c, "release")
			if err != nil {
				return err
			}
			return reserve(c, open, p, nil)
		}),
	}
}

func reclaimCommand(open opener) *cli.Command {
	return &cli.Command{
		Name:      "reclaim",
		Usage:     "take a reservation's nodes back (scheduler only)",
		ArgsUsage: "ALLOC_ID",
		Description: `Ends a reservation on the scheduler's authority, as --time expiry does:
its nodes are returned. Only the scheduler may: the instance owner with
--as-scheduler. Anyone else gets exit 23.

EXAMPLES:
  # Take r1's nodes back
  $ fluxres reservation reclaim --as-scheduler r1

  # See what was reclaimed
  $ fluxres reservation show r1`,
		Flags: []cli.Flag{asSchedulerFlag()},
		Action: exitcode.Action(func(c *cli.Context) error {
			p, err := reserveParams(c, "reclaim")
			if err != nil {
				return err
			}
			return reserve(c, open, p, nil)
		}),
	}
}

// reserveParams reads a create, extend, release or reclaim command line.
// Only what cannot be read at all is a usage error here; whether the
// request makes sense is for the instance to say, with its PMIx status,
// in the specification's order (docs/reservations.md decision 7).
func reserveParams(c *cli.Context, op string) (api.ReserveParams, error) {
	p := api.ReserveParams{Op: op}
	switch c.NArg() {
	case 0:
	case 1:
		p.ID = c.Args().First()
	default:
		return p, exitcode.UsageErrorf("%s takes one allocation id, got %s", op, strings.Join(c.Args().Slice(), " "))
	}
	p.ReqID = c.String(flagReqID)
	if c.IsSet(flagNodes) {
		if p.Count = c.Int(flagNodes); p.Count < 1 {
			return p, exitcode.UsageErrorf("-N: node count must be an integer >= 1")
		}
	}
	p.Nodelist = c.String(flagNodelist)
	if c.IsSet(flagTime) {
		s := c.String(flagTime)
		if op == "extend" {
			// An extension always adds: "+30m" and "30m" are the same.
			s = strings.TrimPrefix(s, "+")
		}
		sec, err := fsd.ParseBounded(s)
		if err != nil {
			return p, exitcode.UsageErrorf("--time: %v", err)
		}
		if math.IsInf(sec, 1) {
			p.TimeInf = true
		} else {
			p.Time = sec
		}
	}
	if c.IsSet(flagWarn) {
		s := c.String(flagWarn)
		n, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			return p, exitcode.UsageErrorf("--warn: %q is not a number of seconds", s)
		}
		w := uint32(n)
		p.Warn = &w
	}
	if c.IsSet(flagShare) {
		b := c.Bool(flagShare)
		p.Share = &b
	}
	p.Target = c.String(flagTarget)
	if c.IsSet(flagInherit) {
		s := c.String(flagInherit)
		if _, err := reservation.ParseInheritance(s); err != nil {
			return p, exitcode.UsageErrorf("--inherit: %v", err)
		}
		p.Inherit = s
	}
	return p, nil
}

// reserve sends one request and prints its answer: the view with --json,
// else what human prints (nothing when nil).
func reserve(c *cli.Context, open opener, p api.ReserveParams, human func(io.Writer, *api.ReservationView)) error {
	pr, cl, err := open.printing(c)
	if err != nil {
		return err
	}
	defer cl.Close()
	v, err := cl.Reserve(c.Context, p)
	if err != nil {
		return err
	}
	if pr.JSON {
		return output.WriteJSON(pr.Out, v)
	}
	if human == nil || v == nil {
		return nil
	}
	bw := bufio.NewWriter(pr.Out)
	human(bw, v)
	return bw.Flush()
}

// targetCommand is `fluxq submit --target` by another name (docs/cli.md: one
// code path). Main moves the ALLOC_ID list into --target (moveTargets),
// so that everything from the COMMAND on stays the job's.
func targetCommand(open opener) *cli.Command {
	cmd := fluxq.SubmitCommand(open)
	cmd.Name = "target"
	cmd.Usage = "submit a job onto reservations' nodes; print its ID (fluxq submit --target)"
	cmd.ArgsUsage = "ALLOC_ID[,ALLOC_ID|default] [submit options] [--] COMMAND [ARGS...]"
	cmd.Description = `Submits a job that runs only on the nodes of the reservations named,
and prints its ID: the same as fluxq submit --target ALLOC_ID[,...];
default names the default session. The job joins the owners of the
reservations it targets. Options go before COMMAND; everything from
COMMAND on (or after --) is the job's. A rejection exits with its PMIx
status, as create does.

EXAMPLES:
  # Four tasks on r1's nodes
  $ fluxres reservation target r1 -n 4 ./sim

  # On the nodes of r1 and of the default session together
  $ fluxres reservation target r1,default -t 10m ./sim`
	submit := cmd.Action
	cmd.Action = func(c *cli.Context) error {
		if !c.IsSet(flagTarget) {
			return exitcode.Prefix(exitcode.CommandPath(c), exitcode.UsageErrorf("target needs ALLOC_ID[,ALLOC_ID|default] and a COMMAND"))
		}
		return submit(c)
	}
	return cmd
}

// fmtID prints a job id as every command does.
func fmtID(id fluid.ID) string { return output.JobID(id, os.Getenv) }

// fmtNS prints a namespace: a job id as fmtID does, tool:USER, or "-"
// for none.
func fmtNS(ns reservation.Namespace) string {
	switch {
	case ns.IsJob():
		return fmtID(ns.Job)
	case ns.IsZero():
		return "-"
	}
	return ns.String()
}

func fmtNSList(list []reservation.Namespace) string {
	if len(list) == 0 {
		return "-"
	}
	out := make([]string, len(list))
	for i, ns := range list {
		out[i] = fmtNS(ns)
	}
	return strings.Join(out, ",")
}

func fmtIDs(ids []fluid.ID) string {
	if len(ids) == 0 {
		return "-"
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = fmtID(id)
	}
	return strings.Join(out, ",")
}

// isoTime prints a timestamp as ISO 8601 in local time, to the
// microsecond.
func isoTime(ts float64) string {
	sec := math.Floor(ts)
	return time.Unix(int64(sec), int64((ts-sec)*1e9)).Format("2006-01-02T15:04:05.000000Z07:00")
}

// expires is the EXPIRES column: the end reason of an ended reservation,
// "-" for one without --time, else the time left.
func expires(v api.ReservationView, now time.Time) string {
	switch {
	case !v.Live():
		if v.EndReason == "" {
			return "ended"
		}
		return v.EndReason
	case v.Expires == 0:
		return "-"
	}
	left := v.Expires - float64(now.UnixNano())/1e9
	return fsd.Format(max(left, 0))
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func resListCommand(open opener) *cli.Command {
	now := time.Now()
	list := output.List[api.ReservationView]{
		Tables: map[string]output.Table[api.ReservationView]{output.Default: {
			Description: "ALLOC_ID STATE OWNER NNODES NODELIST SHARE INHERIT EXPIRES",
			Columns: []output.Column[api.ReservationView]{
				{Header: "ALLOC_ID", Value: func(v api.ReservationView) string { return v.ID }},
				{Header: "STATE", Value: func(v api.ReservationView) string { return v.State }},
				{Header: "OWNER", Value: func(v api.ReservationView) string { return fmtNS(v.Owner) }},
				{Header: "NNODES", Align: output.Right, Value: func(v api.ReservationView) string { return strconv.Itoa(len(v.Nodes)) }},
				{Header: "NODELIST", Value: func(v api.ReservationView) string { return nodelist(v.Nodes) }},
				{Header: "SHARE", Value: func(v api.ReservationView) string { return yesNo(v.Share) }},
				{Header: "INHERIT", Value: func(v api.ReservationView) string { return v.Inheritance.String() }},
				{Header: "EXPIRES", Value: func(v api.ReservationView) string { return expires(v, now) }},
			},
		}},
		Item:   func(v api.ReservationView) any { return v },
		Fields: resFields(func() time.Time { return now }),
		Shape:  api.ReservationView{},
	}
	return &cli.Command{
		Name:  "list",
		Usage: "live reservations (-a: ended ones too)",
		Description: `One line per reservation: ALLOC_ID, STATE, OWNER, NNODES, NODELIST,
SHARE, INHERIT and when it EXPIRES. Live ones only, unless -a. --json
also lists every node with its session. -o '{alloc_id} {nodelist}' picks
fields in Flux's syntax; -o help lists them all, each column of the table
among them, with what it means.

EXAMPLES:
  # Live reservations
  $ fluxres reservation list

  # All of them, ended ones too, as JSON
  $ fluxres reservation list -a --json

  # Who owns which nodes, and the jobs spawned onto them
  $ fluxres reservation list -o '{alloc_id} {owner} {nodelist} {children}'`,
		Flags: append([]cli.Flag{
			&cli.BoolFlag{Name: flagAll, Aliases: []string{"a"}, Usage: "include ended reservations", DisableDefaultText: true},
			asSchedulerFlag(),
		}, output.ListFlags()...),
		Action: exitcode.Action(func(c *cli.Context) error {
			if c.NArg() > 0 {
				return exitcode.UsageErrorf("list takes no arguments, got %q", c.Args().First())
			}
			p, cl, err := open.printing(c)
			if err != nil {
				return err
			}
			defer cl.Close()
			rl, err := cl.Reservations(c.Context, c.Bool(flagAll))
			if err != nil {
				return err
			}
			now = time.Now()
			l := list
			l.Doc = func([]api.ReservationView) any { return rl }
			return output.PrintList(p, l, rl.Reservations)
		}),
	}
}

// nodelist compresses names into a hostlist; "-" for none.
func nodelist(names []string) string {
	if len(names) == 0 {
		return "-"
	}
	return hostlist.New(names...).String()
}

func showCommand(open opener) *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "everything about one reservation: owners, nodes, children, history",
		ArgsUsage: "ALLOC_ID",
		Description: `Shows one reservation: owner, owner set, requester, inheritance, each
node and its origin, the live derived children, and its history
(created, extended, warned, ended and why). Use it to find out why a
reservation ended or why a job may not use it.

EXAMPLES:
  # Everything about r1
  $ fluxres reservation show r1

  # Its owners, for a script
  $ fluxres reservation show r1 --json`,
		Flags: []cli.Flag{output.JSONFlag(), asSchedulerFlag()},
		Action: exitcode.Action(func(c *cli.Context) error {
			if c.NArg() != 1 {
				return exitcode.UsageErrorf("show needs one ALLOC_ID")
			}
			id := c.Args().First()
			p, cl, err := open.printing(c)
			if err != nil {
				return err
			}
			defer cl.Close()
			rl, err := cl.Reservations(c.Context, true)
			if err != nil {
				return err
			}
			i := slices.IndexFunc(rl.Reservations, func(v api.ReservationView) bool { return v.ID == id })
			if i < 0 {
				return &reservation.Error{Status: reservation.NotFound, Msg: fmt.Sprintf("allocation %q does not exist", id)}
			}
			v := rl.Reservations[i]
			return output.PrintObject(p, v, func(w io.Writer) error { return printShow(w, v, time.Now()) })
		}),
	}
}

// printShow explains one reservation, a "key: value" line each, then its
// nodes and its history (docs/reservations.md "What a user sees").
func printShow(w io.Writer, v api.ReservationView, now time.Time) error {
	bw := bufio.NewWriter(w)
	// Values such as req_id are users' text: cleaned as every text output.
	line := func(k, val string) { fmt.Fprintf(bw, "%s: %s\n", k, printable.String(val)) }
	line("alloc_id", v.ID)
	if v.ReqID != "" {
		line("req_id", v.ReqID)
	}
	line("state", v.State)
	line("owner", fmtNS(v.Owner))
	line("owners", fmtNSList(v.Owners))
	line("requester", fmt.Sprintf("%s (%s)", fmtNS(v.Requester), v.RequesterClass))
	line("share", yesNo(v.Share))
	line("inheritance", v.Inheritance.String())
	line("expires", expires(v, now))
	warn := "-"
	if v.Warn > 0 {
		warn = fmt.Sprintf("%ds", v.Warn)
	}
	line("warn", warn)
	fmt.Fprintln(bw, "nodes:")
	for _, n := range v.Nodes {
		origin := v.Origins[n]
		if origin == "" {
			origin = "?"
		}
		fmt.Fprintf(bw, "  %s (%s)\n", printable.String(n), origin)
	}
	line("live children", fmtIDs(v.LiveChildren))
	fmt.Fprintln(bw, "history:")
	for _, ev := range v.History {
		fmt.Fprintf(bw, "  %s %s", isoTime(ev.Time), printable.String(ev.Name))
		if err := writeDetail(bw, ev.Detail); err != nil {
			return err
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// writeDetail writes " key=value" for each key in order: strings as they
// are, anything else as JSON.
func writeDetail(w *bufio.Writer, detail map[string]any) error {
	keys := make([]string, 0, len(detail))
	for k := range detail {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		w.WriteByte(' ')
		w.WriteString(printable.String(k))
		w.WriteByte('=')
		switch x := detail[k].(type) {
		case string:
			w.WriteString(printable.String(x))
		case []any:
			w.WriteString(printable.String(joinAny(x)))
		default:
			b, err := json.Marshal(x)
			if err != nil {
				return err
			}
			w.WriteString(printable.String(string(b)))
		}
	}
	return nil
}

// joinAny prints a list of strings (the nodes an event added) as a
// comma list, anything else as JSON.
func joinAny(list []any) string {
	out := make([]string, len(list))
	for i, x := range list {
		s, ok := x.(string)
		if !ok {
			b, _ := json.Marshal(list)
			return string(b)
		}
		out[i] = s
	}
	return strings.Join(out, ",")
}

func eventsCommand(open opener) *cli.Command {
	return &cli.Command{
		Name:  "events",
		Usage: "the timeout warnings directed to the caller (a tool)",
		Description: `Prints the timeout warnings (create --warn) of reservations you
requested as a tool, one line each: TIME alloc-timeout-warning
alloc_id=ID [req_id=ID] time_remaining=SECONDS. --json: one array, or
with --follow one object per line. A job gets its warnings in its own
eventlog instead.

EXAMPLES:
  # Warnings so far
  $ fluxres reservation events

  # Wait for warnings and extend when one comes
  $ fluxres reservation events --follow --json`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: flagFollow, Aliases: []string{"F"}, Usage: "keep printing warnings as they come", DisableDefaultText: true},
			output.JSONFlag(),
			asSchedulerFlag(),
		},
		Action: exitcode.Action(func(c *cli.Context) error {
			if c.NArg() > 0 {
				return exitcode.UsageErrorf("events takes no arguments, got %q", c.Args().First())
			}
			p, cl, err := open.printing(c)
			if err != nil {
				return err
			}
			defer cl.Close()
			follow := c.Bool(flagFollow)
			if p.JSON && !follow {
				evs := []api.ToolEvent{}
				if err := cl.ToolEvents(c.Context, false, func(e api.ToolEvent) error { evs = append(evs, e); return nil }); err != nil {
					return err
				}
				return output.WriteJSON(p.Out, evs)
			}
			bw := bufio.NewWriter(p.Out)
			err = cl.ToolEvents(c.Context, follow, func(e api.ToolEvent) error {
				if p.JSON {
					b, err := json.Marshal(e)
					if err != nil {
						return err
					}
					bw.Write(b)
					bw.WriteByte('\n')
				} else {
					writeWarning(bw, e.Warning)
				}
				if follow {
					return bw.Flush()
				}
				return nil
			})
			if ferr := bw.Flush(); err == nil {
				err = ferr
			}
			return err
		}),
	}
}

// writeWarning writes one warning as an eventlog line.
func writeWarning(w *bufio.Writer, e reservation.Warning) {
	fmt.Fprintf(w, "%s alloc-timeout-warning alloc_id=%s", isoTime(e.Time), e.AllocID)
	if e.ReqID != "" {
		fmt.Fprintf(w, " req_id=%s", printable.String(e.ReqID))
	}
	fmt.Fprintf(w, " time_remaining=%d\n", e.TimeRemaining)
}
