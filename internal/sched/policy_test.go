package sched

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/resource"
	"github.com/fluxq/fluxq/internal/schedproto"
)

// Hand-worked schedules for each queue policy (docs/simulation.md,
// "Policies"). The harness's clock starts at 5000; jobs are one node of
// cores (worst-fit on one node takes the lowest free cores).

func cores(n int, seconds float64) jobspec.Options {
	return jobspec.Options{NTasks: n, Duration: seconds}
}

func policyHarness(t *testing.T, kind Kind, ncores string, depth int) *harness {
	h := newHarness(t, resource.WorstFit, resource.ConfigEntry{Hosts: "node0", Cores: ncores})
	h.s.def = QueuePolicy{Kind: kind, ReservationDepth: depth}
	return h
}

func at(now float64) op {
	return func(h *harness) []string { h.now = now; return nil }
}

// EASY on 4 cores. Job 1 (2 cores, 100 s) runs until 5100. Head job 2
// (4 cores) does not fit: its shadow time is 5100, when job 1's two
// cores come back and 4 are free, so the extra cores are 4 - 4 = 0.
// Job 3 (1 core, 50 s) ends at 5050 <= 5100: backfilled. Job 4 (1 core,
// 200 s) would end at 5200 > 5100 and needs 1 > 0 extra: it waits, so
// the head is never delayed. Job 5 (1 core, 100 s) ends exactly at the
// shadow time: backfilled.
func TestEasyShadowTime(t *testing.T) {
	h := policyHarness(t, EASY, "0-3", 0)
	h.run(do(alloc(1, cores(2, 100)), alloc(2, cores(4, 100)), alloc(3, cores(1, 50)), alloc(4, cores(1, 200)), alloc(5, cores(1, 100))),
		"1 SUCCESS rank0/core[0-1]",
		"2 ANNOTATE insufficient resources eta=5100",
		"3 SUCCESS rank0/core2",
		"4 ANNOTATE insufficient resources",
		"5 SUCCESS rank0/core3",
	)
	// At 5050 job 3 ends: its core is free, but job 4 still cannot start
	// without delaying the head (ends 5250 > 5100, extra 0).
	h.run(do(at(5050), free(3)), "3 FREE")
	// At 5100 jobs 1 and 5 end: the head starts at its shadow time.
	// Job 4 is the head now, due when job 2 ends.
	h.run(do(at(5100), free(1), free(5)), "1 FREE", "5 FREE", "2 SUCCESS rank0/core[0-3]",
		"4 ANNOTATE insufficient resources eta=5200")
}

// EASY's extra cores on 8 cores. Job 1 (5 cores, 100 s) leaves 3 free.
// Head job 2 needs 6: shadow time 5100 with 8 free, extra 8 - 6 = 2.
// Job 3 (1 core, 1000 s) runs past the shadow time on 1 extra core
// (extra left: 1). Job 4 (2 cores, 1000 s) fits now (2 free) but needs 2
// > 1 extra: it waits. Job 5 (1 core, 1000 s) takes the last extra core.
// Job 6 (1 core, 50 s) ends before the shadow time: tried first, it
// takes nothing from the extra, and starts on the last free core.
func TestEasyExtraCores(t *testing.T) {
	h := policyHarness(t, EASY, "0-7", 0)
	h.run(do(alloc(1, cores(5, 100)), alloc(2, cores(6, 10)), alloc(3, cores(1, 1000)), alloc(4, cores(2, 1000)),
		alloc(5, cores(1, 1000)), alloc(6, cores(1, 50))),
		"1 SUCCESS rank0/core[0-4]",
		"2 ANNOTATE insufficient resources eta=5100",
		"3 SUCCESS rank0/core5",
		"4 ANNOTATE insufficient resources",
		"5 SUCCESS rank0/core6",
		"6 SUCCESS rank0/core7",
	)
	// Job 6 ends at 5050: one core free, nothing may take it.
	h.run(do(at(5050), free(6)), "6 FREE")
	// At 5100 job 1 ends: 6 cores free, exactly what the head needs. Job
	// 4 is the head now, due when job 2 ends at 5110.
	h.run(do(at(5100), free(1)), "1 FREE", "2 SUCCESS rank0/core[0-4,7]",
		"4 ANNOTATE insufficient resources eta=5110")
}

// The same queue under each policy, on 4 cores. Job 1 (2 cores) runs to
// 5100. Job 2 (3 cores, 100 s) gets a planned start at 5100 [5100, 5200)
// under every backfilling policy. Job 3 (4 cores, 100 s) fits after job
// 2: [5200, 5300) under conservative and hybrid-2; easy plans only the
// head. Job 4 (1 core, 500 s) fits now (2 free) and would use the one
// extra core at 5100, so easy starts it, which delays job 3 to 5500;
// conservative and hybrid-2 see that it would break job 3's planned start.
// Conservative plans it at 5300 (free again after job 3); hybrid-2
// has no planned start left for it. fcfs stops at job 2.
func TestPoliciesCompared(t *testing.T) {
	queue := do(alloc(1, cores(2, 100)), alloc(2, cores(3, 100)), alloc(3, cores(4, 100)), alloc(4, cores(1, 500)))
	tests := []struct {
		kind  Kind
		depth int
		want  []string
	}{
		{FCFS, 0, []string{
			"1 SUCCESS rank0/core[0-1]",
			"2 ANNOTATE insufficient resources",
			"3 ANNOTATE insufficient resources",
			"4 ANNOTATE insufficient resources",
		}},
		{EASY, 0, []string{
			"1 SUCCESS rank0/core[0-1]",
			"2 ANNOTATE insufficient resources eta=5100",
			"3 ANNOTATE insufficient resources",
			"4 SUCCESS rank0/core2",
		}},
		{Conservative, 0, []string{
			"1 SUCCESS rank0/core[0-1]",
			"2 ANNOTATE insufficient resources eta=5100",
			"3 ANNOTATE insufficient resources eta=5200",
			"4 ANNOTATE insufficient resources eta=5300",
		}},
		{Hybrid, 2, []string{
			"1 SUCCESS rank0/core[0-1]",
			"2 ANNOTATE insufficient resources eta=5100",
			"3 ANNOTATE insufficient resources eta=5200",
			"4 ANNOTATE insufficient resources",
		}},
		// Hybrid with depth 1 is easy.
		{Hybrid, 1, []string{
			"1 SUCCESS rank0/core[0-1]",
			"2 ANNOTATE insufficient resources eta=5100",
			"3 ANNOTATE insufficient resources",
			"4 SUCCESS rank0/core2",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.kind.String(), func(t *testing.T) {
			h := policyHarness(t, tc.kind, "0-3", tc.depth)
			h.run(queue, tc.want...)
		})
	}
}

// Conservative honours every planned start: each job starts at its
// estimate, and the estimates hold while nothing ends early.
func TestConservativeHonoured(t *testing.T) {
	h := policyHarness(t, Conservative, "0-3", 0)
	h.run(do(alloc(1, cores(2, 100)), alloc(2, cores(3, 100)), alloc(3, cores(4, 100)), alloc(4, cores(1, 500))),
		"1 SUCCESS rank0/core[0-1]",
		"2 ANNOTATE insufficient resources eta=5100",
		"3 ANNOTATE insufficient resources eta=5200",
		"4 ANNOTATE insufficient resources eta=5300",
	)
	h.run(do(at(5100), free(1)), "1 FREE", "2 SUCCESS rank0/core[0-2]")
	h.run(do(at(5200), free(2)), "2 FREE", "3 SUCCESS rank0/core[0-3]")
	h.run(do(at(5300), free(3)), "3 FREE", "4 SUCCESS rank0/core0")
}

// A job that ends early moves the estimates behind it forward, and a job
// that loses its planned start has t_estimate deleted with null.
func TestEstimatesFollow(t *testing.T) {
	h := policyHarness(t, EASY, "0-3", 0)
	h.run(do(alloc(1, cores(2, 100)), alloc(2, cores(4, 100)), alloc(3, cores(1, 1000))),
		"1 SUCCESS rank0/core[0-1]",
		"2 ANNOTATE insufficient resources eta=5100",
		"3 ANNOTATE insufficient resources",
	)
	// A more urgent job (3 cores) becomes the head: it takes the
	// planned start at 5100, job 2 loses its estimate, and the extra core
	// at 5100 (4 free, 3 needed) lets job 3 start.
	h.run(do(allocPrio(4, 1000, cores(3, 100))),
		"4 ANNOTATE insufficient resources eta=5100",
		"2 ANNOTATE insufficient resources eta=null",
		"3 SUCCESS rank0/core2",
	)
	// Job 1 ends early, at 5010: job 4 starts; job 2 is the head again,
	// due when job 3 ends at 6000.
	h.run(do(at(5010), free(1)), "1 FREE",
		"4 SUCCESS rank0/core[0-1,3]",
		"2 ANNOTATE insufficient resources eta=6000",
	)
}

// A job without a time limit holds its cores forever as far as the
// planner knows: the head behind it gets no estimate, and no other job
// without a limit may start behind it (it would hold what the head needs
// forever); a job with a limit still may.
func TestUnlimitedJobs(t *testing.T) {
	h := policyHarness(t, EASY, "0-1", 0)
	h.run(do(alloc(1, cores(1, 0)), alloc(2, cores(2, 10)), alloc(3, cores(1, 0)), alloc(4, cores(1, 5))),
		"1 SUCCESS rank0/core0",
		"2 ANNOTATE insufficient resources",
		"3 ANNOTATE insufficient resources",
		"4 SUCCESS rank0/core1",
	)
}

// queue-depth bounds the jobs a pass looks at: the third job is neither
// started nor annotated, though it would fit.
func TestQueueDepth(t *testing.T) {
	h := policyHarness(t, FCFS, "0-1", 0)
	h.s.def.QueueDepth = 2
	h.run(do(alloc(1, cores(2, 100)), alloc(2, cores(1, 10)), alloc(3, cores(1, 10)), alloc(4, cores(1, 10))),
		"1 SUCCESS rank0/core[0-1]",
		"2 ANNOTATE insufficient resources",
	)
	h.run(do(at(5100), free(1)), "1 FREE",
		"2 SUCCESS rank0/core0",
		"3 SUCCESS rank0/core1",
	)
}

// A pass can stop after any job and go on: a free in between leaves it
// going (and a new pass follows, since something changed); a change of
// priorities starts it again from the head.
func TestPausedPass(t *testing.T) {
	h := policyHarness(t, FCFS, "0-1", 0)
	h.run(do(alloc(1, cores(2, 100))), "1 SUCCESS rank0/core[0-1]")
	for id := uint64(2); id <= 4; id++ {
		alloc(id, cores(1, 10))(h)
	}
	step := func(budget int, wantDone bool, want ...string) {
		t.Helper()
		out, done := h.s.Step(h.now, budget)
		if diff := cmp.Diff(want, h.render(out)); diff != "" {
			t.Errorf("Step(%d) (-want +got):\n%s", budget, diff)
		}
		if done != wantDone {
			t.Errorf("Step(%d) done = %v, want %v", budget, done, wantDone)
		}
	}
	step(1, false, "2 ANNOTATE insufficient resources")
	if !h.s.Busy() {
		t.Fatal("Busy() = false with a pass in progress")
	}
	free(1)(h)
	// The pass goes on behind job 2, which blocked the queue before the
	// free: fcfs keeps the rest waiting in this pass.
	step(0, true, "3 ANNOTATE insufficient resources", "4 ANNOTATE insufficient resources")
	// The free makes another pass due.
	step(0, true, "2 SUCCESS rank0/core0", "3 SUCCESS rank0/core1")
	if h.s.Busy() {
		t.Error("Busy() = true with nothing new")
	}
	// New jobs, a pass stopped after the first, then job 6 is made the
	// most urgent: the pass starts over from the head.
	alloc(5, cores(1, 10))(h)
	alloc(6, cores(1, 10))(h)
	step(1, false) // job 4 again: announced before, nothing to say
	h.s.Prioritize(schedproto.Prioritize{Jobs: [][2]uint64{{6, 1000}}})
	step(0, true,
		"6 ANNOTATE insufficient resources",
		"5 ANNOTATE insufficient resources",
	)
}

// An fcfs scheduler keeps no planner (planless); a queue that turns to
// EASY while jobs run plans with them. The planner of an EASY pass is
// dropped when the queue turns to fcfs, under which job 1 (3 of 4 cores,
// 100 s) starts; back under EASY, job 2 (4 cores) is due when job 1
// ends, and job 3 (1 core, 200 s) would delay it and waits.
func TestPlannerMadeWhenPolicyPlans(t *testing.T) {
	h := policyHarness(t, EASY, "0-3", 0)
	h.run(do(alloc(9, cores(1, 5))), "9 SUCCESS rank0/core0")
	h.run(do(free(9)), "9 FREE")
	h.s.SetQueuePolicy("", QueuePolicy{Kind: FCFS})
	h.run(do(alloc(1, cores(3, 100))), "1 SUCCESS rank0/core[0-2]")
	if h.s.plan != nil {
		t.Errorf("an fcfs scheduler keeps a planner")
	}
	h.s.SetQueuePolicy("", QueuePolicy{Kind: EASY})
	h.run(do(at(5010), alloc(2, cores(4, 10)), alloc(3, cores(1, 200))),
		"2 ANNOTATE insufficient resources eta=5100",
		"3 ANNOTATE insufficient resources",
	)
}
