package fluxq

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/cli/output"
	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/fsd"
)

// The parts `fluxq info ID KEY` prints raw, as `flux job info` does.
const (
	infoKeyJobspec  = "jobspec"
	infoKeyR        = "R"
	infoKeyEventlog = "eventlog"
)

// timeLayout is how info prints a moment: local time to the millisecond.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// infoJSON is `fluxq info ID --json`: the job as `fluxq jobs --json`
// shows it, with its jobspec, R (null until allocated) and eventlog.
type infoJSON struct {
	jobJSON
	memoryJSON
	Jobspec  json.RawMessage  `json:"jobspec"`
	R        json.RawMessage  `json:"R"`
	Eventlog []eventlog.Event `json:"eventlog"`
	// Resubmitted are the jobs fluxq resubmit made from this one.
	Resubmitted []fluid.ID `json:"resubmitted,omitempty"`
}

func (e *env) infoCommand() *cli.Command {
	return &cli.Command{
		Name:      "info",
		Usage:     "show one job: states, times, R, exception, result",
		ArgsUsage: "ID [jobspec|R|eventlog]",
		Description: `Shows one job: its state and result, submit, start and end times, the
resources it was given (R), its exception and exit status, and once it
finished the CPU time and peak memory its processes used. A job that
asks for memory gets a memory line: asked (in all, and per slot),
granted (by its R) and its peak, side by side. Use it to find out what
became of a job. With a KEY, prints that part as stored instead: the
jobspec or R as JSON, the eventlog as RFC 18 lines.

EXAMPLES:
  # What became of a job
  $ fluxq info ƒNH

  # The cores and GPUs it was given (R, RFC 20)
  $ fluxq info ƒNH R

  # What it asked for
  $ fluxq info ƒNH jobspec`,
		Flags:  []cli.Flag{output.JSONFlag(), output.FormatFlag()},
		Action: action(e.info),
	}
}

func (e *env) info(c *cli.Context) error {
	n := c.Args().Len()
	if n < 1 || n > 2 {
		return exitcode.UsageErrorf("expected ID [jobspec|R|eventlog], got %d arguments", n)
	}
	id, err := parseID(c.Args().First())
	if err != nil {
		return err
	}
	key := c.Args().Get(1)
	switch key {
	case "", infoKeyJobspec, infoKeyR, infoKeyEventlog:
	default:
		return exitcode.UsageErrorf("unknown key %q: want jobspec, R or eventlog", key)
	}
	p, err := printer(c)
	if err != nil {
		return err
	}
	info, err := e.jobInfo(c, id)
	if err != nil {
		return err
	}
	w := stdout(c)
	switch key {
	case infoKeyJobspec:
		return writeLine(w, info.Jobspec)
	case infoKeyR:
		if len(info.R) == 0 {
			return fmt.Errorf("%s: R: the job holds no resources yet", c.Args().First())
		}
		return writeLine(w, info.R)
	case infoKeyEventlog:
		return writeEventlogJSON(w, info.Eventlog)
	}
	if len(info.Summary.Command) == 0 {
		// A summary stored before it kept the command: the jobspec has it.
		info.Summary.Command = jobspecCommand(info.Jobspec)
	}
	now := e.now()
	doc := infoJSON{jobJSON: e.toJSON(&info.Summary, now), memoryJSON: memoryOf(info).json(), Jobspec: info.Jobspec, R: info.R, Eventlog: info.Eventlog, Resubmitted: info.Resubmitted}
	if doc.Eventlog == nil {
		doc.Eventlog = []eventlog.Event{}
	}
	return output.PrintObject(p, doc, func(w io.Writer) error { return e.writeInfo(w, info, now) },
		output.Bind(e.jobFields(now), &info.Summary)...)
}

// writeInfo prints one job for people: one "field value" line each, the
// fields named as --json names them.
func (e *env) writeInfo(w io.Writer, info *api.JobInfo, now time.Time) error {
	s := &info.Summary
	j := e.toJSON(s, now)
	rows := [][2]string{
		{"id", j.IDF58},
		{"username", fmt.Sprintf("%s (%d)", j.Username, j.UserID)},
		{"name", s.Name},
	}
	if len(s.Command) > 0 {
		rows = append(rows, [2]string{"command", commandLine(s.Command)})
	}
	add := func(k, v string) {
		if v != "" {
			rows = append(rows, [2]string{k, v})
		}
	}
	add("queue", s.Queue)
	add("state", s.State.String())
	add("result", s.Result.String())
	add("reason", inactiveReason(s))
	add("info", contextualInfo(s, now))
	add("urgency", strconv.Itoa(s.Urgency))
	add("priority", strconv.FormatInt(s.Priority, 10))
	add("ntasks", strconv.Itoa(s.NTasks))
	add("nnodes", strconv.Itoa(s.NNodes))
	add("ncores", strconv.Itoa(s.NCores))
	add("ngpus", strconv.Itoa(s.NGPUs))
	if m := memoryOf(info); m.shown() {
		add("memory", m.line())
	}
	if s.Duration > 0 {
		add("duration", fsd.Format(s.Duration))
	} else {
		add("duration", "unlimited")
	}
	add("nodelist", s.Nodelist)
	add("dependencies", strings.Join(s.Dependencies, ","))
	// The jobs made again from one another (resubmit, --retry).
	if s.AgainOf != nil {
		add("again_of", e.fmtID(*s.AgainOf))
	}
	if s.Retries > 0 {
		add("retry", fmt.Sprintf("%d of %d", s.Retry, s.Retries))
	}
	if s.RetriedAs != nil {
		add("retried_as", e.fmtID(*s.RetriedAs))
	}
	if len(info.Resubmitted) > 0 {
		ids := make([]string, len(info.Resubmitted))
		for i, id := range info.Resubmitted {
			ids[i] = e.fmtID(id)
		}
		add("resubmitted", strings.Join(ids, ","))
	}
	for _, t := range []struct {
		k string
		v float64
	}{{"t_submit", s.TSubmit}, {"t_depend", s.TDepend}, {"t_run", s.TRun}, {"t_cleanup", s.TCleanup}, {"t_inactive", s.TInactive}} {
		if t.v > 0 {
			add(t.k, formatTime(t.v))
		}
	}
	if s.TRun > 0 {
		add("runtime", fsd.Format(j.Runtime))
	}
	if ex := s.Exception; ex != nil && ex.Occurred {
		msg := fmt.Sprintf("type=%s severity=%d", ex.Type, ex.Severity)
		if ex.Note != "" {
			msg += " note=" + ex.Note
		}
		add("exception", msg)
	}
	if j.ReturnCode != nil {
		add("returncode", strconv.Itoa(*j.ReturnCode))
	}
	if u := s.Usage; u != nil {
		add("user_cpu", fsd.Format(u.UserCPU))
		add("sys_cpu", fsd.Format(u.SysCPU))
		add("max_rss", formatBytes(u.MaxRSS))
	}
	if len(info.R) > 0 {
		add("R", string(info.R))
	}
	return output.KeyValues(w, rows)
}

// jobspecCommand reads the first task's command from a jobspec; nil if
// it has none.
func jobspecCommand(raw json.RawMessage) []string {
	var js struct {
		Tasks []struct {
			Command []string `json:"command"`
		} `json:"tasks"`
	}
	if json.Unmarshal(raw, &js) != nil || len(js.Tasks) == 0 {
		return nil
	}
	return js.Tasks[0].Command
}

// formatBytes prints a size in binary units, as free -h does.
func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + "B"
	}
	f, suffix := float64(n), ""
	for _, suffix = range []string{"KiB", "MiB", "GiB", "TiB", "PiB"} {
		f /= unit
		if f < unit {
			break
		}
	}
	return strconv.FormatFloat(f, 'f', 1, 64) + suffix
}

// formatTime prints seconds since the epoch as local time.
func formatTime(sec float64) string {
	whole := int64(sec)
	return time.Unix(whole, int64((sec-float64(whole))*1e9)).Format(timeLayout)
}

// writeLine writes raw JSON and a newline.
func writeLine(w io.Writer, b []byte) error {
	bw := bufio.NewWriter(w)
	bw.Write(b)
	bw.WriteByte('\n')
	return bw.Flush()
}

// writeEventlogJSON writes events as RFC 18 lines.
func writeEventlogJSON(w io.Writer, evs []eventlog.Event) error {
	b, err := eventlog.Append(nil, evs...)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
