package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// swfJob is one trace line in the tests: SWF fields 1, 2, 4, 5 (= 8) and 9.
type swfJob struct {
	id, submit, run, cores, req int64
}

// trace writes jobs as SWF lines (fields 3, 6 and 7 unknown).
func trace(jobs ...swfJob) string {
	var b strings.Builder
	b.WriteString("; test trace\n")
	for _, j := range jobs {
		fmt.Fprintf(&b, "%d %d -1 %d %d -1 -1 %d %d -1 -1 -1 -1 -1 -1 -1 -1 -1\n",
			j.id, j.submit, j.run, j.cores, j.cores, j.req)
	}
	return b.String()
}

// at is a schedule line: id, submit, start, end, cores.
func at(id, submit, start, end, cores int64) scheduleLine {
	return scheduleLine{ID: id, Submit: submit, Start: start, End: end, Cores: cores}
}

func TestParseLine(t *testing.T) {
	tests := []struct {
		name   string
		line   string
		want   record
		wantOK bool
	}{
		{"comment", "; Version: 2.2", record{}, false},
		{"blank", "   \t ", record{}, false},
		{"full", "7 100 5 60 4 59 -1 4 120 -1 1 1", record{line: 3, id: 7, submit: 100, run: 60, req: 120, cores: 4}, true},
		// docs/simulation.md: cores = field 8, else field 5; requested time =
		// field 9, else field 4.
		{"unknown field 8 and 9", "7 100 5 60 4 59 -1 -1 -1", record{line: 3, id: 7, submit: 100, run: 60, req: 60, cores: 4}, true},
		{"field 8 zero is unknown", "7 100 5 60 4 59 -1 0 0", record{line: 3, id: 7, submit: 100, run: 60, req: 60, cores: 4}, true},
		{"field 8 wins over 5", "7 100 5 60 4 59 -1 8 90", record{line: 3, id: 7, submit: 100, run: 60, req: 90, cores: 8}, true},
		// docs/simulation.md: each field is truncated toward zero.
		{"decimals truncated", "7.9 100.7 5 60.99 4 552.21 -1 4.5 120.2", record{line: 3, id: 7, submit: 100, run: 60, req: 120, cores: 4}, true},
		{"negative decimal truncates to zero", "7 -0.5 5 -0.9 4 1 -1 4 10", record{line: 3, id: 7, submit: 0, run: 0, req: 10, cores: 4}, true},
		{"exponent", "7 1e2 5 60 4 1 -1 4 1.2e2", record{line: 3, id: 7, submit: 100, run: 60, req: 120, cores: 4}, true},
		{"trailing comment", "7 100 5 60 4 59 -1 4 120 ; note", record{line: 3, id: 7, submit: 100, run: 60, req: 120, cores: 4}, true},
		// docs/simulation.md: cores <= 0, submit < 0 or run time < 0 is skipped.
		{"no cores skipped", "7 100 5 60 -1 59 -1 -1 120", record{line: 3, id: 7, submit: 100, run: 60, req: 120, cores: -1, skipped: true}, true},
		{"negative submit skipped", "7 -1 5 60 4 59 -1 4 120", record{line: 3, id: 7, submit: -1, run: 60, req: 120, cores: 4, skipped: true}, true},
		{"negative run skipped", "7 100 5 -1 4 59 -1 4 120", record{line: 3, id: 7, submit: 100, run: -1, req: 120, cores: 4, skipped: true}, true},
		{"junk in an unused field", "7 100 x 60 4 y z 4 120", record{line: 3, id: 7, submit: 100, run: 60, req: 120, cores: 4}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := parseLine(tt.line, 3, false)
			if err != nil {
				t.Fatalf("parseLine(%q): %v", tt.line, err)
			}
			if ok != tt.wantOK {
				t.Fatalf("parseLine(%q) ok = %v, want %v", tt.line, ok, tt.wantOK)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(record{})); diff != "" {
				t.Errorf("parseLine(%q) (-want +got):\n%s", tt.line, diff)
			}
		})
	}
}

func TestParseLineErrors(t *testing.T) {
	tests := []struct {
		name string
		line string
		want string
	}{
		{"too few fields", "1 2 3 4 5 6 7 8", "line 3: want at least 9 fields, got 8"},
		{"not a number", "1 2 3 abc 5 6 7 8 9", `line 3: field 4 (run time): "abc" is not a number`},
		{"nan", "1 NaN 3 4 5 6 7 8 9", `line 3: field 2 (submit time): "NaN" is not a number`},
		{"infinite", "1 2 3 4 5 6 7 8 Inf", `line 3: field 9 (requested time): "Inf" is out of range`},
		{"huge float", "1 2 3 4 5 6 7 1e300 9", `line 3: field 8 (requested processors): "1e300" is out of range`},
		{"huge integer", "99999999999999999999 2 3 4 5 6 7 8 9", `line 3: field 1 (job number): "99999999999999999999" is out of range`},
		{"big integer", "1 2 3 4 2199023255553 6 7 8 9", `line 3: field 5 (allocated processors): "2199023255553" is out of range`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := parseLine(tt.line, 3, false)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parseLine(%q) error (-want +got):\n%s", tt.line, diff)
			}
		})
	}
}

func TestReplay(t *testing.T) {
	// Case "backfill": on 4 cores, j1 holds 3 until 10 and j2 (2 cores)
	// waits for it; j3 (1 core, 1 s) fits in the hole.
	backfill := trace(
		swfJob{id: 1, submit: 0, run: 10, cores: 3, req: 10},
		swfJob{id: 2, submit: 1, run: 5, cores: 2, req: 5},
		swfJob{id: 3, submit: 2, run: 1, cores: 1, req: 1},
	)
	// Case "second reservation": j2 is the head (shadow 10, extra 2), j3
	// needs the whole machine after j2; j4 (1 core, 25 s) fits the extra
	// cores, so EASY starts it, but it would delay j3's reservation at 20,
	// so conservative does not.
	second := trace(
		swfJob{id: 1, submit: 0, run: 10, cores: 3, req: 10},
		swfJob{id: 2, submit: 1, run: 10, cores: 2, req: 10},
		swfJob{id: 3, submit: 1, run: 10, cores: 4, req: 10},
		swfJob{id: 4, submit: 1, run: 25, cores: 1, req: 25},
	)
	// Case "tried first": j3 ends before the shadow time and so takes
	// nothing from the single extra core, which j4 (50 s) then uses.
	triedFirst := trace(
		swfJob{id: 1, submit: 0, run: 10, cores: 2, req: 10},
		swfJob{id: 2, submit: 1, run: 10, cores: 3, req: 10},
		swfJob{id: 3, submit: 1, run: 5, cores: 1, req: 5},
		swfJob{id: 4, submit: 1, run: 50, cores: 1, req: 50},
	)
	// Case "extra ties": j1 and j2 both end at 10; j1 alone makes the head
	// (2 cores) fit, but the extra counts j2 too, so j5 backfills.
	ties := trace(
		swfJob{id: 1, submit: 0, run: 10, cores: 1, req: 10},
		swfJob{id: 2, submit: 0, run: 10, cores: 1, req: 10},
		swfJob{id: 3, submit: 0, run: 20, cores: 1, req: 20},
		swfJob{id: 4, submit: 1, run: 10, cores: 2, req: 10},
		swfJob{id: 5, submit: 1, run: 100, cores: 1, req: 100},
	)
	// Case "estimates": the head's shadow time uses j1's requested time
	// (100), not its run time (10): j3 (50 s) backfills with no extra core
	// because 1+50 <= 100; j1 really ends at 10, and the head waits for j3.
	estimates := trace(
		swfJob{id: 1, submit: 0, run: 10, cores: 3, req: 100},
		swfJob{id: 2, submit: 1, run: 10, cores: 4, req: 10},
		swfJob{id: 3, submit: 1, run: 50, cores: 1, req: 50},
	)
	tests := []struct {
		name   string
		trace  string
		cores  int64
		policy string
		depth  int
		want   []scheduleLine
	}{
		{"fcfs stops at the first that does not fit", backfill, 4, policyFCFS, 64,
			[]scheduleLine{at(1, 0, 0, 10, 3), at(2, 1, 10, 15, 2), at(3, 2, 10, 11, 1)}},
		{"easy backfills a job done by the shadow time", backfill, 4, policyEASY, 64,
			[]scheduleLine{at(1, 0, 0, 10, 3), at(2, 1, 10, 15, 2), at(3, 2, 2, 3, 1)}},
		{"conservative backfills a job done by the reservation", backfill, 4, policyConservative, 64,
			[]scheduleLine{at(1, 0, 0, 10, 3), at(2, 1, 10, 15, 2), at(3, 2, 2, 3, 1)}},
		{"fcfs second reservation", second, 4, policyFCFS, 64,
			[]scheduleLine{at(1, 0, 0, 10, 3), at(2, 1, 10, 20, 2), at(3, 1, 20, 30, 4), at(4, 1, 30, 55, 1)}},
		{"easy protects only the head", second, 4, policyEASY, 64,
			[]scheduleLine{at(1, 0, 0, 10, 3), at(2, 1, 10, 20, 2), at(3, 1, 26, 36, 4), at(4, 1, 1, 26, 1)}},
		{"conservative protects every reservation", second, 4, policyConservative, 64,
			[]scheduleLine{at(1, 0, 0, 10, 3), at(2, 1, 10, 20, 2), at(3, 1, 20, 30, 4), at(4, 1, 30, 55, 1)}},
		{"hybrid depth 1 is easy", second, 4, policyHybrid, 1,
			[]scheduleLine{at(1, 0, 0, 10, 3), at(2, 1, 10, 20, 2), at(3, 1, 26, 36, 4), at(4, 1, 1, 26, 1)}},
		{"hybrid depth 2 reserves for j3", second, 4, policyHybrid, 2,
			[]scheduleLine{at(1, 0, 0, 10, 3), at(2, 1, 10, 20, 2), at(3, 1, 20, 30, 4), at(4, 1, 30, 55, 1)}},
		{"hybrid depth 0 reserves nothing", second, 4, policyHybrid, 0,
			[]scheduleLine{at(1, 0, 0, 10, 3), at(2, 1, 10, 20, 2), at(3, 1, 26, 36, 4), at(4, 1, 1, 26, 1)}},
		{"easy tried first", triedFirst, 4, policyEASY, 64,
			[]scheduleLine{at(1, 0, 0, 10, 2), at(2, 1, 10, 20, 3), at(3, 1, 1, 6, 1), at(4, 1, 1, 51, 1)}},
		{"easy extra counts ties at the shadow time", ties, 4, policyEASY, 64,
			[]scheduleLine{at(1, 0, 0, 10, 1), at(2, 0, 0, 10, 1), at(3, 0, 0, 20, 1), at(4, 1, 10, 20, 2), at(5, 1, 1, 101, 1)}},
		{"easy shadow uses requested time", estimates, 4, policyEASY, 64,
			[]scheduleLine{at(1, 0, 0, 10, 3), at(2, 1, 51, 61, 4), at(3, 1, 1, 51, 1)}},
		{"conservative profile uses requested time", estimates, 4, policyConservative, 64,
			[]scheduleLine{at(1, 0, 0, 10, 3), at(2, 1, 51, 61, 4), at(3, 1, 1, 51, 1)}},
		// docs/simulation.md: at one instant, ends free cores before submissions
		// are queued; queue order is submit, job number, trace position.
		{"ends before submissions, then job number", trace(
			swfJob{id: 1, submit: 0, run: 10, cores: 2, req: 10},
			swfJob{id: 2, submit: 10, run: 5, cores: 2, req: 5},
			swfJob{id: 5, submit: 20, run: 5, cores: 2, req: 5},
			swfJob{id: 4, submit: 20, run: 5, cores: 2, req: 5},
			swfJob{id: 4, submit: 20, run: 7, cores: 2, req: 7},
		), 2, policyFCFS, 64,
			[]scheduleLine{at(1, 0, 0, 10, 2), at(2, 10, 10, 15, 2), at(5, 20, 32, 37, 2), at(4, 20, 20, 25, 2), at(4, 20, 25, 32, 2)}},
		// docs/simulation.md: a job over its requested time is killed then.
		{"timeout at the requested time", trace(
			swfJob{id: 1, submit: 0, run: 20, cores: 1, req: 10},
			swfJob{id: 2, submit: 0, run: 5, cores: 1, req: 5},
		), 1, policyFCFS, 64,
			[]scheduleLine{at(1, 0, 0, 10, 1), at(2, 0, 10, 15, 1)}},
		// docs/simulation.md: a job with run time 0 frees its cores at once and
		// the scheduler makes another pass at the same instant.
		{"run time 0 fcfs", trace(
			swfJob{id: 1, submit: 0, run: 0, cores: 2, req: 100},
			swfJob{id: 2, submit: 0, run: 5, cores: 2, req: 5},
		), 2, policyFCFS, 64,
			[]scheduleLine{at(1, 0, 0, 0, 2), at(2, 0, 0, 5, 2)}},
		{"run time 0 conservative", trace(
			swfJob{id: 1, submit: 0, run: 0, cores: 2, req: 100},
			swfJob{id: 2, submit: 0, run: 5, cores: 2, req: 5},
		), 2, policyConservative, 64,
			[]scheduleLine{at(1, 0, 0, 0, 2), at(2, 0, 0, 5, 2)}},
		{"requested time 0", "1 0 -1 0 2 -1 -1 2 -1\n2 0 -1 0 2 -1 -1 2 -1\n", 2, policyConservative, 64,
			[]scheduleLine{at(1, 0, 0, 0, 2), at(2, 0, 0, 0, 2)}},
		// docs/simulation.md: time zero is the smallest submit among jobs not
		// skipped; denied jobs count but leave no mark.
		{"time zero and denial", trace(
			swfJob{id: 1, submit: -5, run: 10, cores: 1, req: 10},
			swfJob{id: 2, submit: 100, run: 10, cores: 1, req: 10},
			swfJob{id: 3, submit: 50, run: 10, cores: 9, req: 10},
		), 4, policyEASY, 64,
			[]scheduleLine{at(2, 50, 50, 60, 1)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := replay(strings.NewReader(tt.trace), tt.cores, tt.policy, tt.depth)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("schedule (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSummary(t *testing.T) {
	tests := []struct {
		name  string
		trace string
		want  summary
	}{
		{"empty", "; nothing\n", summary{}},
		{"all skipped", "1 0 -1 -1 1 -1 -1 1 10\n", summary{Skipped: 1}},
		// Two 1-core jobs on 1 core: waits 0 and 10, runs 10 and 5;
		// slowdowns 1 and (10+5)/10 = 1.5; turnarounds 10 and 15.
		{"two jobs", trace(
			swfJob{id: 1, submit: 0, run: 10, cores: 1, req: 10},
			swfJob{id: 2, submit: 0, run: 5, cores: 1, req: 5},
			swfJob{id: 3, submit: 0, run: 5, cores: 2, req: 5},
			swfJob{id: 4, submit: 0, run: -1, cores: 1, req: 5},
		), summary{Jobs: 2, Skipped: 1, Denied: 1, Makespan: 15, Utilization: 1, MeanWait: 5, MaxWait: 10,
			MeanBoundedSlowdown: 1.25, MeanTurnaround: 12.5}},
		{"only run time 0", "1 0 -1 0 1 -1 -1 1 10\n", summary{Jobs: 1, MeanBoundedSlowdown: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got, err := replay(strings.NewReader(tt.trace), 1, policyFCFS, 64)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // error, "" for none
	}{
		{"cores", []string{"--trace", "t.swf", "--cores", "4"}, ""},
		{"fluxsched form", []string{"sim", "--trace", "t.swf", "--nodes", "2", "--cores-per-node", "2", "--policy", "easy"}, ""},
		{"no trace", []string{"--cores", "4"}, "usage: --trace is required"},
		{"no cores", []string{"--trace", "t.swf"}, "usage: --cores must be a positive number of cores"},
		{"both forms", []string{"--trace", "t.swf", "--cores", "4", "--nodes", "2", "--cores-per-node", "2"}, "usage: give --cores or --nodes with --cores-per-node, not both"},
		{"half a machine", []string{"--trace", "t.swf", "--nodes", "2"}, "usage: --nodes and --cores-per-node must both be positive (and not huge)"},
		{"bad policy", []string{"--trace", "t.swf", "--cores", "4", "--policy", "lifo"}, `usage: unknown policy "lifo" (want fcfs, easy, hybrid or conservative)`},
		{"negative depth", []string{"--trace", "t.swf", "--cores", "4", "--reservation-depth", "-1"}, "usage: --reservation-depth -1 is negative"},
		{"stray argument", []string{"--trace", "t.swf", "--cores", "4", "extra"}, `usage: unexpected argument "extra"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseFlags(tt.args, &strings.Builder{})
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parseFlags(%q) (-want +got):\n%s", tt.args, diff)
			}
		})
	}
}

// bundled are the traces of the check: the repository's copies.
var bundled = []struct {
	name  string
	cores int64
}{
	{"hpc2n-excerpt", 240},
	{"lublin_256", 256},
	{"edge", 8},
}

// swfPath finds a trace: edge is ours, the others are the public traces
// in the repository's testdata/swf (see its SOURCE.md), or in SWF_DIR. A
// missing trace fails the test: it is never a reason to pass quietly.
func swfPath(t testing.TB, name string) string {
	t.Helper()
	if name == "edge" {
		return filepath.Join("testdata", "edge.swf")
	}
	dir := os.Getenv("SWF_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", "testdata", "swf")
	}
	p := filepath.Join(dir, name+".swf")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("no trace %s: %v", p, err)
	}
	return p
}

// TestBundledTraces checks rules every schedule must keep, on the real
// traces, and that EASY written with shadow time and extra cores agrees
// with hybrid at depth 1 written with a profile (docs/simulation.md: "D = 1 is
// easy").
func TestBundledTraces(t *testing.T) {
	for _, tr := range bundled {
		data, err := os.ReadFile(swfPath(t, tr.name))
		if err != nil {
			t.Fatal(err)
		}
		recs, err := parseSWF(strings.NewReader(string(data)), false)
		if err != nil {
			t.Fatal(err)
		}
		scheds := map[string][]scheduleLine{}
		for _, p := range []struct {
			policy string
			depth  int
		}{{policyFCFS, 0}, {policyEASY, 0}, {policyHybrid, 1}, {policyConservative, 0}} {
			name := fmt.Sprintf("%s %s/%d", tr.name, p.policy, p.depth)
			sched, sum, err := replay(strings.NewReader(string(data)), tr.cores, p.policy, p.depth)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			scheds[p.policy] = sched
			if got, want := sum.Jobs+sum.Skipped+sum.Denied, len(recs); got != want {
				t.Errorf("%s: jobs+skipped+denied = %d, want %d records", name, got, want)
			}
			checkSchedule(t, name, recs, sched, tr.cores)
		}
		if diff := cmp.Diff(scheds[policyEASY], scheds[policyHybrid]); diff != "" {
			t.Errorf("%s: easy and hybrid depth 1 differ (-easy +hybrid):\n%s", tr.name, diff)
		}
	}
}

// checkSchedule checks a schedule against its trace: every job after its
// submission, ending at start + min(run, requested), never more cores busy
// than the machine has.
func checkSchedule(t *testing.T, name string, recs []record, sched []scheduleLine, total int64) {
	t.Helper()
	var zero int64 = -1
	for _, r := range recs {
		if !r.skipped && (zero < 0 || r.submit < zero) {
			zero = r.submit
		}
	}
	k := 0
	type change struct{ t, d int64 }
	var changes []change
	for _, r := range recs {
		if r.skipped || r.cores > total {
			continue
		}
		if k >= len(sched) {
			t.Fatalf("%s: schedule ends before job %d", name, r.id)
		}
		l := sched[k]
		k++
		if l.ID != r.id || l.Submit != r.submit-zero || l.Cores != r.cores {
			t.Fatalf("%s: line %d is %+v, want job %d", name, k, l, r.id)
		}
		if l.Start < l.Submit || l.End != l.Start+min(r.run, r.req) {
			t.Fatalf("%s: job %d: %+v breaks start >= submit or end = start + min(run %d, req %d)", name, r.id, l, r.run, r.req)
		}
		if l.End > l.Start {
			changes = append(changes, change{l.Start, l.Cores}, change{l.End, -l.Cores})
		}
	}
	sort.Slice(changes, func(a, b int) bool {
		if changes[a].t != changes[b].t {
			return changes[a].t < changes[b].t
		}
		return changes[a].d < changes[b].d
	})
	var busy int64
	for _, c := range changes {
		busy += c.d
		if busy > total {
			t.Fatalf("%s: %d cores busy at %d on a %d-core machine", name, busy, c.t, total)
		}
	}
}

func FuzzParseSWF(f *testing.F) {
	f.Add("; c\n1 0 -1 10 2 -1 -1 2 20\n")
	f.Add("1 0.5 x -0.9 2 552.21 -1 -1 -1 ; c\n\n2 1e3 3 4 5 6 7 8 9\n")
	f.Add("1 2 3 4 5 6 7 8\n")
	f.Add("1 NaN 3 4 5 6 7 8 Inf")
	f.Add("1 0 -1 10 2 -1 -1 2 20 3145728\n2 0 -1 10 1 -1 -1 1 20 5242880\n3 1 -1 5 1 -1 -1 1 5 1.5e6\n")
	f.Add("1 0 -1 10 2 -1 -1 2 20 x\n")
	f.Fuzz(func(t *testing.T, text string) {
		recs, err := parseSWF(strings.NewReader(text), false)
		if err != nil {
			if strings.ContainsRune(err.Error(), '\n') {
				t.Errorf("error is not one line: %q", err)
			}
			return
		}
		for i, r := range recs {
			if r.pos != i {
				t.Errorf("record %d has position %d", i, r.pos)
			}
			if !r.skipped && (r.cores <= 0 || r.submit < 0 || r.run < 0 || r.req < 0) {
				t.Errorf("record %+v is kept but breaks the input rules", r)
			}
		}
		// Whatever parses must also replay, on a small machine, without
		// error under every policy.
		if len(recs) > 50 {
			return
		}
		for _, p := range []string{policyFCFS, policyEASY, policyHybrid, policyConservative} {
			if _, _, err := replay(strings.NewReader(text), 4, p, 1); err != nil {
				t.Errorf("%s: %v", p, err)
			}
		}
		// With memory field 10 is read too: an error is one line, and
		// what parses replays under every policy (2 nodes x 2 cores x 4G).
		if _, err := parseSWF(strings.NewReader(text), true); err != nil {
			if strings.ContainsRune(err.Error(), '\n') {
				t.Errorf("error is not one line: %q", err)
			}
			return
		}
		for _, p := range []string{policyFCFS, policyEASY, policyHybrid, policyConservative} {
			if _, _, err := replayOn(strings.NewReader(text), machineSpec{2, 2, 4 << 30, ""}, p, 1); err != nil {
				t.Errorf("%s with memory: %v", p, err)
			}
		}
	})
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"4G", "512", "1.5T", "0", "-1G", "1E", "", "1024P", "1025P", "4GiB", "0.0000001K", "1e3M"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseSize(s)
		if err != nil {
			if strings.ContainsRune(err.Error(), '\n') {
				t.Errorf("error is not one line: %q", err)
			}
			return
		}
		if n < 1 || n > maxMemory {
			t.Errorf("parseSize(%q) = %d, outside 1..1E", s, n)
		}
	})
}

func BenchmarkConservativeLublin(b *testing.B) {
	data, err := os.ReadFile(swfPath(b, "lublin_256"))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, _, err := replay(strings.NewReader(string(data)), 256, policyConservative, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// memJob is one trace line of the memory tests: swfJob and field 10 (KB
// per processor; 0 writes -1, unknown).
type memJob struct {
	swfJob
	kb int64
}

// memTrace writes jobs as SWF lines with field 10.
func memTrace(jobs ...memJob) string {
	var b strings.Builder
	for _, j := range jobs {
		kb := j.kb
		if kb == 0 {
			kb = -1
		}
		fmt.Fprintf(&b, "%d %d -1 %d %d -1 -1 %d %d %d -1 -1 -1 -1 -1 -1 -1 -1\n",
			j.id, j.submit, j.run, j.cores, j.cores, j.req, kb)
	}
	return b.String()
}

// gb is n GB in SWF's KB.
func gb(n int64) int64 { return n << 20 }

func mj(id, submit, run, cores, req, kb int64) memJob {
	return memJob{swfJob{id: id, submit: submit, run: run, cores: cores, req: req}, kb}
}

func TestReplayMemory(t *testing.T) {
	// 1 node x 4 cores x 4G: j2 waits for j1's memory with 3 cores free.
	waits := memTrace(mj(1, 0, 10, 1, 10, gb(3)), mj(2, 1, 10, 1, 10, gb(3)))
	// 2 nodes x 2 cores x 4G: j1 takes a core and 1G of node0 (worst-fit
	// ties go to the lower rank); j2 (2 x 2G) goes whole to node1, which has
	// more free cores, so node0's 3G is left for j3 (first-fit would have
	// split j2 over both nodes and left no node 3G).
	worst := memTrace(mj(1, 0, 100, 1, 100, gb(1)), mj(2, 1, 100, 2, 100, gb(2)), mj(3, 2, 10, 1, 10, gb(3)))
	// 1 node x 4 cores x 4G: j2 (3G) is blocked by j1's 2G until 100:
	// shadow 100, extra 3 cores and 1G. j3 (2G, 200 s) fits now but not in
	// the extra memory, so it is not backfilled (on cores alone it would
	// be); j4 (1G, 200 s) is.
	easy := memTrace(mj(1, 0, 100, 1, 100, gb(2)), mj(2, 1, 10, 1, 10, gb(3)), mj(3, 1, 200, 1, 200, gb(2)), mj(4, 1, 200, 1, 200, gb(1)))
	// Denial on 2 nodes x 2 cores x 4G: 5G per processor fits no node; 3
	// processors of 3G need 3 nodes (one each); 2 of them fit.
	deny := memTrace(mj(1, 0, 10, 1, 10, gb(5)), mj(2, 0, 10, 3, 10, gb(3)), mj(3, 0, 10, 2, 10, gb(3)), mj(4, 0, 10, 1, 10, 1<<51))
	tests := []struct {
		name   string
		trace  string
		spec   machineSpec
		policy string
		want   []scheduleLine
	}{
		{"fcfs waits for memory with cores free", waits, machineSpec{1, 4, 4 << 30, ""}, policyFCFS,
			[]scheduleLine{at(1, 0, 0, 10, 1), at(2, 1, 10, 20, 1)}},
		{"without memory field 10 is ignored", waits, machineSpec{1, 4, 0, ""}, policyFCFS,
			[]scheduleLine{at(1, 0, 0, 10, 1), at(2, 1, 1, 11, 1)}},
		{"worst-fit placement keeps a node's memory whole", worst, machineSpec{2, 2, 4 << 30, ""}, policyFCFS,
			[]scheduleLine{at(1, 0, 0, 100, 1), at(2, 1, 1, 101, 2), at(3, 2, 2, 12, 1)}},
		{"easy backfills only what fits the extra memory", easy, machineSpec{1, 4, 4 << 30, ""}, policyEASY,
			[]scheduleLine{at(1, 0, 0, 100, 1), at(2, 1, 100, 110, 1), at(3, 1, 110, 310, 1), at(4, 1, 1, 201, 1)}},
		{"conservative reserves memory too", easy, machineSpec{1, 4, 4 << 30, ""}, policyConservative,
			[]scheduleLine{at(1, 0, 0, 100, 1), at(2, 1, 100, 110, 1), at(3, 1, 110, 310, 1), at(4, 1, 1, 201, 1)}},
		{"easy on cores alone backfills both", easy, machineSpec{1, 4, 0, ""}, policyEASY,
			[]scheduleLine{at(1, 0, 0, 100, 1), at(2, 1, 1, 11, 1), at(3, 1, 1, 201, 1), at(4, 1, 1, 201, 1)}},
		{"denied for memory", deny, machineSpec{2, 2, 4 << 30, ""}, policyFCFS,
			[]scheduleLine{at(3, 0, 0, 10, 2)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := tt.spec
			if spec.memory == 0 {
				spec = machineSpec{nodes: 1, coresPerNode: spec.nodes * spec.coresPerNode}
			}
			got, _, err := replayOn(strings.NewReader(tt.trace), spec, tt.policy, 64)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("schedule (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  string
	}{
		{"4G", 4 << 30, ""}, {"4g", 4 << 30, ""}, {"4GB", 4 << 30, ""}, {"4GiB", 4 << 30, ""},
		{"512", 512 << 20, ""}, {"512M", 512 << 20, ""}, {"1.5T", 3 << 39, ""}, {"1K", 1024, ""},
		{"1P", 1 << 50, ""}, {"1024P", 1 << 60, ""},
		{"1025P", 0, `"1025P" is over 1E`}, {"0", 0, `"0" must be more than 0`},
		{"-1G", 0, `"-1G" is not a size such as 512M, 4G or 1.5T`}, {"G", 0, `"G" is not a size such as 512M, 4G or 1.5T`},
		{"1E", 0, `"1E" is not a size such as 512M, 4G or 1.5T`}, {"", 0, `"" is not a size such as 512M, 4G or 1.5T`},
		{"4X", 0, `"4X" is not a size such as 512M, 4G or 1.5T`}, {"1e3M", 0, `"1e3M" is not a size such as 512M, 4G or 1.5T`},
	}
	for _, tt := range tests {
		got, err := parseSize(tt.in)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if got != tt.want || msg != tt.err {
			t.Errorf("parseSize(%q) = %d, %q; want %d, %q", tt.in, got, msg, tt.want, tt.err)
		}
	}
}

func TestParseFlagsMemory(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"memory", []string{"--trace", "t.swf", "--nodes", "2", "--cores-per-node", "2", "--memory", "4G"}, ""},
		{"memory needs nodes", []string{"--trace", "t.swf", "--cores", "4", "--memory", "4G"}, "usage: --memory needs --nodes and --cores-per-node"},
		{"bad size", []string{"--trace", "t.swf", "--nodes", "2", "--cores-per-node", "2", "--memory", "lots"}, `usage: --memory: "lots" is not a size such as 512M, 4G or 1.5T`},
		{"over 1E in all", []string{"--trace", "t.swf", "--nodes", "2", "--cores-per-node", "2", "--memory", "1024P"}, "usage: --memory: 2 nodes of 1024P is over 1E in all"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseFlags(tt.args, &strings.Builder{})
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parseFlags(%q) (-want +got):\n%s", tt.args, diff)
			}
		})
	}
}

// TestMemoryTraces checks the memory traces as TestBundledTraces checks the
// others: never more cores or memory busy than the machine has (startJob
// checks each node), easy equal to hybrid depth 1, and under fcfs a
// machine with memory to spare (1P a node) gives the schedule without
// memory.
func TestMemoryTraces(t *testing.T) {
	for _, tr := range []struct {
		path string
		spec machineSpec
	}{
		{filepath.Join("testdata", "mem.swf"), machineSpec{4, 2, 4 << 30, ""}},
		{filepath.Join("..", "..", "testdata", "swf", "hpc2n-mem.swf"), machineSpec{120, 2, 1 << 30, ""}},
	} {
		data, err := os.ReadFile(tr.path)
		if err != nil {
			t.Fatal(err)
		}
		scheds := map[string][]scheduleLine{}
		for _, p := range []struct {
			policy string
			depth  int
		}{{policyFCFS, 0}, {policyEASY, 0}, {policyHybrid, 1}, {policyConservative, 0}} {
			name := fmt.Sprintf("%s %s/%d", tr.path, p.policy, p.depth)
			recs, err := parseSWF(strings.NewReader(string(data)), true)
			if err != nil {
				t.Fatal(err)
			}
			jobs, sum := prepare(recs, tr.spec)
			if err := simulateChecked(t, name, jobs, tr.spec, p.policy, p.depth); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			summarize(jobs, tr.spec.cores(), &sum)
			if got, want := sum.Jobs+sum.Skipped+sum.Denied, len(recs); got != want {
				t.Errorf("%s: jobs+skipped+denied = %d, want %d records", name, got, want)
			}
			sched, _, err := replayOn(strings.NewReader(string(data)), tr.spec, p.policy, p.depth)
			if err != nil {
				t.Fatal(err)
			}
			scheds[p.policy] = sched
			plenty := tr.spec
			plenty.memory = 1 << 50
			rich, _, err := replayOn(strings.NewReader(string(data)), plenty, p.policy, p.depth)
			if err != nil {
				t.Fatal(err)
			}
			// Only the cores count when no node runs short of memory
			// (the memory traces ask for less than 1P a processor),
			// under fcfs: backfilling reserves a job asking for memory
			// node by node, whatever the memory, which the cores alone
			// do not (docs/simulation.md, "Memory").
			if p.policy != policyFCFS {
				continue
			}
			poor, _, err := replay(strings.NewReader(string(data)), tr.spec.cores(), p.policy, p.depth)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(poor, rich); diff != "" {
				t.Errorf("%s: with 1P a node the schedule differs from the one without memory (-without +with):\n%s", name, diff)
			}
		}
		if diff := cmp.Diff(scheds[policyEASY], scheds[policyHybrid]); diff != "" {
			t.Errorf("%s: easy and hybrid depth 1 differ (-easy +hybrid):\n%s", tr.path, diff)
		}
	}
}

// simulateChecked is simulate, then a check of the schedule's totals over
// time against the machine's cores and memory.
func simulateChecked(t *testing.T, name string, jobs []*job, spec machineSpec, policy string, depth int) error {
	t.Helper()
	if err := simulate(jobs, spec, policy, depth); err != nil {
		return err
	}
	// Replay the starts and ends from the schedule.
	type ev struct {
		t     int64
		start bool
		j     *job
	}
	var evs []ev
	for _, j := range jobs {
		if j.started && j.end > j.start {
			evs = append(evs, ev{j.start, true, j}, ev{j.end, false, j})
		}
	}
	sort.SliceStable(evs, func(a, b int) bool {
		if evs[a].t != evs[b].t {
			return evs[a].t < evs[b].t
		}
		return !evs[a].start && evs[b].start
	})
	var busy int64
	var mem int64
	for _, e := range evs {
		d := int64(1)
		if !e.start {
			d = -1
		}
		busy += d * e.j.cores
		mem += d * e.j.memAll()
		if busy > spec.cores() || mem > spec.memory*spec.nodes {
			t.Fatalf("%s: %d cores and %d bytes busy at %d", name, busy, mem, e.t)
		}
	}
	return nil
}
