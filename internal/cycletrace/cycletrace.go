// Package cycletrace times the start cycle (docs/architecture.md, "Where a
// short job's time goes"): in a build with the tag cycletrace, the agent,
// the exec service and the loop mark each step of a job's way from one
// process's end to the next one's start with the monotonic clock, which
// every process of the machine shares, and write their marks at exit into
// the folder $FLUXQ_CYCLETRACE names. Table merges those files into the
// table of the page. In any other build Mark is empty and costs nothing.
//
//	go build -tags cycletrace ./cmd/...   # then run jobs with FLUXQ_CYCLETRACE=DIR
//	go run ./bench/cycletrace DIR         # the table (bench/cycletrace.sh does both)
package cycletrace

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Step is one point of the cycle. Steps of a job carry its id; steps of a
// turn of the loop carry the turn's number.
type Step uint8

// The steps, in the order of the cycle; the runner's steps inside
// runner.Launch (between AgentForking and AgentLaunched) came later and
// are numbered after, so that the numbers of the others stay.
const (
	AgentReaped        Step = iota + 1 // runner: the task's process reaped
	AgentEnded                         // agent: the runner reports the job's end
	AgentEndWritten                    // agent: the end is in the journal (written, or synced)
	AgentEndSent                       // agent: finish and release queued on the socket
	ExecEndIn                          // exec service: the release read from the agent
	LoopEndIn                          // loop: the release handled in a turn
	TurnExchanged                      // loop: an exchange with the scheduler returned
	TurnCommit                         // loop: the turn's transaction begins to commit
	TurnCommitted                      // loop: the commit returned
	LoopStartOut                       // loop: a start sent to the exec service
	ExecStartOut                       // exec service: the start sent to the agent
	AgentStartIn                       // agent: the start read
	AgentPrepared                      // agent: runner.Prepare returned
	AgentLaunchWritten                 // agent: the launch record in the journal
	AgentForking                       // agent: the launcher goroutine calls runner.Launch
	AgentLaunched                      // agent: runner.Launch returned (the task forked)
	RunnerSetUp                        // runner: output, pipes and program looked up
	RunnerForkIn                       // runner: the thread bound, ForkExec called (a job's first task)
	RunnerForkOut                      // runner: ForkExec returned
	nSteps
)

var names = [...]string{
	AgentReaped: "agent-reaped", AgentEnded: "agent-ended", AgentEndWritten: "agent-end-written",
	AgentEndSent: "agent-end-sent", ExecEndIn: "exec-end-in", LoopEndIn: "loop-end-in",
	TurnExchanged: "turn-exchanged", TurnCommit: "turn-commit", TurnCommitted: "turn-committed",
	LoopStartOut: "loop-start-out", ExecStartOut: "exec-start-out", AgentStartIn: "agent-start-in",
	AgentPrepared: "agent-prepared", AgentLaunchWritten: "agent-launch-written",
	AgentForking: "agent-forking", AgentLaunched: "agent-launched",
	RunnerSetUp: "runner-set-up", RunnerForkIn: "runner-fork-in", RunnerForkOut: "runner-fork-out",
}

func (s Step) String() string {
	if s > 0 && s < nSteps {
		return names[s]
	}
	return "step" + strconv.Itoa(int(s))
}

// Mark is one step of one job or turn, at a time of CLOCK_MONOTONIC in
// nanoseconds.
type Mark struct {
	Step Step
	ID   uint64
	T    int64
}

// write writes marks as text lines "step id t".
func write(w io.Writer, marks []Mark) error {
	bw := bufio.NewWriter(w)
	for _, m := range marks {
		fmt.Fprintf(bw, "%d %d %d\n", m.Step, m.ID, m.T)
	}
	return bw.Flush()
}

// Read reads every mark file in dir.
func Read(dir string) ([]Mark, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.marks"))
	if err != nil {
		return nil, err
	}
	var out []Mark
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for line := range strings.Lines(string(b)) {
			if m, ok := parse(line); ok {
				out = append(out, m)
			}
		}
	}
	return out, nil
}

// parse reads one line "step id t"; a line that is not one is skipped.
func parse(line string) (Mark, bool) {
	f := strings.Fields(line)
	if len(f) != 3 {
		return Mark{}, false
	}
	s, err1 := strconv.ParseUint(f[0], 10, 8)
	id, err2 := strconv.ParseUint(f[1], 10, 64)
	t, err3 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || s == 0 || Step(s) >= nSteps {
		return Mark{}, false
	}
	return Mark{Step: Step(s), ID: id, T: t}, true
}

// Row is one line of the table: the median time from one step to the
// next, over the jobs (or turns) that went through both.
type Row struct {
	What   string
	Median float64 // milliseconds
	Mean   float64 // milliseconds: what the rate pays, tails included
	Count  int
}

// span is one row's definition: from step a to step b of the same job;
// or, with next, from where the row before left each job (its step a,
// or the turn step the row before found) to the first turn step b after
// it, so that a job's end is followed through the turn that took it; or,
// with last, from the last turn step a before a job's step b.
type span struct {
	what       string
	a, b       Step
	next, last bool
}

var spans = []span{
	{what: "the runner: reaped, to the job's end (cgroup empty, output drained)", a: AgentReaped, b: AgentEnded},
	{what: "the end into the agent's journal", a: AgentEnded, b: AgentEndWritten},
	{what: "finish and release queued on the agent's socket", a: AgentEndWritten, b: AgentEndSent},
	{what: "the agent's socket to the exec service", a: AgentEndSent, b: ExecEndIn},
	{what: "the exec service to the loop's turn", a: ExecEndIn, b: LoopEndIn},
	{what: "handled, to the exchange's end (free, allocation, start request)", a: LoopEndIn, b: TurnExchanged, next: true},
	{what: "exchanged, to the commit's beginning (linger, more inputs)", a: TurnExchanged, b: TurnCommit, next: true},
	{what: "the turn's commit (bbolt: pages, two fdatasyncs)", a: TurnCommit, b: TurnCommitted, next: true},
	{what: "committed, to the start sent", a: TurnCommitted, b: LoopStartOut, last: true},
	{what: "the loop to the exec service, to the agent's socket", a: LoopStartOut, b: ExecStartOut},
	{what: "the agent's socket to the agent", a: ExecStartOut, b: AgentStartIn},
	{what: "runner.Prepare (cgroup, folder)", a: AgentStartIn, b: AgentPrepared},
	{what: "the launch record into the journal", a: AgentPrepared, b: AgentLaunchWritten},
	{what: "to the launcher goroutine", a: AgentLaunchWritten, b: AgentForking},
	{what: "runner.Launch: output, pipes and program looked up", a: AgentForking, b: RunnerSetUp},
	{what: "runner.Launch: the thread bound to the task's core", a: RunnerSetUp, b: RunnerForkIn},
	{what: "runner.Launch: ForkExec (returns at the child's exec, on its core)", a: RunnerForkIn, b: RunnerForkOut},
	{what: "runner.Launch: the rest, to its return", a: RunnerForkOut, b: AgentLaunched},
	{what: "the job runs (`true`), its exit reaped", a: AgentLaunched, b: AgentReaped},
}

// Table computes the rows from marks. The sum of the means is one slot's
// cycle, as the wall clock measures it (jobs × cycle ÷ slots is the run's
// time); the medians say what a step costs when nothing else is in its
// way.
func Table(marks []Mark) []Row {
	byStep := map[Step]map[uint64]int64{}
	var turnTimes [nSteps][]int64
	for _, m := range marks {
		if byStep[m.Step] == nil {
			byStep[m.Step] = map[uint64]int64{}
		}
		if old, ok := byStep[m.Step][m.ID]; !ok || m.T < old {
			byStep[m.Step][m.ID] = m.T
		}
		turnTimes[m.Step] = append(turnTimes[m.Step], m.T)
	}
	for i := range turnTimes {
		slices.Sort(turnTimes[i])
	}
	var rows []Row
	var at map[uint64]int64 // where the last row left each job
	for _, s := range spans {
		var d []float64
		from := at
		at = map[uint64]int64{}
		switch {
		case s.next:
			// From where each job is to the first mark b after it.
			if len(from) == 0 {
				from = byStep[s.a]
			}
			for id, t := range from {
				ts := turnTimes[s.b]
				i, _ := slices.BinarySearch(ts, t)
				if i < len(ts) {
					d = append(d, float64(ts[i]-t)/1e6)
					at[id] = ts[i]
				}
			}
		case s.last:
			for _, t := range byStep[s.b] {
				ts := turnTimes[s.a]
				i, _ := slices.BinarySearch(ts, t)
				if i > 0 {
					d = append(d, float64(t-ts[i-1])/1e6)
				}
			}
		default:
			for id, ta := range byStep[s.a] {
				if tb, ok := byStep[s.b][id]; ok && tb >= ta {
					d = append(d, float64(tb-ta)/1e6)
					at[id] = tb
				}
			}
		}
		rows = append(rows, Row{What: s.what, Median: median(d), Mean: mean(d), Count: len(d)})
	}
	return rows
}

func mean(d []float64) float64 {
	if len(d) == 0 {
		return 0
	}
	var sum float64
	for _, v := range d {
		sum += v
	}
	return sum / float64(len(d))
}

func median(d []float64) float64 {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[len(d)/2]
}

// Print writes the table as the page's markdown, with the sums.
func Print(w io.Writer, rows []Row) {
	fmt.Fprintln(w, "| step | median | mean | n |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	var sum, sumMean float64
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %.3f ms | %.3f ms | %d |\n", r.What, r.Median, r.Mean, r.Count)
		sum += r.Median
		sumMean += r.Mean
	}
	fmt.Fprintf(w, "| **the cycle: the sums** | %.3f ms | %.3f ms | |\n", sum, sumMean)
}
