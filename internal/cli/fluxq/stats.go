package fluxq

import (
	"io"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/cli/output"
	"github.com/fluxq/fluxq/internal/job"
)

// statsStates and statsResults are the rows of fluxq stats, in life order.
var (
	statsStates  = []job.State{job.Depend, job.Priority, job.Sched, job.Run, job.Cleanup, job.Inactive}
	statsResults = []job.Result{job.Completed, job.Failed, job.Canceled, job.Timeout}
)

func (e *env) statsCommand() *cli.Command {
	return &cli.Command{
		Name:  "stats",
		Usage: "count jobs per state and result",
		Description: `Counts the instance's jobs in each state (depend, priority, sched, run,
cleanup, inactive), the inactive ones per result (completed, failed,
canceled, timeout), and the total. Use it for a quick look at how busy
the instance is and how its jobs ended.

EXAMPLES:
  # Counts per state and result
  $ fluxq stats

  # The same, as JSON
  $ fluxq stats --json`,
		Flags: []cli.Flag{output.JSONFlag(), output.FormatFlag()},
		Action: action(func(c *cli.Context) error {
			p, err := printer(c)
			if err != nil {
				return err
			}
			st, err := e.stats(c)
			if err != nil {
				return err
			}
			return output.PrintObject(p, st, func(w io.Writer) error { return writeStats(w, st) })
		}),
	}
}

// writeStats prints one line per state, the results of inactive jobs
// indented under it, and the total.
func writeStats(w io.Writer, st *api.JobCounts) error {
	var rows []statsRow
	for _, s := range statsStates {
		rows = append(rows, statsRow{strings.ToLower(s.String()), st.States[s.String()]})
		if s == job.Inactive {
			for _, r := range statsResults {
				rows = append(rows, statsRow{"  " + strings.ToLower(r.String()), st.Results[r.String()]})
			}
		}
	}
	rows = append(rows, statsRow{"total", st.Total})
	t := output.Table[statsRow]{Columns: []output.Column[statsRow]{
		{Header: "STATE", Value: func(r statsRow) string { return r.name }},
		{Header: "COUNT", Align: output.Right, Value: func(r statsRow) string { return strconv.Itoa(r.n) }},
	}}
	return t.Render(w, rows, output.RenderOptions{})
}

type statsRow struct {
	name string
	n    int
}

// stats asks the instance for its job counts: fluxq stats and jobs
// --stats-only.
func (e *env) stats(c *cli.Context) (*api.JobCounts, error) {
	cl, err := e.connect(c)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	return cl.Stats(c.Context)
}
