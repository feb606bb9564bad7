package sim

import (
	"bufio"
	stdcmp "cmp"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/sched"
	"github.com/fluxq/fluxq/internal/swf"
)

// rec is one SWF line with the fields the simulator reads (1 job number,
// 2 submit, 4 run, 5 allocated procs, 8 requested procs, 9 requested time)
// and -1, the archive's "unknown", everywhere else.
func rec(number, submit, run, procs, reqProcs, reqTime int64) string {
	return fmt.Sprintf("%d %d -1 %d %d -1 -1 %d %d -1 -1 -1 -1 -1 -1 -1 -1 -1",
		number, submit, run, procs, reqProcs, reqTime)
}

// job is the common record: cores in fields 5 and 8, requested time in 9.
func job(number, submit, run, cores, requested int64) string {
	return rec(number, submit, run, cores, cores, requested)
}

// trace joins records into an SWF file, with a comment header as real
// traces have.
func trace(lines ...string) string {
	return "; MaxProcs: 99\n" + strings.Join(lines, "\n") + "\n"
}

// machine is nodes hosts of cores cores each.
func machine(t testing.TB, nodes, cores int) *rset.R {
	t.Helper()
	inv, err := Machine(nodes, cores, 0)
	if err != nil {
		t.Fatalf("machine %dx%d: %v", nodes, cores, err)
	}
	return inv
}

// simulate reads text as SWF and runs it.
func simulate(t testing.TB, text string, inv *rset.R, policy sched.QueuePolicy, samples bool) *Result {
	t.Helper()
	jobs, _, err := swf.Read(strings.NewReader(text))
	if err != nil {
		t.Fatalf("trace: %v", err)
	}
	res, err := Run(Config{Jobs: jobs, Inventory: inv, Policy: policy, TempDir: t.TempDir(), Samples: samples})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

var (
	fcfs         = sched.QueuePolicy{Kind: sched.FCFS}
	easy         = sched.QueuePolicy{Kind: sched.EASY}
	conservative = sched.QueuePolicy{Kind: sched.Conservative}
	hybrid1      = sched.QueuePolicy{Kind: sched.Hybrid, ReservationDepth: 1}
	hybrid2      = sched.QueuePolicy{Kind: sched.Hybrid, ReservationDepth: 2}
)

// Traces shared by several cases below. Notation in the reasoning: a job
// is named by its number; "free" is free cores; every run equals its
// requested time unless said otherwise.

// blocked: 4 cores. 1 (3 cores, 10 s) runs first; 2 needs all 4; 3 is a
// small short job that could fill the spare core.
var blocked = trace(
	job(1, 0, 10, 3, 10),
	job(2, 1, 5, 4, 5),
	job(3, 2, 3, 1, 3),
)

// reservations: 4 cores. 2 and 3 wait behind 1; 4 is long and small.
var reservations = trace(
	job(1, 0, 10, 2, 10),
	job(2, 1, 10, 3, 10),
	job(3, 1, 10, 4, 10),
	job(4, 2, 25, 1, 25),
)

// depths: 2 nodes x 3 cores = 6. Three big jobs (2, 3, 4) wait behind 1;
// 5 collides only with 3's reservation, 6 only with 4's, so easy,
// hybrid with depth 2 and conservative each start a different one.
var depths = trace(
	job(1, 0, 20, 4, 20),
	job(2, 1, 10, 3, 10),
	job(3, 1, 10, 5, 10),
	job(4, 1, 10, 6, 10),
	job(5, 2, 35, 2, 35),
	job(6, 2, 45, 1, 45),
)

// denial: 4 cores. 1 asks for 8 and is the earliest submit.
var denial = trace(job(1, 100, 10, 8, 10), job(2, 105, 10, 4, 10), job(3, 110, 5, 2, 5))

// skips: 2 cores. Three records that are skipped, one denied (7 asks
// for 3 cores) and two that run, with fields 8 and 9 unknown in turn.
var skips = trace(
	rec(1, 0, 10, 0, -1, 10),
	rec(2, -5, 10, 1, 1, 10),
	rec(3, 20, -1, 1, 1, 10),
	rec(4, 50, 10, 2, -1, -1),
	rec(5, 60, 7, -1, 1, -1),
	job(7, 55, 5, 3, 5),
)

func TestRunSchedule(t *testing.T) {
	tests := []struct {
		name   string
		trace  string
		nodes  int
		cores  int // per node
		policy sched.QueuePolicy
		want   []Entry
	}{
		// fcfs, 4 cores. t=0: 1 starts (3/4 busy). t=1: 2 (4 cores)
		// does not fit in 1 free: the pass stops. t=2: 3 (1 core) would
		// fit, but fcfs stops at the head 2: no backfill. t=10: 1 ends,
		// 2 starts (4/4) until 15; 3 does not fit. t=15: 3 starts, ends 18.
		{
			name: "fcfs head blocks smaller jobs behind it", trace: blocked, nodes: 1, cores: 4, policy: fcfs,
			want: []Entry{{1, 0, 0, 10, 3}, {2, 1, 10, 15, 4}, {3, 2, 15, 18, 1}},
		},
		// easy, same trace. t=1: 2 cannot fit (1 free); shadow time 10
		// (1 ends, 4 free), extra 4-4 = 0. t=2: 3 (1 core, 3 s) fits now
		// and ends at 5 <= 10: backfilled, 2..5. t=10: 2 starts on time.
		{
			name: "easy backfills a short job before the shadow time", trace: blocked, nodes: 1, cores: 4, policy: easy,
			want: []Entry{{1, 0, 0, 10, 3}, {2, 1, 10, 15, 4}, {3, 2, 2, 5, 1}},
		},
		// easy, 4 cores. t=0: 1 starts (3/4). t=1: 2 (4 cores) cannot
		// fit; shadow 10, extra 0. t=2: 3 (1 core, 20 s) fits now but
		// ends at 22 > 10 and needs 1 > extra 0: it would delay 2, so it
		// waits. t=10: 2 starts (4/4) until 15. t=15: 3 starts, ends 35.
		{
			name:  "easy does not start a long job beyond the extra cores",
			trace: trace(job(1, 0, 10, 3, 10), job(2, 1, 5, 4, 5), job(3, 2, 20, 1, 20)),
			nodes: 1, cores: 4, policy: easy,
			want: []Entry{{1, 0, 0, 10, 3}, {2, 1, 10, 15, 4}, {3, 2, 15, 35, 1}},
		},
		// easy, 4 cores. t=0: 1 starts (2/4). t=1: 2 (3 cores) cannot
		// fit in 2 free; shadow 10 (1 ends, 4 free), extra 4-3 = 1.
		// t=2: 3 (1 core, ends 22 > 10) uses 1 <= extra 1: starts, extra
		// now 0, free 1. 4 (1 core, ends 22) fits in the free core, but
		// 1 > extra 0: waits. t=10: 1 ends, free 3: 2 starts (shadow
		// kept) until 15, free 0. t=15: 2 ends, 4 starts, ends 35.
		{
			name:  "easy long job takes the extra cores and a second does not",
			trace: trace(job(1, 0, 10, 2, 10), job(2, 1, 5, 3, 5), job(3, 2, 20, 1, 20), job(4, 2, 20, 1, 20)),
			nodes: 1, cores: 4, policy: easy,
			want: []Entry{{1, 0, 0, 10, 2}, {2, 1, 10, 15, 3}, {3, 2, 2, 22, 1}, {4, 2, 15, 35, 1}},
		},
		// easy, 4 cores. t=1: 2 (3 cores) blocked, shadow 10, extra 1.
		// t=2: 3 (1 core, 8 s) ends at 10 <= shadow 10: started by the
		// first rule, and takes nothing from the extra (still 1). 4 (1
		// core, ends 22 > 10) fits in the last free core and 1 <= extra
		// 1: starts. Had 3 taken the extra, 4 would wait. t=10: 1 and 3
		// end, free 3: 2 starts until 15. 4 ends at 22.
		{
			name:  "easy job ending by the shadow time takes nothing from the extra",
			trace: trace(job(1, 0, 10, 2, 10), job(2, 1, 5, 3, 5), job(3, 2, 8, 1, 8), job(4, 2, 20, 1, 20)),
			nodes: 1, cores: 4, policy: easy,
			want: []Entry{{1, 0, 0, 10, 2}, {2, 1, 10, 15, 3}, {3, 2, 2, 10, 1}, {4, 2, 2, 22, 1}},
		},
		// easy, 4 cores. 1 asked for 20 s but runs 5. t=1: 2 (4 cores)
		// blocked; the shadow time counts 1 as ending at its requested
		// 20, extra 0. 3 (1 core) ends at 11 <= 20: backfilled 1..11.
		// t=5: 1 ends early, free 3: 2 still cannot start (shadow now
		// 11, when 3 ends). t=11: 2 starts until 21.
		{
			name:  "easy plans with requested times, not run times",
			trace: trace(job(1, 0, 5, 2, 20), job(2, 1, 10, 4, 10), job(3, 1, 10, 1, 10)),
			nodes: 1, cores: 4, policy: easy,
			want: []Entry{{1, 0, 0, 5, 2}, {2, 1, 11, 21, 4}, {3, 1, 1, 11, 1}},
		},
		// easy, 4 cores. t=0: 1 (2 cores) until 10. t=1: 2 (3 cores)
		// blocked, shadow 10, extra 1; 3 (4 cores) does not fit.
		// t=2: 4 (1 core, ends 27 > 10) uses 1 <= extra 1: starts.
		// t=10: 1 ends, free 3: 2 starts until 20. t=20: 2 ends, free 3
		// (4 holds 1): 3 (4 cores) waits for 4 until 27, ends 37.
		{
			name: "easy starts a job that delays the second waiting job", trace: reservations, nodes: 1, cores: 4, policy: easy,
			want: []Entry{{1, 0, 0, 10, 2}, {2, 1, 10, 20, 3}, {3, 1, 27, 37, 4}, {4, 2, 2, 27, 1}},
		},
		// conservative, same trace. t=1: 2 reserved at 10..20 (3 cores,
		// 1 left), 3 (4 cores) reserved at 20..30 (0 left). t=2: 4 (1
		// core, 25 s) now would run 2..27, over 3's reservation where 0
		// are left: it does not start; its reservation is 30..55.
		// t=10: 2 starts; 4 (10..35) still meets 3's. t=20: 3 starts
		// on its reservation. t=30: 4 starts, ends 55.
		{
			name: "conservative honours the second waiting job's reservation", trace: reservations, nodes: 1, cores: 4, policy: conservative,
			want: []Entry{{1, 0, 0, 10, 2}, {2, 1, 10, 20, 3}, {3, 1, 20, 30, 4}, {4, 2, 30, 55, 1}},
		},
		// easy, 6 cores. t=0: 1 (4 cores) until 20, free 2. t=1: 2 (3)
		// blocked: shadow 20 (6 free), extra 3; 3 (5), 4 (6) do not fit
		// now. t=2: 5 (2 cores, ends 37 > 20) uses 2 <= extra 3: starts,
		// free 0; 6 cannot fit. t=20: 1 ends, free 4: 2 starts until 30,
		// free 1. 3 (5) blocked: shadow 37 (2 ends at 30: 4 free; 5 ends
		// at 37: 6 free), extra 1. 4 does not fit. 6 (1 core, ends 65 >
		// 37) uses 1 <= extra 1: starts. t=30: free 3, 3 waits (shadow
		// 37, extra 0). t=37: 5 ends, free 5: 3 starts until 47.
		// t=47: free 5, 4 (6) waits for 6. t=65: 4 starts until 75.
		{
			name: "easy backfills past every reservation but the head's", trace: depths, nodes: 2, cores: 3, policy: easy,
			want: []Entry{{1, 0, 0, 20, 4}, {2, 1, 20, 30, 3}, {3, 1, 37, 47, 5}, {4, 1, 65, 75, 6}, {5, 2, 2, 37, 2}, {6, 2, 20, 65, 1}},
		},
		// hybrid with depth 1 is easy (docs/simulation.md): the same schedule.
		{
			name: "hybrid depth 1 is easy", trace: depths, nodes: 2, cores: 3, policy: hybrid1,
			want: []Entry{{1, 0, 0, 20, 4}, {2, 1, 20, 30, 3}, {3, 1, 37, 47, 5}, {4, 1, 65, 75, 6}, {5, 2, 2, 37, 2}, {6, 2, 20, 65, 1}},
		},
		// hybrid depth 2, 6 cores. t=1: 2 reserved 20..30 (3 left),
		// 3 reserved 30..40 (1 left); 4 is the third that cannot start:
		// no reservation, passed over. t=2: 5 (2 cores, 2..37) meets
		// 3's reservation (1 left): passed over. 6 (1 core, 2..47): 2
		// free now, 3 left at 20..30, 1 at 30..40, 6 after: starts.
		// t=20: 1 ends, free 5: 2 starts until 30 (free 2). 3 reserved
		// 30..40 (6 free then minus 6's 1 = 5), 4 reserved after 6 ends:
		// 47..57. 5 (20..55) meets 3's reservation: passed over. t=30:
		// 3 starts until 40, free 0. t=40: free 5; 4 reserved 47..57;
		// 5 (40..75) meets it: reserved 57..92. t=47: 6 ends, 4 starts.
		// t=57: 5 starts, ends 92.
		{
			name: "hybrid depth 2 reserves two jobs and backfills past the third", trace: depths, nodes: 2, cores: 3, policy: hybrid2,
			want: []Entry{{1, 0, 0, 20, 4}, {2, 1, 20, 30, 3}, {3, 1, 30, 40, 5}, {4, 1, 47, 57, 6}, {5, 2, 57, 92, 2}, {6, 2, 2, 47, 1}},
		},
		// conservative, 6 cores. t=1: 2 at 20..30, 3 at 30..40, 4 at
		// 40..50 (0 left). t=2: 5 (2..37) meets 3's (1 left): reserved
		// 50..85; 6 (2..47) meets 4's (0 left): reserved 50..95 (4 left
		// beside 5). t=20: 2 starts; t=30: 3; t=40: 4; neither 5 nor 6
		// can run before 50 without meeting 3's or 4's. t=50: 4 ends,
		// 5 and 6 start.
		{
			name: "conservative reserves every waiting job", trace: depths, nodes: 2, cores: 3, policy: conservative,
			want: []Entry{{1, 0, 0, 20, 4}, {2, 1, 20, 30, 3}, {3, 1, 30, 40, 5}, {4, 1, 40, 50, 6}, {5, 2, 50, 85, 2}, {6, 2, 50, 95, 1}},
		},
		// fcfs, 2 cores. 1 runs 30 s but asked for 10: killed at 0+10.
		// t=1: 2 (2 cores) waits; t=10: the machine is free, 2 starts
		// until 15. 3 runs 3 s of the 100 it asked for: 15..18.
		{
			name:  "a job over its requested time is killed then",
			trace: trace(job(1, 0, 30, 2, 10), job(2, 1, 5, 2, 5), job(3, 2, 3, 1, 100)),
			nodes: 1, cores: 2, policy: fcfs,
			want: []Entry{{1, 0, 0, 10, 2}, {2, 1, 10, 15, 2}, {3, 2, 15, 18, 1}},
		},
		// easy, 3 cores. 1 asked for 10 but runs 30: the shadow time of
		// the head 2 (3 cores) is 10, when 1 is killed, extra 0. 3 (1
		// core) ends at 1+5 = 6 <= 10: backfilled 1..6. t=10: 1 is
		// killed and 2 starts then, until 15.
		{
			name:  "a killed job frees the machine at its requested time under easy",
			trace: trace(job(1, 0, 30, 2, 10), job(2, 1, 5, 3, 5), job(3, 1, 5, 1, 5)),
			nodes: 1, cores: 3, policy: easy,
			want: []Entry{{1, 0, 0, 10, 2}, {2, 1, 10, 15, 3}, {3, 1, 1, 6, 1}},
		},
		// 4 cores. Job 1 asks for 8: denied, gone, but its submit (100)
		// is time zero. 2 submits at 5, starts at once until 15; 3 (10)
		// waits for 2's cores (fcfs) and runs 15..20.
		{
			name: "a denied job leaves no mark but sets time zero", trace: denial, nodes: 1, cores: 4, policy: fcfs,
			want: []Entry{{2, 5, 5, 15, 4}, {3, 10, 15, 20, 2}},
		},
		// Skipped records do not set time zero: 1 (submit 0, no cores),
		// 2 (submit -5) and 3 (run -1) are skipped; 7 (3 cores on 2) is
		// denied at 55. Time zero is 50, job 4's submit. 4 takes its
		// cores from field 5 (field 8 unknown) and its requested time
		// from its run (field 9 unknown): 0..10. 5 takes cores from field
		// 8 (field 5 unknown): submits at 10 and starts at once.
		{
			name: "skipped records and field fallbacks", trace: skips, nodes: 1, cores: 2, policy: fcfs,
			want: []Entry{{4, 0, 0, 10, 2}, {5, 10, 10, 17, 1}},
		},
		// fcfs, 2 cores. t=0: 1 (run 0, 2 cores) starts; 2 does not fit.
		// 1 ends at once: another pass at t=0 starts 2 (run 0), which
		// ends at once too; a third pass starts 3, until 10.
		{
			name:  "run time 0 ends at its start and the next job starts then",
			trace: trace(job(1, 0, 0, 2, 5), job(2, 0, 0, 2, 5), job(3, 0, 10, 2, 10)),
			nodes: 1, cores: 2, policy: fcfs,
			want: []Entry{{1, 0, 0, 0, 2}, {2, 0, 0, 0, 2}, {3, 0, 0, 10, 2}},
		},
		// easy, 2 cores. t=0: 1 (1 core) until 10. t=1: 2 (2 cores)
		// blocked, shadow 10, extra 0. t=2: 3 has run 0 and no requested
		// time, so its requested time is its run, 0: it ends at 2+0 <=
		// 10 and is backfilled, ending at 2.
		{
			name:  "easy backfills a job whose requested time is 0",
			trace: trace(job(1, 0, 10, 1, 10), job(2, 1, 10, 2, 10), rec(3, 2, 0, 1, 1, -1)),
			nodes: 1, cores: 2, policy: easy,
			want: []Entry{{1, 0, 0, 10, 1}, {2, 1, 10, 20, 2}, {3, 2, 2, 2, 1}},
		},
		// conservative, same trace. t=1: 2 reserved 10..20 (0 left then).
		// t=2: 3 fits now for its requested time, 0 s: it starts and ends
		// at 2, before 2's reservation.
		{
			name:  "conservative starts a job whose requested time is 0",
			trace: trace(job(1, 0, 10, 1, 10), job(2, 1, 10, 2, 10), rec(3, 2, 0, 1, 1, -1)),
			nodes: 1, cores: 2, policy: conservative,
			want: []Entry{{1, 0, 0, 10, 1}, {2, 1, 10, 20, 2}, {3, 2, 2, 2, 1}},
		},
		// fcfs, 2 cores. 1 runs 0..10. 2 is submitted at 10, the instant
		// 1 ends: 1's cores are freed first, then 2 is queued and the
		// pass starts it at 10.
		{
			name:  "an end frees cores before a submission at the same instant",
			trace: trace(job(1, 0, 10, 2, 10), job(2, 10, 5, 2, 5)),
			nodes: 1, cores: 2, policy: fcfs,
			want: []Entry{{1, 0, 0, 10, 2}, {2, 10, 10, 15, 2}},
		},
		// fcfs, 2 cores. 3 (submit 5) waits for 1; at 10, 1 ends, 2 is
		// submitted and queued behind 3, and the one pass starts 3 (the
		// earlier submit) until 15; 2 follows 15..20.
		{
			name:  "a job already waiting goes before one submitted at the end",
			trace: trace(job(1, 0, 10, 2, 10), job(2, 10, 5, 2, 5), job(3, 5, 5, 2, 5)),
			nodes: 1, cores: 2, policy: fcfs,
			want: []Entry{{1, 0, 0, 10, 2}, {2, 10, 15, 20, 2}, {3, 5, 10, 15, 2}},
		},
		// fcfs, 1 core. Queue at t=0: submit 0 first, then job number
		// (3 before 5), then trace line (the 3 of line 2, 10 s, before
		// the 3 of line 3, 4 s). 1 submits later, so comes last despite
		// its number. Runs: 3a 0..10, 3b 10..14, 5 14..24, 1 24..34.
		// The schedule lists them in trace order.
		{
			name:  "queue order is submit, job number, trace position",
			trace: trace(job(5, 0, 10, 1, 10), job(3, 0, 10, 1, 10), job(3, 0, 4, 1, 4), job(1, 1, 10, 1, 10)),
			nodes: 1, cores: 1, policy: fcfs,
			want: []Entry{{5, 0, 14, 24, 1}, {3, 0, 0, 10, 1}, {3, 0, 10, 14, 1}, {1, 1, 24, 34, 1}},
		},
		// Slots spread over nodes: 3 nodes of 1 core each run a 3-core
		// job, and a 2-core job then fits on the 2 nodes left by a
		// 1-core one.
		{
			name:  "a job's cores may spread over nodes",
			trace: trace(job(1, 0, 10, 3, 10), job(2, 1, 10, 1, 10), job(3, 1, 10, 2, 10)),
			nodes: 3, cores: 1, policy: fcfs,
			want: []Entry{{1, 0, 0, 10, 3}, {2, 1, 10, 20, 1}, {3, 1, 10, 20, 2}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := simulate(t, tt.trace, machine(t, tt.nodes, tt.cores), tt.policy, false)
			if diff := cmp.Diff(tt.want, res.Schedule); diff != "" {
				t.Errorf("schedule (-want +got):\n%s", diff)
			}
		})
	}
}

// approx compares the summary's means, which are sums of quotients.
var approx = cmpopts.EquateApprox(0, 1e-12)

func TestRunSummary(t *testing.T) {
	tests := []struct {
		name   string
		trace  string
		cores  int
		policy sched.QueuePolicy
		want   Summary
	}{
		// The "blocked" trace under fcfs on 4 cores: 1 at 0..10 (3
		// cores), 2 at 10..15 (4), 3 at 15..18 (1). makespan 18; core
		// seconds 30+20+3 = 53 of 4x18 = 72; waits 0, 9, 13 (mean 22/3,
		// max 13); bounded slowdown max(1, (w+r)/max(r,10)): 10/10 = 1,
		// 14/10 = 1.4, 16/10 = 1.6, mean 4/3; turnaround 10, 14, 16,
		// mean 40/3.
		{
			name: "figures of a small fcfs case", trace: blocked, cores: 4, policy: fcfs,
			want: Summary{
				Jobs: 3, Makespan: 18, Utilization: 53.0 / 72, MeanWait: 22.0 / 3, MaxWait: 13,
				MeanBoundedSlowdown: 4.0 / 3, MeanTurnaround: 40.0 / 3,
			},
		},
		// The same under easy: 1 at 0..10, 2 at 10..15, 3 at 2..5.
		// makespan 15; 53 core seconds of 60; waits 0, 9, 0; slowdowns
		// 1, 1.4, max(1, 3/10) = 1; turnarounds 10, 14, 3.
		{
			name: "figures of the same trace under easy", trace: blocked, cores: 4, policy: easy,
			want: Summary{
				Jobs: 3, Makespan: 15, Utilization: 53.0 / 60, MeanWait: 3, MaxWait: 9,
				MeanBoundedSlowdown: 3.4 / 3, MeanTurnaround: 9,
			},
		},
		// A killed job's run is what it used: 1 asked 10, ran 10 of 30.
		// 2 waits 10 and runs 5: slowdown (10+5)/10 = 1.5.
		{
			name:  "a killed job counts its requested time",
			trace: trace(job(1, 0, 30, 2, 10), job(2, 0, 5, 2, 5)),
			cores: 2, policy: fcfs,
			want: Summary{
				Jobs: 2, Makespan: 15, Utilization: 30.0 / 30, MeanWait: 5, MaxWait: 10,
				MeanBoundedSlowdown: 2.5 / 2, MeanTurnaround: 12.5,
			},
		},
		// "denial": 2 at 5..15 (4 cores), 3 at 15..20 (2), 1 denied.
		// makespan 20; 40+10 core seconds of 4x20; waits 0, 5;
		// slowdowns 10/10 = 1 and (5+5)/10 = 1; turnarounds 10, 10.
		{
			name: "a denied job is counted and nothing else", trace: denial, cores: 4, policy: fcfs,
			want: Summary{
				Jobs: 2, Denied: 1, Makespan: 20, Utilization: 50.0 / 80, MeanWait: 2.5, MaxWait: 5,
				MeanBoundedSlowdown: 1, MeanTurnaround: 10,
			},
		},
		// "skips": 4 at 0..10 (2 cores), 5 at 10..17 (1); 3 skipped, 1
		// denied. makespan 17; 20+7 core seconds of 2x17; no wait;
		// slowdowns 1 and max(1, 7/10) = 1; turnarounds 10, 7.
		{
			name: "skipped and denied records are counted", trace: skips, cores: 2, policy: fcfs,
			want: Summary{
				Jobs: 2, Skipped: 3, Denied: 1, Makespan: 17, Utilization: 27.0 / 34,
				MeanBoundedSlowdown: 1, MeanTurnaround: 8.5,
			},
		},
		// Nothing starts: one record skipped (no cores), one denied.
		{
			name:  "every figure is 0 with no started job",
			trace: trace(rec(1, 0, 10, -1, -1, 10), job(2, 0, 10, 9, 10)),
			cores: 2, policy: easy,
			want: Summary{Skipped: 1, Denied: 1},
		},
		{
			name: "an empty trace", trace: trace(), cores: 2, policy: fcfs,
			want: Summary{},
		},
		// Only jobs of run time 0: makespan 0, and utilization 0 rather
		// than 0/0.
		{
			name:  "makespan 0",
			trace: trace(job(1, 0, 0, 1, 5), job(2, 0, 0, 1, 5)),
			cores: 2, policy: fcfs,
			want: Summary{Jobs: 2, MeanBoundedSlowdown: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := simulate(t, tt.trace, machine(t, 1, tt.cores), tt.policy, false)
			if diff := cmp.Diff(tt.want, res.Summary, approx); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
			// docs/simulation.md: the three counts add up to the records.
			jobs, _, _ := swf.Read(strings.NewReader(tt.trace))
			if got := res.Summary.Jobs + res.Summary.Skipped + res.Summary.Denied; got != len(jobs) {
				t.Errorf("jobs+skipped+denied = %d, want the %d records", got, len(jobs))
			}
			if len(res.Schedule) != res.Summary.Jobs {
				t.Errorf("schedule has %d entries for %d started jobs", len(res.Schedule), res.Summary.Jobs)
			}
		})
	}
}

func TestRunSamples(t *testing.T) {
	tests := []struct {
		name   string
		trace  string
		cores  int
		policy sched.QueuePolicy
		want   []Sample
	}{
		// "blocked" under fcfs on 4 cores. t=0: 1 runs, 3/4 busy, none
		// queued. t=1: 2 queued. t=2: 3 queued too. t=10: 1 ends, 2 runs
		// 4/4, 3 queued. t=15: 3 runs alone, 1/4. t=18: idle.
		{
			name: "fcfs", trace: blocked, cores: 4, policy: fcfs,
			want: []Sample{{0, 0.75, 0}, {1, 0.75, 1}, {2, 0.75, 2}, {10, 1, 1}, {15, 0.25, 0}, {18, 0, 0}},
		},
		// Under easy, 3 backfills at 2, so t=2 is 4/4 busy with 2 queued
		// and 3's end at 5 is its own sample.
		{
			name: "easy", trace: blocked, cores: 4, policy: easy,
			want: []Sample{{0, 0.75, 0}, {1, 0.75, 1}, {2, 1, 1}, {5, 0.75, 1}, {10, 1, 0}, {15, 0, 0}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := simulate(t, tt.trace, machine(t, 1, tt.cores), tt.policy, true)
			if diff := cmp.Diff(tt.want, res.Samples); diff != "" {
				t.Errorf("samples (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("none unless asked", func(t *testing.T) {
		res := simulate(t, blocked, machine(t, 1, 4), fcfs, false)
		if len(res.Samples) != 0 {
			t.Errorf("got %d samples without Config.Samples, want none", len(res.Samples))
		}
	})
}

func TestRunErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{name: "no machine", cfg: Config{Jobs: []swf.Job{{Number: 1, Run: 1, Procs: 1}}}, want: "no machine to simulate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.TempDir = t.TempDir()
			_, err := Run(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Run: got error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// records counts a trace file's job lines on its own, without swf.Read.
func records(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, ";") {
			n++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRunRealTraces replays the bundled archive traces under easy and
// checks what must hold of any correct schedule.
func TestRunRealTraces(t *testing.T) {
	if testing.Short() {
		t.Skip("replays thousands of jobs")
	}
	tests := []struct {
		name  string
		path  string
		nodes int
		cores int
	}{
		{name: "hpc2n", path: "../../testdata/swf/hpc2n-excerpt.swf", nodes: 120, cores: 2}, // MaxProcs 240
		{name: "lublin", path: "../../testdata/swf/lublin_256.swf", nodes: 256, cores: 1},   // MaxNodes 256
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jobs := readTrace(t, tt.path)
			total := int64(tt.nodes * tt.cores)
			res, err := Run(Config{Jobs: jobs, Inventory: machine(t, tt.nodes, tt.cores), Policy: easy, TempDir: t.TempDir()})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			sum := res.Summary
			if got, want := sum.Jobs+sum.Skipped+sum.Denied, records(t, tt.path); got != want {
				t.Errorf("jobs %d + skipped %d + denied %d = %d, want the %d records", sum.Jobs, sum.Skipped, sum.Denied, got, want)
			}
			if sum.Jobs != len(res.Schedule) || sum.Jobs == 0 {
				t.Errorf("%d started jobs, %d schedule entries: want equal and not 0", sum.Jobs, len(res.Schedule))
			}

			// The schedule is in trace order: match each entry to the
			// next trace job of its number that takes part.
			zero := int64(-1)
			for _, j := range jobs {
				if j.Cores() > 0 && j.Submit >= 0 && j.Run >= 0 && (zero < 0 || j.Submit < zero) {
					zero = j.Submit
				}
			}
			k := 0
			type event struct{ at, delta int64 }
			var events []event
			var makespan int64
			for _, e := range res.Schedule {
				for k < len(jobs) && (jobs[k].Number != e.ID || jobs[k].Cores() > total || jobs[k].Cores() <= 0 || jobs[k].Submit < 0 || jobs[k].Run < 0) {
					k++
				}
				if k == len(jobs) {
					t.Fatalf("entry %+v: no trace job of that number in trace order", e)
				}
				j := jobs[k]
				k++
				if e.Submit != j.Submit-zero || e.Cores != j.Cores() {
					t.Errorf("entry %+v: submit, cores of trace line %d are %d, %d", e, j.Line, j.Submit-zero, j.Cores())
				}
				if e.Start < e.Submit {
					t.Errorf("entry %+v starts before its submit", e)
				}
				if got, want := e.End-e.Start, min(j.Run, j.Requested()); got != want {
					t.Errorf("entry %+v runs %d s, want min(run %d, requested %d) = %d", e, got, j.Run, j.Requested(), want)
				}
				events = append(events, event{e.Start, e.Cores}, event{e.End, -e.Cores})
				makespan = max(makespan, e.End)
			}
			if sum.Makespan != makespan {
				t.Errorf("makespan %d, want the last end %d", sum.Makespan, makespan)
			}
			// Never more cores busy than the machine has: at one instant
			// the ends come before the starts.
			slices.SortFunc(events, func(a, b event) int {
				if a.at != b.at {
					return stdcmp.Compare(a.at, b.at)
				}
				return stdcmp.Compare(a.delta, b.delta)
			})
			busy := int64(0)
			for _, ev := range events {
				busy += ev.delta
				if busy > total {
					t.Fatalf("t=%d: %d cores busy on a machine of %d", ev.at, busy, total)
				}
			}
		})
	}
}

// readTrace reads an SWF trace file of the repository's testdata.
func readTrace(tb testing.TB, path string) []swf.Job {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	jobs, _, err := swf.Read(f)
	if err != nil {
		tb.Fatal(err)
	}
	return jobs
}
