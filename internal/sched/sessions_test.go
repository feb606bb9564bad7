package sched

import (
	"strings"
	"testing"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/resource"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/schedproto"
	"github.com/fluxq/fluxq/internal/wire"
)

// sessions replaces the sessions: "r1=2-3 r2=0" and the outside ranks.
func sessions(nodeResv, outside string) op {
	return func(h *harness) []string {
		m := map[string]idset.Set{}
		for _, f := range strings.Fields(nodeResv) {
			id, ranks, _ := strings.Cut(f, "=")
			m[id] = idset.MustParse(ranks)
		}
		h.s.SetSessions(m, idset.MustParse(outside))
		return nil
	}
}

// grow adds nodes to the inventory, given as a summary.
func grow(summary string) op {
	return func(h *harness) []string {
		h.t.Helper()
		if err := h.s.Grow(parseSummary(h.t, summary)); err != nil {
			h.t.Fatalf("Grow(%s): %v", summary, err)
		}
		return nil
	}
}

// targeting adds attributes.system.targets to o.
func targeting(o jobspec.Options, targets ...string) jobspec.Options {
	o.Extra = map[string]any{jobspec.TargetsKey: targets}
	return o
}

var fourHosts2Cores = resource.ConfigEntry{Hosts: "node[0-3]", Cores: "0-1"}

// Node-reservation specification, conformance item 1: "A job's candidate
// nodes are exactly the union of the sessions it is permitted to target,
// and never include a reserved node it does not own."
func TestSessionPlacement(t *testing.T) {
	tests := []struct {
		name string
		ops  []op
		want []string
	}{
		{"a job targeting r1 runs only on r1's ranks",
			do(sessions("r1=2-3", ""), alloc(1, targeting(jobspec.Options{NTasks: 3}, "r1")),
				alloc(2, targeting(jobspec.Options{NTasks: 2}, "r1"))),
			[]string{"1 SUCCESS rank2/core[0-1] rank3/core0", "2 ANNOTATE insufficient resources"}},
		{"an untargeted job never lands on node-reserved ranks",
			do(sessions("r1=0 r2=3", ""), alloc(1, jobspec.Options{NTasks: 4}), alloc(2, oneCore)),
			[]string{"1 SUCCESS rank[1-2]/core[0-1]", "2 ANNOTATE insufficient resources"}},
		{"explicit default is the untargeted session",
			do(sessions("r1=0-1", ""), alloc(1, targeting(jobspec.Options{NTasks: 4}, "default"))),
			[]string{"1 SUCCESS rank[2-3]/core[0-1]"}},
		{"a job targeting r1 and default may use both",
			do(sessions("r1=0 r2=3", ""), alloc(1, targeting(jobspec.Options{NTasks: 6}, "r1", "default"))),
			[]string{"1 SUCCESS rank[0-2]/core[0-1]"}},
		{"a union of node reservations leaves the default out",
			do(sessions("r1=0 r2=3", ""), alloc(1, targeting(jobspec.Options{Nodes: 2}, "r2", "r1")),
				alloc(2, targeting(oneCore, "r1"))),
			[]string{"1 SUCCESS rank[0,3]/core[0-1]", "2 ANNOTATE insufficient resources"}},
		{"outside ranks are never used, but the job is not denied",
			do(sessions("", "3"), alloc(1, jobspec.Options{NTasks: 8}), alloc(2, jobspec.Options{NTasks: 6})),
			[]string{"1 ANNOTATE target default has 6 cores, needs 8", "2 SUCCESS rank[0-2]/core[0-1]"}},
		{"outside ranks are never used by a targeted job",
			do(sessions("r1=0-1", "2-3"), alloc(1, targeting(jobspec.Options{Nodes: 3}, "r1", "default"))),
			[]string{"1 ANNOTATE targets r1,default have 2 nodes, needs 3"}},
		{"a target with no nodes",
			do(alloc(1, targeting(oneCore, "r7"))),
			[]string{"1 ANNOTATE target r7 has 0 nodes, needs 1"}},
		{"malformed targets are denied",
			do(func(h *harness) []string {
				o := oneCore
				o.Extra = map[string]any{jobspec.TargetsKey: []any{}}
				return alloc(1, o)(h)
			}),
			[]string{"1 DENY attributes.system.targets must be a non-empty array of allocation ids"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			newHarness(t, resource.FirstFit, fourHosts2Cores).run(tc.ops, tc.want...)
		})
	}
}

// A job waiting on a target too small for it says so, blocks nothing
// behind it, and runs once the node reservation grows.
func TestTooSmallTarget(t *testing.T) {
	h := newHarness(t, resource.FirstFit, fourHosts2Cores)
	h.run(do(sessions("r1=3", ""), alloc(1, targeting(jobspec.Options{Nodes: 2}, "r1")), alloc(2, oneCore),
		alloc(3, targeting(oneCore, "r1"))),
		// Job 1 cannot fit r1 at all, so jobs 2 and 3 pass it.
		"1 ANNOTATE target r1 has 1 nodes, needs 2",
		"2 SUCCESS rank0/core0",
		"3 SUCCESS rank3/core0",
	)
	// Nothing changed: nothing is sent again.
	h.run(nil)
	// A job that fits r1 but not now still blocks its queue as usual.
	h.run(do(alloc(4, targeting(jobspec.Options{NTasks: 2}, "r1")), alloc(5, targeting(oneCore, "r1"))),
		"4 ANNOTATE insufficient resources",
		"5 ANNOTATE insufficient resources",
	)
	// r1 grows to two nodes: job 1 now fits r1 but rank3 is busy, so it
	// waits for resources and blocks the jobs behind it.
	h.run(do(sessions("r1=2-3", "")),
		"1 ANNOTATE insufficient resources",
	)
	h.run(do(free(3)), "3 FREE", "1 SUCCESS rank[2-3]/core[0-1]")
	h.run(do(free(1)), "1 FREE", "4 SUCCESS rank2/core[0-1]", "5 SUCCESS rank3/core0")
}

// A node reservation ending sends its waiting jobs' reason back; a job that can
// never fit any target again waits with the reason (the job manager, not
// the scheduler, decides when targets are gone).
func TestReasonFollowsSessions(t *testing.T) {
	h := newHarness(t, resource.FirstFit, fourHosts2Cores)
	h.run(do(sessions("r1=0-1", ""), alloc(1, jobspec.Options{Nodes: 2}), alloc(2, jobspec.Options{Nodes: 3})),
		"1 SUCCESS rank[2-3]/core[0-1]",
		"2 ANNOTATE target default has 2 nodes, needs 3",
	)
	h.run(do(sessions("r1=0", "")), "2 ANNOTATE insufficient resources")
	h.run(do(sessions("r1=0-2", "")), "2 ANNOTATE target default has 1 nodes, needs 3")
	h.run(do(sessions("", ""), free(1)), "1 FREE", "2 SUCCESS rank[0-2]/core[0-1]")
}

// Spare nodes: known to the scheduler but outside the instance, they make
// a job wait rather than be denied; once they join a node reservation, the job
// targeting it runs there.
func TestGrowThenSessions(t *testing.T) {
	h := newHarness(t, resource.FirstFit, resource.ConfigEntry{Hosts: "node[0-1]", Cores: "0-1"})
	h.run(do(alloc(1, jobspec.Options{Nodes: 3})), "1 DENY unsatisfiable request")
	// Two spare nodes registered: in the inventory, outside the instance.
	h.run(do(grow("rank[2-3]/core0-1"), sessions("", "2-3"),
		alloc(2, targeting(jobspec.Options{Nodes: 2}, "r1")), alloc(3, jobspec.Options{Nodes: 3})),
		"2 ANNOTATE target r1 has 0 nodes, needs 2",
		"3 ANNOTATE target default has 2 nodes, needs 3",
	)
	// The spare nodes join the instance as r1: job 2 runs there only.
	h.run(do(sessions("r1=2-3", "")),
		"2 SUCCESS rank[2-3]/core[0-1]",
	)
	// Grown nodes take the sessions already set, even ones naming them
	// before they joined.
	h.run(do(sessions("r1=2-3 r2=4", ""), grow("rank4/core0-1"), alloc(4, targeting(jobspec.Options{NTasks: 2}, "r2"))),
		"4 SUCCESS rank4/core[0-1]",
	)
	if err := h.s.Grow(parseSummary(t, "rank4/core2")); err == nil {
		t.Error("Grow of a rank already there accepted")
	}
}

// The driver applies fluxq's resource.acquire extension: nodes joining,
// sessions and outside ranks, each complete, each optional.
func TestRunSessions(t *testing.T) {
	inv := inventory2x2(t)
	f := startRun(t, Options{Default: QueuePolicy{Match: resource.FirstFit}, Now: func() float64 { return 100 }})
	f.handshake(inv, "0-1")
	k := newTracker(t)
	f.send(wire.NewResponse(schedproto.TopicAcquire, schedproto.Acquire{Sessions: map[string]idset.Set{"r1": idset.Of(1)}}))
	f.alloc(t, 1, jobspec.Options{NTasks: 3})
	f.alloc(t, 2, targeting(jobspec.Options{NTasks: 2}, "r1"))
	k.waitFor(f, func() bool { return k.final[2] != "" })
	if k.final[2] != "SUCCESS rank1/core[0-1]" {
		t.Errorf("job 2: %s", k.final[2])
	}
	// A spare node joins, outside; then r1 takes it: job 3 runs on it.
	spare, err := rset.New([]rset.Node{{Rank: 2, Hostname: "node2", Cores: idset.FromRange(0, 1)}}).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	f.send(wire.NewResponse(schedproto.TopicAcquire, schedproto.Acquire{Resources: spare, Outside: ptrSet(idset.Of(2))}))
	f.alloc(t, 3, targeting(jobspec.Options{NTasks: 2}, "r1"))
	k.waitFor(f, func() bool { return len(k.events) > 0 && k.events[len(k.events)-1] == "3 ANNOTATE" })
	// Sessions alone: outside stays as it was, so rank 2 is still out.
	f.send(wire.NewResponse(schedproto.TopicAcquire, schedproto.Acquire{Sessions: map[string]idset.Set{"r1": idset.FromRange(1, 2)}}))
	f.send(wire.NewResponse(schedproto.TopicAcquire, schedproto.Acquire{Outside: ptrSet(idset.Set{})}))
	k.waitFor(f, func() bool { return k.final[3] != "" })
	if k.final[3] != "SUCCESS rank2/core[0-1]" {
		t.Errorf("job 3: %s", k.final[3])
	}
	if k.final[1] != "" {
		t.Errorf("job 1 placed on node-reserved nodes: %s", k.final[1])
	}
	// Nodes joining with a rank already known: the stream is broken.
	f.send(wire.NewResponse(schedproto.TopicAcquire, schedproto.Acquire{Resources: spare}))
	if err := <-f.done; err == nil || !strings.Contains(err.Error(), "rank 2 is already in the inventory") {
		t.Errorf("Run = %v", err)
	}
}

func ptrSet(s idset.Set) *idset.Set { return &s }

// The FitsTargets answer is reused until sessions change.
func TestFitsTargetsCached(t *testing.T) {
	h := newHarness(t, resource.FirstFit, fourHosts2Cores)
	h.run(do(alloc(1, targeting(oneCore, "r1"))), "1 ANNOTATE target r1 has 0 nodes, needs 1")
	p := h.s.byID[fluid.ID(1)]
	at := p.fitsAt
	h.s.dirty = true
	h.run(nil)
	if p.fitsAt != at {
		t.Errorf("FitsTargets recomputed without a change (layout %d -> %d)", at, p.fitsAt)
	}
	h.run(do(sessions("r1=1", "")), "1 SUCCESS rank1/core0")
}
