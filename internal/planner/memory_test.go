package planner

import "testing"

// The scheduler's third kind is memory in bytes (issue 26): amounts far
// larger than core counts, planned beside them. EarliestFit and
// FreeDuring answer per kind, so memory alone can push a start later.
func TestMemoryKind(t *testing.T) {
	const gib = int64(1) << 30
	// 4 cores, no GPU, 4G; a running job holds 1 core and 3G until 100.
	p := build(t, []int64{4, 0, 4 * gib}, []spanArg{{start: 0, end: 100, amount: []int64{1, 0, 3 * gib}}})
	tests := []struct {
		name   string
		at     float64
		dur    float64
		amount []int64
		want   float64
		ok     bool
	}{
		{"cores and memory free now", 0, 50, []int64{1, 0, 1 * gib}, 0, true},
		{"memory waits for the running job", 0, 50, []int64{1, 0, 4 * gib}, 100, true},
		{"no memory asked", 0, 50, []int64{3, 0, 0}, 0, true},
		{"more memory than there is", 0, 50, []int64{1, 0, 5 * gib}, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := p.EarliestFit(tc.at, tc.dur, tc.amount)
			if ok != tc.ok || ok && got != tc.want {
				t.Errorf("EarliestFit = %v, %v; want %v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
	// A planned start of the blocked job holds the memory a backfill
	// candidate would need past 100.
	if _, err := p.Add(100, 200, []int64{1, 0, 4 * gib}); err != nil {
		t.Fatal(err)
	}
	if free := p.FreeDuring(0, 150); free[2] != 0 || free[0] != 3 {
		t.Errorf("FreeDuring(0, 150) = %v, want 3 cores and no memory", free)
	}
	if free := p.FreeDuring(0, 100); free[2] != 1*gib {
		t.Errorf("FreeDuring(0, 100) = %v, want 1G of memory", free)
	}
}
