package fluxq

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/fluid"
)

// The filters cancel and output share, named as flux jobs names them
// (--name, --queue; -q stays cancel's --quiet, as in flux cancel). Like
// flux cancel's --user and --states, they select the jobs themselves, so
// they do not mix with job IDs on the command line. (flagQueue is
// submit's, the same name.)
const flagName = "name"

func nameFlag() cli.Flag {
	return &cli.StringFlag{Name: flagName, Usage: "only jobs named `NAME`", DefaultText: "any name"}
}

func queueFlag() cli.Flag {
	return &cli.StringSliceFlag{Name: flagQueue, Usage: "only jobs of these `QUEUES`", DefaultText: "every queue"}
}

// selectors returns, in the order given, the flags among names that are
// set: the options that select jobs by themselves.
func selectors(c *cli.Context, names ...string) []string {
	var set []string
	for _, n := range names {
		if c.IsSet(n) {
			set = append(set, "--"+n)
		}
	}
	return set
}

// idsWithSelectors is the usage error for job IDs given with options that
// select the jobs themselves, naming those options.
func idsWithSelectors(set []string) error {
	if len(set) == 1 {
		return exitcode.UsageErrorf("do not give job IDs with %s (it selects the jobs itself)", set[0])
	}
	return exitcode.UsageErrorf("do not give job IDs with %s and %s (they select the jobs themselves)",
		strings.Join(set[:len(set)-1], ", "), set[len(set)-1])
}

// matchName keeps the jobs of list named --name, filtered here as fluxq
// jobs does (--queue goes in the query).
func matchName(c *cli.Context, list []api.JobSummary) []api.JobSummary {
	name := c.String(flagName)
	if name == "" {
		return list
	}
	out := list[:0:0]
	for _, s := range list {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// argIDs reads the command's arguments as job IDs; a malformed one is a
// usage error before anything is asked of the instance.
// typedID is how the user typed the argument that names job id, so that
// a message says what was typed ("12345: unknown job id", not the F58
// of 12345); the F58 form for an id no argument names.
func (e *env) typedID(c *cli.Context, id fluid.ID) string {
	for _, a := range c.Args().Slice() {
		if got, err := parseID(a); err == nil && got == id {
			return a
		}
	}
	return e.fmtID(id)
}

func argIDs(c *cli.Context) ([]fluid.ID, error) {
	ids := make([]fluid.ID, c.Args().Len())
	for i, a := range c.Args().Slice() {
		id, err := parseID(a)
		if err != nil {
			return nil, err
		}
		ids[i] = id
	}
	return ids, nil
}
