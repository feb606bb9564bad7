package sim

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/queue"
)

// limitedQueue is a config's queues: batch, the default, with a duration
// limit ("" for none) and a maximum of cores (0 for none).
func limitedQueue(t testing.TB, duration string, ncores int64) *queue.Set {
	t.Helper()
	name := "batch"
	var limits queue.Limits
	if duration != "" {
		limits.Duration = &duration
	}
	if ncores > 0 {
		limits.JobSize.Max.NCores = &ncores
	}
	set, err := queue.Compile(queue.Tables{
		Policy: queue.Policy{Jobspec: queue.JobspecPolicy{Defaults: queue.JobspecDefaults{System: queue.SystemDefaults{Queue: &name}}}},
		Queues: map[string]queue.Config{"batch": {Policy: queue.Policy{Limits: limits}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// A job its queue's limits refuse is denied, counted under the limit it
// breaks, and the other jobs of its instant are still submitted (issue
// 28; before, the first refusal ended the replay with "submitting:
// requested duration (200s) exceeds policy limit of 1m for queue
// batch"). On 1 node x 4 cores, fcfs; jobs 1-4 at 0, 5 and 6 at 5:
//
//	job  cores  run  requested
//	1    2      10   20
//	2    4      10   50
//	3    2      10   200
//	4    2      5    20
//	5    3      10   300
//	6    1      10   10
//
// A refused job leaves no mark: the schedule is the one of the trace
// without it, and no config.
func TestRunQueueLimits(t *testing.T) {
	text := trace(job(1, 0, 10, 2, 20), job(2, 0, 10, 4, 50), job(3, 0, 10, 2, 200),
		job(4, 0, 5, 2, 20), job(5, 5, 10, 3, 300), job(6, 5, 10, 1, 10))
	duration := "requested duration exceeds policy limit of 1m for queue batch"
	ncores := "requested ncores exceeds policy limit of 3 for queue batch"
	tests := []struct {
		name     string
		duration string
		ncores   int64
		// without is the trace with the refused jobs left out.
		without string
		want    []Entry
		denied  []Reason
	}{
		{
			// 3 and 5 ask for over a minute. 1 starts; 2 (4 cores) waits
			// for it, and 4 behind 2; then 4 and 6 together.
			name: "duration", duration: "1m",
			without: trace(job(1, 0, 10, 2, 20), job(2, 0, 10, 4, 50), job(4, 0, 5, 2, 20), job(6, 5, 10, 1, 10)),
			want:    []Entry{{1, 0, 0, 10, 2}, {2, 0, 10, 20, 4}, {4, 0, 20, 25, 2}, {6, 5, 20, 30, 1}},
			denied:  []Reason{{Reason: duration, Count: 2, Examples: []int64{3, 5}}},
		},
		{
			// 2 asks for 4 cores. 1 and 3 start; 4 waits for them, 5 (3
			// cores) for 4, and 6 behind 5.
			name: "ncores", ncores: 3,
			without: trace(job(1, 0, 10, 2, 20), job(3, 0, 10, 2, 200), job(4, 0, 5, 2, 20), job(5, 5, 10, 3, 300), job(6, 5, 10, 1, 10)),
			want:    []Entry{{1, 0, 0, 10, 2}, {3, 0, 0, 10, 2}, {4, 0, 10, 15, 2}, {5, 5, 15, 25, 3}, {6, 5, 15, 25, 1}},
			denied:  []Reason{{Reason: ncores, Count: 1, Examples: []int64{2}}},
		},
		{
			// 5 breaks both: the duration is checked first.
			name: "both", duration: "1m", ncores: 3,
			without: trace(job(1, 0, 10, 2, 20), job(4, 0, 5, 2, 20), job(6, 5, 10, 1, 10)),
			want:    []Entry{{1, 0, 0, 10, 2}, {4, 0, 0, 5, 2}, {6, 5, 5, 15, 1}},
			denied: []Reason{
				{Reason: duration, Count: 2, Examples: []int64{3, 5}},
				{Reason: ncores, Count: 1, Examples: []int64{2}},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := simulateIn(t, text, machine(t, 1, 4), fcfs, limitedQueue(t, tc.duration, tc.ncores))
			if diff := cmp.Diff(tc.want, res.Schedule); diff != "" {
				t.Errorf("schedule (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.denied, res.Denied); diff != "" {
				t.Errorf("denied (-want +got):\n%s", diff)
			}
			denied := 0
			for _, r := range tc.denied {
				denied += r.Count
			}
			if got := res.Summary; got.Jobs != len(tc.want) || got.Denied != denied || got.Skipped != 0 {
				t.Errorf("summary: %d started, %d denied, %d skipped; want %d, %d, 0", got.Jobs, got.Denied, got.Skipped, len(tc.want), denied)
			}
			alone := simulate(t, tc.without, machine(t, 1, 4), fcfs, false)
			if diff := cmp.Diff(alone.Schedule, res.Schedule); diff != "" {
				t.Errorf("schedule differs from the trace without the refused jobs (-without +with):\n%s", diff)
			}
		})
	}
}
