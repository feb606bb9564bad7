package fluxq

import (
	"bufio"
	"encoding/json"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/cli/printable"

	"github.com/fluxq/fluxq/internal/eventlog"
)

func (e *env) eventlogCommand() *cli.Command {
	return &cli.Command{
		Name:      "eventlog",
		Usage:     "print a job's events",
		ArgsUsage: "ID",
		Description: `Prints a job's events (RFC 21), as flux job eventlog does, one line
each: TIMESTAMP NAME key=value ... (values as JSON). Use it to see when a
job was submitted, scheduled, started and ended, and why. -H prints the
first time as a date and the others as offsets from it.

EXAMPLES:
  # A job's history, with readable times
  $ fluxq eventlog -H ƒNH

  # Watch the events as they happen, until the job ends
  $ fluxq eventlog --follow ƒNH

  # One RFC 18 JSON object per line, for a script
  $ fluxq eventlog --json ƒNH`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "human", Aliases: []string{"H"}, Usage: "human-readable times (-T human)", DisableDefaultText: true},
			&cli.BoolFlag{Name: "json", Usage: "one RFC 18 JSON object per line (-f json)", DisableDefaultText: true},
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Usage: "output `FORMAT`: text or json", DefaultText: "text"},
			&cli.StringFlag{Name: "time-format", Aliases: []string{"T"}, Usage: "time `FORMAT`: raw, iso, offset or human", DefaultText: "raw"},
			&cli.BoolFlag{Name: "follow", Aliases: []string{"F"}, Usage: "keep printing events until the job is inactive", DisableDefaultText: true},
		},
		Action: action(func(c *cli.Context) error {
			id, err := oneID(c)
			if err != nil {
				return err
			}
			cl, err := e.connect(c)
			if err != nil {
				return err
			}
			defer cl.Close()
			f, err := newEventFormatter(c)
			if err != nil {
				return err
			}
			follow := c.Bool("follow")
			err = cl.Events(c.Context, id, follow, func(ev eventlog.Event) error {
				if err := f.write(ev); err != nil {
					return err
				}
				if follow {
					return f.w.Flush()
				}
				return nil
			})
			if ferr := f.w.Flush(); err == nil {
				err = ferr
			}
			if err != nil {
				return fmt.Errorf("%s: %w", c.Args().First(), err)
			}
			return nil
		}),
	}
}

// Time formats of fluxq eventlog -T, flux job eventlog's.
const (
	timeRaw    = "raw"    // seconds since the epoch, to the microsecond
	timeISO    = "iso"    // RFC 3339 in UTC, to the microsecond
	timeOffset = "offset" // seconds since the first event
	timeHuman  = "human"  // the first as a date, the others as offsets
)

// eventFormatter prints events as flux job eventlog does.
type eventFormatter struct {
	w     *bufio.Writer
	json  bool
	times string
	t0    float64 // the first event's time, for offsets
	seen  bool
}

func newEventFormatter(c *cli.Context) (*eventFormatter, error) {
	f := &eventFormatter{w: bufio.NewWriter(stdout(c)), times: timeRaw}
	switch format := c.String("format"); format {
	case "", "text":
	case "json":
		f.json = true
	default:
		return nil, exitcode.UsageErrorf("invalid format type '%s'", format)
	}
	f.json = f.json || c.Bool("json")
	if t := c.String("time-format"); t != "" {
		switch t {
		case timeRaw, timeISO, timeOffset, timeHuman:
			f.times = t
		default:
			return nil, exitcode.UsageErrorf("invalid time-format type '%s'", t)
		}
	}
	if c.Bool("human") {
		f.times, f.json = timeHuman, false
	}
	return f, nil
}

func (f *eventFormatter) write(ev eventlog.Event) error {
	if f.json {
		b, err := eventlog.Append(nil, ev)
		if err != nil {
			return err
		}
		_, err = f.w.Write(b)
		return err
	}
	f.w.WriteString(f.stamp(ev.Timestamp))
	f.w.WriteByte(' ')
	// The text form is for terminals: a note's C1 control, which JSON
	// leaves raw, is cleaned as in every text output.
	f.w.WriteString(printable.String(ev.Name))
	for _, k := range ev.ContextKeys() {
		v, err := json.Marshal(ev.Context[k])
		if err != nil {
			return err
		}
		f.w.WriteByte(' ')
		f.w.WriteString(printable.String(k))
		f.w.WriteByte('=')
		f.w.WriteString(printable.String(string(v)))
	}
	return f.w.WriteByte('\n')
}

// stamp is an event's time in the chosen format. -H prints the first as
// "[Jan02 15:04]" and the rest as "[  +0.012345]" from it.
func (f *eventFormatter) stamp(ts float64) string {
	first := !f.seen
	if first {
		f.t0, f.seen = ts, true
	}
	switch f.times {
	case timeISO:
		sec := int64(ts)
		return time.Unix(sec, int64((ts-float64(sec))*1e9)).UTC().Format("2006-01-02T15:04:05.000000Z")
	case timeOffset:
		return fmt.Sprintf("%.6f", ts-f.t0)
	case timeHuman:
		if first {
			return time.Unix(int64(ts), 0).Format("[Jan02 15:04]")
		}
		return fmt.Sprintf("[%+11.6f]", ts-f.t0)
	}
	return fmt.Sprintf("%.6f", ts)
}
