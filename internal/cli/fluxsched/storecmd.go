package fluxsched

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/cli/instance"
	"github.com/fluxq/fluxq/internal/daemon"
	"github.com/fluxq/fluxq/internal/store"
)

func storeCommand() *cli.Command {
	return &cli.Command{
		Name:      "store",
		Usage:     "check the store, or recover a damaged one",
		ArgsUsage: "COMMAND",
		Description: `Works with the instance's store, fluxq.db in the state directory, while
no fluxsched runs (both commands refuse, exit 69, while one holds it).
fluxsched checks its store at every start and refuses a damaged one in
one line; check says what is damaged, and recover restores what can be
restored. fluxsched keeps a backup copy, fluxq.db.backup, written at
[store] backup-interval and at clean stops (fluxq.toml(5)).

EXAMPLES:
  # Is the store sound?
  $ fluxsched store check

  # fluxsched refused a damaged store: restore it, then start again
  $ fluxsched store recover && fluxsched run`,
		Subcommands: []*cli.Command{{
			Name:  "check",
			Usage: "check every page and job record of the store; exit 1 if damaged",
			Description: `Reads every page of the store (its metas, its size against them, its
tree, its freelist) and every job record (it decodes; its summary
matches its eventlog), and the backup's pages, and prints what it
found: one line for the store and one for the backup, then one line
for each problem. Exits 0 when the store is sound (or there is none
yet), 1 when it is damaged, 69 while a fluxsched holds it.

EXAMPLES:
  # Before a restart, or after a crash of the machine
  $ fluxsched store check

  # The store of another state directory
  $ fluxsched --state-dir /var/lib/fluxq store check`,
			Action: exitcode.Action(storeCheck),
		}, {
			Name:  "recover",
			Usage: "restore a damaged store: every job that can be read, the rest from the backup",
			Description: `Puts together a new store from what can be read of the damaged one and,
for what it lacks, from the backup (fluxq.db.backup): every job whose
record reads, the queues, resources and reservations from whichever file
has them undamaged. A job taken from the backup that was still active
there is ended with a fatal exception of type restore, since what it did
after the backup is unknown: it is never started a second time. Prints
one line for each job that cannot be restored and for each damaged part,
then what it restored. The damaged file is kept beside the new one as
fluxq.db.damaged-TIME, never deleted. A sound store is left alone. With
no store at all, the backup is restored. Exits 0 when it restored the
store, 1 when it could not, 69 while a fluxsched holds the store.

EXAMPLES:
  # fluxsched said the store is damaged
  $ fluxsched store recover

  # See the damage first, then recover and start again
  $ fluxsched store check; fluxsched store recover && fluxsched run`,
			Action: exitcode.Action(storeRecover),
		}},
	}
}

func storeCheck(c *cli.Context) error {
	if c.Args().Present() {
		return exitcode.UsageErrorf("takes no arguments (got %q)", c.Args().First())
	}
	dir, err := instance.StateDir(c)
	if err != nil {
		return err
	}
	res, err := daemon.CheckStore(dir)
	if err != nil {
		return busy(err)
	}
	w := c.App.Writer
	if !res.Exists {
		fmt.Fprintf(w, "store %s: none yet (fluxsched makes it at its first start)\n", res.Path)
	} else {
		r := res.Report
		verdict := "sound"
		if !res.OK() {
			verdict = "damaged"
		}
		fmt.Fprintf(w, "store %s: %s (%d bytes, %d pages, %d jobs)\n", res.Path, verdict, r.Size, r.Pages, r.Jobs)
	}
	if res.Backup == nil {
		fmt.Fprintln(w, "backup: none")
	} else {
		b := res.Backup
		verdict := "sound"
		if !b.OK() {
			verdict = "damaged: " + b.Problems[0]
		}
		fmt.Fprintf(w, "backup of %s: %s (%d jobs)\n", res.BackupTime.UTC().Format(time.RFC3339), verdict, b.Jobs)
	}
	if res.Exists {
		for _, p := range res.Report.Problems {
			fmt.Fprintln(w, p)
		}
		if n := res.Report.Dropped; n > 0 {
			fmt.Fprintf(w, "and %d more problems\n", n)
		}
		for _, n := range res.Report.Notes {
			fmt.Fprintln(w, "note:", n)
		}
		for _, j := range res.Jobs {
			fmt.Fprintln(w, j)
		}
	}
	if !res.OK() {
		return errors.New("the store is damaged: stop using it and run 'fluxsched store recover'")
	}
	return nil
}

func storeRecover(c *cli.Context) error {
	if c.Args().Present() {
		return exitcode.UsageErrorf("takes no arguments (got %q)", c.Args().First())
	}
	dir, err := instance.StateDir(c)
	if err != nil {
		return err
	}
	res, err := daemon.RecoverStore(dir, uint32(os.Getuid()), time.Now())
	if err != nil {
		return busy(err)
	}
	w := c.App.Writer
	if res.Sound {
		fmt.Fprintf(w, "store %s: sound, nothing to recover\n", res.Path)
		return nil
	}
	for _, l := range res.Lines {
		fmt.Fprintln(w, l)
	}
	from := ""
	if res.FromBackup > 0 {
		from = fmt.Sprintf(" (%d from the backup of %s)", res.FromBackup, res.BackupTime.UTC().Format(time.RFC3339))
	}
	kept := ""
	if res.KeptAs != "" {
		kept = "; the damaged store is kept as " + res.KeptAs
	}
	fmt.Fprintf(w, "restored %d jobs%s into %s%s\n", res.Restored, from, res.Path, kept)
	return nil
}

// busy gives a store that a fluxsched holds its exit status, 69.
func busy(err error) error {
	if errors.Is(err, store.ErrBusy) {
		return exitcode.WithCode(exitcode.Unavailable, err)
	}
	return err
}
