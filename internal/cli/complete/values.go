package complete

import (
	"context"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/cli/help"
	"github.com/fluxq/fluxq/internal/cli/output"
	"github.com/fluxq/fluxq/internal/fluid"
)

// engine completes values: fixed ones from the tables below, live ones
// from src.
type engine struct {
	ctx    context.Context
	app    *cli.App
	src    Source
	getenv func(string) string
	key    string   // the command, as state.key names it
	given  []string // its positional arguments so far
}

// valuer completes one kind of value from the word typed so far.
type valuer func(e *engine, cur string) Result

// jobLines says, for the commands whose trailing arguments are a job's
// command line (docs/cli.md: submit, run, bulksubmit, reservation target), at which
// positional argument it starts: no option of ours is offered from there.
var jobLines = map[string]int{
	"fluxq submit":               0,
	"fluxq run":                  0,
	"fluxq bulksubmit":           0,
	"fluxres reservation target": 1,
}

// Shells are the shells a completion script is written for.
var Shells = []string{"bash", "zsh", "fish"}

// states are the job state and result names fluxq's -f and -S take.
var states = []string{"pending", "running", "active", "inactive", "depend", "priority", "sched", "run",
	"cleanup", "completed", "failed", "canceled", "timeout", "all"}

// cancelStates are the states fluxq cancel -S takes (flux cancel's
// STATES); the others are refused there.
var cancelStates = []string{"depend", "priority", "sched", "run", "pending", "running", "active"}

// positional are the positional arguments of each command, by index; the last
// entry of a repeating command serves every later argument too.
var positional = map[string]struct {
	values []valuer
	repeat bool
}{
	"fluxq cancel":                {[]valuer{jobs}, true},
	"fluxq purge":                 {[]valuer{jobs}, true},
	"fluxq urgency":               {[]valuer{jobs, enum("hold", "default", "expedite")}, false},
	"fluxq attach":                {[]valuer{jobs}, false},
	"fluxq wait":                  {[]valuer{jobs}, false},
	"fluxq eventlog":              {[]valuer{jobs}, false},
	"fluxq output":                {[]valuer{jobs}, false},
	"fluxq info":                  {[]valuer{jobs, enum("jobspec", "R", "eventlog")}, false},
	"fluxq jobs":                  {[]valuer{jobs}, true},
	"fluxq queue status":          {[]valuer{queues}, false},
	"fluxq queue enable":          {[]valuer{queues}, false},
	"fluxq queue disable":         {[]valuer{queues}, false},
	"fluxq queue start":           {[]valuer{queues}, false},
	"fluxq queue stop":            {[]valuer{queues}, false},
	"fluxq queue drain":           {[]valuer{queues}, false},
	"fluxq queue idle":            {[]valuer{queues}, false},
	"fluxres drain":               {[]valuer{list(hosts(undrained))}, false},
	"fluxres undrain":             {[]valuer{list(hosts(drained))}, false},
	"fluxres allocated":           {[]valuer{jobs}, false},
	"fluxres reservation extend":  {[]valuer{reservations}, false},
	"fluxres reservation release": {[]valuer{reservations}, false},
	"fluxres reservation reclaim": {[]valuer{reservations}, false},
	"fluxres reservation show":    {[]valuer{reservations}, false},
	"fluxres reservation target":  {[]valuer{list(targets)}, false},
	"fluxres node remove":         {[]valuer{list(hosts(spare))}, false},
	"fluxsched config check":      {[]valuer{files}, false},
	"fluxq completion":            {[]valuer{enum(Shells...)}, false},
	"fluxres completion":          {[]valuer{enum(Shells...)}, false},
	"fluxsched completion":        {[]valuer{enum(Shells...)}, false},
	"fluxq help":                  {[]valuer{helpWords}, false},
	"fluxres help":                {[]valuer{helpWords}, false},
	"fluxsched help":              {[]valuer{helpWords}, false},
}

// argValue is the valuer of positional argument i of the command key, or
// nil when nothing is known about it.
func argValue(key string, i int) valuer {
	a := positional[key]
	switch {
	case i < len(a.values):
		return a.values[i]
	case a.repeat && len(a.values) > 0:
		return a.values[len(a.values)-1]
	}
	return nil
}

// flagValues are the values of options, by "command --name" (the
// option's first name). The most specific entry wins: "fluxq jobs
// --queue", then "fluxq --queue", then "--queue"; fluxres reservation
// target takes fluxq submit's options, so those are not per binary.
var flagValues = map[string]valuer{
	"--color":                             enum("auto", "always", "never"),
	"--state-dir":                         files,
	"--queue":                             queues,
	"fluxq jobs --queue":                  list(queues),
	"fluxq queue list --queue":            list(queues),
	"--target":                            list(targets),
	"fluxres reservation create --target": jobs,
	"--urgency":                           enum("hold", "default", "expedite"),
	"--dependency":                        dependency,
	"--cwd":                               files,
	"--output":                            files,
	"--error":                             files,
	"--input":                             files,
	"--jobspec":                           files,
	"--env-file":                          files,
	"fluxq jobs --filter":                 list(enum(states...)),
	"fluxq cancel --states":               list(enum(cancelStates...)),
	"--requires":                          list(constraint),
	"--nodelist":                          list(hosts(anyHost)),
	"--inherit":                           enum("none", "child", "default", "child-default"),
	"fluxres list --states":               list(enum("free", "allocated", "down", "reserved")),
	"fluxsched --policy":                  enum("fcfs", "easy", "hybrid", "conservative"),
	"fluxsched --mode":                    enum("unlimited", "limited="),
	"fluxsched --match-policy":            enum("first-fit", "worst-fit", "best-fit"),
	"fluxsched --log-level":               enum("debug", "info", "warn", "error"),
	"fluxsched --config":                  files,
	"fluxsched --sched-cmd":               files,
	"fluxsched --trace":                   files,
	"fluxsched --schedule-out":            files,
	"fluxsched --plot":                    files,
	"fluxsched --compare":                 list(enum("fcfs", "easy", "hybrid", "conservative")),
}

// flagValue completes the value of option f of the current command.
func (e *engine) flagValue(f cli.Flag, cur string) Result {
	name := "--" + f.Names()[0]
	for k := e.key; ; {
		if v, ok := flagValues[k+" "+name]; ok {
			return v(e, cur)
		}
		i := strings.LastIndexByte(k, ' ')
		if i < 0 {
			break
		}
		k = k[:i]
	}
	if v, ok := flagValues[name]; ok {
		return v(e, cur)
	}
	return Result{}
}

// enum offers fixed words.
func enum(words ...string) valuer {
	return func(_ *engine, cur string) Result {
		var out []Candidate
		for _, w := range words {
			if strings.HasPrefix(w, cur) {
				out = append(out, Candidate{Value: w})
			}
		}
		return Result{Candidates: out}
	}
}

// files leaves the word to the shell's file name completion.
func files(*engine, string) Result { return Result{Files: true} }

// list completes the last item of a comma-separated list with v, leaving
// out the items already listed.
func list(v valuer) valuer {
	return func(e *engine, cur string) Result {
		head, tail := "", cur
		if i := strings.LastIndexByte(cur, ','); i >= 0 {
			head, tail = cur[:i+1], cur[i+1:]
		}
		done := strings.Split(strings.TrimSuffix(head, ","), ",")
		r := v(e, tail)
		out := r.Candidates[:0]
		for _, c := range r.Candidates {
			if head != "" && contains(done, c.Value) {
				continue
			}
			c.Value = head + c.Value
			out = append(out, c)
		}
		r.Candidates = out
		return r
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// helpWords are what BIN help takes: the application's commands, then
// its help topics.
func helpWords(e *engine, cur string) Result {
	cands := commandCandidates(e.app.Commands)
	for _, t := range help.TopicsFor(e.app.Name) {
		cands = append(cands, Candidate{Value: t.Name, Desc: t.Summary})
	}
	return Result{Candidates: match(cands, cur)}
}

// PropertySource is a Source that also knows the instance's node
// properties (--requires). A Source without it offers none.
type PropertySource interface {
	Properties(ctx context.Context) ([]Candidate, error)
}

// constraint completes one --requires term (help constraints): a
// property, negated or not, or host: and a host name.
func constraint(e *engine, cur string) Result {
	if name, ok := strings.CutPrefix(cur, "host:"); ok {
		r := hosts(instanceHost)(e, name)
		for i := range r.Candidates {
			r.Candidates[i].Value = "host:" + r.Candidates[i].Value
		}
		return r
	}
	neg, word := "", cur
	if rest, ok := strings.CutPrefix(cur, "^"); ok {
		neg, word = "^", rest
	}
	var out []Candidate
	if ps, ok := e.src.(PropertySource); ok {
		if props, err := ps.Properties(e.ctx); err == nil {
			for _, p := range match(props, word) {
				p.Value = neg + p.Value
				out = append(out, p)
			}
		}
	}
	if neg == "" && strings.HasPrefix("host:", cur) {
		out = append(out, Candidate{Value: "host:", Desc: "nodes by name"})
	}
	return Result{Candidates: out}
}

// queues offers the instance's named queues.
func queues(e *engine, cur string) Result {
	qs, err := e.src.Queues(e.ctx)
	if err != nil {
		return Result{}
	}
	return Result{Candidates: match(qs, cur)}
}

// jobs offers the caller's pending and running jobs, printed the way cur
// starts: "f…" (ASCII F58) or decimal when the user typed so, else as
// every command prints them.
func jobs(e *engine, cur string) Result {
	js, err := e.src.Jobs(e.ctx)
	if err != nil {
		return Result{}
	}
	given := map[fluid.ID]bool{}
	for _, a := range e.given {
		if id, err := fluid.Parse(a); err == nil {
			given[id] = true
		}
	}
	var out []Candidate
	for _, j := range js {
		if given[j.ID] {
			continue // fluxq cancel A B: A is already there
		}
		v := jobWord(j.ID, cur, e.getenv)
		if strings.HasPrefix(v, cur) {
			out = append(out, Candidate{Value: v, Desc: strings.TrimSpace(j.State + " " + j.Name)})
		}
	}
	return Result{Candidates: out}
}

// jobWord prints id in the form cur has begun: docs/cli.md accepts F58 with
// "ƒ" or "f", and decimal.
func jobWord(id fluid.ID, cur string, getenv func(string) string) string {
	switch {
	case strings.HasPrefix(cur, "f"):
		if s, err := id.Encode(fluid.F58Plain); err == nil {
			return s
		}
	case cur != "" && cur[0] >= '0' && cur[0] <= '9':
		return strconv.FormatUint(uint64(id), 10)
	}
	return output.JobID(id, getenv)
}

// dependency completes --dependency TYPE:ID.
func dependency(e *engine, cur string) Result {
	kind, id, ok := strings.Cut(cur, ":")
	if !ok {
		r := enum("afterok:", "afterany:", "afternotok:", "afterstart:")(e, cur)
		return r
	}
	r := jobs(e, id)
	for i := range r.Candidates {
		r.Candidates[i].Value = kind + ":" + r.Candidates[i].Value
	}
	return r
}

// reservations offers the live reservations' allocation IDs.
func reservations(e *engine, cur string) Result {
	rs, err := e.src.Reservations(e.ctx)
	if err != nil {
		return Result{}
	}
	return Result{Candidates: match(rs, cur)}
}

// targets are what --target takes: reservations, and "default" for the
// default session.
func targets(e *engine, cur string) Result {
	r := reservations(e, cur)
	if strings.HasPrefix("default", cur) {
		r.Candidates = append(r.Candidates, Candidate{Value: "default", Desc: "the default session"})
	}
	return r
}

// Which hosts a command takes.
func anyHost(Host) bool     { return true }
func drained(h Host) bool   { return h.Drained }
func undrained(h Host) bool { return !h.Drained && !h.Spare }
func spare(h Host) bool     { return h.Spare }

// instanceHost: a node of the instance, which a job may require.
func instanceHost(h Host) bool { return !h.Spare }
func hosts(keep func(Host) bool) valuer {
	return func(e *engine, cur string) Result {
		hs, err := e.src.Hosts(e.ctx)
		if err != nil {
			return Result{}
		}
		var out []Candidate
		for _, h := range hs {
			if keep(h) && strings.HasPrefix(h.Name, cur) {
				out = append(out, Candidate{Value: h.Name, Desc: h.Desc})
			}
		}
		return Result{Candidates: out}
	}
}
