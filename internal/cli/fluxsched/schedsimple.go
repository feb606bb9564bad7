package fluxsched

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/resource"
	"github.com/fluxq/fluxq/internal/sched"
	"github.com/fluxq/fluxq/internal/wire"
)

// defaultLimit is sched-simple's default concurrency: "testing shows quite
// good throughput without concurrency being excessively large".
const defaultLimit = 8

// SchedSimpleCommand returns the hidden `fluxsched sched-simple` command:
// the built-in scheduler as a child process speaking RFC 27 as JSON lines
// on stdin and stdout, for `fluxsched run --sched-cmd 'fluxsched
// sched-simple'`. Diagnostics go to stderr.
func SchedSimpleCommand() *cli.Command {
	return &cli.Command{
		Name:      "sched-simple",
		Usage:     "run the simple FIFO scheduler on stdin/stdout (RFC 27 as JSON lines)",
		Hidden:    true,
		ArgsUsage: " ",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "policy", Value: "worst", Usage: "node order for placement: first, worst or best (fit)"},
			&cli.IntFlag{Name: "limit", Value: defaultLimit, Usage: "concurrent alloc requests to ask for; 0 is unlimited"},
			&cli.StringSliceFlag{Name: "queue-policy", Usage: "`QUEUE=POLICY`: a queue's own node order (repeatable)"},
			&cli.StringFlag{Name: "sched-policy", Value: "fcfs", Usage: "queue policy: fcfs, easy, hybrid or conservative"},
			&cli.IntFlag{Name: "queue-depth", Value: sched.DefaultQueueDepth, Usage: "pending jobs one pass considers per queue, 0 for all"},
			&cli.IntFlag{Name: "reservation-depth", Value: sched.DefaultReservationDepth, Usage: "hybrid: reservations per pass"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return exitcode.UsageErrorf("sched-simple: unexpected argument %q", c.Args().First())
			}
			policy, err := resource.ParsePolicy(c.String("policy"))
			if err != nil {
				return exitcode.UsageErrorf("--policy: %v", err)
			}
			limit := c.Int("limit")
			if limit < 0 {
				return exitcode.UsageErrorf("--limit: must be 0 (unlimited) or more, not %d", limit)
			}
			kind, err := sched.ParseKind(c.String("sched-policy"))
			if err != nil {
				return exitcode.UsageErrorf("--sched-policy: %v", err)
			}
			def := sched.QueuePolicy{Kind: kind, QueueDepth: c.Int("queue-depth"), ReservationDepth: c.Int("reservation-depth"), Match: policy}
			if err := def.Validate(); err != nil || def.ReservationDepth == 0 {
				return exitcode.UsageErrorf("bad depth: queue-depth %d, reservation-depth %d", def.QueueDepth, def.ReservationDepth)
			}
			qpolicies := map[string]sched.QueuePolicy{}
			for _, qp := range c.StringSlice("queue-policy") {
				q, name, ok := strings.Cut(qp, "=")
				if !ok || q == "" {
					return exitcode.UsageErrorf("--queue-policy: want QUEUE=POLICY, not %q", qp)
				}
				p, err := resource.ParsePolicy(name)
				if err != nil {
					return exitcode.UsageErrorf("--queue-policy: %v", err)
				}
				qp := def
				qp.Match = p
				qpolicies[q] = qp
			}
			errw := c.App.ErrWriter
			conn := wire.NewLineConn(c.App.Reader, c.App.Writer, nil)
			return sched.Run(conn, sched.Options{
				Default: def,
				Queues:  qpolicies,
				Limit:   limit,
				Logf: func(format string, args ...any) {
					if errw != nil {
						fmt.Fprintf(errw, "sched-simple: "+format+"\n", args...)
					}
				},
			})
		},
	}
}
