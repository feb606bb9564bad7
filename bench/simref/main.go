// Command simref is an independent reference implementation of
// docs/simulation.md, written from that page alone (and the `fluxsched sim`
// flags of docs/cli.md), to check `fluxsched sim` schedule for schedule:
//
//	go run ./bench/simref --trace FILE.swf --cores N --policy fcfs|easy|hybrid|conservative
//	    [--reservation-depth D] [--schedule-out FILE] [--json]
//
// It is deliberately plain: a list of running jobs, a queue, and one
// function per policy that does what the page says. EASY is written with
// the page's shadow time and extra cores, not as a case of the profile code
// of conservative and hybrid, so each formulation checks the other.
//
// Readings chosen where docs/simulation.md is silent or ambiguous:
//
//   - Comments: ";" starts a comment running to the end of the line; a line
//     that is blank once the comment is cut is no record. Every other line is
//     a record ("the records" that jobs + skipped + denied add up to).
//   - A record needs at least 9 whitespace-separated fields (we use up to
//     field 9); fewer is an error naming the line. Only fields 1, 2, 4, 5, 8
//     and 9 are read: junk in an unused field is not an error.
//   - "Read as a number": a decimal integer, or anything strconv.ParseFloat
//     takes (e.g. "552.21", "1e3"); NaN, infinities and magnitudes above 2^40
//     are errors naming the line and field. Truncation comes first, the
//     rules after: a submit time of -0.5 becomes 0 and is not skipped.
//   - A record is skipped if cores <= 0, submit < 0 or run time < 0 (any of
//     them); a skipped record is never also denied.
//   - Denied jobs (cores > the machine) take part in time zero only. An
//     instant where only a denied job is submitted still gets a pass; such a
//     pass can start nothing, since nothing changed since the last one.
//   - A job with run time 0 holds its cores for the rest of the pass that
//     starts it; then they are freed and another pass follows at the same
//     instant, repeated while a pass starts such a job.
//   - Requested time 0 (field 9 unknown and run time 0) is a requested time
//     of 0 s, the page's "perfect estimate": EASY uses start + 0 literally
//     (such a job always ends by the shadow time); in the profile of
//     conservative/hybrid it holds its cores for one second, so that no other
//     job is placed on them at the instant it starts. (A Flux jobspec
//     duration of 0 means unlimited; `fluxsched sim` read it that way when
//     this was written, and so never backfilled such a job. Neither real
//     trace has one; testdata/edge.swf avoids them until the page decides.)
//   - EASY: the running jobs include those started earlier in the same pass
//     (the head run). A backfill candidate must fit in the cores free at its
//     turn of the scan; shadow time and extra are computed once per pass, and
//     "ends no later than the shadow time" compares now + requested time.
//   - hybrid: a job that fits now for its whole requested time starts now and
//     does not count toward D; only jobs that cannot start now use up the
//     D reservations. conservative is this walk with D unbounded, as the page
//     says ("D unbounded is conservative"). D = 0 is allowed (no reservation).
//     --reservation-depth defaults to 64 and is ignored by the other policies.
//   - Output: schedule lines are compact JSON as encoding/json writes them,
//     keys in the order id, submit, start, end, cores. The summary object has
//     the keys in the order docs/simulation.md lists them; utilization is 0 when
//     the makespan is 0 (every started job ran 0 s).
//   - For use as a drop-in `fluxsched` in bench/simcheck.sh's self-test, a
//     leading "sim" argument is ignored and --nodes N --cores-per-node C may
//     replace --cores N*C.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// config is what the command line asks for.
type config struct {
	trace        string
	cores        int64
	nodes        int64
	coresPerNode int64
	policy       string
	depth        int
	scheduleOut  string
	json         bool
}

// summary is the --json object of docs/simulation.md.
type summary struct {
	Jobs                int     `json:"jobs"`
	Skipped             int     `json:"skipped"`
	Denied              int     `json:"denied"`
	Makespan            int64   `json:"makespan"`
	Utilization         float64 `json:"utilization"`
	MeanWait            float64 `json:"mean_wait"`
	MaxWait             int64   `json:"max_wait"`
	MeanBoundedSlowdown float64 `json:"mean_bounded_slowdown"`
	MeanTurnaround      float64 `json:"mean_turnaround"`
}

// scheduleLine is one --schedule-out line.
type scheduleLine struct {
	ID     int64 `json:"id"`
	Submit int64 `json:"submit"`
	Start  int64 `json:"start"`
	End    int64 `json:"end"`
	Cores  int64 `json:"cores"`
}

// errUsage marks errors in the command line (exit 2).
var errUsage = errors.New("usage")

func main() {
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case errors.Is(err, errUsage):
		fmt.Fprintf(os.Stderr, "simref: %v\n", err)
		os.Exit(2)
	default:
		fmt.Fprintf(os.Stderr, "simref: %v\n", err)
		os.Exit(1)
	}
}

// run is the whole command, with its streams passed in for tests.
func run(args []string, stdout, stderr io.Writer) error {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	f, err := os.Open(cfg.trace)
	if err != nil {
		return err
	}
	defer f.Close()
	sched, sum, err := replay(f, cfg.cores, cfg.policy, cfg.depth)
	if err != nil {
		return fmt.Errorf("%s: %w", cfg.trace, err)
	}
	if cfg.scheduleOut != "" {
		if err := writeSchedule(cfg.scheduleOut, sched); err != nil {
			return err
		}
	}
	if cfg.json {
		b, err := json.Marshal(sum)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	_, err = fmt.Fprintf(stdout,
		"jobs %d  skipped %d  denied %d\nmakespan %d s  utilization %.4f\nmean wait %.1f s  max wait %d s  mean bounded slowdown %.3f  mean turnaround %.1f s\n",
		sum.Jobs, sum.Skipped, sum.Denied, sum.Makespan, sum.Utilization,
		sum.MeanWait, sum.MaxWait, sum.MeanBoundedSlowdown, sum.MeanTurnaround)
	return err
}

// parseFlags reads the command line; every problem is an errUsage.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	if len(args) > 0 && args[0] == "sim" {
		args = args[1:]
	}
	var cfg config
	fs := flag.NewFlagSet("simref", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.trace, "trace", "", "SWF trace to replay")
	fs.Int64Var(&cfg.cores, "cores", 0, "cores in the machine")
	fs.Int64Var(&cfg.nodes, "nodes", 0, "nodes (with --cores-per-node, instead of --cores)")
	fs.Int64Var(&cfg.coresPerNode, "cores-per-node", 0, "cores per node (with --nodes)")
	fs.StringVar(&cfg.policy, "policy", policyFCFS, "fcfs, easy, hybrid or conservative")
	fs.IntVar(&cfg.depth, "reservation-depth", 64, "reservations made by hybrid")
	fs.StringVar(&cfg.scheduleOut, "schedule-out", "", "write one JSON line per started job here")
	fs.BoolVar(&cfg.json, "json", false, "print the summary as one JSON object")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, err
		}
		return cfg, fmt.Errorf("%w: %v", errUsage, err)
	}
	switch {
	case fs.NArg() > 0:
		return cfg, fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	case cfg.trace == "":
		return cfg, fmt.Errorf("%w: --trace is required", errUsage)
	case cfg.nodes != 0 || cfg.coresPerNode != 0:
		if cfg.cores != 0 {
			return cfg, fmt.Errorf("%w: give --cores or --nodes with --cores-per-node, not both", errUsage)
		}
		if cfg.nodes <= 0 || cfg.coresPerNode <= 0 || cfg.nodes > maxField/cfg.coresPerNode {
			return cfg, fmt.Errorf("%w: --nodes and --cores-per-node must both be positive (and not huge)", errUsage)
		}
		cfg.cores = cfg.nodes * cfg.coresPerNode
	case cfg.cores <= 0 || cfg.cores > maxField:
		return cfg, fmt.Errorf("%w: --cores must be a positive number of cores", errUsage)
	}
	switch cfg.policy {
	case policyFCFS, policyEASY, policyHybrid, policyConservative:
	default:
		return cfg, fmt.Errorf("%w: unknown policy %q (want fcfs, easy, hybrid or conservative)", errUsage, cfg.policy)
	}
	if cfg.depth < 0 {
		return cfg, fmt.Errorf("%w: --reservation-depth %d is negative", errUsage, cfg.depth)
	}
	return cfg, nil
}

// prepare applies the whole-trace input rules: denial on this machine and
// time zero. It returns the jobs to replay, in trace order, and the counts.
func prepare(recs []record, total int64) ([]*job, summary) {
	var sum summary
	zero, haveZero := int64(0), false
	for _, r := range recs {
		if r.skipped {
			sum.Skipped++
			continue
		}
		if !haveZero || r.submit < zero {
			zero, haveZero = r.submit, true
		}
	}
	var jobs []*job
	for _, r := range recs {
		if r.skipped {
			continue
		}
		j := &job{pos: r.pos, id: r.id, submit: r.submit - zero, run: r.run, req: r.req, cores: r.cores}
		if j.cores > total {
			j.denied = true
			sum.Denied++
		}
		jobs = append(jobs, j)
	}
	return jobs, sum
}

// summarize fills in the figures over the started jobs.
func summarize(jobs []*job, total int64, sum *summary) {
	var used, waits, turnarounds int64
	var slowdowns float64
	for _, j := range jobs {
		if !j.started {
			continue
		}
		sum.Jobs++
		run := j.end - j.start
		wait := j.start - j.submit
		sum.Makespan = max(sum.Makespan, j.end)
		sum.MaxWait = max(sum.MaxWait, wait)
		used += run * j.cores
		waits += wait
		turnarounds += j.end - j.submit
		slowdowns += max(1, float64(wait+run)/float64(max(run, 10)))
	}
	if sum.Jobs == 0 {
		return
	}
	n := float64(sum.Jobs)
	if sum.Makespan > 0 {
		sum.Utilization = float64(used) / (float64(total) * float64(sum.Makespan))
	}
	sum.MeanWait = float64(waits) / n
	sum.MeanBoundedSlowdown = slowdowns / n
	sum.MeanTurnaround = float64(turnarounds) / n
}

// replay reads a trace and simulates it on a machine of total cores; it
// returns the schedule of the started jobs in trace order and the summary.
func replay(r io.Reader, total int64, policy string, depth int) ([]scheduleLine, summary, error) {
	recs, err := parseSWF(r)
	if err != nil {
		return nil, summary{}, err
	}
	jobs, sum := prepare(recs, total)
	if err := simulate(jobs, total, policy, depth); err != nil {
		return nil, summary{}, err
	}
	summarize(jobs, total, &sum)
	var sched []scheduleLine
	for _, j := range jobs {
		if j.started {
			sched = append(sched, scheduleLine{ID: j.id, Submit: j.submit, Start: j.start, End: j.end, Cores: j.cores})
		}
	}
	return sched, sum, nil
}

// writeSchedule writes the schedule as JSON lines.
func writeSchedule(path string, sched []scheduleLine) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, l := range sched {
		if err := enc.Encode(l); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
