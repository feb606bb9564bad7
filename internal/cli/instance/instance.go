// Package instance holds what every fluxq, fluxsched and fluxres command
// shares: the global flags (docs/cli.md "Common to every binary") and opening
// the instance they name.
package instance

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/client"
	"github.com/fluxq/fluxq/internal/fsd"
)

// Flag names shared by every binary.
const (
	FlagStateDir = "state-dir"
	FlagColor    = "color"
	FlagTimeout  = "timeout"
)

// Flags are the global flags of every binary.
func Flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: FlagStateDir, Usage: "the instance's state `DIR`", EnvVars: []string{"FLUXQ_STATE_DIR"}, DefaultText: "$XDG_STATE_HOME/fluxq, else ~/.local/state/fluxq"},
		&cli.StringFlag{Name: FlagColor, Value: "auto", Usage: "colour output: auto, always or never"},
		&cli.StringFlag{Name: FlagTimeout, Value: "10s", Usage: "how long to wait for a busy store, or for fluxsched to answer (FSD)"},
	}
}

// StateDir is the instance directory: --state-dir / $FLUXQ_STATE_DIR, else
// $XDG_STATE_HOME/fluxq, else ~/.local/state/fluxq (docs/architecture.md).
func StateDir(c *cli.Context) (string, error) {
	if d := c.String(FlagStateDir); d != "" {
		return filepath.Abs(d)
	}
	if x := os.Getenv("XDG_STATE_HOME"); x != "" {
		return filepath.Join(x, "fluxq"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no state directory: set --state-dir or FLUXQ_STATE_DIR (%v)", err)
	}
	return filepath.Join(home, ".local", "state", "fluxq"), nil
}

// Timeout is the global --timeout value. It is read from the app's own
// context, since a command may have a -t/--timeout of its own (fluxq queue
// drain) that means something else.
func Timeout(c *cli.Context) (time.Duration, error) {
	s := global(c).String(FlagTimeout)
	sec, err := fsd.ParseBounded(s)
	if err != nil {
		return 0, exitcode.UsageErrorf("--timeout: %v", err)
	}
	return fsd.Duration(sec), nil
}

// Open connects to the instance: its loop's socket when fluxsched runs,
// else its store directly. An unreachable or busy instance is exit 69.
func Open(c *cli.Context) (client.Client, error) {
	dir, err := StateDir(c)
	if err != nil {
		return nil, err
	}
	timeout, err := Timeout(c)
	if err != nil {
		return nil, err
	}
	// A process inside a job says so; the instance verifies the claim
	// against the caller's process session before believing it.
	cl, err := client.Open(c.Context, client.Options{StateDir: dir, Timeout: timeout,
		JobClaim: os.Getenv("FLUXQ_JOB_ID"), AsScheduler: c.Bool(FlagAsScheduler)})
	if errors.Is(err, client.ErrUnavailable) {
		return nil, exitcode.WithCode(exitcode.Unavailable, err)
	}
	return cl, err
}

// FlagAsScheduler is the reservation commands' flag for the instance
// owner acting as the scheduler.
const FlagAsScheduler = "as-scheduler"

// global is the app's own context, the outermost one that defines the
// global flags.
func global(c *cli.Context) *cli.Context {
	lineage := c.Lineage()
	for i := len(lineage) - 1; i >= 0; i-- {
		if cmd := lineage[i].Command; cmd != nil {
			for _, f := range cmd.Flags {
				if slices.Contains(f.Names(), FlagTimeout) {
					return lineage[i]
				}
			}
		}
	}
	return c
}

// fluxq alloc's job is a sub-instance: fluxsched's hidden command
// Subinstance, whose program (the shell) gets FLUXQ_STATE_DIR naming it,
// and EnvAllocJob and EnvAllocParent naming the job that holds it and the
// instance that runs that job.
const (
	Subinstance    = "subinstance"
	EnvAllocJob    = "FLUXQ_ALLOC_JOB"
	EnvAllocParent = "FLUXQ_ALLOC_PARENT"
)
