package sim

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/swf"
)

// Config.Progress hears the replay move forward every ProgressEvery
// instants, ends with done == total, and changes nothing it watches.
func TestRunProgress(t *testing.T) {
	// 200 one-core jobs of 10 s, one a second, on one core: each ends
	// 10 s after the last, so every submit and every end is an instant of
	// its own (about 400). Job 201 is denied (2 cores of 1) and never ends.
	var lines []string
	for i := int64(1); i <= 200; i++ {
		lines = append(lines, job(i, i, 10, 1, 10))
	}
	lines = append(lines, job(201, 300, 10, 2, 10))
	jobs, _, err := swf.Read(strings.NewReader(trace(lines...)))
	if err != nil {
		t.Fatal(err)
	}
	type call struct {
		done, total int
		now         int64
	}
	var calls []call
	cfg := Config{Jobs: jobs, Inventory: machine(t, 1, 1), Policy: fcfs, TempDir: t.TempDir(),
		Progress: func(done, total int, now int64) { calls = append(calls, call{done, total, now}) }}
	with, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Progress = nil
	without, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(without, with); diff != "" {
		t.Errorf("the schedule changed with Progress (-without +with):\n%s", diff)
	}

	if len(calls) < 4 || len(calls) > 400/ProgressEvery+2 {
		t.Fatalf("%d calls for about 400 instants, want one per %d and one at the end: %v", len(calls), ProgressEvery, calls)
	}
	last := calls[len(calls)-1]
	if want := (call{201, 201, without.Summary.Makespan}); last != want {
		t.Errorf("last call %+v, want %+v", last, want)
	}
	for i, c := range calls {
		if c.total != 201 || c.done < 0 || c.done > c.total {
			t.Errorf("call %d: %+v: want 0 <= done <= total = 201", i, c)
		}
		if i > 0 && (c.done < calls[i-1].done || c.now < calls[i-1].now) {
			t.Errorf("call %d: %+v went back from %+v", i, c, calls[i-1])
		}
	}
	// Along the way, done counts the jobs that have ended: by virtual
	// time now (from time zero), one job every 10 s.
	mid := calls[len(calls)/2]
	if want := int(mid.now / 10); mid.done != want {
		t.Errorf("at t=%d, %d jobs done, want about %d", mid.now, mid.done, want)
	}
}
