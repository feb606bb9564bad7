// Command simref is an independent reference implementation of
// docs/simulation.md, written from that page alone (and the `fluxsched sim`
// flags of docs/cli.md), to check `fluxsched sim` schedule for schedule:
//
//	go run ./bench/simref --trace FILE.swf --cores N --policy fcfs|easy|hybrid|conservative
//	    [--reservation-depth D] [--schedule-out FILE] [--json]
//	go run ./bench/simref --trace FILE.swf --nodes N --cores-per-node C --memory SIZE ...
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
//     instant where only a denied job is submitted makes no pass: the page's
//     "leaves no mark on the schedule", and its Memory section says so.
//     (Without memory such a pass could start nothing, nothing having
//     changed since the last; with memory's claims a pass later in time can
//     decide otherwise, which is how this reading was found.)
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
//
// Memory (docs/simulation.md, "Memory"), with --memory SIZE per node, which
// needs --nodes and --cores-per-node:
//
//   - SIZE as docs/cli.md gives --mem's: a number (decimals allowed) with an
//     optional K, M, G, T or P (powers of 1024, k/m/g/t/p too, with or
//     without a trailing B or iB); a bare number is in MB. A decimal is
//     taken as the nearest float64 times its unit, rounded down to whole
//     bytes. More than 0 and at most 1E per node, and at most 1E in all
//     (nodes x SIZE), so that sums of memory stay in an int64.
//   - Field 10 is read only with --memory; a line without it asks for no
//     memory. It is read as the other fields are, but over all of int64
//     (a huge value is a job to deny, not a bad trace); <= 0 asks for none.
//   - A job's memory per processor is field 10 x 1024 bytes. One over 1E per
//     processor or in all is denied (no jobspec can say it); so is one no
//     set of nodes can hold: the sum over nodes of min(cores per node,
//     floor(SIZE / memory per processor)) is below its processors.
//   - Without --memory the machine is one node of all the cores (only the
//     count of free cores matters then); with it, nodes are separate and
//     placement (worst-fit) decides which node's memory a job takes.
//   - --match-policy worst-fit|best-fit|first-fit is the config's [sched]
//     match-policy (fluxsched sim takes it from --config only); without
//     --memory it changes nothing, since only the count of free cores
//     matters then.
//   - easy with --memory is the profile walk with one reservation (the page:
//     "easy is hybrid with D = 1 here"), not the shadow-time code, which has
//     no notion of a reservation on nodes.
//   - "What it offers over [t, e)" is computed directly: the node's free
//     cores and memory at t and at each claim start inside (t, e), each
//     less the claims active then, the least of each taken on its own.
//   - The times to try for a memory job's reservation are sorted and taken
//     strictly after the time last tried; a time the profile moves it to is
//     tried first, then the times to try after it.
//   - Where the page was written from: the memory rules were worded from
//     memsched's scheduler (issue 26) by the same hand that wrote this
//     code, so this check is weaker for them than for the page's older
//     rules; the formulation here (direct evaluation over claims, one node
//     list) is not the scheduler's (sweeps, release heaps, caps).
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// config is what the command line asks for.
type config struct {
	trace        string
	cores        int64
	nodes        int64
	coresPerNode int64
	memory       int64 // bytes per node, 0 without --memory
	match        string
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
	spec := machineSpec{nodes: 1, coresPerNode: cfg.cores}
	if cfg.memory > 0 {
		spec = machineSpec{nodes: cfg.nodes, coresPerNode: cfg.coresPerNode, memory: cfg.memory, match: cfg.match}
	}
	sched, sum, err := replayOn(f, spec, cfg.policy, cfg.depth)
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
	memory := fs.String("memory", "", "memory per node (512M, 4G; bare is MB), with --nodes and --cores-per-node")
	fs.StringVar(&cfg.match, "match-policy", matchWorstFit, "worst-fit, best-fit or first-fit (matters only with --memory)")
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
	switch cfg.match {
	case matchWorstFit, matchBestFit, matchFirstFit:
	default:
		return cfg, fmt.Errorf("%w: unknown match policy %q (want worst-fit, best-fit or first-fit)", errUsage, cfg.match)
	}
	if *memory != "" {
		m, err := parseSize(*memory)
		if err != nil {
			return cfg, fmt.Errorf("%w: --memory: %v", errUsage, err)
		}
		if cfg.nodes == 0 {
			return cfg, fmt.Errorf("%w: --memory needs --nodes and --cores-per-node", errUsage)
		}
		if cfg.nodes > maxMemory/m {
			return cfg, fmt.Errorf("%w: --memory: %d nodes of %s is over 1E in all", errUsage, cfg.nodes, *memory)
		}
		cfg.memory = m
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

// maxMemory is 1E, the most memory a job may ask for (per processor or in
// all) and a machine may have in all.
const maxMemory = 1 << 60

// parseSize reads --memory's SIZE (see the package comment).
func parseSize(s string) (int64, error) {
	t := strings.TrimSuffix(strings.TrimSuffix(s, "iB"), "B")
	shift := 20 // bare: MB
	if n := len(t); n > 0 {
		if k := strings.IndexByte("KMGTP", strings.ToUpper(t[n-1:])[0]); k >= 0 {
			shift, t = 10*(k+1), t[:n-1]
		}
	}
	bad := fmt.Errorf("%q is not a size such as 512M, 4G or 1.5T", s)
	if t == "" || strings.ContainsAny(t, "+-eExXpP_ \t") {
		return 0, bad
	}
	x, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, bad
	}
	x = math.Floor(math.Ldexp(x, shift))
	switch {
	case x < 1:
		return 0, fmt.Errorf("%q must be more than 0", s)
	case x > maxMemory:
		return 0, fmt.Errorf("%q is over 1E", s)
	}
	return int64(x), nil
}

// machineSpec is the simulated machine: nodes of coresPerNode cores and
// memory bytes each (memory 0: without --memory, as one node of all the
// cores).
type machineSpec struct {
	nodes, coresPerNode, memory int64
	match                       string // match policy, "" for worst-fit
}

func (m machineSpec) count() int64    { return m.nodes }
func (m machineSpec) coresPer() int64 { return m.coresPerNode }
func (m machineSpec) cores() int64    { return m.nodes * m.coresPerNode }

// holds is how many processors of mem bytes each the machine can ever
// hold: on each node, its cores, or its memory / mem if fewer.
func (m machineSpec) holds(mem int64) int64 {
	per := m.coresPerNode
	if mem > 0 {
		per = min(per, m.memory/mem)
	}
	if per > 0 && m.nodes > math.MaxInt64/per {
		return math.MaxInt64
	}
	return per * m.nodes
}

// prepare applies the whole-trace input rules: denial on this machine and
// time zero. It returns the jobs to replay, in trace order, and the counts.
func prepare(recs []record, spec machineSpec) ([]*job, summary) {
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
		tooBig := false
		if spec.memory > 0 && r.memKB > 0 {
			if r.memKB > maxMemory/1024 || r.cores > maxMemory/(r.memKB*1024) {
				tooBig = true
			} else {
				j.mem = r.memKB * 1024
			}
		}
		if tooBig || j.cores > spec.cores() || spec.holds(j.mem) < j.cores {
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

// replay reads a trace and simulates it on a machine of total cores,
// without memory.
func replay(r io.Reader, total int64, policy string, depth int) ([]scheduleLine, summary, error) {
	return replayOn(r, machineSpec{nodes: 1, coresPerNode: total}, policy, depth)
}

// replayOn reads a trace and simulates it on a machine; it returns the
// schedule of the started jobs in trace order and the summary.
func replayOn(r io.Reader, spec machineSpec, policy string, depth int) ([]scheduleLine, summary, error) {
	recs, err := parseSWF(r, spec.memory > 0)
	if err != nil {
		return nil, summary{}, err
	}
	jobs, sum := prepare(recs, spec)
	if err := simulate(jobs, spec, policy, depth); err != nil {
		return nil, summary{}, err
	}
	summarize(jobs, spec.cores(), &sum)
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
