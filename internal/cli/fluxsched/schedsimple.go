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
			qpolicies := map[string]resource.Policy{}
			for _, qp := range c.StringSlice("queue-policy") {
				q, name, ok := strings.Cut(qp, "=")
				if !ok || q == "" {
					return exitcode.UsageErrorf("--queue-policy: want QUEUE=POLICY, not %q", qp)
				}
				p, err := resource.ParsePolicy(name)
				if err != nil {
					return exitcode.UsageErrorf("--queue-policy: %v", err)
				}
				qpolicies[q] = p
			}
			errw := c.App.ErrWriter
			conn := wire.NewLineConn(c.App.Reader, c.App.Writer, nil)
			return sched.Run(conn, sched.Options{
				Policy:        policy,
				QueuePolicies: qpolicies,
				Limit:         limit,
				Logf: func(format string, args ...any) {
					if errw != nil {
						fmt.Fprintf(errw, "sched-simple: "+format+"\n", args...)
					}
				},
			})
		},
	}
}
