package jobmgr

import (
	"testing"

	"github.com/fluxq/fluxq/internal/job"
)

// TestEndedAt: a finish event is dated when the processes ended, as the
// exec service says, kept after the job's start and exception and never
// after now; with no time given, now.
func TestEndedAt(t *testing.T) {
	const now = 1000.0
	ran := &job.Job{TRun: 90, TStart: 100}
	canceled := &job.Job{TRun: 100, Exception: &job.Exception{Occurred: 500}}
	for _, tc := range []struct {
		name  string
		ended float64
		j     *job.Job
		want  float64
	}{
		{"reported late", 200, ran, 200},
		{"no time given", 0, ran, now},
		{"a clock ahead of ours", 2000, ran, now},
		{"before the start was posted", 99.9, ran, 100},
		{"before its exception", 400, canceled, 500},
		{"after its exception", 600, canceled, 600},
	} {
		if got := endedAt(tc.ended, tc.j, now); got != tc.want {
			t.Errorf("%s: endedAt(%v) = %v, want %v", tc.name, tc.ended, got, tc.want)
		}
	}
}
