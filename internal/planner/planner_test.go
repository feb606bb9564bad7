package planner

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var inf = math.Inf(1)

type spanArg struct {
	start, end float64
	amount     []int64
	unchecked  bool
}

// build returns a planner holding spans, failing the test on any error.
func build(t *testing.T, total []int64, spans []spanArg) *Planner {
	t.Helper()
	p, err := New(total)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range spans {
		add := p.Add
		if s.unchecked {
			add = p.AddUnchecked
		}
		if _, err := add(s.start, s.end, s.amount); err != nil {
			t.Fatalf("add %v: %v", s, err)
		}
	}
	if err := p.verify(); err != nil {
		t.Fatal(err)
	}
	return p
}

// snapshot is what a test can see of a planner from outside.
type snapshot struct {
	Len, Points int
	Free        [][]int64
}

func snap(p *Planner) snapshot {
	s := snapshot{Len: p.Len(), Points: p.Points()}
	for _, t := range []float64{-1, 0, 0.5, 5, 9.5, 10, 15, 20, 25, 30, 40, 1e9, inf} {
		s.Free = append(s.Free, p.FreeAt(t))
	}
	return s
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		total   []int64
		wantErr string
	}{
		{"nil", nil, "no resource kinds"},
		{"empty", []int64{}, "no resource kinds"},
		{"negative", []int64{4, -1}, "total of kind 1 is -1"},
		{"zero is fine", []int64{0}, ""},
		{"two kinds", []int64{4, 2}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(tt.total)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("New(%v) error = %v, want %q", tt.total, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := p.Total()
			if diff := cmp.Diff(tt.total, got); diff != "" {
				t.Errorf("Total() (-want +got):\n%s", diff)
			}
			got[0] = 99 // Total must be a copy
			if diff := cmp.Diff(tt.total, p.Total()); diff != "" {
				t.Errorf("Total() after change (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAddRefused checks that every bad span is refused with a one-line
// error naming the problem, and that nothing changes.
func TestAddRefused(t *testing.T) {
	nan := math.NaN()
	// Base profile: 2 cores over [0, 10) and 2 cores over [0, 20), 4 total.
	base := []spanArg{{0, 10, []int64{2}, false}, {0, 20, []int64{2}, false}}
	tests := []struct {
		name       string
		start, end float64
		amount     []int64
		unchecked  bool
		want       string
	}{
		{"end before start", 5, 4, []int64{1}, false, "end before start"},
		{"start NaN", nan, 4, []int64{1}, false, "NaN"},
		{"end NaN", 4, nan, []int64{1}, false, "NaN"},
		{"start -Inf", math.Inf(-1), 4, []int64{1}, false, "start must be finite"},
		{"start +Inf", inf, inf, []int64{1}, false, "start must be finite"},
		{"too few kinds", 30, 40, []int64{}, false, "amount has 0 kinds, planner has 1"},
		{"too many kinds", 30, 40, []int64{1, 1}, false, "amount has 2 kinds, planner has 1"},
		{"negative amount", 30, 40, []int64{-1}, false, "amount of kind 0 is -1"},
		{"negative amount unchecked", 30, 40, []int64{-1}, true, "amount of kind 0 is -1"},
		// 1 core is free over [10, 20): a 1-core job is fine there, 2 are not.
		{"overcommit in the middle", 5, 15, []int64{1}, false, "needs 1 but only 0 is free"},
		{"overcommit later", 12, 30, []int64{3}, false, "needs 3 but only 2 is free"},
		{"overcommit forever", 25, inf, []int64{5}, false, "needs 5 but only 4 is free"},
		{"more than total on an idle stretch", 30, 40, []int64{5}, false, "needs 5 but only 4 is free"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := build(t, []int64{4}, base)
			before := snap(p)
			add := p.Add
			if tt.unchecked {
				add = p.AddUnchecked
			}
			id, err := add(tt.start, tt.end, tt.amount)
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("add = %d, %v; want error containing %q", id, err, tt.want)
			}
			if diff := cmp.Diff(before, snap(p)); diff != "" {
				t.Errorf("planner changed (-want +got):\n%s", diff)
			}
			if err := p.verify(); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestFree(t *testing.T) {
	tests := []struct {
		name       string
		total      []int64
		spans      []spanArg
		start, end float64 // FreeDuring(start, end); FreeAt(start) too
		wantAt     []int64
		wantDuring []int64
	}{
		// Two running jobs of 2 cores ending at 10 and 20, 4 cores total.
		{"before the jobs", []int64{4}, twoJobs, -5, -1, []int64{4}, []int64{4}},
		{"window reaching the first start", []int64{4}, twoJobs, -5, 0, []int64{4}, []int64{4}},
		{"window past the first start", []int64{4}, twoJobs, -5, 0.5, []int64{4}, []int64{0}},
		{"both running", []int64{4}, twoJobs, 0, 10, []int64{0}, []int64{0}},
		{"end is exclusive", []int64{4}, twoJobs, 10, 20, []int64{2}, []int64{2}},
		{"after both", []int64{4}, twoJobs, 20, 30, []int64{4}, []int64{4}},
		{"across an end", []int64{4}, twoJobs, 15, 25, []int64{2}, []int64{2}},
		{"zero-length window is FreeAt", []int64{4}, twoJobs, 10, 10, []int64{2}, []int64{2}},
		{"window to +Inf", []int64{4}, twoJobs, 5, inf, []int64{0}, []int64{0}},
		// A job without a time limit: 1 core from 5 on.
		{"forever span", []int64{4}, []spanArg{{5, inf, []int64{1}, false}}, 1e12, inf, []int64{3}, []int64{3}},
		{"forever span at +Inf is over", []int64{4}, []spanArg{{5, inf, []int64{1}, false}}, inf, inf, []int64{4}, []int64{4}},
		// Zero-length spans cover nothing, even beyond the total.
		{"zero-length span", []int64{4}, []spanArg{{5, 5, []int64{9}, false}}, 5, 6, []int64{4}, []int64{4}},
		// Cores and GPUs: 8 cores, 2 GPUs; a GPU job [0, 10) and a CPU job [5, 15).
		{"two kinds", []int64{8, 2}, []spanArg{{0, 10, []int64{1, 2}, false}, {5, 15, []int64{6, 0}, false}}, 0, 12, []int64{7, 0}, []int64{1, 0}},
		{"two kinds later", []int64{8, 2}, []spanArg{{0, 10, []int64{1, 2}, false}, {5, 15, []int64{6, 0}, false}}, 10, 12, []int64{2, 2}, []int64{2, 2}},
		// Overcommit recorded as it is: 4 cores total, 3 + 3 from 10 to 20.
		{"overcommit", []int64{4}, []spanArg{{0, 20, []int64{3}, false}, {10, 30, []int64{3}, true}}, 0, 40, []int64{1}, []int64{-2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := build(t, tt.total, tt.spans)
			if diff := cmp.Diff(tt.wantAt, p.FreeAt(tt.start)); diff != "" {
				t.Errorf("FreeAt(%g) (-want +got):\n%s", tt.start, diff)
			}
			if diff := cmp.Diff(tt.wantDuring, p.FreeDuring(tt.start, tt.end)); diff != "" {
				t.Errorf("FreeDuring(%g, %g) (-want +got):\n%s", tt.start, tt.end, diff)
			}
			// Appended after what dst holds, in place when it has room.
			dst := make([]int64, 1, 1+len(tt.total))
			dst[0] = -7
			got := p.AppendFreeDuring(dst, tt.start, tt.end)
			if diff := cmp.Diff(append([]int64{-7}, tt.wantDuring...), got); diff != "" {
				t.Errorf("AppendFreeDuring(%g, %g) (-want +got):\n%s", tt.start, tt.end, diff)
			}
			if &got[0] != &dst[0] {
				t.Errorf("AppendFreeDuring(%g, %g) allocated with room in dst", tt.start, tt.end)
			}
		})
	}
}

func TestFreeBadInput(t *testing.T) {
	p := build(t, []int64{4}, twoJobs)
	nan := math.NaN()
	tests := []struct {
		name string
		got  []int64
	}{
		{"FreeAt NaN", p.FreeAt(nan)},
		{"FreeDuring NaN start", p.FreeDuring(nan, 1)},
		{"FreeDuring NaN end", p.FreeDuring(1, nan)},
		{"FreeDuring end before start", p.FreeDuring(2, 1)},
		{"AppendFreeDuring NaN start", p.AppendFreeDuring(nil, nan, 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != nil {
				t.Errorf("got %v, want nil", tt.got)
			}
		})
	}
}

// twoJobs: two running jobs of 2 cores ending at 10 and 20 (4 cores total).
var twoJobs = []spanArg{{0, 10, []int64{2}, false}, {0, 20, []int64{2}, false}}

func TestEarliestFit(t *testing.T) {
	type want struct {
		T  float64
		OK bool
	}
	nan := math.NaN()
	// A planned start taking all 4 cores over [30, 40) on top of twoJobs.
	planned := append(append([]spanArg{}, twoJobs...), spanArg{30, 40, []int64{4}, false})
	// Two full blocks [0, 10) and [15, 30) leave a gap of exactly 5.
	gap := []spanArg{{0, 10, []int64{4}, false}, {15, 30, []int64{4}, false}}
	tests := []struct {
		name   string
		total  []int64
		spans  []spanArg
		at     float64
		dur    float64
		amount []int64
		want   want
	}{
		{"empty planner fits at once", []int64{4}, nil, 7, 100, []int64{4}, want{7, true}},
		{"empty planner, no time limit", []int64{4}, nil, 7, inf, []int64{4}, want{7, true}},
		{"a 1-core job waits for the first end", []int64{4}, twoJobs, 0, 5, []int64{1}, want{10, true}},
		{"a 3-core job needs both ends: 20, not 10", []int64{4}, twoJobs, 0, 5, []int64{3}, want{20, true}},
		{"a 2-core job fits at 10", []int64{4}, twoJobs, 0, 5, []int64{2}, want{10, true}},
		{"a 4-core job fits at 20", []int64{4}, twoJobs, 0, 5, []int64{4}, want{20, true}},
		{"asking later than the answer", []int64{4}, twoJobs, 12, 5, []int64{2}, want{12, true}},
		{"asking between points", []int64{4}, twoJobs, 12.5, 5, []int64{4}, want{20, true}},
		{"short job before a planned start", []int64{4}, planned, 0, 15, []int64{2}, want{10, true}},
		{"long job crossing a planned start waits for it", []int64{4}, planned, 0, 25, []int64{2}, want{40, true}},
		{"job just fitting before a planned start", []int64{4}, planned, 0, 10, []int64{4}, want{20, true}},
		{"job one second too long for that", []int64{4}, planned, 0, 11, []int64{4}, want{40, true}},
		{"no time limit waits for everything", []int64{4}, planned, 0, inf, []int64{1}, want{40, true}},
		{"gap of exactly the duration", []int64{4}, gap, 0, 5, []int64{1}, want{10, true}},
		{"gap one second short", []int64{4}, gap, 0, 6, []int64{1}, want{30, true}},
		{"zero duration just before a start", []int64{4}, gap, 14, 0, []int64{1}, want{14, true}},
		{"zero duration at a start waits", []int64{4}, gap, 15, 0, []int64{1}, want{30, true}},
		{"zero duration zero amount", []int64{4}, gap, 5, 0, []int64{0}, want{5, true}},
		{"more than total", []int64{4}, nil, 0, 1, []int64{5}, want{0, false}},
		{"span forever blocks a full job", []int64{4}, []spanArg{{5, inf, []int64{1}, false}}, 0, 10, []int64{4}, want{0, false}},
		{"span forever still fits before it", []int64{4}, []spanArg{{5, inf, []int64{1}, false}}, 0, 5, []int64{4}, want{0, true}},
		{"span forever leaves room", []int64{4}, []spanArg{{5, inf, []int64{1}, false}}, 0, inf, []int64{3}, want{0, true}},
		{"span forever, no limit, full job", []int64{4}, []spanArg{{5, inf, []int64{1}, false}}, 0, inf, []int64{4}, want{0, false}},
		// 8 cores, 2 GPUs: cores come back at 10, GPUs only at 20.
		{"two kinds", []int64{8, 2}, []spanArg{{0, 10, []int64{6, 0}, false}, {0, 20, []int64{1, 2}, false}}, 0, 5, []int64{4, 1}, want{20, true}},
		{"two kinds, cores only", []int64{8, 2}, []spanArg{{0, 10, []int64{6, 0}, false}, {0, 20, []int64{1, 2}, false}}, 0, 5, []int64{4, 0}, want{10, true}},
		// Overcommit: free is -2 over [10, 20); even an empty job waits.
		{"overcommit", []int64{4}, []spanArg{{0, 20, []int64{3}, false}, {10, 30, []int64{3}, true}}, 10, 1, []int64{0}, want{20, true}},
		{"overcommit, before it", []int64{4}, []spanArg{{0, 20, []int64{3}, false}, {10, 30, []int64{3}, true}}, 0, 10, []int64{1}, want{0, true}},
		{"at NaN", []int64{4}, nil, nan, 1, []int64{1}, want{0, false}},
		{"at +Inf", []int64{4}, nil, inf, 1, []int64{1}, want{0, false}},
		{"dur NaN", []int64{4}, nil, 0, nan, []int64{1}, want{0, false}},
		{"dur negative", []int64{4}, nil, 0, -1, []int64{1}, want{0, false}},
		{"wrong kinds", []int64{4}, nil, 0, 1, []int64{1, 1}, want{0, false}},
		{"negative amount", []int64{4}, nil, 0, 1, []int64{-1}, want{0, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := build(t, tt.total, tt.spans)
			var got want
			got.T, got.OK = p.EarliestFit(tt.at, tt.dur, tt.amount)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("EarliestFit(%g, %g, %v) (-want +got):\n%s", tt.at, tt.dur, tt.amount, diff)
			}
		})
	}
}

func TestRemove(t *testing.T) {
	p := build(t, []int64{4}, nil)
	empty := snap(p)
	a, err := p.Add(0, 10, []int64{2})
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Add(0, inf, []int64{1})
	if err != nil {
		t.Fatal(err)
	}
	z, err := p.Add(5, 5, []int64{3})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Remove(a); err != nil {
		t.Fatal(err)
	}
	// Slot of a is reused; its old id must stay dead.
	c, err := p.Add(0, 10, []int64{2})
	if err != nil {
		t.Fatal(err)
	}
	if c == a {
		t.Fatalf("reused id %d", a)
	}
	tests := []struct {
		name    string
		id      SpanID
		wantErr bool
	}{
		{"zero id", 0, true},
		{"unknown id", 12345, true},
		{"removed id", a, true},
		{"stale id with a live slot", a, true},
		{"live id", c, false},
		{"removed twice", c, true},
		{"zero-length span", z, false},
		{"forever span", b, false},
		{"forever span again", b, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := snap(p)
			err := p.Remove(tt.id)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Remove(%d) = %v, want error %v", tt.id, err, tt.wantErr)
			}
			if err != nil {
				if diff := cmp.Diff(before, snap(p)); diff != "" {
					t.Errorf("failed Remove changed the planner (-want +got):\n%s", diff)
				}
			}
			if err := p.verify(); err != nil {
				t.Error(err)
			}
		})
	}
	// Everything removed: the planner is as empty as it started.
	if diff := cmp.Diff(empty, snap(p)); diff != "" {
		t.Errorf("after removing all (-want +got):\n%s", diff)
	}
}

func TestSpan(t *testing.T) {
	p := build(t, []int64{8, 2}, nil)
	id, err := p.Add(3, inf, []int64{4, 1})
	if err != nil {
		t.Fatal(err)
	}
	type span struct {
		Start, End float64
		Amount     []int64
		OK         bool
	}
	tests := []struct {
		name string
		id   SpanID
		want span
	}{
		{"live", id, span{3, inf, []int64{4, 1}, true}},
		{"unknown", id + 1, span{}},
		{"other generation", id | 1<<32, span{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got span
			got.Start, got.End, got.Amount, got.OK = p.Span(tt.id)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Span(%d) (-want +got):\n%s", tt.id, diff)
			}
			if got.OK {
				got.Amount[0] = 99 // must be a copy
				if _, _, again, _ := p.Span(tt.id); again[0] != tt.want.Amount[0] {
					t.Errorf("Span returned the planner's own slice")
				}
			}
		})
	}
}

// TestSharedPoints checks that spans with the same start and end share two
// points, however many there are.
func TestSharedPoints(t *testing.T) {
	tests := []struct {
		name  string
		n     int
		want  int
		after int // points after removing the first half
	}{
		{"one", 1, 2, 2},
		{"a thousand", 1000, 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := build(t, []int64{int64(tt.n)}, nil)
			var ids []SpanID
			for range tt.n {
				id, err := p.Add(100, 200, []int64{1})
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
			}
			if got := p.Points(); got != tt.want {
				t.Errorf("Points() = %d, want %d", got, tt.want)
			}
			for _, id := range ids[:tt.n/2] {
				if err := p.Remove(id); err != nil {
					t.Fatal(err)
				}
			}
			if got := p.Points(); got != tt.after {
				t.Errorf("Points() after removals = %d, want %d", got, tt.after)
			}
			if diff := cmp.Diff([]int64{int64(tt.n / 2)}, p.FreeAt(150)); diff != "" {
				t.Errorf("FreeAt(150) (-want +got):\n%s", diff)
			}
		})
	}
}

// TestExactTimes checks that large integral epoch times stay exact: the
// answer is a span's end as given, not something rebuilt from it.
func TestExactTimes(t *testing.T) {
	const now = 1_700_000_000
	tests := []struct {
		name  string
		spans []spanArg
		dur   float64
		want  float64
	}{
		{"epoch seconds", []spanArg{{now, now + 3600, []int64{4}, false}}, 60, now + 3600},
		{"beyond 2^53 spacing", []spanArg{{1 << 60, 1<<60 + 1024, []int64{4}, false}}, 1, 1<<60 + 1024},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := build(t, []int64{4}, tt.spans)
			got, ok := p.EarliestFit(tt.spans[0].start, tt.dur, []int64{1})
			if !ok || got != tt.want {
				t.Errorf("EarliestFit = %v, %v; want %v, true", got, ok, tt.want)
			}
		})
	}
}

// TestOverflow checks that overcommit can never wrap the free amounts.
func TestOverflow(t *testing.T) {
	tests := []struct {
		name    string
		amounts []int64 // added unchecked over [0, 10), one after another
		wantErr string  // for the last one
	}{
		{"one huge span fits the arithmetic", []int64{math.MaxInt64}, ""},
		{"down to the minimum", []int64{math.MaxInt64, 1, 4}, ""},
		{"one past the minimum", []int64{math.MaxInt64, 1, 5}, "would overflow"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := build(t, []int64{4}, nil)
			var err error
			for _, a := range tt.amounts {
				_, err = p.AddUnchecked(0, 10, []int64{a})
			}
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("last add: %v, want error %q", err, tt.wantErr)
			}
			if err := p.verify(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
