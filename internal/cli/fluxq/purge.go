package fluxq

import (
	"fmt"
	"math"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/client"
	"github.com/fluxq/fluxq/internal/fsd"
)

// Messages of fluxq purge, flux job purge's words.
const (
	msgPurged     = "purged %d inactive jobs, %d remaining"
	msgPurgeForce = "use --force to purge %d of %d inactive jobs"
)

func (e *env) purgeCommand() *cli.Command {
	return &cli.Command{
		Name:      "purge",
		Usage:     "remove inactive jobs from the instance",
		ArgsUsage: "[ID...]",
		Description: `Removes inactive jobs, as flux job purge does: their records (eventlog,
jobspec, R, summary) and their job folders with the output kept there.
It cannot be undone, so without --force nothing is removed and the
command only says how many jobs would be. The oldest go first, by the
time each became inactive: those inactive for longer than --age-limit,
and those beyond the --num-limit most recent. Or give the IDs of the
inactive jobs to purge. Active jobs are never purged. A guest purges
only its own jobs, and its limits count its own jobs alone. fluxsched
also purges as it runs, with [job-manager] inactive-age-limit and
inactive-num-limit (fluxq.toml(5)).

EXAMPLES:
  # How many jobs have been inactive for over a week?
  $ fluxq purge --age-limit 7d

  # Purge them
  $ fluxq purge --age-limit 7d --force

  # Keep only the 1000 most recent inactive jobs
  $ fluxq purge --num-limit 1000 -f

  # Purge two jobs
  $ fluxq purge -f ƒNH ƒNJ`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "age-limit", Usage: "purge jobs that became inactive more than `FSD` ago", DefaultText: "none"},
			&cli.StringFlag{Name: "num-limit", Usage: "purge the oldest inactive jobs until `COUNT` are left", DefaultText: "none"},
			&cli.BoolFlag{Name: "force", Aliases: []string{"f"}, Usage: "perform the irreversible purge", DisableDefaultText: true},
			&cli.IntFlag{Name: "batch", Usage: "at most `COUNT` jobs per request (1-100)", Value: api.PurgeBatchDefault},
		},
		Action: action(e.purge),
	}
}

func (e *env) purge(c *cli.Context) error {
	p := api.PurgeParams{AgeLimit: -1, NumLimit: -1, Force: c.Bool("force"), Batch: c.Int("batch")}
	if p.Batch < 1 || p.Batch > api.PurgeBatchMax {
		return exitcode.UsageErrorf("--batch must be >= 1 and <= %d", api.PurgeBatchMax)
	}
	if c.IsSet("age-limit") {
		age, err := fsd.Parse(c.String("age-limit"))
		if err != nil {
			return exitcode.UsageErrorf("--age-limit: %v", err)
		}
		if math.IsInf(age, 0) {
			return exitcode.UsageErrorf("--age-limit: %q is not a finite duration", c.String("age-limit"))
		}
		p.AgeLimit = age
	}
	if c.IsSet("num-limit") {
		n, err := strconv.Atoi(c.String("num-limit"))
		if err != nil || n < 0 {
			return exitcode.UsageErrorf("--num-limit: %q is not a count of jobs (0 or more)", c.String("num-limit"))
		}
		p.NumLimit = n
	}
	if c.Args().Len() > 0 && (c.IsSet("age-limit") || c.IsSet("num-limit")) {
		return exitcode.UsageErrorf("give IDs or --age-limit/--num-limit, not both")
	}
	ids, err := argIDs(c)
	if err != nil {
		return err
	}
	cl, err := e.connect(c)
	if err != nil {
		return err
	}
	defer cl.Close()
	total, remaining, failed := 0, 0, 0
	if len(ids) > 0 {
		for start := 0; start < len(ids); start += p.Batch {
			p.IDs = ids[start:min(start+p.Batch, len(ids))]
			r, err := client.Call(c.Context, cl, api.Purge, p, nil)
			if err != nil {
				return err
			}
			for i, perr := range r.Errors {
				if perr != nil {
					failed++
					notef(c, "%s: %v", e.typedID(c, p.IDs[i]), perr)
				}
			}
			total += r.Count
			remaining = r.Inactive
		}
	} else {
		// As flux job purge: batch after batch while each is full.
		for {
			r, err := client.Call(c.Context, cl, api.Purge, p, nil)
			if err != nil {
				return err
			}
			total += r.Count
			remaining = r.Inactive
			if !p.Force || r.Count < p.Batch {
				break
			}
		}
	}
	if p.Force {
		fmt.Fprintf(stdout(c), msgPurged+"\n", total, remaining)
	} else {
		fmt.Fprintf(stdout(c), msgPurgeForce+"\n", total, remaining)
	}
	if failed > 0 {
		return exitcode.Silent(exitcode.Failed)
	}
	return nil
}
